"""Times relative to another time: "the weekend before April 2nd", "two weeks after the wedding"."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from langchain_ripplemem.schemas import TimeInterval
from langchain_ripplemem.text.time.relative_time import concurrent_times, relative_times, shift
from langchain_ripplemem.text.time.timeparse import ground_time

THURSDAY = TimeInterval.point(datetime(2026, 4, 2, 10, tzinfo=timezone.utc))


@pytest.mark.parametrize(("phrase", "expected"), [
    ("the weekend before", "2026-03-28..2026-03-29"),
    ("the weekend after", "2026-04-04..2026-04-05"),
    ("the day before", "2026-04-01"),
    ("the night after", "2026-04-03"),
    ("the week before", "2026-03-26..2026-04-01"),
    ("two weeks before", "2026-03-19..2026-03-25"),
    ("the month before", "2026-03-01..2026-03-31"),
    ("the year after", "2027-01-01..2027-12-31"),
    ("the Sunday before", "2026-03-29"),
    ("the Thursday before", "2026-03-26"),
    ("the Monday after", "2026-04-06"),
])
def test_shift_moves_a_time_by_the_period_the_phrase_names(phrase: str, expected: str):
    (rel,) = relative_times(f"What did she do {phrase} her interview?")
    assert shift(THURSDAY, rel).day_span() == expected


def test_relative_times_find_the_phrase_and_where_its_event_begins():
    text = "Where was Sam a couple of days after the wedding?"
    (rel,) = relative_times(text)
    assert (rel.period, rel.count, rel.before) == ("day", 2, False)
    assert text[rel.end:] == "the wedding?"
    assert relative_times("Before the wedding, he was in Denver.") == []


def test_ground_time_moves_a_date_the_phrase_is_relative_to():
    reference = datetime(2023, 9, 1, tzinfo=timezone.utc)
    grounded = dict(ground_time("We went camping the week before August 3, 2023.", reference))
    assert grounded["the week before August 3, 2023"].day_span() == "2023-07-27..2023-08-02"
    (only,) = ground_time("We went camping on August 3, 2023.", reference)
    assert only[1].day_span() == "2023-08-03"


@pytest.mark.parametrize(("text", "found"), [
    ("Could Sam feed Biscuit while Maya is away in Lisbon?", True),
    ("What did Nate do while Joanna was on her road trip?", True),
    ("Who waters the plants while Mary Ann will be abroad?", True),
    ("What does Joanna do while she writes?", False),  # about the event itself
    ("What did Melanie and her family do while camping?", False),
    ("Where was Sam the week after Maya was in Lisbon?", False),
])
def test_concurrent_times_find_while_and_a_named_subject(text: str, found: bool):
    rels = concurrent_times(text)
    assert bool(rels) is found
    if found:
        (rel,) = rels
        assert rel.period == "while" and text[rel.end:].split()[0][0].isupper()
        assert shift(THURSDAY, rel) == THURSDAY  # the event's own time
    assert relative_times(text) == [] or "week after" in text  # the write-time grounder never sees "while"
