"""A window of time a caller names: ``since`` and ``until`` as dates, datetimes or time words.

Both ends are optional and inclusive. Each takes a ``date`` or ``datetime`` (naive is UTC), an
ISO 8601 string (``"2023-05-08"``, ``"2023-05-08T13:56:00Z"``) or any stamp
:func:`~langchain_ripplemem.timestamps.parse_timestamp` reads, or a phrase the write path
grounds as a whole (``"last week"``, ``"yesterday"``, ``"May 2023"``, ``"3 days ago"``),
relative to ``now``. An end that names a day or longer covers all of it: ``since`` is its
first instant, ``until`` its last, so ``until="2023-05-08"`` keeps that day's memories.

Example:
    >>> from datetime import datetime, timezone
    >>> window = time_window("2023-05-01", "2023-05-07")
    >>> window.since.isoformat(), window.until.isoformat()
    ('2023-05-01T00:00:00+00:00', '2023-05-07T23:59:59.999999+00:00')
    >>> monday = datetime(2023, 5, 8, tzinfo=timezone.utc)
    >>> time_window("last week", None, now=monday).describe()
    'from 2023-05-01'
    >>> time_window(None, "2023-05-08T13:56:00Z").describe()
    'until 2023-05-08T13:56+00:00'
    >>> time_window("soon", None)
    Traceback (most recent call last):
    ...
    ValueError: since must be an ISO date or datetime ('2023-05-08', '2023-05-08T13:56:00Z') or a time \
phrase such as 'last week', 'yesterday', 'May 2023' or '3 days ago', got 'soon'

"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timezone

from langchain_ripplemem.schemas import TimeInterval
from langchain_ripplemem.text.time.timeparse import ground_time
from langchain_ripplemem.timestamps import aware, parse_timestamp

__all__ = ["TimeWindow", "time_window"]

_ACCEPTED = ("an ISO date or datetime ('2023-05-08', '2023-05-08T13:56:00Z') or a time phrase such as "
             "'last week', 'yesterday', 'May 2023' or '3 days ago'")


@dataclass(frozen=True)
class TimeWindow:
    """An inclusive window of time; ``None`` leaves that end open."""

    since: datetime | None = None
    until: datetime | None = None

    def holds(self, interval: TimeInterval) -> bool:
        """True when ``interval`` shares an instant with the window."""
        return (self.since is None or interval.end >= self.since) and \
            (self.until is None or interval.start <= self.until)

    def describe(self) -> str:
        """The window in words: ``from 2023-05-01 to 2023-05-07``, ``from ...``, ``until ...`` or ``at any time``."""
        since, until = self.since, self.until
        if since is not None and until is not None:
            return f"from {_shown(since)} to {_shown(until)}"
        if since is not None:
            return f"from {_shown(since)}"
        return f"until {_shown(until)}" if until is not None else "at any time"


def _shown(when: datetime) -> str:
    """A day when ``when`` starts or ends one, else the minute and its offset."""
    if when.timetz().replace(tzinfo=None) in (time.min, time.max):
        return when.date().isoformat()
    return when.isoformat(timespec="minutes")


def time_window(since: object = None, until: object = None, *, now: datetime | None = None) -> TimeWindow:
    """Read ``since`` and ``until`` into a :class:`TimeWindow` (see the module docs for what each takes).

    Args:
        since: the window's first instant, or ``None`` for no start.
        until: the window's last instant, or ``None`` for no end.
        now: what relative phrases are grounded against (default: the current time, UTC).

    Raises:
        ValueError: naming ``since`` or ``until`` when it cannot be read, or both when ``since`` is after ``until``.
    """
    reference = aware(now) if now is not None else datetime.now(timezone.utc)
    window = TimeWindow(_end(since, "since", reference, last=False), _end(until, "until", reference, last=True))
    if window.since is not None and window.until is not None and window.since > window.until:
        raise ValueError(f"since ({_shown(window.since)}) must not be after until ({_shown(window.until)})")
    return window


def _end(value: object, argument: str, reference: datetime, *, last: bool) -> datetime | None:
    """One end of the window: the first (``last=False``) or last instant of what ``value`` names."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return aware(value)
    if isinstance(value, date):
        return datetime.combine(value, time.max if last else time.min, tzinfo=timezone.utc)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{argument} must be {_ACCEPTED}, got {value!r}")
    text = value.strip()
    grounded = ground_time(text, reference)
    if len(grounded) == 1 and grounded[0][0].lower() == text.lower():  # the phrase is the whole value
        interval = grounded[0][1]
        return interval.end if last else interval.start
    try:
        return parse_timestamp(text)
    except ValueError:
        raise ValueError(f"{argument} must be {_ACCEPTED}, got {value!r}") from None
