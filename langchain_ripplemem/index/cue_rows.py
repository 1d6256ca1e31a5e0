"""The cue rows of a namespace index: inverted cue indexes, per-row cue tables, the cue view's scores.

Every unit is posted under its participants, locations, day buckets and
identifying cue keys (names, then topic words); per row the index keeps how
many distinct participants and locations it names, its time interval in days
and its keys, and how the memories write each key
(:class:`~langchain_ripplemem.index.cue_names.NameCounts`). The cue view's
scores are computed from the posting lists with array operations.

Rows are appended in two steps, so a reader without a lock never sees a row
half made: :meth:`CueRows.describe` before the row is published (what is read
per row), :meth:`CueRows.post` after (the postings, which name the row).

Example:
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance
    >>> unit = MemoryUnit.create(namespace=("maya",), restatement="Maya: Harbor Grill has oysters",
    ...                          participants=["Maya"], source=Provenance(conversation_id="c", session_id="s"))
    >>> cue_rows = CueRows()
    >>> cue_rows.post(0, unit, cue_rows.describe(0, unit))
    >>> cue_rows.postings["participants"]["maya"], cue_rows.known_keys("Does Harbor Grill serve oysters?")
    ([0], ['harbor grill', 'harbor', 'grill', 'oyster'])
"""

from __future__ import annotations

import copy
import functools
import math
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from langchain_ripplemem.config import LinkingConfig
from langchain_ripplemem.index.cue_names import NameCounts
from langchain_ripplemem.index.pinned_rows import PostingsBelow, Prefix
from langchain_ripplemem.index.row_arrays import distinct_rows, extended
from langchain_ripplemem.schemas import DAY_SECONDS, MemoryUnit
from langchain_ripplemem.text.cue_scores import (
    BETA_LOCATIONS,
    BETA_PARTICIPANTS,
    BETA_TIME,
    TIME_DECAY_DAYS,
    HasCues,
    normalised_cues,
)
from langchain_ripplemem.text.identifying import Cues, identifying_cues, rarity

__all__ = ["CueRows", "cue_keys", "day_buckets", "unit_cues"]

# Interval cues longer than this are bucketed by their first and last days only,
# so "in 2022" does not fan out into 365 postings per unit.
_MAX_DAY_BUCKETS = 62
_NO_ROWS = np.zeros(0, dtype=np.int64)
_NO_SCORES = np.zeros(0, dtype=np.float64)
# The cue table row a restored index's first rows hold (never read: the restored array serves them).
_NO_CUES = (0, 0, float("nan"), float("nan"))


def day_buckets(unit: HasCues) -> list[int]:
    """Proleptic day ordinals an interval touches (bounded)."""
    if unit.time is None:
        return []
    first, last = unit.time.start.date().toordinal(), unit.time.end.date().toordinal()
    if last - first > _MAX_DAY_BUCKETS:
        return [first, last]
    return list(range(first, last + 1))


def unit_cues(unit: MemoryUnit) -> Cues:
    """A unit's identifying names and topic keys: its own, else derived from its text (older units).

    The speaker a unit records and its participants and places are passed on, so a
    derived list looks like the one the rule-based extractor writes.
    """
    if unit.cues is not None or unit.topics is not None:
        return Cues(list(dict.fromkeys(unit.cues or ())), list(dict.fromkeys(unit.topics or ())))
    speaker = unit.metadata.get("speaker")
    speakers = [speaker] if isinstance(speaker, str) and speaker else []
    return identifying_cues(unit.restatement, speakers=speakers, extra=[*unit.participants, *unit.locations])


@functools.lru_cache(maxsize=64)
def _text_keys(text: str, speakers: tuple[str, ...]) -> tuple[str, ...]:
    """A query's identifying cue keys, names first: recall views, controller and plan all ask for them each recall."""
    names, topics = identifying_cues(text, speakers=speakers)
    return tuple(dict.fromkeys(names + topics))


def cue_keys(cues: HasCues) -> list[tuple[str, str | int]]:
    """The ``(index, value)`` keys a unit or query is posted under in the cue indexes."""
    return [*(("participants", v) for v in normalised_cues(cues.participants)),
            *(("locations", v) for v in normalised_cues(cues.locations)),
            *(("days", d) for d in day_buckets(cues))]


class CueRows:
    """Posting lists ``(field, value) -> rows`` and per-row cue tables of a growing list of units.

    ``postings``, ``keys`` and ``name_counts`` are read by recall and the write path
    as they are (never rebound after construction); the methods that take ``n`` read
    the first ``n`` rows, the count the caller has published.
    """

    def __init__(self) -> None:
        self.postings: dict[str, dict[str | int, list[int]]] = {
            "participants": defaultdict(list),
            "locations": defaultdict(list),
            "days": defaultdict(list),
        }
        self.postings["cues"] = defaultdict(list)  # identifying cue key -> rows
        # Per row, for the vectorised cue view: distinct participants and locations,
        # the time interval in days since the epoch (NaN: none).
        self._row_cues: list[tuple[int, int, float, float]] = []
        # Names then topic words, per row: tuples, which the garbage collector stops tracking (a
        # list per row kept 100k tracked objects in its every full pass at 100k memories).
        self.keys: list[tuple[str, ...]] = []
        self.name_counts = NameCounts()  # how the memories write each key (is_name)
        self._arrays: dict[object, tuple[int, np.ndarray]] = {}

    def prefix(self, n: int) -> CueRows:
        """The cue rows of the first ``n`` rows, as a reader holds them while writers append.

        The posting lists and per-row tables are shared and read below ``n``
        (:class:`~langchain_ripplemem.index.pinned_rows.PostingsBelow`); the name counts are
        the same object: a writer that counts on gives this object a copy first.
        """
        held = copy.copy(self)
        held.postings = {field: PostingsBelow(rows, n) for field, rows in self.postings.items()}  # type: ignore[misc]
        held.keys = Prefix(self.keys, n)  # type: ignore[assignment]
        return held

    def describe(self, row: int, unit: MemoryUnit) -> tuple[str, ...]:
        """Record row ``row``'s cue table, keys and name counts (before the row is published); its keys."""
        span = (unit.time.start.timestamp() / DAY_SECONDS, unit.time.end.timestamp() / DAY_SECONDS) \
            if unit.time is not None else (np.nan, np.nan)
        counts = (len(normalised_cues(unit.participants)), len(normalised_cues(unit.locations)))
        self._row_cues.append((*counts, *span))
        names, topics = unit_cues(unit)
        self.name_counts.add(row, names, topics, unit.restatement)
        keys = (*names, *(t for t in topics if t not in names))
        self.keys.append(keys)
        return keys

    def post(self, row: int, unit: MemoryUnit, keys: Iterable[str]) -> None:
        """Post row ``row`` under its cues and its ``keys`` (:meth:`describe`'s), once it is published."""
        for field, value in cue_keys(unit):
            self.postings[field][value].append(row)
        for key in keys:
            self.postings["cues"][key].append(row)

    def posting_lists(self, cues: HasCues) -> list[list[int]]:
        """The row lists (insertion order) of every participant, location and day of ``cues``."""
        return [rows for field, value in cue_keys(cues) if (rows := self.postings[field].get(value))]

    def rarity(self, key: str, total: int, upto: int | None = None, topic_weight: float = 1.0) -> float:
        """What sharing ``key`` says among the first ``upto`` rows (default all ``total``): see the index's."""
        rows = self.postings["cues"].get(key)
        if not rows:
            return 0.0
        n = total if upto is None else upto
        weight = rarity(len(rows) if upto is None else bisect_left(rows, upto), n)
        return weight if self.name_counts.is_name(key, n) else topic_weight * weight

    def known_keys(self, text: str, speakers: Iterable[str] = ()) -> list[str]:
        """The identifying cue keys of ``text`` (a query) that some row has."""
        postings = self.postings["cues"]
        return [key for key in _text_keys(text, tuple(speakers)) if key in postings]

    def posting_array(self, field: str, value: object) -> np.ndarray:
        """A posting list as an int array, cached until the list grows (lists only grow)."""
        rows = self.postings[field].get(value)  # type: ignore[call-overload]
        if not rows:
            return _NO_ROWS
        n = len(rows)
        cached = self._arrays.get((field, value))
        if cached is None or cached[0] < n:
            cached = self._arrays[(field, value)] = extended(cached, rows, n, np.int64)
        return cached[1][:n]

    def row_cue_array(self, n: int) -> np.ndarray:
        """The first ``n`` rows' cue table: ``(participants, locations, first day, last day)`` per row."""
        cached = self._arrays.get("rows")
        if cached is None or cached[0] < n:
            cached = self._arrays["rows"] = extended(cached, self._row_cues, n, np.float64, width=4)
        return cached[1][:n]

    def key_overlap(self, keys: Iterable[str], total: int, n: int, topic_weight: float = 1.0) -> np.ndarray:
        """Per row of the first ``n``, the rarity-weighted overlap with the ``keys`` (rarities among ``total`` rows)."""
        missing = np.zeros(n, dtype=np.float64)
        for key in dict.fromkeys(keys):
            weight = self.rarity(key, total, topic_weight=topic_weight)
            if weight > 0.0:
                rows = self.posting_array("cues", key)
                missing[rows[rows < n]] += math.log1p(-min(weight, 1.0 - 1e-9))
        return -np.expm1(missing)

    def scored(
        self, cues: HasCues, k: int, config: LinkingConfig, n: int, rows: Iterable[int] | None = None, *,
        keys: Sequence[str] = (), key_weight: float = 0.0, topic_weight: float = 1.0,
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, scores)``: the candidate rows among the first ``n`` that score above 0, ascending.

        Candidates are ``rows``, else the rows sharing a cue (or, with ``key_weight``, a
        key) with ``cues``; the score is docs/concepts.md's ``s_str`` plus ``key_weight`` times
        the :meth:`key_overlap` with ``keys``. Nothing is scored when ``k <= 0``.
        """
        if rows is None:
            arrays = [self.posting_array(field, value) for field, value in cue_keys(cues)]
            if key_weight:
                arrays += [self.posting_array("cues", key) for key in keys]
            candidates = distinct_rows(arrays, n)
        else:
            candidates = np.unique(np.fromiter(rows, dtype=np.int64))
        candidates = candidates[candidates < n]
        if k <= 0 or len(candidates) == 0:
            return _NO_ROWS, _NO_SCORES
        scores = self._structural(cues, candidates, config)
        if key_weight and keys:
            scores = scores + key_weight * self.key_overlap(keys, n, n, topic_weight)[candidates]
        keep = scores > 0
        return candidates[keep], scores[keep]

    def _structural(self, cues: HasCues, rows: np.ndarray, cfg: LinkingConfig) -> np.ndarray:
        """``s_str(cues, unit)`` of each row, vectorised; 0 where no cue type is comparable."""
        # Every posting names a row described already: the keys cover each posted row.
        n = len(self.keys)
        table = self.row_cue_array(n)[rows]
        total = np.zeros(len(rows))
        weight = np.zeros(len(rows))
        for column, field, values, beta in ((0, "participants", cues.participants, BETA_PARTICIPANTS),
                                            (1, "locations", cues.locations, BETA_LOCATIONS)):
            wanted = normalised_cues(values)
            if not wanted or beta <= 0:
                continue
            shared = np.zeros(n)
            for value in wanted:
                shared[self.posting_array(field, value)] += 1.0
            inter, size = shared[rows], table[:, column]
            has = size > 0
            union = np.where(has, len(wanted) + size - inter, 1.0)
            total += np.where(has, beta * inter / union, 0.0)
            weight += np.where(has, beta, 0.0)
        if cues.time is not None and BETA_TIME > 0:
            start, end = cues.time.start.timestamp() / DAY_SECONDS, cues.time.end.timestamp() / DAY_SECONDS
            has = ~np.isnan(table[:, 2])
            gap = np.maximum(0.0, np.maximum(table[:, 2] - end, start - table[:, 3]))
            total += np.where(has, BETA_TIME * np.exp(-np.nan_to_num(gap) / TIME_DECAY_DAYS), 0.0)
            weight += np.where(has, BETA_TIME, 0.0)
        return np.divide(total, weight, out=np.zeros(len(rows)), where=weight > 0)

    def state(self, n: int) -> dict[str, Any]:
        """The postings, the first ``n`` rows' cue table and keys, the name counts (a snapshot pickles them)."""
        return {"postings": {field: dict(rows) for field, rows in self.postings.items()},
                "row_cues": self.row_cue_array(n).copy(), "keys": self.keys, "name_counts": self.name_counts}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> CueRows:
        """The cue rows :meth:`state` described."""
        cue_rows = cls()
        for field, rows in state["postings"].items():
            cue_rows.postings[field] = defaultdict(list, rows)
        # The cue table as the array the cue view reads: row_arrays.extended converts only rows appended after
        # it, so the list's first rows are never read again and need no per-row tuples (placeholders).
        table = state["row_cues"]
        cue_rows._row_cues, cue_rows._arrays["rows"] = [_NO_CUES] * len(table), (len(table), table)
        cue_rows.keys, cue_rows.name_counts = state["keys"], state["name_counts"]
        return cue_rows
