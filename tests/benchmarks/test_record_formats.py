"""The benchmark datasets' record formats: LoCoMo and LongMemEval records as conversations, errors naming the field."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from benchmarks.record_formats import conversation_from_locomo, conversation_from_longmemeval
from langchain_ripplemem.errors import DuplicateSessionWarning, InvalidConversationError

UTC = timezone.utc

# Small hand-written records in the benchmark formats (no benchmark data is copied).
LOCOMO = {
    "sample_id": "demo-1",
    "conversation": {
        "speaker_a": "Maya", "speaker_b": "Sam",
        "session_2_date_time": "10:37 am on 27 June, 2023",
        "session_2": [{"speaker": "Sam", "dia_id": "D2:1", "text": "How was Lisbon?"}],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Maya", "dia_id": "D1:1", "text": "I'm allergic to shellfish."},
            {"speaker": "Sam", "dia_id": "D1:2", "text": "Look at this!",
             "img_url": ["https://example.org/x.jpg"], "blip_caption": "a photo of a grill",
             "query": "harbor grill"},
        ],
        "session_10_date_time": "9:00 am on 1 July, 2023",
        "session_10": [{"speaker": "Maya", "dia_id": "D10:1", "text": "Back home."}],
        "session_11_date_time": "9:00 am on 2 July, 2023",  # a date without a session
    },
    "qa": [],
}
LONGMEMEVAL = {
    "question_id": "q-1",
    "question": "Where did I go?",
    "question_date": "2023/06/01 (Thu) 10:00",
    "haystack_session_ids": ["s-a", "s-b"],
    "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 18:05"],
    "haystack_sessions": [
        [{"role": "user", "content": "I went to Lisbon.", "has_answer": True},
         {"role": "assistant", "content": "Nice!"}],
        [{"role": "user", "content": "Any tips for Porto?"}],
    ],
}

def test_locomo_record() -> None:
    conv = conversation_from_locomo(LOCOMO)
    assert conv.id == "demo-1"
    assert [s.id for s in conv.sessions] == ["session_1", "session_2", "session_10"]
    assert conv.sessions[0].time == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert [t.id for _, t in conv.turns()] == ["D1:1", "D1:2", "D2:1", "D10:1"]
    image = conv.sessions[0].turns[1]
    assert image.image_caption == "a photo of a grill"
    assert image.img_url == ["https://example.org/x.jpg"]  # type: ignore[attr-defined]
    assert image.image_query == "harbor grill"  # type: ignore[attr-defined]
    assert conv.sessions[0].turns[0].image_caption is None


def test_locomo_errors_name_the_field() -> None:
    bad = json.loads(json.dumps(LOCOMO))
    del bad["conversation"]["session_1"][1]["dia_id"]
    with pytest.raises(InvalidConversationError, match=r"conversation\.session_1\[1\].*'dia_id'"):
        conversation_from_locomo(bad)
    bad = json.loads(json.dumps(LOCOMO))
    bad["conversation"]["session_2_date_time"] = "teatime"
    with pytest.raises(InvalidConversationError, match="session_2_date_time.*'teatime'"):
        conversation_from_locomo(bad)
    with pytest.raises(InvalidConversationError, match="'conversation'"):
        conversation_from_locomo({"sample_id": "x"})


# --------------------------------------------------------------------------- LongMemEval


def test_longmemeval_record() -> None:
    conv = conversation_from_longmemeval(LONGMEMEVAL)
    assert conv.id == "q-1" and [s.id for s in conv.sessions] == ["s-a", "s-b"]
    assert conv.sessions[1].time == datetime(2023, 5, 21, 18, 5, tzinfo=UTC)
    first, second = conv.sessions[0].turns
    assert (first.id, first.speaker, first.text) == ("s-a:0", "user", "I went to Lisbon.")
    assert first.has_answer is True  # type: ignore[attr-defined]
    assert not hasattr(second, "has_answer") or second.has_answer is None  # type: ignore
    assert conv.question_date == "2023/06/01 (Thu) 10:00"  # type: ignore[attr-defined]


def test_longmemeval_session_listed_twice_with_the_same_turns_is_kept_once_with_a_warning() -> None:
    # LongMemEval-S lists a few filler sessions twice, at two dates: it must load, once.
    record = {**LONGMEMEVAL, "haystack_session_ids": ["s-a", "s-b", "s-a"],
              "haystack_dates": [*LONGMEMEVAL["haystack_dates"], "2023/05/25 (Thu) 09:00"],
              "haystack_sessions": [*LONGMEMEVAL["haystack_sessions"], LONGMEMEVAL["haystack_sessions"][0]]}
    with pytest.warns(DuplicateSessionWarning, match=r"'s-a'.*haystack_sessions\[0\].*\[2\]"):
        conv = conversation_from_longmemeval(record)
    assert [s.id for s in conv.sessions] == ["s-a", "s-b"]
    assert conv.sessions[0].time == datetime(2023, 5, 20, 2, 21, tzinfo=UTC)  # the first listing's date


def test_longmemeval_session_id_listed_twice_with_different_turns_names_both_places() -> None:
    record = {**LONGMEMEVAL, "haystack_session_ids": ["s-a", "s-a"]}
    with pytest.raises(InvalidConversationError,
                       match=r"'s-a' is listed twice with different turns \(haystack_sessions\[0\] and "
                             r"haystack_sessions\[1\]\)"):
        conversation_from_longmemeval(record)


def test_longmemeval_errors_name_the_field() -> None:
    bad = {**LONGMEMEVAL, "haystack_dates": ["2023/05/20 (Sat) 02:21", "yesterday-ish"]}
    with pytest.raises(InvalidConversationError, match=r"haystack_dates\[1\].*'yesterday-ish'"):
        conversation_from_longmemeval(bad)
    bad = {**LONGMEMEVAL, "haystack_dates": ["2023/05/20 (Sat) 02:21"]}
    with pytest.raises(InvalidConversationError, match="differ in length"):
        conversation_from_longmemeval(bad)
    bad = {**LONGMEMEVAL, "haystack_sessions": [[{"role": "user"}], []]}
    with pytest.raises(InvalidConversationError, match=r"haystack_sessions\[0\]\[0\].*'content'"):
        conversation_from_longmemeval(bad)
