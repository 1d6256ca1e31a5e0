"""The search structures of one namespace (:class:`NamespaceView`), which serve the recall views.

The durable store is a :class:`~langchain_ripplemem.storage.base.UnitBackend`
(Chroma by default: :mod:`langchain_ripplemem.storage.chroma`); every read and
write names its namespace, so one namespace never sees another's memories.

For speed each namespace gets an in-memory :class:`NamespaceView`, loaded from
the unit backend on first use and updated on every write
(:class:`~langchain_ripplemem.index.unit_index.UnitIndex`): an exact cosine matrix (a few
thousand 384-d vectors is one small matrix product, faster and exact compared
with a filtered HNSW query), a BM25 index (:class:`~langchain_ripplemem.index.bm25.BM25Index`:
bm25s's scores, extended with the units a write added, never rebuilt) and
inverted cue indexes (participant, location, day bucket).
"""

from __future__ import annotations

import functools
import math
import threading
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from langchain_ripplemem._runtime.blas import product
from langchain_ripplemem.config import LinkingConfig
from langchain_ripplemem.extraction.identifying import Cues, identifying_cues, rarity
from langchain_ripplemem.index.bm25 import BM25Index, top_k
from langchain_ripplemem.index.cache_bounds import VIEW_BYTES_FIXED, VIEW_BYTES_PER_CHAR, VIEW_BYTES_PER_UNIT
from langchain_ripplemem.index.cue_names import NameCounts
from langchain_ripplemem.index.lexical import lexical_tokens
from langchain_ripplemem.index.row_arrays import distinct_rows, extended, top_indices
from langchain_ripplemem.index.unit_list import UnitList
from langchain_ripplemem.memory_graph.scoring import HasCues, normalised_cues
from langchain_ripplemem.schemas import DAY_SECONDS, MemoryUnit, Namespace

# Queries whose cosines a view keeps (NamespaceView.cosines): one recall's query and target.
_COSINES_KEPT = 4
# Interval cues longer than this are bucketed by their first and last days only,
# so "in 2022" does not fan out into 365 postings per unit.
_MAX_DAY_BUCKETS = 62
_NO_ROWS = np.zeros(0, dtype=np.int64)


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
    """A query's identifying cue keys, names first: views, controller and plan all ask for them each recall."""
    names, topics = identifying_cues(text, speakers=speakers)
    return tuple(dict.fromkeys(names + topics))


def cue_keys(cues: HasCues) -> list[tuple[str, str | int]]:
    """The ``(index, value)`` keys a unit or query is posted under in the cue indexes."""
    return [*(("participants", v) for v in normalised_cues(cues.participants)),
            *(("locations", v) for v in normalised_cues(cues.locations)),
            *(("days", d) for d in day_buckets(cues))]


class NamespaceView:
    """In-memory search structures for one namespace."""

    def __init__(self, namespace: Namespace, dim: int | None = None) -> None:
        self.namespace = namespace
        self.ids: list[str] = []
        self.units = UnitList()  # parsed when read (a view restored from a snapshot holds JSON)
        self.pos: dict[str, int] = {}
        self._matrix = np.zeros((0, dim or 0), dtype=np.float32)
        self.postings: dict[str, dict[str | int, list[int]]] = {
            "participants": defaultdict(list),
            "locations": defaultdict(list),
            "days": defaultdict(list),
        }
        self.postings["cues"] = defaultdict(list)  # identifying cue key -> rows
        self._bm25 = BM25Index()  # covers the first len(self._bm25) rows; extended on use
        self._bm25_lock = threading.Lock()
        # (query vector bytes, rows) -> cosines: one recall asks several times for the same query.
        self._cosines: dict[tuple[bytes, int], np.ndarray] = {}
        self._cosines_lock = threading.Lock()
        # Per row, for the vectorised cue view: distinct participants and locations,
        # the time interval in days since the epoch (NaN: none), the identifying keys.
        self._row_cues: list[tuple[int, int, float, float]] = []
        # Names then topic words, per row: tuples, which the garbage collector stops tracking (a
        # list per row kept 100k tracked objects in its every full pass at 100k memories).
        self.keys: list[tuple[str, ...]] = []
        self.name_counts = NameCounts()  # how the memories write each key (is_name)
        self._arrays: dict[object, tuple[int, np.ndarray]] = {}
        self.max_seq = -1  # the largest metadata["seq"] of the units here (ingest numbers after it)
        self._unit_bytes = 0  # estimated memory of the units and what is derived from them (nbytes)
        self.suppressed: set[str] = set()  # ids a user correction hides from recall (lifecycle.py)
        # older id -> ids of units that claim to supersede it (an LLM's claims, lifecycle.py)
        self.claimed_by: dict[str, list[str]] = defaultdict(list)
        # What readers derive from the units, by name: (rows covered, value) (recall/smoothing.py::per_view).
        self.derived: dict[str, tuple[int, Any]] = {}
        self.snapshot_version: int | None = None  # the namespace version of the snapshot it matches

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def nbytes(self) -> int:
        """Estimated memory held: the vector matrix (as allocated) and measured amounts per unit and character."""
        return VIEW_BYTES_FIXED + int(self._matrix.nbytes) + self._unit_bytes

    @property
    def matrix(self) -> np.ndarray:
        """``(n, dim)`` unit vectors, row ``i`` for ``ids[i]``."""
        return self._matrix[: len(self.ids)]

    def add(self, units: Sequence[MemoryUnit], vectors: np.ndarray, json: Sequence[bytes] | None = None) -> None:
        """Append units that are not in the view yet (``json``: their JSON, when at hand)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        n, need = len(self.ids), len(self.ids) + len(units)
        if self._matrix.shape[1] != vectors.shape[1] or need > self._matrix.shape[0]:
            grown = np.zeros((max(need, 2 * self._matrix.shape[0], 64), vectors.shape[1]),
                             dtype=np.float32)
            if self._matrix.shape[1] == vectors.shape[1]:
                grown[:n] = self._matrix[:n]
            self._matrix = grown
        self._matrix[n:need] = vectors
        for offset, unit in enumerate(units):
            i = n + offset
            span = (unit.time.start.timestamp() / DAY_SECONDS, unit.time.end.timestamp() / DAY_SECONDS) \
                if unit.time is not None else (np.nan, np.nan)
            counts = (len(normalised_cues(unit.participants)), len(normalised_cues(unit.locations)))
            self._row_cues.append((*counts, *span))
            names, topics = unit_cues(unit)
            self.name_counts.add(i, names, topics, unit.restatement)
            keys = (*names, *(t for t in topics if t not in names))
            self.keys.append(keys)
            # Readers run without a lock: publish the unit before its id and
            # position, so any id a reader sees already has its unit and vector.
            self.units.append(unit, json[offset] if json is not None else None)
            self.max_seq = max(self.max_seq, _seq(unit))
            # the model (while kept, unit_list.PARSED_KEPT) and its JSON, held beside it
            self._unit_bytes += VIEW_BYTES_PER_UNIT + VIEW_BYTES_PER_CHAR * len(unit.restatement) + len(
                self.units.json(i))
            self.ids.append(unit.id)
            self.pos[unit.id] = i
            for field, value in cue_keys(unit):
                self.postings[field][value].append(i)
            for key in keys:
                self.postings["cues"][key].append(i)
            if unit.metadata.get("suppressed"):
                self.suppressed.add(unit.id)
            for old in unit.metadata.get("supersedes") or ():
                self.claimed_by[old].append(unit.id)

    def replace(self, unit: MemoryUnit) -> None:
        """Swap in a unit whose metadata changed (text, cues and vector must be the same)."""
        i = self.pos[unit.id]
        old = self.units[i]
        if (old.restatement, old.participants, old.locations, old.time) != (
                unit.restatement, unit.participants, unit.locations, unit.time):
            raise ValueError(f"unit {unit.id}: only metadata can change in place")
        self.units[i] = unit
        self.max_seq = max(self.max_seq, _seq(unit))
        before, after = old.metadata.get("supersedes") or {}, unit.metadata.get("supersedes") or {}
        for gone in set(before) - set(after):
            self.claimed_by[gone].remove(unit.id)
        for added in set(after) - set(before):
            self.claimed_by[added].append(unit.id)
        if unit.metadata.get("suppressed"):
            self.suppressed.add(unit.id)
        else:
            self.suppressed.discard(unit.id)

    def without(self, ids: Iterable[str], derive: Callable[[NamespaceView], object] | None = None) -> NamespaceView:
        """A new view of the same namespace minus ``ids`` (a delete), built from memory, not Chroma.

        Rows keep their order. The view is new, not edited, because readers may be
        using this one and derived caches (BM25, context) are keyed by view.
        ``derive`` runs on the new view while all its units are parsed, if this view
        had derived values (a writer that never recalls pays nothing for them).
        """
        gone = set(ids)
        rows = [i for i, uid in enumerate(self.ids) if uid not in gone]
        view = NamespaceView(self.namespace, self._matrix.shape[1])
        if len(self._bm25):  # in use: carry the postings over rather than re-tokenise every unit
            view._bm25 = self._lexical_index().subset(rows)
        with view.units.holding():
            view.add(self.units.take(rows), self.matrix[rows], [self.units.json(i) for i in rows])
            if derive is not None and self.derived:
                derive(view)
        return view

    def unit(self, unit_id: str) -> MemoryUnit | None:
        """The unit with this id, if the namespace has it."""
        i = self.pos.get(unit_id)
        return self.units[i] if i is not None else None

    def vector(self, unit_id: str) -> np.ndarray:
        """The unit's vector."""
        return self.matrix[self.pos[unit_id]]

    # -- the three views ----------------------------------------------------------
    def cosines(self, query: np.ndarray) -> np.ndarray:
        """Cosine of every unit (row order) with a unit query vector (read-only; the last few queries' are kept).

        Tri-view recall, assembly and expansion ask for the same query's scores: one
        pass over the matrix serves them all, with the values a fresh product gives.
        """
        query = np.asarray(query, dtype=np.float32)
        matrix = self.matrix
        if len(matrix) == 0:  # no vectors yet, nor their width
            return np.zeros(0, dtype=np.float32)
        key = (query.tobytes(), len(matrix))
        scores = self._cosines.get(key)
        if scores is None:
            scores = product(matrix, query)
            scores.flags.writeable = False
            with self._cosines_lock:
                while len(self._cosines) >= _COSINES_KEPT:
                    self._cosines.pop(next(iter(self._cosines)))
                self._cosines[key] = scores
        return scores

    def semantic(self, query: np.ndarray, k: int, upto: int | None = None) -> list[tuple[str, float]]:
        """Exact cosine top-k (vectors are L2-normalised), optionally among the first ``upto`` rows."""
        if upto is None:
            scores = self.cosines(query)
        else:
            scores = product(self.matrix[:upto], np.asarray(query, dtype=np.float32))
        if k <= 0 or len(scores) == 0:
            return []
        top = top_indices(scores, k)
        return [(self.ids[i], float(scores[i])) for i in top]

    def lexical(self, query: str, k: int) -> list[tuple[str, float]]:
        """BM25 top-k over restatements (``bm25s``'s scores; equal scores: the earlier unit first)."""
        tokens = lexical_tokens(query)
        if k <= 0 or not tokens or not self.ids:
            return []
        rows, scores = top_k(self._lexical_index().scores(tokens), k)
        return [(self.ids[int(d)], float(s)) for d, s in zip(rows, scores, strict=True)]

    def lexical_scores(self, query: str) -> np.ndarray:
        """BM25 score of every unit (row order) for ``query``; zeros when it has no terms."""
        tokens = lexical_tokens(query)
        if not tokens or not self.ids:
            return np.zeros(len(self.ids), dtype=np.float32)
        scores = self._lexical_index().scores(tokens)
        # A writer may append units after the BM25 index was extended: they score 0
        # until the next call rather than falling off the end of the array.
        n = len(self.ids)
        if len(scores) < n:
            scores = np.concatenate([scores, np.zeros(n - len(scores), dtype=np.float32)])
        return scores[:n]

    def term_rows(self, term: str) -> np.ndarray:
        """Rows whose restatement holds ``term``, a stemmed content word (the BM25 vocabulary)."""
        return self._lexical_index().rows_of(term)

    def posting_lists(self, cues: HasCues) -> list[list[int]]:
        """The row lists (insertion order) of every participant, location and day of ``cues``."""
        return [rows for field, value in cue_keys(cues) if (rows := self.postings[field].get(value))]

    def rarity(self, key: str, upto: int | None = None, topic_weight: float = 1.0) -> float:
        """What sharing ``key`` says among the first ``upto`` rows: its rarity, times ``topic_weight`` for a topic word.

        Rarity is :func:`~langchain_ripplemem.extraction.identifying.rarity`; a key
        counts as a name as :meth:`is_name` says.
        """
        rows = self.postings["cues"].get(key)
        if not rows:
            return 0.0
        n = len(self.ids) if upto is None else upto
        weight = rarity(len(rows) if upto is None else bisect_left(rows, upto), n)
        return weight if self.is_name(key, n) else topic_weight * weight

    def is_name(self, key: str, upto: int | None = None) -> bool:
        """Whether ``key`` names something here (:meth:`~langchain_ripplemem.index.cue_names.NameCounts.is_name`)."""
        return self.name_counts.is_name(key, upto)

    def known_keys(self, text: str, speakers: Iterable[str] = ()) -> list[str]:
        """The identifying cue keys of ``text`` (a query) that some memory of the namespace has."""
        postings = self.postings["cues"]
        return [key for key in _text_keys(text, tuple(speakers)) if key in postings]

    def _posting_array(self, field: str, value: object) -> np.ndarray:
        """A posting list as an int array, cached until the list grows (lists only grow)."""
        rows = self.postings[field].get(value)  # type: ignore[call-overload]
        if not rows:
            return _NO_ROWS
        n = len(rows)
        cached = self._arrays.get((field, value))
        if cached is None or cached[0] < n:
            cached = self._arrays[(field, value)] = extended(cached, rows, n, np.int64)
        return cached[1][:n]

    def _row_cue_array(self) -> np.ndarray:
        n = len(self.ids)
        cached = self._arrays.get("rows")
        if cached is None or cached[0] < n:
            cached = self._arrays["rows"] = extended(cached, self._row_cues, n, np.float64, width=4)
        return cached[1][:n]

    def key_overlap(self, keys: Iterable[str], n: int | None = None, topic_weight: float = 1.0) -> np.ndarray:
        """Per row, the rarity-weighted overlap ``1 - prod(1 - rarity(k))`` over the ``keys`` it shares.

        One pass over the keys' posting lists (no per-unit Python work): a row that
        shares one rare key scores almost 1, a row that shares only common keys
        (a speaker's name) almost 0.
        """
        n = len(self.ids) if n is None else n
        missing = np.zeros(n, dtype=np.float64)
        for key in dict.fromkeys(keys):
            weight = self.rarity(key, topic_weight=topic_weight)
            if weight > 0.0:
                rows = self._posting_array("cues", key)
                missing[rows[rows < n]] += math.log1p(-min(weight, 1.0 - 1e-9))
        return -np.expm1(missing)

    def cues(
        self, cues: HasCues, k: int, config: LinkingConfig, query_vector: np.ndarray | None = None,
        rows: Iterable[int] | None = None, *,
        keys: Sequence[str] = (), key_weight: float = 0.0, topic_weight: float = 1.0,
    ) -> list[tuple[str, float]]:
        """Units ranked by structural overlap with ``cues``; semantic similarity breaks ties.

        The score is METHOD.md's ``s_str`` (betas and tau from ``config``), plus
        ``key_weight`` times the rarity-weighted overlap with the identifying
        ``keys`` (:meth:`key_overlap`; topic words count ``topic_weight``). It is
        computed from the posting lists with array operations: no Python work per
        unit, so the cost follows the postings the cues touch.
        """
        cfg, n = config, len(self.ids)
        if rows is None:
            arrays = [self._posting_array(field, value) for field, value in cue_keys(cues)]
            if key_weight:
                arrays += [self._posting_array("cues", key) for key in keys]
            candidates = distinct_rows(arrays, n)
        else:
            candidates = np.unique(np.fromiter(rows, dtype=np.int64))
        candidates = candidates[candidates < n]
        if k <= 0 or len(candidates) == 0:
            return []
        scores = self._structural(cues, candidates, cfg)
        if key_weight and keys:
            scores = scores + key_weight * self.key_overlap(keys, n, topic_weight)[candidates]
        keep = scores > 0
        rows_kept, scores_kept = candidates[keep], scores[keep]
        if len(rows_kept) == 0:
            return []
        # Ties by the query's cosines, shared with the semantic view (no copy of the candidates' vectors).
        tie = self.cosines(query_vector)[rows_kept] if query_vector is not None else np.zeros(len(rows_kept))
        order = np.lexsort((rows_kept, -tie, -scores_kept))[:k]
        ids = self.ids  # rows and scores read as Python values at once, not one NumPy scalar at a time
        return list(zip([ids[row] for row in rows_kept[order].tolist()], scores_kept[order].tolist(), strict=True))

    def _structural(self, cues: HasCues, rows: np.ndarray, cfg: LinkingConfig) -> np.ndarray:
        """``s_str(cues, unit)`` of each row, vectorised; 0 where no cue type is comparable."""
        n = len(self.ids)
        table = self._row_cue_array()[rows]
        total = np.zeros(len(rows))
        weight = np.zeros(len(rows))
        for column, field, values, beta in ((0, "participants", cues.participants, cfg.beta_participants),
                                            (1, "locations", cues.locations, cfg.beta_locations)):
            wanted = normalised_cues(values)
            if not wanted or beta <= 0:
                continue
            shared = np.zeros(n)
            for value in wanted:
                shared[self._posting_array(field, value)] += 1.0
            inter, size = shared[rows], table[:, column]
            has = size > 0
            union = np.where(has, len(wanted) + size - inter, 1.0)
            total += np.where(has, beta * inter / union, 0.0)
            weight += np.where(has, beta, 0.0)
        if cues.time is not None and cfg.beta_time > 0:
            start, end = cues.time.start.timestamp() / DAY_SECONDS, cues.time.end.timestamp() / DAY_SECONDS
            has = ~np.isnan(table[:, 2])
            gap = np.maximum(0.0, np.maximum(table[:, 2] - end, start - table[:, 3]))
            total += np.where(has, cfg.beta_time * np.exp(-np.nan_to_num(gap) / cfg.time_decay_days), 0.0)
            weight += np.where(has, cfg.beta_time, 0.0)
        return np.divide(total, weight, out=np.zeros(len(rows)), where=weight > 0)

    def term_counts(self) -> np.ndarray:
        """Each unit's number of BM25 terms (content words), row order."""
        return self._lexical_index().lengths()

    def _lexical_index(self) -> BM25Index:
        """The BM25 index, extended with the units added since its last use (only those are tokenised)."""
        index = self._bm25
        if len(index) < len(self.ids):
            with self._bm25_lock:
                n = len(self.ids)  # units are published before ids: units[:n] are all there
                # A placeholder token for a unit without terms, as the bm25s index had.
                index.extend(lexical_tokens(u.restatement) or ["_"] for u in self.units[len(index) : n])
        return index


def _seq(unit: MemoryUnit) -> int:
    seq = unit.metadata.get("seq", -1)
    return seq if isinstance(seq, int) else -1
