"""Write-path benchmark (not a test): ingest every LoCoMo conversation offline.

Prints and saves turns/s, units, edges by type, degree distribution, peak memory,
and, in the same process on the same texts, the throughput of the embedding
model alone; the ratio of the two is the write path's overhead.

    python -m benchmarks.measurements.ingest_throughput ../shared/data/locomo/locomo10.json \
        --out results/ingest.json

(``make bench-ingest``.)
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchmarks.record_formats import conversation_from_locomo
from langchain_ripplemem.config import WriteConfig
from langchain_ripplemem.embeddings import MiniLMOnnxEmbeddings, embed_texts
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor
from langchain_ripplemem.write.extraction.windows import make_windows

EXTRACTION = WriteConfig().extraction


def main() -> None:
    """Ingest the LoCoMo file named on the command line and print (and with ``--out`` write) the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--out", default=None)
    parser.add_argument("--persist", action="store_true", help="write to a temporary directory on disk")
    args = parser.parse_args()

    records = json.loads(Path(args.path).read_text(encoding="utf-8"))
    conversations = [conversation_from_locomo(r) for r in records]
    n_turns = sum(len(s.turns) for c in conversations for s in c.sessions)
    embeddings = MiniLMOnnxEmbeddings()
    embeddings.embed_query("warm up")  # model load is not throughput

    # Embedding alone and the whole pipeline are timed conversation by conversation,
    # alternating, so that a change in machine load hits both sides alike.
    extractor = RuleBasedExtractor(EXTRACTION)
    tmp = tempfile.mkdtemp() if args.persist else None
    memory = RippleMem(embeddings, persist_directory=tmp, write_config=WriteConfig())
    stages: Counter[str] = Counter()
    edges: Counter[str] = Counter()
    units = embedded = 0
    embed_seconds = ingest_seconds = 0.0
    for conv in conversations:
        texts = list({u.id: u.restatement
                      for w in make_windows(conv, EXTRACTION.window_size, EXTRACTION.window_overlap)
                      for u in extractor.extract(w, (conv.id,)).units}.values())
        started = time.perf_counter()
        embed_texts(embeddings, texts, EXTRACTION.embed_batch_size)
        embed_seconds += time.perf_counter() - started
        embedded += len(texts)
        started = time.perf_counter()
        report = memory.add_conversation(conv, namespace=(conv.id,))
        ingest_seconds += time.perf_counter() - started
        units += report.new_units
        edges.update(report.edges)
        stages.update(report.usage.seconds)
        print(f"{conv.id}: {report.summary()}", flush=True)

    degrees = []
    for conv in conversations:
        graph = memory.edge_cache.networkx((conv.id,))
        degrees += [graph.degree(u.id) if u.id in graph else 0 for u in memory.list_units((conv.id,))]
    result = {
        "dataset": Path(args.path).name, "conversations": len(conversations), "turns": n_turns,
        "units": units, "edges": dict(edges), "storage": "persistent" if tmp else "ephemeral",
        "ingest_seconds": round(ingest_seconds, 2),
        "pipeline_units_per_s": round(units / ingest_seconds, 1),
        "pipeline_turns_per_s": round(n_turns / ingest_seconds, 1),
        "embedding_only_units_per_s": round(embedded / embed_seconds, 1),
        "throughput_ratio": round((units / ingest_seconds) / (embedded / embed_seconds), 3),
        "seconds_by_stage": {k: round(v, 2) for k, v in stages.items()},
        "degree": {"mean": round(statistics.mean(degrees), 2), "median": statistics.median(degrees),
                   "max": max(degrees), "isolated": sum(d == 0 for d in degrees),
                   "histogram": dict(sorted(Counter(min(d, 20) for d in degrees).items()))},
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "machine": {"python": platform.python_version(), "cpus": __import__("os").cpu_count()},
    }
    print(json.dumps(result, indent=2))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
