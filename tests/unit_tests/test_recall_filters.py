"""Recall filters (since, until, speakers, conversation_id): applied before ranking, on every way into recall.

The memory is conftest's Maya-and-Sam conversation: S1 on 2026-03-02 (the shellfish
allergy, the epipen), S2 on 2026-03-20, S3 on 2026-04-20 (the Harbor Grill dinner).
"""

from __future__ import annotations

import logging
from datetime import date, datetime, timezone

import numpy as np
import pytest

from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.recall import RecallContext, build_recall_graph
from langchain_ripplemem.recall.filters import outside, recall_filter
from langchain_ripplemem.schemas import Conversation, MemoryUnit, RecallResult

from .conftest import drawn_conversation, filled_memory, make_conversation, make_unit
from .test_graphs import load, shared_memory  # noqa: F401 - the served graphs' fixture
from .test_lifecycle import EXPAND, MAYA, QUERY, seen_ids, unit_id

S1_OUT = "2026-03-10"  # since this day, the first session is outside the window
SECOND = Conversation.model_validate({"id": "c2", "sessions": [{
    "id": "T1", "time": "2026-04-25T19:00:00+00:00",
    "turns": [{"id": "T1:1", "speaker": "Maya",
               "text": "Should I accept the dinner at Harbor Grill? I love their garden."}]}]})


@pytest.fixture
def memory() -> RippleMem:
    return filled_memory(MAYA)


def in_window(unit: MemoryUnit, since: datetime) -> bool:
    return unit.time is not None and unit.time.end >= since


def test_a_memory_outside_the_window_is_never_reached_through_expansion(memory):
    shellfish = unit_id(memory, "allergic to shellfish")
    since = datetime(2026, 3, 10, tzinfo=timezone.utc)
    unfiltered = memory.recall(QUERY, namespace=MAYA, config=EXPAND)
    # Without the filter, an edge from an in-window anchor reaches the shellfish memory, out of the window.
    (reached,) = [m for m in unfiltered.memories if m.unit.id == shellfish]
    anchors = {hit.anchor for hit in reached.provenance if hit.source == "expansion"}
    assert any(in_window(u, since) for u in memory.get(anchors, namespace=MAYA))
    assert not in_window(reached.unit, since)
    result = memory.recall(QUERY, namespace=MAYA, config=EXPAND, since=S1_OUT)
    assert result.memories and shellfish not in seen_ids(result)
    assert all(in_window(m.unit, since) for m in result.memories)
    assert all(in_window(u, since) for u in memory.get(seen_ids(result), namespace=MAYA))


def test_until_speakers_and_conversation_keep_to_what_they_name(memory):
    memory.add_conversation(SECOND, namespace=MAYA)
    everyone = memory.recall(QUERY, namespace=MAYA, k=10)
    assert {m.unit.metadata["speaker"] for m in everyone.memories} == {"Maya", "Sam"}
    sam = memory.recall(QUERY, namespace=MAYA, k=10, speakers=["SAM"])
    assert sam.memories and {m.unit.metadata["speaker"] for m in sam.memories} == {"Sam"}
    assert {m.unit.source.conversation_id for m in everyone.memories} == {"c1", "c2"}
    c2 = memory.recall(QUERY, namespace=MAYA, k=10, conversation_id="c2")
    assert c2.memories and {m.unit.source.conversation_id for m in c2.memories} == {"c2"}
    early = memory.recall(QUERY, namespace=MAYA, k=10, until=date(2026, 3, 2))
    assert early.memories and {str(m.unit.time.start.date()) for m in early.memories} == {"2026-03-02"}


def test_time_phrases_are_grounded_relative_to_as_of(memory):
    # 2026-04-27 is a Monday: "last week" is 2026-04-20..26, the dinner session only.
    result = memory.recall(QUERY, namespace=MAYA, k=10, as_of="2026-04-27", since="last week")
    assert result.memories and {str(m.unit.time.start.date()) for m in result.memories} == {"2026-04-20"}
    assert memory.recall(QUERY, namespace=MAYA, as_of="2026-04-01", since="last week").memories == []


def test_a_filter_that_leaves_nothing_warns_and_returns_nothing(memory, caplog):
    with caplog.at_level(logging.INFO, logger="langchain_ripplemem.recall.filters"):
        result = memory.recall(QUERY, namespace=MAYA, speakers="Priyanka")
    assert result.memories == []
    assert any("speakers priyanka" in w and "nothing is returned" in w for w in result.warnings)
    assert any("speakers priyanka" in r.getMessage() for r in caplog.records)
    assert not memory.recall(QUERY, namespace=MAYA).warnings  # no filter, no warning


@pytest.mark.parametrize(("argument", "value"), [
    ("since", "someday soon"), ("until", 42), ("since", ""), ("speakers", [""]), ("speakers", 3),
    ("conversation_id", ""), ("conversation_id", ["c1"]),
])
def test_bad_filter_values_are_named(memory, argument, value):
    with pytest.raises(ValueError, match=argument):
        memory.recall(QUERY, namespace=MAYA, **{argument: value})


def test_since_after_until_is_refused(memory):
    with pytest.raises(ValueError, match="since .* until"):
        memory.recall(QUERY, namespace=MAYA, since="2026-04-01", until="2026-03-01")


def test_no_filter_is_the_recall_it_was(memory):
    plain = memory.recall(QUERY, namespace=MAYA, config=EXPAND)
    explicit = memory.recall(QUERY, namespace=MAYA, config=EXPAND, since=None, until=None, speakers=None,
                             conversation_id=None)
    assert explicit.model_dump_json(exclude={"usage"}) == plain.model_dump_json(exclude={"usage"})


async def test_arecall_takes_the_same_filter(memory):
    shellfish = unit_id(memory, "allergic to shellfish")
    result = await memory.arecall(QUERY, namespace=MAYA, config=EXPAND, since=S1_OUT)
    assert result.memories and shellfish not in seen_ids(result)
    sam = await memory.arecall(QUERY, namespace=MAYA, speakers="Sam")
    assert sam.memories and {m.unit.metadata["speaker"] for m in sam.memories} == {"Sam"}


def test_the_graph_takes_the_filter_from_its_context(memory):
    graph = build_recall_graph(memory.reader)
    shellfish = unit_id(memory, "allergic to shellfish")
    # As langgraph dev passes it: plain JSON.
    out = graph.invoke({"query": QUERY}, context={"namespace": ["maya"], "config": EXPAND.model_dump(mode="json"),
                                                  "since": S1_OUT, "speakers": ["Sam"]})
    result: RecallResult = out["result"]
    assert result.memories and shellfish not in seen_ids(result)
    assert {m.unit.metadata["speaker"] for m in result.memories} == {"Sam"}
    with pytest.raises(ValueError, match="until"):
        RecallContext(namespace=MAYA, until="not a time")


def test_a_first_name_keeps_a_full_name_speaker_as_the_timeline_does(bow):
    memory = RippleMem(bow)
    memory.add_conversation(drawn_conversation([[
        ("Maya Lindqvist", "The Harbor Grill dinner is on Friday."),
        ("Mayan", "The Harbor Grill dinner needs a booking."),
        ("Sam", "The Harbor Grill dinner was my idea."),
    ]]), namespace=MAYA)
    spoken = memory.recall("Harbor Grill dinner", namespace=MAYA, k=10, speakers="maya")
    assert [m.unit.metadata["speaker"] for m in spoken.memories] == ["Maya Lindqvist"]
    timeline = memory.timeline(person="maya", namespace=MAYA)  # one word, one meaning
    assert {m.metadata["speaker"] for m in timeline.memories} == {"Maya Lindqvist"}
    assert not memory.recall("Harbor Grill dinner", namespace=MAYA, speakers="Maya Lind").memories


def test_a_first_name_keeps_a_full_name_participant_of_a_memory_with_no_speaker():
    # A chat model's extraction records no speaker: the filter reads the participants, matched the same way.
    units = [make_unit("Maya Lindqvist booked the dinner.", namespace=MAYA, participants=["Maya Lindqvist"]),
             make_unit("Mayan booked the table.", namespace=MAYA, participants=["Mayan"])]
    index = NamespaceIndex(MAYA)
    index.add(units, np.ones((2, 2), np.float32))
    assert outside(index, recall_filter(speakers="maya")) == {units[1].id}


def test_the_graph_takes_the_filter_from_its_input_over_its_context(memory):
    graph = build_recall_graph(memory.reader)
    shellfish = unit_id(memory, "allergic to shellfish")
    context = {"namespace": ["maya"], "config": EXPAND.model_dump(mode="json")}
    dated = graph.invoke({"query": QUERY, "since": S1_OUT}, context=context)["result"]
    assert dated.memories and shellfish not in seen_ids(dated)
    # A field the input gives wins over the context's; one it leaves out (until) is the context's.
    mixed = graph.invoke({"query": QUERY, "speakers": "Maya"},
                         context={**context, "speakers": ["Sam"], "until": "2026-03-02"})["result"]
    assert mixed.memories and {m.unit.metadata["speaker"] for m in mixed.memories} == {"Maya"}
    assert {str(m.unit.time.start.date()) for m in mixed.memories} == {"2026-03-02"}
    with pytest.raises(ValueError, match="^since must be"):
        graph.invoke({"query": QUERY, "since": "someday soon"}, context=context)


def test_filter_values_ground_as_documented():
    ref = datetime(2026, 5, 6, 12, tzinfo=timezone.utc)
    flt = recall_filter(since="2026-05-01T09:30:00", until="yesterday", reference=ref)
    assert flt.since == datetime(2026, 5, 1, 9, 30, tzinfo=timezone.utc)
    assert flt.until == datetime(2026, 5, 5, 23, 59, 59, 999999, tzinfo=timezone.utc)
    assert recall_filter(speakers="Maya", reference=ref).speakers == ("maya",)


# -- every surface ----------------------------------------------------------------------
def test_the_retriever_keeps_to_its_filter(memory):
    shellfish = unit_id(memory, "allergic to shellfish")
    docs = memory.as_retriever(namespace=MAYA, k=10, config=EXPAND, since=S1_OUT).invoke(QUERY)
    assert docs and shellfish not in {d.id for d in docs}
    assert not any(shellfish in path for d in docs for path in d.metadata["paths"])
    sam = memory.as_retriever(namespace=MAYA, k=10, speakers="Sam").invoke(QUERY)
    assert sam and {memory.get([d.id], namespace=MAYA)[0].metadata["speaker"] for d in sam} == {"Sam"}
    with pytest.raises(ValueError, match="until"):
        memory.as_retriever(namespace=MAYA, until="the day after the party")


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_the_recall_tool_takes_the_filter_and_names_a_bad_one(mode):
    from langchain_ripplemem.tools import create_recall_tool

    memory = filled_memory(("memories", "maya"))
    tool, config = create_recall_tool(memory, k=10), {"configurable": {"user_id": "maya"}}

    async def call(**args):
        return tool.invoke(args, config) if mode == "sync" else await tool.ainvoke(args, config)

    everyone, sam = await call(query=QUERY), await call(query=QUERY, speakers=["Sam"])
    assert "Maya:" in everyone and "Sam:" in sam and "Maya:" not in sam
    early = await call(query=QUERY, until="2026-03-02")
    assert "2026-03-02" in early and "2026-04-20" not in early
    assert (await call(query=QUERY, since="whenever")).startswith("since must be")


async def test_the_mcp_recall_tool_takes_the_filter(memory):
    pytest.importorskip("mcp", reason="the MCP server needs the [mcp] extra (part of [test])")
    from mcp.shared.memory import create_connected_server_and_client_session

    from langchain_ripplemem.server.mcp import create_mcp_server

    shellfish = unit_id(memory, "allergic to shellfish")
    server = create_mcp_server(memory, namespace="maya", recall_config=EXPAND)
    async with create_connected_server_and_client_session(server._mcp_server) as session:
        plain = await session.call_tool("recall", {"query": QUERY})
        assert shellfish in plain.content[0].text
        filtered = await session.call_tool("recall", {"query": QUERY, "since": S1_OUT, "speakers": ["Sam", "Maya"]})
        assert not filtered.isError and filtered.structuredContent["memories"]
        assert shellfish not in filtered.content[0].text
        empty = await session.call_tool("recall", {"query": QUERY, "conversation_id": "c9"})
        assert not empty.isError and "nothing is returned" in empty.content[0].text
        bad = await session.call_tool("recall", {"query": QUERY, "until": "soonish"})
        assert bad.isError and "until must be" in bad.content[0].text


def test_store_search_filters_items_by_their_memories_and_values_by_langgraph_rule(bow):
    from langchain_ripplemem.stores import RippleMemStore

    store = RippleMemStore(RippleMem(bow))
    ns = ("users", "maya")
    store.put(ns, "booked", {"text": "The Harbor Grill dinner is booked.", "speaker": "Sam",
                             "time": "2026-04-20T10:00:00+00:00"})
    store.put(ns, "oysters", {"text": "Harbor Grill has great oysters.", "speaker": "Maya",
                              "time": "2026-03-20T10:00:00+00:00"})
    store.put(ns, "tagged", {"text": "Harbor Grill closes on Mondays.", "speaker": "Maya", "since": "2026-03-01",
                             "time": "2026-04-22T10:00:00+00:00"})
    assert sorted(i.key for i in store.search(ns, query="Harbor Grill")) == ["booked", "oysters", "tagged"]
    assert [i.key for i in store.search(ns, query="Harbor Grill", filter={"speakers": ["sam"]})] == ["booked"]
    assert [i.key for i in store.search(ns, query="Harbor Grill", filter={"until": "2026-04-01"})] == ["oysters"]
    # A field of the value keeps LangGraph's meaning: "tagged" (said 2026-04-22) has since == "2026-03-01".
    assert sorted(i.key for i in store.search(ns, filter={"since": "2026-04-01"})) == ["booked"]
    assert sorted(i.key for i in store.search(ns, filter={"since": "2026-03-01"})) == ["booked", "oysters", "tagged"]
    assert [i.key for i in store.search(ns, filter={"speakers": "maya", "text": {"$ne": "x"},
                                                    "until": "2026-03-31"})] == ["oysters"]
    with pytest.raises(ValueError, match="filter: until"):
        store.search(ns, filter={"until": "nope"})


async def test_store_asearch_takes_the_same_filter(bow):
    from langchain_ripplemem.stores import RippleMemStore

    store = RippleMemStore(RippleMem(bow))
    await store.aput(("u",), "a", {"text": "Harbor Grill dinner", "speaker": "Sam"})
    await store.aput(("u",), "b", {"text": "Harbor Grill oysters", "speaker": "Maya"})
    assert [i.key for i in await store.asearch(("u",), query="Harbor Grill", filter={"speakers": "Maya"})] == ["b"]


def test_the_served_recall_graph_takes_the_filter_in_its_context_or_input(shared_memory):  # noqa: F811
    shared_memory.add_conversation(make_conversation(), namespace=MAYA)
    graph = load("recall").graph
    result = graph.invoke({"query": QUERY}, context={"namespace": list(MAYA), "speakers": ["Sam"]})["result"]
    assert result.memories and {m.unit.metadata["speaker"] for m in result.memories} == {"Sam"}
    dated = graph.invoke({"query": QUERY}, context={"namespace": list(MAYA), "since": "2026-04-01"})["result"]
    assert dated.memories and {str(m.unit.time.start.date()) for m in dated.memories} == {"2026-04-20"}
    given = graph.invoke({"query": QUERY, "speakers": ["Maya"], "since": "2026-04-01"},
                         context={"namespace": list(MAYA), "speakers": ["Sam"]})["result"]
    assert given.memories and {m.unit.metadata["speaker"] for m in given.memories} == {"Maya"}
    assert {str(m.unit.time.start.date()) for m in given.memories} == {"2026-04-20"}
