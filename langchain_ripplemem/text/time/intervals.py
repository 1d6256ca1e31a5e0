"""Calendar intervals: a day, a span of days, a calendar month, a Monday-Sunday week, a weekend.

Every interval is closed, from the start of its first day to the last
microsecond of its last day, in the timezone it is given (naive is UTC).
A period the calendar cannot hold (after 9999, before year 1) raises what
``date`` raises (``ValueError``, ``OverflowError``); the grounder leaves such
a phrase ungrounded.
The time grounder (:mod:`~langchain_ripplemem.text.time.timeparse`) and the
relative-time shifter (:mod:`~langchain_ripplemem.text.time.relative_time`)
build their intervals here.

Example:
    >>> from datetime import date, timezone
    >>> weekend_span(date(2026, 4, 2), timezone.utc).day_span()
    '2026-04-04..2026-04-05'
    >>> month_span(*shift_month(2026, 1, -1), timezone.utc).day_span()
    '2025-12-01..2025-12-31'

"""

from __future__ import annotations

from calendar import monthrange
from datetime import date, datetime, time, timedelta, tzinfo

from langchain_ripplemem.schemas import TimeInterval, aware

__all__ = ["day_interval", "day_start", "month_span", "safe_date", "shift_month", "span", "week_span",
           "weekend_span"]


def day_start(d: date, tz: tzinfo | None) -> datetime:
    """Midnight at the start of ``d`` in ``tz``."""
    return datetime.combine(d, time.min, tzinfo=tz)


def span(first: date, last: date, tz: tzinfo | None) -> TimeInterval:
    """Closed interval from the start of ``first`` to the end of ``last``.

    Example:
        >>> from datetime import timezone
        >>> span(date.max, date.max, timezone.utc).end.isoformat()  # no day after it is needed
        '9999-12-31T23:59:59.999999+00:00'

    """
    return TimeInterval(start=day_start(first, tz), end=datetime.combine(last, time.max, tzinfo=tz))


def day_interval(when: datetime) -> TimeInterval:
    """The whole calendar day of ``when`` in its own timezone (naive is taken as UTC).

    Example:
        >>> from datetime import datetime
        >>> day_interval(datetime(2023, 5, 8, 13, 56)).end.isoformat()
        '2023-05-08T23:59:59.999999+00:00'

    """
    when = aware(when)
    return span(when.date(), when.date(), when.tzinfo)


def month_span(year: int, month: int, tz: tzinfo | None) -> TimeInterval:
    """The calendar month ``month`` of ``year``."""
    return span(date(year, month, 1), date(year, month, monthrange(year, month)[1]), tz)


def shift_month(year: int, month: int, delta: int) -> tuple[int, int]:
    """``(year, month)`` moved by ``delta`` months."""
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def week_span(d: date, tz: tzinfo | None) -> TimeInterval:
    """The Monday-Sunday week of ``d``."""
    monday = d - timedelta(days=d.weekday())
    return span(monday, monday + timedelta(days=6), tz)


def weekend_span(d: date, tz: tzinfo | None) -> TimeInterval:
    """The Saturday-Sunday of ``d``'s week."""
    saturday = d - timedelta(days=d.weekday()) + timedelta(days=5)
    return span(saturday, saturday + timedelta(days=1), tz)


def safe_date(year: int, month: int, day: int) -> date | None:
    """The date, or ``None`` when there is no such day (31 February)."""
    try:
        return date(year, month, day)
    except ValueError:
        return None
