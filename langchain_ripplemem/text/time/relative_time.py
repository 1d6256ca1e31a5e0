"""Times relative to another time: "the weekend before April 2nd", "the week after the wedding".

A phrase such as "the weekend before" names a period relative to what follows
it. When a date follows ("the week before August 3, 2023"), the time grounder
(:func:`~langchain_ripplemem.text.time.timeparse.ground_time`) grounds the
date and :func:`shift` moves it. When an event follows ("the weekend before her
second interview"), the text alone cannot be grounded: recall finds the event's
date in a memory first (the heuristic controller), then shifts it.

Conventions (days are calendar days; weeks run Monday to Sunday):

* "the day before/after X": the day before X starts / after X ends;
* "the weekend before X": the last Saturday-Sunday that ends before X's day;
  "after": the first that starts after it;
* "the week before X": the seven days before X's day; "after": the seven after;
* "the month/year before X": the calendar month/year before X's;
* "the Sunday before X": the last Sunday before X's day;
* a count ("two weeks before X") moves that many periods: the seven days that
  end 7 days before X for "two weeks", and so on;
* "while <Name> is/was ..." (:func:`concurrent_times`, questions only): the time of
  that event itself ("Could Sam feed the cat while Maya is in Lisbon?").

Example:
    >>> from datetime import datetime, timezone
    >>> from langchain_ripplemem.schemas import TimeInterval
    >>> thursday = TimeInterval.point(datetime(2026, 4, 2, 10, tzinfo=timezone.utc))
    >>> (rel,) = relative_times("What did Maya do the weekend before her interview?")
    >>> rel.phrase, rel.period, rel.before
    ('the weekend before', 'weekend', True)
    >>> shift(thursday, rel).day_span()
    '2026-03-28..2026-03-29'

"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from langchain_ripplemem.schemas import TimeInterval
from langchain_ripplemem.text.time.intervals import month_span, shift_month, span

__all__ = ["RelativeTime", "concurrent_times", "relative_times", "shift"]

_WEEKDAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "a couple of": 2,
           "couple of": 2}
_RELATIVE = re.compile(
    r"\b(?:(?:the|that|last)\s+)?(?:(?P<count>\d{1,2}|a couple of|couple of|an?|one|two|three|four|five|six)\s+)?"
    r"(?P<period>day|night|weekend|week|month|year|" + "|".join(_WEEKDAY_NAMES) + r")s?"
    r"\s+(?P<direction>before|after|prior to|following)\s+", re.IGNORECASE)
# "while" and a clause whose subject is a name ("while Maya is away"): a time that is the event's own.
# A pronoun or a bare verb ("while she writes", "while camping") asks about the event, not about
# something else in its time, so only a capitalised subject and a form of "be" count.
_CONCURRENT = re.compile(r"\bwhile\s+(?=[A-Z][\w'\u2019-]*(?:\s+[A-Z][\w'\u2019-]*)?\s+(?:is|was|will be|are|were)\b)")


@dataclass(frozen=True)
class RelativeTime:
    """A "<period> before/after" phrase: what it moves by, which way, and where it sits in its text."""

    phrase: str
    period: str
    count: int
    before: bool
    start: int
    end: int


def relative_times(text: str) -> list[RelativeTime]:
    """Every "<period> before/after" phrase of ``text`` ("the weekend before", "two weeks after").

    The phrase's ``end`` is where the time or event it is relative to begins.
    """
    found = []
    for m in _RELATIVE.finditer(text):
        raw = m["count"]
        count = 1 if raw is None else int(raw) if raw.isdigit() else _COUNTS[" ".join(raw.lower().split())]
        period = "day" if m["period"].lower() == "night" else m["period"].lower()
        found.append(RelativeTime(phrase=m.group(0).strip(), period=period, count=max(count, 1),
                                  before=m["direction"].lower() in ("before", "prior to"),
                                  start=m.start(), end=m.end()))
    return found


def concurrent_times(text: str) -> list[RelativeTime]:
    """Every "while <Name> is/was" phrase of ``text``: the event's own time (period ``"while"``).

    Example:
        >>> [rel.phrase for rel in concurrent_times("Could Sam feed Biscuit while Maya is away in Lisbon?")]
        ['while']
        >>> concurrent_times("What does Joanna do while she writes?")
        []
    """
    return [RelativeTime(phrase=m.group(0).strip(), period="while", count=1, before=False, start=m.start(),
                         end=m.end()) for m in _CONCURRENT.finditer(text)]


def shift(interval: TimeInterval, rel: RelativeTime) -> TimeInterval | None:
    """The period ``rel`` names relative to ``interval`` (see the module docs for the conventions).

    ``None`` when that period lies outside the calendar (after 31 December 9999 or before 1 January 1).

    Example:
        >>> from datetime import datetime, timezone
        >>> (rel,) = relative_times("the week after the party")
        >>> shift(TimeInterval.point(datetime(9999, 12, 30, tzinfo=timezone.utc)), rel) is None
        True

    """
    try:
        return _shifted(interval, rel)
    except (OverflowError, ValueError):  # date arithmetic past year 9999 or before year 1
        return None


def _shifted(interval: TimeInterval, rel: RelativeTime) -> TimeInterval:
    if rel.period == "while":
        return interval
    first, last, n, tz = interval.start.date(), interval.end.date(), rel.count, interval.start.tzinfo
    if rel.period == "day":
        d = first - timedelta(days=n) if rel.before else last + timedelta(days=n)
        return span(d, d, tz)
    if rel.period == "week":
        if rel.before:
            end = first - timedelta(days=1 + 7 * (n - 1))
            return span(end - timedelta(days=6), end, tz)
        begin = last + timedelta(days=1 + 7 * (n - 1))
        return span(begin, begin + timedelta(days=6), tz)
    if rel.period == "month":
        year, month = (first.year, first.month) if rel.before else (last.year, last.month)
        return month_span(*shift_month(year, month, -n if rel.before else n), tz)
    if rel.period == "year":
        year = first.year - n if rel.before else last.year + n
        return span(date(year, 1, 1), date(year, 12, 31), tz)
    # a weekday, or a weekend (found by its Saturday)
    weekday = 5 if rel.period == "weekend" else _WEEKDAY_NAMES.index(rel.period)
    length = 1 if rel.period == "weekend" else 0
    if rel.before:  # the last one that ends before the interval's first day
        d = first - timedelta(days=1 + length)
        d -= timedelta(days=(d.weekday() - weekday) % 7 + 7 * (n - 1))
    else:  # the first one that starts after its last day
        d = last + timedelta(days=1)
        d += timedelta(days=(weekday - d.weekday()) % 7 + 7 * (n - 1))
    return span(d, d + timedelta(days=length), tz)
