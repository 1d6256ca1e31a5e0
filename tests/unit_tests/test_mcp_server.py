"""The MCP server's tools through the SDK's own client session (in-memory transport).

Transports (stdio, streamable HTTP) and the LangGraph agent are in
``tests/integration_tests/test_mcp_transports.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the [mcp] extra (part of [test])")

from mcp.shared.memory import create_connected_server_and_client_session  # noqa: E402

from langchain_ripplemem.memory import RippleMem  # noqa: E402
from langchain_ripplemem.schemas import FailedWindow, Namespace, RecallResult  # noqa: E402
from langchain_ripplemem.server.mcp import NamespaceScope, create_mcp_server  # noqa: E402
from langchain_ripplemem.write.extraction.extractor import ExtractionResult, Window  # noqa: E402
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor  # noqa: E402

from .conftest import BagOfWordsEmbeddings, make_conversation  # noqa: E402

MAYA, SAM = ("users", "maya"), ("users", "sam")


class Client:
    """Calls tools and returns ``(is_error, text, structured)``."""

    def __init__(self, session: Any) -> None:
        self.session = session

    async def __call__(self, tool: str, **arguments: Any) -> tuple[bool, str, Any]:
        result = await self.session.call_tool(tool, arguments)
        return bool(result.isError), result.content[0].text, result.structuredContent


@pytest.fixture
def memory():
    with RippleMem(BagOfWordsEmbeddings()) as mem:
        yield mem


async def _serve(memory: RippleMem, namespace: str = "users/maya"):
    server = create_mcp_server(memory, namespace=namespace)
    return create_connected_server_and_client_session(server._mcp_server)


def _units(memory: RippleMem, ns: Namespace) -> int:
    return len(memory.list_units(ns, include_suppressed=True))


async def test_tools_are_listed_with_descriptions_schemas_and_hints(memory):
    async with await _serve(memory) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == {"remember", "recall", "forget", "correct", "list_namespaces", "stats", "explore_memory",
                          "memory_timeline"}
    for tool in tools.values():
        assert len(tool.description) > 60 and tool.outputSchema is not None
    assert set(tools["remember"].inputSchema["properties"]) == {"text", "conversation", "speaker", "namespace"}
    assert tools["recall"].inputSchema["required"] == ["query"]
    assert "memories" in tools["recall"].outputSchema["properties"]
    assert "confirm" in tools["forget"].description
    assert tools["forget"].annotations.destructiveHint and tools["recall"].annotations.readOnlyHint


async def test_remember_text_then_recall_returns_memories_provenance_and_trace(memory):
    async with await _serve(memory) as session:
        call = Client(session)
        error, text, done = await call("remember", text="Maya is allergic to shellfish.", speaker="Maya")
        assert not error and done["new"] == 1 and done["namespace"] == "users/maya"
        assert text.startswith("Remembered 1 new memory in users/maya")
        error, again, repeated = await call("remember", text="Maya is allergic to shellfish.", speaker="Maya")
        assert not error and repeated["new"] == 0 and "(1 already stored)" in again  # the same day: one memory
        error, text, structured = await call("recall", query="What is Maya allergic to?", k=3)
    assert not error
    result = RecallResult.model_validate(structured)
    assert result.namespace == MAYA and result.rounds and result.rounds[0].first_hop
    assert [m.unit.id for m in result.memories] == done["memory_ids"]
    assert result.memories[0].provenance[0].source in {"semantic", "lexical", "cue"}
    assert f"[{done['memory_ids'][0]}]" in text and "Maya: Maya is allergic to shellfish." in text
    assert "score" in text and "round 0" in text


async def test_remember_a_conversation_object_or_json_text_is_idempotent(memory):
    conversation = make_conversation().model_dump(mode="json")
    async with await _serve(memory) as session:
        call = Client(session)
        error, _, first = await call("remember", conversation=conversation)
        assert not error and first["new"] == 7 and first["conversation_id"] == "c1"
        error, text, again = await call("remember", conversation=json.dumps(conversation))
        assert not error and again["new"] == 0 and "(7 already stored)" in text
        _, _, stats = await call("stats")
    assert stats["units"] == 7 and stats["conversations"] == ["c1"] and stats["sessions"] == 3


@pytest.mark.parametrize(("arguments", "message"), [
    ({"text": "a", "conversation": {"id": "c"}}, "pass exactly one of text or conversation"),
    ({}, "pass exactly one of text or conversation"),
    ({"text": "   "}, "text must be a non-empty statement"),
    ({"text": "\u200b\u200d"}, "text must be a non-empty statement"),  # zero-width characters show nothing
    ({"text": "hi", "namespace": "users/maya/ "}, "blank label ' '"),
    ({"conversation": {"id": "c", "sessions": [{"id": "S1", "time": "someday", "turns": [
        {"id": "t1", "speaker": "Maya", "text": "hi"}]}]}}, "sessions[0].time: cannot parse timestamp 'someday'"),
    ({"conversation": {"id": "c", "sessions": [{"id": "S1", "turns": [
        {"id": "t1", "speaker": "Maya", "text": "hi"}, {"id": "t1", "speaker": "Sam", "text": "yo"}]}]}},
     "duplicate turn id 't1'"),
    ({"conversation": {"id": "c", "sessions": []}}, "has no turns"),
    ({"text": "hi", "namespace": "users/sam"}, "outside this server's namespace 'users/maya'"),
    ({"text": "hi", "namespace": "users/maya/bad.label"}, "cannot contain '.'"),
])
async def test_bad_remember_says_what_was_wrong_and_writes_nothing(memory, arguments, message):
    async with await _serve(memory) as session:
        error, text, _ = await Client(session)("remember", **arguments)
    assert error and message in text and text.startswith("Error executing tool remember")
    assert memory.namespaces() == []


class FailsOnWord:
    """The rule-based extractor, except that a window holding ``word`` fails (as an LLM window can)."""

    def __init__(self, word: str) -> None:
        self.word, self.rules = word, RuleBasedExtractor()

    def extract(self, window: Window, namespace: Namespace) -> ExtractionResult:
        if any(self.word in turn.text for _, turn in window.items):
            return ExtractionResult(failed=FailedWindow(conversation_id=window.conversation_id,
                                                        turn_ids=window.turn_ids, error="model said no", attempts=3))
        return self.rules.extract(window, namespace)

    async def aextract(self, window: Window, namespace: Namespace) -> ExtractionResult:
        return self.extract(window, namespace)


async def test_a_remember_whose_extraction_fails_in_part_stores_nothing():
    from langchain_ripplemem.config import WriteConfig

    conversation = make_conversation().model_dump(mode="json")
    conversation["sessions"][2]["turns"][1]["text"] = "FAIL here"
    with RippleMem(BagOfWordsEmbeddings(), extractor=FailsOnWord("FAIL"),
                   write_config=WriteConfig(extraction={"window_size": 2, "window_overlap": 0})) as memory:
        memory.add_conversation(make_conversation("earlier"), namespace=MAYA)
        before = {u.id for u in memory.list_units(MAYA)}
        async with await _serve(memory) as session:
            error, text, _ = await Client(session)("remember", conversation=conversation)
        assert error and "nothing was stored" in text and "the extractor failed on turns S3:2: model said no" in text
        assert {u.id for u in memory.list_units(MAYA, include_suppressed=True)} == before


async def test_calls_never_leave_the_servers_namespace(memory):
    memory.add_conversation(make_conversation("sams"), namespace=SAM)
    sams = [u.id for u in memory.list_units(SAM)]
    async with await _serve(memory) as session:
        call = Client(session)
        assert not (await call("remember", text="Maya starts at Lumen Labs.", namespace="users/maya/work"))[0]
        await call("remember", text="Maya is allergic to shellfish.")
        _, _, listed = await call("list_namespaces")
        assert listed["namespaces"] == ["users/maya", "users/maya/work"]
        _, _, recalled = await call("recall", query="shellfish allergy oysters Harbor Grill", k=20)
        assert sams and not {m["unit"]["id"] for m in recalled["memories"]} & set(sams)
        _, _, work = await call("recall", query="Lumen Labs", namespace="users/maya/work")
        assert [m["unit"]["restatement"] for m in work["memories"]] == ["User: Maya starts at Lumen Labs."]
        for tool, arguments in [("recall", {"query": "x"}), ("stats", {}), ("forget", {"memory_ids": sams}),
                                ("forget", {"erase_namespace": True, "confirm": "users/sam"})]:
            error, text, _ = await call(tool, namespace="users/sam", **arguments)
            assert error and "outside this server's namespace 'users/maya'" in text
        _, text, forgot = await call("forget", memory_ids=sams[:2])
        assert forgot["deleted"] == 0 and forgot["unknown_ids"] == sams[:2] and "No memory with id" in text
        _, _, corrected = await call("correct", memory_ids=sams[:1], reason="wrong")
        assert corrected["changed"] == [] and corrected["unknown_ids"] == sams[:1]
    assert [u.id for u in memory.list_units(SAM)] == sams


def test_namespace_scope_is_a_prefix_of_whole_labels():
    scope = NamespaceScope("users/maya")
    assert scope.contains(("users", "maya", "work")) and not scope.contains(("users", "mayaX"))
    assert not scope.contains(("users",))
    with pytest.raises(ValueError, match="outside"):
        scope.resolve("users/mayaX")
    assert scope.resolve("") == MAYA


async def test_forget_ids_conversation_and_namespace_with_confirmation(memory):
    memory.add_conversation(make_conversation("c1"), namespace=MAYA)
    memory.add_conversation(make_conversation("c2"), namespace=MAYA)
    ids = [u.id for u in memory.list_units(MAYA) if u.source.conversation_id == "c1"]
    async with await _serve(memory) as session:
        call = Client(session)
        error, text, _ = await call("forget", memory_ids=ids[:2], conversation_id="c2")
        assert error and "exactly one of memory_ids, conversation_id or erase_namespace" in text
        _, text, done = await call("forget", memory_ids=ids[:2])
        assert done["deleted"] == 2 and text == "Deleted 2 memories in users/maya."
        _, _, done = await call("forget", conversation_id="c1")
        assert done["deleted"] == len(ids) - 2
        for confirm in (None, "users"):
            error, text, _ = await call("forget", erase_namespace=True, **({"confirm": confirm} if confirm else {}))
            assert error and "deletes all 7 memories in it: call again with confirm='users/maya'" in text
        assert _units(memory, MAYA) == 7
        _, _, done = await call("forget", erase_namespace=True, confirm="users/maya")
        assert done["deleted"] == 7
    assert memory.namespaces() == []


async def test_correct_hides_a_memory_from_recall_until_restored(memory):
    async with await _serve(memory) as session:
        call = Client(session)
        _, _, done = await call("remember", text="Maya lives in Paris.")
        uid = done["memory_ids"][0]
        error, text, _ = await call("correct", memory_ids=[uid])
        assert error and "reason must say why" in text
        _, text, corrected = await call("correct", memory_ids=[uid], reason="She moved to Berlin.")
        assert corrected == {"namespace": "users/maya", "suppressed": True, "changed": [uid], "unknown_ids": []}
        _, _, recalled = await call("recall", query="Where does Maya live?")
        assert recalled["memories"] == []
        _, _, stats = await call("stats")
        assert stats["suppressed"] == 1
        await call("correct", memory_ids=[uid], restore=True)
        _, _, recalled = await call("recall", query="Where does Maya live?")
    assert [m["unit"]["id"] for m in recalled["memories"]] == [uid]


@pytest.mark.parametrize(("arguments", "message"), [
    ({"query": "x", "k": 0}, "k must be between 1 and 100, got 0"),
    ({"query": "x", "k": 101}, "k must be between 1 and 100, got 101"),
    ({"query": " "}, "query must be a non-empty string"),
    ({"query": "\u200b\ufeff"}, "query must be a non-empty string"),
    ({"query": "x", "k": "many"}, "k: Input should be a valid integer, unable to parse string as an integer "
                                  "(got 'many')"),
    ({"query": "x", "namespace": "users//maya"}, "has an empty label"),
])
async def test_bad_recall_arguments_are_tool_errors_that_say_what_was_wrong(memory, arguments, message):
    async with await _serve(memory) as session:
        error, text, _ = await Client(session)("recall", **arguments)
    assert error and message in text
