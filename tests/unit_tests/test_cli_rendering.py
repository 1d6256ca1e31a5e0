"""What `ripplemem recall` and `list` print: escaped control/bidi characters, long texts cut with a note,
one unambiguous label per memory in the listing and the trace (issue 12, item 12)."""

from __future__ import annotations

import json
import re

import pytest

from langchain_ripplemem.render.plain_text import CUT_NOTE, DISPLAY_CHARS, json_text, recall_labels, terminal_text
from langchain_ripplemem.schemas import Conversation, MemoryUnit, RecalledMemory, RecallResult, RoundTrace

from .conftest import make_conversation, make_unit
from .test_cli_store_commands import cli, ingest, units_of

RAW = ["\u202e", "\x1b", "\x00", "\u200b", "\u2066", "\x9b", "\U000e0041"]  # bidi, ANSI, NUL, zero-width, C1, tag
HOSTILE = "I moved to Lisbon \u202eevil\u202c and \x1b[2J cleared \x00 in June\u200b\u2066x\u2069 \x9b1m \U000e0041."
LONG_TURN = "Lisbon is lovely in June. " + "The tram rattles up the hill again. " * 120  # ~4.4 kB


def hostile_conversation() -> Conversation:
    return Conversation.model_validate({"id": "lisbon", "sessions": [
        {"id": "S1", "time": "2026-03-02T19:00:00+00:00", "turns": [
            {"id": "S1:1", "speaker": "Maya", "text": HOSTILE},
            {"id": "S1:2", "speaker": "Sam", "text": LONG_TURN}]}]})


@pytest.mark.parametrize(("text", "shown"), [
    ("a\u202eb", "a\\u202eb"), ("\x1b[31mred", "\\x1b[31mred"), ("nul\x00", "nul\\x00"), ("\x9b", "\\x9b"),
    ("tag\U000e0041", "tag\\U000e0041"), ("line\nbreak\ttab", "line\\nbreak\\ttab"), ("\ufeffbom", "\\ufeffbom"),
    ("café 中文 🙂", "café 中文 🙂"), ("👩\u200d👩\u200d👧", "👩\u200d👩\u200d👧"),  # text and emoji joiners stay
])
def test_terminal_text_escapes_what_acts_on_a_terminal(text, shown):
    assert terminal_text(text) == shown
    assert terminal_text("a\nb\tc\x1b", multiline=True) == "a\nb\tc\\x1b"


def test_json_text_is_safe_to_print_and_loses_nothing():
    data = {"q": HOSTILE, "lone": "\udc80", "emoji": "🙂\u200d", "nested": [LONG_TURN, "x\ny"]}
    text = json_text(data)
    assert not any(ch in text for ch in [*RAW, "\udc80"])
    assert json.loads(text) == data


@pytest.fixture
def lisbon(tmp_path, capsys):
    store = tmp_path / "store"
    ingest(capsys, store, "users/maya", hostile_conversation())
    return store


def test_recall_and_list_escape_stored_and_asked_text(lisbon, capsys):
    question = "Where did Maya move?\u202e \x1b[31m"
    for argv in (["recall", question], ["list"]):
        code, out, err = cli(capsys, *argv, "--persist", lisbon, "--namespace", "users/maya")
        assert code == 0, err
        assert not any(ch in out + err for ch in RAW), argv
        assert "Lisbon \\u202eevil\\u202c and \\x1b[2J cleared \\x00 in June\\u200b\\u2066x\\u2069" in out
        assert argv == ["list"] or out.startswith("Q: Where did Maya move?\\u202e \\x1b[31m\n")
    code, out, _ = cli(capsys, "recall", question, "--persist", lisbon, "--namespace", "users/maya", "--json")
    assert not any(ch in out for ch in RAW)
    result = RecallResult.model_validate_json(out)
    assert result.query == question and HOSTILE in {m.unit.restatement.removeprefix("Maya: ") for m in result.memories}


def test_recall_cuts_a_long_query_and_long_memories_and_says_so(lisbon, capsys):
    longest = max((u.restatement for u in units_of(lisbon, ("users", "maya"))), key=len)
    assert len(longest) > 3 * DISPLAY_CHARS  # a long turn's chunk (ExtractionConfig.max_turn_chars)
    question = "Where did Maya move? " * 5000  # 105 kB
    argv = ("recall", question, "--persist", lisbon, "--namespace", "users/maya")
    code, out, _ = cli(capsys, *argv)
    assert code == 0
    assert out.splitlines()[0] == f"Q: {question[:DISPLAY_CHARS]}… [+{len(question) - DISPLAY_CHARS} chars]"
    assert out.rstrip().endswith(CUT_NOTE)
    assert len(out) < 20_000  # the query (also in the trace's target) and the long memory are cut everywhere
    assert f"{longest[:DISPLAY_CHARS]}… [+{len(longest) - DISPLAY_CHARS} chars]" in out

    code, full, _ = cli(capsys, *argv, "--full")
    assert code == 0 and f"Q: {question}\n" in full and longest in full and CUT_NOTE not in full

    code, listed, _ = cli(capsys, "list", "--persist", lisbon, "--namespace", "users/maya")
    assert longest not in listed and listed.rstrip().endswith(CUT_NOTE)
    code, listed, _ = cli(capsys, "list", "--persist", lisbon, "--namespace", "users/maya", "--full")
    assert longest in listed and CUT_NOTE not in listed


def _trace_labels(out: str, view: str) -> list[str]:
    line = next(x for x in out.splitlines() if x.strip().startswith(f"{view} view:"))
    return line.split("view:", 1)[1].strip().split(", ")


def test_labels_are_unambiguous_across_conversations(tmp_path, capsys):
    store = tmp_path / "store"
    ingest(capsys, store, "users/maya", make_conversation("c1"), make_conversation("c2"))  # the same turn ids twice
    argv = ("recall", "Where did Maya go hiking near Portland?", "--persist", store, "--namespace", "users/maya",
            "--k", "3")
    code, out, _ = cli(capsys, *argv)
    assert code == 0
    code, raw, _ = cli(capsys, *argv, "--json")
    result = RecallResult.model_validate_json(raw)
    listing = [x for x in out.splitlines() if re.match(r"\s+#\d+ ", x)]
    assert [x.split()[0] for x in listing] == ["#1", "#2", "#3"]
    for line, memory in zip(listing, result.memories, strict=True):
        assert f" {memory.unit.source.conversation_id}:{memory.unit.source.turn_ids[0]} " in line
    for view, ids in result.rounds[0].first_hop.items():
        labels = _trace_labels(out, view)
        assert len(labels) == len(ids) and len(set(labels)) == len(labels), labels  # one label per memory
        assert all(re.fullmatch(r"#[1-3]|c[12]:S\d:\d(~\d)?", label) for label in labels), labels


def test_one_conversation_is_named_once_and_turns_shared_by_several_memories_get_a_suffix(lisbon, capsys):
    code, out, _ = cli(capsys, "recall", "What about Lisbon and the tram?", "--persist", lisbon,
                       "--namespace", "users/maya", "--k", "1")
    assert code == 0
    assert out.splitlines()[1].startswith("1 memory, all from conversation lisbon (")
    labels = [label for view in ("semantic", "lexical", "cue") for label in _trace_labels(out, view)]
    assert "#1" in labels  # the long turn S1:2 made three units: the second one shown is S1:2~2
    assert all(re.fullmatch(r"#1|S1:[12](~[23])?", label) for label in labels), labels
    assert any("~" in label for label in labels)


def _unit(uid: str, conversation: str, turn: str) -> MemoryUnit:
    return make_unit(f"text {uid}", uid=uid, conversation=conversation, session="S1", turns=[turn])


def test_recall_labels():
    listed = [_unit("a" * 32, "c1", "S1:1"), _unit("b" * 32, "c2", "S1:1")]
    others = {u.id: u for u in [_unit("c" * 32, "c1", "S1:1"), _unit("d" * 32, "c1", "S1:2"),
                                _unit("e" * 32, "c1", "S1:2")]}
    result = RecallResult(query="q", namespace=("n",),
                          memories=[RecalledMemory(unit=u, score=1.0) for u in listed],
                          rounds=[RoundTrace(round=0, first_hop={"semantic": ["a" * 32, *others, "f" * 32]})])
    assert recall_labels(result, others) == {
        "a" * 32: "#1", "b" * 32: "#2",
        "c" * 32: "c1:S1:1~2",  # #1 is c1:S1:1 already
        "d" * 32: "c1:S1:2", "e" * 32: "c1:S1:2~2",
        "f" * 32: "ffffffff",  # no longer stored: a short id
    }
