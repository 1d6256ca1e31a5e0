"""Two sessions with one id in one conversation are a DuplicateSessionWarning naming both (issue 52);
a Conversation object is checked as its JSON form is."""

from __future__ import annotations

import json
import warnings

import pytest

from langchain_ripplemem.errors import DuplicateSessionWarning, InvalidConversationError
from langchain_ripplemem.memory import RippleMemory
from langchain_ripplemem.schemas import Conversation

from .conftest import BagOfWordsEmbeddings, make_conversation
from .test_cli_store_commands import cli

NS = ("users", "maya")
TWICE = {"id": "c1", "sessions": [
    {"id": "S1", "time": "2026-03-02", "turns": [{"id": "t1", "speaker": "Maya", "text": "I adopted a cat."}]},
    {"id": "S2", "time": "2026-03-09", "turns": [{"id": "t2", "speaker": "Maya", "text": "I moved to Lisbon."}]},
    {"id": "S1", "time": "2026-03-16", "turns": [{"id": "t3", "speaker": "Maya", "text": "The cat is Pixel."}]},
]}
NAMED = r"sessions\[2\]\.id: session id 'S1' is used again \(first at sessions\[0\]\); both are kept"


@pytest.mark.parametrize("given", ["json", "object"])
def test_a_session_id_used_twice_is_a_warning_naming_both(given):
    memory = RippleMemory(BagOfWordsEmbeddings())
    conversation = TWICE if given == "json" else Conversation.model_validate(TWICE)
    with pytest.warns(DuplicateSessionWarning, match=NAMED) as caught:
        report = memory.add_conversation(conversation, namespace=NS)
    assert report.units == 3  # nothing dropped: the turns differ
    assert len(caught) == 1 and [w for w in report.warnings if "'S1' is used again" in w] == [str(caught[0].message)]


def test_distinct_session_ids_warn_of_nothing():
    memory = RippleMemory(BagOfWordsEmbeddings())
    with warnings.catch_warnings():
        warnings.simplefilter("error", DuplicateSessionWarning)
        memory.add_conversation(make_conversation(), namespace=NS)


def test_a_conversation_object_with_a_turn_id_twice_is_refused_as_its_json_is():
    doubled = make_conversation()
    doubled.sessions[1].turns[0].id = "S1:1"
    memory = RippleMemory(BagOfWordsEmbeddings())
    for given in (doubled, doubled.model_dump(mode="json")):
        with pytest.raises(InvalidConversationError, match=r"sessions\[1\]\.turns\[0\]\.id: duplicate turn id 'S1:1'"):
            memory.add_conversation(given, namespace=NS)
    assert memory.namespaces() == []


def test_the_cli_warns_of_a_session_id_used_twice_in_one_line(tmp_path, capsys):
    file = tmp_path / "chat.json"
    file.write_text(json.dumps(TWICE), encoding="utf-8")
    code, out, err = cli(capsys, "ingest", file, "--persist", tmp_path / "store", "--quiet")
    assert code == 0 and out.startswith("1 conversation -> 3 units")
    (line,) = err.splitlines()  # once, as a line of the command's, not as a Python warning
    assert line.startswith("warning: conversation 'c1': sessions[2].id: session id 'S1' is used again (first at "
                           "sessions[0]); both are kept")
