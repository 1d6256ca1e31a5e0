from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_ripplemem.text.time.timeparse import day_interval, ground_time, parse_timestamp

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
        "on Friday, May 7 we met",  # no year near the reference has a Friday 7 May: no guess
        "on the 4th floor",  # an ordinal that is not a day
        "down 10 in the 4th quarter",
        "pages 1 to 300 of June",  # not a date range
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
                                   "25:00 on 8 May, 2023", None, 1714000000, 1714000000.5, "1714000000"])
def test_parse_timestamp_errors_name_the_value(value: object) -> None:
    with pytest.raises(ValueError) as info:
        parse_timestamp(value)  # type: ignore[arg-type]
    assert repr(value) in str(info.value)


# --------------------------------------------------------------------------- tense of "in <Month>"

# Saturday 14 February 2026 (issue 12, item 8).
FEB = datetime(2026, 2, 14, 10, 0, tzinfo=timezone.utc)


def month_of(text: str, ref: datetime = FEB) -> list[tuple[str, str]]:
    return [(p, i.start.strftime("%Y-%m")) for p, i in ground_time(text, ref)
            if i.start.day == 1 and (i.end - i.start).days >= 27]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # future: the next occurrence (on or after the session month)
        ("I am moving to Berlin in April.", "2026-04"),
        ("I'm moving to Berlin in April.", "2026-04"),
        ("I\u2019m moving to Berlin in April.", "2026-04"),
        ("My wedding is in March.", "2026-03"),
        ("Her birthday's in January.", "2027-01"),
        ("I will fly to Rome in April.", "2026-04"),
        ("We'll fly to Rome in January.", "2027-01"),
        ("We're going to Lisbon in January.", "2027-01"),
        ("I plan to visit Tokyo in November.", "2026-11"),
        ("We're getting married in June.", "2026-06"),
        ("I can't wait to see you in May!", "2026-05"),
        ("I'm so excited to start my new job in March.", "2026-03"),
        ("I'm so excited, my trip is finally in May!", "2026-05"),
        ("In April I'll be in Berlin.", "2026-04"),
        ("I'm taking a guided tour in April.", "2026-04"),
        ("Maybe we could meet up, I'm visiting my parents in October.", "2026-10"),
        # negations and questions keep their tense
        ("I'm not moving in April after all.", "2026-04"),
        ("I won't travel in January.", "2027-01"),
        ("Are you moving in April?", "2026-04"),
        ("Is your sister coming in December?", "2026-12"),
        ("What is Maya doing in April?", "2026-04"),
        ("Did you move in April?", "2025-04"),
        ("Didn't you go to Oslo in December?", "2025-12"),
        ("Where were you in March?", "2025-03"),
        # past: the previous occurrence (on or before the session month)
        ("I moved to Berlin in April.", "2025-04"),
        ("I didn't go in March.", "2025-03"),
        ("We went to Rome in December.", "2025-12"),
        ("My wedding was in March.", "2025-03"),
        ("I was moving flats in April.", "2025-04"),
        ("Back in March we adopted a cat.", "2025-03"),
        ("I started a new job in January.", "2026-01"),
        ("I was supposed to fly to Rome in April.", "2025-04"),
        ("I should have booked the flight in March.", "2025-03"),
        ("We got married in June, it was lovely.", "2025-06"),
        ("I'm so glad we met in May.", "2025-05"),
        ("I'm excited because I finished the course in November.", "2025-11"),
        # the session month is this month either way
        ("I'm moving in February.", "2026-02"),
        ("I moved in February.", "2026-02"),
        ("Berlin in February.", "2026-02"),
        # politeness is not past: "I was wondering" leaves the month tenseless (nearer April)
        ("I was wondering if you're free in April?", "2026-04"),
        # a negated perfect is no past event: the month stays tenseless (the nearer one)
        ("They haven't picked a date yet, sometime in June.", "2026-06"),
        ("She hasn't booked anything in April.", "2026-04"),
        # no tense signal: the nearer occurrence, ahead up to five months
        ("Berlin in April.", "2026-04"),
        ("Rome in July?", "2026-07"),
        ("Rome in August?", "2025-08"),
        ("Snow in October.", "2025-10"),
    ],
)
def test_in_month_follows_the_tense_of_its_clause(text: str, expected: str) -> None:
    assert [m for _, m in month_of(text)] == [expected]


def test_each_month_takes_its_own_clause() -> None:
    text = "I moved to Rome in May and I am moving to Berlin in April."
    assert month_of(text) == [("in May", "2025-05"), ("in April", "2026-04")]
    text = "We went to Rome in December and will go to Paris in March."
    assert month_of(text) == [("in December", "2025-12"), ("in March", "2026-03")]


@pytest.mark.parametrize(
    ("ref", "text", "expected"),
    [
        (datetime(2025, 12, 20, tzinfo=timezone.utc), "I'm moving to Oslo in January.", "2026-01"),
        (datetime(2025, 12, 20, tzinfo=timezone.utc), "I moved to Oslo in January.", "2025-01"),
        (datetime(2025, 12, 20, tzinfo=timezone.utc), "I'll visit in December.", "2025-12"),
        (datetime(2025, 12, 20, tzinfo=timezone.utc), "We met in December.", "2025-12"),
        (datetime(2025, 12, 20, tzinfo=timezone.utc), "Oslo in January?", "2026-01"),
        (datetime(2026, 1, 5, tzinfo=timezone.utc), "We went skiing in December.", "2025-12"),
        (datetime(2026, 1, 5, tzinfo=timezone.utc), "I'll go skiing in December.", "2026-12"),
        (datetime(2026, 1, 5, tzinfo=timezone.utc), "Skiing in December?", "2025-12"),
        (datetime(2026, 1, 5, tzinfo=timezone.utc), "My birthday is in January.", "2026-01"),
    ],
)
def test_in_month_across_year_boundaries(ref: datetime, text: str, expected: str) -> None:
    assert [m for _, m in month_of(text, ref)] == [expected]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm seeing her on Friday.", d(2, 20, 2026)),
        ("The party is on Friday.", d(2, 20, 2026)),
        ("We met on Friday.", d(2, 13, 2026)),
        ("I took a break at 10:30 am on Monday.", d(2, 9, 2026)),  # "am" of the clock is no verb
        ("It was supposed to rain on Monday, so I packed boots.", d(2, 9, 2026)),
    ],
)
def test_on_weekday_follows_the_tense_of_its_clause(text: str, expected: date) -> None:
    (_, start, _), = days(text, FEB)
    assert start == expected


# Monday 5 January 2026 (issue 36, item 6).
JAN5 = datetime(2026, 1, 5, 10, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the futurate present: a scheduled event told in the present is ahead
        ("I signed the lease and I move in February.", ["2026-02-01..2026-02-28"]),
        ("I move there in February.", ["2026-02-01..2026-02-28"]),
        ("We fly out on Friday.", ["2026-01-09"]),
        ("My flight leaves on Friday.", ["2026-01-09"]),
        ("She starts her new job in March, we celebrated yesterday.", ["2026-03-01..2026-03-31", "2026-01-04"]),
        ("I signed the lease in February and move in March.", ["2025-02-01..2025-02-28", "2026-03-01..2026-03-31"]),
        # past stays past, in the clause or the sentence
        ("We flew out on Friday.", ["2026-01-02"]),
        ("I moved in February.", ["2025-02-01..2025-02-28"]),
        ("Did you move in February?", ["2025-02-01..2025-02-28"]),
        ("I went to Paris and Rome in March.", ["2025-03-01..2025-03-31"]),
        ("I saw the autumn leaves in October.", ["2025-10-01..2025-10-31"]),
    ],
)
def test_a_scheduled_event_in_the_present_is_ahead(text: str, expected: list[str]) -> None:
    assert [i.day_span() for _, i in ground_time(text, JAN5)] == expected


SCHEDULED = ["move", "start", "leave", "fly out", "head home", "arrive", "graduate", "have a party", "go back"]
PAST = ["signed the lease", "booked the tickets", "told my boss", "found a flat"]
MONTHS = ["February", "March", "April", "June", "September", "November", "December"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


@given(st.sampled_from(PAST), st.sampled_from(SCHEDULED), st.sampled_from(MONTHS + WEEKDAYS))
def test_the_clause_of_a_present_plan_points_ahead_and_a_past_one_back(past, plan, when) -> None:
    on = "on" if when in WEEKDAYS else "in"
    (_, ahead), = ground_time(f"I {past} and I {plan} {on} {when}.", JAN5)
    (_, back), = ground_time(f"I {past} {on} {when}.", JAN5)
    assert ahead.start > JAN5 and back.end < JAN5


def test_rule_units_date_plans_in_the_coming_month() -> None:
    from langchain_ripplemem.schemas import Session, Turn
    from langchain_ripplemem.write.extraction.extractor import Window
    from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor

    texts = ["I am moving to Berlin in April.", "My wedding is in March.",
             "I will fly to Rome in April.", "I moved to Lisbon in April."]
    session = Session(id="S1", time=FEB, turns=[
        Turn(id=f"t{i}", speaker="Maya", text=t) for i, t in enumerate(texts)])
    window = Window(conversation_id="c1", index=0, items=tuple((session, t) for t in session.turns))
    units = RuleBasedExtractor().extract(window, ("maya",)).units
    assert [u.time.start.date() for u in units if u.time] == [
        d(4, 1, 2026), d(3, 1, 2026), d(4, 1, 2026), d(4, 1, 2025)]


# --------------------------------------------------------------------------- dates without a year, ranges


@pytest.mark.parametrize(
    ("text", "ref", "expected"),
    [
        # a weekday fixes the year ("Thursday, April 2nd" is 2026's)
        ("It's on Thursday, April 2nd.", datetime(2026, 3, 24, tzinfo=timezone.utc), ("2026-04-02", "2026-04-02")),
        ("It's set for Saturday June 13th in Lisbon.", datetime(2026, 4, 17, tzinfo=timezone.utc),
         ("2026-06-13", "2026-06-13")),
        # else the tense of its own clause, as for "in April"
        ("I'm flying out June 10th.", datetime(2026, 4, 17, tzinfo=timezone.utc), ("2026-06-10", "2026-06-10")),
        ("We met on May 7.", REF, ("2023-05-07", "2023-05-07")),
        ("We met on May 9.", REF, ("2022-05-09", "2022-05-09")),
        ("I'll see you on May 7.", REF, ("2024-05-07", "2024-05-07")),
        ("the 7th of June", REF, ("2023-06-07", "2023-06-07")),  # no tense: the nearer, ahead
        # ... of its clause only: "came in" dates the details, not the conference
        ("Conference details came in: Denver, June 8th to 14th.", datetime(2026, 4, 28, tzinfo=timezone.utc),
         ("2026-06-08", "2026-06-14")),
        # ranges
        ("I'm away 10-17 June.", datetime(2026, 4, 17, tzinfo=timezone.utc), ("2026-06-10", "2026-06-17")),
        ("I'm away between June 8 and 14.", datetime(2026, 4, 17, tzinfo=timezone.utc),
         ("2026-06-08", "2026-06-14")),
        ("June 8-14, 2024 works.", REF, ("2024-06-08", "2024-06-14")),
        ("We'll ski December 28 to January 3.", datetime(2023, 11, 8, tzinfo=timezone.utc),
         ("2023-12-28", "2024-01-03")),
        ("I'll be away from the 10th to the 17th.", REF, ("2023-05-10", "2023-05-17")),
        # "on the 17th": in the month named before it, else by tense around the reference
        ("My album dropped on the 11th.", REF, ("2023-04-11", "2023-04-11")),
        ("The party is on the 20th.", REF, ("2023-05-20", "2023-05-20")),
    ],
)
def test_dates_without_a_year_and_ranges(text: str, ref: datetime, expected: tuple[str, str]) -> None:
    (_, interval), = ground_time(text, ref)
    assert (interval.start.date().isoformat(), interval.end.date().isoformat()) == expected


def test_an_ordinal_day_takes_the_month_of_the_date_before_it() -> None:
    text = "I'm flying out June 10th and coming back on the 17th, and home by July 28th or on the 2nd."
    found = [(p, i.start.date().isoformat()) for p, i in ground_time(text, datetime(2026, 4, 17, tzinfo=timezone.utc))]
    assert found == [("June 10th", "2026-06-10"), ("on the 17th", "2026-06-17"),
                     ("July 28th", "2026-07-28"), ("on the 2nd", "2026-08-02")]


def test_a_date_with_a_year_keeps_it() -> None:
    assert days("on May 7, 2021 we met") == [("May 7, 2021", d(5, 7, 2021), d(5, 7, 2021))]
    assert days("We met on Friday, 7 May 2021.")[-1] == ("7 May 2021", d(5, 7, 2021), d(5, 7, 2021))
