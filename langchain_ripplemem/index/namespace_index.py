"""The search structures of one namespace (:class:`NamespaceIndex`), which serve the recall views.

The durable store is a :class:`~langchain_ripplemem.storage.protocols.UnitBackend`
(Chroma by default: :mod:`langchain_ripplemem.storage.chroma`); every read and
write names its namespace, so one namespace never sees another's memories.

For speed each namespace gets an in-memory :class:`NamespaceIndex`, loaded from
the unit backend on first use and updated on every write
(:class:`~langchain_ripplemem.index.unit_index.UnitIndex`). It holds the units
and their ids, row ``i`` for ``ids[i]``, and composes four parts, each of which
saves and restores its own state (:meth:`NamespaceIndex.state`, for the snapshot):

* :class:`~langchain_ripplemem.index.dense_rows.DenseRows`: an exact cosine matrix;
* :class:`~langchain_ripplemem.index.lexical_rows.LexicalRows`: a BM25 index, extended on use;
* :class:`~langchain_ripplemem.index.cue_rows.CueRows`: inverted cue indexes (participant,
  location, day bucket, identifying key) and per-row cue tables;
* :class:`~langchain_ripplemem.index.lifecycle_state.LifecycleState`: suppressed ids and supersession claims.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from langchain_ripplemem._runtime.blas import product
from langchain_ripplemem.cache_bounds import INDEX_BYTES_FIXED, INDEX_BYTES_PER_CHAR, INDEX_BYTES_PER_UNIT
from langchain_ripplemem.config import LinkingConfig
from langchain_ripplemem.index.bm25 import top_k
from langchain_ripplemem.index.cue_rows import CueRows
from langchain_ripplemem.index.dense_rows import DenseRows
from langchain_ripplemem.index.lexical_rows import LexicalRows
from langchain_ripplemem.index.lifecycle_state import LifecycleState
from langchain_ripplemem.index.row_arrays import top_indices
from langchain_ripplemem.index.unit_list import UnitList
from langchain_ripplemem.schemas import MemoryUnit, Namespace
from langchain_ripplemem.text.cue_scores import HasCues
from langchain_ripplemem.text.lexical import lexical_tokens

__all__ = ["NamespaceState", "NamespaceIndex"]


class NamespaceState(NamedTuple):
    """What a snapshot saves of a namespace's index (:meth:`NamespaceIndex.state`)."""

    matrix: np.ndarray  #: the unit vectors, one contiguous float32 row per unit
    units: UnitList  #: the units (a snapshot writes their JSON)
    parts: dict[str, Any]  #: everything else, as plain containers (a snapshot pickles it)


class NamespaceIndex:
    """In-memory search structures for one namespace.

    ``postings``, ``keys`` and ``name_counts`` are :attr:`cue_rows`', ``suppressed``,
    ``claimed_by`` and ``supersedes`` :attr:`lifecycle`'s: the same objects, at hand for recall
    (parts never rebind them).
    """

    def __init__(self, namespace: Namespace, dim: int | None = None) -> None:
        self.namespace = namespace
        self.ids: list[str] = []
        self.units = UnitList()  # parsed when read (an index restored from a snapshot holds JSON)
        self.pos: dict[str, int] = {}
        self.dense = DenseRows(dim)
        self.lexical_rows = LexicalRows()  # covers the first len(self.lexical_rows) rows; extended on use
        self._expose(CueRows(), LifecycleState())
        self.max_seq = -1  # the largest metadata["seq"] of the units here (ingest numbers after it)
        self._unit_bytes = 0  # estimated memory of the units and what is derived from them (nbytes)
        # What readers derive from the units, by name: (rows covered, value) (index/sessions.py::per_index).
        self.derived: dict[str, tuple[int, Any]] = {}
        self.derived_behind: dict[str, Any] = {}  # a pinned index's own derived values, once derived moved past it
        self.snapshot_version: int | None = None  # the namespace version of the snapshot it matches
        self._pinned: NamespaceIndex | None = None  # this state's pinned index, until the next write
        self._shared = False  # a pinned index holds the name counts and lifecycle state: copy before writing
        self.frozen = False  # a pinned index: never written
        self.overtaken = False  # a pinned index handed out while a write ran: the edge store may be ahead of it

    def _expose(self, cue_rows: CueRows, lifecycle: LifecycleState) -> None:
        self.cue_rows, self.lifecycle = cue_rows, lifecycle
        self.postings, self.keys, self.name_counts = cue_rows.postings, cue_rows.keys, cue_rows.name_counts
        self.suppressed, self.claimed_by, self.supersedes = lifecycle.suppressed, lifecycle.claimed_by, \
            lifecycle.supersedes

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def nbytes(self) -> int:
        """Estimated memory held: the vector matrix (as allocated) and measured amounts per unit and character."""
        return INDEX_BYTES_FIXED + self.dense.nbytes + self._unit_bytes

    @property
    def matrix(self) -> np.ndarray:
        """``(n, dim)`` unit vectors, row ``i`` for ``ids[i]``."""
        return self.dense.rows(len(self.ids))

    # -- pinned indexes ------------------------------------------------------------------
    def pinned(self) -> NamespaceIndex:
        """The index as it is now, for a reader: what a recall reads from its start to its end.

        A pinned index is a :class:`NamespaceIndex` of this one's first ``n`` rows that no
        write changes: the rows, postings and BM25 statistics written later are read
        below ``n`` (:mod:`~langchain_ripplemem.index.pinned_rows`), a unit rewritten later
        reads as it was (:class:`~langchain_ripplemem.index.unit_list.UnitPrefix`), and the
        next write copies the name counts and lifecycle state before it changes them
        (copy on write: writers pay, once a write after a pinned index was taken; readers
        never wait). A delete builds a new index and leaves this one as it is. One pinned index
        serves every reader until the next write (and the caches kept per index with it).
        The caller serialises this with the writes (``UnitIndex``'s lock).

        Example:
            >>> from langchain_ripplemem.schemas import Provenance
            >>> def unit(text):
            ...     return MemoryUnit.create(namespace=("d",), restatement=text, participants=["Maya"],
            ...                              source=Provenance(conversation_id="c", session_id="s", turn_ids=[text]))
            >>> index = NamespaceIndex(("d",))
            >>> index.add([unit("Maya hiked.")], np.ones((1, 2), dtype=np.float32))
            >>> pinned = index.pinned()
            >>> index.add([unit("Maya hiked again.")], np.ones((1, 2), dtype=np.float32))
            >>> len(pinned), len(pinned.postings["participants"]["maya"]), len(pinned.lexical_scores("hiked"))
            (1, 1, 1)
            >>> len(index.pinned()), pinned.pinned() is pinned
            (2, True)
        """
        if self.frozen:
            return self
        pinned = self._pinned
        if pinned is None:
            pinned = self._pinned = _PinnedIndex(self)
            self._shared = True
        return pinned

    def _writing(self) -> None:
        """Before a write: a pinned index keeps what it holds (copy on write), and the next reader gets a new one."""
        if self.frozen:
            raise TypeError("a pinned index is never written: write to the namespace's index (UnitIndex)")
        self._pinned = None
        if self._shared:
            self.cue_rows.name_counts = self.cue_rows.name_counts.copy()
            self._expose(self.cue_rows, self.lifecycle.copy())
            self._shared = False

    def add(self, units: Sequence[MemoryUnit], vectors: np.ndarray, json: Sequence[bytes] | None = None) -> None:
        """Append units that are not in the index yet (``json``: their JSON, when at hand)."""
        self._writing()
        n = len(self.ids)
        self.dense.write(n, n + len(units), vectors)
        for offset, unit in enumerate(units):
            i = n + offset
            keys = self.cue_rows.describe(i, unit)
            # Readers run without a lock: publish the unit before its id and
            # position, so any id a reader sees already has its unit and vector.
            self.units.append(unit, json[offset] if json is not None else None)
            self.max_seq = max(self.max_seq, _seq(unit))
            # the model (while kept, unit_list.PARSED_KEPT) and its JSON, held beside it
            self._unit_bytes += INDEX_BYTES_PER_UNIT + INDEX_BYTES_PER_CHAR * len(unit.restatement) + len(
                self.units.json(i))
            self.ids.append(unit.id)
            self.pos[unit.id] = i
            self.cue_rows.post(i, unit, keys)
            self.lifecycle.add(unit)

    def replace(self, unit: MemoryUnit) -> None:
        """Swap in a unit whose metadata changed (text, cues and vector must be the same)."""
        self._writing()
        i = self.pos[unit.id]
        old = self.units[i]
        if (old.restatement, old.participants, old.locations, old.time) != (
                unit.restatement, unit.participants, unit.locations, unit.time):
            raise ValueError(f"unit {unit.id}: only metadata can change in place")
        self.units[i] = unit
        self.max_seq = max(self.max_seq, _seq(unit))
        self.lifecycle.replace(old, unit)

    def without(self, ids: Iterable[str], derive: Callable[[NamespaceIndex], object] | None = None) -> NamespaceIndex:
        """A new index of the same namespace minus ``ids`` (a delete), built from memory, not Chroma.

        Rows keep their order. The index is new, not edited, because readers may be
        using this one and derived caches (BM25, context) are keyed by index.
        ``derive`` runs on the new index while all its units are parsed, if this index
        had derived values (a writer that never recalls pays nothing for them).
        """
        gone = set(ids)
        rows = [i for i, uid in enumerate(self.ids) if uid not in gone]
        index = NamespaceIndex(self.namespace, self.dense.width)
        if len(self.lexical_rows):  # in use: carry the postings over rather than re-tokenise every unit
            index.lexical_rows = self.lexical_rows.subset(rows, self.units, self.ids)
        with index.units.holding():
            index.add(self.units.take(rows), self.matrix[rows], [self.units.json(i) for i in rows])
            if derive is not None and self.derived:
                derive(index)
        return index

    def unit(self, unit_id: str) -> MemoryUnit | None:
        """The unit with this id, if the namespace has it."""
        i = self.pos.get(unit_id)
        return self.units[i] if i is not None else None

    def vector(self, unit_id: str) -> np.ndarray:
        """The unit's vector."""
        return self.matrix[self.pos[unit_id]]

    # -- the three recall views ----------------------------------------------------------
    def cosines(self, query: np.ndarray) -> np.ndarray:
        """Cosine of every unit (row order) with a unit query vector (read-only; the last few queries' are kept).

        Tri-view recall, assembly and expansion ask for the same query's scores: one
        pass over the matrix serves them all (:meth:`DenseRows.cosines`).
        """
        return self.dense.cosines(query, len(self.ids))

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
        rows, scores = top_k(self.lexical_rows.covering(self.units, self.ids).scores(tokens, len(self.ids)), k)
        return [(self.ids[int(d)], float(s)) for d, s in zip(rows, scores, strict=True)]

    def plain_top_k(self, query: str | np.ndarray, k: int) -> list[tuple[MemoryUnit, float]]:
        """Top ``k`` of one view, suppressed units left out: semantic for a query vector, lexical for a text."""
        hidden = self.suppressed
        fetch = k + len(hidden)
        hits = self.lexical(query, fetch) if isinstance(query, str) else self.semantic(query, fetch)
        return [(self.units[self.pos[uid]], score) for uid, score in hits if uid not in hidden][:k]

    def lexical_scores(self, query: str) -> np.ndarray:
        """BM25 score of every unit (row order) for ``query``; zeros when it has no terms."""
        tokens = lexical_tokens(query)
        if not tokens or not self.ids:
            return np.zeros(len(self.ids), dtype=np.float32)
        n = len(self.ids)
        scores = self.lexical_rows.covering(self.units, self.ids).scores(tokens, n)
        # A writer may append units after the BM25 index was extended: they score 0
        # until the next call rather than falling off the end of the array.
        if len(scores) < n:
            scores = np.concatenate([scores, np.zeros(n - len(scores), dtype=np.float32)])
        return scores[:n]

    def term_rows(self, term: str) -> np.ndarray:
        """Rows whose restatement holds ``term``, a stemmed content word (the BM25 vocabulary)."""
        n = len(self.ids)
        rows = self.lexical_rows.covering(self.units, self.ids).rows_of(term)
        return rows[: int(np.searchsorted(rows, n))] if len(rows) and rows[-1] >= n else rows

    def term_counts(self) -> np.ndarray:
        """Each unit's number of BM25 terms (content words), row order."""
        n = len(self.ids)
        return self.lexical_rows.covering(self.units, self.ids).lengths()[:n]

    def posting_lists(self, cues: HasCues) -> list[list[int]]:
        """The row lists (insertion order) of every participant, location and day of ``cues``."""
        return self.cue_rows.posting_lists(cues)

    def rarity(self, key: str, upto: int | None = None, topic_weight: float = 1.0) -> float:
        """What sharing ``key`` says among the first ``upto`` rows: its rarity, times ``topic_weight`` for a topic word.

        Rarity is :func:`~langchain_ripplemem.text.identifying.rarity`; a key
        counts as a name as :meth:`is_name` says.
        """
        return self.cue_rows.rarity(key, len(self.ids), upto, topic_weight)

    def is_name(self, key: str, upto: int | None = None) -> bool:
        """Whether ``key`` names something here (:meth:`~langchain_ripplemem.index.cue_names.NameCounts.is_name`)."""
        return self.name_counts.is_name(key, upto)

    def known_keys(self, text: str, speakers: Iterable[str] = ()) -> list[str]:
        """The identifying cue keys of ``text`` (a query) that some memory of the namespace has."""
        return self.cue_rows.known_keys(text, speakers)

    def key_overlap(self, keys: Iterable[str], n: int | None = None, topic_weight: float = 1.0) -> np.ndarray:
        """Per row, the rarity-weighted overlap ``1 - prod(1 - rarity(k))`` over the ``keys`` it shares.

        One pass over the keys' posting lists (no per-unit Python work): a row that
        shares one rare key scores almost 1, a row that shares only common keys
        (a speaker's name) almost 0.
        """
        total = len(self.ids)
        return self.cue_rows.key_overlap(keys, total, total if n is None else n, topic_weight)

    def cues(
        self, cues: HasCues, k: int, config: LinkingConfig, query_vector: np.ndarray | None = None,
        rows: Iterable[int] | None = None, *,
        keys: Sequence[str] = (), key_weight: float = 0.0, topic_weight: float = 1.0,
    ) -> list[tuple[str, float]]:
        """Units ranked by structural overlap with ``cues``; semantic similarity breaks ties.

        The score is docs/concepts.md's ``s_str`` (betas and tau from ``config``), plus
        ``key_weight`` times the rarity-weighted overlap with the identifying
        ``keys`` (:meth:`key_overlap`; topic words count ``topic_weight``). It is
        computed from the posting lists with array operations (:meth:`CueRows.scored`):
        no Python work per unit, so the cost follows the postings the cues touch.
        """
        rows_kept, scores_kept = self.cue_rows.scored(cues, k, config, len(self.ids), rows, keys=keys,
                                                      key_weight=key_weight, topic_weight=topic_weight)
        if len(rows_kept) == 0:
            return []
        # Ties by the query's cosines, shared with the semantic view (no copy of the candidates' vectors).
        tie = self.cosines(query_vector)[rows_kept] if query_vector is not None else np.zeros(len(rows_kept))
        order = np.lexsort((rows_kept, -tie, -scores_kept))[:k]
        ids = self.ids  # rows and scores read as Python values at once, not one NumPy scalar at a time
        return list(zip([ids[row] for row in rows_kept[order].tolist()], scores_kept[order].tolist(), strict=True))

    # -- snapshots ------------------------------------------------------------------
    def state(self) -> NamespaceState:
        """What a snapshot saves: the matrix, the units and each part's state (:meth:`from_state` undoes it)."""
        n = len(self.ids)
        parts = {"ids": self.ids, "max_seq": self.max_seq, "unit_bytes": self._unit_bytes,
                 "derived": dict(self.derived), "lexical": self.lexical_rows.state(),
                 "cues": self.cue_rows.state(n), "lifecycle": self.lifecycle.state()}
        return NamespaceState(self.dense.state(n), self.units, parts)

    @classmethod
    def from_state(cls, namespace: Namespace, state: NamespaceState) -> NamespaceIndex:
        """The index :meth:`state` saved, over its matrix as given (a snapshot's, memory-mapped).

        Raises:
            ValueError: the matrix, units and ids are not of one row count.
        """
        parts, n = state.parts, len(state.parts["ids"])
        if len(state.matrix) != n or len(state.units) != n:
            raise ValueError("row counts differ")
        index = cls(namespace, state.matrix.shape[1])
        index.ids, index.units = parts["ids"], state.units
        index.pos = dict(zip(index.ids, range(n), strict=True))
        index.dense = DenseRows.from_state(state.matrix)
        index.lexical_rows = LexicalRows.from_state(parts["lexical"])
        index._expose(CueRows.from_state(parts["cues"]), LifecycleState.from_state(parts["lifecycle"]))
        index.max_seq, index._unit_bytes, index.derived = parts["max_seq"], parts["unit_bytes"], parts["derived"]
        return index


def _seq(unit: MemoryUnit) -> int:
    seq = unit.metadata.get("seq", -1)
    return seq if isinstance(seq, int) else -1


class _PinnedIndex(NamespaceIndex):
    """A pinned index of ``of``'s first rows (:meth:`NamespaceIndex.pinned`).

    Its ids, keys per row and id map are copied from ``of``'s growing ones the first
    time a reader asks: once per pinned index, which serves every recall until the next
    write, and never for the index a write holds for readers who may not come.
    """

    def __init__(self, of: NamespaceIndex) -> None:
        n = len(of.ids)
        super().__init__(of.namespace, of.dense.width)
        self._n, self._of_ids, self._of_keys = n, of.ids, of.cue_rows.keys
        self.units = of.units.prefix(n)  # type: ignore[assignment]
        self.dense, self.lexical_rows = of.dense, of.lexical_rows
        self._expose(of.cue_rows.prefix(n), of.lifecycle)
        self.max_seq, self._unit_bytes, self.derived = of.max_seq, of._unit_bytes, of.derived
        self.snapshot_version, self.frozen = of.snapshot_version, True
        for name in ("ids", "keys", "pos"):  # read through the properties below
            del self.__dict__[name]

    @functools.cached_property
    def ids(self) -> list[str]:  # type: ignore[override]
        return self._of_ids[: self._n]

    @functools.cached_property
    def keys(self) -> list[tuple[str, ...]]:  # type: ignore[override]
        return self._of_keys[: self._n]

    @functools.cached_property
    def pos(self) -> dict[str, int]:  # type: ignore[override]
        return dict(zip(self.ids, range(self._n), strict=True))
