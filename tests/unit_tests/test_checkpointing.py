"""Recall state through a checkpointer: revived as its own types, so a run resumed mid-recall finishes.

LangGraph's checkpoint serializer revives only the classes it is allowed to (all of
them with a warning today; none but its own under ``LANGGRAPH_STRICT_MSGPACK``, which
it announces as the future default). Recall keeps models and records in its state.
"""

import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from langchain_ripplemem import RecallResult, RippleMem
from langchain_ripplemem.recall import RecallContext, build_recall_graph
from langchain_ripplemem.recall.checkpointing import checkpoint_serde, checkpoint_types
from langchain_ripplemem.recall.state import RecallState
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor

from .conftest import filled_memory
from .fakes import ScriptedChatModel
from .test_recall_llm import CONFIG, CUES, plan

NS = ("maya",)
QUERY = "Should Maya accept Sam's dinner pick at Harbor Grill while she is allergic?"
ROOT = Path(__file__).resolve().parents[2]


def memory_with() -> RippleMem:
    return filled_memory(NS, write_config=None, extractor=RuleBasedExtractor())


class Parent(TypedDict, total=False):
    query: str
    result: RecallResult


def agent_with(recall_graph, saver: InMemorySaver):
    """An agent whose one node is the recall graph, checkpointed by ``saver``."""
    parent = StateGraph(Parent, context_schema=RecallContext)
    parent.add_node("recall", recall_graph)
    parent.add_edge(START, "recall")
    parent.add_edge("recall", END)
    return parent.compile(checkpointer=saver)


def scripted() -> ScriptedChatModel:
    return ScriptedChatModel(responses=[CUES, plan(), plan(should_continue=False, stop_reason="enough")])


@pytest.mark.parametrize("stop_before", ["plan_expansion", "expand", "assemble"])
@pytest.mark.parametrize("with_llm", [False, True], ids=["heuristic", "llm"])
def test_a_recall_resumed_from_a_strict_checkpoint_ends_as_an_uninterrupted_one(stop_before, with_llm, caplog):
    memory = memory_with()
    context = RecallContext(namespace=NS, config=CONFIG.replace(controller={"max_rounds": 2}) if with_llm else None)
    expected = build_recall_graph(memory.reader, llm=scripted() if with_llm else None).invoke(
        {"query": QUERY}, context=context)["result"]

    graph = build_recall_graph(memory.reader, llm=scripted() if with_llm else None,
                               checkpointer=InMemorySaver(serde=checkpoint_serde()))
    thread = {"configurable": {"thread_id": "t"}}
    with caplog.at_level(logging.WARNING, logger="langgraph"):
        graph.invoke({"query": QUERY}, thread, context=context, interrupt_before=[stop_before])
        assert graph.get_state(thread).next == (stop_before,)  # stopped mid-recall, its state in the saver
        resumed = graph.invoke(None, thread, context=context)["result"]
    assert not [r for r in caplog.records if "msgpack" in r.getMessage() or "registered" in r.getMessage()]
    assert isinstance(resumed, RecallResult)
    assert resumed.model_dump(exclude={"usage"}) == expected.model_dump(exclude={"usage"})


def test_every_value_a_recall_checkpoints_comes_back_as_it_went_in():
    """Each state value of each checkpoint (as a subgraph of an agent), through checkpoint_serde."""
    saver = InMemorySaver(serde=JsonPlusSerializer())  # revives everything (with warnings): the reference
    app = agent_with(build_recall_graph(memory_with().reader), saver)
    for query in (QUERY, "What did Sam say while Maya went hiking near Portland with Priya?"):
        app.invoke({"query": query}, {"configurable": {"thread_id": query}}, context=RecallContext(namespace=NS))
    serde, kinds = checkpoint_serde(), set()
    checkpoints = list(saver.list(None))
    assert any(c.config["configurable"]["checkpoint_ns"].startswith("recall:") for c in checkpoints)
    for checkpoint in checkpoints:
        for key, value in checkpoint.checkpoint["channel_values"].items():
            revived = serde.loads_typed(serde.dumps_typed(value))
            assert revived == value, key
            kinds.add(type(value).__name__)
    assert {"QueryCues", "Usage", "RecallResult"} <= kinds


def test_the_allowlist_names_every_class_recall_state_declares():
    collect = pytest.importorskip("langgraph._internal._serde").collect_allowlist_from_schemas
    declared = collect(schemas=[RecallState])
    assert declared <= {(t.__module__, t.__name__) for t in checkpoint_types()}


def test_recall_can_run_as_one_unchecked_step_of_a_checkpointed_agent():
    saver = InMemorySaver(serde=checkpoint_serde())
    out = agent_with(build_recall_graph(memory_with().reader, checkpointer=False), saver).invoke(
        {"query": QUERY}, {"configurable": {"thread_id": "t"}}, context=RecallContext(namespace=NS))
    assert isinstance(out["result"], RecallResult) and out["result"].memories
    assert all(not c.config["configurable"]["checkpoint_ns"] for c in saver.list(None))  # the agent's only


def test_under_langgraph_strict_msgpack_a_checkpointed_recall_graph_resumes():
    """LangGraph's own strict mode: it allows what the state schema declares (read at import: a new process)."""
    script = textwrap.dedent(f"""
        from langgraph.checkpoint.memory import InMemorySaver
        from langchain_ripplemem import RecallResult, RippleMem
        from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor
        from langchain_ripplemem.recall import RecallContext, build_recall_graph
        from tests.unit_tests.conftest import BagOfWordsEmbeddings, make_conversation
        memory = RippleMem(BagOfWordsEmbeddings(), extractor=RuleBasedExtractor())
        memory.add_conversation(make_conversation(), namespace=("maya",))
        graph = build_recall_graph(memory.reader, checkpointer=InMemorySaver())
        thread, context = {{"configurable": {{"thread_id": "t"}}}}, RecallContext(namespace=("maya",))
        graph.invoke({{"query": {QUERY!r}}}, thread, context=context, interrupt_before=["plan_expansion"])
        result = graph.invoke(None, thread, context=context)["result"]
        assert isinstance(result, RecallResult) and len(result.rounds) > 1, result
        print("resumed", len(result.memories))
    """)
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true", "RIPPLEMEM_NO_MODEL_DOWNLOAD": "1"}
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "resumed" in run.stdout and "Blocked" not in run.stderr, run.stderr[-3000:]


def test_messages_still_revive_with_the_recall_serializer():
    serde = checkpoint_serde()
    message = HumanMessage("hi")
    assert serde.loads_typed(serde.dumps_typed(message)) == message
