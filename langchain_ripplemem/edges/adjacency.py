"""The graph recall walks: a NetworkX graph whose adjacency is read from the edge store node by node.

Expansion walks a few hundred nodes around its anchors; building the whole
namespace's edges first (every edge row into NetworkX) made a cold open of 100k
memories spend seconds before its first recall. :func:`walkable_edges` returns an
``nx.Graph`` whose nodes and adjacency are filled on first touch: ``uid in
graph``, ``graph.adj[uid]``, ``graph.degree(uid)`` and
``nx.restricted_view(graph, ...)`` read one node's edge rows (the edge store
has indexes on both ends of an edge) and keep them. Walks
read many nodes in one query (:meth:`LazyAdjacency.read`): a walk one query a hop,
not one a node (at 50k memories 5.7 instead of 44.6 queries a recall; on
PostgreSQL each is a round trip, ``benchmarks/scale/edge_reads.py``). Which memories have
an edge at all (:func:`with_edges`, asked of all the evidence each round) is asked
of the store's indexes, without reading the edges.

A node's neighbours are in the order the edge store returns its rows (SQLite:
the order the edges were written), as in the NetworkX graph a writer mirrors write by
write; a walk does not depend on that order (it keeps each unit's strongest path
of each length). A node without edges is not in the graph, as in NetworkX. The graph
is for reads: whole-graph questions (``len``, ``graph.edges``) see only the
nodes read so far; :meth:`EdgeCache.networkx` gives them all at once.

Example:
    >>> from langchain_ripplemem.schemas import Edge
    >>> from langchain_ripplemem.storage.sqlite import open_sqlite_edges
    >>> backend, _ = open_sqlite_edges(None)
    >>> backend.add(("u1",), [Edge(src="a", dst="c", type="semantic", weight=0.9),
    ...                       Edge(src="a", dst="b", type="structural", weight=0.5)])
    >>> graph = walkable_edges(backend, ("u1",))
    >>> "a" in graph, "z" in graph, graph.degree("a"), dict(graph.adj["a"])
    (True, False, 2, {'c': {'types': {'semantic': 0.9}}, 'b': {'types': {'structural': 0.5}}})

"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

import networkx as nx

from langchain_ripplemem.schemas import Namespace
from langchain_ripplemem.storage.protocols import EdgeBackend, EdgeRow

__all__ = ["LazyAdjacency", "lazy_adjacency", "walkable_edges", "with_edges"]

_Neighbours = dict[str, dict[str, dict[str, float]]]


# A node's edges as held between reads: ``(neighbour, type, weight, neighbour, type, weight, ...)``, in
# the rows' order. One flat tuple of strings and floats leaves the garbage collector's lists at its
# first pass; NetworkX's dict per neighbour would stay in them (a dict holding a dict is always
# tracked), and recall keeps about 1,000 of those a recall at 50k memories (collector.py).
_Packed = tuple[str | float, ...]


def _packed(node: str, rows: Iterable[EdgeRow]) -> _Packed:
    return tuple(x for src, dst, etype, weight in rows if node in (src, dst)
                 for x in (dst if src == node else src, etype, weight))


def _as_networkx(packed: _Packed) -> _Neighbours:
    """``{neighbour: {"types": {type: weight}}}``, neighbours in the rows' order."""
    out: _Neighbours = {}
    for i in range(0, len(packed), 3):
        nbr, etype, weight = packed[i], packed[i + 1], packed[i + 2]
        out.setdefault(nbr, {"types": {}})["types"][etype] = weight  # type: ignore[arg-type,index,assignment]
    return out


class LazyAdjacency(dict):  # type: ignore[type-arg]
    """``node -> neighbours``, read from the edge backend on first touch (NetworkX's ``graph._adj``).

    Args:
        backend: the edge store.
        namespace: whose edges.
    """

    def __init__(self, backend: EdgeBackend, namespace: Namespace) -> None:
        super().__init__()
        self.backend, self.namespace = backend, namespace
        self.edges_read = 0  # edge entries held (for the cache's size estimate)
        # Nodes asked only whether they have an edge (:meth:`with_edges`), not read: node -> has one.
        self.has_edges: dict[str, bool] = {}
        # Counts the changes :meth:`forget` was told of: what was read at one version holds until the next.
        self.version = 0
        self._lock = threading.Lock()
        # node -> edge rows the store deleted after this graph was made (:meth:`keep`), still read here.
        self._kept: dict[str, list[EdgeRow]] = {}

    def __missing__(self, node: str) -> _Packed:
        if not isinstance(node, str):
            raise KeyError(node)
        self.read([node])
        return dict.__getitem__(self, node)  # type: ignore[no-any-return]

    def packed(self, node: str) -> _Packed:
        """``node``'s neighbours as held, read on first touch (``()``: no edges)."""
        found: _Packed | None = dict.get(self, node)
        return found if found is not None else self.__missing__(node)

    def read(self, nodes: Iterable[str]) -> None:
        """Read the edges of every node of ``nodes`` not read yet, in one edge-store query.

        A walk asks for a hop's nodes together: one query a hop instead of one a node
        (each query costs a round trip, and a store's statement overhead). A node's
        neighbours are in the order the store returns its rows, as when read alone.
        """
        rows_of: dict[str, list[EdgeRow]] = {node: [] for node in nodes
                                            if isinstance(node, str) and not dict.__contains__(self, node)}
        if not rows_of:
            return
        for row in self.backend.edge_rows(self.namespace, list(rows_of)):
            src, dst = row[0], row[1]
            if src in rows_of:
                rows_of[src].append(row)
            if dst != src and dst in rows_of:
                rows_of[dst].append(row)
        for node, rows in rows_of.items() if self._kept else ():
            rows += [row for row in self._kept.get(node, ()) if row not in rows]
        with self._lock:
            for node, rows in rows_of.items():
                nbrs = _packed(node, rows)
                self.edges_read += (len(nbrs) - len(dict.get(self, node) or ())) // 3
                dict.__setitem__(self, node, nbrs)

    def with_edges(self, nodes: Iterable[str]) -> set[str]:
        """Those of ``nodes`` with an edge: from what was read or asked before, else asked of the store.

        The store answers from its indexes without reading edge rows: recall asks this of
        every memory in its evidence each round, and reading their rows (about 1,700 for
        100 memories at 50k memories on SQLite) took ten times as long as asking (about
        5 against 0.5 ms).
        An answer is kept unless :meth:`forget` ran while it was asked (then it may be stale).
        """
        out: set[str] = set()
        ask = []
        for node in dict.fromkeys(nodes):
            known = dict.get(self, node)
            held = bool(known) if known is not None else self.has_edges.get(node)
            if held is None:
                ask.append(node)
            elif held:
                out.add(node)
        if ask:
            version = self.version
            found = _asked_with_edges(self.backend, self.namespace, ask)
            found.update(node for node in ask if node in self._kept)
            with self._lock:
                if self.version == version:
                    self.has_edges.update((node, node in found) for node in ask)
            out |= found
        return out

    def __getitem__(self, node: str) -> _Neighbours:
        nbrs = super().__getitem__(node)  # __missing__ reads it
        if not nbrs:
            raise KeyError(node)
        return _as_networkx(nbrs)

    def __contains__(self, node: object) -> bool:
        return isinstance(node, str) and bool(self.packed(node))

    def keep(self, rows: Iterable[EdgeRow]) -> None:
        """Edge rows the store is about to delete (a delete of their units): this graph still reads them.

        Readers walk one graph from their start to their end (a recall's pinned index still
        holds the deleted units); the graph a later reader gets no longer has them.
        """
        with self._lock:
            for row in rows:
                for node in dict.fromkeys(row[:2]):
                    self._kept.setdefault(node, []).append(row)

    def forget(self, nodes: Iterable[str]) -> None:
        """Drop what was read about ``nodes`` (their edges changed): the next touch reads them again."""
        with self._lock:
            for node in nodes:
                nbrs = self.pop(node, None)
                if nbrs:
                    self.edges_read -= len(nbrs) // 3
                self.has_edges.pop(node, None)
            self.version += 1  # after the pops: a walk that sees the new version reads the new edges


class _LazyNodes(dict):  # type: ignore[type-arg]
    """NetworkX's ``graph._node``: a node is in the graph when it has an edge (no node attributes)."""

    def __init__(self, adjacency: LazyAdjacency) -> None:
        super().__init__()
        self._adjacency = adjacency

    def __contains__(self, node: object) -> bool:
        return node in self._adjacency

    def __missing__(self, node: str) -> dict[str, Any]:
        if node not in self._adjacency:
            raise KeyError(node)
        return {}


def walkable_edges(backend: EdgeBackend, namespace: Namespace) -> nx.Graph:
    """A NetworkX graph of ``namespace`` whose adjacency is read node by node (see the module docs)."""
    graph = nx.Graph()
    adjacency = LazyAdjacency(backend, namespace)
    graph._adj = adjacency
    graph._node = _LazyNodes(adjacency)
    return graph


def adjacency_of(graph: nx.Graph) -> LazyAdjacency:
    """The lazy adjacency of a graph :func:`walkable_edges` made."""
    adjacency = graph._adj
    if not isinstance(adjacency, LazyAdjacency):
        raise ValueError("graph was not made by walkable_edges")
    return adjacency


def lazy_adjacency(graph: nx.Graph) -> LazyAdjacency | None:
    """The lazy adjacency behind ``graph`` (from :func:`walkable_edges`, or a NetworkX view of one), else ``None``."""
    while graph is not None:
        adjacency = getattr(graph, "_adj", None)
        if isinstance(adjacency, LazyAdjacency):
            return adjacency
        graph = getattr(graph, "_graph", None)  # a NetworkX subgraph view's graph
    return None


def with_edges(graph: nx.Graph, nodes: Iterable[str]) -> set[str]:
    """The ``nodes`` that have an edge in ``graph`` (what the controller anchors on).

    A :func:`walkable_edges` graph asks its adjacency (:meth:`LazyAdjacency.with_edges`),
    which asks the edge store without reading the edges.

    Example:
        >>> sorted(with_edges(nx.Graph([("a", "b")]), ["a", "b", "z"]))
        ['a', 'b']
    """
    adjacency = graph._adj
    if isinstance(adjacency, LazyAdjacency):
        return adjacency.with_edges(nodes)
    return {node for node in nodes if node in graph and graph.degree(node) > 0}


def _asked_with_edges(backend: EdgeBackend, namespace: Namespace, nodes: list[str]) -> set[str]:
    """``backend.with_edges``; an edge store written before it was part of the protocol reads the edges."""
    ask = getattr(backend, "with_edges", None)
    if ask is not None:
        return set(ask(namespace, nodes))
    return {end for row in backend.edge_rows(namespace, nodes) for end in row[:2]} & set(nodes)
