"""Benchmarks: LoCoMo / LongMemEval loaders, the linked-evidence suite, metrics, systems, runner, report.

Everything here is offline by default: the systems read one shared memory per
conversation and are scored on turn (and session) provenance. Heavy imports
(the memory facade, matplotlib, chat models) happen inside functions.
"""

from __future__ import annotations

from benchmarks.cached_embeddings import CachedEmbeddings
from benchmarks.cli import bench_main
from benchmarks.haystack import Haystack, inject, locomo_haystacks, sample_haystacks
from benchmarks.linked import run_linked
from benchmarks.linked_cases import DOMAINS, LinkedCase, load_linked_cases
from benchmarks.loaders import (
    LOCOMO_CATEGORIES,
    LOCOMO_HELDOUT,
    LOCOMO_TUNE,
    LONGMEMEVAL_TYPES,
    BenchConversation,
    BenchQuestion,
    load_locomo,
    load_longmemeval,
)
from benchmarks.metrics import (
    answer_f1,
    bleu1,
    context_tokens,
    covered_sessions,
    covered_turns,
    latency_stats,
    normalise_evidence,
    normalize_answer,
    recall_all,
    recall_frac,
    session_recall,
    sessions_covered_at_k,
    turns_covered_at_k,
)
from benchmarks.observations import ObservationExtractor, load_locomo_observations
from benchmarks.report import (
    load_results,
    plot,
    results_markdown,
    write_markdown,
)
from benchmarks.runner import FreshMemories, default_memory_factory, run_benchmark
from benchmarks.systems import (
    LINKED_SYSTEMS,
    SYSTEM_FACTORIES,
    SYSTEM_NAMES,
    Retrieved,
    System,
    make_system,
    reciprocal_rank_fusion,
)

__all__ = [
    "DOMAINS",
    "LINKED_SYSTEMS",
    "LOCOMO_CATEGORIES",
    "LOCOMO_HELDOUT",
    "LOCOMO_TUNE",
    "LONGMEMEVAL_TYPES",
    "SYSTEM_FACTORIES",
    "SYSTEM_NAMES",
    "BenchConversation",
    "BenchQuestion",
    "CachedEmbeddings",
    "FreshMemories",
    "Haystack",
    "LinkedCase",
    "ObservationExtractor",
    "Retrieved",
    "System",
    "answer_f1",
    "bench_main",
    "bleu1",
    "context_tokens",
    "covered_sessions",
    "covered_turns",
    "default_memory_factory",
    "inject",
    "latency_stats",
    "load_linked_cases",
    "load_locomo",
    "load_locomo_observations",
    "load_longmemeval",
    "load_results",
    "locomo_haystacks",
    "make_system",
    "normalise_evidence",
    "normalize_answer",
    "plot",
    "recall_all",
    "recall_frac",
    "reciprocal_rank_fusion",
    "results_markdown",
    "run_benchmark",
    "run_linked",
    "sample_haystacks",
    "session_recall",
    "sessions_covered_at_k",
    "turns_covered_at_k",
    "write_markdown",
]
