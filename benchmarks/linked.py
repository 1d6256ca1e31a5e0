"""Run the linked-evidence suite: every case injected into a long haystack, every system in one run.

The injection and the run are every injected suite's (:mod:`~.suite_runner`):
each case goes into its own copy of a haystack, ingested into its own namespace,
so cases never share a memory; the recall systems start from the recommended
``RecallConfig()``, and the memories are written with the paper's LoCoMo
settings. Results have the LoCoMo results' shape with domains as categories and
``tune``/``heldout`` splits, plus per-case records (``questions``: each evidence
turn's rank per system) and the injected ``cases``, with their bridges.

``python -m benchmarks linked --haystack locomo10.json --out results/linked.json`` runs it
(:func:`run_linked`); without ``--haystack`` the cases go into the shipped sample.

Example:
    >>> from benchmarks.haystack import sample_haystacks
    >>> from benchmarks.linked_cases import load_linked_cases
    >>> injected = linked_conversations(load_linked_cases(split="heldout")[:2], sample_haystacks())
    >>> [(bench.id, bench.split, len(bench.questions[0].evidence)) for bench in injected]
    [('food-03@sample-x3', 'heldout', 3), ('food-06@sample-x3', 'heldout', 3)]

"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.cached_embeddings import CachedEmbeddings
from benchmarks.haystack import Haystack
from benchmarks.linked_cases import DEFAULT_SUITE, LinkedCase
from benchmarks.loaders import BenchConversation
from benchmarks.runner import DEFAULT_KS, WARMUP_QUERY, MemoryFactory
from benchmarks.suite_runner import run_suite, suite_conversations
from benchmarks.systems import LINKED_SYSTEMS, System, make_system
from langchain_ripplemem.config import RecallConfig

__all__ = ["WARMUP_QUERY", "linked_conversations", "run_linked"]


def linked_conversations(cases: Sequence[LinkedCase], haystacks: Sequence[Haystack]) -> list[BenchConversation]:
    """One injected conversation per case (haystacks assigned by :func:`~.haystack.assign_haystacks`)."""
    return suite_conversations(cases, haystacks, "linked")


def run_linked(
    cases: Sequence[LinkedCase],
    haystacks: Sequence[Haystack],
    systems: Sequence[str] = LINKED_SYSTEMS,
    ks: Sequence[int] = DEFAULT_KS,
    *,
    memory_factory: MemoryFactory | None = None,
    recall_config: RecallConfig | None = None,
    system_factory: Callable[[str, Any, RecallConfig | None], System] = make_system,
    progress: bool = True,
    embeddings: CachedEmbeddings | None = None,
    haystack_path: str | Path | None = None,
    suite_path: str | Path | None = None,
    split: str = "all",
) -> dict[str, Any]:
    """Benchmark ``systems`` on the injected ``cases`` and return the results dict.

    Args:
        cases: from :func:`~.linked_cases.load_linked_cases`.
        haystacks: from :func:`~.haystack.locomo_haystacks` or :func:`~.haystack.sample_haystacks`.
        systems: system names (default :data:`LINKED_SYSTEMS`).
        ks: cut-offs; retrieval runs once at ``max(ks)``.
        memory_factory: fresh memories (default: :class:`~.runner.FreshMemories` with
            ``embeddings``).
        recall_config: base config of the recall systems (default: the runner's).
        system_factory: ``(name, memory, recall_config) -> System``; tests swap it.
        progress: show a progress bar over cases.
        embeddings: the default memories' encoder (default: the offline one behind an
            in-memory :class:`~.cached_embeddings.CachedEmbeddings`).
        haystack_path: the haystack file, hashed into the results (``None``: the shipped sample).
        suite_path: the suite file, hashed into the results (``None``: the shipped suite).
        split: the split the cases were taken from, recorded in the results.

    Raises:
        ValueError: on no cases, or the runner's own argument errors.

    """
    return run_suite(
        "linked", cases, haystacks, systems, ks, case_row=_case_row, default_suite=DEFAULT_SUITE,
        memory_factory=memory_factory, recall_config=recall_config, system_factory=system_factory,
        progress=progress, embeddings=embeddings, haystack_path=haystack_path, suite_path=suite_path, split=split,
    )


def _case_row(case: LinkedCase, bench: BenchConversation) -> dict[str, Any]:
    question = bench.questions[0]
    return {
        "id": case.id, "domain": case.domain, "split": case.split, "question": question.question,
        "evidence": question.evidence, **question.extra,
        "bridges": list({(t.bridge.cue, t.bridge.kind): {"cue": t.bridge.cue, "kind": t.bridge.kind}
                         for t in case.evidence if t.bridge is not None}.values()),
    }
