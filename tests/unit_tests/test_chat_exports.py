"""Bring a history (issue 53, item 3): ChatGPT and Claude data exports, read and ingested.

The fixtures in ``fixtures/exports/`` are invented chats in the shapes of the two exports:
branches from an edited message and a regenerated answer, images and files without text,
system, hidden and tool messages, a null time, German and Japanese chats, one malformed chat
and one without text in each.
"""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_ripplemem import load_chatgpt_export, load_claude_export
from langchain_ripplemem.cli import main
from langchain_ripplemem.cli.integrity import check_store
from langchain_ripplemem.conversations.chat_exports import find_chat_export, read_chat_export
from langchain_ripplemem.conversations.chat_exports.chatgpt import chatgpt_chat
from langchain_ripplemem.conversations.chat_exports.claude import claude_chat
from langchain_ripplemem.conversations.chat_exports.export_reading import (
    HIDDEN,
    NO_TEXT,
    NOT_TEXT,
    OTHER_BRANCH,
    SYSTEM_OR_TOOL,
    read_chats,
)
from langchain_ripplemem.errors import InvalidConversationError, MalformedChatWarning
from langchain_ripplemem.memory import RippleMem

from .conftest import BagOfWordsEmbeddings
from .test_cli_store_commands import cli
from .test_crash_safety import run_until_killed

EXPORTS = Path(__file__).parent / "fixtures" / "exports"
CHATGPT, CLAUDE = EXPORTS / "chatgpt_conversations.json", EXPORTS / "claude_conversations.json"
PORTO, SOURDOUGH, KYOTO = ("6650a1c2-0b6e-8005-9d1e-2f4c7a1e9b01", "6733b7a0-51c4-8005-a2d2-9e5f0d6c1b22",
                           "67d4f1a8-2c3e-8005-b7a1-5c3e2f1d0a33")
GARDEN, PRESENT, CAT = ("3b9f6c1e-7a2d-4e8f-9c0b-1d2e3f4a5b01", "8d2e4f6a-1b3c-4d5e-8f90-a1b2c3d4e502",
                        "c4a1e7b2-9d3f-4a6b-8c2d-e1f2a3b4c503")
# Per export: the turns each chat must become (the current branch's messages with text), in order.
TURNS = {
    "chatgpt": {PORTO: ["p-u1", "p-a1", "p-u2b", "p-a2c", "p-u3", "p-a3", "p-a4"],
                SOURDOUGH: ["s-u1", "s-a3", "s-u2", "s-a4"], KYOTO: ["k-u1", "k-a1", "k-u2", "k-a2"]},
    "claude": {GARDEN: ["g-h1", "g-a1", "g-h3", "g-a2"], PRESENT: ["o-h1", "o-a1", "o-h2b", "o-a2b"],
               CAT: ["n-h1", "n-a1"]},
}
FILES = {"chatgpt": CHATGPT, "claude": CLAUDE}
READERS = {"chatgpt": chatgpt_chat, "claude": claude_chat}


def raw_chats(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def stated_times(path: Path) -> dict[str, datetime | None]:
    """Every message's time as the file states it, by message id (read apart from the readers)."""
    times: dict[str, datetime | None] = {}
    for chat in raw_chats(path):
        for node_id, node in (chat.get("mapping") or {}).items():
            stamp = (node.get("message") or {}).get("create_time")
            times[node_id] = datetime.fromtimestamp(stamp, timezone.utc) if isinstance(stamp, float) else None
        for message in chat.get("chat_messages") or []:
            if message["created_at"][:1].isdigit():  # not the malformed chat's "last Tuesday"
                times[message["uuid"]] = datetime.fromisoformat(message["created_at"].replace("Z", "+00:00"))
    return times


@pytest.mark.parametrize("name, load", [("chatgpt", load_chatgpt_export), ("claude", load_claude_export)])
def test_each_chat_is_a_conversation_of_its_current_branch_with_message_times(name, load):
    with pytest.warns(MalformedChatWarning, match=r"chat \[3\] 'Quarterly (numbers|report)'.*created?_(time|at)"):
        conversations = load(FILES[name])
    assert {c.id: [t.id for _, t in c.turns()] for c in conversations} == TURNS[name]
    times = stated_times(FILES[name])
    chats = {chat.get("id") or chat.get("uuid"): chat for chat in raw_chats(FILES[name])}
    for conv in conversations:
        (session,) = conv.sessions
        assert session.id == conv.id and conv.title == (chats[conv.id].get("title") or chats[conv.id]["name"])
        for turn in session.turns:
            assert turn.time == times[turn.id]
            assert turn.speaker == ("user" if turn.id.split("-")[1][0] in "uh" else "assistant")
    first = {c.id: c.sessions[0].time for c in conversations}
    assert first[PORTO if name == "chatgpt" else GARDEN] == (
        datetime.fromtimestamp(1716560000.123, timezone.utc) if name == "chatgpt"
        else datetime(2024, 4, 2, 8, 14, 3, 512837, tzinfo=timezone.utc))


def test_what_a_message_says_is_its_text_parts_only():
    by_id = {t.id: t.text for c in read_chat_export(CHATGPT).conversations for _, t in c.turns()}
    # An image beside text: the text; the image's pointer says nothing.
    assert by_id["p-u3"] == "This is the flat we're looking at in Foz. Does a rent of 1,400 euros sound fair?"
    assert by_id["k-u2"] == "ありがとう！宿は嵐山の旅館を予約しました。"  # an empty second part adds nothing
    by_id = {t.id: t.text for c in read_chat_export(CLAUDE).conversations for _, t in c.turns()}
    # Thinking, tool use and tool results are not what the assistant said.
    assert by_id["g-a1"] == ("A south-facing balcony is ideal for tomatoes. In Lyon's July heat, water them every "
                             "evening.")
    assert by_id["g-a2"].startswith("Yes: cherry tomatoes") and "6-8 hours" not in by_id["g-a2"]


@pytest.mark.parametrize("name, left_out", [
    ("chatgpt", {OTHER_BRANCH: 3, SYSTEM_OR_TOOL: 3, NO_TEXT: 2, NOT_TEXT: 1, HIDDEN: 1}),
    ("claude", {OTHER_BRANCH: 2, NO_TEXT: 1}),
])
def test_the_export_accounts_for_every_chat_and_every_message_left_out(name, left_out):
    export = read_chat_export(FILES[name])
    assert export.format == name and export.chats == 5
    assert export.messages == sum(map(len, TURNS[name].values()))
    assert dict(export.left_out) == left_out
    assert [(s.position, s.title) for s in export.skipped] == [
        (3, "Quarterly numbers" if name == "chatgpt" else "Quarterly report")]
    assert "(1 chat without text, 1 malformed, skipped)" in export.summary()


def test_without_a_current_node_the_latest_leaf_is_the_chat():
    chat = raw_chats(CHATGPT)[0]
    del chat["current_node"]
    # p-a4 is the latest leaf (p-a2a and p-a2b were answered earlier).
    assert [t.id for _, t in chatgpt_chat(chat, Counter()).turns()] == TURNS["chatgpt"][PORTO]
    chat = raw_chats(CLAUDE)[1]
    del chat["current_leaf_message_uuid"]  # the last message that answers nothing is the leaf: o-a2b
    assert [t.id for _, t in claude_chat(chat, Counter()).turns()] == TURNS["claude"][PRESENT]


@pytest.mark.parametrize("damage, reason", [
    (lambda c: c.update(mapping=[]), "mapping: expected an object of nodes, got list"),
    (lambda c: c.update(current_node="nowhere"), "current_node: 'nowhere' is not a node of mapping"),
    (lambda c: c["mapping"]["p-u1"].update(parent="p-a4"), "the parents of 'p-a4' go round in a cycle"),
    (lambda c: c["mapping"]["p-a1"]["message"].update(content=None), "mapping['p-a1'].message.content: expected "
                                                                      "an object"),
    (lambda c: c.pop("id") and c.pop("conversation_id"), "missing string field 'id'"),
])
def test_a_malformed_chatgpt_chat_is_named_and_skipped_and_the_rest_read(tmp_path, damage, reason):
    chats = raw_chats(CHATGPT)
    damage(chats[0])
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(chats), encoding="utf-8")
    export = read_chat_export(path, "chatgpt")
    assert [s.position for s in export.skipped] == [0, 3]
    assert export.skipped[0].title == "Moving to Porto" and reason in export.skipped[0].reason
    assert [c.id for c in export.conversations] == [SOURDOUGH, KYOTO]


JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                      max_size=3), max_leaves=6)


def _places(value: object, path: tuple = ()) -> list[tuple]:
    """Every place (a key or an index path) inside a JSON value."""
    if isinstance(value, dict):
        return [path] + [p for key, item in value.items() for p in _places(item, (*path, key))]
    if isinstance(value, list):
        return [path] + [p for i, item in enumerate(value) for p in _places(item, (*path, i))]
    return [path]


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_any_damage_to_a_chat_skips_that_chat_or_reads_it_never_fails_the_export(data):
    name = data.draw(st.sampled_from(["chatgpt", "claude"]))
    chats = raw_chats(FILES[name])
    target = data.draw(st.integers(0, 2))
    place = data.draw(st.sampled_from([p for p in _places(chats[target]) if p]))
    parent = chats[target]
    for step in place[:-1]:
        parent = parent[step]
    parent[place[-1]] = data.draw(JSON_VALUES)
    export = read_chats(chats, "conversations.json", name, READERS[name])
    # The damaged chat is read, skipped or found without text; the others are read as before.
    assert {c.id for c in export.conversations} >= {cid for i, cid in enumerate(TURNS[name]) if i != target}
    assert [s.position for s in export.skipped if s.position != target] == [3]
    assert all(s.reason for s in export.skipped)


def test_a_chat_id_listed_twice_is_skipped_the_second_time(tmp_path):
    chats = raw_chats(CLAUDE)
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([*chats, chats[2]]), encoding="utf-8")
    export = read_chat_export(path)
    assert [(s.position, s.reason) for s in export.skipped] == [(3, export.skipped[0].reason),
                                                               (5, "the id of chat [2] again")]
    assert [c.id for c in export.conversations] == [GARDEN, PRESENT, CAT]


def test_the_zip_archive_is_read_as_its_conversations_json(tmp_path):
    archive = tmp_path / "data-2025-06-01.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("chat.html", "<html></html>")
        out.write(CLAUDE, "conversations.json")
    assert [c.model_dump() for c in read_chat_export(archive).conversations] == \
        [c.model_dump() for c in read_chat_export(CLAUDE).conversations]
    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w") as out:
        out.writestr("users.json", "[]")
    with pytest.raises(InvalidConversationError, match="the archive holds no conversations.json"):
        find_chat_export(empty)


def test_the_format_is_told_by_the_shape_and_a_wrong_one_is_named(tmp_path):
    assert find_chat_export(CHATGPT).format == "chatgpt" and find_chat_export(CLAUDE).format == "claude"
    native = tmp_path / "conversations.json"
    native.write_text(json.dumps([{"id": "c", "sessions": []}]), encoding="utf-8")
    assert find_chat_export(native) is None
    with pytest.raises(InvalidConversationError, match="a chatgpt export, not a claude one"):
        read_chat_export(CHATGPT, "claude")
    with pytest.raises(InvalidConversationError, match="neither a ChatGPT export"):
        read_chat_export(native)
    mixed = tmp_path / "mixed.json"
    mixed.write_text(json.dumps(raw_chats(CHATGPT)[:1] + raw_chats(CLAUDE)[:1]), encoding="utf-8")
    with pytest.raises(InvalidConversationError, match="mixes ChatGPT chats"):
        find_chat_export(mixed)


# -- ripplemem ingest --------------------------------------------------------------------
def bow(persist: str) -> RippleMem:
    return RippleMem(BagOfWordsEmbeddings(), persist_directory=persist)


def stored(store: Path) -> list:
    with bow(str(store)) as memory:
        return memory.list_units(("me",))


@pytest.mark.parametrize("name", ["chatgpt", "claude"])
def test_ingest_makes_a_memory_of_every_message_with_text_and_again_adds_nothing(tmp_path, capsys, name):
    store = tmp_path / "store"
    code, out, err = cli(capsys, "ingest", FILES[name], "--persist", store, "--namespace", "me")
    assert code == 1  # one malformed chat was skipped: named, and said by the exit status
    assert "warning: chat [3] 'Quarterly" in err and "1 malformed chat skipped" in err
    assert f"{name} export" in out and "3 conversations -> 15 units (15 new)" in out if name == "chatgpt" \
        else "3 conversations -> 10 units (10 new)" in out
    assert "ingest: 100%" in err and "3/3 chats" in err  # the progress bar counts messages and chats
    units = stored(store)
    expected = {(cid, turn) for cid, turns in TURNS[name].items() for turn in turns}
    assert len(units) == len(expected)
    assert {(u.source.conversation_id, u.source.turn_ids[0]) for u in units} == expected
    times, sessions = stated_times(FILES[name]), {c.id: c.sessions[0].time for c in read_chat_export(FILES[name])
                                                  .conversations}
    for unit in units:  # each memory keeps its message's time (the chat's where the message has none)
        when = times[unit.source.turn_ids[0]] or sessions[unit.source.conversation_id]
        assert unit.metadata["session_time"] == when.isoformat()
        assert unit.restatement.startswith("User: " if unit.metadata["speaker"] == "User" else "Assistant: ")
    code, out, _ = cli(capsys, "ingest", FILES[name], "--persist", store, "--namespace", "me", "--quiet")
    assert code == 1 and f"-> {len(expected)} units (0 new)" in out
    assert [u.id for u in stored(store)] == [u.id for u in units]


def test_ingest_format_option_says_what_the_file_is(tmp_path, capsys):
    store = tmp_path / "store"
    code, _, err = cli(capsys, "ingest", CHATGPT, "--persist", store, "--format", "claude")
    assert code == 2 and "a chatgpt export, not a claude one" in err and not store.exists()
    code, _, err = cli(capsys, "ingest", CHATGPT, "--persist", store, "--format", "conversations")
    assert code == 2 and "[0]" in err and not store.exists()  # read as conversations: its first record is none
    code, out, _ = cli(capsys, "ingest", CHATGPT, "--persist", store, "--format", "chatgpt", "--quiet")
    assert code == 1 and "-> 15 units (15 new)" in out


class InterruptedEmbeddings(BagOfWordsEmbeddings):
    """Embeddings that stop the process (Ctrl-C) at their ``at``-th call: an ingest killed mid-way."""

    def __init__(self, at: int) -> None:
        self.calls, self.at = 0, at

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        if self.calls == self.at:
            raise KeyboardInterrupt
        return super().embed_documents(texts)


def test_an_interrupted_import_resumes_and_stores_each_memory_once(tmp_path, capsys):
    store = tmp_path / "store"
    argv = ["ingest", str(CLAUDE), "--persist", str(store), "--namespace", "me", "--quiet"]
    code = main(argv, memory_factory=lambda persist: RippleMem(InterruptedEmbeddings(at=2),
                                                                  persist_directory=persist))
    assert code == 130 and "interrupted" in capsys.readouterr().err
    first = stored(store)
    assert {u.source.conversation_id for u in first} == {GARDEN}  # the first chat only
    code, out, _ = cli(capsys, *argv)
    assert code == 1 and "-> 10 units (6 new)" in out
    units = stored(store)
    assert len(units) == len({u.id for u in units}) == 10
    assert {u.id for u in first} <= {u.id for u in units}
    code, out, _ = cli(capsys, *argv)
    assert "(0 new)" in out and len(stored(store)) == 10


# The child: `ripplemem ingest` of the ChatGPT fixture, blocking in the second chat's embedding until killed.
CHILD = r"""
import sys
from langchain_ripplemem.cli import main
from langchain_ripplemem.memory import RippleMem
from tests.unit_tests.conftest import BagOfWordsEmbeddings

class Blocking(BagOfWordsEmbeddings):
    calls = 0
    def embed_documents(self, texts):
        Blocking.calls += 1
        if Blocking.calls == 2:
            print("blocked", flush=True)
            sys.stdin.readline()  # the parent kills us here
        return super().embed_documents(texts)

main(["ingest", sys.argv[1], "--persist", sys.argv[2], "--namespace", "me", "--quiet"],
     memory_factory=lambda persist: RippleMem(Blocking(), persist_directory=persist))
"""


@pytest.mark.slow
def test_an_import_killed_mid_way_resumes_with_each_memory_once(tmp_path, capsys):
    store = tmp_path / "store"
    run_until_killed(["-c", CHILD, str(CHATGPT), str(store)], "blocked")
    assert {u.source.conversation_id for u in stored(store)} == {PORTO}
    code, out, _ = cli(capsys, "ingest", CHATGPT, "--persist", store, "--namespace", "me", "--quiet")
    assert code == 1 and "-> 15 units (8 new)" in out
    units = stored(store)
    assert len(units) == len({u.id for u in units}) == 15
    with bow(str(store)) as memory:
        report = check_store(memory)
    assert report.ok, report.summary()
