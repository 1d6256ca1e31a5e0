"""What bridges one memory to another: the rarest cue they share, and where a memory's names lead.

A cue edge joins two memories that share rare identifying cues
(:mod:`~langchain_ripplemem.text.identifying`). When recollection walks
one, what it is worth is the rarest cue the two memories share today
(:func:`bridge_strength`), not the noisy-or of every shared cue that linking
uses: a name and the words inside it ("harry potter", "harry", "potter") are one
thing said three ways, and three half-rare words are not one rare name.

A memory with a rare name that other memories also hold points somewhere the
query does not (:func:`bridge_potential`): "I booked Harbor Grill" leads to what
else was said about Harbor Grill. The heuristic controller prefers such memories
as anchors and does not stop while the best of them is unexplored.

Time bridges too (the paper's T cue, at read time): a memory whose own words
name a specific time ("flying out June 10th", :func:`mentioned_time`) reaches the
memories whose words name an overlapping time ("Denver, June 8th to 14th"), as
rare as few memories name it (:func:`time_bridges`). A session's day is no such
cue: every turn of the session has it.

Example:
    >>> from langchain_ripplemem.index.namespace_index import NamespaceIndex
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance
    >>> import numpy as np
    >>> index = NamespaceIndex(("demo",))
    >>> texts = ["Sam booked Harbor Grill.", "Harbor Grill serves oysters.", "Rain again."] + ["Hi."] * 17
    >>> units = [MemoryUnit.create(namespace=("demo",), restatement=t, source=Provenance(
    ...     conversation_id="c", session_id="s", turn_ids=[str(i)])) for i, t in enumerate(texts)]
    >>> index.add(units, np.eye(20, dtype=np.float32))
    >>> round(bridge_strength(index, units[0].id, units[1].id), 2), bridge_strength(index, units[0].id, units[2].id)
    (0.77, 0.0)
    >>> round(bridge_potential(index, units[0].id), 2), bridge_potential(index, units[2].id)
    (0.77, 0.0)

"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, TypeVar

import numpy as np

from langchain_ripplemem._runtime.collector import flat_pairs, pairs
from langchain_ripplemem.config import BridgingConfig
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.index.sessions import per_index
from langchain_ripplemem.recall.expansion import ExpansionHit
from langchain_ripplemem.schemas import MemoryUnit, TimeInterval
from langchain_ripplemem.text.identifying import MONTH_KEYS, common_keys, rarity

__all__ = ["BRIDGE_FLOOR", "FIRST_RARE_TOPIC_WEIGHT", "FIRST_TOPIC_WEIGHT", "KEY_BUDGET", "BridgePotentials",
           "BridgeStrength", "EventTime", "MentionedBridges", "RowTimes", "TimeBridge", "bridge_potential",
           "bridge_potentials", "bridge_strength", "epoch_micros", "mentioned_bridges", "mentioned_time", "row_times",
           "salience", "shared_bridge_strength", "time_bridges", "time_hits"]

#: What a bridged memory keeps of its inheritance when it shares none of the target's cues: the factor is
#: floor + (1 - floor) x target overlap. 0.75-1.0 put more junk in the top 10 and 0.5 lost the chains on the
#: linked suite's tune split (docs/benchmarks.md, "Linked recall (issue 13)").
BRIDGE_FLOOR = 0.6
#: A cue shared by memories with more identifying cues than this bridges less (sqrt(budget / cues) at each
#: such end; :func:`salience`): long answers share some rare word with many memories by chance. LongMemEval-S
#: dev 85.5 -> 89.1 at k=10, LoCoMo and the linked suite unchanged (docs/benchmarks.md, "Bridge salience").
KEY_BUDGET = 16
#: From the first hop's anchors a shared topic word weighs this much of a shared name: names only. 1 cost
#: LoCoMo 1.5-6 points of recall_all@10 (ordinary words are rare enough to bridge in a long dialogue;
#: docs/benchmarks.md, "Linked recall (issue 13)").
FIRST_TOPIC_WEIGHT = 0.0
#: ... except a topic word rare in English (outside the encoder vocabulary's first 12,000 whole words:
#: "kilim", not "camping"), which weighs half a name: linked dev 85.7 -> 89.3 % at k=10, LoCoMo 73.4 -> 73.5
#: (docs/benchmarks.md, "Rare topic words bridge from the first hop").
FIRST_RARE_TOPIC_WEIGHT = 0.5

# A time longer than this names a season, not an occasion ("in 2022", "this summer").
_SPECIFIC = timedelta(days=31)


@dataclass(frozen=True, slots=True)
class EventTime:
    """A time the query names relative to an event, grounded from the event's memory (the controller's).

    ``overlapping``: the query asks about what else happened at the event's own time
    ("while Maya is away in Lisbon"), so memories whose words name a time that meets it
    are bridged, and those of a person in ``about`` match the target; else about a period
    moved from it ("the weekend before her interview"), so the memories inside that
    period are. A dataclass, so a checkpointer can name it (``checkpointing.py``).
    """

    memory: str
    time: TimeInterval
    overlapping: bool = False
    # With ``overlapping``: the people the query's main clause names ("Could Sam feed the cat while
    # Maya is away?": sam), lower-cased. What they do in the event's time is what the query asks.
    about: frozenset[str] = frozenset()


def bridge_strength(index: NamespaceIndex, a: str, b: str, topic_weight: float = 1.0) -> float:
    """The rarity of the rarest identifying cue ``a`` and ``b`` share.

    A topic word's counts ``topic_weight`` of it; a month name counts fully, like a
    name: it is a time cue ("my passport runs out on June 3rd", "flying out June 10th").
    """
    return BridgeStrength(index, topic_weight)(a, b)


class BridgeStrength:
    """:func:`bridge_strength` over one state of an index: each key's weight and each edge's strength computed once.

    An expansion walks a few hundred cue edges whose ends share the same few keys,
    and the next recall walks many of them again. What an edge is worth changes
    only when the index gains units (rarities move) or loses some (a new index), so
    :func:`shared_bridge_strength` hands recalls one instance per index and size.
    """

    def __init__(self, index: NamespaceIndex, topic_weight: float = 1.0, key_budget: int = 0,
                 rare_topic_weight: float | None = None) -> None:
        self.index, self.topic_weight, self.key_budget = index, topic_weight, key_budget
        self.rare_topic_weight = rare_topic_weight
        self._common = common_keys() if rare_topic_weight is not None else frozenset()
        self._weights: dict[str, float] = {}
        self._edges: dict[tuple[str, str], float] = {}

    def weight(self, key: str) -> float:
        """``key``'s rarity; a topic word's times ``topic_weight`` (``rare_topic_weight`` if it is rare in English)."""
        if key not in self._weights:
            weight = self.topic_weight
            if key in MONTH_KEYS:
                weight = 1.0
            elif self.rare_topic_weight is not None and key not in self._common:
                weight = self.rare_topic_weight  # names are not in common_keys either: rarity() weighs them whole
            self._weights[key] = self.index.rarity(key, topic_weight=weight)
        return self._weights[key]

    def __call__(self, a: str, b: str) -> float:
        """The weight of the rarest key ``a`` and ``b`` share (0: none), times both ends' :func:`salience`."""
        found = self._edges.get((a, b))
        if found is None:
            found = self._strength(a, b)
            if len(self._edges) < _EDGES_KEPT:
                self._edges[(a, b)] = found
        return found

    def _strength(self, a: str, b: str) -> float:
        index = self.index
        keys_a, keys_b = index.keys[index.pos[a]], index.keys[index.pos[b]]
        best = max(map(self.weight, set(keys_a).intersection(keys_b)), default=0.0)
        if best and self.key_budget:
            best *= salience(len(keys_a), self.key_budget) * salience(len(keys_b), self.key_budget)
        return best


# Edge strengths kept per index state: a recall walks hundreds; a hub-heavy namespace could ask for millions.
# Not sessions.per_index: its values live in index.derived, which an index's snapshot saves, and these are
# a process's working memory (and refer back to their index).
_EDGES_KEPT = 200_000
_SHARED: weakref.WeakKeyDictionary[NamespaceIndex, dict[tuple[Any, ...], Any]] = \
    weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


def shared_bridge_strength(index: NamespaceIndex, topic_weight: float = 1.0, key_budget: int = 0,
                           rare_topic_weight: float | None = None) -> BridgeStrength:
    """The :class:`BridgeStrength` of ``index`` at its current size, shared by the recalls that read it.

    An index that grew gets a new one (the rarities moved); an index that lost units is a
    new index. Instances leave with their index.
    """
    return _shared(index, ("strength", topic_weight, key_budget, rare_topic_weight), lambda proxy: BridgeStrength(
        proxy, topic_weight, key_budget, rare_topic_weight))


def round_strength(index: NamespaceIndex, bridging: BridgingConfig, topic_weight: float,
                   expanded_rounds: int) -> BridgeStrength | None:
    """With bridging, a cue edge weighs what the rarest cue its ends share weighs today (``None`` without).

    A shared topic word counts :data:`FIRST_TOPIC_WEIGHT` from the first hop's anchors (a
    name identifies, a topic word only continues; one rare in English,
    :data:`FIRST_RARE_TOPIC_WEIGHT`) and ``topic_weight`` from what a round bridged to (a
    chain's next link is often one).
    """
    if not bridging.weight:
        return None
    first = expanded_rounds == 0
    return shared_bridge_strength(index, FIRST_TOPIC_WEIGHT if first else topic_weight,
                                  KEY_BUDGET, FIRST_RARE_TOPIC_WEIGHT if first else None)


_Made = TypeVar("_Made")


def _shared(index: NamespaceIndex, key: tuple[Any, ...], make: Callable[[NamespaceIndex], _Made]) -> _Made:
    """The ``key`` instance of ``index`` at its current size (``make(proxy of index)`` at first); older sizes' go."""
    with _SHARED_LOCK:
        kept = _SHARED.setdefault(index, {})
        sized = (len(index), *key)
        found = kept.get(sized)
        if found is None:
            for stale in [k for k in kept if k[0] != sized[0]]:
                del kept[stale]
            # A proxy, not the index: a value holding its own key strongly would keep every index alive.
            found = kept[sized] = make(weakref.proxy(index))
        return found  # type: ignore[no-any-return]


def salience(n_keys: int, key_budget: int) -> float:
    """What one of a memory's ``n_keys`` cues says about it: 1 up to ``key_budget`` cues, then ``sqrt(budget / n)``.

    A rare word shared by two short turns ("I booked Harbor Grill") is what they are
    about; one of fifty cues of a long answer (a list of tips) is a passing mention,
    and long answers share some rare word with many memories by chance.

    Example:
        >>> salience(6, 16), salience(64, 16)
        (1.0, 0.5)
    """
    return 1.0 if not key_budget or n_keys <= key_budget else (key_budget / n_keys) ** 0.5


def bridge_potential(index: NamespaceIndex, uid: str, known: Container[str] = (), key_budget: int = 0) -> float:
    """How rare the rarest bridge out of ``uid`` is: a *name* some other memory also holds, or its time (0: none).

    Names in ``known`` (the query's own cues) are left out: the first hop searched for
    them already. Topic words are left out too: from the first hop, only a name
    bridges (:data:`FIRST_TOPIC_WEIGHT`). What does not depend on ``known``
    is worked out once per memory and index size (:class:`BridgePotentials`).
    """
    return bridge_potentials(index, key_budget)(uid, known)


def bridge_potentials(index: NamespaceIndex, key_budget: int = 0) -> BridgePotentials:
    """The :class:`BridgePotentials` of ``index`` at its current size, shared by the recalls that read it."""
    mentioned = mentioned_bridges(index)  # not inside _shared's make: it holds the lock
    return _shared(index, ("potential", 0.0, key_budget), lambda proxy: BridgePotentials(proxy, key_budget, mentioned))


class BridgePotentials:
    """:func:`bridge_potential` over one state of an index: per memory, its bridging names' rarities and time's bridge.

    The controller asks for the potential of the same well-supported memories recall
    after recall; only which names the query already holds changes.
    """

    def __init__(self, index: NamespaceIndex, key_budget: int = 0, mentioned: MentionedBridges | None = None) -> None:
        self.index, self.key_budget = index, key_budget
        self.mentioned = mentioned or MentionedBridges(index)
        self._parts: dict[str, tuple[tuple[tuple[str, float], ...], float, float]] = {}

    def __call__(self, uid: str, known: Container[str] = ()) -> float:
        """``uid``'s potential, the names in ``known`` left out."""
        found = self._parts.get(uid)
        if found is None:
            found = self._of(uid)
            if len(self._parts) < _EDGES_KEPT:
                self._parts[uid] = found
        names, scale, times = found
        return max(max((weight for key, weight in names if key not in known), default=0.0) * scale, times)

    def _of(self, uid: str) -> tuple[tuple[tuple[str, float], ...], float, float]:
        """(each name of ``uid`` another memory holds, with its rarity), its :func:`salience`, its time's bridge."""
        index = self.index
        row = index.pos[uid]
        postings, keys = index.postings["cues"], index.keys[row]
        names = tuple((key, index.rarity(key)) for key in keys if index.is_name(key) and len(postings.get(key, ())) > 1)
        times = max((b.weight for b in self.mentioned(uid)), default=0.0)
        return names, salience(len(keys), self.key_budget), times


class MentionedBridges:
    """Per memory, the bridges of the time its own words name (:func:`mentioned_time`, :func:`time_bridges`).

    Kept per index size (:func:`mentioned_bridges`): the controller weighs the same
    memories' time bridges as anchor candidates, and expansion follows them from anchors.
    """

    def __init__(self, index: NamespaceIndex) -> None:
        self.index = index
        # uid -> (unit_id, weight, unit_id, weight, ...): one flat tuple of strings and floats, which the
        # garbage collector stops tracking at its first pass; a list of bridges would stay tracked (collector.py).
        self._found: dict[str, tuple[str | float, ...]] = {}
        self._kept = 0

    def __call__(self, uid: str) -> list[TimeBridge]:
        """The bridges out of ``uid`` (none when its words name no specific time)."""
        found = self._found.get(uid)
        if found is None:
            when = mentioned_time(self.index.units[self.index.pos[uid]])
            bridges = time_bridges(self.index, uid, when) if when is not None else []
            if self._kept + len(bridges) < _EDGES_KEPT:
                self._kept += len(bridges) + 1
                self._found[uid] = flat_pairs((b.unit_id, b.weight) for b in bridges)
            return bridges
        return [TimeBridge(unit, uid, weight) for unit, weight in pairs(found)]


def mentioned_bridges(index: NamespaceIndex) -> MentionedBridges:
    """The :class:`MentionedBridges` of ``index`` at its current size, shared by the recalls that read it."""
    return _shared(index, ("mentioned", 0.0, 0), MentionedBridges)


def _lower_participants(index: NamespaceIndex, uid: str) -> set[str]:
    unit = index.unit(uid)
    return {p.lower() for p in unit.participants} if unit is not None else set()


def mentioned_time(unit: MemoryUnit) -> TimeInterval | None:
    """The time ``unit``'s own words name, when specific (at most 31 days); ``None`` for its session's day.

    Rule-based units record the phrase their time came from (``metadata["time_phrase"]``).
    """
    if unit.time is None or not unit.metadata.get("time_phrase") or unit.time.end - unit.time.start > _SPECIFIC:
        return None
    return unit.time


@dataclass(frozen=True)
class TimeBridge:
    """A memory reached through time from ``anchor``, weighing the rarity of the time they share."""

    unit_id: str
    anchor: str
    weight: float


def time_bridges(index: NamespaceIndex, anchor: str, interval: TimeInterval, *, inside: bool = False,
                 exclude: Container[str] = ()) -> list[TimeBridge]:
    """Memories whose time meets ``interval``, each weighing ``rarity(count, n)``.

    By default (``inside=False``) the memories whose own words name a time overlapping
    ``interval`` (the anchor's :func:`mentioned_time`); with ``inside=True`` every memory
    whose time lies inside it (a period the query names, grounded by the controller),
    its session's day included. ``count`` is how many memories qualify (with the anchor,
    when it is one of them): a time many memories name bridges weakly.
    """
    first, last = interval.start.date().toordinal(), interval.end.date().toordinal()
    if last - first > _SPECIFIC.days * 2:  # a season: no bridge (and the day postings bucket it coarsely)
        return []
    rows: set[int] = set()
    for day in range(first, last + 1):
        rows.update(index.postings["days"].get(day, ()))
    times = row_times(index)
    found = np.fromiter(sorted(rows), dtype=np.int64, count=len(rows))
    found = found[found < len(times.start)]
    start, end = epoch_micros(interval.start), epoch_micros(interval.end)
    if inside:  # the time inside the interval; else the time its words name overlaps it
        meets = times.timed[found] & (start <= times.start[found]) & (times.end[found] <= end)
    else:
        meets = times.mentioned[found] & (times.said_start[found] <= end) & (start <= times.said_end[found])
    matches = [uid for row in found[meets].tolist() if (uid := index.ids[row]) != anchor]
    if not matches:
        return []
    weight = rarity(len(matches) + (0 if inside else 1), len(index.ids))
    return [TimeBridge(uid, anchor, weight) for uid in matches if uid not in exclude]


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def epoch_micros(when: datetime) -> int:
    """Microseconds since the epoch: exact, so comparisons agree with the datetimes'."""
    return (when - _EPOCH) // timedelta(microseconds=1)


def row_times(index: NamespaceIndex) -> RowTimes:
    """Per row of ``index``, its time and the time its own words name, in exact microseconds (kept per index)."""
    # Rows only grow, and a unit's time and time phrase never change in place (NamespaceIndex.replace).
    return per_index(index, "times", RowTimes.of, lambda v, known, before, n: known.grown(v, before, n))


@dataclass(frozen=True)
class RowTimes:
    """Per row: its time (``timed``, ``start``, ``end``) and the time its own words name (:func:`mentioned_time`)."""

    timed: np.ndarray
    start: np.ndarray
    end: np.ndarray
    mentioned: np.ndarray
    said_start: np.ndarray
    said_end: np.ndarray

    @classmethod
    def of(cls, index: NamespaceIndex, n: int, first: int = 0) -> RowTimes:
        """Rows ``first..n-1`` of ``index``."""
        columns: list[list[int]] = [[] for _ in range(6)]
        for unit in index.units[first:n]:
            said = mentioned_time(unit)
            values = (unit.time is not None, *((epoch_micros(unit.time.start), epoch_micros(unit.time.end))
                                               if unit.time is not None else (0, 0)),
                      said is not None, *((epoch_micros(said.start), epoch_micros(said.end))
                                          if said is not None else (0, 0)))
            for column, value in zip(columns, values, strict=True):
                column.append(value)
        kinds = (bool, np.int64, np.int64, bool, np.int64, np.int64)
        return cls(*(np.array(column, dtype=kind) for column, kind in zip(columns, kinds, strict=True)))

    def grown(self, index: NamespaceIndex, before: int, n: int) -> RowTimes:
        """These rows' arrays and rows ``before..n-1``'s (readers keep the old arrays)."""
        new = RowTimes.of(index, n, before)
        return RowTimes(*(np.concatenate([getattr(self, f)[:before], getattr(new, f)])
                        for f in ("timed", "start", "end", "mentioned", "said_start", "said_end")))


def time_hits(index: NamespaceIndex, anchors: Sequence[str], score: Callable[[list[str]], Sequence[float | None]], *,
              floor: float, top_n: int, exclude: Container[str] = (),
              event: EventTime | None = None) -> list[ExpansionHit]:
    """The structural channel's time bridges: the ``top_n`` memories reached through time, as expansion hits.

    From each anchor's :func:`mentioned_time` to the memories naming an overlapping
    time, and from an ``event`` memory (the controller grounded a time the query names
    relative to it) to the memories inside that time, or naming a time that meets it
    (:class:`EventTime`). Ranked like cue bridges: weight
    ``x (floor + (1 - floor) x score)``, ``score`` being the target overlap; each hit's
    path is its one step from the anchor, its strength the bridge's weight.
    """
    mentioned = mentioned_bridges(index)
    bridges = [bridge for anchor in anchors if anchor in index.pos
               for bridge in mentioned(anchor) if bridge.unit_id not in exclude]
    concurrent: set[str] = set()
    if event is not None and event.memory in index.pos:
        found = time_bridges(index, event.memory, event.time, inside=not event.overlapping, exclude=exclude)
        bridges += found
        if event.about:  # the main clause's person at the event's time: what the query asks about
            concurrent = {b.unit_id for b in found if event.about & _lower_participants(index, b.unit_id)}
    best: dict[str, TimeBridge] = {}
    for bridge in bridges:
        if bridge.unit_id not in best or bridge.weight > best[bridge.unit_id].weight:
            best[bridge.unit_id] = bridge
    ids = list(best)
    targets = [1.0 if uid in concurrent else s or 0.0 for uid, s in zip(ids, score(ids), strict=True)] if ids else []
    ranked = sorted(zip(ids, targets, strict=True),
                    key=lambda p: (-round(best[p[0]].weight * (floor + (1.0 - floor) * p[1]), 6), p[0]))
    return [ExpansionHit(uid, "structural", float(t), rank, best[uid].anchor, [best[uid].anchor, uid], best[uid].weight)
            for rank, (uid, t) in enumerate(ranked[:top_n])]
