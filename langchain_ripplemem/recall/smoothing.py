"""Dialogue context: score a memory together with its neighbours in the conversation.

METHOD.md asks for restatements "understandable without the dialogue". An LLM
extractor folds the context into the text; the offline rule-based extractor
keeps each turn's own words, so an answer ("They were stoked for the dinosaur
exhibit!") does not contain the words of the question it answers ("What do
your kids like?"), which sit in the turn before it. With the weights
``(w1, w2)`` of ``RecallConfig.context_weight`` and ``context_weight_2`` the
semantic and lexical views and the alignment score a unit as

    s_ctx(m) = s(m) + w1 * max(s(prev(m)), s(next(m)))
                    + w2 * max(s(prev(prev(m))), s(next(next(m))))

where ``prev``/``next`` are the units just before and after ``m`` in the same
session (turn order; units without a turn index keep write order). In a
two-person dialogue the turns two away are the same speaker going on.
``w1 = w2 = 0`` is the paper's scoring, exactly.

Example:
    >>> import numpy as np
    >>> nb = np.array([[-1, 1], [0, 2], [1, -1]])
    >>> smooth(np.array([0.0, 1.0, 0.0]), nb, (0.5,)).tolist()
    [0.5, 1.0, 0.5]
    >>> smooth(np.array([1.0, 0.0, 0.0]), nb, (0.5, 0.25)).tolist()
    [1.0, 0.5, 0.25]

"""

from __future__ import annotations

import threading
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import numpy as np

from langchain_ripplemem.index import NamespaceView
from langchain_ripplemem.schemas import MemoryUnit

_NONE = -1
_T = TypeVar("_T")
_cache: weakref.WeakKeyDictionary[NamespaceView, dict[str, tuple[int, Any]]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def per_view(view: NamespaceView, name: str, build: Callable[[NamespaceView, int], _T]) -> _T:
    """``build(view, n)`` over the first ``n`` units, cached until the view grows.

    Views only grow (deletes and rewrites replace the whole view), so the unit
    count is a sufficient cache key. Two threads may both build; either result is right.
    """
    n = len(view.ids)
    with _lock:
        hit = _cache.get(view, {}).get(name)
    if hit is not None and hit[0] == n:
        return hit[1]
    value = build(view, n)
    with _lock:
        _cache.setdefault(view, {})[name] = (n, value)
    return value


def _order_key(unit: MemoryUnit, row: int) -> tuple[int, int, int]:
    turn = unit.metadata.get("turn_index")
    turn = int(turn) if isinstance(turn, int) and turn >= 0 else row
    chunk = unit.metadata.get("chunk")
    return turn, int(chunk) if isinstance(chunk, int) else 0, row


def neighbour_rows(view: NamespaceView) -> np.ndarray:
    """``(n, 2)`` rows of each unit's previous and next unit in its session (``-1``: none)."""
    return per_view(view, "neighbours", _neighbour_rows)


def speakers(view: NamespaceView) -> frozenset[str]:
    """Lower-cased speakers the namespace's units record (rule-based units do)."""
    return per_view(view, "speakers", lambda v, n: frozenset(
        s.lower() for u in v.units[:n] if isinstance(s := u.metadata.get("speaker"), str) and s))


def _neighbour_rows(view: NamespaceView, n: int) -> np.ndarray:
    sessions: dict[tuple[str, str], list[int]] = defaultdict(list)
    units = view.units[:n]
    for row, unit in enumerate(units):
        sessions[(unit.source.conversation_id, unit.source.session_id)].append(row)
    neighbours = np.full((n, 2), _NONE, dtype=np.int64)
    for rows in sessions.values():
        rows.sort(key=lambda r: _order_key(units[r], r))
        for before, after in zip(rows, rows[1:], strict=False):
            neighbours[after, 0] = before
            neighbours[before, 1] = after
    return neighbours


def best_away(scores: np.ndarray, neighbours: np.ndarray, distance: int) -> np.ndarray:
    """Per row, the best score exactly ``distance`` turns before or after it in the session (0: none)."""
    padded = np.append(scores, 0.0)  # row -1 reads this zero
    hops = np.append(neighbours, [[-1, -1]], axis=0)  # and has no neighbours
    before, after = neighbours[:, 0], neighbours[:, 1]
    for _ in range(distance - 1):
        before, after = hops[before, 0], hops[after, 1]
    return np.maximum(padded[before], padded[after])


def smooth(scores: np.ndarray, neighbours: np.ndarray, weights: Sequence[float]) -> np.ndarray:
    """``scores`` plus, per distance ``d``, ``weights[d-1]`` times the best score ``d`` turns away.

    Missing neighbours (``-1``) and negative scores contribute nothing.
    """
    if not any(weights) or len(scores) == 0:
        return scores
    out = scores
    for distance, weight in enumerate(weights, start=1):
        if weight:
            out = out + weight * np.maximum(best_away(scores, neighbours, distance), 0.0)
    return out


def in_context(view: NamespaceView, scores: np.ndarray, weights: Sequence[float]) -> np.ndarray:
    """:func:`smooth` with the view's session neighbours (no work when every weight is 0)."""
    if not any(weights):
        return scores
    return smooth(scores, neighbour_rows(view)[: len(scores)], weights)


def top_in_context(view: NamespaceView, scores: np.ndarray, weights: Sequence[float], k: int,
                   positive: bool = False, exclude: Iterable[str] = ()) -> list[tuple[str, float]]:
    """The ``k`` best ``(id, s_ctx)`` of a full score array, best first (row order breaks ties).

    Args:
        view: the namespace's view (row ``i`` is ``view.ids[i]``).
        scores: one score per row.
        weights: the context weights ``(w1, w2)``.
        k: how many to return.
        positive: keep only units whose contextual score is above 0 (BM25: the unit or
            a neighbour matched a query term).
        exclude: ids never returned (hidden memories).
    """
    contextual = in_context(view, scores, weights)
    eligible = contextual > 0 if positive else np.ones(len(scores), dtype=bool)
    for uid in exclude:
        row = view.pos.get(uid)
        if row is not None and row < len(eligible):
            eligible[row] = False
    rows = np.flatnonzero(eligible)
    if k <= 0 or len(rows) == 0:
        return []
    order = rows[np.lexsort((rows, -contextual[rows]))][:k]
    return [(view.ids[i], float(contextual[i])) for i in order]
