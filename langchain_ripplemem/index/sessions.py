"""Each session's rows of a namespace index in turn order, and what is derived from them once per index.

Both paths read these: recall scores a memory with its neighbours in the conversation
(:mod:`~langchain_ripplemem.recall.smoothing`), and a write or a delete finds one conversation's
memories without a pass over every unit (:func:`conversation_units`). Every value lives with
the index (:func:`per_index`), so its snapshot keeps it and a grown index catches up from
the new rows only.

Example:
    >>> from langchain_ripplemem.schemas import Provenance
    >>> index = NamespaceIndex(("n",))
    >>> index.add([MemoryUnit(id=f"u{i}", namespace=("n",), restatement=f"turn {i}",
    ...                       metadata={"turn_index": i, "speaker": "Maya"},
    ...                       source=Provenance(conversation_id="c", session_id="s", turn_ids=[f"t{i}"]))
    ...            for i in (1, 0)], np.eye(2, 4, dtype=np.float32))
    >>> neighbour_rows(index).tolist(), sorted(speakers(index))
    ([[1, -1], [-1, 0]], ['maya'])
    >>> [u.id for u in conversation_units(index, "c")]
    ['u0', 'u1']

"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.schemas import MemoryUnit

__all__ = ["NO_ROW", "SessionRows", "conversation_units", "neighbour_rows", "per_index", "session_rows", "speakers"]

#: A row that is not there: no neighbour before or after.
NO_ROW = -1
_T = TypeVar("_T")
_lock = threading.Lock()


def per_index(index: NamespaceIndex, name: str, build: Callable[[NamespaceIndex, int], _T],
             grow: Callable[[NamespaceIndex, _T, int, int], _T] | None = None) -> _T:
    """``build(index, n)`` over the first ``n`` units, cached; when the index grows, ``grow`` catches it up.

    A namespace index only grows (deletes and rewrites replace the whole index), so the unit
    count is a sufficient cache key. Values live in ``index.derived`` (the index's
    snapshot keeps them, so a cold open does not read every unit again); a pinned index
    shares its namespace's, and keeps its own values once writers grew the namespace past it.
    ``grow(index, value, before, n)`` turns the value for the first ``before``
    units into the one for ``n`` looking only at the new rows (under a lock: it
    may reuse ``value``'s parts; readers of the old value must not see it
    change). Without ``grow``, a grown index's value is built again. Two threads may both
    build; either result is right.
    """
    n = len(index.ids)
    with _lock:
        hit = index.derived.get(name)
        if hit is not None and hit[0] == n:
            return hit[1]  # type: ignore[no-any-return]
        if (own := index.derived_behind.get(name)) is not None:
            return own  # type: ignore[no-any-return]
        if hit is not None and grow is not None and hit[0] < n:
            value = grow(index, hit[1], hit[0], n)
            index.derived[name] = (n, value)
            return value
    value = build(index, n)
    with _lock:
        cached = index.derived
        if name not in cached or cached[name][0] < n:  # a reader behind a writer never rolls the cache back
            cached[name] = (n, value)
        elif cached[name][0] > n:  # a pinned index the namespace grew past (index.pinned) keeps its own
            index.derived_behind[name] = value
    return value


def _order_key(unit: MemoryUnit, row: int) -> tuple[int, int, int]:
    turn = unit.metadata.get("turn_index")
    turn = int(turn) if isinstance(turn, int) and turn >= 0 else row
    chunk = unit.metadata.get("chunk")
    return turn, int(chunk) if isinstance(chunk, int) else 0, row


def session_rows(index: NamespaceIndex) -> SessionRows:
    """Each session's rows of ``index`` in turn order, and each row's neighbours (kept with the index)."""
    return per_index(index, "neighbours", _sessions, _more_sessions)


def neighbour_rows(index: NamespaceIndex) -> np.ndarray:
    """``(n, 2)`` rows of each unit's previous and next unit in its session (``-1``: none)."""
    return session_rows(index).neighbours


def speakers(index: NamespaceIndex) -> frozenset[str]:
    """Lower-cased speakers the namespace's units record (rule-based units do)."""
    return per_index(index, "speakers", lambda v, n: _speakers(v, 0, n),
                     lambda v, known, before, n: known | _speakers(v, before, n))


def _speakers(index: NamespaceIndex, start: int, stop: int) -> frozenset[str]:
    return frozenset(s.lower() for u in index.units[start:stop]
                     if isinstance(s := u.metadata.get("speaker"), str) and s)


@dataclass(frozen=True)
class SessionRows:
    """Each session's rows in turn order (with their order keys), and the neighbour array they give."""

    keys: dict[tuple[str, str], list[tuple[int, int, int]]]
    rows: dict[tuple[str, str], list[int]]
    neighbours: np.ndarray
    # distance -> (rows that many turns before, after): a recall reads them, it does not walk the hops again.
    _away: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, compare=False, repr=False)

    def away(self, distance: int) -> tuple[np.ndarray, np.ndarray]:
        """Each row's row ``distance`` turns before and after it in its session (``-1``: none)."""
        found = self._away.get(distance)
        if found is None:  # two threads may both compute it: the same arrays
            hops = np.append(self.neighbours, [[NO_ROW, NO_ROW]], axis=0)
            before, after = self.neighbours[:, 0], self.neighbours[:, 1]
            for _ in range(distance - 1):
                before, after = hops[before, 0], hops[after, 1]
            found = self._away[distance] = (np.ascontiguousarray(before), np.ascontiguousarray(after))
        return found


def _sessions(index: NamespaceIndex, n: int) -> SessionRows:
    return _more_sessions(index, SessionRows({}, {}, np.full((0, 2), NO_ROW, dtype=np.int64)), 0, n)


def _more_sessions(index: NamespaceIndex, known: SessionRows, before: int, n: int) -> SessionRows:
    """Insert rows ``before..n-1`` into their sessions; a new neighbour array (readers keep the old one)."""
    neighbours = np.full((n, 2), NO_ROW, dtype=np.int64)
    neighbours[:before] = known.neighbours[:before]
    for row in range(before, n):
        unit = index.units[row]
        session = (unit.source.conversation_id, unit.source.session_id)
        keys, rows = known.keys.setdefault(session, []), known.rows.setdefault(session, [])
        key = _order_key(unit, row)
        at = bisect_left(keys, key)  # keys are distinct: the row is part of the key
        keys.insert(at, key)
        rows.insert(at, row)
        if at > 0:
            neighbours[row, 0], neighbours[rows[at - 1], 1] = rows[at - 1], row
        if at + 1 < len(rows):
            neighbours[row, 1], neighbours[rows[at + 1], 0] = rows[at + 1], row
    return SessionRows(known.keys, known.rows, neighbours)


def conversation_units(index: NamespaceIndex, conversation_id: str,
                       session_ids: Iterable[str] | None = None) -> list[MemoryUnit]:
    """The units of one conversation (only of ``session_ids`` if given), from the per-session rows recall keeps.

    No pass over every unit: the rows are kept with the namespace index (and in its snapshot).
    """
    sessions = session_rows(index).rows
    keys = [key for key in list(sessions) if key[0] == conversation_id] if session_ids is None else \
        [(conversation_id, session) for session in session_ids]
    return [index.units[row] for key in keys for row in sessions.get(key, ())]
