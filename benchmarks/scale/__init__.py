"""Measurements at scale and under load, each run as ``python -m benchmarks.scale.<name>``.

They time, count or check one part as a store grows, as ``benchmarks/measurements`` do, and write
``results/*.json`` (``docs/scale.md`` and ``docs/benchmarks.md`` say what each found):

- ``bench_scale``: recall, ingest and memory cost as one namespace grows, and with many namespaces.
- ``scale_dialogue``: the synthetic two-person dialogue and fast fake encoder the scale runs use.
- ``scale_report``: the Markdown tables of ``results/scale.json`` (``docs/scale_tables.md``).
- ``ingest_ratio``: ingest at a large size against a small one, two writers taking turns.
- ``ingest_breakdown``: where an ingest's CPU time goes, per window of 1,000 memories.
- ``gc_pauses``: warm recall with and without holding the garbage collector off.
- ``edge_reads``: recall's edge reads, a query a node against a query a hop, on SQLite and PostgreSQL.
- ``soak``: writer and reader processes on one Chroma server, then a check of what they left.
- ``soak_workers``: the soak test's writer and reader processes and the memory each opens.
- ``haystack_rss``: resident memory over many LongMemEval haystacks in one process.
- ``encoder_bench``: where the offline encoder's time goes, and whether integer kernels keep recall.
- ``bench_long_turn``: peak memory and time of ingesting one long turn.
- ``throwaway_postgres``: a throwaway PostgreSQL cluster (also the integration tests').
"""
