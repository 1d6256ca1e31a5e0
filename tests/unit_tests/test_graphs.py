"""graphs/*.py (the langgraph.json graphs) and the recall graph as a subgraph of an agent."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Annotated, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from langchain_ripplemem.errors import InvalidConversationError
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.recall import RecallContext, build_recall_graph
from langchain_ripplemem.schemas import RecallResult

from .conftest import BagOfWordsEmbeddings, filled_memory, make_conversation
from .fakes import ScriptedChatModel
from .langgraph_dev import running_dev_server

ROOT = Path(__file__).resolve().parents[2]
NS = ["users", "maya"]


def load(name: str):
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    return importlib.import_module(f"graphs.{name}")


@pytest.fixture
def shared_memory(tmp_path, monkeypatch):
    """A fast memory for the served graphs (set_memory), reset afterwards."""
    monkeypatch.setenv("RIPPLEMEM_PERSIST", str(tmp_path / "store"))
    recall = load("recall")
    memory = RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path / "store")
    recall.set_memory(memory)
    yield memory
    recall.set_memory(None)


def test_langgraph_json_points_at_compiled_graphs():
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert config["dependencies"] == ["."]
    assert set(config["graphs"]) == {"recall", "ingest", "agent"}
    for name, spec in config["graphs"].items():
        path, attr = spec.split(":")
        assert (ROOT / path).is_file() and attr == "graph"
        assert type(getattr(load(name), attr)).__name__ == "CompiledStateGraph"


def test_importing_the_graphs_creates_no_memory():
    recall = load("recall")
    recall.set_memory(None)
    for name in ("recall", "ingest", "agent"):
        importlib.reload(load(name))
    from langchain_ripplemem.server import served_memory as serving
    assert serving._memory is None
    nodes = set(load("recall").graph.get_graph().nodes)
    assert {"extract_cues", "tri_view_recall", "expand", "assemble"} <= nodes


def test_the_three_graphs_share_one_memory(shared_memory):
    assert load("recall").get_memory() is shared_memory
    assert load("ingest").get_memory() is shared_memory
    assert load("agent").get_memory() is shared_memory


def test_ingest_then_recall_offline(shared_memory):
    out = load("ingest").graph.invoke({"conversation": make_conversation().model_dump(mode="json")},
                                      context={"namespace": NS})
    report = out["report"]
    assert report["units"] == 7 and report["namespace"] == NS and json.dumps(report)
    result = load("recall").graph.invoke({"query": "Should Maya book Harbor Grill for her birthday?"},
                                         context={"namespace": NS})["result"]
    assert isinstance(result, RecallResult) and result.namespace == tuple(NS)
    assert any("shellfish" in m.unit.restatement for m in result.memories)


async def test_ingest_messages_async(shared_memory):
    out = await load("ingest").graph.ainvoke(
        {"messages": [{"role": "user", "content": "I moved to Lisbon in May 2024."}]},
        context={"namespace": ["users", "ana"]})
    assert out["report"]["units"] == 1
    assert "Lisbon" in shared_memory.list_units(("users", "ana"))[0].restatement


def test_ingest_without_input_names_the_fields(shared_memory):
    with pytest.raises(ValueError, match="'conversation'.*'messages'"):
        load("ingest").graph.invoke({}, context={"namespace": NS})


LISBON = [{"role": "user", "content": "I moved to Lisbon in May 2024."}]
PORTO = [{"role": "user", "content": "I moved to Porto in June 2024."}]
NO_TURNS = {"id": "empty", "sessions": []}


def test_each_ingest_run_on_a_thread_ingests_its_own_input(shared_memory):
    """On a checkpointed thread (as LangGraph Server runs a graph), an earlier run's input never carries over."""
    from langgraph.checkpoint.memory import InMemorySaver

    graph = load("ingest").graph.copy(update={"checkpointer": InMemorySaver()})  # what the server does
    thread = {"configurable": {"thread_id": "one"}}
    graph.invoke({"conversation": make_conversation().model_dump(mode="json")}, thread, context={"namespace": NS})
    second = graph.invoke({"messages": LISBON}, thread, context={"namespace": NS})["report"]
    assert (second["turns"], second["new_units"]) == (1, 1)
    assert any("Lisbon" in u.restatement for u in shared_memory.list_units(tuple(NS)))

    failed = {"configurable": {"thread_id": "two"}}
    with pytest.raises(InvalidConversationError, match="'empty' has no turns"):
        graph.invoke({"conversation": NO_TURNS}, failed, context={"namespace": NS})
    after = graph.invoke({"messages": PORTO}, failed, context={"namespace": NS})["report"]
    assert (after["turns"], after["new_units"]) == (1, 1)
    assert any("Porto" in u.restatement for u in shared_memory.list_units(tuple(NS)))


def test_a_recall_filter_in_the_input_filters_that_run_only(shared_memory):
    """On a checkpointed thread (as LangGraph Server runs a graph), the next run without a filter is not filtered."""
    from langgraph.checkpoint.memory import InMemorySaver

    from langchain_ripplemem.recall.checkpointing import checkpoint_serde

    shared_memory.add_conversation(make_conversation(), namespace=tuple(NS))
    graph = load("recall").graph.copy(update={"checkpointer": InMemorySaver(serde=checkpoint_serde())})
    thread, query = {"configurable": {"thread_id": "one"}}, "Should Maya book Harbor Grill for her birthday?"
    sam = graph.invoke({"query": query, "speakers": ["Sam"]}, thread, context={"namespace": NS})["result"]
    after = graph.invoke({"query": query}, thread, context={"namespace": NS})["result"]
    assert sam.memories and {m.unit.metadata["speaker"] for m in sam.memories} == {"Sam"}
    assert {m.unit.metadata["speaker"] for m in after.memories} == {"Maya", "Sam"}


@pytest.mark.slow
def test_ingest_runs_on_one_thread_of_the_dev_server(tmp_path):
    """The same through LangGraph Server's API (``langgraph dev``): threads, runs, their status."""
    from langgraph_sdk import get_sync_client

    with running_dev_server(tmp_path, {"RIPPLEMEM_PERSIST": str(tmp_path / "store")}) as url:
        client = get_sync_client(url=url)
        context = {"namespace": NS}
        thread = client.threads.create()["thread_id"]
        first = client.runs.wait(thread, "ingest", input={"conversation": make_conversation().model_dump(mode="json")},
                                 context=context)
        second = client.runs.wait(thread, "ingest", input={"messages": LISBON}, context=context)
        failed = client.threads.create()["thread_id"]
        error = client.runs.wait(failed, "ingest", input={"conversation": NO_TURNS}, context=context,
                                 raise_error=False)
        after = client.runs.wait(failed, "ingest", input={"messages": PORTO}, context=context, raise_error=False)
        statuses = [run["status"] for run in reversed(client.runs.list(failed))]
        recalls, question = client.threads.create()["thread_id"], "Where did I move in 2024?"
        # A filter in the input (over the context's), for that run only; a bad one fails the run, named.
        sam = client.runs.wait(recalls, "recall", input={"query": question, "speakers": ["Sam"]},
                               context={**context, "speakers": ["Maya"]})
        found = client.runs.wait(recalls, "recall", input={"query": question}, context=context)
        bad = client.runs.wait(recalls, "recall", input={"query": question, "since": "someday"}, context=context,
                               raise_error=False)
    assert (first["report"]["new_units"], second["report"]["turns"], second["report"]["new_units"]) == (7, 1, 1)
    assert error["__error__"]["error"] == "InvalidConversationError" and statuses == ["error", "success"]
    assert (after["report"]["turns"], after["report"]["new_units"]) == (1, 1)
    said = [m["unit"]["restatement"] for m in found["result"]["memories"]]
    assert any("Lisbon" in text for text in said) and any("Porto" in text for text in said)
    kept = sam["result"]["memories"]
    assert kept and {m["unit"]["metadata"]["speaker"] for m in kept} == {"Sam"}
    assert bad["__error__"]["error"] == "ValueError" and bad["__error__"]["message"].startswith("since must be")


def test_get_memory_builds_a_persistent_memory_from_the_environment(tmp_path, monkeypatch):
    recall = load("recall")
    recall.set_memory(None)
    monkeypatch.setenv("RIPPLEMEM_PERSIST", str(tmp_path / "env-store"))
    try:
        memory = recall.get_memory()
        assert memory.persist_directory == tmp_path / "env-store" and (tmp_path / "env-store").is_dir()
        assert recall.get_memory() is memory
    finally:
        recall.set_memory(None)


def test_agent_without_a_model_explains_instead_of_failing(shared_memory, monkeypatch):
    monkeypatch.delenv("RIPPLEMEM_AGENT_MODEL", raising=False)
    out = load("agent").graph.invoke({"messages": [("user", "hi")]})
    reply = out["messages"][-1]
    assert isinstance(reply, AIMessage) and "No chat model is configured" in reply.content


def test_agent_reports_a_model_it_cannot_create(shared_memory):
    out = load("agent").graph.invoke({"messages": [("user", "hi")]},
                                     context={"model": "no-such-provider:model-x"})
    assert "Creating 'no-such-provider:model-x' failed" in out["messages"][-1].content


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_agent_remembers_recalls_and_answers(shared_memory, mode):
    agent = load("agent")
    llm = ScriptedChatModel(responses=[
        AIMessage("", tool_calls=[{"name": "remember", "id": "t1",
                                   "args": {"content": "Maya is allergic to shellfish."}}]),
        AIMessage("", tool_calls=[{"name": "recall_memory", "id": "t2", "args": {"query": "Maya allergic"}}]),
        lambda messages: f"From memory: {messages[-1].content.splitlines()[1].split(' | ')[2]}",
    ])
    state = {"messages": [("user", "Remember that I'm allergic to shellfish, then tell me what I can't eat.")]}
    context = agent.AgentContext(user_id="maya", model=llm)
    out = agent.graph.invoke(state, context=context) if mode == "sync" else \
        await agent.graph.ainvoke(state, context=context)
    tools = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [t.name for t in tools] == ["remember", "recall_memory"]
    assert tools[0].content.startswith("Remembered 1 memory in memories/maya")
    assert out["messages"][-1].content == "From memory: User: Maya is allergic to shellfish."
    assert isinstance(llm.calls[0][0], SystemMessage)
    assert llm.tools_seen[0] == ["remember", "recall_memory", "explore_memory", "memory_timeline"]
    assert [u.restatement for u in shared_memory.list_units(("memories", "maya"))] == \
        ["User: Maya is allergic to shellfish."]


# -- the recall graph as a subgraph node of a parent agent -------------------------------


class ParentState(TypedDict, total=False):
    """Shared keys with the recall graph: ``query`` in, ``result`` out (documented mapping)."""

    messages: Annotated[list[AnyMessage], add_messages]
    query: str
    result: RecallResult


def test_recall_graph_as_a_subgraph_node_of_an_agent():
    memory = filled_memory(("maya",), write_config=None)
    last_line = lambda messages: messages[-1].content.splitlines()[-1]  # noqa: E731
    llm = ScriptedChatModel(responses=[last_line, last_line])

    def to_query(state: ParentState) -> dict:
        return {"query": next(m.text for m in reversed(state["messages"]) if isinstance(m, HumanMessage))}

    def respond(state: ParentState) -> dict:
        evidence = "\n".join(m.unit.restatement for m in state["result"].memories)
        return {"messages": [llm.invoke([HumanMessage(f"{state['query']}\n{evidence}")])]}

    parent = StateGraph(ParentState, context_schema=RecallContext)
    parent.add_node("to_query", to_query)
    parent.add_node("recall", build_recall_graph(memory.reader))
    parent.add_node("respond", respond)
    parent.add_edge(START, "to_query")
    parent.add_edge("to_query", "recall")
    parent.add_edge("recall", "respond")
    parent.add_edge("respond", END)
    app = parent.compile()

    context = RecallContext(namespace=("maya",))
    seen = [ns for ns, _ in app.stream({"messages": [("user", "What is Maya allergic to?")]}, context=context,
                                       subgraphs=True, stream_mode="updates") if ns]
    assert seen and all(ns[0].startswith("recall:") for ns in seen)  # recall ran as a subgraph
    out = app.invoke({"messages": [("user", "What is Maya allergic to?")]}, context=context)
    assert out["query"] == "What is Maya allergic to?"
    assert "shellfish" in out["result"].memories[0].unit.restatement
    assert out["messages"][-1].content == out["result"].memories[-1].unit.restatement
