"""Ground time expressions to absolute, timezone-aware intervals.

Both the write path (a turn's text against its session timestamp) and the
read path (a query against "now") call :func:`ground_time`. The rule is the
paper's: a phrase is grounded only when the reference supports it; anything
ambiguous returns nothing rather than a guess.

Conventions (all in the reference's timezone; an interval is closed):

* a day is ``00:00`` to ``23:59:59.999999``; "tonight" is 18:00 to the end of
  the reference day; "last night" is the whole previous day.
* weeks run Monday to Sunday; "last/this/next weekend" is Saturday-Sunday of
  the previous/current/next week.
* "N days ago" is that day, "N weeks ago" the week containing the day 7N days
  back, "N months ago" that calendar month, "N years ago" that calendar year.
  "a few days ago" is the span from 6 to 2 days back (weeks/months alike).
* "last Friday" is the most recent Friday strictly before the reference day;
  "next Friday" the first one strictly after it; "on Friday" is read as past
  (most recent before) unless its clause is in the future tense (will, 'll,
  gonna, plan to, "I'm seeing her on Friday", "the party is on Friday", ...),
  then as the next one.
* "last May" is the most recent May that ended before the reference month;
  "next May" the first May starting after it; "this May" the reference year's
  May. "in May" follows the tense of its clause
  (:func:`~langchain_ripplemem.text.time.tense.tense_at`): the first May on or
  after the reference month in a future clause ("I'm moving in May", "My
  wedding is in May"), the most recent May on or before it in a past one ("I
  moved in May"), and with no tense signal ("Berlin in May") the nearer of
  the two: ahead when at most five months away, else back. Lower-case "may"
  counts only with a year or after last/next/this, because it is usually the verb.
* explicit dates ("May 7, 2023", "7 May 2023", "2023-05-07") are that day;
  "May 2023" that month; "in 2022" that year.
* a month and day without a year ("May 7", "the 7th of May") takes its year
  from a weekday when it has one ("Thursday, April 2nd": the year near the
  reference whose 2 April is a Thursday; none, no grounding), else from the
  tense of its own clause as "in May" does (the sentence's other verbs often
  date something else: "Details came in: Denver, June 8th to 14th").
  "on the 17th" is in the month of a date named before it in the text ("June
  10th and back on the 17th"), else the month the tense points to.
* a period before or after a grounded time is moved from it ("the week before
  August 3, 2023", "the Sunday before October 25, 2022":
  :mod:`~langchain_ripplemem.text.time.relative_time`).
* ranges are one interval, first day to last: "June 8th to 14th", "June 8-14",
  "10-17 June", "between June 8 and 14", "from the 10th to the 17th" (at most
  two months: "pages 1 to 300 of June" is no date).

Example:
    >>> from datetime import datetime, timezone
    >>> ref = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
    >>> [(p, i.start.date().isoformat()) for p, i in ground_time("I went yesterday", ref)]
    [('yesterday', '2023-05-07')]
    >>> parse_timestamp("1:56 pm on 8 May, 2023").isoformat()
    '2023-05-08T13:56:00+00:00'

"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime, time, timedelta

from langchain_ripplemem.schemas import TimeInterval, aware
from langchain_ripplemem.text.time.intervals import (
    day_interval,
    day_start,
    month_span,
    safe_date,
    shift_month,
    span,
    week_span,
    weekend_span,
)
from langchain_ripplemem.text.time.relative_time import relative_times, shift
from langchain_ripplemem.text.time.tense import tense_at
from langchain_ripplemem.timestamps import (
    DAY_MONTH_YEAR_RE,
    DAY_RE,
    MONTH_ABBR_RE,
    MONTH_DAY_YEAR_RE,
    YEAR_RE,
    parse_timestamp,  # the session-time rule (timestamps.py), re-exported
)
from langchain_ripplemem.timestamps import MONTHS as _MONTHS

__all__ = ["day_interval", "ground_time", "parse_timestamp"]

_WEEKDAYS = {name: i for i, names in enumerate(
    "monday mon|tuesday tue tues|wednesday wed|thursday thu thur thurs|friday fri|"
    "saturday sat|sunday sun".split("|")) for name in names.split()}
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "a couple of": 2, "a couple": 2, "couple of": 2,
}

# Full month names only in free text: "Mar"/"Sun"/"Sat" are ordinary words too often.
_MONTH_RE = (r"(?P<month>january|february|march|april|may|june|july|august|september|"
             r"october|november|december)")
_NUM_RE = (r"(?P<num>\d{1,3}|a couple(?: of)?|couple of|an?|one|two|three|four|five|six|"
           r"seven|eight|nine|ten|eleven|twelve)")
_UNIT_RE = r"(?P<unit>day|week|month|year)s?"
_WEEKDAY_RE = r"(?P<weekday>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
# "in April" with no tense is the nearer April: ahead when it is at most this many months away.
_AHEAD_MONTHS = 5
# A range longer than this is not a date range ("June 8 to 14" is; "1 to 300" is not).
_MAX_RANGE_DAYS = 62
_DAY2_RE = r"(?P<day2>[0-3]?\d)(?:st|nd|rd|th)?"
_MONTH2_RE = _MONTH_RE.replace("?P<month>", "?P<month2>")
_ANY_MONTH = _MONTH_RE.replace("?P<month>", "?:")
_DATE_AFTER_WEEKDAY = rf",? (?:the )?(?:{_ANY_MONTH} \d|\d{{1,2}}(?:st|nd|rd|th)? (?:of )?{_ANY_MONTH})"
_TO = r" ?(?:-|\u2013|to|through|till|until) ?"
# No year after it: "May 7, 2023" and "June 8-14" are other rules' phrases.
_NO_YEAR = r"(?!,? ?\d|\d| ?(?:-|\u2013|to|through|till|until) ?(?:the )?\d)"
_MONTH_DAY = re.compile(rf"\b{_MONTH_RE} {DAY_RE}\b", re.IGNORECASE)
# What may follow "on the 17th" when it is a date ("on the 4th floor" is not).
_AFTER_ORDINAL = r"(?=\s*(?:$|[^\w\s]|(?:and|but|so|at|in|for|with|when|after|before|because|then|to)\b))"


# --------------------------------------------------------------------------- rules

# A rule gets (match, reference, full text) and returns an interval or None (= don't guess).
Rule = Callable[[re.Match[str], datetime, str], TimeInterval | None]


def _explicit_day(m: re.Match[str], ref: datetime, _: str) -> TimeInterval | None:
    d = safe_date(int(m["year"]), _MONTHS[m["month"].lower()], int(m["day"]))
    return span(d, d, ref.tzinfo) if d else None


def _iso_day(m: re.Match[str], ref: datetime, _: str) -> TimeInterval | None:
    d = safe_date(int(m["year"]), int(m["mon"]), int(m["day"]))
    return span(d, d, ref.tzinfo) if d else None


def _month_year(m: re.Match[str], ref: datetime, _: str) -> TimeInterval:
    return month_span(int(m["year"]), _MONTHS[m["month"].lower()], ref.tzinfo)


def _year(m: re.Match[str], ref: datetime, _: str) -> TimeInterval:
    year = int(m["year"])
    return span(date(year, 1, 1), date(year, 12, 31), ref.tzinfo)


def _relative_day(m: re.Match[str], ref: datetime, _: str) -> TimeInterval:
    word = " ".join(m[0].lower().split())
    tz, today = ref.tzinfo, ref.date()
    if word == "tonight":
        return TimeInterval(start=datetime.combine(today, time(18), tzinfo=tz),
                            end=span(today, today, tz).end)
    offset = {"yesterday": -1, "last night": -1, "the day before yesterday": -2,
              "tomorrow": 1, "the day after tomorrow": 2}.get(word, 0)
    d = today + timedelta(days=offset)
    return span(d, d, tz)


def _relative_period(m: re.Match[str], ref: datetime, _: str) -> TimeInterval:
    which, period = m["which"].lower(), m["period"].lower()
    step = {"last": -1, "past": -1, "previous": -1, "this": 0, "next": 1, "coming": 1}[which]
    tz, today = ref.tzinfo, ref.date()
    if period == "week":
        return week_span(today + timedelta(weeks=step), tz)
    if period == "weekend":
        return weekend_span(today + timedelta(weeks=step), tz)
    if period == "month":
        return month_span(*shift_month(today.year, today.month, step), tz)
    year = today.year + step
    return span(date(year, 1, 1), date(year, 12, 31), tz)


def _count(m: re.Match[str]) -> int:
    raw = " ".join(m["num"].lower().split())
    return int(raw) if raw.isdigit() else _NUMBERS[raw]


def _unit_back(unit: str, n: int, ref: datetime) -> TimeInterval:
    """The period ``n`` units from the reference (negative = past)."""
    tz, today = ref.tzinfo, ref.date()
    if unit == "day":
        d = today + timedelta(days=n)
        return span(d, d, tz)
    if unit == "week":
        return week_span(today + timedelta(weeks=n), tz)
    if unit == "month":
        return month_span(*shift_month(today.year, today.month, n), tz)
    return span(date(today.year + n, 1, 1), date(today.year + n, 12, 31), tz)


def _ago(m: re.Match[str], ref: datetime, _: str) -> TimeInterval:
    return _unit_back(m["unit"].lower(), -_count(m), ref)


def _in_n(m: re.Match[str], ref: datetime, _: str) -> TimeInterval:
    return _unit_back(m["unit"].lower(), _count(m), ref)


def _few_ago(m: re.Match[str], ref: datetime, _: str) -> TimeInterval:
    unit = m["unit"].lower()
    far, near = _unit_back(unit, -6, ref), _unit_back(unit, -2, ref)
    return TimeInterval(start=far.start, end=near.end)


def _past_n(m: re.Match[str], ref: datetime, _: str) -> TimeInterval:
    """"the past 3 days" / "the last few weeks": from that far back up to the reference."""
    unit = m["unit"].lower()
    n = 6 if m["num"] is None else _count(m)  # "few" = at most six, as for "a few days ago"
    days = {"day": 1, "week": 7, "month": 31, "year": 366}[unit] * n
    return TimeInterval(start=day_start(ref.date() - timedelta(days=days), ref.tzinfo), end=ref)


def _weekday(m: re.Match[str], ref: datetime, text: str) -> TimeInterval:
    target = _WEEKDAYS[m["weekday"].lower()]
    which = (m["which"] or "on").lower()
    today = ref.date()
    forward = which == "next" or (
        which in ("on", "this") and tense_at(text, m.start(), m.end()) == "future")
    if forward:
        d = today + timedelta(days=(target - today.weekday() - 1) % 7 + 1)
    else:
        d = today - timedelta(days=(today.weekday() - target - 1) % 7 + 1)
    return span(d, d, ref.tzinfo)


def _named_month(m: re.Match[str], ref: datetime, text: str) -> TimeInterval | None:
    word, which = m["month"], m["which"].lower()
    if word == "may" and which == "in":
        return None  # lower-case "in may" is far more often the verb than the month
    month, year, current = _MONTHS[word.lower()], ref.year, ref.month
    if which == "last":
        year -= 1 if month >= current else 0
    elif which == "next":
        year += 1 if month <= current else 0
    elif which == "in":
        tense = tense_at(text, m.start(), m.end())
        # No tense signal: the nearer occurrence (up to five months ahead, else back).
        if tense == "future" or (tense is None and 0 < (month - current) % 12 <= _AHEAD_MONTHS):
            year += 1 if month < current else 0
        else:
            year -= 1 if month > current else 0
    return month_span(year, month, ref.tzinfo)


def _months_apart(a: date, b: date) -> int:
    return (b.year - a.year) * 12 + b.month - a.month


def _pick_year(candidates: list[date], today: date, tense: str | None) -> date | None:
    """The occurrence a date without a year means: by tense, else the nearer (as for "in April")."""
    ahead = min((d for d in candidates if d >= today), default=None)
    back = max((d for d in candidates if d <= today), default=None)
    if tense == "future":
        return ahead
    if tense == "past":
        return back
    if ahead is not None and (back is None or _months_apart(today, ahead) <= _AHEAD_MONTHS):
        return ahead
    return back


def _day_of_month(month: int, day: int, ref: datetime, text: str, span: tuple[int, int],
                  weekday: str | None = None) -> date | None:
    """``month``/``day`` without a year, resolved against the reference.

    With a weekday ("Thursday, April 2nd") the year whose date falls on it, if one of the
    reference's year and its neighbours does; else the tense of the phrase's own clause.
    """
    today = ref.date()
    candidates = [d for year in (today.year - 1, today.year, today.year + 1)
                  if (d := safe_date(year, month, day)) is not None]
    if weekday is not None:
        on_day = [d for d in candidates if d.weekday() == _WEEKDAYS[weekday.lower()]]
        return min(on_day, key=lambda d: abs((d - today).days)) if on_day else None
    return _pick_year(candidates, today, tense_at(text, *span, clause_only=True))


def _ordinal_day(day: int, ref: datetime, text: str, span: tuple[int, int]) -> date | None:
    """"on the 17th": in the month of a date the text named before it, else by tense around the reference."""
    earlier = [m for m in _MONTH_DAY.finditer(text, 0, span[0])]
    if earlier:
        last = earlier[-1]
        first = _day_of_month(_MONTHS[last["month"].lower()], int(last["day"]), ref, text, last.span())
        if first is None:
            return None
        year, month = (first.year, first.month) if day >= first.day else shift_month(first.year, first.month, 1)
        return safe_date(year, month, day)
    today = ref.date()
    candidates = [d for delta in (-2, -1, 0, 1, 2)
                  if (d := safe_date(*shift_month(today.year, today.month, delta), day)) is not None]
    return _pick_year(candidates, today, tense_at(text, *span, clause_only=True))


def _month_day(m: re.Match[str], ref: datetime, text: str) -> TimeInterval | None:
    if m["month"] == "may":
        return None  # lower-case "may 3" is rarely the month
    d = _day_of_month(_MONTHS[m["month"].lower()], int(m["day"]), ref, text, m.span(), m["weekday"])
    return span(d, d, ref.tzinfo) if d else None


def _on_ordinal(m: re.Match[str], ref: datetime, text: str) -> TimeInterval | None:
    d = _ordinal_day(int(m["day"]), ref, text, m.span())
    return span(d, d, ref.tzinfo) if d else None


def _date_range(m: re.Match[str], ref: datetime, text: str) -> TimeInterval | None:
    """"June 8th to 14th", "10-17 June", "from the 10th to the 17th": first day to last day."""
    day, last_day = int(m["day"]), int(m["day2"])
    month = m.groupdict().get("month")
    if month is None:  # "from the 10th to the 17th"
        first = _ordinal_day(day, ref, text, m.span())
    elif m.groupdict().get("year"):
        first = safe_date(int(m["year"]), _MONTHS[month.lower()], day)
    else:
        first = _day_of_month(_MONTHS[month.lower()], day, ref, text, m.span())
    if first is None:
        return None
    second_month = m.groupdict().get("month2")
    year, last_month = first.year, _MONTHS[second_month.lower()] if second_month else first.month
    if last_month < first.month:
        year += 1
    last = safe_date(year, last_month, last_day)
    if last is None or last < first or (last - first).days > _MAX_RANGE_DAYS:
        return None
    return span(first, last, ref.tzinfo)


_I = re.IGNORECASE
_RULES: list[tuple[re.Pattern[str], Rule]] = [
    (re.compile(rf"\b{MONTH_DAY_YEAR_RE}\b", _I), _explicit_day),
    (re.compile(rf"\b{DAY_MONTH_YEAR_RE}\b", _I), _explicit_day),
    (re.compile(r"\b(?P<year>\d{4})-(?P<mon>\d{2})-(?P<day>\d{2})\b"), _iso_day),
    (re.compile(rf"\b{_MONTH_RE},? {YEAR_RE}\b", _I), _month_year),
    (re.compile(rf"\b(?:in|during|of) (?:the year )?{YEAR_RE}\b", _I), _year),
    (re.compile(r"\b(?:the day before yesterday|the day after tomorrow|yesterday|today|"
                r"tonight|last night|tomorrow)\b", _I), _relative_day),
    (re.compile(r"\ba few (?P<unit>day|week|month|year)s ago\b", _I), _few_ago),
    (re.compile(rf"\b{_NUM_RE} {_UNIT_RE} ago\b", _I), _ago),
    (re.compile(rf"\bin {_NUM_RE} {_UNIT_RE}(?! ago)\b", _I), _in_n),
    (re.compile(rf"\b(?:the )?(?:past|last) (?:(?:a )?few|{_NUM_RE}) "
                rf"(?P<unit>day|week|month|year)s\b", _I), _past_n),
    (re.compile(r"\b(?P<which>last|past|previous|this|next|coming) "
                r"(?P<period>weekend|week|month|year)\b", _I), _relative_period),
    # A weekday before a date is the date's ("on Thursday, April 2nd"): the date rule reads both.
    (re.compile(rf"\b(?P<which>last|next|this|on)? ?{_WEEKDAY_RE}\b(?!{_DATE_AFTER_WEEKDAY})", _I), _weekday),
    # Dates without a year: the year from the weekday, else from the tense (see the module docs).
    (re.compile(rf"\b(?:{_WEEKDAY_RE},? )?(?:the )?{_MONTH_RE} {DAY_RE}\b{_NO_YEAR}", _I), _month_day),
    (re.compile(rf"\b(?:{_WEEKDAY_RE},? )?(?:the )?{DAY_RE} (?:of )?{_MONTH_RE}\b{_NO_YEAR}", _I), _month_day),
    (re.compile(rf"\bon the (?P<day>[0-3]?\d)(?:st|nd|rd|th)\b{_AFTER_ORDINAL}", _I), _on_ordinal),
    (re.compile(rf"\b{_MONTH_RE} {DAY_RE}{_TO}(?:{_MONTH2_RE} )?{_DAY2_RE}\b(?:,? {YEAR_RE}\b)?", _I),
     _date_range),
    (re.compile(rf"\bbetween {_MONTH_RE} {DAY_RE} and (?:{_MONTH2_RE} )?{_DAY2_RE}\b", _I), _date_range),
    (re.compile(rf"\b{DAY_RE}{_TO}{_DAY2_RE} (?:of )?{_MONTH_RE}\b(?:,? {YEAR_RE}\b)?", _I), _date_range),
    (re.compile(r"\bfrom the (?P<day>[0-3]?\d)(?:st|nd|rd|th)? (?:to|till|until|through) "
                r"the (?P<day2>[0-3]?\d)(?:st|nd|rd|th)?\b", _I), _date_range),
    # The look-ahead leaves "in May 7, 2023" / "in May 2023" to the explicit rules above.
    (re.compile(rf"\b(?P<which>last|next|this|in) {_MONTH_RE}\b(?!\.?,? ?\d)", _I),
     _named_month),
]


# Every rule's phrase contains one of these words; most texts have none, and one search
# is much cheaper than running every rule (the write path grounds every turn).
_TRIGGER = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|night|ago|days?|weeks?|weekends?|months?|years?|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|(?:19|20)\d\d|\d{1,2}(?:st|nd|rd|th)|"
    + MONTH_ABBR_RE.replace("?P<month>", "?:") + r")\b")  # run on lower-cased text: faster


def ground_time(text: str, reference: datetime) -> list[tuple[str, TimeInterval]]:
    """Find the time phrases of ``text`` that ``reference`` can ground.

    Args:
        text: free text (a turn or a query).
        reference: when the text was said; naive values are taken as UTC.

    Returns:
        ``(phrase, interval)`` pairs in order of appearance, without overlaps
        (earlier, then longer, phrases win). Phrases that cannot be grounded
        without guessing are left out.

    Example:
        >>> from datetime import datetime, timezone
        >>> ref = datetime(2023, 5, 8, tzinfo=timezone.utc)  # a Monday
        >>> [(p, str(i.start.date()), str(i.end.date())) for p, i in ground_time("last week", ref)]
        [('last week', '2023-05-01', '2023-05-07')]

    """
    if not text or not _TRIGGER.search(text.lower()):
        return []
    reference = aware(reference)
    found: list[tuple[int, int, str, TimeInterval]] = []
    for pattern, rule in _RULES:
        for match in pattern.finditer(text):
            if "which" in pattern.groupindex and "weekday" in pattern.groupindex and not match["which"]:
                continue  # a bare weekday ("Friday's game") is too vague to anchor
            try:
                interval = rule(match, reference, text)
            except (OverflowError, ValueError):  # "next year" said in 9999, "last week" in year 1: no such days
                interval = None
            if interval is not None:
                found.append((match.start(), match.end(), match.group(0).strip(), interval))
    # "the week before August 3, 2023": the grounded date, moved.
    relative = {rel.end: rel for rel in relative_times(text)}
    found += [(rel.start, end, text[rel.start:end].strip(), moved)
              for start, end, _, interval in found
              if (rel := relative.get(start)) is not None and (moved := shift(interval, rel)) is not None]
    found.sort(key=lambda f: (f[0], -(f[1] - f[0])))
    result: list[tuple[str, TimeInterval]] = []
    taken_until = -1
    for start, end, phrase, interval in found:
        if start >= taken_until:
            result.append((phrase, interval))
            taken_until = end
    return result
