"""Turn per-question records into the results JSON of DESIGN.md (section Benchmarks).

Shape (extra fields beyond DESIGN.md are additive)::

    {"dataset", "unit", "k", "systems": {name: {
        "by_category": {category: {"n", "n_evaluated", "recall_all@5", ...}, ...},
        "splits": {"tune": {"by_category": ...}, "heldout": {...}},
        "build_seconds", "query_ms_p50", "query_ms_p95", "query_ms_mean", "n_timed_queries",
        "first_query_ms_p50", "first_query_ms_p95",
        "llm_calls", "tokens", "context_tokens_mean", "units_mean", "n_questions"}},
     "n_questions", "dataset_file", "date", "git_commit", "package_version", "runtime_versions",
     "config", "unresolved_evidence", "n_unresolved_evidence", "conversations", ...}
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks.linked_cases import DOMAINS
from benchmarks.loaders import LOCOMO_CATEGORIES, LONGMEMEVAL_TYPES, BenchQuestion
from benchmarks.metrics import (
    aggregate,
    context_tokens,
    latency_stats,
    recall_all,
    recall_frac,
    sessions_covered_at_k,
    turns_covered_at_k,
)
from benchmarks.set_fact_cases import FACT_KINDS, SET_KINDS
from benchmarks.systems import Retrieved

#: How the results time queries (written into every results file).
LATENCY_RULE = ("query_ms_*: every scored question but each system's first query on each conversation's memory; "
                "first_query_ms_*: that first query (the warm-up query when there is one, else the first question), "
                "which pays loading the namespace's views for whichever system asks first; "
                "what the process holds before the first build (the dataset, the vector cache) is frozen "
                "(gc.freeze): the collector's full passes walk the package's objects, not the harness's")
Record = Mapping[str, Any]
Groups = dict[str, Callable[[Record], bool]]


def category_groups(dataset: str, records: Sequence[Record]) -> Groups:
    """The reporting groups of a dataset, in table order.

    LoCoMo: the four answerable categories, ``overall_1_4`` (them pooled) and
    ``adversarial`` (category 5) separately. LongMemEval: each question type
    (answerable questions), ``overall`` and ``abstention`` separately. Linked
    suite: each domain and ``overall``; set and fact suites: each kind and ``overall``.

    Raises:
        ValueError: for an unknown dataset.

    """
    if dataset == "locomo":
        groups: Groups = {
            name: _is_category(name) for cat, name in LOCOMO_CATEGORIES.items() if cat != 5
        }
        groups["overall_1_4"] = lambda r: r["_category"] in (1, 2, 3, 4)
        groups["adversarial"] = _is_category(LOCOMO_CATEGORIES[5])
        return groups
    if dataset == "longmemeval":
        present = {r["_category_name"] for r in records if r["_answerable"]}
        ordered = [t for t in LONGMEMEVAL_TYPES if t in present]
        ordered += sorted(present - set(LONGMEMEVAL_TYPES))
        groups = {name: _is_answerable_category(name) for name in ordered}
        groups["overall"] = lambda r: bool(r["_answerable"])
        groups["abstention"] = lambda r: not r["_answerable"]
        return groups
    if dataset == "linked":
        groups = {domain: _is_category(domain) for domain in DOMAINS}
        groups["overall"] = lambda r: True
        return groups
    if dataset in ("sets", "facts"):
        groups = {kind: _is_category(kind) for kind in (SET_KINDS if dataset == "sets" else FACT_KINDS)}
        groups["overall"] = lambda r: True
        return groups
    if dataset in ("multilingual", "small", "updates"):
        # Suites whose cases name their own group (a language, a kind): the groups are the ones the
        # records hold, in the order the suite lists them (this module stays below the suites' modules).
        groups = {name: _is_category(name) for name in dict.fromkeys(r["_category_name"] for r in records)}
        groups["overall"] = lambda r: True
        return groups
    raise ValueError(f"unknown dataset {dataset!r}; expected 'locomo', 'longmemeval', 'linked', 'sets', 'facts', "
                     "'multilingual', 'small' or 'updates'")


def system_summary(
    dataset: str,
    records: Sequence[Record],
    latencies_ms: Sequence[float],
    *,
    ks: Sequence[int],
    build_seconds: float,
    first_query_ms: Sequence[float] = (),
) -> dict[str, Any]:
    """Summary of one system: categories (all and per split), latency (:data:`LATENCY_RULE`), cost."""
    groups = category_groups(dataset, records)
    splits = sorted({r["_split"] for r in records if r.get("_split")})
    latency, first = latency_stats(latencies_ms), latency_stats(first_query_ms)
    kmax = max(ks)
    n = len(records)
    return {
        "by_category": aggregate(records, groups),
        "splits": {
            split: {"by_category": aggregate([r for r in records if r["_split"] == split], groups)}
            for split in splits
        },
        "n_questions": n,
        # One memory is built per conversation and shared by every system, so
        # this is the same number for all systems (the cost of the write path).
        "build_seconds": build_seconds,
        "query_ms_p50": latency["p50"],
        "query_ms_p95": latency["p95"],
        "query_ms_mean": latency["mean"],
        "n_timed_queries": len(latencies_ms),
        "first_query_ms_p50": first["p50"],
        "first_query_ms_p95": first["p95"],
        "llm_calls": _mean(records, "llm_calls"),
        "tokens": _mean(records, "tokens"),
        "context_tokens_mean": _mean(records, f"context_tokens_mean@{kmax}"),
        "units_mean": _mean(records, f"units_mean@{kmax}"),
    }


def question_record(
    question: BenchQuestion, got: Retrieved, ks: Sequence[int], split: str | None = None
) -> dict[str, Any]:
    """Per-question metrics of one retrieval at every k (prefixes of one ranked list).

    Recall is ``None`` (left out of the means) when the question has no
    resolved evidence; ``n_evaluated`` counts the questions that have some.
    ``_evidence_ranks`` gives each evidence turn's first 1-based rank in the
    list (``None``: not retrieved), for per-question reports. ``shortfall@k``
    is 1 when the system returned fewer than ``k`` units (its mean: the share
    of questions left short).

    A question with ``outranks`` (the update suite) counts an evidence turn as
    found only when it also ranks above every outranked turn the list holds:
    ``recall_all@k`` is then "the right statement in the top k, above the wrong
    one", and ``found@k`` keeps the plain "in the top k" (``_outranked_ranks``
    gives the outranked turns' ranks).
    """
    units = got.units
    first_rank: dict[str, int] = {}
    for rank, unit in enumerate(units, start=1):
        for turn_id in unit.source.turn_ids:
            first_rank.setdefault(turn_id, rank)
    record: dict[str, Any] = {
        "_id": question.id,
        "_category": question.category,
        "_category_name": question.category_name,
        "_answerable": question.answerable,
        "_split": split,
        "_evidence_ranks": {turn_id: first_rank.get(turn_id) for turn_id in question.evidence},
        "n_evaluated": 1 if question.evidence else 0,
        "llm_calls": got.llm_calls,
        "tokens": got.tokens,
    }
    with_sessions = bool(question.evidence_sessions)
    if with_sessions:
        record["n_session_evaluated"] = 1
    outranked = min((first_rank.get(t, len(units) + 1) for t in question.outranks), default=len(units) + 1)
    if question.outranks:
        record["_outranked_ranks"] = {turn_id: first_rank.get(turn_id) for turn_id in question.outranks}
    for k in ks:
        if question.evidence:
            covered = turns_covered_at_k(units, k)
            if question.outranks:
                record[f"found@{k}"] = recall_all(question.evidence, covered)
                covered = {t for t in covered if first_rank[t] < outranked}
            record[f"recall_all@{k}"] = recall_all(question.evidence, covered)
            record[f"recall_frac@{k}"] = recall_frac(question.evidence, covered)
        else:
            record[f"recall_all@{k}"] = record[f"recall_frac@{k}"] = None
        if with_sessions:
            sessions = sessions_covered_at_k(units, k)
            record[f"session_recall_all@{k}"] = recall_all(question.evidence_sessions, sessions)
            record[f"session_recall_frac@{k}"] = recall_frac(question.evidence_sessions, sessions)
        record[f"units_mean@{k}"] = min(k, len(units))
        record[f"shortfall@{k}"] = 1.0 if len(units) < k else 0.0
        record[f"context_tokens_mean@{k}"] = context_tokens(units, k)
    return record


def file_sha256(path: str | Path) -> str:
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def git_commit() -> str | None:
    """Commit of the package's checkout (``+dirty`` when modified), or ``None``."""
    root = Path(__file__).resolve().parents[1]
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10
        )
        if commit.returncode != 0:
            return None
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root, capture_output=True, text=True, timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    dirty = "+dirty" if status.returncode == 0 and status.stdout.strip() else ""
    return commit.stdout.strip() + dirty


def package_version() -> str | None:
    """Installed version of ``langchain-ripplemem``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("langchain-ripplemem")
    except PackageNotFoundError:
        return None


#: Distributions whose versions decide the figures beside the package's own code: the encoder's
#: runtime (its vectors; ``MiniLMOnnxEmbeddings.runtime``) and the array arithmetic of scoring.
_FIGURE_DISTRIBUTIONS = ("onnxruntime", "onnx", "tokenizers", "numpy", "chromadb")


def runtime_versions() -> dict[str, str]:
    """Installed versions of the distributions that decide a results file's figures besides the code.

    Example:
        >>> "onnxruntime" in runtime_versions()
        True

    """
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in _FIGURE_DISTRIBUTIONS:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


def run_metadata(dataset_path: str | Path | None) -> dict[str, Any]:
    """Provenance fields of a results file: dataset hash, date, commit, version, runtime versions."""
    dataset_file = None
    if dataset_path is not None and Path(dataset_path).is_file():
        dataset_file = {"path": str(dataset_path), "sha256": file_sha256(dataset_path)}
    return {
        "dataset_file": dataset_file,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "git_commit": git_commit(),
        "package_version": package_version(),
        "runtime_versions": runtime_versions(),
    }


def dump_config(value: Any) -> Any:
    """JSON-ready dump of a pydantic config (or ``None``)."""
    if value is None:
        return None
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if callable(dump) else repr(value)


def _is_category(name: str) -> Callable[[Record], bool]:
    return lambda r: r["_category_name"] == name


def _is_answerable_category(name: str) -> Callable[[Record], bool]:
    return lambda r: r["_category_name"] == name and bool(r["_answerable"])


def _mean(records: Sequence[Record], key: str) -> float | None:
    values = [r[key] for r in records if r.get(key) is not None]
    return sum(values) / len(values) if values else None
