"""The MCP tools refuse arguments they do not take, and recall's text carries its warnings (issue 36, item 9).

Through the SDK's own client session, as ``test_mcp_server.py``.
"""

from __future__ import annotations

import pytest

pytest.importorskip("mcp", reason="the MCP server needs the [mcp] extra (part of [test])")

from langchain_ripplemem.memory import RippleMem  # noqa: E402
from langchain_ripplemem.schemas import RecallResult  # noqa: E402
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor  # noqa: E402

from .conftest import BagOfWordsEmbeddings, make_conversation  # noqa: E402
from .fakes import ScriptedChatModel  # noqa: E402
from .test_mcp_server import MAYA, Client, _serve, _units  # noqa: E402

TAKES = {
    "forget": "memory_ids, conversation_id, erase_namespace, confirm, namespace",
    "correct": "memory_ids, reason, restore, namespace",
    "remember": "text, conversation, speaker, namespace",
    "recall": "query, k, namespace, since, until, speakers, conversation_id",
    "stats": "namespace",
    "list_namespaces": "no arguments",
}


@pytest.fixture
def memory():
    with RippleMem(BagOfWordsEmbeddings()) as mem:
        mem.add_conversation(make_conversation(), namespace=MAYA)
        yield mem


async def test_forget_with_a_misspelt_argument_names_it_and_deletes_nothing(memory):
    ids = [u.id for u in memory.list_units(MAYA)]
    async with await _serve(memory) as session:
        error, text, _ = await Client(session)("forget", ids=ids[:1])
    assert error and "got none" not in text
    assert text.endswith(f"unknown argument 'ids': forget takes {TAKES['forget']}")
    assert _units(memory, MAYA) == len(ids)


@pytest.mark.parametrize("tool", sorted(TAKES))
async def test_every_tool_refuses_an_argument_it_does_not_take(memory, tool):
    valid = {"forget": {"conversation_id": "c1"}, "correct": {"memory_ids": ["x"], "reason": "wrong"},
             "remember": {"text": "Maya likes tea."}, "recall": {"query": "tea"}}.get(tool, {})
    units = _units(memory, MAYA)
    async with await _serve(memory) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        error, text, _ = await Client(session)(tool, **valid, namspace="users/maya", extra=1)
    assert error and text.endswith(f"unknown arguments 'namspace', 'extra': {tool} takes {TAKES[tool]}")
    assert tools[tool].inputSchema["additionalProperties"] is False  # clients are told, too
    assert _units(memory, MAYA) == units  # nothing was done


async def test_recall_text_carries_the_results_warnings():
    model = ScriptedChatModel(responses=["not json"] * 20)  # every cue and controller call answers garbage
    with RippleMem(BagOfWordsEmbeddings(), extractor=RuleBasedExtractor(), llm=model) as memory:
        memory.add_conversation(make_conversation(), namespace=MAYA)
        async with await _serve(memory) as session:
            error, text, structured = await Client(session)("recall", query="Where did Maya go hiking?")
            _, empty_text, empty = await Client(session)("recall", query="hiking", namespace="users/maya/none")
    result = RecallResult.model_validate(structured)
    assert not error and result.memories and result.warnings
    assert any(w.startswith("query cues: the chat model failed") for w in result.warnings)
    assert text.splitlines()[-len(result.warnings):] == [f"warning: {w}" for w in result.warnings]
    assert empty_text.startswith("No memories found") and empty["warnings"]
    assert empty_text.splitlines()[1:] == [f"warning: {w}" for w in empty["warnings"]]


@pytest.mark.parametrize(("tool", "arguments", "says"), [
    ("recall", {"query": "x", "k": "many"}, "k: Input should be a valid integer, unable to parse string as an "
                                            "integer (got 'many')"),
    ("recall", {"query": 5}, "query: Input should be a valid string (got 5)"),
    ("remember", {"text": ["a"]}, "text: Input should be a valid string (got ['a'])"),
    ("forget", {"memory_ids": "abc"}, "memory_ids: Input should be a valid list (got 'abc')"),
    ("correct", {"memory_ids": ["x"], "reason": "wrong", "restore": "maybe"},
     "restore: Input should be a valid boolean, unable to interpret input (got 'maybe')"),
])
async def test_an_argument_of_the_wrong_type_is_named_without_pydantics_url(memory, tool, arguments, says):
    units = _units(memory, MAYA)
    async with await _serve(memory) as session:
        error, text, _ = await Client(session)(tool, **arguments)
    assert error and text == f"Error executing tool {tool}: {says}"  # no model name, type code or URL
    assert _units(memory, MAYA) == units
