"""The one rule that reads a stated time: a session's or a turn's, on every path.

A conversation's times reach the package as Python objects (``Conversation``,
``Session``, a dict for ``add_conversation``), as JSON (CLI files, the MCP tool,
the served ``ingest`` graph) or as benchmark records. All of them go through
:func:`parse_timestamp`, called by the schema's own validators, so one string is
read the same way everywhere. Standard library only: :mod:`~langchain_ripplemem.schemas`
imports it.

A number is refused: ``12345`` or ``"1714000000"`` does not say its unit
(seconds, milliseconds) nor that it counts from 1970, and read as POSIX seconds
a millisecond stamp lands some 50,000 years off.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timezone

__all__ = ["MONTHS", "aware", "parse_timestamp"]

MONTHS = {name: i + 1 for i, names in enumerate(
    "january jan|february feb|march mar|april apr|may|june jun|july jul|august aug|"
    "september sep sept|october oct|november nov|december dec".split("|"))
    for name in names.split()}

# Pieces shared with the free-text rules of text/time/timeparse.py.
MONTH_ABBR_RE = (r"(?P<month>january|february|march|april|may|june|july|august|september|"
                 r"october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)")
DAY_RE = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
YEAR_RE = r"(?P<year>(?:19|20)\d\d)"
MONTH_DAY_YEAR_RE = rf"{MONTH_ABBR_RE}\.? {DAY_RE},? {YEAR_RE}"  # "May 8, 2023"
DAY_MONTH_YEAR_RE = rf"{DAY_RE} (?:of )?{MONTH_ABBR_RE}\.?,? {YEAR_RE}"  # "8 May 2023"

ISO_EXAMPLE = "2023-05-08T13:56:00Z"
_FORMATS = (f"ISO 8601 ({ISO_EXAMPLE!r}, '2023-05-08'), LoCoMo ('1:56 pm on 8 May, 2023') "
            "or LongMemEval ('2023/05/20 (Sat) 02:21')")
_LOCOMO = re.compile(
    r"\s*(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*(?P<ampm>am|pm)\s+on\s+" + DAY_RE
    + r"\s+" + MONTH_ABBR_RE + r",?\s+" + YEAR_RE + r"\s*", re.IGNORECASE)
_LONGMEMEVAL = re.compile(
    r"\s*(?P<year>\d{4})/(?P<mon>\d{1,2})/(?P<day>\d{1,2})\s*(?:\(\w+\))?\s*"
    r"(?:(?P<hour>\d{1,2}):(?P<minute>\d{2}))?\s*")
_DATES = [re.compile(rf"\s*{pattern}\s*", re.IGNORECASE) for pattern in (MONTH_DAY_YEAR_RE, DAY_MONTH_YEAR_RE)]
_NUMBER = re.compile(r"\s*[+-]?\d+(?:\.\d*)?\s*")


def aware(value: datetime) -> datetime:
    """Return ``value`` as a timezone-aware datetime (naive values are taken as UTC)."""
    return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)


def parse_timestamp(value: str | datetime | date) -> datetime:
    """Parse a session timestamp into a timezone-aware datetime (naive is taken as UTC).

    Accepts datetimes, dates, ISO 8601 (``2023-05-08T13:56:00Z``, ``2023-05-08``),
    LoCoMo (``1:56 pm on 8 May, 2023``), LongMemEval (``2023/05/20 (Sat) 02:21``)
    and plain dates (``May 8, 2023``, ``8 May 2023``). Numbers are refused, as
    numbers or as digit strings: their unit and epoch are unstated.

    Raises:
        ValueError: naming ``value`` and the formats it may take.

    Example:
        >>> parse_timestamp("2023/05/20 (Sat) 02:21").isoformat()
        '2023-05-20T02:21:00+00:00'
        >>> parse_timestamp("1:56 pm on 8 May, 2023").isoformat()
        '2023-05-08T13:56:00+00:00'
        >>> parse_timestamp("1714000000")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: cannot parse timestamp '1714000000': a number does not say its unit ...; pass ISO 8601, ...

    """
    if isinstance(value, datetime):
        return aware(value)
    if isinstance(value, date):
        return datetime.combine(value, time.min, tzinfo=timezone.utc)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if number or (isinstance(value, str) and _NUMBER.fullmatch(value) and not _iso(value)):
        raise ValueError(f"cannot parse timestamp {value!r}: a number does not say its unit (seconds or "
                         f"milliseconds) or its epoch; pass ISO 8601, e.g. {ISO_EXAMPLE!r}")
    if not isinstance(value, str):
        raise ValueError(f"cannot parse timestamp {value!r}: expected a string ({_FORMATS}) or a datetime, "
                         f"got {type(value).__name__}")
    parsed = _iso(value) or _dialogue_form(value)
    if parsed is None:
        raise ValueError(f"cannot parse timestamp {value!r}: expected {_FORMATS}")
    return aware(parsed)


def _iso(value: str) -> datetime | None:
    text = value.strip()
    try:
        return datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text)
    except ValueError:
        return None


def _dialogue_form(value: str) -> datetime | None:
    """The benchmarks' and people's forms: LoCoMo, LongMemEval, "May 8, 2023", "8 May 2023"."""
    try:
        if m := _LOCOMO.fullmatch(value):
            hour = int(m["hour"]) % 12 + (12 if m["ampm"].lower() == "pm" else 0)
            return datetime(int(m["year"]), MONTHS[m["month"].lower()], int(m["day"]), hour, int(m["minute"]))
        if m := _LONGMEMEVAL.fullmatch(value):
            return datetime(int(m["year"]), int(m["mon"]), int(m["day"]), int(m["hour"] or 0), int(m["minute"] or 0))
        for pattern in _DATES:
            if m := pattern.fullmatch(value):
                return datetime(int(m["year"]), MONTHS[m["month"].lower()], int(m["day"]))
    except ValueError:  # e.g. 31 February, hour 25: a real date it is not
        return None
    return None
