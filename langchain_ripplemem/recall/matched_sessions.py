"""Sessions as evidence: the chats a question matches as a whole, in a user's chats with an assistant.

A chat with an assistant is about what the user asked in it, so how well the question
matches a whole chat says which chats hold the answer, where no single turn may say it
all ("How many fitness classes do I attend in a week?" is answered by a remark in each
of four chats). The question is matched with each session's centroid: the mean
direction of its memories' vectors, kept with the index as it grows, so no text is
embedded again. Assembly gives the first places to the best memory of each session
that both this measure and recollection agree on (``assembly.matched_sessions_first`` =
``n``: among the question's ``n`` best-matching sessions, and holding one of
recollection's best ``2n`` memories), in recollection's order
(:func:`~langchain_ripplemem.recall.assembly.distinct_sessions_first`): only the order
within the best ``2n`` changes, never what they are.

In two people's talk it stays off: a session there holds many topics, and its
centroid says little about any one of them (measured on LoCoMo, docs/benchmarks.md,
"Sessions as evidence").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.index.sessions import per_index
from langchain_ripplemem.schemas import MemoryUnit

__all__ = ["Session", "SessionCentroids", "matched_sessions", "session_centroids", "session_of"]


#: A session: (conversation id, session id); session ids need not be unique across conversations.
Session = tuple[str, str]


@dataclass(frozen=True)
class SessionCentroids:
    """Each session's summed memory vectors: ``sums[i]`` is ``sessions[i]``'s, ``rows[r]`` row ``r``'s ``i``."""

    sessions: tuple[Session, ...]
    rows: np.ndarray
    sums: np.ndarray


def session_of(unit: MemoryUnit) -> Session:
    """Where ``unit`` was said: its (conversation id, session id), empty strings when unknown."""
    source = unit.source
    return (source.conversation_id or "", source.session_id or "") if source is not None else ("", "")


def session_centroids(index: NamespaceIndex) -> SessionCentroids:
    """The sessions of ``index`` and their summed memory vectors, kept with the index as it grows."""
    return per_index(index, "session_centroids", lambda v, n: _grown(v, None, 0, n), _grown)


def _grown(index: NamespaceIndex, known: SessionCentroids | None, before: int, n: int) -> SessionCentroids:
    # New arrays, never the old ones changed in place: a reader may still hold them.
    sessions = list(known.sessions) if known is not None else []
    at = {session: i for i, session in enumerate(sessions)}
    new_rows = np.empty(n - before, dtype=np.int64)
    for offset, unit in enumerate(index.units[before:n]):
        session = session_of(unit)
        if session not in at:
            at[session] = len(sessions)
            sessions.append(session)
        new_rows[offset] = at[session]
    sums = np.zeros((len(sessions), index.matrix.shape[1]), dtype=np.float64)
    if known is not None:
        sums[: len(known.sessions)] = known.sums
    np.add.at(sums, new_rows, index.matrix[before:n])
    rows = new_rows if known is None else np.concatenate([known.rows, new_rows])
    return SessionCentroids(tuple(sessions), rows, sums)


def matched_sessions(index: NamespaceIndex, query_vector: np.ndarray, n: int, hidden: set[str]) -> set[Session]:
    """The ``n`` sessions whose centroids the question matches best (memories in ``hidden`` left out).

    None in a memory of fewer than ``2n`` sessions: being among the best ``n`` of so few
    says nothing (of five sessions, the best five are all of them), and the first
    places would only be spread over every session there is.

    Example:
        >>> from types import SimpleNamespace
        >>> unit = lambda s: SimpleNamespace(source=SimpleNamespace(conversation_id="c", session_id=s))
        >>> index = SimpleNamespace(units=[unit("a"), unit("a"), unit("b")], ids=["1", "2", "3"],
        ...     pos={"1": 0, "2": 1, "3": 2}, derived={}, derived_behind={},
        ...     matrix=np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], dtype=np.float32))
        >>> sorted(matched_sessions(index, np.array([0.0, 1.0], dtype=np.float32), 1, set()))
        [('c', 'b')]
        >>> sorted(matched_sessions(index, np.array([0.0, 1.0], dtype=np.float32), 1, {"1"}))  # a's centroid moves
        [('c', 'a')]
        >>> matched_sessions(index, np.array([0.0, 1.0], dtype=np.float32), 1, {"3"})  # one session left: too few
        set()
    """
    centroids = session_centroids(index)
    sums = centroids.sums
    hidden_rows = [index.pos[uid] for uid in hidden if uid in index.pos]
    if hidden_rows:
        sums = sums.copy()
        np.subtract.at(sums, centroids.rows[hidden_rows], index.matrix[hidden_rows])
    norms = np.linalg.norm(sums, axis=1)
    # A session whose every memory is hidden has no centroid left: it never matches, nor counts.
    visible = norms > 1e-9
    if int(visible.sum()) < 2 * n:
        return set()
    scores = np.where(visible, (sums @ query_vector.astype(np.float64)) / np.maximum(norms, 1e-9), -np.inf)
    best = np.argsort(-scores, kind="stable")[:n]
    return {centroids.sessions[i] for i in best.tolist() if np.isfinite(scores[i])}
