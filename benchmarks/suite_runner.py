"""Run an injected suite: every case in its own copy of a long haystack, every system in one run.

Each case goes into its own copy of a haystack (:func:`~.haystack.inject`),
which the runner ingests into its own namespace, so cases never share a memory.
The systems are the LoCoMo benchmark's (:mod:`~.systems`): the recall systems
start from the recommended ``RecallConfig()``, and the memories are written with
the paper's LoCoMo settings (the haystacks are LoCoMo-style dialogue). Results
have the LoCoMo results' shape with the suite's categories and ``tune``/``heldout``
splits, plus per-case records (``questions``: each evidence turn's rank per
system) and the injected ``cases`` (one row each, from the suite's ``case_row``).

The linked-evidence suite (:func:`~.linked.run_linked`) and the set and fact
suites (``python -m benchmarks sets|facts``) run through :func:`run_suite`.

Example:
    >>> from benchmarks.haystack import sample_haystacks
    >>> from benchmarks.set_fact_cases import load_set_cases
    >>> injected = suite_conversations(load_set_cases(split="heldout")[:1], sample_haystacks(), "sets")
    >>> injected[0].dataset, injected[0].split, len(injected[0].questions[0].evidence) >= 2
    ('sets', 'heldout', True)

"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.cached_embeddings import CachedEmbeddings
from benchmarks.haystack import Haystack, assign_haystacks, inject
from benchmarks.loaders import BenchConversation
from benchmarks.results import file_sha256
from benchmarks.runner import DEFAULT_KS, WARMUP_QUERY, FreshMemories, MemoryFactory, run_benchmark
from benchmarks.suite_cases import InjectableCase
from benchmarks.systems import System, make_system
from langchain_ripplemem.config import RecallConfig

__all__ = ["CaseRow", "run_suite", "suite_conversations"]

#: ``(case, its injected conversation) -> the case's row in the results' "cases"``.
CaseRow = Callable[[Any, BenchConversation], dict[str, Any]]


def suite_conversations(
    cases: Sequence[InjectableCase], haystacks: Sequence[Haystack], dataset: str
) -> list[BenchConversation]:
    """One injected conversation per case (haystacks assigned by :func:`~.haystack.assign_haystacks`)."""
    return [inject(case, hay, dataset) for case, hay in zip(cases, assign_haystacks(cases, haystacks), strict=True)]


def run_suite(
    dataset: str,
    cases: Sequence[InjectableCase],
    haystacks: Sequence[Haystack],
    systems: Sequence[str],
    ks: Sequence[int] = DEFAULT_KS,
    *,
    case_row: CaseRow,
    default_suite: Path,
    memory_factory: MemoryFactory | None = None,
    recall_config: RecallConfig | None = None,
    system_factory: Callable[[str, Any, RecallConfig | None], System] = make_system,
    progress: bool = True,
    embeddings: CachedEmbeddings | None = None,
    haystack_path: str | Path | None = None,
    suite_path: str | Path | None = None,
    split: str = "all",
) -> dict[str, Any]:
    """Benchmark ``systems`` on the injected ``cases`` of suite ``dataset`` and return the results dict.

    Args:
        dataset: the suite's name (``"linked"``, ``"sets"``, ``"facts"``: decides its categories).
        cases: the suite's cases (e.g. :func:`~.linked_cases.load_linked_cases`).
        haystacks: from :func:`~.haystack.locomo_haystacks` or :func:`~.haystack.sample_haystacks`.
        systems: system names.
        ks: cut-offs; retrieval runs once at ``max(ks)``.
        case_row: the row of each case in the results' ``"cases"``.
        default_suite: the shipped suite file, recorded (and hashed) when ``suite_path`` is ``None``.
        memory_factory: fresh memories (default: :class:`~.runner.FreshMemories` with
            ``embeddings``).
        recall_config: base config of the recall systems (default: the runner's).
        system_factory: ``(name, memory, recall_config) -> System``; tests swap it.
        progress: show a progress bar over cases.
        embeddings: the default memories' encoder (default: the offline one behind an
            in-memory :class:`~.cached_embeddings.CachedEmbeddings`; give one with a
            directory to keep vectors between runs).
        haystack_path: the haystack file, hashed into the results (``None``: the shipped sample).
        suite_path: the suite file, hashed into the results (``None``: ``default_suite``).
        split: the split the cases were taken from, recorded in the results.

    Raises:
        ValueError: on no cases, or the runner's own argument errors.

    """
    if not cases:
        raise ValueError("cases is empty: the split or --limit left no case to run")
    conversations = suite_conversations(cases, haystacks, dataset)
    cache = None
    if memory_factory is None:
        cache = embeddings if embeddings is not None else CachedEmbeddings()
        memory_factory = FreshMemories(dataset, embeddings=cache)
    results = run_benchmark(
        dataset, conversations, systems, ks, memory_factory=memory_factory, progress=progress,
        recall_config=recall_config, system_factory=system_factory,
        dataset_path=str(haystack_path) if haystack_path is not None else None,
        keep_questions=True, warmup=WARMUP_QUERY,
    )
    if cache is not None:
        cache.save()
    suite = Path(suite_path) if suite_path is not None else default_suite
    results["suite"] = {
        "path": str(suite_path) if suite_path is not None else f"benchmarks/data/{default_suite.name}",
        "sha256": file_sha256(suite), "split": split, "n_cases": len(cases),
    }
    source = "conversations of the dataset file" if haystack_path is not None else \
        "the shipped sample conversation, repeated"
    results["haystack"] = f"{len(haystacks)} {source}: {', '.join(h.id for h in haystacks)}"
    results["cases"] = [case_row(case, bench) for case, bench in zip(cases, conversations, strict=True)]
    return results
