from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from langchain_ripplemem.extraction.timeparse import day_interval, ground_time, parse_timestamp

# Monday 8 May 2023, 13:56 UTC (the first LoCoMo session's timestamp).
REF = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)


def days(text: str, ref: datetime = REF) -> list[tuple[str, date, date]]:
    return [(p, i.start.date(), i.end.date()) for p, i in ground_time(text, ref)]


def d(month: int, day: int, year: int = 2023) -> date:
    return date(year, month, day)


@pytest.mark.parametrize(
    ("text", "phrase", "start", "end"),
    [
        ("I went there yesterday", "yesterday", d(5, 7), d(5, 7)),
        ("today was long", "today", d(5, 8), d(5, 8)),
        ("what a party last night", "last night", d(5, 7), d(5, 7)),
        ("see you tomorrow", "tomorrow", d(5, 9), d(5, 9)),
        ("the day before yesterday", "the day before yesterday", d(5, 6), d(5, 6)),
        ("Last week was wild", "Last week", d(5, 1), d(5, 7)),
        ("busy this week", "this week", d(5, 8), d(5, 14)),
        ("next week then", "next week", d(5, 15), d(5, 21)),
        ("last weekend we hiked", "last weekend", d(5, 6), d(5, 7)),
        ("this weekend?", "this weekend", d(5, 13), d(5, 14)),
        ("next weekend!", "next weekend", d(5, 20), d(5, 21)),
        ("last month", "last month", d(4, 1), d(4, 30)),
        ("this month", "this month", d(5, 1), d(5, 31)),
        ("next month", "next month", d(6, 1), d(6, 30)),
        ("last year", "last year", d(1, 1, 2022), d(12, 31, 2022)),
        ("next year", "next year", d(1, 1, 2024), d(12, 31, 2024)),
        ("3 days ago", "3 days ago", d(5, 5), d(5, 5)),
        ("two weeks ago", "two weeks ago", d(4, 24), d(4, 30)),
        ("2 months ago", "2 months ago", d(3, 1), d(3, 31)),
        ("a year ago", "a year ago", d(1, 1, 2022), d(12, 31, 2022)),
        ("a couple of days ago", "a couple of days ago", d(5, 6), d(5, 6)),
        ("a few days ago", "a few days ago", d(5, 2), d(5, 6)),
        ("in 3 days", "in 3 days", d(5, 11), d(5, 11)),
        ("in two weeks", "in two weeks", d(5, 22), d(5, 28)),
        ("last Friday", "last Friday", d(5, 5), d(5, 5)),
        ("last Monday", "last Monday", d(5, 1), d(5, 1)),  # strictly before the reference day
        ("next Monday", "next Monday", d(5, 15), d(5, 15)),
        ("We met on Friday.", "on Friday", d(5, 5), d(5, 5)),
        ("I will see her on Friday.", "on Friday", d(5, 12), d(5, 12)),
        ("last May", "last May", d(5, 1, 2022), d(5, 31, 2022)),
        ("next May", "next May", d(5, 1, 2024), d(5, 31, 2024)),
        ("I started in May", "in May", d(5, 1), d(5, 31)),
        ("We married in June.", "in June", d(6, 1, 2022), d(6, 30, 2022)),
        ("We'll travel in June.", "in June", d(6, 1), d(6, 30)),
        ("I moved here in 2022", "in 2022", d(1, 1, 2022), d(12, 31, 2022)),
        ("since May 7, 2023", "May 7, 2023", d(5, 7), d(5, 7)),
        ("on 7 May 2023", "7 May 2023", d(5, 7), d(5, 7)),
        ("the 7th of May, 2023", "7th of May, 2023", d(5, 7), d(5, 7)),
        ("dated 2023-05-07", "2023-05-07", d(5, 7), d(5, 7)),
        ("back in May 2021", "May 2021", d(5, 1, 2021), d(5, 31, 2021)),
    ],
)
def test_ground_time_cases(text: str, phrase: str, start: date, end: date) -> None:
    assert days(text) == [(phrase, start, end)]


@pytest.mark.parametrize(
    "text",
    [
        "on May 7 we met",  # month and day without a year: the year would be a guess
        "Friday's game was fun",  # a bare weekday
        "I may go in may",  # the verb
        "sometime soon",
        "February 30, 2023",  # not a date
        "",
    ],
)
def test_ungroundable_phrases_return_nothing(text: str) -> None:
    assert ground_time(text, REF) == []


def test_day_bounds_are_closed_and_full() -> None:
    (_, interval), = ground_time("yesterday", REF)
    assert interval.start == datetime(2023, 5, 7, tzinfo=timezone.utc)
    assert interval.end == datetime(2023, 5, 8, tzinfo=timezone.utc) - timedelta(microseconds=1)


def test_tonight_is_the_evening_of_the_reference_day() -> None:
    (_, interval), = ground_time("tonight", REF)
    assert interval.start == datetime(2023, 5, 8, 18, tzinfo=timezone.utc)
    assert interval.end.date() == date(2023, 5, 8)


def test_several_phrases_in_order_without_overlap() -> None:
    found = days("Last week I flew to Lisbon; tomorrow I fly back, in May 2023 of course.")
    assert [p for p, _, _ in found] == ["Last week", "tomorrow", "May 2023"]


def test_in_month_year_prefers_the_explicit_year() -> None:
    assert days("in May 2021") == [("May 2021", d(5, 1, 2021), d(5, 31, 2021))]


def test_intervals_live_in_the_reference_timezone() -> None:
    tz = timezone(timedelta(hours=-4))
    ref = datetime(2023, 5, 8, 1, 0, tzinfo=tz)  # 05:00 UTC, still 8 May locally
    (_, interval), = ground_time("yesterday", ref)
    assert interval.start == datetime(2023, 5, 7, tzinfo=tz)
    assert interval.start.utcoffset() == timedelta(hours=-4)


def test_naive_reference_is_utc() -> None:
    (_, interval), = ground_time("yesterday", datetime(2023, 5, 8, 12))
    assert interval.start == datetime(2023, 5, 7, tzinfo=timezone.utc)


def test_year_boundaries() -> None:
    ref = datetime(2023, 1, 3, tzinfo=timezone.utc)  # a Tuesday
    assert days("last month", ref) == [("last month", d(12, 1, 2022), d(12, 31, 2022))]
    assert days("last week", ref) == [("last week", d(12, 26, 2022), d(1, 1, 2023))]
    assert days("last December", ref) == [("last December", d(12, 1, 2022), d(12, 31, 2022))]


def test_day_interval() -> None:
    interval = day_interval(datetime(2023, 5, 8, 13, 56))
    assert interval.start == datetime(2023, 5, 8, tzinfo=timezone.utc)
    assert interval.end == datetime(2023, 5, 8, 23, 59, 59, 999999, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56)),
        ("10:37 am on 27 June, 2023", datetime(2023, 6, 27, 10, 37)),
        ("12:15 am on 1 January, 2023", datetime(2023, 1, 1, 0, 15)),
        ("12:30 pm on 1 January, 2023", datetime(2023, 1, 1, 12, 30)),
        ("2023/05/20 (Sat) 02:21", datetime(2023, 5, 20, 2, 21)),
        ("2023-05-08T13:56:00Z", datetime(2023, 5, 8, 13, 56)),
        ("2023-05-08", datetime(2023, 5, 8)),
        ("May 8, 2023", datetime(2023, 5, 8)),
    ],
)
def test_parse_timestamp_formats(value: str, expected: datetime) -> None:
    assert parse_timestamp(value) == expected.replace(tzinfo=timezone.utc)


def test_parse_timestamp_keeps_offsets() -> None:
    parsed = parse_timestamp("2023-05-08T13:56:00+02:00")
    assert parsed.utcoffset() == timedelta(hours=2)
    assert parse_timestamp(datetime(2023, 5, 8)).tzinfo is not None


@pytest.mark.parametrize("value", ["next tuesday", "", "1:56 pm on 31 February, 2023",
                                   "25:00 on 8 May, 2023", None])
def test_parse_timestamp_errors_name_the_value(value: object) -> None:
    with pytest.raises(ValueError) as info:
        parse_timestamp(value)  # type: ignore[arg-type]
    assert repr(value) in str(info.value)
