r"""Reading a memory without a question: one memory and what it links to, and the memories of a window of time.

Recall answers a question; an agent whose first recall did not cover it walks on from
what it found. :func:`explore` shows one memory with where it came from (its
conversation, session and turns, and the memories said just before and after it)
and the memories its edges reach, grouped by edge type, strongest first.
:func:`timeline` lists the memories whose time falls in a window, oldest first, a
page at a time, optionally only those a person took part in. Both read through a
:class:`~langchain_ripplemem.recall.reader.MemoryReader` (``RippleMem.reader``, a
served memory's reader), so the agent tools, the MCP server and the served graphs
share them; suppressed memories are never shown, as recall never returns them.
``describe()`` is the text a model reads, one :func:`~langchain_ripplemem.render.plain_text.memory_line`
per memory; an unknown id or an empty window is a result that says so, not an error.

Example:
    >>> from langchain_ripplemem import RippleMem
    >>> memory = RippleMem()
    >>> _ = memory.add_conversation({"id": "c", "sessions": [
    ...     {"id": "S1", "time": "2026-03-02T19:00:00Z", "turns": [
    ...         {"id": "t1", "speaker": "Maya", "text": "The allergist confirmed it: I'm allergic to shellfish."}]},
    ...     {"id": "S2", "time": "2026-03-20T19:00:00Z", "turns": [
    ...         {"id": "t2", "speaker": "Sam", "text": "My cousin cooks at Harbor Grill, their shellfish is famous."},
    ...         {"id": "t3", "speaker": "Maya", "text": "I've heard good things about that place."}]}]},
    ...     namespace="maya")
    >>> page = timeline(memory.reader, "2026-03-15", "2026-03-31", person="sam", namespace="maya")
    >>> print(page.describe())  # doctest: +ELLIPSIS
    1 memory from 2026-03-15 to 2026-03-31 with Sam in maya, oldest first:
    - [...] | 2026-03-20 | Sam: My cousin cooks at Harbor Grill, their shellfish is famous.
    >>> explored = explore(memory.reader, page.memories[0].id, namespace="maya")
    >>> print("\n".join(explored.describe().splitlines()[:3]))  # doctest: +ELLIPSIS
    Memory [...] | 2026-03-20 | Sam: My cousin cooks at Harbor Grill, their shellfish is famous.
    From conversation c, session S2 (2026-03-20 19:00 UTC), turn t2, said by Sam.
    Said after it: [...] | 2026-03-20 | Maya: I've heard good things about that place.
    >>> print(explore(memory.reader, "0" * 32, namespace="maya").describe())
    No memory with id '00000000000000000000000000000000' in maya.

"""

from __future__ import annotations

from datetime import datetime, time
from typing import TYPE_CHECKING, get_args

import numpy as np
from pydantic import BaseModel, Field

from langchain_ripplemem.index.marks import SUPERSEDED_BY, VALID_UNTIL, is_suppressed
from langchain_ripplemem.index.sessions import NO_ROW, neighbour_rows
from langchain_ripplemem.recall.filters import RecallFilter, in_window, people_rows, recall_filter, row_spans
from langchain_ripplemem.render.plain_text import memory_line
from langchain_ripplemem.schemas import EdgeType, MemoryUnit, Namespace, counted, format_namespace, validate_namespace
from langchain_ripplemem.text.names import canonical_name

if TYPE_CHECKING:
    from langchain_ripplemem.index.namespace_index import NamespaceIndex
    from langchain_ripplemem.recall.reader import MemoryReader

__all__ = ["MAX_LINKS", "MAX_PAGE_SIZE", "LinkedMemory", "MemoryNeighbourhood", "SourceTurns", "TimelinePage",
           "explore", "model_line", "timeline"]

#: The most linked memories :func:`explore` shows per edge type.
MAX_LINKS = 50
#: The longest page :func:`timeline` gives.
MAX_PAGE_SIZE = 100
_EDGE_TYPES: tuple[EdgeType, ...] = get_args(EdgeType)


def model_line(unit: MemoryUnit) -> str:
    """``[id] | days | text``, with the newer memory that supersedes it when one does."""
    line = memory_line(f"[{unit.id}]", unit, undated="undated")
    newer = unit.metadata.get(SUPERSEDED_BY)
    if newer:  # a model should know the fact was updated, and where to read the update
        line += f" (superseded from {str(unit.metadata.get(VALID_UNTIL, ''))[:10]} by [{newer}])"
    return line


class SourceTurns(BaseModel):
    """Where a memory came from: its turns, and the memories said just before and after it in its session."""

    conversation_id: str
    session_id: str
    turn_ids: list[str] = Field(default_factory=list)
    session_time: datetime | None = None
    speaker: str | None = None
    before: MemoryUnit | None = Field(default=None, description="the memory said just before, in the session")
    after: MemoryUnit | None = Field(default=None, description="the memory said just after, in the session")

    def describe(self) -> list[str]:
        """Lines for a model: the provenance, then the memories around it."""
        when = f" ({self.session_time.strftime('%Y-%m-%d %H:%M %Z').strip()})" if self.session_time else ""
        turns = f", {'turn' if len(self.turn_ids) == 1 else 'turns'} {', '.join(self.turn_ids)}" \
            if self.turn_ids else ""
        said = f", said by {self.speaker}" if self.speaker else ""
        lines = [f"From conversation {self.conversation_id}, session {self.session_id}{when}{turns}{said}."]
        lines += [f"Said {where} it: {model_line(unit)}" for where, unit in (("before", self.before),
                                                                           ("after", self.after)) if unit]
        return lines


class LinkedMemory(BaseModel):
    """A memory an edge reaches, and the edge's weight."""

    memory: MemoryUnit
    weight: float


class MemoryNeighbourhood(BaseModel):
    """One memory, where it came from, and the memories its edges reach (``memory`` is ``None``: no such id)."""

    namespace: Namespace
    memory_id: str
    memory: MemoryUnit | None = None
    source: SourceTurns | None = None
    links: dict[EdgeType, list[LinkedMemory]] = Field(
        default_factory=dict, description="per edge type, the strongest links first (at most the limit asked)")
    link_counts: dict[EdgeType, int] = Field(default_factory=dict, description="all links per edge type")

    def describe(self) -> str:
        """The text a model reads."""
        ns = format_namespace(self.namespace)
        if self.memory is None or self.source is None:
            return f"No memory with id {self.memory_id!r} in {ns}."
        lines = [f"Memory {model_line(self.memory)}", *self.source.describe()]
        if not any(self.link_counts.values()):
            return "\n".join([*lines, "No linked memories."])
        lines.append("Linked memories, strongest first:")
        for edge_type, linked in self.links.items():
            total = self.link_counts.get(edge_type, len(linked))
            more = f", the {len(linked)} strongest shown" if total > len(linked) else ""
            lines.append(f"{edge_type} ({counted(total, 'link')}{more}):")
            lines += [f"- {model_line(link.memory)} (weight {link.weight:.2f})" for link in linked]
        return "\n".join(lines)


class TimelinePage(BaseModel):
    """One page of the memories of a window of time, oldest first."""

    namespace: Namespace
    since: datetime | None = None
    until: datetime | None = None
    person: str | None = None
    page: int = 1
    page_size: int
    total: int = Field(description="memories in the window (every page)")
    memories: list[MemoryUnit] = Field(default_factory=list)

    @property
    def pages(self) -> int:
        """How many pages the window fills."""
        return -(-self.total // self.page_size)

    def describe(self) -> str:
        """The text a model reads."""
        what = _window_words(self.since, self.until) + (f" with {self.person}" if self.person else "")
        ns = format_namespace(self.namespace)
        if not self.total:
            return f"No memories {what} in {ns}."
        if not self.memories:
            return (f"No memories on page {self.page}: {counted(self.total, 'memory', 'memories')} {what} in {ns} "
                    f"fill {counted(self.pages, 'page')} of {self.page_size}.")
        first = (self.page - 1) * self.page_size + 1
        last = first + len(self.memories) - 1
        shown = f"{counted(self.total, 'memory', 'memories')}" if self.pages == 1 else \
            f"memory {first} of {self.total}" if first == last else f"memories {first}-{last} of {self.total}"
        more = f" (page {self.page} of {self.pages}; page={self.page + 1} for more)" if self.page < self.pages else \
            f" (page {self.page} of {self.pages}, the last)" if self.pages > 1 else ""
        return "\n".join([f"{shown} {what} in {ns}, oldest first{more}:",
                          *(f"- {model_line(unit)}" for unit in self.memories)])


def _window_words(since: datetime | None, until: datetime | None) -> str:
    """``from 2026-03-01 to 2026-03-07``, ``from ...``, ``until ...`` or ``at any time``."""
    def shown(when: datetime) -> str:  # a day when the end is a day's first or last instant, else the minute
        return when.date().isoformat() if when.timetz().replace(tzinfo=None) in (time.min, time.max) else \
            when.isoformat(timespec="minutes")
    if since is not None and until is not None:
        return f"from {shown(since)} to {shown(until)}"
    if since is not None:
        return f"from {shown(since)}"
    return f"until {shown(until)}" if until is not None else "at any time"


def _namespace(reader: MemoryReader, namespace: Namespace | str | None) -> tuple[Namespace, NamespaceIndex]:
    ns = reader.default_namespace if namespace is None else validate_namespace(namespace)
    reader.prepare(ns)
    return ns, reader.namespace_index(ns)


def _positive(value: object, argument: str, most: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or (most is not None and value > most):
        bound = f"from 1 to {most}" if most is not None else "of at least 1"
        raise ValueError(f"{argument} must be an integer {bound}, got {value!r}")
    return value


def explore(reader: MemoryReader, memory_id: str, *, namespace: Namespace | str | None = None,
            limit: int = 5) -> MemoryNeighbourhood:
    """One memory of ``namespace``, where it came from, and up to ``limit`` linked memories per edge type.

    Args:
        reader: the memory's reader (``RippleMem.reader``).
        memory_id: the memory's id, as recall shows it.
        namespace: whose memory (default: the reader's default namespace).
        limit: the most linked memories shown per edge type, strongest edge first (1 to :data:`MAX_LINKS`).

    Returns:
        The neighbourhood; its ``memory`` is ``None`` when the namespace has no (unsuppressed) memory of that id.

    Raises:
        ValueError: naming ``memory_id``, ``limit`` or ``namespace`` when unusable.
    """
    if not isinstance(memory_id, str) or not memory_id.strip():
        raise ValueError(f"memory_id must be a memory id as recall shows it, got {memory_id!r}")
    limit = _positive(limit, "limit", MAX_LINKS)
    memory_id = memory_id.strip().strip("[]")
    ns, index = _namespace(reader, namespace)
    unit = index.unit(memory_id)
    if unit is None or is_suppressed(unit):
        return MemoryNeighbourhood(namespace=ns, memory_id=memory_id)
    before, after = (index.units[row] if row != NO_ROW else None for row in neighbour_rows(index)[index.pos[unit.id]])
    speaker = unit.metadata.get("speaker")
    session_time = unit.metadata.get("session_time")
    source = SourceTurns(conversation_id=unit.source.conversation_id, session_id=unit.source.session_id,
                         turn_ids=list(unit.source.turn_ids), session_time=session_time,
                         speaker=speaker if isinstance(speaker, str) and speaker else None,
                         before=before if before is not None and not is_suppressed(before) else None,
                         after=after if after is not None and not is_suppressed(after) else None)
    linked: dict[EdgeType, list[LinkedMemory]] = {edge_type: [] for edge_type in _EDGE_TYPES}
    edges = reader.walkable_edges(ns)
    if unit.id in edges:
        for neighbour, data in edges.adj[unit.id].items():
            other = index.unit(neighbour)
            if other is None or is_suppressed(other):  # deleted, newer than this read, or corrected
                continue
            for edge_type, weight in data["types"].items():
                linked[edge_type].append(LinkedMemory(memory=other, weight=float(weight)))
    for links in linked.values():
        links.sort(key=lambda link: (-link.weight, link.memory.id))
    return MemoryNeighbourhood(namespace=ns, memory_id=memory_id, memory=unit, source=source,
                               links={t: links[:limit] for t, links in linked.items() if links},
                               link_counts={t: len(links) for t, links in linked.items() if links})


def _took_part(index: NamespaceIndex, n: int, person: str) -> np.ndarray:
    """Per row of the first ``n``: whether ``person`` said the memory or is among its participants."""
    said, involved = people_rows(index, n, (person,))
    return said | involved


def _timeline_rows(index: NamespaceIndex, window: RecallFilter, person: str | None) -> np.ndarray:
    """The rows in ``window`` (and with ``person``), not suppressed, in timeline order.

    A row's span is its time, or, without one, the instant it was said; it is in the window
    when the two share an instant: the rule of recall's filter (``recall/filters.py``, which
    the tests hold this to). The order is the span's start, then its end; equal spans keep
    the order they were written in. Only the rows without a time are read (when they were
    said); the rest comes from what the index keeps per row.
    """
    n = len(index.ids)
    start, end = spans = row_spans(index, n)
    keep = in_window(spans, window.since, window.until)
    pos = index.pos
    keep[[row for uid in index.suppressed if (row := pos.get(uid)) is not None and row < n]] = False
    if person is not None:
        keep &= _took_part(index, n, person)
    rows = np.flatnonzero(keep)
    return rows[np.lexsort((rows, end[rows], start[rows]))]


def timeline(reader: MemoryReader, since: object = None, until: object = None, *, person: str | None = None,
             namespace: Namespace | str | None = None, page: int = 1, page_size: int = 20,
             now: datetime | None = None) -> TimelinePage:
    """The memories of ``namespace`` whose time meets the window, oldest first, one page of them.

    The window is the one recall's ``since``/``until`` filter reads (:mod:`~langchain_ripplemem.recall.filters`):
    a memory is in it when its time (a stated "last week", else the day it was said) shares an instant
    with it; a memory with no time, when it was said inside it.

    Args:
        reader: the memory's reader (``RippleMem.reader``).
        since: the window's start: a date, a datetime, an ISO string or a time phrase ("last week"); ``None``: open.
        until: the window's end, read the same way (a day means its end); ``None``: open.
        person: only memories this person said or took part in (a name; a first name matches a full one).
        namespace: whose memories (default: the reader's default namespace).
        page: which page, from 1.
        page_size: memories per page (1 to :data:`MAX_PAGE_SIZE`).
        now: what time phrases are relative to (default: now).

    Raises:
        ValueError: naming ``since``, ``until``, ``person``, ``page``, ``page_size`` or ``namespace`` when unusable.
    """
    window = recall_filter(since, until, reference=now)  # the window recall's since/until filter reads
    page, page_size = _positive(page, "page"), _positive(page_size, "page_size", MAX_PAGE_SIZE)
    if person is not None and (not isinstance(person, str) or not canonical_name(person)):
        raise ValueError(f"person must be a name, got {person!r}")
    ns, index = _namespace(reader, namespace)
    found = _timeline_rows(index, window, person)
    first = (page - 1) * page_size
    return TimelinePage(namespace=ns, since=window.since, until=window.until,
                        person=canonical_name(person) if person is not None else None, page=page,
                        page_size=page_size, total=len(found),
                        memories=index.units.take(found[first:first + page_size].tolist()))
