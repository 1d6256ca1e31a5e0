"""One speaker's identical restatements are one memory in a recall (issue 52: 5,000 identical turns).

All copies stay stored; the result lists the best-ranked one, with every copy's
turn among its sources, and the places the others took go to other memories.
"""

from __future__ import annotations

from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.schemas import Conversation

SAID = "I parked the car on level 3 of the garage."
OTHERS = [("Maya", "The car keys are in the blue bowl."), ("Sam", "I parked the car at the station garage."),
          ("Maya", "The garage closes at ten tonight."), ("Sam", "Level 3 was full when I parked the van."),
          ("Maya", "My car needs new tyres soon."), ("Sam", "The parking garage charges by the hour.")]


def conversation() -> Conversation:
    # Every other copy in other case and spacing: the same words.
    turns = [{"id": f"S1:{i}", "speaker": "Maya", "text": SAID if i % 2 else "  i PARKED the car on level 3 "
              "of  the garage."} for i in range(200)]
    turns += [{"id": f"S2:{i}", "speaker": speaker, "text": text} for i, (speaker, text) in enumerate(OTHERS)]
    return Conversation.model_validate({"id": "garage", "sessions": [
        {"id": "S1", "time": "2026-03-02T19:00:00Z", "turns": turns[:200]},
        {"id": "S2", "time": "2026-03-03T19:00:00Z", "turns": turns[200:]}]})


def said(restatement: str) -> bool:
    """Whether a restatement is Maya's sentence, whitespace and case aside."""
    return " ".join(restatement.casefold().split()) == f"maya: {SAID.casefold()}"


def test_identical_restatements_are_one_memory_listing_every_turn(bow) -> None:
    memory = RippleMem(bow)
    memory.add_conversation(conversation(), namespace="g")
    assert len(memory.list_units("g")) == 206  # every copy stays stored
    result = memory.recall("Where did Maya park the car?", namespace="g", k=5)
    copies = [m for m in result.memories if said(m.unit.restatement)]
    assert len(result.memories) == 5 and len(copies) == 1
    turns = [turn for source in copies[0].sources for turn in source.turn_ids]
    assert sorted(turns) == sorted(f"S1:{i}" for i in range(200))
    # The four other places go to other memories, another speaker's same words among them.
    assert {m.unit.restatement for m in result.memories if m is not copies[0]} <= {
        f"{speaker}: {text}" for speaker, text in OTHERS}
    # Said once more later: the namespace's grown view finds that copy too.
    memory.add_conversation({"id": "later", "sessions": [{"id": "S9", "time": "2026-04-01T10:00:00Z", "turns": [
        {"id": "S9:1", "speaker": "Maya", "text": SAID}]}]}, namespace="g")
    again = memory.recall("Where did Maya park the car?", namespace="g", k=5)
    (copy,) = [m for m in again.memories if said(m.unit.restatement)]
    assert len(copy.sources) == 201 and ("later", "S9:1") in {(s.conversation_id, s.turn_ids[0]) for s in copy.sources}


def test_another_speakers_same_words_are_another_memory(bow) -> None:
    memory = RippleMem(bow)
    memory.add_conversation({"id": "bye", "sessions": [{"id": "S1", "time": "2026-03-02T19:00:00Z", "turns": [
        {"id": "1", "speaker": "Maya", "text": "Take care, bye!"},
        {"id": "2", "speaker": "Sam", "text": "Take care, bye!"},
        {"id": "3", "speaker": "Maya", "text": "take care,  BYE!"}]}]}, namespace="b")
    result = memory.recall("Who said take care, bye?", namespace="b", k=5)
    assert sorted((m.unit.metadata["speaker"], len(m.sources)) for m in result.memories) == [("Maya", 2), ("Sam", 1)]
