"""Suites whose cases are each a memory of their own (no haystack): the one run both share.

The small-memory and multilingual suites build their conversations and case rows their
own way; running the systems on them, saving the vector cache and recording the suite
file is the same, so it lives here once.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.cached_embeddings import CachedEmbeddings
from benchmarks.loaders import BenchConversation
from benchmarks.results import file_sha256
from benchmarks.runner import DEFAULT_KS, WARMUP_QUERY, FreshMemories, run_benchmark

__all__ = ["run_own_memories"]


def run_own_memories(dataset: str, conversations: Sequence[BenchConversation], systems: Sequence[str],
                     ks: Sequence[int] = DEFAULT_KS, *, default_suite: Path, suite_path: str | Path | None,
                     split: str, haystack: str, progress: bool = True,
                     embeddings: CachedEmbeddings | None = None) -> dict[str, Any]:
    """Benchmark ``systems`` with every conversation in a fresh namespace; the results dict.

    ``haystack`` is the sentence the results keep under ``"haystack"``; the caller adds its
    ``"cases"`` rows.

    Raises:
        ValueError: on no conversations, or the runner's own argument errors.
    """
    if not conversations:
        raise ValueError("cases is empty: the split or --limit left no case to run")
    cache = embeddings if embeddings is not None else CachedEmbeddings()
    results = run_benchmark(dataset, list(conversations), systems, ks, progress=progress,
                            memory_factory=FreshMemories(dataset, embeddings=cache),
                            keep_questions=True, warmup=WARMUP_QUERY)
    cache.save()
    file = Path(suite_path) if suite_path is not None else default_suite
    results["suite"] = {"path": str(suite_path) if suite_path is not None else
                        f"benchmarks/data/{default_suite.name}",
                        "sha256": file_sha256(file), "split": split, "n_cases": len(conversations)}
    results["haystack"] = haystack
    return results
