"""Issue 52: a newer statement ranks above the one it replaced for a question about now, the older one for a
question about the past or as_of; additions and statements on another subject supersede nothing. Offline, with
the shipped encoder (the ranking the issue measured)."""

from __future__ import annotations

import pytest

from langchain_ripplemem.embeddings import MiniLMOnnxEmbeddings
from langchain_ripplemem.memory import RippleMem

from .test_supersession import talk

MAYA = ("maya",)
SMALL_TALK = [("Sam", "How was your weekend?"), ("Maya", "Quiet, I read a lot."), ("Sam", "The weather was awful.")]


@pytest.fixture(scope="module")
def encoder() -> MiniLMOnnxEmbeddings:
    return MiniLMOnnxEmbeddings()


def remembered(encoder: MiniLMOnnxEmbeddings, *sessions: tuple[str, list[tuple[str, str]]]) -> RippleMem:
    memory = RippleMem(encoder)
    memory.add_conversation(talk("c", *sessions), namespace=MAYA)
    return memory


def first(memory: RippleMem, question: str, **kwargs) -> list[str]:
    """The restatements recall returns, best first."""
    return [m.unit.restatement for m in memory.recall(question, namespace=MAYA, **kwargs).memories]


@pytest.fixture(scope="module")
def paris_berlin(encoder) -> RippleMem:
    """The issue's conversation: Paris on 1 January, Berlin on 1 March."""
    return remembered(encoder, ("2026-01-01T10:00:00+00:00", [("Maya", "I live in Paris.")]),
                      ("2026-03-01T10:00:00+00:00", [("Maya", "I moved to Berlin last week.")]))


@pytest.mark.parametrize("question", ["Where does Maya live now?", "Where does Maya live?"])
def test_a_question_about_now_gets_the_newer_statement_first(paris_berlin, question):
    assert paris_berlin.stats(MAYA).superseded == 1
    found = first(paris_berlin, question, k=2) + ["Maya: I live in Paris."]  # not found: last
    assert found.index("Maya: I moved to Berlin last week.") < found.index("Maya: I live in Paris.")


@pytest.mark.parametrize("question", ["Where did Maya live before Berlin?", "Where did Maya live in January?",
                                      "Where did Maya use to live?"])
def test_a_question_about_the_past_gets_the_older_statement_first(paris_berlin, question):
    found = first(paris_berlin, question, k=5) + ["Maya: I moved to Berlin last week."]  # not found: last
    assert found.index("Maya: I live in Paris.") < found.index("Maya: I moved to Berlin last week.")


def test_as_of_a_day_between_gets_the_older_statement_and_hides_the_newer(paris_berlin):
    found = first(paris_berlin, "Where does Maya live now?", k=5, as_of="2026-02-15")
    assert found[0] == "Maya: I live in Paris." and "Maya: I moved to Berlin last week." not in found


def test_a_newer_statement_the_question_does_not_match_comes_above_the_older(encoder):
    """The new number shares no word with the question: the one it replaced brings it in, above itself."""
    memory = remembered(encoder, ("2026-01-05T10:00:00+00:00", [("Maya", "My mobile number is 0612 448 190."),
                                                                 *SMALL_TALK]),
                        ("2026-03-05T10:00:00+00:00", [*SMALL_TALK, ("Maya", "Call me on 0687 220 315 from now on.")]))
    result = memory.recall("What is Maya's mobile number?", namespace=MAYA, k=3)
    found = [m.unit.restatement for m in result.memories]
    assert found.index("Maya: Call me on 0687 220 315 from now on.") + 1 == \
        found.index("Maya: My mobile number is 0612 448 190.")
    assert [m.score for m in result.memories] == sorted((m.score for m in result.memories), reverse=True)


@pytest.mark.parametrize(("before", "after"), [
    ("I work at the bakery on Mill Road.", "I work at the Crown on weekends as well."),
    ("My favourite film is Alien.", "My favourite film is also Heat, honestly."),
    ("I'm working as a nurse.", "I'm working as a tutor on the side."),
    ("My number is 0470 112 908.", "I got a second phone for work, that number is 0470 556 201."),
    ("We have a beagle called Rufus.", "We adopted another dog last week, a greyhound named Blue."),
    ("I work at the bakery on Mill Road.", "I started a second job, bartending at the Crown."),
])
def test_an_addition_supersedes_nothing(encoder, before, after):
    memory = remembered(encoder, ("2026-01-05T10:00:00+00:00", [("Maya", before), *SMALL_TALK]),
                        ("2026-03-05T10:00:00+00:00", [*SMALL_TALK, ("Maya", after)]))
    assert memory.stats(MAYA).superseded == 0


@pytest.mark.parametrize(("before", "after", "question"), [
    ("I live in Seville, in the old town.", "When the rain started we moved to the covered terrace.",
     "Where does Maya live?"),
    ("I live in Lyon, near the river.", "At the concert I moved to the front row for the encore.",
     "Where does Maya live?"),
    ("For work, use my office address, m.ortiz@kestrel.io.", "The heating in the office is broken again.",
     "What is Maya's work email?"),
    ("I live in Utrecht near the station.", "Sam moved to Rotterdam last month.", "Where does Maya live now?"),
])
def test_a_later_statement_on_another_subject_supersedes_nothing(encoder, before, after, question):
    memory = remembered(encoder, ("2026-01-05T10:00:00+00:00", [("Maya", before), *SMALL_TALK]),
                        ("2026-03-05T10:00:00+00:00", [*SMALL_TALK, ("Maya", after)]))
    assert memory.stats(MAYA).superseded == 0
    assert first(memory, question, k=3)[0] == f"Maya: {before}"
