"""create_recall_tool / create_remember_tool: sync + async, namespace templating, agent use."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.tools import create_recall_tool, create_remember_tool, format_memories, resolve_namespace

from .conftest import filled_memory
from .fakes import ScriptedChatModel

MAYA = {"configurable": {"user_id": "maya"}}


@pytest.fixture
def memory() -> RippleMem:
    return filled_memory(("memories", "maya"), write_config=None)


def test_tools_are_structured_with_sync_and_async(memory):
    recall, remember = create_recall_tool(memory), create_remember_tool(memory)
    for tool, args in [(recall, ["query", "since", "until", "speakers", "conversation_id"]), (remember, ["content"])]:
        assert isinstance(tool, StructuredTool) and tool.func and tool.coroutine
        assert list(tool.args) == args  # the run config is injected, never shown to the model
        assert len(tool.description) > 80
    assert (recall.name, remember.name) == ("recall_memory", "remember")


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_remember_then_recall(memory, mode):
    recall, remember = create_recall_tool(memory, k=3), create_remember_tool(memory)
    note = {"content": "Maya's sister Lena is visiting Portland in June."}
    said = remember.invoke(note, MAYA) if mode == "sync" else await remember.ainvoke(note, MAYA)
    assert said.startswith("Remembered 1 memory in memories/maya: ")
    (unit_id,) = said.rsplit(": ", 1)[1].split(", ")
    (unit,) = memory.get([unit_id], namespace=("memories", "maya"))
    assert "Lena" in unit.restatement and unit.source.conversation_id.startswith("note-")
    query = {"query": "When is Lena visiting?"}
    listing = recall.invoke(query, MAYA) if mode == "sync" else await recall.ainvoke(query, MAYA)
    lines = listing.splitlines()
    assert lines[0] == "3 memories:" and len(lines) == 4
    assert any(f"[{unit_id}]" in line and "Lena" in line for line in lines[1:])
    assert all(line.startswith("- [") and " | " in line for line in lines[1:])


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_the_same_statement_remembered_again_the_same_day_is_one_memory(memory, mode):
    remember = create_remember_tool(memory)
    note = {"content": "Maya is allergic to shellfish."}
    first = remember.invoke(note, MAYA) if mode == "sync" else await remember.ainvoke(note, MAYA)
    again = remember.invoke(note, MAYA) if mode == "sync" else await remember.ainvoke(note, MAYA)
    assert first.startswith("Remembered 1 memory") and again.startswith("Already remembered in memories/maya: ")
    assert first.rsplit(": ", 1)[1] == again.rsplit(": ", 1)[1]
    notes = [u for u in memory.list_units(("memories", "maya")) if u.source.conversation_id.startswith("note-")]
    assert len(notes) == 1  # before: two copies, both recalled


def test_a_statement_said_again_on_a_later_day_is_new_evidence():
    from datetime import datetime, timezone

    from langchain_ripplemem.conversations.messages import single_turn_conversation

    def note(day: int, hour: int, text: str = "I live in Paris.") -> str:
        return single_turn_conversation(text, speaker="user", time=datetime(2024, 5, day, hour, tzinfo=timezone.utc)).id

    assert note(1, 8) == note(1, 22) != note(2, 8)
    assert note(1, 8) != note(1, 8, "I live in Berlin.")


def test_namespace_template_isolates_users(memory):
    recall = create_recall_tool(memory)
    assert "shellfish" in recall.invoke({"query": "allergic shellfish"}, MAYA)
    other = {"configurable": {"user_id": "sam"}}
    assert recall.invoke({"query": "allergic shellfish"}, other) == "No memories found for 'allergic shellfish'."


def test_missing_template_key_is_named(memory):
    recall = create_recall_tool(memory, namespace=("memories", "{org}", "{user_id}"))
    with pytest.raises(ValueError, match=r"needs 'org'.*configurable"):
        recall.invoke({"query": "anything"}, MAYA)
    with pytest.raises(ValueError, match="needs 'user_id'"):
        create_remember_tool(memory).invoke({"content": "x"})


def test_empty_input_goes_back_to_the_model(memory):
    assert create_recall_tool(memory).invoke({"query": " "}, MAYA) == "query must be a non-empty question or topic"
    assert create_remember_tool(memory).invoke({"content": ""}, MAYA) == "content must be a non-empty statement"


def test_resolve_namespace():
    assert resolve_namespace(("a", "{x}-{y}"), {"configurable": {"x": 1, "y": "b"}}) == ("a", "1-b")
    assert resolve_namespace(("fixed",)) == ("fixed",)
    with pytest.raises(ValueError, match="cannot contain"):
        resolve_namespace(("a", "{x}"), {"configurable": {"x": "dotted.name"}})


def test_bad_arguments_are_named(memory):
    with pytest.raises(ValueError, match="k must"):
        create_recall_tool(memory, k=0)
    with pytest.raises(ValueError, match="namespace must"):
        create_recall_tool(memory, namespace=())
    with pytest.raises(ValueError, match="memory must"):
        create_remember_tool(42)
    with pytest.raises(ValueError, match="speaker must"):
        create_remember_tool(memory, speaker="")


def test_memory_factory_is_called_on_first_use(memory):
    calls = []

    def factory():
        calls.append(1)
        return memory

    recall = create_recall_tool(factory)
    assert calls == []
    assert "shellfish" in recall.invoke({"query": "shellfish"}, MAYA)
    assert calls == [1]


def test_format_memories_dates(memory):
    result = memory.recall("Harbor Grill", namespace=("memories", "maya"), k=2)
    text = format_memories(result)
    assert text.startswith("2 memories:") and "2026-" in text


def test_recall_graph_runs_nest_under_the_tool_run(memory):
    tracer = RunCollectorCallbackHandler()
    create_recall_tool(memory).invoke({"query": "shellfish"}, {**MAYA, "callbacks": [tracer]})
    (root,) = tracer.traced_runs
    assert root.run_type == "tool" and [c.name for c in root.child_runs] == ["ripplemem_recall"]


@dataclass
class Ctx:
    user_id: str


def test_tools_in_an_agent_read_the_namespace_from_graph_context(memory):
    tools = [create_remember_tool(memory), create_recall_tool(memory, k=2)]
    llm = ScriptedChatModel(responses=[
        AIMessage("", tool_calls=[{"name": "remember", "args": {"content": "Maya loves Thai food."}, "id": "c1"}]),
        AIMessage("", tool_calls=[{"name": "recall_memory", "args": {"query": "Thai food"}, "id": "c2"}]),
        "Maya loves Thai food.",
    ])
    bound = llm.bind_tools(tools)

    def agent(state: MessagesState) -> dict:
        return {"messages": [bound.invoke(state["messages"])]}

    builder = StateGraph(MessagesState, context_schema=Ctx)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, ["tools", END])
    builder.add_edge("tools", "agent")
    out = builder.compile().invoke({"messages": [("user", "What food do I love?")]}, context=Ctx("maya"))
    tool_messages = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert tool_messages[0].content.startswith("Remembered 1 memory in memories/maya")
    assert "Thai food" in tool_messages[1].content
    assert out["messages"][-1].content == "Maya loves Thai food."
