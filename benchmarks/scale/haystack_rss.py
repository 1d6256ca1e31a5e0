r"""Resident memory of one process that builds LongMemEval haystacks one after another, as a user's process would.

Each haystack is built in a fresh in-memory ``RippleMem``, asked its question with the
recommended settings, deleted and closed; the process-wide memo caches of text work are
not cleared between haystacks (the benchmark harness clears them, a user's process does
not). Every ``--every`` haystacks it records RSS, the C heap's live part
(``heap_in_use_mb``: what ``malloc`` handed out and was not given back) and the stem and cue-set caches'
sizes: what the process keeps that no ``CacheBounds`` covers. Vectors come from the benchmark's
embedding cache (``python -m benchmarks longmemeval`` fills it), so a warm run embeds nothing.

    python -m benchmarks.scale.haystack_rss ../shared/data/longmemeval/longmemeval_s_dev60.json \
        --out results/haystack_rss.json
    MALLOC_ARENA_MAX=1 MALLOC_MMAP_THRESHOLD_=131072 python -m benchmarks.scale.haystack_rss \
        ../shared/data/longmemeval/longmemeval_s_dev60.json --out results/haystack_rss_tuned_malloc.json

The second run sets glibc's allocator as a long-lived server might (one arena, large blocks
mapped and unmapped on their own), and ``allocator_environment`` in the results records it.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import warnings

from benchmarks.cached_embeddings import CachedEmbeddings, default_cache_dir
from benchmarks.loaders import load_longmemeval
from benchmarks.measurements.output import emit
from benchmarks.progress import heap_in_use_mb, rss_mb
from benchmarks.results import run_metadata
from benchmarks.runner import FreshMemories
from benchmarks.systems import question_context
from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.text.cue_scores import cue_set_cache_size
from langchain_ripplemem.text.lexical import stem


def main() -> None:
    """Ingest and recall each haystack in turn, recording RSS and cache sizes; print (and write) the rows."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("longmemeval", help="a LongMemEval JSON file")
    parser.add_argument("--limit", type=int, default=None, help="only the first N haystacks")
    parser.add_argument("--every", type=int, default=5, help="record every N haystacks (and the last)")
    parser.add_argument("--cache", default=None, help="embedding cache directory (default: the benchmark's)")
    parser.add_argument("--out", default=None, help="results JSON (default: stdout only)")
    args = parser.parse_args()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the real file's repeated sessions: the loader warns, once each
        haystacks = load_longmemeval(args.longmemeval, limit=args.limit)
    factory = FreshMemories("longmemeval", embeddings=CachedEmbeddings(directory=args.cache or default_cache_dir()))
    rows = []
    for i, haystack in enumerate(haystacks):
        memory, namespace = factory(), (haystack.id,)
        memory.add_conversation(haystack.conversation, namespace=namespace)
        for question in haystack.questions:
            memory.recall(question.question, namespace=namespace, config=RecallConfig(), **question_context(question))
        memory.delete_namespace(namespace)
        memory.close()
        del memory
        gc.collect()
        if i % args.every == 0 or i == len(haystacks) - 1:
            rows.append({"haystacks": i + 1, "rss_mb": rss_mb(), "heap_in_use_mb": heap_in_use_mb(collect=False),
                         "stems": stem.cache_info().currsize,
                         "cue_sets": cue_set_cache_size()})
            print(rows[-1], file=sys.stderr, flush=True)
    allocator = {name: value for name, value in os.environ.items() if name.startswith("MALLOC_")}
    emit({"benchmark": "haystack_rss", **run_metadata(args.longmemeval), "haystacks": len(haystacks),
          "allocator_environment": allocator,
          "rss_growth_first_to_last": _growth(rows, "rss_mb"),
          "heap_in_use_growth_first_to_last": _growth(rows, "heap_in_use_mb"), "rows": rows}, args.out)


def _growth(rows: list[dict], field: str) -> float | None:
    first, last = rows[0][field], rows[-1][field]
    return None if first is None or last is None else round(last / first - 1, 4)


if __name__ == "__main__":
    main()
