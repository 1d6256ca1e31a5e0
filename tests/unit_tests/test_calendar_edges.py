"""Times at the ends of the calendar (issue 52, item 5): a valid timestamp never crashes a path.

A session at 9999-12-31T23:59:59Z is a valid time. "in April" said then is April of
year 10000, which no ``datetime`` holds: such a phrase is left ungrounded (the unit
keeps its session's day), as any phrase that cannot be grounded is. The same at
0001-01-01 for "last week".
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.schemas import Conversation, TimeInterval
from langchain_ripplemem.text.time.intervals import day_interval, month_span
from langchain_ripplemem.text.time.relative_time import relative_times, shift
from langchain_ripplemem.text.time.timeparse import ground_time
from langchain_ripplemem.write.extraction.extractor import Window
from langchain_ripplemem.write.extraction.llm_extractor import LLMExtractor
from tests.unit_tests.fakes import ScriptedChatModel

LAST = datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone.utc)
FIRST = datetime(1, 1, 1, tzinfo=timezone.utc)
PHRASES = ["in April", "I am moving in April", "I moved in April", "next week", "last week", "next year",
           "last year", "tomorrow", "yesterday", "today", "tonight", "in 2 years", "3 days ago", "a few years ago",
           "the past 3 years", "next month", "last month", "this weekend", "last weekend", "next weekend",
           "I will see her on Friday", "We met on Friday", "last Friday", "next Monday", "June 3rd",
           "I'll fly out on January 2nd", "the week after December 30th", "the week before January 2nd",
           "from the 30th to the 31st", "on the 2nd", "last December", "next January"]


@pytest.mark.parametrize("reference", [LAST, FIRST, LAST.replace(hour=0, minute=0, second=0)])
@pytest.mark.parametrize("text", PHRASES)
def test_grounding_at_the_ends_of_the_calendar_raises_nothing(reference: datetime, text: str) -> None:
    for _, interval in ground_time(text, reference):
        assert interval.start <= interval.end


def test_a_phrase_beyond_the_calendar_is_left_ungrounded_and_the_day_itself_is_kept() -> None:
    assert ground_time("I am moving to Lisbon in April.", LAST) == []
    assert ground_time("I moved to Lisbon last week.", FIRST) == []
    ((_, today),) = ground_time("I am in Lisbon today.", LAST)
    assert today == day_interval(LAST) and today.end == datetime.max.replace(tzinfo=timezone.utc)
    assert month_span(9999, 12, timezone.utc).day_span() == "9999-12-01..9999-12-31"


def test_a_shift_beyond_the_calendar_is_none() -> None:
    (after,) = relative_times("the week after the party")
    (before,) = relative_times("the day before the party")
    assert shift(TimeInterval.point(LAST), after) is None
    assert shift(TimeInterval.point(FIRST), before) is None


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(PHRASES), st.integers(min_value=0, max_value=800), st.booleans(),
       st.integers(min_value=-12, max_value=12))
def test_any_time_near_either_end_grounds_without_error(text: str, days: int, at_end: bool, hours: int) -> None:
    tz = timezone(timedelta(hours=hours))
    reference = (datetime(9999, 12, 31, 12, tzinfo=tz) - timedelta(days=days) if at_end
                 else datetime(1, 1, 1, 12, tzinfo=tz) + timedelta(days=days))
    for _, interval in ground_time(text, reference):
        assert interval.start <= interval.end


@pytest.mark.parametrize(("time", "text", "query"), [
    ("9999-12-31T23:59:59Z", "I am moving to Lisbon in April.", "Where is Maya moving in April?"),
    ("0001-01-01T00:00:00Z", "I moved to Lisbon last week.", "Where did Maya move last week?"),
])
def test_a_conversation_at_the_ends_of_the_calendar_is_remembered_and_recalled(bow, time, text, query) -> None:
    conversation = Conversation.model_validate({"id": "edge", "sessions": [{"id": "S1", "time": time, "turns": [
        {"id": "S1:1", "speaker": "Maya", "text": text}, {"id": "S1:2", "speaker": "Sam", "text": "Nice!"}]}]})
    memory = RippleMem(bow)
    report = memory.add_conversation(conversation, namespace="edge")
    assert report.new_units == 2
    result = memory.recall(query, namespace="edge")
    assert result.memories[0].unit.restatement == f"Maya: {text}"
    assert result.memories[0].unit.time == day_interval(conversation.sessions[0].time)


def test_a_chat_models_date_on_the_last_day_covers_the_day() -> None:
    conversation = Conversation.model_validate({"id": "edge", "sessions": [{"id": "S1", "time": LAST, "turns": [
        {"id": "a", "speaker": "Maya", "text": "I am moving to Lisbon today."}]}]})
    model = ScriptedChatModel(responses=[{"events": [{"restatement": "Maya moves to Lisbon.", "turn_ids": ["a"],
                                                      "kind": "event", "time_start": "9999-12-31"}]}])
    window = Window(conversation_id="edge", index=0, items=tuple(conversation.turns()))
    (unit,) = LLMExtractor(model, max_retries=0).extract(window, ("edge",)).units
    assert unit.time == day_interval(LAST)
