"""The typed edges of each namespace, held as a NetworkX graph and kept in step with an edge backend.

The :class:`~langchain_ripplemem.storage.protocols.EdgeBackend` is the source of
truth; a ``networkx.Graph`` per namespace is built from it on first use and
then updated by every write of this process and every change another process
logged, so expansion never touches storage. A pair of units may carry both
edge types: the NetworkX edge holds a ``{"semantic": w, "structural": w}``
mapping under ``"types"``.

Example:
    >>> from langchain_ripplemem.schemas import Edge
    >>> from langchain_ripplemem.storage.sqlite import open_sqlite_edges
    >>> backend, _ = open_sqlite_edges(None)
    >>> cache = EdgeCache(backend)
    >>> edge = Edge(src="a", dst="b", type="semantic", weight=0.9)
    >>> backend.add(("u1",), [edge]); cache.add(("u1",), [edge])
    >>> dict(cache.networkx(("u1",)).adj["b"])
    {'a': {'types': {'semantic': 0.9}}}
    >>> cache.count(("u1",))
    {'semantic': 1, 'structural': 0}

"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import networkx as nx

from langchain_ripplemem._runtime.held_during_writes import HeldDuringWrites
from langchain_ripplemem.cache_bounds import (
    EDGES_BYTES_FIXED,
    EDGES_BYTES_PER_EDGE,
    EDGES_BYTES_PER_NODE,
    WALK_BYTES_PER_EDGE,
    WALK_BYTES_PER_NODE,
    CacheBounds,
    LRUCache,
)
from langchain_ripplemem.edges.adjacency import adjacency_of, walkable_edges
from langchain_ripplemem.schemas import Edge, Namespace, namespace_key
from langchain_ripplemem.storage.protocols import EdgeBackend, EdgeRow

__all__ = ["EdgeCache"]


# graph.graph[_EDGES]: the graph's edge count, kept as edges arrive (NetworkX counts by walking every node).
_EDGES = "ripplemem_edges"


def _graph_bytes(graph: nx.Graph) -> int:
    """Estimated memory of a NetworkX graph, from its node and edge counts (asked on every use: O(1))."""
    return (EDGES_BYTES_FIXED + EDGES_BYTES_PER_NODE * graph.number_of_nodes()
            + EDGES_BYTES_PER_EDGE * graph.graph.get(_EDGES, 0))


def _put(graph: nx.Graph, edge: Edge) -> None:
    if graph.has_edge(edge.src, edge.dst):
        graph.edges[edge.src, edge.dst]["types"][edge.type] = edge.weight
    else:
        graph.add_edge(edge.src, edge.dst, types={edge.type: edge.weight})
        graph.graph[_EDGES] = graph.graph.get(_EDGES, 0) + 1


def _built(rows: Iterable[EdgeRow]) -> nx.Graph:
    """The NetworkX graph of ``(src, dst, type, weight)`` rows, built in one pass (a cold open loads every edge).

    Rows, not :class:`Edge` models (a model per edge cost as much as the rest of
    the load); each pair's type map is gathered first and NetworkX gets one
    ``add_edges_from``: the graph :func:`_put` builds edge by edge, in half the time.
    """
    pairs: dict[tuple[str, str], dict[str, float]] = {}
    for src, dst, etype, weight in rows:
        pairs.setdefault((src, dst) if src < dst else (dst, src), {})[etype] = weight
    graph = nx.Graph()
    graph.add_edges_from((a, b, {"types": types}) for (a, b), types in pairs.items())
    graph.graph[_EDGES] = len(pairs)
    return graph


def _walk_bytes(graph: nx.Graph) -> int:
    """Estimated memory of :func:`walkable_edges`' graph: the nodes read or asked about, the neighbour entries read."""
    adjacency = adjacency_of(graph)
    nodes = len(adjacency) + len(adjacency.has_edges)
    return EDGES_BYTES_FIXED + WALK_BYTES_PER_NODE * nodes + WALK_BYTES_PER_EDGE * adjacency.edges_read


def _remove(graph: nx.Graph, unit_ids: Iterable[str]) -> None:
    graph.remove_nodes_from(list(unit_ids))
    graph.graph[_EDGES] = graph.number_of_edges()  # deletes are rare: count again


class EdgeCache:
    """One NetworkX graph of edges per namespace, loaded from ``backend`` lazily; and the edges recall walks.

    :meth:`networkx` holds every edge (for edge listings and
    counts); :meth:`walkable` is read node by node where a walk goes
    (:mod:`~langchain_ripplemem.edges.adjacency`), so a cold open does
    not read every edge. Both follow every write and catch-up.

    Args:
        backend: where the edges are stored.
    """

    def __init__(self, backend: EdgeBackend, bounds: CacheBounds | None = None) -> None:
        self.backend = backend
        bounds = bounds or CacheBounds()
        # The least recently used namespaces' edges leave past the bounds; their next use reloads them.
        self._graphs: LRUCache[nx.Graph] = LRUCache(bounds.max_namespaces, bounds.edge_bytes, _graph_bytes)
        self._walks: LRUCache[nx.Graph] = LRUCache(bounds.max_namespaces, bounds.edge_bytes, _walk_bytes)
        self._lock = threading.RLock()
        # Per namespace, the walkable edges handed out that are still held (by recalls, or the cache).
        self._handed: dict[str, list[weakref.ref[nx.Graph]]] = {}
        self._held: HeldDuringWrites[nx.Graph] = HeldDuringWrites()  # namespaces being written: their walkable edges

    def networkx(self, namespace: Namespace) -> nx.Graph:
        """The namespace's edges as one NetworkX graph (loaded from the backend on first use)."""
        key = namespace_key(namespace)
        with self._lock:
            graph = self._graphs.get(key)
            if graph is None:
                graph = _built(self.backend.edge_rows(namespace))
                self._graphs.put(key, graph)
            return graph

    def walkable(self, namespace: Namespace) -> nx.Graph:
        """The namespace's edges for walks: adjacency read node by node from the backend, and kept.

        While a write of the namespace runs (:meth:`writing`), the edges from before it.
        """
        key = namespace_key(namespace)
        held = self._held.get(key)  # asked before the lock: a reader never waits for a write
        if held is not None:
            return held
        with self._lock:
            held = self._held.get(key)
            if held is not None:
                return held
            graph = self._walks.get(key)
            if graph is None:
                graph = walkable_edges(self.backend, namespace)
                self._walks.put(key, graph)
                handed = [ref for ref in self._handed.get(key, ()) if ref() is not None]
                self._handed[key] = [*handed, weakref.ref(graph)]
            return graph

    @contextmanager
    def writing(self, namespace: Namespace) -> Iterator[None]:
        """Hand readers that come while a write runs the walkable edges from before it (``UnitIndex.writing``'s index).

        A delete then hands that graph the edges it removes (:meth:`removing`), so it
        still reads the edges of the units the index from before the write holds.
        """
        with self._held.holding(namespace_key(namespace), self._lock, lambda: self.walkable(namespace)):
            yield

    def removing(self, namespace: Namespace, unit_ids: Iterable[str]) -> None:
        """Before the edge store deletes the edges of ``unit_ids``: the walkable edges still held keep reading them.

        A recall walks the graph it started with (``recall/node_context.py``), whose pinned index
        still holds those units; the graph a later recall gets reads the store as it is.
        """
        key, unit_ids = namespace_key(namespace), list(unit_ids)
        with self._lock:
            held = [graph for ref in self._handed.get(key, ()) if (graph := ref()) is not None]
            self._handed[key] = [weakref.ref(graph) for graph in held]
        if held and unit_ids:
            rows = list(self.backend.edge_rows(namespace, unit_ids))
            for graph in held:
                adjacency_of(graph).keep(rows)

    def _forget(self, key: str, nodes: Iterable[str]) -> None:
        """The walkable edges read ``nodes`` again on their next touch (their edges changed)."""
        graph = self._walks.peek(key)
        if graph is not None:
            adjacency_of(graph).forget(nodes)

    def cached(self, namespace: Namespace) -> bool:
        """Whether the namespace's edges are loaded whole."""
        return self._graphs.peek(namespace_key(namespace)) is not None

    def add(self, namespace: Namespace, edges: Iterable[Edge]) -> None:
        """Mirror edges the backend just stored (into the whole NetworkX graph only when it is loaded)."""
        key = namespace_key(namespace)
        edges = list(edges)
        with self._lock:
            graph = self._graphs.peek(key)
            for edge in edges if graph is not None else ():
                _put(graph, edge)
            self._forget(key, {uid for edge in edges for uid in (edge.src, edge.dst)})

    def remove(self, namespace: Namespace, unit_ids: Iterable[str]) -> None:
        """Drop units (and their edges) from the loaded edges."""
        with self._lock:
            self._walks.pop(namespace_key(namespace))  # their neighbours' lists changed too
            graph = self._graphs.peek(namespace_key(namespace))
            if graph is not None:
                _remove(graph, unit_ids)

    def catch_up(self, namespace: Namespace, unit_ids: set[str], removed: Iterable[str] = ()) -> None:
        """Drop ``removed`` from the loaded edges, then add the stored edges touching ``unit_ids``.

        A namespace whose edges are not loaded is left alone: its first use loads it whole.
        """
        key = namespace_key(namespace)
        removed = list(removed)
        with self._lock:
            if removed:
                self._walks.pop(key)
            graph, walk = self._graphs.peek(key), self._walks.peek(key)
            if (graph is None and walk is None) or not unit_ids:
                if graph is not None and removed:
                    _remove(graph, removed)
                return
            edges = self.backend.edges(namespace, unit_ids)
            if walk is not None:
                adjacency_of(walk).forget({uid for edge in edges for uid in (edge.src, edge.dst)})
            if graph is not None:
                if removed:
                    _remove(graph, removed)
                for edge in edges:
                    _put(graph, edge)

    def invalidate(self, namespace: Namespace) -> None:
        """Forget a namespace's edges; the next use reloads them."""
        with self._lock:
            self._graphs.pop(namespace_key(namespace))
            self._walks.pop(namespace_key(namespace))

    def edges(self, namespace: Namespace) -> list[Edge]:
        """Every edge of a namespace, sorted, one per type (``src < dst``)."""
        out = []
        for a, b, data in self.networkx(namespace).edges(data=True):
            src, dst = (a, b) if a < b else (b, a)
            out += [Edge(src=src, dst=dst, type=etype, weight=w) for etype, w in sorted(data["types"].items())]
        return sorted(out, key=lambda e: (e.src, e.dst, e.type))

    def count(self, namespace: Namespace) -> dict[str, int]:
        """Edge counts by type."""
        counts = {"semantic": 0, "structural": 0}
        for _, _, data in self.networkx(namespace).edges(data=True):
            for etype in data["types"]:
                counts[etype] += 1
        return counts
