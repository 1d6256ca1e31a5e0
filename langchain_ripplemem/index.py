"""The unit index: per-namespace in-memory views over a unit backend serve the recall views.

The durable store is a :class:`~langchain_ripplemem.storage.base.UnitBackend`
(Chroma by default: :mod:`langchain_ripplemem.storage.chroma`); every read and
write names its namespace, so one namespace never sees another's memories.

For speed each namespace gets an in-memory :class:`NamespaceView`, loaded from
the unit backend on first use and updated on every write: an exact cosine matrix (a few
thousand 384-d vectors is one small matrix product, faster and exact compared
with a filtered HNSW query), a BM25 index (:class:`~langchain_ripplemem.bm25.BM25Index`:
bm25s's scores, extended with the units a write added, never rebuilt) and
inverted cue indexes (participant, location, day bucket).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np

from langchain_ripplemem.blas import product
from langchain_ripplemem.bm25 import BM25Index, top_k
from langchain_ripplemem.cache_bounds import (
    VIEW_BYTES_FIXED,
    VIEW_BYTES_PER_CHAR,
    VIEW_BYTES_PER_UNIT,
    CacheBounds,
    LRUCache,
)
from langchain_ripplemem.config import WriteConfig
from langchain_ripplemem.lexical import lexical_tokens
from langchain_ripplemem.memory_graph.scoring import HasCues, cue_set, structural_score
from langchain_ripplemem.schemas import MemoryUnit, Namespace, namespace_key
from langchain_ripplemem.storage.base import UnitBackend

# Queries whose cosines a view keeps (NamespaceView.cosines): one recall's query and target.
_COSINES_KEPT = 4
# Interval cues longer than this are bucketed by their first and last days only,
# so "in 2022" does not fan out into 365 postings per unit.
_MAX_DAY_BUCKETS = 62


def day_buckets(unit: HasCues) -> list[int]:
    """Proleptic day ordinals an interval touches (bounded)."""
    if unit.time is None:
        return []
    first, last = unit.time.start.date().toordinal(), unit.time.end.date().toordinal()
    if last - first > _MAX_DAY_BUCKETS:
        return [first, last]
    return list(range(first, last + 1))


def cue_keys(cues: HasCues) -> list[tuple[str, str | int]]:
    """The ``(index, value)`` keys a unit or query is posted under in the cue indexes."""
    return [*(("participants", v) for v in cue_set(cues.participants)),
            *(("locations", v) for v in cue_set(cues.locations)),
            *(("days", d) for d in day_buckets(cues))]


class NamespaceView:
    """In-memory search structures for one namespace."""

    def __init__(self, namespace: Namespace, dim: int | None = None) -> None:
        self.namespace = namespace
        self.ids: list[str] = []
        self.units: list[MemoryUnit] = []
        self.pos: dict[str, int] = {}
        self._matrix = np.zeros((0, dim or 0), dtype=np.float32)
        self.postings: dict[str, dict[str | int, list[int]]] = {
            "participants": defaultdict(list),
            "locations": defaultdict(list),
            "days": defaultdict(list),
        }
        self._bm25 = BM25Index()  # covers the first len(self._bm25) rows; extended on use
        self._bm25_lock = threading.Lock()
        # (query vector bytes, rows) -> cosines: one recall asks several times for the same query.
        self._cosines: dict[tuple[bytes, int], np.ndarray] = {}
        self._cosines_lock = threading.Lock()
        # Cue signature (participants, locations, time) per row, for the cue view.
        self._signature: list[int] = []
        self._signature_row: list[int] = []
        self._signatures: dict[tuple[object, ...], int] = {}
        self.max_seq = -1  # the largest metadata["seq"] of the units here (ingest numbers after it)
        self._unit_bytes = 0  # estimated memory of the units and what is derived from them (nbytes)
        self.suppressed: set[str] = set()  # ids a user correction hides from recall (lifecycle.py)
        # older id -> ids of units that claim to supersede it (an LLM's claims, lifecycle.py)
        self.claimed_by: dict[str, list[str]] = defaultdict(list)

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

    def add(self, units: Sequence[MemoryUnit], vectors: np.ndarray) -> None:
        """Append units that are not in the view yet."""
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
            key = (tuple(unit.participants), tuple(unit.locations),
                   (unit.time.start, unit.time.end) if unit.time is not None else None)
            if key not in self._signatures:
                self._signatures[key] = len(self._signature_row)
                self._signature_row.append(i)
            self._signature.append(self._signatures[key])
            # Readers run without a lock: publish the unit before its id and
            # position, so any id a reader sees already has its unit and vector.
            self.units.append(unit)
            self._unit_bytes += VIEW_BYTES_PER_UNIT + VIEW_BYTES_PER_CHAR * len(unit.restatement)
            self.max_seq = max(self.max_seq, _seq(unit))
            self.ids.append(unit.id)
            self.pos[unit.id] = i
            for field, value in cue_keys(unit):
                self.postings[field][value].append(i)
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

    def without(self, ids: Iterable[str]) -> NamespaceView:
        """A new view of the same namespace minus ``ids`` (a delete), built from memory, not Chroma.

        Rows keep their order. The view is new, not edited, because readers may be
        using this one and derived caches (BM25, context) are keyed by view.
        """
        gone = set(ids)
        rows = [i for i, uid in enumerate(self.ids) if uid not in gone]
        view = NamespaceView(self.namespace, self._matrix.shape[1])
        view.add([self.units[i] for i in rows], self.matrix[rows])
        if len(self._bm25):  # in use: carry the postings over rather than re-tokenise every unit
            view._bm25 = self._lexical_index().subset(rows)
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
        top = _top_indices(scores, k)
        return [(self.ids[i], float(scores[i])) for i in top]

    def lexical(self, query: str, k: int) -> list[tuple[str, float]]:
        """BM25 top-k over restatements, ranked as ``bm25s`` ranks them."""
        tokens = lexical_tokens(query)
        if k <= 0 or not tokens or not self.ids:
            return []
        rows, scores = top_k(self._lexical_index().scores(tokens), k)
        return [(self.ids[int(d)], float(s)) for d, s in zip(rows, scores, strict=True) if s > 0]

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

    def posting_lists(self, cues: HasCues) -> list[list[int]]:
        """The row lists (insertion order) of every participant, location and day of ``cues``."""
        return [rows for field, value in cue_keys(cues) if (rows := self.postings[field].get(value))]

    def cue_candidates(self, cues: HasCues) -> set[int]:
        """Rows sharing at least one participant, location or day bucket with ``cues``."""
        return {row for rows in self.posting_lists(cues) for row in rows}

    def cues(
        self, cues: HasCues, k: int, config: WriteConfig, query_vector: np.ndarray | None = None,
        rows: Iterable[int] | None = None,
    ) -> list[tuple[str, float]]:
        """Units ranked by structural overlap with ``cues`` (``config``'s weights); cosine breaks ties."""
        candidates = np.fromiter(self.cue_candidates(cues) if rows is None else rows, dtype=np.int64)
        if k <= 0 or len(candidates) == 0:
            return []
        # Units of one session share participants, places and day: score each
        # distinct cue signature once (the cue view may touch every unit).
        signatures, inverse = np.unique(np.asarray(self._signature, dtype=np.int64)[candidates],
                                        return_inverse=True)
        per_signature = np.array([structural_score(cues, self.units[self._signature_row[sig]], config) or 0.0
                                  for sig in signatures.tolist()])
        scores = per_signature[inverse.reshape(-1)]
        keep = scores > 0
        rows_kept, scores_kept = candidates[keep], scores[keep]
        if len(rows_kept) == 0:
            return []
        tie = self.matrix[rows_kept] @ query_vector if query_vector is not None else np.zeros(len(rows_kept))
        order = np.lexsort((rows_kept, -tie, -scores_kept))[:k]
        return [(self.ids[rows_kept[j]], float(scores_kept[j])) for j in order.tolist()]

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


def _top_indices(scores: np.ndarray, k: int) -> list[int]:
    k = min(k, len(scores))
    part = np.argpartition(-scores, k - 1)[:k]
    # Stable tie-break by row (insertion order) keeps results deterministic.
    return sorted(part.tolist(), key=lambda i: (-float(scores[i]), i))


class UnitIndex:
    """Per-namespace views of the units a :class:`~langchain_ripplemem.storage.base.UnitBackend` holds.

    Writes go to the backend first, then to the cached view; reads are served by
    the views, loaded from the backend (page by page) on first use.

    Args:
        backend: where units and vectors are stored.
    """

    def __init__(self, backend: UnitBackend, bounds: CacheBounds | None = None) -> None:
        self.backend = backend
        bounds = bounds or CacheBounds()
        # The least recently used views leave past the bounds; their next use reloads them.
        self._views: LRUCache[NamespaceView] = LRUCache(bounds.max_namespaces, bounds.view_bytes,
                                                        lambda view: view.nbytes)
        self._lock = threading.RLock()
        # Per namespace since the last take_written(): (ids written, ids deleted); None = a drop.
        self._written: dict[str, tuple[set[str], set[str]] | None] = {}

    def view(self, namespace: Namespace) -> NamespaceView:
        """The namespace's view, loaded from the backend on first use."""
        key = namespace_key(namespace)
        with self._lock:
            view = self._views.get(key)
            if view is None:
                view = NamespaceView(namespace)
                self._load(view, None)
                self._views.put(key, view)
            return view

    def cached(self, namespace: Namespace) -> NamespaceView | None:
        """The namespace's view if it is loaded (no backend read)."""
        return self._views.peek(namespace_key(namespace))

    def catch_up(self, namespace: Namespace, ids: set[str], removed: Iterable[str] = ()) -> None:
        """Bring a cached view up to date with units another writer deleted, added or rewrote.

        Deleted ids leave first; then ``ids`` are fetched as stored now: new ones are
        appended in write order, known ones get their new metadata. A namespace
        without a cached view is left alone: its first use loads it whole.
        """
        key = namespace_key(namespace)
        with self._lock:
            view = self._views.peek(key)
            if view is None:
                return
            if any(uid in view.pos for uid in removed):
                view = view.without(removed)
                self._views.put(key, view)
            if ids:
                self._load(view, sorted(ids))

    def _load(self, view: NamespaceView, ids: list[str] | None) -> None:
        pages = list(self.backend.load(view.namespace, ids))
        if not pages:
            return
        units = [u for page, _ in pages for u in page]
        vectors = np.concatenate([v for _, v in pages])
        for unit in units:
            if unit.id in view.pos:
                view.replace(unit)
        # Backends return no particular order: restore insertion order.
        order = sorted((i for i, u in enumerate(units) if u.id not in view.pos),
                       key=lambda i: (units[i].metadata.get("seq", 0), units[i].created_at, units[i].id))
        order = list({units[i].id: i for i in order}.values())  # pages may overlap
        if order:
            view.add([units[i] for i in order], vectors[order])

    def take_written(self, namespace: Namespace) -> tuple[set[str] | None, set[str]]:
        """``(ids added or rewritten, ids deleted)`` in ``namespace`` since the last call.

        The first is ``None`` after a drop (readers must reload).
        """
        with self._lock:
            written = self._written.pop(namespace_key(namespace), (set(), set()))
        return written if written is not None else (None, set())

    def _note(self, namespace: Namespace, ids: Iterable[str] | None, removed: Iterable[str] = ()) -> None:
        key = namespace_key(namespace)
        if ids is None:
            self._written[key] = None
        elif (seen := self._written.setdefault(key, (set(), set()))) is not None:
            seen[0].update(ids)
            seen[1].update(removed)

    def add(self, namespace: Namespace, units: Sequence[MemoryUnit], vectors: np.ndarray) -> None:
        """Write units and their vectors to the backend, then to the view."""
        with self._lock:
            self.backend.upsert(namespace, units, vectors)
            self.view(namespace).add(units, vectors)
            self._note(namespace, (u.id for u in units))

    def replace(self, namespace: Namespace, units: Sequence[MemoryUnit]) -> None:
        """Rewrite stored units' metadata in the backend and the view (ids, text and vectors stay)."""
        if not units:
            return
        with self._lock:
            view = self.view(namespace)
            missing = [u.id for u in units if u.id not in view.pos]
            if missing:
                raise ValueError(f"units {missing} are not in namespace {namespace}")
            self.backend.update(namespace, units)
            for unit in units:
                view.replace(unit)
            self._note(namespace, (u.id for u in units))

    def invalidate(self, namespace: Namespace) -> None:
        """Forget the cached view of a namespace; the next use reloads it."""
        with self._lock:
            self._views.pop(namespace_key(namespace))

    def get(self, namespace: Namespace, ids: Iterable[str]) -> list[MemoryUnit]:
        """Units by id, in the order asked, skipping unknown ids."""
        view = self.view(namespace)
        return [u for u in (view.unit(i) for i in ids) if u is not None]

    def delete(self, namespace: Namespace, ids: Iterable[str]) -> list[str]:
        """Remove units of this namespace only; returns the ids that existed."""
        key = namespace_key(namespace)
        with self._lock:
            view = self.view(namespace)
            present = [i for i in dict.fromkeys(ids) if i in view.pos]
            if present:
                self.backend.delete(namespace, present)
                self._views.put(key, view.without(present))
                self._note(namespace, (), present)
        return present

    def drop_namespace(self, namespace: Namespace) -> int:
        """Remove every unit of exactly this namespace; returns how many."""
        with self._lock:
            n = len(self.view(namespace))
            self.backend.drop(namespace)
            self._views.pop(namespace_key(namespace))
            self._note(namespace, None)
        return n

    def namespaces(self) -> list[Namespace]:
        """Every namespace with at least one unit."""
        return self.backend.namespaces()
