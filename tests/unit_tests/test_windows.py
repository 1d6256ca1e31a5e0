"""Cutting a conversation into windows of turns, and an overlong turn's text into chunks at sentences."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_ripplemem.schemas import Conversation
from langchain_ripplemem.write.extraction.windows import make_windows, split_text

from .test_extraction import S1_TIME, conv_of


def counted(n: int, per_session: int = 100) -> Conversation:
    return conv_of(*[(f"S{s // per_session + 1}", S1_TIME, [
        (f"t{i}", "A", "hi") for i in range(s, min(n, s + per_session))])
        for s in range(0, n, per_session)])



@pytest.mark.parametrize(("n", "size", "overlap", "expected"), [
    (5, 3, 1, [[0, 1, 2], [2, 3, 4]]),
    (5, 2, 0, [[0, 1], [2, 3], [4]]),  # a short tail
    (4, 3, 1, [[0, 1, 2], [2, 3]]),
    (3, 3, 2, [[0, 1, 2]]),  # never a last window of only repeated turns
])
def test_windows_size_and_overlap(n: int, size: int, overlap: int, expected: list) -> None:
    windows = make_windows(counted(n), size=size, overlap=overlap)
    assert [w.turn_ids for w in windows] == [[f"t{i}" for i in ids] for ids in expected]
    assert [w.index for w in windows] == list(range(len(expected)))


def test_windows_span_sessions_and_keep_each_items_session() -> None:
    conv = counted(5, per_session=3)  # S1: t0-t2, S2: t3-t4
    first, second = make_windows(conv, size=4, overlap=2)
    assert first.turn_ids == ["t0", "t1", "t2", "t3"]
    assert [s.id for s, _ in first.items] == ["S1", "S1", "S1", "S2"]
    assert second.turn_ids == ["t2", "t3", "t4"]
    assert all(w.conversation_id == conv.id for w in (first, second))


def test_windows_of_empty_conversation() -> None:
    assert make_windows(Conversation(id="empty"), size=3) == []


@pytest.mark.parametrize(("size", "overlap", "named"), [
    (0, 0, "size"), (-2, 0, "size"), (2.5, 0, "size"), (3, -1, "overlap"), (3, 3, "overlap"),
])
def test_window_arguments_are_validated(size: object, overlap: object, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        make_windows(counted(3), size=size, overlap=overlap)  # type: ignore[arg-type]


def test_split_text_cuts_overlong_sentences_at_spaces() -> None:
    assert split_text("short", 10) == ["short"] and split_text("aaaa bbbb cccc dddd", 9) == [
        "aaaa bbbb", "cccc dddd"]
    assert split_text("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]


@given(st.lists(st.sampled_from(["a", "bb ", "Cc. ", "dddddddddddd", " ", "!\n", "\t", "Ee ff? "]),
                max_size=80).map("".join),
       st.integers(min_value=1, max_value=40))
def test_split_text_keeps_every_character_within_the_limit(text: str, limit: int) -> None:
    chunks = split_text(text.strip(), limit)
    if len(text.strip()) > limit:
        assert all(0 < len(c) <= limit for c in chunks)
    assert "".join("".join(chunks).split()) == "".join(text.split())  # all of it, in order


def test_split_text_of_one_huge_sentence() -> None:
    text = " ".join(f"word{i}" for i in range(100_000))  # 689 kB, no sentence break
    chunks = split_text(text, 900)
    assert max(len(c) for c in chunks) <= 900 and " ".join(chunks) == text
