"""Dialogue context: score a memory together with its neighbours in the conversation.

The method asks for restatements "understandable without the dialogue". An LLM
extractor folds the context into the text; the offline rule-based extractor
keeps each turn's own words, so an answer ("They were stoked for the dinosaur
exhibit!") does not contain the words of the question it answers ("What do
your kids like?"), which sit in the turn before it. With the weights
``(w1, w2)`` of ``RecallConfig.context.weight`` and ``context.weight_2`` the
semantic and lexical views and the alignment score a unit as

    s_ctx(m) = s(m) + w1 * max(s(prev(m)), s(next(m)))
                    + w2 * max(s(prev(prev(m))), s(next(next(m))))

where ``prev``/``next`` are the units just before and after ``m`` in the same
session (turn order; units without a turn index keep write order). In a
two-person dialogue the turns two away are the same speaker going on.
``w1 = w2 = 0`` is the paper's scoring, exactly.

In a user's chats with an assistant (a namespace where some turn is spoken by
:data:`~langchain_ripplemem.schemas.ASSISTANT_SPEAKER`) dialogue context is off
unless ``context.assistant_chats`` (:func:`context_weights`): a request to an
assistant names its own topic, and crediting the turns around it lifts every turn of
a chat on that topic over the one remark that answers (docs/benchmarks.md,
"Dialogue context in a user's chats with an assistant").

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
from collections.abc import Iterable, Sequence

import numpy as np

from langchain_ripplemem.config import ContextConfig
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.index.sessions import NO_ROW, session_rows, speakers
from langchain_ripplemem.schemas import ASSISTANT_SPEAKER

_lock = threading.Lock()

#: How dialogue context combines with a unit's own score: "sum" adds the neighbours' credit, "max" takes the
#: larger of the two. "max" was measured as variants ``rm_max*`` (5086b32, issue 35) and not adopted.
CONTEXT_MODE = "sum"


def unknown_asker(asker: str, speakers: frozenset[str]) -> list[str]:
    """A warning when ``asker`` is none of the namespace's speakers (a typo makes "I" no one).

    Example:
        >>> unknown_asker("Maia", frozenset({"maya", "sam"}))
        ["asker 'Maia' is not a speaker of these memories (maya, sam): the question's I and my name no one"]
        >>> unknown_asker("user", frozenset())  # speakers unknown (units made by a chat model): no warning
        []

    """
    if not speakers or asker.strip().lower() in speakers:
        return []
    known = ", ".join(sorted(speakers)[:8]) + (", ..." if len(speakers) > 8 else "")
    return [f"asker {asker!r} is not a speaker of these memories ({known}): the question's I and my name no one"]


def best_away(scores: np.ndarray, neighbours: np.ndarray, distance: int) -> np.ndarray:
    """Per row, the best score exactly ``distance`` turns before or after it in the session (0: none)."""
    padded = np.append(scores, 0.0)  # row -1 reads this zero
    hops = np.append(neighbours, [[-1, -1]], axis=0)  # and has no neighbours
    before, after = neighbours[:, 0], neighbours[:, 1]
    for _ in range(distance - 1):
        before, after = hops[before, 0], hops[after, 1]
    return np.maximum(padded[before], padded[after])


def smooth(scores: np.ndarray, neighbours: np.ndarray, weights: Sequence[float], mode: str = "sum") -> np.ndarray:
    """``scores`` plus, per distance ``d``, ``weights[d-1]`` times the best score ``d`` turns away.

    Missing neighbours (``-1``) and negative scores contribute nothing. ``mode="max"``:
    the larger of the two instead of their sum (context only lifts a unit to a share of
    its neighbour's score, never above a unit that matches more on its own).

    Example:
        >>> nb = np.array([[-1, 1], [0, 2], [1, -1]])
        >>> smooth(np.array([0.2, 1.0, 0.0]), nb, (0.5,), "max").tolist()
        [0.5, 1.0, 0.5]
    """
    if not any(weights) or len(scores) == 0:
        return scores
    out = scores
    for distance, weight in enumerate(weights, start=1):
        if weight:
            credit = weight * np.maximum(best_away(scores, neighbours, distance), 0.0)
            out = np.maximum(out, credit) if mode == "max" else out + credit
    return out


# The last few contextual arrays of read-only scores (an index's cosines), per index: a recall
# smooths its query's cosines for the semantic view and again for assembly's alignment (2.4 ms
# each at 100k memories). They leave with their index; the scores are held weakly (an index's
# cosines leave its cache), and a grown index may give a row new neighbours (its size is in the key).
_CONTEXTUAL_KEPT = 4
_Contextual = dict[tuple[int, int, tuple[float, ...], int, str], tuple["weakref.ref[np.ndarray]", np.ndarray]]
_contextual: weakref.WeakKeyDictionary[NamespaceIndex, _Contextual] = weakref.WeakKeyDictionary()


def chats_with_an_assistant(index: NamespaceIndex) -> bool:
    """Whether ``index`` holds a user's chats with an assistant.

    That is, some turn is spoken by :data:`~langchain_ripplemem.schemas.ASSISTANT_SPEAKER`
    (the speaker the adapters give AI messages).
    """
    return ASSISTANT_SPEAKER in speakers(index)


def context_weights(index: NamespaceIndex, context: ContextConfig) -> tuple[float, float]:
    """The dialogue-context weights recall uses on ``index``: ``context.weights``, none in chats with an assistant.

    Unless ``context.assistant_chats``, a namespace of :func:`chats_with_an_assistant`
    scores each turn on its own (see the module docs).
    """
    if not context.assistant_chats and chats_with_an_assistant(index):
        return 0.0, 0.0
    return context.weights


def in_context(index: NamespaceIndex, scores: np.ndarray, context: ContextConfig) -> np.ndarray:
    """:func:`smooth` with the index's session neighbours and :func:`context_weights` (no work when both are 0).

    Read-only scores (an index's cosines) get a read-only
    result, kept for the next call with the same scores. :data:`CONTEXT_MODE` ``"max"``: a unit scores
    ``max(s(m), w_d x best neighbour d away)`` instead of the sum, so context lifts a
    turn whose neighbour matches but never ranks a strong stand-alone remark below a
    topical stretch of weaker turns.
    """
    weights, mode = context_weights(index, context), CONTEXT_MODE
    if not any(weights):
        return scores
    if scores.flags.writeable:
        return _in_context(index, scores, weights, mode)
    key = (id(scores), len(index), tuple(weights), mode)
    with _lock:
        kept = _contextual.setdefault(index, {}).get(key)
    if kept is not None and kept[0]() is scores:
        return kept[1]
    out = _in_context(index, scores, weights, mode)
    out.flags.writeable = False
    with _lock:
        held = _contextual.setdefault(index, {})
        while len(held) >= _CONTEXTUAL_KEPT:
            held.pop(next(iter(held)))
        held[key] = (weakref.ref(scores), out)
    return out


def _in_context(index: NamespaceIndex, scores: np.ndarray, weights: Sequence[float], mode: str = "sum") -> np.ndarray:
    m, sessions = len(scores), session_rows(index)
    if len(sessions.neighbours) > m:  # the index grew after the scores were taken: rows past them are no neighbours
        return smooth(scores, np.where(sessions.neighbours[:m] < m, sessions.neighbours[:m], NO_ROW), weights, mode)
    if m == 0:
        return scores
    padded, out = np.append(scores, 0.0), scores  # row -1 reads this zero
    for distance, weight in enumerate(weights, start=1):
        if weight:  # smooth()'s sum, with the rows each distance away read from the cache
            before, after = sessions.away(distance)
            credit = weight * np.maximum(np.maximum(padded[before], padded[after]), 0.0)
            out = np.maximum(out, credit) if mode == "max" else out + credit
    return out


def top_in_context(index: NamespaceIndex, scores: np.ndarray, context: ContextConfig, k: int,
                   positive: bool = False, exclude: Iterable[str] = ()) -> list[tuple[str, float]]:
    """The ``k`` best ``(id, s_ctx)`` of a full score array, best first (row order breaks ties).

    Args:
        index: the namespace's index (row ``i`` is ``index.ids[i]``).
        scores: one score per row.
        context: the dialogue-context settings (:func:`in_context`).
        k: how many to return.
        positive: keep only units whose contextual score is above 0 (BM25: the unit or
            a neighbour matched a query term).
        exclude: ids never returned (hidden memories).
    """
    contextual = in_context(index, scores, context)
    eligible = contextual > 0 if positive else np.ones(len(scores), dtype=bool)
    for uid in exclude:
        row = index.pos.get(uid)
        if row is not None and row < len(eligible):
            eligible[row] = False
    rows = np.flatnonzero(eligible)
    if k <= 0 or len(rows) == 0:
        return []
    best, ids = best_first(rows, contextual[rows], k), index.ids  # read as Python values at once, not per scalar
    return list(zip([ids[i] for i in best.tolist()], contextual[best].tolist(), strict=True))


def best_first(rows: np.ndarray, values: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` rows of highest value, best first, ties by row: a full lexsort's first ``k``, sorting ~``k``.

    Example:
        >>> best_first(np.array([0, 1, 2, 3]), np.array([0.5, 2.0, 0.5, 0.1]), 2).tolist()
        [1, 0]
    """
    if len(rows) > k:
        kth = np.partition(values, len(values) - k)[len(values) - k]  # the k-th highest value
        keep = values >= kth  # with every row tied with it: ties are broken by row below
        rows, values = rows[keep], values[keep]
    return rows[np.lexsort((rows, -values))][:k]
