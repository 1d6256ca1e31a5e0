"""Expansion walks kept per state of an index and its edges, so recalls that expand from the same anchor walk once.

What a walk from an anchor reaches, and over which paths, depends on the edges'
edges around it, the channel, how edges are weighed
(:class:`~langchain_ripplemem.recall.bridging.BridgeStrength`, itself one per index
state) and which units the index holds; not on the query: what a recall may not
return (its evidence so far) is dropped after the walk
(:func:`~langchain_ripplemem.recall.expansion.reachable`). Recalls of one
namespace expand from the same well-connected memories again and again, so
:func:`shared_walks` hands them one map of walks per index, channel and edge
weighing, valid while the index has the same units and the walkable edges the same
edges (:attr:`~langchain_ripplemem.edges.adjacency.LazyAdjacency.version`).

Example:
    >>> import numpy as np
    >>> from langchain_ripplemem.index.namespace_index import NamespaceIndex
    >>> from langchain_ripplemem.recall.expansion import reachable
    >>> from langchain_ripplemem.edges.adjacency import walkable_edges
    >>> from langchain_ripplemem.schemas import Edge, MemoryUnit, Provenance
    >>> from langchain_ripplemem.storage.sqlite import open_sqlite_edges
    >>> units = [MemoryUnit.create(namespace=("demo",), restatement=t, source=Provenance(
    ...     conversation_id="c", session_id="s", turn_ids=[t])) for t in ("a", "b", "c")]
    >>> index = NamespaceIndex(("demo",))
    >>> index.add(units, np.eye(3, dtype=np.float32))
    >>> backend, _ = open_sqlite_edges(None)
    >>> a, b, c = (u.id for u in units)
    >>> backend.add(("demo",), [Edge(src=a, dst=b, type="semantic", weight=0.9),
    ...                         Edge(src=b, dst=c, type="semantic", weight=0.5)])
    >>> graph = walkable_edges(backend, ("demo",))
    >>> walks = shared_walks(index, graph, "semantic")
    >>> sorted(reachable(graph, [a], "semantic", 2, exclude={a}, walks=walks)) == sorted([b, c])
    True
    >>> len(walks), shared_walks(index, graph, "semantic") is walks
    (1, True)

"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import networkx as nx

from langchain_ripplemem.edges.adjacency import LazyAdjacency
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.recall.expansion import Layers, Walks
from langchain_ripplemem.schemas import EdgeType

__all__ = ["KeptWalks", "shared_walks"]

# Units reached, summed over the walks kept per index state: a recall walks a few hundred;
# a namespace's hubs could reach thousands each.
_REACHED_KEPT = 50_000


class KeptWalks(Walks):
    """``(anchor, hops) -> layers`` of one index state, edge state, channel and edge weighing; bounded.

    Past ``limit`` units reached in all, new walks are not kept (the walks kept so far still serve).
    """

    def __init__(self, state: tuple[Any, ...], limit: int = _REACHED_KEPT) -> None:
        super().__init__()
        self.state, self.limit, self.reached = state, limit, 0

    def __setitem__(self, key: tuple[str, int], layers: Layers) -> None:
        size = sum(len(layer) for layer in layers)
        if self.reached + size <= self.limit:
            self.reached += size
            super().__setitem__(key, layers)


_SHARED: weakref.WeakKeyDictionary[NamespaceIndex, dict[tuple[EdgeType, Any], KeptWalks]] = \
    weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


def shared_walks(index: NamespaceIndex, graph: nx.Graph, channel: EdgeType, strength: Any = None) -> KeptWalks | None:
    """The walks recalls of ``index`` share over ``graph``'s ``channel`` edges weighed by ``strength``.

    ``strength`` must be one per index state
    (:func:`~langchain_ripplemem.recall.bridging.shared_bridge_strength`; ``None``:
    the stored weights). ``None`` for edges that do not say when they
    change (not a :func:`~langchain_ripplemem.edges.adjacency.walkable_edges`,
    e.g. one restricted to hide memories): such walks are not kept.
    """
    adjacency = getattr(graph, "_adj", None)
    if not isinstance(adjacency, LazyAdjacency):
        return None
    # The index's units (rows only grow), and the edges: the walkable NetworkX graph itself
    # (a delete replaces it) and the changes it was told of. Weak: a kept walk never
    # keeps one the edge cache let go.
    state = (len(index), weakref.ref(adjacency), adjacency.version)
    with _SHARED_LOCK:
        kept = _SHARED.setdefault(index, {})
        key = (channel, strength)
        found = kept.get(key)
        if found is None or found.state != state:
            for stale in [k for k, walks in kept.items() if walks.state != state]:
                del kept[stale]
            found = kept[key] = KeptWalks(state)
        return found
