"""The storage seams: what RippleMemory needs from a unit store, an edge store and a namespace log.

Three protocols, each small enough that a new backend is one module plus a
constructor argument of :class:`~langchain_ripplemem.memory.RippleMemory`:

* :class:`UnitBackend`: memory units and their vectors, namespaced, read in
  pages (Chroma, :mod:`langchain_ripplemem.storage.chroma`).
* :class:`EdgeBackend`: the typed edges and the "linked" marks of crash
  recovery (SQLite, :mod:`langchain_ripplemem.storage.sqlite`).
* :class:`NamespaceLog`: a version per namespace, what each version changed
  (so caches in other processes catch up instead of reloading), and the
  writer coordination that makes writers of one namespace take turns (SQLite
  plus file locks by default).

A backend whose files can keep deleted records' bytes (a write-ahead log, free
pages) also implements :class:`Purging`: after a delete, its ``purge()`` rewrites
them, or says what it cannot reach (``docs/lifecycle.md``, "Deletes").

Every method takes the namespace it works in; an implementation must never
return or touch another namespace's records.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from langchain_ripplemem.schemas import Edge, MemoryUnit, Namespace

__all__ = ["Changes", "EdgeBackend", "EdgeRow", "GraphStore", "NamespaceLog", "Purged", "Purging", "StoredRecord",
           "UnitBackend"]

# One stored edge as ``(src, dst, type, weight)``: what :meth:`EdgeBackend.edge_rows` returns.
EdgeRow = tuple[str, str, str, float]


class StoredRecord(NamedTuple):
    """One record of a unit store as stored, for integrity checks (:meth:`UnitBackend.records`)."""

    id: str
    namespace_key: str | None  # None: the record has no namespace
    unit: MemoryUnit | None  # None: the stored unit does not validate
    error: str | None = None  # why ``unit`` is None


class Changes(NamedTuple):
    """What a run of versions changed in a namespace (see :meth:`NamespaceLog.changes`)."""

    units: set[str]  # ids whose stored record was added or rewritten
    edges: set[str]  # ids that gained edges
    removed: set[str]  # ids deleted, with every edge touching them


class Purged(NamedTuple):
    """What a :meth:`Purging.purge` did: the files it rewrote, and what it could not reach."""

    files: tuple[str, ...] = ()  # files rewritten so that no deleted record's bytes remain in them
    kept: tuple[str, ...] = ()  # what may still hold them, each with how an operator purges it


@runtime_checkable
class Purging(Protocol):
    """A backend that can rewrite its files so that records it deleted leave no bytes behind."""

    def purge(self) -> Purged:
        """Rewrite what still holds deleted records (logs, free pages); say what is out of reach."""
        ...


@runtime_checkable
class UnitBackend(Protocol):
    """Durable memory units and their vectors, namespaced; every read is paged."""

    def load(self, namespace: Namespace, ids: Sequence[str] | None = None) -> Iterator[
            tuple[list[MemoryUnit], np.ndarray]]:
        """Pages of ``(units, vectors)`` of the namespace (only ``ids`` when given), in no particular order."""
        ...

    def upsert(self, namespace: Namespace, units: Sequence[MemoryUnit], vectors: np.ndarray) -> None:
        """Write units and their vectors (an existing id is overwritten)."""
        ...

    def update(self, namespace: Namespace, units: Sequence[MemoryUnit]) -> None:
        """Rewrite stored units whose metadata changed (ids, text and vectors stay)."""
        ...

    def delete(self, namespace: Namespace, ids: Sequence[str]) -> None:
        """Remove these units of this namespace (unknown ids are ignored)."""
        ...

    def drop(self, namespace: Namespace) -> None:
        """Remove every unit of exactly this namespace."""
        ...

    def namespaces(self) -> list[Namespace]:
        """Every namespace that holds at least one unit."""
        ...

    def records(self) -> Iterator[StoredRecord]:
        """Every record of the store, readable or not, page by page (integrity checks)."""
        ...

    def close(self) -> None:
        """Release what the backend holds (connections, locks)."""
        ...


@runtime_checkable
class EdgeBackend(Protocol):
    """Durable typed edges per namespace, and the "linked" mark of each unit whose linking finished."""

    def edges(self, namespace: Namespace, unit_ids: Iterable[str] | None = None) -> list[Edge]:
        """Every edge of the namespace, or only those touching ``unit_ids``."""
        ...

    def edge_rows(self, namespace: Namespace, unit_ids: Iterable[str] | None = None) -> list[EdgeRow]:
        """:meth:`edges` as ``(src, dst, type, weight)`` tuples: what a cold open reads, without a model per edge."""
        ...

    def with_edges(self, namespace: Namespace, unit_ids: Iterable[str]) -> set[str]:
        """Those of ``unit_ids`` that have at least one edge (asked of an index, no edge row read)."""
        ...

    def add(self, namespace: Namespace, edges: Iterable[Edge], linked: Iterable[str] = ()) -> None:
        """Insert edges and mark units linked, in one transaction (a crash leaves neither)."""
        ...

    def remove_units(self, namespace: Namespace, unit_ids: Iterable[str]) -> int:
        """Delete every edge touching these units, and their linked marks; returns edges removed."""
        ...

    def drop(self, namespace: Namespace) -> int | None:
        """Remove every edge and mark of exactly this namespace; returns edges removed (``None``: not counted)."""
        ...

    def linked_ids(self, namespace: Namespace) -> set[str]:
        """Units whose linking completed."""
        ...

    def namespaces(self) -> list[Namespace]:
        """Namespaces that have any edge or linked mark."""
        ...

    def close(self) -> None:
        """Release what the backend holds."""
        ...


@runtime_checkable
class NamespaceLog(Protocol):
    """Versions per namespace, the changes each version made, and writer coordination."""

    def version(self, namespace: Namespace) -> int:
        """How many writes the namespace has seen (0 for none)."""
        ...

    def record(self, namespace: Namespace, units: Iterable[str] | None, edges: Iterable[str] = (),
               removed: Iterable[str] = ()) -> int:
        """Log a write and return the new version.

        ``units``: ids added or rewritten (``None``: anything, e.g. a drop; caches reload);
        ``edges``: ids that gained edges; ``removed``: ids deleted with their edges.
        """
        ...

    def changes(self, namespace: Namespace, after: int, upto: int) -> Changes | None:
        """What versions ``after+1 .. upto`` changed, merged; ``None`` when a cache must reload."""
        ...

    def writer(self, namespace: Namespace) -> AbstractContextManager[None]:
        """Hold the namespace's writer lock: writers of one namespace take turns, across processes."""
        ...

    def close(self) -> None:
        """Release what the log holds."""
        ...


@runtime_checkable
class GraphStore(EdgeBackend, NamespaceLog, Protocol):
    """One backend holding both a memory's edges and its namespace log (``RippleMemory(graph_store=...)``).

    :class:`~langchain_ripplemem.storage.postgres.PostgresGraph` is one; the default, SQLite,
    keeps them in two objects over one file.
    """
