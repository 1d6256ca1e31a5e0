"""Where each memory of a recollection goes in its picture: sessions along a time axis, paths between them.

Pure geometry on a :class:`~langchain_ripplemem.schemas.RecallResult`, no I/O:
:mod:`langchain_ripplemem.render.html_page` draws it. Sessions are columns in time
order (the gap to the previous session is noted on the axis); a session's
memories stack in turn order. Columns and rows are a fixed grid, so no two
nodes or labels can overlap however many memories a recall returns.

Nodes are the kept memories (numbered by rank), the expanded memories that
assembly did not keep (``e1``, ``e2``, ...) and the *bridges*: memories an
expansion path ran through (``b1``, ...). Links are the steps of the expansion
paths, each typed by its edge channel.

Example:
    >>> from langchain_ripplemem.schemas import RecallResult
    >>> layout_recall(RecallResult(query="q", namespace=("n",))).nodes
    {}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime

from langchain_ripplemem.index.marks import stated_at
from langchain_ripplemem.schemas import MemoryUnit, RecalledMemory, RecallResult

__all__ = ["COLUMN_WIDTH", "NODE_RADIUS", "ROW_HEIGHT", "Column", "Layout", "Link", "Node", "layout_recall",
           "ways_found"]

COLUMN_WIDTH = 76  # px; fits a 'YYYY-MM-DD' date label at 10 px with room to spare
ROW_HEIGHT = 34
NODE_RADIUS = 11
TOP = 26  # room for an anchor's outer ring above the first row
AXIS_HEIGHT = 62  # gap labels, axis line, session label, date
LEFT = 18
BRIDGE_COLUMN = ("", "not loaded")  # where memories that were not kept go when their unit is unknown
FIRST_HOP = ("semantic", "lexical", "cue")


@dataclass(frozen=True)
class Column:
    """One session (or the column of memories not kept whose units were not given)."""

    key: tuple[str, str]
    index: int
    x: float
    label: str
    time: datetime | None
    gap_days: float | None = None


@dataclass(frozen=True)
class Node:
    """A kept memory (``rank`` from 1, label its rank), or one that was not kept (``rank`` None).

    Not kept: an expanded memory that assembly left out (label ``e1``, ``e2``, ...) or a
    bridge, a memory an expansion path ran through (``b1``, ...).
    """

    id: str
    label: str
    x: float
    y: float
    column: int
    rank: int | None = None
    ways: tuple[str, ...] = ()
    anchor: bool = False
    bridged: bool = False
    unit: MemoryUnit | None = None
    memory: RecalledMemory | None = None

    @property
    def kept(self) -> bool:
        """True for a memory of the result."""
        return self.rank is not None


@dataclass(frozen=True)
class Link:
    """One step of an expansion path, along an edge of type ``channel``."""

    src: str
    dst: str
    channel: str
    round: int
    ends: tuple[str, ...] = ()  # the memories whose expansion paths take this step


@dataclass
class Layout:
    """The picture's geometry (pixels)."""

    columns: list[Column] = field(default_factory=list)
    nodes: dict[str, Node] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)
    width: float = 0.0
    height: float = 0.0
    axis_y: float = 0.0


def ways_found(memory: RecalledMemory) -> tuple[str, ...]:
    """How a memory was found: first-hop views, then ``'<channel>-edge'`` for expansion, in a fixed order.

    Example:
        >>> from langchain_ripplemem.schemas import Hit, MemoryUnit, Provenance
        >>> unit = MemoryUnit.create(namespace=("n",), restatement="x", source=Provenance(
        ...     conversation_id="c", session_id="S1"))
        >>> ways_found(RecalledMemory(unit=unit, score=1.0, provenance=[
        ...     Hit(source="expansion", rank=0, score=0.5, channel="structural"),
        ...     Hit(source="semantic", rank=2, score=0.7)]))
        ('semantic', 'structural-edge')
    """
    found = {h.source if h.source != "expansion" else f"{h.channel}-edge" for h in memory.provenance}
    order = [*FIRST_HOP, "semantic-edge", "structural-edge"]
    return tuple(w for w in order if w in found)


def _turn_order(unit: MemoryUnit | None, uid: str) -> tuple[int, str]:
    if unit is None:
        return (1 << 30, uid)
    index = unit.metadata.get("turn_index")
    return (index if isinstance(index, int) else 1 << 30, ",".join(unit.source.turn_ids))


def _links(result: RecallResult) -> list[Link]:
    """Every step of every expansion path: those of the rounds' traces and of the kept memories' hits."""
    paths = [(path, trace.channels.get(uid, "untyped"), trace.round)
             for trace in result.rounds for uid, path in trace.paths.items()]
    paths += [(hit.path, hit.channel or "untyped", hit.round) for memory in result.memories
              for hit in memory.provenance if hit.source == "expansion"]
    seen: dict[tuple[str, str, str], Link] = {}
    for path, channel, round_ in paths:
        for src, dst in zip(path, path[1:], strict=False):
            link = seen.setdefault((src, dst, channel), Link(src, dst, channel, round_))
            if path[-1] not in link.ends:
                seen[(src, dst, channel)] = replace(link, ends=(*link.ends, path[-1]))
    return list(seen.values())


def layout_recall(result: RecallResult, units: Mapping[str, MemoryUnit] | None = None) -> Layout:
    """Place the memories of ``result``, and those its expansion found or passed but did not keep, on the grid.

    Args:
        result: the recollection to draw.
        units: optional units by id for the memories that were not kept, so they are placed in
            their session and can show their text.
    """
    units = dict(units or {})
    links = _links(result)
    kept = {m.unit.id: m for m in result.memories}
    anchors = {a for trace in result.rounds for a in trace.anchors} | {m.unit.id for m in result.memories
                                                                        if m.is_anchor}
    expanded = list(dict.fromkeys(uid for trace in result.rounds for uid in trace.expanded if uid not in kept))
    bridges = list(dict.fromkeys(i for link in links for i in (link.src, link.dst)
                                 if i not in kept and i not in expanded))
    placed: dict[str, MemoryUnit | None] = {uid: m.unit for uid, m in kept.items()}
    placed.update({uid: units.get(uid) for uid in [*expanded, *bridges]})
    channels = {uid: c for trace in result.rounds for uid, c in trace.channels.items()}

    sessions: dict[tuple[str, str], list[str]] = {}
    times: dict[tuple[str, str], datetime | None] = {}
    for uid, unit in placed.items():
        key = (unit.source.conversation_id, unit.source.session_id) if unit is not None else BRIDGE_COLUMN
        sessions.setdefault(key, []).append(uid)
        when = stated_at(unit) if unit is not None else None
        if when is not None and (times.get(key) is None or when < times[key]):  # type: ignore[operator]
            times[key] = when
        times.setdefault(key, None)

    def column_order(key: tuple[str, str]) -> tuple[bool, bool, datetime | str, str, str]:
        when = times[key]
        return (key == BRIDGE_COLUMN, when is None, when if when is not None else "", key[0], key[1])

    multi = len({k[0] for k in sessions if k != BRIDGE_COLUMN}) > 1
    layout = Layout(links=links)
    rows = 0
    previous: datetime | None = None
    for index, key in enumerate(sorted(sessions, key=column_order)):
        when = times[key]
        gap = (when - previous).total_seconds() / 86_400 if when is not None and previous is not None else None
        label = key[1] if not multi or key == BRIDGE_COLUMN else f"{key[0]}/{key[1]}"
        column = Column(key=key, index=index, x=LEFT + (index + 0.5) * COLUMN_WIDTH, label=label, time=when,
                        gap_days=gap)
        layout.columns.append(column)
        previous = when if when is not None else previous
        members = sorted(sessions[key], key=lambda uid: _turn_order(placed[uid], uid))
        rows = max(rows, len(members))
        for row, uid in enumerate(members):
            memory = kept.get(uid)
            if memory is not None:
                rank: int | None = result.memories.index(memory) + 1
                ways, label = ways_found(memory), str(rank)
            elif uid in expanded:
                rank, ways, label = None, (f"{channels.get(uid, 'untyped')}-edge",), f"e{expanded.index(uid) + 1}"
            else:
                rank, ways, label = None, (), f"b{bridges.index(uid) + 1}"
            layout.nodes[uid] = Node(
                id=uid, label=label, x=column.x, y=TOP + (row + 0.5) * ROW_HEIGHT, column=index, rank=rank,
                ways=ways, anchor=uid in anchors, bridged=bool(ways) and not set(ways) & set(FIRST_HOP),
                unit=placed[uid], memory=memory)
    layout.width = LEFT * 2 + max(1, len(layout.columns)) * COLUMN_WIDTH
    layout.axis_y = TOP + max(rows, 1) * ROW_HEIGHT + 18
    layout.height = layout.axis_y + AXIS_HEIGHT
    return layout
