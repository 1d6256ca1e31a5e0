"""What recollection reads: the narrow :class:`MemoryReader` protocol.

The recall graph's nodes depend on this protocol only, never on the
:class:`~langchain_ripplemem.memory.RippleMemory` facade, which implements it.
Any object with these members can be recalled from (a read replica, a test
double, a served memory built lazily off the event loop).

:meth:`MemoryReader.prepare` is the one preparation every recall runs first,
whichever way it was started (``RippleMemory.recall``, the compiled graph, a
parent graph using it as a subgraph): catch up with other writers' changes and
link what an interrupted ingest left unlinked.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import networkx as nx
    import numpy as np

    from langchain_ripplemem.config import RecallConfig, WriteConfig
    from langchain_ripplemem.index.namespace_index import NamespaceIndex
    from langchain_ripplemem.schemas import Namespace

__all__ = ["MemoryReader"]


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
        """Make ``namespace``'s view and graph current (catch-up, crash-recovery linking)."""
        ...

    def namespace_index(self, namespace: Namespace) -> NamespaceIndex:
        """The namespace's search structures (vectors, BM25, cue postings, units) as they are now.

        A read view that later writes leave as it is
        (:meth:`~langchain_ripplemem.index.namespace_index.NamespaceIndex.read_view`): a
        recall pins the one it gets first and reads it to its end.
        """
        ...

    def graph(self, namespace: Namespace) -> nx.Graph:
        """The namespace's typed memory graph (``data["types"]`` per edge)."""
        ...

    def walk_graph(self, namespace: Namespace) -> nx.Graph:
        """The graph expansion walks: ``namespace``'s typed graph, possibly read only where touched.

        Membership, ``adj[node]`` and ``degree(node)`` answer as the whole graph would.
        """
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """The query's unit vector under the memory's embeddings."""
        ...
