"""Sessions as evidence: in a user's chats with an assistant, the chats a question matches as a whole go first."""

from __future__ import annotations

import numpy as np
import pytest

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.recall.matched_sessions import matched_sessions, session_centroids, session_of
from langchain_ripplemem.schemas import Conversation

from .conftest import BagOfWordsEmbeddings, filled_memory

OFF = RecallConfig(assembly={"matched_sessions_first": 0})
QUESTION = "Which weekly classes do I attend?"


FILLER = ("soup recipe with leeks", "flat bike tyre repair", "tax form deadline", "laptop battery drain",
          "paint colour for the hallway", "train tickets to Leeds", "a birthday card verse", "tomato seedlings")


def _chats(user: str = "user", assistant: str = "assistant") -> Conversation:
    """One long chat that keeps mentioning classes in passing, two short ones each about a class the user
    takes, and eight on other errands (a history of eleven chats)."""
    long_chat = [(user, "My weekly budget spreadsheet has a column for classes and one for groceries."),
                 (assistant, "A budget with weekly columns for classes is a good idea."),
                 (user, "Classes cost more than groceries some weeks, do I attend too many?"),
                 (assistant, "Attend what you enjoy; weekly classes add up."),
                 *[(user if i % 2 == 0 else assistant, f"Grocery list item {i}: rice, beans, onions, tea.")
                   for i in range(8)]]
    pottery = [(user, "I attend a pottery class every Monday evening."),
               (assistant, "Pottery on Mondays sounds relaxing.")]
    spin = [(user, "My spin class on Thursdays is intense, weekly classes keep me going."),
            (assistant, "Spin is great cardio.")]
    return Conversation.model_validate({"id": "chats", "sessions": [
        {"id": name, "time": f"2026-01-{day:02d}T10:00:00+00:00",
         "turns": [{"id": f"{name}:{i}", "speaker": who, "text": text} for i, (who, text) in enumerate(turns)]}
        for day, (name, turns) in enumerate((("budget", long_chat), ("pottery", pottery), ("spin", spin), *(
            (f"errand{i}", [(user, f"Help me with a {topic}."), (assistant, f"Here is help with the {topic}.")])
            for i, topic in enumerate(FILLER))), start=1)]})


@pytest.fixture(scope="module")
def chats() -> RippleMem:
    memory = RippleMem(BagOfWordsEmbeddings())
    memory.add_conversation(_chats(), namespace=("u",))
    return memory


def _ids(result) -> list[str]:
    return [m.unit.id for m in result.memories]


def test_in_chats_with_an_assistant_the_matched_chats_best_memories_come_first(chats):
    off = chats.recall(QUESTION, namespace=("u",), k=10, config=OFF)
    on = chats.recall(QUESTION, namespace=("u",), k=10)
    sessions = [m.unit.source.session_id for m in off.memories]
    assert sessions[0] == sessions[1] == "budget"  # recollection alone: the long chat first, twice
    index = chats.reader.namespace_index(("u",))
    matched = matched_sessions(index, np.asarray(chats.reader.embed_query(QUESTION)), 5, set())
    n = RecallConfig().assembly.matched_sessions_first
    head = []  # the first memory of each matched session among the best 2n, in recollection's order
    for m in off.memories[: 2 * n]:
        if session_of(m.unit) in matched and session_of(m.unit) not in {session_of(h.unit) for h in head}:
            head.append(m)
    assert {("chats", "pottery"), ("chats", "spin")} <= {session_of(h.unit) for h in head}
    assert _ids(on)[: len(head)] == [h.unit.id for h in head]
    # Only the order of the best 2n changes, never what they are.
    assert set(_ids(on)[: 2 * n]) == set(_ids(off)[: 2 * n]) and _ids(on)[2 * n:] == _ids(off)[2 * n:]


def test_in_two_peoples_talk_the_order_is_recollections_own():
    memory = filled_memory(("two",))
    question = "What did Maya and Sam say about dinner and the trip?"
    assert _ids(memory.recall(question, namespace=("two",), k=7)) == \
        _ids(memory.recall(question, namespace=("two",), k=7, config=OFF))


def test_a_memory_of_few_chats_keeps_recollections_order():
    # Of three chats, the best five are all of them: being matched says nothing there.
    few = Conversation.model_validate(_chats().model_dump() | {"sessions": _chats().sessions[:3]})
    memory = RippleMem(BagOfWordsEmbeddings())
    memory.add_conversation(few, namespace=("few",))
    assert matched_sessions(memory.reader.namespace_index(("few",)), np.asarray(memory.reader.embed_query(QUESTION)), 5,
                            set()) == set()
    assert _ids(memory.recall(QUESTION, namespace=("few",), k=10)) == \
        _ids(memory.recall(QUESTION, namespace=("few",), k=10, config=OFF))


def test_a_hidden_memory_leaves_its_sessions_centroid():
    memory = RippleMem(BagOfWordsEmbeddings())
    memory.add_conversation(_chats(), namespace=("h",))
    index = memory.reader.namespace_index(("h",))
    query = np.asarray(memory.reader.embed_query("pottery class Monday evening"))
    assert matched_sessions(index, query, 1, set()) == {("chats", "pottery")}
    pottery = {u.id for u in memory.list_units(("h",)) if u.source.session_id == "pottery"}
    assert ("chats", "pottery") not in matched_sessions(index, query, 3, pottery)  # all hidden: no centroid


def test_a_session_is_its_conversations_own():
    # Chats named alike ("s1" in each) are different sessions: one centroid each.
    memory = RippleMem(BagOfWordsEmbeddings())
    for name, topic in (("first", "pottery class"), ("second", "tax form")):
        memory.add_conversation(Conversation.model_validate({"id": name, "sessions": [
            {"id": "s1", "time": "2026-01-01T10:00:00+00:00", "turns": [
                {"id": f"{name}:0", "speaker": "user", "text": f"Help with my {topic}."}]}]}), namespace=("n",))
    assert set(session_centroids(memory.reader.namespace_index(("n",))).sessions) == {("first", "s1"), ("second", "s1")}
