"""A chat model reads each turn once: adding a growing chat again neither pays nor duplicates."""

from __future__ import annotations

import re

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langchain_ripplemem.config import WriteConfig
from langchain_ripplemem.conversations.messages import conversation_from_messages
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.write.extraction.known_turns import marks_of

from .conftest import BagOfWordsEmbeddings
from .fakes import ScriptedChatModel

# With ids, as in a LangGraph message state: an edit keeps the message's id.
CHAT = [HumanMessage("I adopted a beagle called Biscuit.", id="m1"), AIMessage("Lovely name!", id="m2"),
        HumanMessage("Biscuit hates the vet.", id="m3"), AIMessage("Poor Biscuit.", id="m4"),
        HumanMessage("The vet is Dr. Okafor on Elm Street.", id="m5"), AIMessage("Noted.", id="m6")]
EDITED = [*CHAT[:2], HumanMessage("Biscuit loves the vet now.", id="m3"), CHAT[3]]


class RewordingModel(ScriptedChatModel):
    """Answers every extraction call with one event per turn, worded anew each call (as a real model may)."""

    fail_from: int | None = None  # calls from this number on fail

    def __init__(self, fail_first: int = 0) -> None:
        super().__init__(responses=[self._answer] * 50)
        self._fail_first = fail_first

    def _answer(self, messages: list[BaseMessage]) -> object:
        call = len(self.calls)
        if call <= self._fail_first or (self.fail_from is not None and call >= self.fail_from):
            return "not an extraction"  # calls no tool: the window fails
        turns = re.findall(r'"id": "([^"]+)"', str(messages[-1].content))
        return {"events": [{"restatement": f"(call {call}) what was said in turn {turn}", "turn_ids": [turn],
                            "kind": "event"} for turn in turns]}


def memory_with(model: RewordingModel) -> RippleMem:
    return RippleMem(BagOfWordsEmbeddings(), llm=model, write_config=WriteConfig(extraction={"llm_max_retries": 0}))


def test_adding_the_grown_chat_extracts_only_its_new_turns():
    model = RewordingModel()
    memory = memory_with(model)
    assert memory.add_messages(CHAT[:2], namespace="maya").new_units == 2
    report = memory.add_messages(CHAT[:4], namespace="maya")
    # The window holds all four turns (context for the new ones), but the two already
    # remembered are not stored again in other words: before, 4 new units.
    assert report.new_units == 2 and len(model.calls) == 2
    restated = sorted(u.restatement for u in memory.list_units("maya"))
    assert len(restated) == 4 and sum("(call 1)" in text for text in restated) == 2
    calls = len(model.calls)
    assert memory.add_messages(CHAT[:4], namespace="maya").new_units == 0
    assert len(model.calls) == calls  # nothing new: no model call at all (before: one more call)


def test_an_edited_message_is_read_again():
    model = RewordingModel()
    memory = memory_with(model)
    assert memory.add_messages(CHAT[:4], namespace="maya").new_units == 4
    edited = EDITED
    report = memory.add_messages(edited, namespace="maya")
    assert len(model.calls) == 2 and report.new_units == 1  # only the edited turn's event is new
    (new,) = [u for u in memory.list_units("maya") if "(call 2)" in u.restatement]
    assert new.source.turn_ids == ["m3"] and set(marks_of(new)) == {"m3"}


def test_a_window_that_failed_is_read_again_when_the_chat_is_added_again():
    model = RewordingModel(fail_first=1)
    memory = memory_with(model)
    failed = memory.add_messages(CHAT[:2], namespace="maya")
    assert failed.failed_windows and failed.new_units == 0
    assert memory.add_messages(CHAT[:2], namespace="maya").new_units == 2


async def test_async_ingest_reads_each_turn_once_too():
    model = RewordingModel()
    memory = memory_with(model)
    first = conversation_from_messages(CHAT[:4])
    assert (await memory.aadd_conversation(first, namespace="maya")).new_units == 4
    grown = conversation_from_messages(CHAT)
    assert grown.id == first.id
    assert (await memory.aadd_conversation(grown, namespace="maya")).new_units == 2
    assert len(memory.list_units("maya")) == 6


def test_rule_based_ingest_keeps_its_own_dedupe():
    memory = RippleMem(BagOfWordsEmbeddings())
    assert memory.add_messages(CHAT[:4], namespace="maya").new_units == 4
    assert memory.add_messages(CHAT, namespace="maya").new_units == 2


def _texts(memory: RippleMem) -> list[str]:
    return sorted(u.restatement for u in memory.list_units("maya", include_suppressed=True))


def test_an_edited_message_replaces_its_memory_offline(tmp_path):
    with RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path) as memory:
        memory.add_messages(CHAT[:4], namespace="maya")
        (old,) = [u.id for u in memory.list_units("maya") if "hates the vet" in u.restatement]
    edited = EDITED
    with RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path) as memory:  # fingerprints persist
        report = memory.add_messages(edited, namespace="maya")
        assert report.replaced == [old] and report.new_units == 1  # before: both versions kept
        assert "User: Biscuit loves the vet now." in _texts(memory) and len(_texts(memory)) == 4
        recalled = memory.recall("How does Biscuit feel about the vet?", namespace="maya")
        assert all("hates" not in m.unit.restatement for m in recalled.memories)


def test_an_edited_message_replaces_what_a_model_made_of_it():
    model = RewordingModel()
    memory = memory_with(model)
    memory.add_messages(CHAT[:4], namespace="maya")
    edited = EDITED
    report = memory.add_messages(edited, namespace="maya")
    assert len(report.replaced) == 1 and report.new_units == 1
    assert [t for t in _texts(memory) if "turn m3" in t] == ["(call 2) what was said in turn m3"]


def test_a_failed_extraction_of_the_edit_keeps_the_old_memory():
    model = RewordingModel()
    memory = memory_with(model)
    memory.add_messages(CHAT[:4], namespace="maya")
    model.fail_from = len(model.calls) + 1  # the next call fails
    edited = EDITED
    report = memory.add_messages(edited, namespace="maya")
    assert report.failed_windows and report.replaced == [] and len(_texts(memory)) == 4
    model.fail_from = None
    assert len(memory.add_messages(edited, namespace="maya").replaced) == 1  # the next add replaces it


def test_a_suppressed_memory_of_an_edited_message_stays_for_audit():
    memory = RippleMem(BagOfWordsEmbeddings())
    memory.add_messages(CHAT[:4], namespace="maya")
    (old,) = [u.id for u in memory.list_units("maya") if "hates the vet" in u.restatement]
    memory.suppress([old], namespace="maya", reason="wrong")
    report = memory.add_messages(EDITED, namespace="maya")
    assert report.replaced == [] and old in {u.id for u in memory.list_units("maya", include_suppressed=True)}


def test_chats_without_message_ids_that_open_alike_never_replace_each_other():
    # Without ids a chat is known by its first message, so these two share a conversation id;
    # their second messages are different turns, not an edit (before the content-addressed
    # turn ids, the second chat deleted the first one's answer).
    memory = RippleMem(BagOfWordsEmbeddings())
    memory.add_messages([HumanMessage("hi"), AIMessage("We adopted a beagle.")], namespace="maya")
    report = memory.add_messages([HumanMessage("hi"), AIMessage("My knee hurts.")], namespace="maya")
    assert report.replaced == [] and report.new_units == 1
    assert {"Assistant: We adopted a beagle.", "Assistant: My knee hurts."} <= set(_texts(memory))
