"""The unit index: per-namespace indexes over a unit backend, kept in step with every write.

Writes go to the :class:`~langchain_ripplemem.storage.protocols.UnitBackend` first
(Chroma by default), then to the namespace's cached
:class:`~langchain_ripplemem.index.namespace_index.NamespaceIndex`; reads are served by the
indexes, loaded from the backend (page by page) on first use and kept in a
bounded LRU cache (:mod:`langchain_ripplemem.cache_bounds`). The index also
records what each write changed (:meth:`UnitIndex.take_written`), for the
namespace log that keeps other processes' caches in step.

Example:
    >>> import numpy as np
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance
    >>> from langchain_ripplemem.storage.chroma import ChromaUnitBackend
    >>> index = UnitIndex(ChromaUnitBackend())
    >>> unit = MemoryUnit.create(namespace=("maya",), restatement="Maya: hi",
    ...                          source=Provenance(conversation_id="c", session_id="s"))
    >>> index.add(("maya",), [unit], np.ones((1, 4), dtype=np.float32))
    >>> [u.id for u in index.namespace_index(("maya",)).units] == [unit.id]
    True
    >>> index.take_written(("maya",))[0] == {unit.id}
    True

"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

from langchain_ripplemem._runtime import heap
from langchain_ripplemem._runtime.held_during_writes import HeldDuringWrites
from langchain_ripplemem.cache_bounds import CacheBounds, LRUCache
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.schemas import MemoryUnit, Namespace, namespace_key
from langchain_ripplemem.storage.protocols import UnitBackend

if TYPE_CHECKING:
    from langchain_ripplemem.index.snapshot import IndexSnapshots

__all__ = ["UnitIndex"]

# What a backend's reply holds per unit while an index loads, beyond the index itself (measured: a 10k-unit
# load of 384-d vectors left ~96 MB of freed pages): loads of about 1,700 units or more trim at once.
_REPLY_BYTES_PER_UNIT = 10_000


class UnitIndex:
    """Per-namespace indexes of the units a :class:`~langchain_ripplemem.storage.protocols.UnitBackend` holds.

    Writes go to the backend first, then to the cached index; reads are served by
    the indexes, loaded from the backend (page by page) on first use.

    Args:
        backend: where units and vectors are stored.
        bounds: how many namespace indexes, and bytes, stay cached.
        snapshots: saved indexes to start from instead of reading every unit
            (:mod:`~langchain_ripplemem.index.snapshot`); an index leaving the cache is saved.
        derive: run on an index loaded (or rebuilt after a delete) whole while all its units
            are still parsed: what recall derives from every unit
            (:func:`~langchain_ripplemem.recall.derived.derive_all`).
    """

    def __init__(self, backend: UnitBackend, bounds: CacheBounds | None = None,
                 snapshots: IndexSnapshots | None = None,
                 derive: Callable[[NamespaceIndex], object] | None = None) -> None:
        self.backend = backend
        self.snapshots = snapshots
        self.derive = derive
        bounds = bounds or CacheBounds()
        # The least recently used indexes leave past the bounds; their next use reloads them.
        self._indexes: LRUCache[NamespaceIndex] = LRUCache(
            bounds.max_namespaces, bounds.index_bytes, lambda index: index.nbytes,
            on_evict=None if snapshots is None else lambda _, index: snapshots.save(index))
        self._lock = threading.RLock()
        # Per namespace since the last take_written(): (ids written, ids deleted); None = a drop.
        self._written: dict[str, tuple[set[str], set[str]] | None] = {}
        self._held: HeldDuringWrites[NamespaceIndex] = HeldDuringWrites()  # namespaces being written: their index

    def namespace_index(self, namespace: Namespace) -> NamespaceIndex:
        """The namespace's index, loaded from the backend on first use."""
        key = namespace_key(namespace)
        with self._lock:
            index = self._indexes.get(key)
            if index is None:
                index = self._restored(namespace)
                if index is None:
                    index = NamespaceIndex(namespace)
                    self._load(index, None)
                self._indexes.put(key, index)
            return index

    def pinned(self, namespace: Namespace) -> NamespaceIndex:
        """The namespace's index as the last whole write left it, which no later write changes.

        While a write of the namespace is under way (:meth:`writing`), the index as it was
        before it: a reader never sees a write half done (units without their edges, a
        suppression before supersession is refreshed), and never waits for one
        (:meth:`NamespaceIndex.pinned`).
        """
        key = namespace_key(namespace)
        # Asked before the lock, which a write holds while it stores its units: a reader never waits for it.
        held = self._held.get(key)
        if held is not None:
            return held
        with self._lock:
            held = self._held.get(key)
            return held if held is not None else self.namespace_index(namespace).pinned()

    def held(self, namespace: Namespace) -> bool:
        """Whether a write of ``namespace`` runs (:meth:`writing`), so readers get the index from before it."""
        return self._held.get(namespace_key(namespace)) is not None

    @contextmanager
    def writing(self, namespace: Namespace) -> Iterator[None]:
        """Hold the namespace's pinned index as it is for the readers that come while a write runs.

        Writes of one namespace take turns (``NamespaceSync.writing``); nested blocks
        hold the index the outermost took.
        """
        def before() -> NamespaceIndex:
            pinned = self.namespace_index(namespace).pinned()
            pinned.overtaken = True  # the store may hold this write's edges before it ends
            return pinned

        with self._held.holding(namespace_key(namespace), self._lock, before):
            yield

    def _restored(self, namespace: Namespace) -> NamespaceIndex | None:
        """The namespace's snapshot, caught up with the changes logged since it was saved."""
        got = self.snapshots.restore(namespace) if self.snapshots is not None else None
        if got is None:
            return None
        index, changes = got
        if changes is not None:
            if any(uid in index.pos for uid in changes.removed):
                index, version = index.without(changes.removed), index.snapshot_version
                index.snapshot_version = version
            if changes.units:
                self._load(index, sorted(changes.units))
        return index

    def save_snapshots(self) -> int:
        """Save every cached index that changed since its snapshot; how many were saved."""
        with self._lock:
            indexes = [v for key in self._indexes.keys() if (v := self._indexes.peek(key)) is not None]
            return sum(self.snapshots.save(v) for v in indexes) if self.snapshots is not None else 0

    def cached(self, namespace: Namespace) -> NamespaceIndex | None:
        """The namespace's index if it is loaded (no backend read)."""
        return self._indexes.peek(namespace_key(namespace))

    def catch_up(self, namespace: Namespace, ids: set[str], removed: Iterable[str] = ()) -> None:
        """Bring a cached index up to date with units another writer deleted, added or rewrote.

        Deleted ids leave first; then ``ids`` are fetched as stored now: new ones are
        appended in write order, known ones get their new metadata. A namespace
        without a cached index is left alone: its first use loads it whole.
        """
        key = namespace_key(namespace)
        with self._lock:
            index = self._indexes.peek(key)
            if index is None:
                return
            if any(uid in index.pos for uid in removed):
                index = index.without(removed)
                self._indexes.put(key, index)
            if ids:
                self._load(index, sorted(ids))

    def _load(self, index: NamespaceIndex, ids: list[str] | None) -> None:
        # The backend's reply (Python objects per unit and vector) is freed once _read returns:
        # a large load's pages go back to the operating system.
        heap.freed(_REPLY_BYTES_PER_UNIT * self._read(index, ids))

    def _read(self, index: NamespaceIndex, ids: list[str] | None) -> int:
        """Add what the backend holds (only ``ids`` when given) to ``index``; how many units it read."""
        pages = list(self.backend.load(index.namespace, ids))
        if not pages:
            return 0
        units = [u for page, _ in pages for u in page]
        vectors = np.concatenate([v for _, v in pages])
        for unit in units:
            if unit.id in index.pos:
                index.replace(unit)
        # Backends return no particular order: restore insertion order.
        order = sorted((i for i, u in enumerate(units) if u.id not in index.pos),
                       key=lambda i: (units[i].metadata.get("seq", 0), units[i].created_at, units[i].id))
        order = list({units[i].id: i for i in order}.values())  # pages may overlap
        if order:
            with index.units.holding():  # the models are at hand: derive from them before they are let go
                index.add([units[i] for i in order], vectors[order])
                if ids is None and self.derive is not None:
                    self.derive(index)
        return len(units)

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
        """Write units and their vectors to the backend, then to the index."""
        with self._lock:
            index = self.namespace_index(namespace)  # loaded first: loaded after the write, it would hold them twice
            self.backend.upsert(namespace, units, vectors)
            index.add(units, vectors)
            self._note(namespace, (u.id for u in units))

    def replace(self, namespace: Namespace, units: Sequence[MemoryUnit]) -> None:
        """Rewrite stored units' metadata in the backend and the index (ids, text and vectors stay)."""
        if not units:
            return
        with self._lock:
            index = self.namespace_index(namespace)
            missing = [u.id for u in units if u.id not in index.pos]
            if missing:
                raise ValueError(f"units {missing} are not in namespace {namespace}")
            self.backend.update(namespace, units)
            for unit in units:
                index.replace(unit)
            self._note(namespace, (u.id for u in units))

    def invalidate(self, namespace: Namespace) -> None:
        """Forget the cached index of a namespace; the next use reloads it."""
        with self._lock:
            self._indexes.pop(namespace_key(namespace))

    def get(self, namespace: Namespace, ids: Iterable[str]) -> list[MemoryUnit]:
        """Units by id, in the order asked, skipping unknown ids."""
        index = self.namespace_index(namespace)
        return [u for u in (index.unit(i) for i in ids) if u is not None]

    def delete(self, namespace: Namespace, ids: Iterable[str]) -> list[str]:
        """Remove units of this namespace only; returns the ids that existed."""
        key = namespace_key(namespace)
        with self._lock:
            index = self.namespace_index(namespace)
            present = [i for i in dict.fromkeys(ids) if i in index.pos]
            if present:
                self.backend.delete(namespace, present)
                self._indexes.put(key, index.without(present, self.derive))
                self._note(namespace, (), present)
        return present

    def drop_namespace(self, namespace: Namespace) -> int:
        """Remove every unit of exactly this namespace; returns how many."""
        with self._lock:
            n = len(self.namespace_index(namespace))
            self.backend.drop(namespace)
            self._indexes.pop(namespace_key(namespace))
            if self.snapshots is not None:
                self.snapshots.remove(namespace)
            self._note(namespace, None)
        return n

    def namespaces(self) -> list[Namespace]:
        """Every namespace with at least one unit."""
        return self.backend.namespaces()
