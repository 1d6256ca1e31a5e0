"""Evidence normalisation and retrieval metrics for the benchmarks.

Units map back to dialogue turns through ``unit.source.turn_ids`` (and to
sessions through ``unit.source.session_id``); every metric here works on those
id sets, so any system that returns :class:`~langchain_ripplemem.schemas.MemoryUnit`
objects can be scored the same way.

Example:
    >>> normalise_evidence(["D30:05", "D8:6; D9:17", "D"], {"D30:5", "D8:6", "D9:17"})
    (['D30:5', 'D8:6', 'D9:17'], ['D'])
    >>> recall_all(["D1:1", "D1:2"], {"D1:1"}), recall_frac(["D1:1", "D1:2"], {"D1:1"})
    (0.0, 0.5)

"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from langchain_ripplemem.schemas import MemoryUnit

# LoCoMo evidence ids look like "D<session>:<turn>". The released file also has
# "D30:05" (leading zero), "D:11:26" (stray colon) and entries that pack several
# ids into one string with "; " or spaces; this pattern accepts all of those
# shapes for one id once the string has been split.
_LOCOMO_ID = re.compile(r"^D\s*:?\s*(\d+)\s*:\s*(\d+)$", re.IGNORECASE)
_SEPARATORS = re.compile(r"[;,\s]+")

# Documented rule for "context tokens": whitespace tokens * 1.3, rounded up per
# unit. It is tokenizer-free on purpose so numbers are comparable across runs
# and machines; 1.3 is the usual words-to-BPE-tokens ratio for English.
TOKENS_PER_WORD = 1.3


def normalise_evidence(
    raw: str | Iterable[str] | None,
    known_turn_ids: Collection[str] | None = None,
) -> tuple[list[str], list[str]]:
    """Turn raw evidence strings into canonical turn ids.

    Handles leading zeros (``"D30:05"`` -> ``"D30:5"``), several ids in one
    string separated by ``;``, ``,`` or whitespace (``"D8:6; D9:17"``), stray
    whitespace and a stray colon (``"D:11:26"`` -> ``"D11:26"``). An entry that
    is already a known id (e.g. a LongMemEval ``"sess:3"`` id) is kept as is.

    Args:
        raw: one evidence string, a list of them, or ``None``.
        known_turn_ids: the turn ids of the conversation. When given, ids not in
            it are unresolved; when ``None`` every well-formed id is resolved.

    Returns:
        ``(resolved, unresolved)``: resolved canonical ids in first-seen order
        without duplicates, and the raw pieces that could not be resolved (so
        callers can count and list them instead of dropping them silently).

    """
    if raw is None:
        return [], []
    entries = [raw] if isinstance(raw, str) else list(raw)
    known = set(known_turn_ids) if known_turn_ids is not None else None
    resolved: list[str] = []
    unresolved: list[str] = []
    for entry in entries:
        entry = str(entry).strip()
        if not entry:
            continue
        if known is not None and entry in known:
            pieces = [entry]
        else:
            pieces = [p for p in _SEPARATORS.split(entry) if p]
        for piece in pieces:
            canonical = _canonical(piece, known)
            if canonical is None:
                unresolved.append(piece)
            elif canonical not in resolved:
                resolved.append(canonical)
    return resolved, unresolved


def _canonical(piece: str, known: set[str] | None) -> str | None:
    """Canonical id for one piece, or ``None`` when it cannot be resolved."""
    if known is not None and piece in known:
        return piece
    match = _LOCOMO_ID.match(piece)
    if match is None:
        return None
    canonical = f"D{int(match.group(1))}:{int(match.group(2))}"
    if known is not None and canonical not in known:
        return None
    return canonical


def covered_turns(units: Iterable[MemoryUnit]) -> set[str]:
    """All turn ids the units were extracted from (union of their provenance)."""
    return {turn_id for unit in units for turn_id in unit.source.turn_ids}


def turns_covered_at_k(units: Sequence[MemoryUnit], k: int) -> set[str]:
    """Turn ids covered by the first ``k`` units (the top-k prefix)."""
    _check_k(k)
    return covered_turns(units[:k])


def covered_sessions(units: Iterable[MemoryUnit]) -> set[str]:
    """Session ids the units came from."""
    return {unit.source.session_id for unit in units}


def sessions_covered_at_k(units: Sequence[MemoryUnit], k: int) -> set[str]:
    """Session ids covered by the first ``k`` units."""
    _check_k(k)
    return covered_sessions(units[:k])


def recall_all(evidence: Collection[str], covered: Collection[str]) -> float:
    """1.0 when every evidence id is covered, else 0.0.

    Raises:
        ValueError: if ``evidence`` is empty (the question cannot be scored).

    """
    _check_evidence(evidence)
    covered_set = set(covered)
    return 1.0 if all(e in covered_set for e in evidence) else 0.0


def recall_frac(evidence: Collection[str], covered: Collection[str]) -> float:
    """Share of the evidence ids that are covered.

    Raises:
        ValueError: if ``evidence`` is empty (the question cannot be scored).

    """
    _check_evidence(evidence)
    covered_set = set(covered)
    unique = set(evidence)
    return sum(1 for e in unique if e in covered_set) / len(unique)


def session_recall(
    evidence_sessions: Collection[str], units: Sequence[MemoryUnit], k: int
) -> tuple[float, float]:
    """Session-level ``(recall_all, recall_frac)`` of the top-k units (LongMemEval)."""
    covered = sessions_covered_at_k(units, k)
    return recall_all(evidence_sessions, covered), recall_frac(evidence_sessions, covered)


def approx_tokens(text: str) -> int:
    """Approximate token count: ``ceil(whitespace tokens * 1.3)``."""
    words = len(text.split())
    return math.ceil(words * TOKENS_PER_WORD) if words else 0


def context_tokens(units: Sequence[MemoryUnit], k: int) -> int:
    """Approximate tokens of the restatements of the top-k units (what an answer model reads)."""
    _check_k(k)
    return sum(approx_tokens(unit.restatement) for unit in units[:k])


def percentile(values: Sequence[float], q: float) -> float:
    """Return the ``q``-th percentile (0-100), interpolating linearly like numpy.

    Raises:
        ValueError: if ``values`` is empty or ``q`` is outside [0, 100].

    """
    if not values:
        raise ValueError("percentile of an empty sequence is undefined")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be in [0, 100], got {q}")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def latency_stats(ms: Sequence[float]) -> dict[str, float | None]:
    """``{"p50", "p95", "mean"}`` of latencies in milliseconds (``None`` when empty)."""
    if not ms:
        return {"p50": None, "p95": None, "mean": None}
    return {"p50": percentile(ms, 50), "p95": percentile(ms, 95), "mean": sum(ms) / len(ms)}


def aggregate(
    records: Sequence[Mapping[str, Any]],
    groups: Mapping[str, Callable[[Mapping[str, Any]], bool]],
) -> dict[str, dict[str, Any]]:
    """Average per-question metric dicts inside named groups.

    Args:
        records: one dict per question, metric name -> number or ``None``
            (``None`` = not applicable, e.g. recall of a question without
            evidence). Keys starting with ``n_`` are 0/1 counters and are summed;
            keys starting with ``_`` are metadata and are skipped; every other
            key is averaged over the records where it is not ``None``.
        groups: group name -> predicate on a record.

    Returns:
        group name -> ``{"n": questions, "n_...": sums, metric: mean | None}``.
        Groups with no question are still present (``n == 0``) so tables keep
        their columns.

    """
    out: dict[str, dict[str, Any]] = {}
    for name, predicate in groups.items():
        members = [r for r in records if predicate(r)]
        keys: list[str] = []
        for record in members:
            keys.extend(k for k in record if not k.startswith("_") and k not in keys)
        summary: dict[str, Any] = {"n": len(members)}
        for key in keys:
            values = [r[key] for r in members if r.get(key) is not None]
            if key.startswith("n_"):
                summary[key] = int(sum(values))
            else:
                summary[key] = sum(values) / len(values) if values else None
        out[name] = summary
    return out


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = re.compile(r"[^\w\s]")


def normalize_answer(text: Any) -> str:
    """Normalise an answer like LoCoMo/SQuAD: lowercase, no punctuation or articles."""
    text = str(text).lower()
    text = _PUNCTUATION.sub(" ", text)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def answer_f1(prediction: Any, gold: Any) -> float:
    """Token-overlap F1 between normalised prediction and gold answer."""
    pred = normalize_answer(prediction).split()
    ref = normalize_answer(gold).split()
    if not pred or not ref:
        return float(pred == ref)
    common = Counter(pred) & Counter(ref)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision, recall = overlap / len(pred), overlap / len(ref)
    return 2 * precision * recall / (precision + recall)


def bleu1(prediction: Any, gold: Any) -> float:
    """BLEU-1: clipped unigram precision times the brevity penalty (one reference)."""
    pred = normalize_answer(prediction).split()
    ref = normalize_answer(gold).split()
    if not pred or not ref:
        return float(pred == ref)
    clipped = sum((Counter(pred) & Counter(ref)).values())
    precision = clipped / len(pred)
    # Brevity penalty: short predictions must not win on precision alone.
    brevity = 1.0 if len(pred) > len(ref) else math.exp(1 - len(ref) / len(pred))
    return brevity * precision


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")


def _check_evidence(evidence: Collection[str]) -> None:
    if not evidence:
        raise ValueError("evidence is empty: a question without evidence cannot be scored")
