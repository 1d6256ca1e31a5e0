"""Anchor-local expansion over the typed graph (METHOD.md read phase, step 4).

Candidates are units not yet in the evidence within ``hops`` of an anchor.
Each channel walks only its own edge type and scores what it reaches against
the missing-support target: the semantic channel by the alignment of the unit
with the target restatement (cosine, averaged with BM25 under the hybrid
alignment), the structural channel by the structural score between the target
cues and the unit's cues. The top
``per_channel`` of each channel are kept; near-equal scores prefer the shorter
path, then the stronger path (the product of its edge weights). A walk keeps, for
each unit, its strongest path of the shortest length (ties: the smaller path), so
the order in which a graph lists neighbours never changes what recall finds.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import networkx as nx

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
    """Ids expansion must not return: those ``taken`` already, and those not among the view's first ``limit`` rows.

    A unit a writer adds while the walk runs has no row in the scores taken before
    it, so it counts as absent. Asked only about the nodes a walk reaches: the cost
    follows the anchors' neighbourhoods, not the size of the graph.

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


def _held(exclude: Container[str], uid: str) -> bool:
    """Whether a walk may step on ``uid``: not when the view does not hold it.

    A graph read a moment after the view (or caught up first) can hold another
    writer's new edges before the view holds their units; such an edge leads
    nowhere yet (the next catch-up brings the unit), and re-weighing it would
    look the unit up in the view.
    """
    return uid in exclude.rows if isinstance(exclude, Unreachable) else True


EdgeStrength = Callable[[str, str], float]


def reachable(
    graph: nx.Graph, anchors: Iterable[str], channel: EdgeType, hops: int, exclude: Container[str],
    strength: EdgeStrength | None = None,
) -> dict[str, Reached]:
    """Units within ``hops`` of any anchor over ``channel`` edges, with their best path.

    ``strength(a, b)`` re-weighs an edge at read time (default: its stored weight).
    A writer (or a cache catching up) may add edges to the cached graph while a
    reader walks it; Python then stops the walk ("dictionary changed size during
    iteration"), and the walk starts again on the grown graph.
    """
    anchors = list(anchors)
    for attempt in range(_WALK_ATTEMPTS):
        try:
            return _walk(graph, anchors, channel, hops, exclude, strength)
        except RuntimeError:
            if attempt == _WALK_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def _walk(
    graph: nx.Graph, anchors: list[str], channel: EdgeType, hops: int, exclude: Container[str],
    strength: EdgeStrength | None = None,
) -> dict[str, Reached]:
    best: dict[str, Reached] = {}
    for anchor in anchors:
        if anchor not in graph:
            continue
        frontier = [Reached(anchor, anchor, [anchor], 1.0)]
        seen = {anchor}
        for _ in range(hops):
            # One hop further: each unit keeps its strongest path of this length (ties: the
            # smallest path), so what a walk finds does not depend on the order of neighbours.
            layer: dict[str, Reached] = {}
            for node in frontier:
                for nbr, data in graph.adj[node.unit_id].items():
                    weight = data["types"].get(channel)
                    if weight is None or nbr in seen or not _held(exclude, nbr):
                        continue
                    if strength is not None:
                        weight = strength(node.unit_id, nbr)
                    reach, old = node.strength * weight, layer.get(nbr)
                    if old is None or reach > old.strength or (reach == old.strength and node.path < old.path[:-1]):
                        layer[nbr] = Reached(nbr, anchor, [*node.path, nbr], reach)
            seen.update(layer)
            for nbr, reached in layer.items():
                if nbr not in exclude:
                    old = best.get(nbr)
                    if old is None or (len(reached.path), -reached.strength) < (len(old.path), -old.strength):
                        best[nbr] = reached
            frontier = list(layer.values())
    return best


def expand_channel(
    graph: nx.Graph,
    anchors: list[str],
    channel: EdgeType,
    score: Callable[[list[str]], Sequence[float | None]],
    *,
    hops: int,
    top_n: int,
    exclude: Container[str],
    tiebreak: Callable[[list[str]], list[float]] | None = None,
    path_floor: float | None = None,
    strength: EdgeStrength | None = None,
) -> list[ExpansionHit]:
    """Top ``top_n`` units of one channel, scored against the target by ``score``.

    ``tiebreak`` (e.g. similarity to the target) orders what score, path length
    and path strength leave tied: structural scores tie often. With a
    ``path_floor`` ``f``, units are ranked by ``strength x (f + (1 - f) x score)``
    instead: the bridge (the product of the path's cue-edge weights) counts
    first, and agreeing with the target lifts it (the hit keeps the target score).
    ``strength`` re-weighs edges as the walk crosses them (see :func:`reachable`).
    """
    reached = reachable(graph, anchors, channel, hops, exclude, strength)
    if not reached:
        return []
    ids = list(reached)
    scores = score(ids)
    if path_floor is not None:
        f = path_floor
        target = {i: s for i, s in zip(ids, scores, strict=True) if s is not None}
        order = sorted(target, key=lambda i: (-round(reached[i].strength * (f + (1.0 - f) * target[i]), 6),
                                              len(reached[i].path), i))
        return [ExpansionHit(uid, channel, float(target[uid]), rank, reached[uid].anchor, reached[uid].path,
                             reached[uid].strength) for rank, uid in enumerate(order[:top_n])]
    ties = tiebreak(ids) if tiebreak is not None else [0.0] * len(ids)
    ranked = sorted(
        (
            (round(s, _NEAR_EQUAL_DECIMALS), len(reached[i].path), -round(reached[i].strength, 6), -t, i, s)
            for i, s, t in zip(ids, scores, ties, strict=True)
            if s is not None
        ),
        key=lambda t: (-t[0], *t[1:5]),
    )
    return [
        ExpansionHit(uid, channel, float(s), rank, reached[uid].anchor, reached[uid].path,
                     reached[uid].strength)
        for rank, (_, _, _, _, uid, s) in enumerate(ranked[:top_n])
    ]
