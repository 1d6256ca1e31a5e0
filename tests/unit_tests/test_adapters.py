from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from pydantic import ValidationError

from langchain_ripplemem.adapters import conversation_from_messages, load_conversations
from langchain_ripplemem.errors import DuplicateSessionWarning, InvalidConversationError
from langchain_ripplemem.memory import RippleMemory
from langchain_ripplemem.record_formats import conversation_from_locomo, conversation_from_longmemeval
from langchain_ripplemem.schemas import Conversation
from langchain_ripplemem.server import served_memory

from .langgraph_dev import load_served_graph
from .test_cli_store_commands import bow_memory, cli

UTC = timezone.utc

# Small hand-written records in the benchmark formats (no benchmark data is copied).
LOCOMO = {
    "sample_id": "demo-1",
    "conversation": {
        "speaker_a": "Maya", "speaker_b": "Sam",
        "session_2_date_time": "10:37 am on 27 June, 2023",
        "session_2": [{"speaker": "Sam", "dia_id": "D2:1", "text": "How was Lisbon?"}],
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Maya", "dia_id": "D1:1", "text": "I'm allergic to shellfish."},
            {"speaker": "Sam", "dia_id": "D1:2", "text": "Look at this!",
             "img_url": ["https://example.org/x.jpg"], "blip_caption": "a photo of a grill",
             "query": "harbor grill"},
        ],
        "session_10_date_time": "9:00 am on 1 July, 2023",
        "session_10": [{"speaker": "Maya", "dia_id": "D10:1", "text": "Back home."}],
        "session_11_date_time": "9:00 am on 2 July, 2023",  # a date without a session
    },
    "qa": [],
}
LONGMEMEVAL = {
    "question_id": "q-1",
    "question": "Where did I go?",
    "question_date": "2023/06/01 (Thu) 10:00",
    "haystack_session_ids": ["s-a", "s-b"],
    "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 18:05"],
    "haystack_sessions": [
        [{"role": "user", "content": "I went to Lisbon.", "has_answer": True},
         {"role": "assistant", "content": "Nice!"}],
        [{"role": "user", "content": "Any tips for Porto?"}],
    ],
}
NATIVE = {
    "id": "n1",
    "sessions": [
        {"id": "S1", "time": "2023-05-08T13:56:00Z",
         "turns": [{"id": "t1", "speaker": "Maya", "text": "Hi"},
                   {"id": "t2", "speaker": "Sam", "text": "Hello", "time": "1:57 pm on 8 May, 2023"}]},
        {"id": "S2", "time": "2023/05/20 (Sat) 02:21",
         "turns": [{"id": "t3", "speaker": "Maya", "text": "Back"}]},
    ],
}


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def error_of(path: Path) -> str:
    with pytest.raises(InvalidConversationError) as info:
        load_conversations(path)
    return str(info.value)


# --------------------------------------------------------------------------- messages


def test_messages_roles_names_and_skips() -> None:
    conv = conversation_from_messages([
        SystemMessage("You are helpful."),
        HumanMessage("I'm Maya."),
        AIMessage("", tool_calls=[{"name": "recall", "args": {}, "id": "c1"}]),
        ToolMessage("result", tool_call_id="c1"),
        AIMessage("Hi Maya!", id="ai-7"),
        HumanMessage("It's Sam here.", name="Sam"),
    ], session_time="1:56 pm on 8 May, 2023", session_id="chat")
    turns = conv.sessions[0].turns
    assert [(t.id.split("-")[0], t.speaker, t.text) for t in turns] == [
        ("chat:0", "user", "I'm Maya."), ("ai", "assistant", "Hi Maya!"),
        ("chat:2", "Sam", "It's Sam here.")]
    assert turns[1].id == "ai-7" and re.fullmatch(r"chat:0-[0-9a-f]{8}", turns[0].id)  # position and text hash
    again = conversation_from_messages([HumanMessage("I'm Maya."), AIMessage("Hi Maya!", id="ai-7")], session_id="chat")
    assert again.sessions[0].turns[0].id == turns[0].id  # the same message, the same turn
    assert conv.sessions[0].id == "chat"
    assert conv.sessions[0].time == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def test_messages_speaker_names_and_stable_default_id() -> None:
    msgs = [HumanMessage("I love sushi."), AIMessage("Noted.")]
    conv = conversation_from_messages(msgs, speaker_names={"user": "Maya", "ai": "Bot"})
    assert [t.speaker for t in conv.sessions[0].turns] == ["Maya", "Bot"]
    plain = conversation_from_messages(msgs)
    assert plain.id == conversation_from_messages(list(msgs)).id  # same history, same id
    assert plain.id != conversation_from_messages([HumanMessage("I love ramen.")]).id
    grown = conversation_from_messages([*msgs, HumanMessage("And ramen.")])
    assert grown.id == plain.id and grown.sessions[0].turns[:2] == plain.sessions[0].turns  # the chat, grown
    assert conversation_from_messages(msgs, conversation_id="mine").id == "mine"


def test_messages_errors() -> None:
    with pytest.raises(InvalidConversationError, match="messages"):
        conversation_from_messages([SystemMessage("only a system prompt")])
    with pytest.raises(InvalidConversationError, match=r"messages\[1\].*'m1'"):
        conversation_from_messages([HumanMessage("a", id="m1"), AIMessage("b", id="m1")])
    with pytest.raises(InvalidConversationError, match="session_time.*'soon'"):
        conversation_from_messages([HumanMessage("a")], session_time="soon")


# --------------------------------------------------------------------------- LoCoMo


def test_messages_as_langchain_converts_them_and_a_bare_string_is_refused() -> None:
    conv = conversation_from_messages([{"role": "user", "content": "I adopted a beagle."},
                                       ("ai", "What is its name?"), "Biscuit."])
    assert [(t.speaker, t.text) for t in conv.sessions[0].turns] == [
        ("user", "I adopted a beagle."), ("assistant", "What is its name?"), ("user", "Biscuit.")]
    assert conversation_from_messages(m for m in [HumanMessage("a generator works too")]).sessions[0].turns
    # A string or one dict is not a list of messages: say so (it was "no human or AI message with text").
    for wrong in ("I adopted a beagle.", {"role": "user", "content": "hi"}):
        with pytest.raises(InvalidConversationError, match="must be a list of chat messages"):
            conversation_from_messages(wrong)  # type: ignore[arg-type]
    with pytest.raises(InvalidConversationError, match=r"messages\[1\]: not a chat message.*int"):
        conversation_from_messages([HumanMessage("hi"), 42])  # type: ignore[list-item]


def test_locomo_record() -> None:
    conv = conversation_from_locomo(LOCOMO)
    assert conv.id == "demo-1"
    assert [s.id for s in conv.sessions] == ["session_1", "session_2", "session_10"]
    assert conv.sessions[0].time == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert [t.id for _, t in conv.turns()] == ["D1:1", "D1:2", "D2:1", "D10:1"]
    image = conv.sessions[0].turns[1]
    assert image.image_caption == "a photo of a grill"
    assert image.img_url == ["https://example.org/x.jpg"]  # type: ignore[attr-defined]
    assert image.image_query == "harbor grill"  # type: ignore[attr-defined]
    assert conv.sessions[0].turns[0].image_caption is None


def test_locomo_errors_name_the_field() -> None:
    bad = json.loads(json.dumps(LOCOMO))
    del bad["conversation"]["session_1"][1]["dia_id"]
    with pytest.raises(InvalidConversationError, match=r"conversation\.session_1\[1\].*'dia_id'"):
        conversation_from_locomo(bad)
    bad = json.loads(json.dumps(LOCOMO))
    bad["conversation"]["session_2_date_time"] = "teatime"
    with pytest.raises(InvalidConversationError, match="session_2_date_time.*'teatime'"):
        conversation_from_locomo(bad)
    with pytest.raises(InvalidConversationError, match="'conversation'"):
        conversation_from_locomo({"sample_id": "x"})


# --------------------------------------------------------------------------- LongMemEval


def test_longmemeval_record() -> None:
    conv = conversation_from_longmemeval(LONGMEMEVAL)
    assert conv.id == "q-1" and [s.id for s in conv.sessions] == ["s-a", "s-b"]
    assert conv.sessions[1].time == datetime(2023, 5, 21, 18, 5, tzinfo=UTC)
    first, second = conv.sessions[0].turns
    assert (first.id, first.speaker, first.text) == ("s-a:0", "user", "I went to Lisbon.")
    assert first.has_answer is True  # type: ignore[attr-defined]
    assert not hasattr(second, "has_answer") or second.has_answer is None  # type: ignore
    assert conv.question_date == "2023/06/01 (Thu) 10:00"  # type: ignore[attr-defined]


def test_longmemeval_session_listed_twice_with_the_same_turns_is_kept_once_with_a_warning() -> None:
    # LongMemEval-S lists a few filler sessions twice, at two dates: it must load, once.
    record = {**LONGMEMEVAL, "haystack_session_ids": ["s-a", "s-b", "s-a"],
              "haystack_dates": [*LONGMEMEVAL["haystack_dates"], "2023/05/25 (Thu) 09:00"],
              "haystack_sessions": [*LONGMEMEVAL["haystack_sessions"], LONGMEMEVAL["haystack_sessions"][0]]}
    with pytest.warns(DuplicateSessionWarning, match=r"'s-a'.*haystack_sessions\[0\].*\[2\]"):
        conv = conversation_from_longmemeval(record)
    assert [s.id for s in conv.sessions] == ["s-a", "s-b"]
    assert conv.sessions[0].time == datetime(2023, 5, 20, 2, 21, tzinfo=UTC)  # the first listing's date


def test_longmemeval_session_id_listed_twice_with_different_turns_names_both_places() -> None:
    record = {**LONGMEMEVAL, "haystack_session_ids": ["s-a", "s-a"]}
    with pytest.raises(InvalidConversationError,
                       match=r"'s-a' is listed twice with different turns \(haystack_sessions\[0\] and "
                             r"haystack_sessions\[1\]\)"):
        conversation_from_longmemeval(record)


def test_longmemeval_errors_name_the_field() -> None:
    bad = {**LONGMEMEVAL, "haystack_dates": ["2023/05/20 (Sat) 02:21", "yesterday-ish"]}
    with pytest.raises(InvalidConversationError, match=r"haystack_dates\[1\].*'yesterday-ish'"):
        conversation_from_longmemeval(bad)
    bad = {**LONGMEMEVAL, "haystack_dates": ["2023/05/20 (Sat) 02:21"]}
    with pytest.raises(InvalidConversationError, match="differ in length"):
        conversation_from_longmemeval(bad)
    bad = {**LONGMEMEVAL, "haystack_sessions": [[{"role": "user"}], []]}
    with pytest.raises(InvalidConversationError, match=r"haystack_sessions\[0\]\[0\].*'content'"):
        conversation_from_longmemeval(bad)


# --------------------------------------------------------------------------- files


def test_load_native_json_object_list_and_jsonl(tmp_path: Path) -> None:
    (one,) = load_conversations(write(tmp_path, "one.json", json.dumps(NATIVE)))
    assert one.id == "n1" and [t.id for _, t in one.turns()] == ["t1", "t2", "t3"]
    assert one.sessions[1].time == datetime(2023, 5, 20, 2, 21, tzinfo=UTC)
    assert one.sessions[0].turns[1].time == datetime(2023, 5, 8, 13, 57, tzinfo=UTC)
    other = {**NATIVE, "id": "n2"}
    many = load_conversations(write(tmp_path, "many.json", json.dumps([NATIVE, other])))
    assert [c.id for c in many] == ["n1", "n2"]
    lines = f"{json.dumps(NATIVE)}\n\n{json.dumps(other)}\n"
    assert [c.id for c in load_conversations(write(tmp_path, "c.jsonl", lines))] == ["n1", "n2"]


def test_load_detects_benchmark_records(tmp_path: Path) -> None:
    path = write(tmp_path, "mixed.json", json.dumps([LOCOMO, LONGMEMEVAL]))
    assert [c.id for c in load_conversations(path)] == ["demo-1", "q-1"]


def test_load_malformed_json_names_file_line_and_column(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "bad.json", '{"id": "x",\n  "sessions": [}'))
    assert "bad.json" in message and "line 2 column" in message and "malformed JSON" in message


def test_load_malformed_jsonl_names_the_line(tmp_path: Path) -> None:
    message = error_of(write(tmp_path, "bad.jsonl", json.dumps(NATIVE) + "\n{oops\n"))
    assert "bad.jsonl: line 2" in message and "malformed JSON" in message


def test_load_non_utf8_names_the_line(tmp_path: Path) -> None:
    raw = json.dumps(NATIVE, indent=1).encode().replace(b'"Hello"', b'"H\xe9llo"')
    message = error_of(write(tmp_path, "latin1.json", raw))
    assert "latin1.json" in message and "not UTF-8" in message
    line = raw[:raw.index(b"\xe9")].count(b"\n") + 1
    assert f"line {line}:" in message


@pytest.mark.parametrize(("mutate", "expected"), [
    (lambda r: r["sessions"][0]["turns"][1].pop("speaker"), r"sessions\[0\]\.turns\[1\]\.speaker"),
    (lambda r: r["sessions"][0]["turns"][0].update(text=["hi"]), r"sessions\[0\]\.turns\[0\]\.text"),  # null: no text
    (lambda r: r["sessions"][1].update(time="tea time"), r"sessions\[1\]\.time.*'tea time'"),
    (lambda r: r["sessions"][0]["turns"][0].update(time="later"),
     r"sessions\[0\]\.turns\[0\]\.time"),
    (lambda r: r["sessions"][1]["turns"][0].update(id="t1"),
     r"sessions\[1\]\.turns\[0\]\.id: duplicate turn id 't1'.*sessions\[0\]\.turns\[0\]"),
    (lambda r: r.update(sessions=[{"id": "S1", "turns": []}]), "has no turns"),
    (lambda r: r.pop("sessions"), "has no turns"),
    (lambda r: r.pop("id"), r": id: Field required"),
])
def test_load_bad_records_name_the_field(tmp_path: Path, mutate, expected: str) -> None:
    record = json.loads(json.dumps(NATIVE))
    mutate(record)
    message = error_of(write(tmp_path, "conv.json", json.dumps([NATIVE | {"id": "ok"}, record])))
    assert "conv.json: [1]" in message
    assert re.search(expected, message), message


def test_load_other_file_problems(tmp_path: Path) -> None:
    assert "cannot read" in error_of(tmp_path / "missing.json")
    assert "duplicate conversation id 'n1'" in error_of(
        write(tmp_path, "dup.json", json.dumps([NATIVE, NATIVE])))
    assert "empty.jsonl is empty (only whitespace)" in error_of(write(tmp_path, "empty.jsonl", "\n\n"))
    assert "no conversations" in error_of(write(tmp_path, "none.json", "[]"))
    assert "expected a conversation object" in error_of(write(tmp_path, "n.json", "[1]"))
    bad = json.loads(json.dumps(LOCOMO))
    del bad["conversation"]["session_1"][0]["text"]
    message = error_of(write(tmp_path, "loco.json", json.dumps([bad])))
    assert "loco.json: [0]" in message and "session_1[0]" in message and "'text'" in message


# -- one rule for a stated time, on every path (issue 36, items 4 and 5) ---------------------------

NS = ("users", "maya")


def timed_record(session_time: object, turn_time: object = None) -> dict:
    turn = {"id": "t1", "speaker": "Maya", "text": "I adopted a puppy named Biscuit."}
    return {"id": "c", "sessions": [{"id": "S1", "time": session_time,
                                     "turns": [turn if turn_time is None else {**turn, "time": turn_time}]}]}


def _said_at(memory) -> list[str] | None:
    units = memory.list_units(NS) if NS in memory.namespaces() else []
    return [u.metadata["session_time"] for u in units] if units else None


async def _via_dict(record, tmp_path, capsys, bow):
    memory = RippleMemory(bow)
    try:
        memory.add_conversation(record, namespace=NS)
    except InvalidConversationError as error:
        return str(error), _said_at(memory)
    return None, _said_at(memory)


async def _via_model(record, tmp_path, capsys, bow):
    memory = RippleMemory(bow)
    try:
        conversation = Conversation.model_validate(record)
    except ValidationError as error:  # the model's own constructor: pydantic's error, naming the field
        return str(error).replace(".0.", "[0].").replace("\n", " "), _said_at(memory)
    memory.add_conversation(conversation, namespace=NS)
    return None, _said_at(memory)


async def _via_cli(record, tmp_path, capsys, bow):
    file, store = tmp_path / "conversation.json", tmp_path / "store"
    file.write_text(json.dumps(record), encoding="utf-8")
    code, _, err = cli(capsys, "ingest", file, "--persist", store, "--namespace", "/".join(NS), "--quiet")
    said = _said_at(bow_memory(str(store))) if store.exists() else None
    return (err if code else None), said


async def _via_served_graph(record, tmp_path, capsys, bow):
    memory = RippleMemory(bow)
    served_memory.set_memory(memory)
    try:
        await load_served_graph("ingest").ainvoke({"conversation": record}, context={"namespace": list(NS)})
    except InvalidConversationError as error:
        return str(error), _said_at(memory)
    finally:
        served_memory.set_memory(None)
    return None, _said_at(memory)


async def _via_mcp(record, tmp_path, capsys, bow):
    pytest.importorskip("mcp", reason="the MCP server needs the [mcp] extra (part of [test])")
    from mcp.shared.memory import create_connected_server_and_client_session

    from langchain_ripplemem.server.mcp import create_mcp_server

    memory = RippleMemory(bow)
    server = create_mcp_server(memory, namespace="/".join(NS))
    async with create_connected_server_and_client_session(server._mcp_server) as session:
        result = await session.call_tool("remember", {"conversation": record})
    return (result.content[0].text if result.isError else None), _said_at(memory)


PATHS = {"add_conversation(dict)": _via_dict, "Conversation model": _via_model, "CLI ingest": _via_cli,
         "served ingest graph": _via_served_graph, "MCP remember": _via_mcp}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("session_time", "said"), [
    ("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00+00:00"),  # LoCoMo's form
    ("2023/05/20 (Sat) 02:21", "2023-05-20T02:21:00+00:00"),  # LongMemEval's form
    ("2023-05-08T13:56:00Z", "2023-05-08T13:56:00+00:00"),
])
async def test_every_path_reads_a_session_time_by_one_rule(path, session_time, said, tmp_path, capsys, bow):
    error, stored = await PATHS[path](timed_record(session_time), tmp_path, capsys, bow)
    assert error is None and stored == [said]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("record", "field", "reason"), [
    (timed_record("someday"), "sessions[0].time", "cannot parse timestamp 'someday': expected ISO 8601"),
    (timed_record(12345), "sessions[0].time", "cannot parse timestamp 12345: a number does not say its unit"),
    (timed_record(1714000000.5), "sessions[0].time", "a number does not say its unit"),
    (timed_record("1714000000"), "sessions[0].time", "cannot parse timestamp '1714000000': a number"),
    (timed_record("2023-05-08", turn_time=12345), "sessions[0].turns[0].time", "pass ISO 8601"),
])
async def test_every_path_refuses_a_bad_or_numeric_time_naming_the_field(path, record, field, reason, tmp_path,
                                                                          capsys, bow):
    error, stored = await PATHS[path](record, tmp_path, capsys, bow)
    assert error is not None and field in error and reason in error, error
    assert stored is None
