"""The session-document baseline (``session_dense``): whole sessions ranked, each returned as its best turn."""

from __future__ import annotations

import pytest

from benchmarks.systems import SYSTEM_NAMES, make_system, session_documents
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.schemas import Conversation
from tests.unit_tests.conftest import BagOfWordsEmbeddings, filled_memory


def _chats(user: str = "user", assistant: str = "assistant") -> Conversation:
    """Two chats of a user with an assistant: the user's words say what each was about."""
    chats = {"id": "lme", "sessions": [
        {"id": "A", "time": "2026-01-05T10:00:00+00:00", "turns": [
            {"id": "A:1", "speaker": "user", "text": "I want to repot my fern and my cactus."},
            {"id": "A:2", "speaker": "assistant", "text": "Sure, tell me about your bike and the tyres."},
            {"id": "A:3", "speaker": "user", "text": "The fern pot is cracked."}]},
        {"id": "B", "time": "2026-01-09T10:00:00+00:00", "turns": [
            {"id": "B:1", "speaker": "user", "text": "My bike tyres keep going flat."},
            {"id": "B:2", "speaker": "assistant", "text": "Fern, cactus, pot: check the valve first."}]}]}
    for session in chats["sessions"]:
        for turn in session["turns"]:
            turn["speaker"] = user if turn["speaker"] == "user" else assistant
    return Conversation.model_validate(chats)


# LongMemEval's records spell the roles "User" and "Assistant": the user's turns all the same.
@pytest.mark.parametrize("user,assistant", [("user", "assistant"), ("User", "Assistant")])
def test_a_user_assistant_session_is_the_users_turns_and_a_two_person_one_every_turn(user, assistant):
    memory = RippleMem(BagOfWordsEmbeddings())
    memory.add_conversation(_chats(user, assistant), namespace=("lme",))
    documents = session_documents(memory.list_units(("lme",)))
    # (Units name the speaker as written: "User: ...", whatever the spelling given.)
    both = (documents["A"] + documents["B"]).lower()
    assert list(documents) == ["A", "B"] and "assistant" not in both and "valve" not in both
    assert documents["A"].lower().count("user:") == 2 and "bike" not in documents["A"]
    two = session_documents(filled_memory(("two",)).list_units(("two",)))
    assert "Sam:" in two["S1"] and "Maya:" in two["S1"]


def test_sessions_rank_by_their_documents_and_each_comes_once_as_its_best_turn():
    memory = RippleMem(BagOfWordsEmbeddings())
    memory.add_conversation(_chats(), namespace=("lme",))
    system = make_system("session_dense", memory)
    found = system.retrieve("repot fern cactus", ("lme",), k=5).units
    # B's assistant turn repeats the words, but B's document is the user's bike talk: A ranks first.
    assert [u.source.session_id for u in found] == ["A", "B"]
    assert [u.source.turn_ids for u in found] == [["A:1"], ["B:2"]]
    assert system.retrieve("bike tyres flat", ("lme",), k=1).units[0].source.turn_ids == ["B:1"]
    assert "session_dense" in SYSTEM_NAMES
