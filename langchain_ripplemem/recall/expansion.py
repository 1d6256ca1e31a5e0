"""Anchor-local expansion over the typed edges (docs/concepts.md read phase, step 4).

Candidates are units not yet in the evidence within ``hops`` of an anchor.
Each channel walks only its own edge type and scores what it reaches against
the missing-support target: the semantic channel by the alignment of the unit
with the target restatement (cosine, averaged with BM25 under the hybrid
alignment), the structural channel by the structural score between the target
cues and the unit's cues. The top
``per_channel`` of each channel are kept; near-equal scores prefer the shorter
path, then the stronger path (the product of its edge weights). A walk keeps, for
each unit, its strongest path of the shortest length (ties: the smaller path), so
the order in which the edges list neighbours never changes what recall finds.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import networkx as nx

from langchain_ripplemem._runtime.collector import flat_pairs, pairs
from langchain_ripplemem.config import ExpansionConfig
from langchain_ripplemem.edges.adjacency import LazyAdjacency, lazy_adjacency
from langchain_ripplemem.schemas import EdgeType

# Scores closer than this count as near-equal, so path length and strength decide.
_NEAR_EQUAL_DECIMALS = 3


@dataclass
class Reached:
    """A unit reached from an anchor: its best path so far."""

    unit_id: str
    anchor: str
    path: list[str]
    strength: float


@dataclass
class ExpansionHit:
    """One expanded unit in one channel."""

    unit_id: str
    channel: EdgeType
    score: float
    rank: int
    anchor: str
    path: list[str] = field(default_factory=list)
    strength: float = 1.0


@dataclass(frozen=True)
class Unreachable:
    """Ids expansion must not return: those ``taken`` already, and those not among the index's first ``limit`` rows.

    A unit a writer adds while the walk runs has no row in the scores taken before
    it, so it counts as absent. Asked only about the nodes a walk reaches: the cost
    follows the anchors' neighbourhoods, not the number of edges.

    Example:
        >>> excluded = Unreachable(taken={"a"}, rows={"a": 0, "b": 1, "late": 2}, limit=2)
        >>> [uid in excluded for uid in ("a", "b", "late", "gone")]
        [True, False, True, True]
    """

    taken: Container[str]
    rows: Mapping[str, int]
    limit: int

    def __contains__(self, uid: object) -> bool:
        return uid in self.taken or self.rows.get(uid, self.limit) >= self.limit  # type: ignore[call-overload]


_WALK_ATTEMPTS = 5


EdgeStrength = Callable[[str, str], float]
# One anchor's walk: per hop, each unit reached at that length with its best path and strength.
Layers = list[dict[str, tuple[tuple[str, ...], float]]]
# One edge a walk may take: (neighbour, weight as re-weighed).
Step = tuple[str, float]


class Steps(dict[str, tuple[str | float, ...]]):
    """Per node, the edges of one channel a walk may take from it, in adjacency order; bounded.

    A node's steps are one flat tuple ``(neighbour, weight, neighbour, weight, ...)``, which the
    garbage collector stops tracking at its first pass (``collector.py``). Past ``limit`` edges
    (plus one per node) in all, new nodes' steps are not kept; the steps kept so far still
    serve. ``Steps(0)`` keeps none.
    """

    def __init__(self, limit: int = 50_000) -> None:
        super().__init__()
        self.limit, self.kept = limit, 0

    def keep(self, node: str, out: list[Step]) -> None:
        """Keep ``node``'s steps, unless that would pass the limit."""
        if self.kept + len(out) + 1 <= self.limit:
            self.kept += len(out) + 1
            self[node] = flat_pairs(out)

    def of(self, node: str) -> list[Step] | None:
        """``node``'s steps as kept, else ``None``."""
        flat = self.get(node)
        return None if flat is None else pairs(flat)


class Walks(dict[tuple[str, int], Layers]):
    """``(anchor, hops) -> layers`` kept for later calls, and the :data:`Steps` those walks took.

    Like the walks, the steps belong to one state of the graph, one channel, one edge
    weighing and one set of rows a walk may step on.
    """

    def __init__(self) -> None:
        super().__init__()
        self.steps = Steps()


def reachable(
    graph: nx.Graph, anchors: Iterable[str], channel: EdgeType, hops: int, exclude: Container[str],
    strength: EdgeStrength | None = None, walks: Walks | None = None,
) -> dict[str, Reached]:
    """Units within ``hops`` of any anchor over ``channel`` edges, with their best path.

    ``strength(a, b)`` re-weighs an edge at read time (default: its stored weight).
    A writer (or a cache catching up) may add edges to the cached NetworkX graph while a
    reader walks it; Python then stops the walk ("dictionary changed size during
    iteration"), and the walk starts again over the grown edges.

    ``walks`` keeps each anchor's own walk, ``(anchor, hops) -> layers``, for the
    next call: it must belong to this state of the graph, this channel and
    ``strength``, and to the rows ``exclude`` holds (``Unreachable.rows``); what
    ``exclude`` takes is applied after it (``recall/walks.py`` hands such maps out).
    """
    return {nbr: Reached(nbr, path[0], list(path), reach)
            for nbr, (path, reach) in _reached(graph, anchors, channel, hops, exclude, strength, walks).items()}


# What a walk found per unit: (path, strength), the anchor first on the path; the walk's own entries
# (no tuple per unit), made into Reached or hits only when returned.
_Found = dict[str, tuple[tuple[str, ...], float]]


def _reached(
    graph: nx.Graph, anchors: Iterable[str], channel: EdgeType, hops: int, exclude: Container[str],
    strength: EdgeStrength | None = None, walks: Walks | None = None,
) -> _Found:
    anchors = list(anchors)
    for attempt in range(_WALK_ATTEMPTS):
        try:
            return _walk(graph, anchors, channel, hops, exclude, strength, walks)
        except RuntimeError:
            if attempt == _WALK_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def _walk(
    graph: nx.Graph, anchors: list[str], channel: EdgeType, hops: int, exclude: Container[str],
    strength: EdgeStrength | None = None, walks: Walks | None = None,
) -> _Found:
    # The NetworkX graph's own adjacency dicts, not NetworkX's read-only views over them (a view
    # per node and per neighbour cost more than the walk); a filtered graph keeps its views.
    adjacency = graph._adj if isinstance(graph._adj, dict) else graph.adj
    # ``nbr in exclude``, spelled out for Unreachable (asked of every unit every walk reaches);
    # its rows (the index's units) also bound where a walk may step.
    taken, rows, limit = (exclude.taken, exclude.rows, exclude.limit) if isinstance(exclude, Unreachable) \
        else (exclude, None, 0)
    # A walk steps only on units ``rows`` holds, and rows only grow: while they number at most
    # ``limit``, every unit a walk reached has a row below it.
    bounded = rows is not None and len(rows) > limit
    lazy = lazy_adjacency(graph)  # also behind a NetworkX view that hides memories
    if lazy is not None:
        lazy.read(anchors)
    best: _Found = {}
    for anchor in anchors:
        if anchor not in graph:
            continue
        layers = walks.get((anchor, hops)) if walks is not None else None
        if layers is None:
            steps = walks.steps if isinstance(walks, Walks) else Steps(0)
            layers = _anchor_walk(adjacency, anchor, channel, hops, rows, strength, steps, lazy)
            if walks is not None:
                walks[(anchor, hops)] = layers
        for layer in layers:
            for nbr, found in layer.items():
                if nbr in taken or (bounded and rows.get(nbr, limit) >= limit):  # type: ignore[union-attr]
                    continue
                old = best.setdefault(nbr, found)
                if old is not found and (len(found[0]), -found[1]) < (len(old[0]), -old[1]):
                    best[nbr] = found
    return best


def _anchor_walk(adjacency: Mapping[str, Mapping[str, dict[str, dict[str, float]]]], anchor: str,
                 channel: EdgeType, hops: int, held: Container[str] | None,
                 strength: EdgeStrength | None, steps: Steps, lazy: LazyAdjacency | None = None) -> Layers:
    """One anchor's walk, whatever the walk must leave out: what it may not return is the caller's to drop.

    ``steps`` gives (and keeps) each node's channel edges to ``held`` units, re-weighed:
    walks from other anchors cross the same well-connected nodes.
    """
    frontier: dict[str, tuple[tuple[str, ...], float]] = {anchor: ((anchor,), 1.0)}
    seen = {anchor}
    layers: Layers = []
    for _ in range(hops):
        if lazy is not None:  # the hop's unread nodes in one query
            lazy.read([node for node in frontier if node not in steps])
        # One hop further: each unit keeps its strongest path of this length (ties: the
        # smallest path), so what a walk finds does not depend on the order of neighbours.
        layer: dict[str, tuple[tuple[str, ...], float]] = {}
        for node, (path, so_far) in frontier.items():
            out = steps.of(node)
            if out is None:
                out = _steps(adjacency[node], node, channel, held, strength)
                steps.keep(node, out)
            for nbr, weight in out:
                if nbr in seen:
                    continue
                reach, old = so_far * weight, layer.get(nbr)
                if old is None or reach > old[1] or (reach == old[1] and path < old[0][:-1]):
                    layer[nbr] = ((*path, nbr), reach)
        seen.update(layer)
        layers.append(layer)
        frontier = layer
    return layers


def _steps(neighbours: Mapping[str, dict[str, dict[str, float]]], node: str, channel: EdgeType,
           held: Container[str] | None, strength: EdgeStrength | None) -> list[Step]:
    """``node``'s ``channel`` edges to ``held`` units as (neighbour, weight), ``strength`` re-weighing them."""
    out = []
    for nbr, data in neighbours.items():
        weight = data["types"].get(channel)
        if weight is None or (held is not None and nbr not in held):
            continue
        out.append((nbr, weight if strength is None else strength(node, nbr)))
    return out


def expand_channel(
    graph: nx.Graph,
    anchors: list[str],
    channel: EdgeType,
    score: Callable[[list[str]], Sequence[float | None]],
    expansion: ExpansionConfig,
    *,
    exclude: Container[str],
    tiebreak: Callable[[list[str]], list[float]] | None = None,
    path_floor: float | None = None,
    strength: EdgeStrength | None = None,
    walks: Walks | None = None,
) -> list[ExpansionHit]:
    """Top ``expansion.per_channel`` units of one channel within ``expansion.hops``, scored by ``score``.

    ``tiebreak`` (e.g. similarity to the target) orders what score, path length
    and path strength leave tied: structural scores tie often. With a
    ``path_floor`` ``f``, units are ranked by ``strength x (f + (1 - f) x score)``
    instead: the bridge (the product of the path's cue-edge weights) counts
    first, and agreeing with the target lifts it (the hit keeps the target score).
    ``strength`` re-weighs edges as the walk crosses them, and ``walks`` keeps
    each anchor's walk (see :func:`reachable`).
    """
    hops, top_n = expansion.hops, expansion.per_channel
    reached = _reached(graph, anchors, channel, hops, exclude, strength, walks)
    if not reached:
        return []
    ids = list(reached)
    scores = score(ids)
    if path_floor is not None:
        f = path_floor
        values = [None if s is None else found[1] * (f + (1.0 - f) * s)
                  for found, s in zip(reached.values(), scores, strict=True)]
        bar = _contention_bar(values, top_n, 6)
        # Keys built in one pass, for contenders only (ids are distinct: the id settles every tie,
        # as a key function's would).
        bridged = sorted((-round(v, 6), len(found[0]), i, s)
                         for (i, found), s, v in zip(reached.items(), scores, values, strict=True)
                         if s is not None and v is not None and v >= bar)
        return [_hit(uid, channel, s, rank, reached[uid]) for rank, (_, _, uid, s) in enumerate(bridged[:top_n])]
    # The semantic channel breaks ties by its own scores: they are at hand.
    ties: Sequence[float | None] = scores if tiebreak is score else \
        tiebreak(ids) if tiebreak is not None else [0.0] * len(ids)
    bar = _contention_bar(scores, top_n, _NEAR_EQUAL_DECIMALS)
    # Best near-equal score first, then the shorter path, the stronger path, the tie-break and the id
    # (ids are distinct: the score itself is never compared).
    ranked = sorted((-round(s, _NEAR_EQUAL_DECIMALS), len(found[0]), -round(found[1], 6), -(t or 0.0), i, s)
                    for (i, found), s, t in zip(reached.items(), scores, ties, strict=True)
                    if s is not None and s >= bar)
    return [_hit(uid, channel, s, rank, reached[uid]) for rank, (_, _, _, _, uid, s) in enumerate(ranked[:top_n])]


def _contention_bar(values: Sequence[float | None], top_n: int, decimals: int) -> float:
    """A value below which nothing ranks among the ``top_n`` largest once values are rounded to ``decimals``.

    Rounding moves a value by at most half a unit in its last decimal, so a value more
    than a unit below the ``top_n``-th largest rounds strictly below every one of the
    ``top_n``: ranking only the values at or above the bar (two units below, a margin
    for float error) keeps the same top ``top_n`` and skips building sort keys for the
    many that cannot place.

    Example:
        >>> _contention_bar([0.9, None, 0.5, 0.7, 0.1], 2, 3)
        0.698
        >>> _contention_bar([0.9, None], 2, 3)
        -inf
    """
    best = heapq.nlargest(top_n, [v for v in values if v is not None])
    return best[-1] - 2 * 10.0 ** -decimals if len(best) == top_n else -math.inf


def _hit(uid: str, channel: EdgeType, score: float, rank: int, found: tuple[tuple[str, ...], float]) -> ExpansionHit:
    path, reach = found
    return ExpansionHit(uid, channel, float(score), rank, path[0], list(path), reach)
