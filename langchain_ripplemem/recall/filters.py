"""Recall filters: a time window, speakers and a conversation, applied before anything is ranked.

``RippleMem.recall(..., since=, until=, speakers=, conversation_id=)`` and every other
surface (the retriever, the store's ``filter``, the tools, the recall graph's input or
context) build one :class:`RecallFilter`. Recall turns it into more hidden ids, once
per recall, from the pinned namespace index (:func:`outside`): the rows of the
named speakers and of the conversation, and each row's time. Hidden memories are
left out of every view, anchor, expansion path and the assembly, so a memory outside
the filter is never a candidate, and the controller judges what is left.

* ``since`` / ``until``: an ISO date (``since`` from its first instant, ``until`` to its
  last), an ISO datetime (naive = UTC), a ``date`` or ``datetime``, or a time phrase recall
  grounds in questions ("last week", "yesterday", "3 days ago", "May 2026"), grounded
  relative to the reference time: ``reference_time``, else ``as_of``, else now. A memory
  is inside when its time interval (the day it was said, or the time its words name)
  shares an instant with the window; one without a time, when it was stated inside it.
* ``speakers``: a name or a list of names; a memory is inside when its speaker is one of
  them, or, for memories that record no speaker (a chat model's extraction), when one of
  them is among its participants. A name matches as the timeline's ``person`` does
  (:func:`~langchain_ripplemem.text.names.refers_to`): in any case, and a first name
  matches a full name ("maya" keeps what "Maya Lindqvist" said, not what "Mayan" said).
* ``conversation_id``: only the memories of that conversation.

Example:
    >>> from datetime import datetime, timezone
    >>> now = datetime(2026, 5, 6, 12, tzinfo=timezone.utc)  # a Wednesday
    >>> f = recall_filter(since="last week", until="2026-05-03", speakers="Maya", reference=now)
    >>> f.since.isoformat(), f.until.isoformat(), f.speakers
    ('2026-04-27T00:00:00+00:00', '2026-05-03T23:59:59.999999+00:00', ('maya',))
    >>> recall_filter(reference=now).active
    False
    >>> recall_filter(speakers=[""], reference=now)
    Traceback (most recent call last):
    ...
    ValueError: speakers must be a speaker name or a list of non-empty names, got ['']

"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timezone
from typing import Any

import numpy as np

from langchain_ripplemem.index.marks import stated_at
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.index.sessions import per_index, session_rows
from langchain_ripplemem.recall.bridging import epoch_micros, row_times
from langchain_ripplemem.recall.cue_bonus import row_speakers, speaker_of
from langchain_ripplemem.schemas import aware
from langchain_ripplemem.text.names import refers_to
from langchain_ripplemem.text.time.timeparse import ground_time

__all__ = ["FILTER_NAMES", "RecallFilter", "empty_filter_warning", "in_window", "outside", "people_rows",
           "recall_filter", "row_spans", "speaker_codes"]

_log = logging.getLogger(__name__)

#: The filter's argument names, the same on every surface.
FILTER_NAMES = ("since", "until", "speakers", "conversation_id")


@dataclass(frozen=True)
class RecallFilter:
    """What a recall may return: a time window, speakers (lower-cased) and a conversation; ``None``: any."""

    since: datetime | None = None
    until: datetime | None = None
    speakers: tuple[str, ...] | None = None
    conversation_id: str | None = None

    @property
    def active(self) -> bool:
        """Whether it leaves anything out at all."""
        return any(v is not None for v in (self.since, self.until, self.speakers, self.conversation_id))

    def describe(self) -> str:
        """The filter in words, for a warning: ``since 2026-04-27T00:00:00+00:00, speakers maya``."""
        parts = [f"since {self.since.isoformat()}" if self.since else "",
                 f"until {self.until.isoformat()}" if self.until else "",
                 f"speakers {', '.join(self.speakers)}" if self.speakers else "",
                 f"conversation {self.conversation_id!r}" if self.conversation_id is not None else ""]
        return ", ".join(p for p in parts if p)


def _moment(value: Any, name: str, reference: datetime, end: bool) -> datetime | None:
    """``since`` (``end=False``) or ``until`` as an aware datetime: a day or phrase gives its first or last instant."""
    if value is None or isinstance(value, datetime):
        return None if value is None else aware(value)
    if isinstance(value, date):
        return datetime.combine(value, time.max if end else time.min, tzinfo=timezone.utc)
    if isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            return _moment(date.fromisoformat(text), name, reference, end)
        except ValueError:
            pass
        try:
            return aware(datetime.fromisoformat(text))
        except ValueError:
            pass
        grounded = ground_time(text, reference)
        if len(grounded) == 1 and len(grounded[0][0]) == len(text):  # the whole value is one time phrase
            interval = grounded[0][1]
            return interval.end if end else interval.start
    raise ValueError(f"{name} must be an ISO date or datetime, a date, a datetime or a time phrase such as "
                     f"'last week', got {value!r}")


def _speakers(value: Any) -> tuple[str, ...] | None:
    names = [value] if isinstance(value, str) else value
    if value is None:
        return None
    if isinstance(names, Iterable) and not isinstance(names, (bytes, dict)):
        names = list(names)
        if names and all(isinstance(n, str) and n.strip() for n in names):
            return tuple(dict.fromkeys(n.strip().lower() for n in names))
    raise ValueError(f"speakers must be a speaker name or a list of non-empty names, got {value!r}")


def recall_filter(since: Any = None, until: Any = None, speakers: Any = None, conversation_id: Any = None, *,
                  reference: datetime | None = None) -> RecallFilter:
    """Check and ground a recall's filter arguments (``reference``: "now" for time phrases, default now).

    Raises:
        ValueError: naming ``since``, ``until``, ``speakers`` or ``conversation_id`` when unusable,
            and ``since`` when it is later than ``until``.
    """
    ref = aware(reference) if reference is not None else datetime.now(timezone.utc)
    start, stop = _moment(since, "since", ref, end=False), _moment(until, "until", ref, end=True)
    if start is not None and stop is not None and start > stop:
        raise ValueError(f"since ({start.isoformat()}) must not be later than until ({stop.isoformat()})")
    if conversation_id is not None and (not isinstance(conversation_id, str) or not conversation_id.strip()):
        raise ValueError(f"conversation_id must be a non-empty string, got {conversation_id!r}")
    return RecallFilter(start, stop, _speakers(speakers), conversation_id)


def outside(index: NamespaceIndex, flt: RecallFilter) -> set[str]:
    """The ids of ``index`` the filter leaves out (none when it is not active)."""
    n = len(index.ids)
    if not flt.active or n == 0:
        return set()
    inside = np.ones(n, dtype=bool)
    if flt.conversation_id is not None:
        rows = [r for (conv, _), held in session_rows(index).rows.items() if conv == flt.conversation_id
                for r in held if r < n]
        inside &= np.isin(np.arange(n), rows)
    if flt.speakers is not None:
        inside &= _spoken_by(index, n, flt.speakers)
    if flt.since is not None or flt.until is not None:
        inside &= in_window(row_spans(index, n), flt.since, flt.until)
    return {index.ids[r] for r in np.flatnonzero(~inside).tolist()}


def _coded(said: list[str | None], names: tuple[str | None, ...] = ()) -> tuple[np.ndarray, tuple[str | None, ...]]:
    """``said`` as numbers into ``names`` (extended by the names it adds, in order)."""
    number = {name: i for i, name in enumerate(names)}
    codes = np.fromiter((number.setdefault(name, len(number)) for name in said), dtype=np.int32, count=len(said))
    return codes, tuple(number)


def speaker_codes(index: NamespaceIndex) -> tuple[np.ndarray, tuple[str | None, ...]]:
    """Per row, the number of its lower-cased speaker in the names given with them (kept with the index).

    Built from recall's per-row speakers, grown from the new rows: a person's rows are then
    one comparison of numbers, not a pass over 100k names at each call.
    """
    def grown(view: NamespaceIndex, known: tuple[np.ndarray, tuple[str | None, ...]], before: int,
              n: int) -> tuple[np.ndarray, tuple[str | None, ...]]:  # under per_index's lock: row_speakers not asked
        codes, names = _coded([speaker_of(unit) for unit in view.units[before:n]], known[1])
        return np.concatenate([known[0], codes]), names
    return per_index(index, "speaker_codes", lambda view, n: _coded(row_speakers(view)[:n]), grown)


def people_rows(index: NamespaceIndex, n: int, names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Per row of the first ``n``: said by one of ``names``; one of ``names`` among its participants.

    Matched by :func:`~langchain_ripplemem.text.names.refers_to`, from what the index keeps (the
    rows' speakers, the participants' postings): each distinct name once, no unit read.
    """
    codes, speakers = speaker_codes(index)
    said = np.isin(codes[:n], [i for i, s in enumerate(speakers)
                               if s is not None and any(refers_to(name, s) for name in names)])
    involved = np.zeros(n, dtype=bool)
    for key in list(index.postings["participants"]):
        if any(refers_to(name, str(key)) for name in names):
            rows = index.cue_rows.posting_array("participants", key)
            involved[rows[rows < n]] = True  # cached, as recall reads it
    return said, involved


def _spoken_by(index: NamespaceIndex, n: int, names: tuple[str, ...]) -> np.ndarray:
    """Rows said by one of ``names``, matched as the timeline matches a person; with no speaker, its participants."""
    said, involved = people_rows(index, n, names)
    codes, speakers = speaker_codes(index)
    unsaid = codes[:n] == speakers.index(None) if None in speakers else np.zeros(n, dtype=bool)
    return said | (unsaid & involved)


def row_spans(index: NamespaceIndex, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row of the first ``n``, the start and end of its span in epoch microseconds.

    A row's span is its time; a row without one spans the instant it was said (read from
    the unit each call: ``update_metadata`` may change when it was said). Recall's filter
    and the timeline read windows and order from these.
    """
    times = row_times(index)
    start, end = times.start[:n].copy(), times.end[:n].copy()
    for row in np.flatnonzero(~times.timed[:n]).tolist():
        start[row] = end[row] = epoch_micros(stated_at(index.units[row]))
    return start, end


def in_window(spans: tuple[np.ndarray, np.ndarray], since: datetime | None, until: datetime | None) -> np.ndarray:
    """Which of the :func:`row_spans` share an instant with the window from ``since`` to ``until`` (``None``: open)."""
    start, end = spans
    inside = np.ones(len(start), dtype=bool)
    if since is not None:
        inside &= end >= epoch_micros(since)
    if until is not None:
        inside &= start <= epoch_micros(until)
    return inside


def empty_filter_warning(index: NamespaceIndex, hidden: Collection[str], flt: RecallFilter) -> list[str]:
    """The result's warning (also logged, INFO) when the filter leaves no memory of a namespace that has some.

    Not an error: "nothing Sam said last week" is an answer.
    """
    if not len(index.ids) or len(hidden) < len(index.ids):
        return []
    warning = f"filter: no memory of {'/'.join(index.namespace)} is inside it ({flt.describe()}); nothing is returned"
    _log.info(warning)
    return [warning]
