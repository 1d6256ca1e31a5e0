"""One way into recall: the compiled graph, ``RippleMem.recall`` and the served graphs behave alike.

Regression tests of issue 12 (items 1, 2, 3, 13): recall on an empty namespace,
the served graphs under ``langgraph dev``'s blocking rules, the preparation and
effective config both ways into recall share, and the query check.
"""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage

from langchain_ripplemem.cli import main as cli_main
from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.presets import PAPER
from langchain_ripplemem.recall import RecallContext, build_recall_graph
from langchain_ripplemem.server import served_memory

from .conftest import BagOfWordsEmbeddings, filled_memory, make_conversation
from .fakes import ScriptedChatModel
from .langgraph_dev import dev_server_blocking_rules, load_served_graph

NS = ("users", "bob")


def ids_and_scores(result) -> list[tuple[str, float]]:
    return [(m.unit.id, round(m.score, 9)) for m in result.memories]


# -- item 1: an empty namespace ------------------------------------------------------------
@pytest.mark.parametrize("config", [RecallConfig(), PAPER, RecallConfig(controller={"max_rounds": 3})])
def test_recall_on_an_empty_namespace_returns_an_empty_result_with_its_trace(bow, config):
    memory = RippleMem(bow, recall_config=config)
    for result in (memory.recall("Where is Bob moving?", namespace=NS),
                   build_recall_graph(memory.reader).invoke({"query": "Where is Bob moving?"},
                                                     context=RecallContext(namespace=NS))["result"]):
        assert result.memories == [] and result.rounds and result.rounds[0].first_hop["semantic"] == []


def test_cli_recall_on_an_empty_namespace_with_the_recommended_settings(tmp_path, capsys, conversation):
    store = tmp_path / "mem"
    path = tmp_path / "conversation.json"
    path.write_text(conversation.model_dump_json())
    assert cli_main(["ingest", str(path), "--persist", str(store), "--namespace", "users/maya", "--quiet"],
                    memory_factory=lambda persist: RippleMem(BagOfWordsEmbeddings(), persist_directory=persist)) == 0
    capsys.readouterr()
    code = cli_main(["recall", "Where is Bob moving?", "--persist", str(store), "--namespace", "users/bob", "--json"],
                    memory_factory=lambda persist: RippleMem(BagOfWordsEmbeddings(), persist_directory=persist))
    out = capsys.readouterr()
    assert code == 0, out.err
    assert '"memories": []' in out.out and '"first_hop"' in out.out  # an empty result, with its trace
    assert "holds no memories" in out.err and "users/maya" in out.err


# -- item 3: the same preparation and the same effective config both ways ------------------
def test_the_compiled_graph_uses_the_memory_config_and_matches_recall():
    config = RecallConfig(assembly={"top_k": 3}, views={"semantic_k": 4, "lexical_k": 2, "cue_k": 2})
    memory = filled_memory(NS, write_config=None, recall_config=config)
    graph = build_recall_graph(memory.reader)
    query = "Should Bob book Harbor Grill for the birthday?"
    by_graph = graph.invoke({"query": query}, context=RecallContext(namespace=NS))["result"]
    by_dict_context = graph.invoke({"query": query}, context={"namespace": list(NS)})["result"]
    direct = memory.recall(query, namespace=NS)
    assert len(direct.memories) == 3  # the memory's config, not the paper's K = 30
    assert ids_and_scores(by_graph) == ids_and_scores(direct) == ids_and_scores(by_dict_context)


def test_the_compiled_graph_catches_up_with_another_writer(bow, tmp_path):
    reader = RippleMem(bow, persist_directory=tmp_path)
    graph = build_recall_graph(reader.reader)
    context = RecallContext(namespace=NS)
    assert graph.invoke({"query": "shellfish"}, context=context)["result"].memories == []
    writer = RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path)  # another memory object
    writer.add_conversation(make_conversation(), namespace=NS)
    found = graph.invoke({"query": "shellfish allergy"}, context=context)["result"]
    assert any("shellfish" in m.unit.restatement for m in found.memories)


def test_the_compiled_graph_links_what_a_crash_left_unlinked(bow, tmp_path, monkeypatch):
    crashing = RippleMem(bow, persist_directory=tmp_path)
    monkeypatch.setattr(crashing._write, "link", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        crashing.add_conversation(make_conversation(), namespace=NS)
    crashing.close()
    monkeypatch.undo()
    reopened = RippleMem(bow, persist_directory=tmp_path)
    assert reopened.edge_backend.linked_ids(NS) == set()
    build_recall_graph(reopened.reader).invoke({"query": "dinner"}, context=RecallContext(namespace=NS))
    assert reopened.edge_backend.linked_ids(NS) == {u.id for u in reopened.list_units(NS)}


# -- item 13: the query is checked in the graph itself -------------------------------------
@pytest.mark.parametrize("query", ["", "   ", None])
def test_the_graph_rejects_an_empty_query_as_recall_does(bow, query):
    memory = RippleMem(bow)
    with pytest.raises(ValueError, match="query must be a non-empty string"):
        build_recall_graph(memory.reader).invoke({"query": query}, context=RecallContext(namespace=NS))
    with pytest.raises(ValueError, match="query must be a non-empty string"):
        memory.recall(query, namespace=NS)  # type: ignore[arg-type]


# -- item 2: the served graphs under langgraph dev's blocking rules ------------------------
@pytest.fixture
def served(tmp_path, monkeypatch):
    """No served memory yet: the first run must create it, off the event loop."""
    monkeypatch.setenv(served_memory.PERSIST_ENV, str(tmp_path / "served"))
    served_memory.set_memory(None)
    yield
    served_memory.set_memory(None)


@pytest.mark.slow
async def test_the_served_graphs_run_under_the_dev_servers_blocking_rules(served):
    ingest, recall, agent = (load_served_graph(name) for name in ("ingest", "recall", "agent"))
    model = ScriptedChatModel(responses=[
        AIMessage("", tool_calls=[{"name": "remember", "args": {"content": "Bob is moving to Porto."},
                                   "id": "call_1"}]),
        AIMessage("", tool_calls=[{"name": "recall_memory", "args": {"query": "Where is Bob moving?"},
                                   "id": "call_2"}]),
        "Bob is moving to Porto.",
    ])
    with dev_server_blocking_rules():
        empty = await recall.ainvoke({"query": "Where is Bob moving?"},
                                     context={"namespace": list(NS), "config": {"context": {"weight": 0.5}}})
        report = await ingest.ainvoke({"conversation": make_conversation().model_dump(mode="json")},
                                      context={"namespace": list(NS)})
        found = await recall.ainvoke({"query": "What is Maya allergic to?"}, context={"namespace": list(NS)})
        chat = await agent.ainvoke({"messages": [("user", "Bob is moving to Porto; remember it.")]},
                                   context={"user_id": "bob", "model": model})
    assert empty["result"].memories == []
    assert report["report"]["new_units"] == 7
    assert any("shellfish" in m.unit.restatement for m in found["result"].memories)
    tool_answers = [m.content for m in chat["messages"] if m.type == "tool"]
    assert tool_answers[0].startswith("Remembered 1 memory in memories/bob") and "Porto" in tool_answers[1]
    assert model.remaining == 0


async def test_the_blocking_rules_catch_what_the_dev_server_catches(tmp_path):
    """The harness itself: making a memory on the loop is refused, as ``langgraph dev`` refuses it."""
    from blockbuster import BlockingError

    with dev_server_blocking_rules(), pytest.raises(BlockingError):
        RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path / "on-the-loop")
