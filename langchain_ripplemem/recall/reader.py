"""What recollection reads: the narrow :class:`MemoryReader` protocol, and :class:`FunctionReader`.

The recall graph's nodes depend on this protocol only, never on the
:class:`~langchain_ripplemem.memory.RippleMem` facade, whose ``reader`` is one
(a :class:`FunctionReader` over the memory's parts). Any object with these members
can be recalled from (a read replica, a test double, a served memory built lazily
off the event loop).

:meth:`MemoryReader.prepare` is the one preparation every recall runs first,
whichever way it was started (``RippleMem.recall``, the compiled graph, a
parent graph using it as a subgraph): catch up with other writers' changes and
link what an interrupted ingest left unlinked.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import networkx as nx
    import numpy as np

    from langchain_ripplemem.config import RecallConfig, WriteConfig
    from langchain_ripplemem.index.namespace_index import NamespaceIndex
    from langchain_ripplemem.schemas import Namespace

__all__ = ["READER_MEMBERS", "FunctionReader", "MemoryReader", "ReaderSettings", "missing_reader_members"]

#: The members of :class:`MemoryReader`.
READER_MEMBERS = ("default_namespace", "recall_config", "write_config", "prepare", "namespace_index",
                  "walkable_edges", "embed_query")


def missing_reader_members(obj: Any) -> list[str]:
    """The :class:`MemoryReader` members ``obj`` lacks, found without calling any (a property may build a memory).

    Example:
        >>> missing_reader_members(object())[:2]
        ['default_namespace', 'recall_config']

    """
    missing = []
    for name in READER_MEMBERS:
        try:
            inspect.getattr_static(obj, name)
        except AttributeError:
            missing.append(name)
    return missing


@runtime_checkable
class MemoryReader(Protocol):
    """The read side of a memory, as recollection sees it."""

    @property
    def default_namespace(self) -> Namespace:
        """The namespace a recall uses when its context names none."""
        ...

    @property
    def recall_config(self) -> RecallConfig:
        """The recall settings a recall uses when its context gives none."""
        ...

    @property
    def write_config(self) -> WriteConfig:
        """The write settings the memory's units and edges were made with (structural betas)."""
        ...

    def prepare(self, namespace: Namespace) -> None:
        """Make ``namespace``'s index and edges current (catch-up, crash-recovery linking)."""
        ...

    def namespace_index(self, namespace: Namespace) -> NamespaceIndex:
        """The namespace's search structures (vectors, BM25, cue postings, units) as they are now.

        A pinned index that later writes leave as it is
        (:meth:`~langchain_ripplemem.index.namespace_index.NamespaceIndex.pinned`): a
        recall pins the one it gets first and reads it to its end.
        """
        ...

    def walkable_edges(self, namespace: Namespace) -> nx.Graph:
        """The graph expansion walks: ``namespace``'s typed graph, possibly read only where touched.

        Membership, ``adj[node]`` and ``degree(node)`` answer as the whole graph would.
        """
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """The query's unit vector under the memory's embeddings."""
        ...


class ReaderSettings(Protocol):
    """Where a :class:`FunctionReader` reads its settings, each time it is asked (a memory's may change)."""

    default_namespace: Namespace
    recall_config: RecallConfig
    write_config: WriteConfig


class FunctionReader:
    """A :class:`MemoryReader` over a settings holder and the functions that read the memory.

    Args:
        settings: has ``default_namespace``, ``recall_config`` and ``write_config`` (read on each use).
        prepare, namespace_index, walkable_edges, embed_query: the protocol's methods.
    """

    def __init__(self, settings: ReaderSettings, *, prepare: Callable[[Namespace], None],
                 namespace_index: Callable[[Namespace], NamespaceIndex],
                 walkable_edges: Callable[[Namespace], nx.Graph], embed_query: Callable[[str], np.ndarray]) -> None:
        self._settings = settings
        self.prepare, self.namespace_index = prepare, namespace_index
        self.walkable_edges, self.embed_query = walkable_edges, embed_query

    @property
    def default_namespace(self) -> Namespace:
        """The settings holder's default namespace."""
        return self._settings.default_namespace

    @property
    def recall_config(self) -> RecallConfig:
        """The settings holder's recall settings."""
        return self._settings.recall_config

    @property
    def write_config(self) -> WriteConfig:
        """The settings holder's write settings."""
        return self._settings.write_config
