"""A decision question keeps places for what constrains its person (recall/decision_questions.py)."""

from __future__ import annotations

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.memory import RippleMemory
from langchain_ripplemem.recall.decision_questions import asks_for_a_decision, constraint_matches

from .conftest import BagOfWordsEmbeddings, drawn_conversation

# Maya's allergy shares no word with the question, only with the option Sam found (the grill's shellfish).
ALLERGY = ("Maya", "The doctor says shellfish is off limits, the epipen stays in my bag.")
SESSIONS = [
    [("Sam", "How was the week?"), ALLERGY, ("Sam", "Rough, take care.")],
    [("Maya", "Birthday plans are still open, a quiet birthday is fine."), ("Sam", "Dinner is on me then.")],
    [("Sam", "I booked Harbor Grill for your birthday dinner."), ("Sam", "Harbor Grill serves shellfish and oysters.")],
    [("Maya", "The birthday cake should be chocolate."), ("Maya", "Birthday dinner with Jess maybe."),
     ("Sam", "Jess loves a birthday dinner.")],
]
QUESTION = "Should Maya accept Sam's birthday dinner pick?"


def _memory() -> RippleMemory:
    memory = RippleMemory(BagOfWordsEmbeddings())
    memory.add_conversation(drawn_conversation(SESSIONS), namespace="t")
    return memory


def _ids(memory: RippleMemory, config: RecallConfig) -> list[str]:
    return [m.unit.source.turn_ids[0] for m in memory.recall(QUESTION, namespace="t", config=config).memories]


def test_the_persons_constraint_keeps_a_place() -> None:
    memory = _memory()
    off = RecallConfig(assembly={"top_k": 4, "keep_constraints": 0, "keep_own": 0})
    # In so small a memory every option ranks all of Maya's few memories: the fused top 3 hold the allergy.
    on = off.replace(assembly={"keep_constraints": 3, "keep_constraints_spacing": 1.0})
    assert "S0:1" not in _ids(memory, off)
    assert "S0:1" in _ids(memory, on)
    # Not a decision question: the same words asked as a lookup keep no such place.
    looked_up = [m.unit.source.turn_ids[0] for m in memory.recall(
        "When is Maya's birthday dinner with Sam?", namespace="t", config=on).memories]
    assert "S0:1" not in looked_up


def test_constraint_matches_rank_the_persons_memories_by_the_options_not_the_question() -> None:
    memory = _memory()
    index = memory.namespace_index("t")
    by_turn = {u.source.turn_ids[0]: u.id for u in memory.list_units("t")}
    grill = by_turn["S2:1"]  # "Harbor Grill serves shellfish and oysters."
    ranked = constraint_matches(index, [grill], "maya", 3, set())
    assert ranked[0][0] == by_turn["S0:1"]
    assert {uid for uid, _ in ranked} <= {by_turn[t] for t in ("S0:1", "S1:0", "S3:0", "S3:1")}  # Maya's only
    # Each option ranks on its own and the ranks are fused: a second option that is close to another of
    # Maya's memories puts that one level with the allergy, never above both options' choices.
    fused = constraint_matches(index, [grill, by_turn["S3:2"]], "maya", 2, set())
    assert by_turn["S0:1"] in {uid for uid, _ in fused}
    assert constraint_matches(index, [grill], "maya", 3, {by_turn["S0:1"]})[0][0] != by_turn["S0:1"]  # hidden
    assert constraint_matches(index, ["no-such-id"], "maya", 3, set()) == []


def test_decision_questions_are_told_from_requests_and_lookups() -> None:
    assert asks_for_a_decision("Would Caroline pursue writing as a career?")
    assert asks_for_a_decision("Is it a good idea for Maya to fly on Friday?")
    assert not asks_for_a_decision("Should I bring an umbrella?")
    assert not asks_for_a_decision("What did Maya say about the dinner?")
