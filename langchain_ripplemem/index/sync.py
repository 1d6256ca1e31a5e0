"""Keep one memory object's caches in step with every writer of a namespace.

Each memory object caches, per namespace, an index of the units
(:class:`~langchain_ripplemem.index.unit_index.UnitIndex`) and the typed edges
(:class:`~langchain_ripplemem.edges.edge_cache.EdgeCache`). Other memory
objects and other processes write too, so every call compares the namespace's
version in the :class:`~langchain_ripplemem.storage.protocols.NamespaceLog` with the
version this object last saw, and applies what the versions in between
changed: deleted units leave, new or rewritten ones are fetched by id, new
edges are read. A drop, or a gap longer than the log keeps, reloads the
namespace whole.

Writes take the namespace's writer lock (writers of one namespace take turns,
across processes), catch up, write, then log what they changed
(:meth:`NamespaceSync.written`), so this object's own caches stay valid.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from langchain_ripplemem.edges.edge_cache import EdgeCache
from langchain_ripplemem.errors import MemoryClosedError
from langchain_ripplemem.index.unit_index import UnitIndex
from langchain_ripplemem.schemas import Namespace
from langchain_ripplemem.storage.protocols import NamespaceLog

__all__ = ["NamespaceSync"]


class NamespaceSync:
    """Versions seen per namespace, catch-up, and the write protocol of one memory object.

    Args:
        log: the namespace log every writer of the store shares.
        index: this object's namespace indexes.
        edge_cache: this object's edge cache.
    """

    def __init__(self, log: NamespaceLog, index: UnitIndex, edge_cache: EdgeCache) -> None:
        self.log, self.index, self.edge_cache = log, index, edge_cache
        self.lock = threading.RLock()  # serialises this object's writers and catch-ups
        self.versions: dict[Namespace, int] = {}  # last namespace version this object has seen
        # Namespaces whose crash recovery ran since they last changed under this object.
        self.resumed: set[Namespace] = set()
        self.closed = False  # set by RippleMem.close(): every later read or write says so

    def mark_closed(self) -> bool:
        """Refuse every later read and write; ``False`` when this was closed already."""
        was_open, self.closed = not self.closed, True
        return was_open

    def check_open(self) -> None:
        """Raise :class:`MemoryClosedError` once the memory was closed."""
        if self.closed:
            raise MemoryClosedError("this RippleMem is closed (close() or the end of its with block): "
                                    "open a new RippleMem on the same persist_directory")

    def catch_up(self, ns: Namespace) -> None:
        """Apply what other writers changed in ``ns`` since this object last looked."""
        self.check_open()
        current = self.log.version(ns)
        if self.versions.get(ns) == current or self.index.held(ns):
            # Nothing new, or this object's write of ns runs (it caught up as it began; readers read
            # the index from before it): no lock, which that write holds to its end. Reads never wait.
            return
        with self.lock:
            seen = self.versions.get(ns)
            if seen is not None and seen != current:
                changed = self.log.changes(ns, seen, current) if seen < current else None
                if changed is None:
                    self.index.invalidate(ns)
                    self.edge_cache.invalidate(ns)
                else:
                    self.index.catch_up(ns, changed.units, changed.removed)
                    self.edge_cache.catch_up(ns, changed.edges, changed.removed)
                self.resumed.discard(ns)
            self.versions[ns] = current

    @contextmanager
    def writing(self, ns: Namespace) -> Iterator[None]:
        """Serialise a write of ``ns`` with this object's threads and every other writer.

        The namespace's writer lock comes first, so waiting for another process blocks
        no lock of this object; then the caches catch up with every earlier write.
        Until the block ends, readers get the namespace's pinned index and walkable edges as
        they were before (``UnitIndex.writing``, ``EdgeCache.writing``).
        """
        self.check_open()
        with self.log.writer(ns), self.lock:
            self.catch_up(ns)
            # Readers meanwhile read the namespace as it was before: the walkable edges first, as recall takes them.
            with self.edge_cache.writing(ns), self.index.writing(ns):
                yield

    def written(self, ns: Namespace, edges: Iterable[str] = ()) -> None:
        """Log this object's write (units from the index's record, and ids that gained edges)."""
        units, removed = self.index.take_written(ns)
        self.versions[ns] = self.log.record(ns, units, edges, removed)
