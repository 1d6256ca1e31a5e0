"""Looking at a namespace: its memories in time order, filtered and paged; what it holds; one memory's links.

What ``ripplemem ui`` shows, read from a namespace's index
(:class:`~langchain_ripplemem.index.namespace_index.NamespaceIndex`) without a pass
over every unit: a 100k-memory namespace holds its units as JSON, parsed only when
read (:class:`~langchain_ripplemem.index.unit_list.UnitList`), so a page parses its
own units and the filters and counts come from what the index keeps anyway:

* time order from the cue table's first day per row (no time: last);
* a person or a place from the cue postings (case-insensitive, as recall matches them);
* a conversation from the per-session rows recall keeps (:func:`~langchain_ripplemem.index.sessions.session_rows`);
* text from the BM25 postings: memories holding every content word of it, stemmed as the lexical view stems.

The functions of a memory (:func:`current_index`, :func:`forget_person`) read it as
its own reads do: caught up with what other processes wrote first.

Example:
    >>> import numpy as np
    >>> from langchain_ripplemem.index.namespace_index import NamespaceIndex
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance, TimeInterval
    >>> from datetime import datetime, timezone
    >>> def unit(text, day, who):
    ...     when = datetime(2026, 3, day, tzinfo=timezone.utc)
    ...     return MemoryUnit.create(namespace=("maya",), restatement=text, participants=[who],
    ...                              time=TimeInterval(start=when, end=when),
    ...                              source=Provenance(conversation_id="c", session_id=f"s{day}"))
    >>> index = NamespaceIndex(("maya",))
    >>> index.add([unit("Maya: I hiked.", 5, "Maya"), unit("Sam: I cooked.", 2, "Sam")], np.ones((2, 2), np.float32))
    >>> page = timeline_page(index, Filters())
    >>> page.total, [u.restatement for u in page.units]
    (2, ['Sam: I cooked.', 'Maya: I hiked.'])
    >>> [u.restatement for u in timeline_page(index, Filters(person="maya")).units]
    ['Maya: I hiked.']
    >>> [(f.label, f.count) for f in overview(index).people]
    [('Maya', 1), ('Sam', 1)]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime, timezone
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, Field

from langchain_ripplemem.index.marks import SUPERSEDED_BY, claims
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.index.sessions import session_rows
from langchain_ripplemem.schemas import DAY_SECONDS, Edge, MemoryUnit, Namespace
from langchain_ripplemem.text.lexical import lexical_tokens
from langchain_ripplemem.write.forget import ForgetReport

if TYPE_CHECKING:
    from langchain_ripplemem.memory import RippleMem

__all__ = ["MAX_FACETS", "MAX_PAGE", "Facet", "Filters", "MemoryLinks", "NamespaceOverview", "TimeBin", "TimelinePage",
           "current_index", "forget_person", "memory_links", "overview", "person_rows", "timeline_page"]

MAX_PAGE = 500  # memories a page holds at most
MAX_FACETS = 200  # people, places and conversations an overview lists at most (the most frequent)
_NONE = np.zeros(0, dtype=np.int64)


class Filters(BaseModel):
    """Which memories a timeline shows: all of them when nothing is set; each filter set narrows it."""

    person: str | None = None
    place: str | None = None
    conversation: str | None = None
    text: str | None = None


class TimeBin(BaseModel):
    """Memories from ``start`` (a day or a month's first day) up to the next bin's start."""

    start: date
    count: int


class TimelinePage(BaseModel):
    """One page of a namespace's memories in time order, and how many the filters leave."""

    namespace: Namespace
    total: int = Field(description="memories the filters leave (all pages)")
    offset: int
    limit: int
    order: Literal["oldest", "newest"]
    units: list[MemoryUnit]
    bins: list[TimeBin] = Field(default_factory=list, description="the filtered memories per day or month")
    bin_unit: Literal["day", "month"] = "month"


class Facet(BaseModel):
    """A person, place or conversation and how many memories have it."""

    value: str = Field(description="what a filter takes (a person's or place's lower-case key, a conversation id)")
    label: str = Field(description="as the memories write it")
    count: int


class NamespaceOverview(BaseModel):
    """What a namespace holds, from its index: counts, the most frequent people, places and conversations."""

    namespace: Namespace
    units: int
    suppressed: int
    undated: int
    first_day: date | None = None
    last_day: date | None = None
    people: list[Facet] = Field(default_factory=list)
    places: list[Facet] = Field(default_factory=list)
    conversations: list[Facet] = Field(default_factory=list)
    more: dict[str, int] = Field(default_factory=dict, description="facets left out past MAX_FACETS, by kind")


class MemoryLinks(BaseModel):
    """One memory and what it is linked to: typed edges, its session neighbours, supersession both ways."""

    unit: MemoryUnit
    edges: list[Edge] = Field(description="every edge touching the memory")
    previous: str | None = Field(default=None, description="the memory before it in its session")
    next: str | None = Field(default=None, description="the memory after it in its session")
    superseded_by: str | None = None
    supersedes: list[str] = Field(default_factory=list, description="memories it makes out of date")
    same_turns: list[str] = Field(default_factory=list, description="other memories made from its turns")


def _day(days: float) -> date:
    return datetime.fromtimestamp(days * DAY_SECONDS, tz=timezone.utc).date()


def _first_days(index: NamespaceIndex) -> np.ndarray:
    """Each row's first day since the epoch (fractional; NaN: no time), from the cue table."""
    return index.cue_rows.row_cue_array(len(index.ids))[:, 2]


def _intersect(rows: np.ndarray | None, more: Iterable[int]) -> np.ndarray:
    found = np.fromiter(more, dtype=np.int64)
    return found if rows is None else np.intersect1d(rows, found, assume_unique=True)


def person_rows(index: NamespaceIndex, person: str) -> np.ndarray:
    """Rows of the memories whose participants include ``person`` (any case), ascending."""
    return np.fromiter(index.postings["participants"].get(person.strip().lower(), ()), dtype=np.int64)


def _conversation_rows(index: NamespaceIndex, conversation: str) -> np.ndarray:
    rows = [r for (conv, _), found in list(session_rows(index).rows.items()) if conv == conversation for r in found]
    return np.unique(np.array(rows, dtype=np.int64)) if rows else _NONE


def _filtered(index: NamespaceIndex, filters: Filters) -> np.ndarray | None:
    """Rows the filters leave, ascending (``None``: no filter, every row).

    Raises:
        ValueError: naming ``text`` when it has no word to search for (only stopwords or punctuation).
    """
    rows: np.ndarray | None = None
    if filters.person:
        rows = _intersect(rows, person_rows(index, filters.person))
    if filters.place:
        rows = _intersect(rows, index.postings["locations"].get(filters.place.strip().lower(), ()))
    if filters.conversation:
        rows = _intersect(rows, _conversation_rows(index, filters.conversation))
    if filters.text and filters.text.strip():
        terms = lexical_tokens(filters.text)
        if not terms:
            raise ValueError(f"text {filters.text!r} has no word to search for (only common words or punctuation)")
        for term in dict.fromkeys(terms):
            rows = _intersect(rows, index.term_rows(term))
    return rows


def _bins(days: np.ndarray) -> tuple[list[TimeBin], Literal["day", "month"]]:
    """Counts per day (a span of up to 90 days) or per month of the rows' first days (in numpy: 100k rows)."""
    epoch_days = np.floor(days[~np.isnan(days)]).astype(np.int64).astype("datetime64[D]")
    if not len(epoch_days):
        return [], "month"
    unit: Literal["day", "month"] = "day" if int((epoch_days.max() - epoch_days.min()).astype(np.int64)) <= 90 \
        else "month"
    found, counts = np.unique(epoch_days if unit == "day" else epoch_days.astype("datetime64[M]"), return_counts=True)
    return [TimeBin(start=start, count=int(count))
            for start, count in zip(found.astype("datetime64[D]").tolist(), counts, strict=True)], unit


def timeline_page(index: NamespaceIndex, filters: Filters, *, offset: int = 0, limit: int = 50,
                  order: Literal["oldest", "newest"] = "oldest", at: date | None = None) -> TimelinePage:
    """One page of the memories ``filters`` leave, in time order (memories without a time last).

    Args:
        index: the namespace's read index.
        filters: what to show.
        offset: memories to skip.
        limit: memories a page holds (1 to :data:`MAX_PAGE`).
        order: ``"oldest"`` or ``"newest"`` first; equal times keep the order they were written in.
        at: start the page at the first memory of this day or after it (before it, ``"newest"``);
            ``offset`` is then where that memory is.

    Raises:
        ValueError: naming ``offset``, ``limit``, ``order`` or ``text`` when unusable.
    """
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValueError(f"offset must be a whole number of at least 0, got {offset!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise ValueError(f"limit must be a whole number from 1 to {MAX_PAGE}, got {limit!r}")
    if order not in ("oldest", "newest"):
        raise ValueError(f"order must be 'oldest' or 'newest', got {order!r}")
    rows = _filtered(index, filters)
    days = _first_days(index)
    if rows is None:
        rows = np.arange(len(index.ids), dtype=np.int64)
    chosen = days[rows]
    undated = np.isnan(chosen)
    key = np.where(undated, 0.0, chosen if order == "oldest" else -chosen)
    ordered = rows[np.lexsort((rows if order == "oldest" else -rows, key, undated))]
    if at is not None:
        point = (datetime(at.year, at.month, at.day, tzinfo=timezone.utc).timestamp()) / DAY_SECONDS
        times = days[ordered]
        dated = int((~np.isnan(times)).sum())  # the dated rows come first, sorted
        before = times[:dated] < point if order == "oldest" else times[:dated] >= point + 1
        offset = int(before.sum())
    page = ordered[offset:offset + limit].tolist()
    bins, unit = _bins(chosen)
    return TimelinePage(namespace=index.namespace, total=len(ordered), offset=offset, limit=limit, order=order,
                        units=index.units.take(page) if page else [], bins=bins, bin_unit=unit)


def _label(index: NamespaceIndex, field: str, key: str, rows: Sequence[int]) -> str:
    """How the memories write a posting's key: as the first memory holding it does."""
    unit = index.units[rows[0]]
    return next((v.strip() for v in getattr(unit, field) if v.strip().lower() == key), key)


def _facets(index: NamespaceIndex, field: str) -> tuple[list[Facet], int]:
    postings = index.postings[field]
    # people's and places' keys are strings (the day buckets' are numbers)
    counted = sorted(((str(key), rows) for key, rows in list(postings.items()) if len(rows)),
                     key=lambda item: (-len(item[1]), item[0]))
    kept = counted[:MAX_FACETS]
    return [Facet(value=key, label=_label(index, field, key, rows), count=len(rows)) for key, rows in kept], \
        len(counted) - len(kept)


def overview(index: NamespaceIndex) -> NamespaceOverview:
    """What the namespace of ``index`` holds: counts, and its people, places and conversations by frequency."""
    people, more_people = _facets(index, "participants")
    places, more_places = _facets(index, "locations")
    per_conversation: dict[str, int] = {}
    for (conversation, _), rows in list(session_rows(index).rows.items()):
        per_conversation[conversation] = per_conversation.get(conversation, 0) + len(rows)
    conversations = sorted(per_conversation.items(), key=lambda item: (-item[1], item[0]))
    days = _first_days(index)
    dated = days[~np.isnan(days)]
    return NamespaceOverview(
        namespace=index.namespace, units=len(index.ids), suppressed=len(index.suppressed),
        undated=len(days) - len(dated), first_day=_day(float(dated.min())) if len(dated) else None,
        last_day=_day(float(dated.max())) if len(dated) else None, people=people, places=places,
        conversations=[Facet(value=c, label=c, count=n) for c, n in conversations[:MAX_FACETS]],
        more={kind: n for kind, n in (("people", more_people), ("places", more_places),
                                      ("conversations", len(conversations) - MAX_FACETS)) if n > 0})


def _supersedes(index: NamespaceIndex, unit: MemoryUnit) -> list[str]:
    """Memories ``unit`` makes out of date: those marked superseded by it, then those it claims to supersede."""
    marked = list(index.supersedes.get(unit.id, ()))
    return list(dict.fromkeys([*marked, *(old for old in claims(unit) if old in index.pos)]))


def memory_links(index: NamespaceIndex, unit_id: str, edges: list[Edge]) -> MemoryLinks | None:
    """``unit_id``'s memory with ``edges`` (those touching it) and its other links; ``None`` when not in ``index``."""
    row = index.pos.get(unit_id)
    if row is None:
        return None
    unit = index.units[row]
    before, after = (int(r) for r in session_rows(index).neighbours[row])
    session = session_rows(index).rows.get((unit.source.conversation_id, unit.source.session_id), ())
    turns = set(unit.source.turn_ids)
    same = [index.ids[r] for r in session if r != row and turns & set(index.units[r].source.turn_ids)] if turns else []
    superseded_by = unit.metadata.get(SUPERSEDED_BY)
    return MemoryLinks(unit=unit, edges=edges, previous=index.ids[before] if before >= 0 else None,
                       next=index.ids[after] if after >= 0 else None,
                       superseded_by=superseded_by if isinstance(superseded_by, str) else None,
                       supersedes=_supersedes(index, unit), same_turns=same)


def current_index(memory: RippleMem, namespace: Namespace) -> NamespaceIndex:
    """``namespace``'s index in ``memory``, caught up with what other processes wrote (a read: it links nothing).

    The index as the last whole write left it: a write under way in this process is not seen half done.
    """
    memory.get((), namespace=namespace)  # every read of the facade catches its namespace up first
    return memory.index.pinned(namespace)


def forget_person(memory: RippleMem, person: str, namespace: Namespace) -> ForgetReport:
    """Delete every memory of ``namespace`` whose participants include ``person`` (any case), as ``memory.delete``.

    Raises:
        ValueError: naming ``person`` when it is not a non-empty string.
    """
    if not isinstance(person, str) or not person.strip():
        raise ValueError(f"person must be a non-empty string, got {person!r}")
    index = current_index(memory, namespace)
    ids = [index.ids[row] for row in person_rows(index, person).tolist()]
    return memory.delete(ids, namespace=namespace) if ids else ForgetReport(namespace=namespace)
