from typing import TypedDict

import pytest
from langchain_core.tracers.context import collect_runs
from langgraph.graph import END, START, StateGraph

from langchain_ripplemem.config import RecallConfig, WriteConfig
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.presets import PAPER, PAPER_LONG_HISTORY, preset
from langchain_ripplemem.recall import NODE_NAMES, RecallContext, build_recall_graph
from langchain_ripplemem.recall.assembly import alignment_mode
from langchain_ripplemem.schemas import Conversation, RecallResult

from .conftest import BagOfWordsEmbeddings, filled_memory

NS = ("maya",)
SMALL = PAPER.replace(views={"semantic_k": 1, "lexical_k": 1, "cue_k": 0})
# No memory says "say": a word of the question, not missing support (the weak first hop sends recall on).
QUESTION = "What did Maya say she would think about?"


@pytest.fixture(scope="module")
def memory() -> RippleMem:
    return filled_memory(NS)


def turns(result: RecallResult) -> list[str]:
    return [t for m in result.memories for t in m.unit.source.turn_ids]


def test_node_names_and_wiring(memory):
    nodes = set(build_recall_graph(memory.reader).get_graph().nodes) - {"__start__", "__end__"}
    assert nodes == set(NODE_NAMES) - {"answer"}


def test_expansion_finds_memory_missing_from_first_hop(memory):
    first_hop_only = memory.recall(QUESTION, namespace=NS, config=SMALL.replace(controller={"max_rounds": 0}))
    assert turns(first_hop_only) == ["S3:2"]
    result = memory.recall(QUESTION, namespace=NS, config=SMALL)
    assert "S1:1" in turns(result)  # the allergy: reachable only through the graph
    allergy = next(m for m in result.memories if m.unit.source.turn_ids == ["S1:1"])
    assert [h.source for h in allergy.provenance] == ["expansion"]
    hit = allergy.provenance[0]
    anchor_id = first_hop_only.memories[0].unit.id
    assert hit.anchor == anchor_id and hit.path[0] == anchor_id and hit.path[-1] == allergy.unit.id
    assert hit.channel == "structural" and hit.round == 1
    assert [r.round for r in result.rounds] == [0, 1]
    assert result.rounds[1].anchors == [anchor_id]
    assert allergy.unit.id in result.rounds[1].expanded
    assert result.rounds[1].target is not None and "say" not in result.rounds[1].target.keywords
    anchor = next(m for m in result.memories if m.unit.id == anchor_id)
    assert anchor.is_anchor


def test_round_budget_and_empty_expansion_stop_the_loop(memory):
    result = memory.recall(QUESTION, namespace=NS, config=SMALL)
    assert result.rounds[-1].reason == "round budget spent (1)"
    deep = memory.recall(QUESTION, namespace=NS, config=SMALL.replace(controller={"max_rounds": 6}))
    assert deep.rounds[-1].reason == "expansion added nothing"
    assert deep.rounds[-1].expanded == []
    assert 2 <= len(deep.rounds) < 7


@pytest.mark.parametrize("rounds", [0, 1])
def test_a_spent_budget_goes_straight_to_assembly_without_a_controller_run(memory, rounds):
    with collect_runs() as cb:
        result = memory.recall(QUESTION, namespace=NS, config=SMALL.replace(controller={"max_rounds": rounds}),
                               callbacks=[cb])
    root = next(r for r in cb.traced_runs if r.name == "ripplemem_recall")
    steps = [r.name for r in sorted(root.child_runs, key=lambda r: r.dotted_order)]
    # The controller decides only rounds it may continue; the last evidence node routes to assembly.
    assert steps.count("check_sufficiency") == rounds
    assert steps[-2:] == ["tri_view_recall" if rounds == 0 else "expand", "assemble"]
    # A spent budget stops the loop; it does not make the evidence sufficient.
    assert not result.rounds[-1].sufficient and result.rounds[-1].reason == f"round budget spent ({rounds})"


def test_a_plan_reads_the_edges_its_decision_read(memory, monkeypatch):
    from langchain_ripplemem.recall import node_context

    asked = []
    monkeypatch.setattr(node_context, "with_edges", lambda graph, ids: asked.append(len(ids)) or set(ids))
    result = memory.recall(QUESTION, namespace=NS, config=SMALL)
    assert [r.round for r in result.rounds] == [0, 1]
    assert len(asked) == 1  # check_sufficiency asked once; plan_expansion planned on the same evidence


def test_expansion_leaves_the_evidence_it_read_unchanged(memory):
    graph = build_recall_graph(memory.reader)
    first_hop, seen = None, None
    for update in graph.stream({"query": QUESTION}, context=RecallContext(namespace=NS, config=RecallConfig()),
                               stream_mode="updates"):
        if "tri_view_recall" in update:
            first_hop = update["tri_view_recall"]["evidence"]
            seen = {uid: list(hits) for uid, hits in first_hop.items()}
    assert first_hop is not None and first_hop == seen  # expand added to its own copies


def test_controller_stops_when_evidence_covers_the_query(memory):
    result = memory.recall("birthday dinner book", namespace=NS, config=SMALL)
    assert len(result.rounds) == 1
    assert result.rounds[0].sufficient
    assert result.rounds[0].reason.startswith("evidence covers every query term")


def test_assembly_scores_sorted_and_budgeted(memory):
    result = memory.recall(QUESTION, namespace=NS, k=3)
    assert len(result.memories) == 3
    scores = [m.score for m in result.memories]
    assert scores == sorted(scores, reverse=True)
    assert len({m.unit.id for m in result.memories}) == 3


def test_ablations_change_what_expansion_does(memory):
    full = memory.recall(QUESTION, namespace=NS, config=SMALL)
    no_structural = memory.recall(QUESTION, namespace=NS, config=SMALL.replace(expansion={"expand_structural": False}))
    assert "S1:1" in turns(full) and "S1:1" not in turns(no_structural)
    no_planning = memory.recall(QUESTION, namespace=NS, config=SMALL.replace(controller={"use_planning": False}))
    assert no_planning.rounds[1].target.restatement == QUESTION


def test_a_misspelt_setting_is_an_error_naming_it_not_a_default_silently_kept(bow):
    with pytest.raises(ValueError, match="top_kk"):
        RecallConfig(top_kk=3)
    with pytest.raises(ValueError, match="window"):
        WriteConfig(window=10)
    # The run context of a served graph carries settings as JSON: the same error, before any node runs.
    graph = build_recall_graph(RippleMem(bow).reader)
    with pytest.raises(ValueError, match="max_rond"):
        graph.invoke({"query": QUESTION}, context={"namespace": ["maya"], "config": {"max_rond": 1}})


def test_presets_are_named_by_purpose_and_the_default_is_the_recommended_one(bow):
    assert (PAPER.views.semantic_k, PAPER.views.lexical_k, PAPER.views.cue_k) == (10, 5, 5)
    assert (PAPER.context.weight, PAPER.scoring.speaker_bonus, PAPER.scoring.time_bonus,
            PAPER.research.paper_rules) == (0, 0, 0, True)  # with the paper's cosine alignment
    assert alignment_mode(PAPER) == "semantic" and alignment_mode(RecallConfig()) == "hybrid"
    write, recall = preset("paper-long-history")
    assert (write.extraction.window_size, write.extraction.window_overlap) == (10, 0) and recall is PAPER_LONG_HISTORY
    assert (recall.views.semantic_k, recall.views.lexical_k, recall.views.cue_k) == (15, 8, 8)
    assert preset("Recommended") == (WriteConfig(), RecallConfig())
    write, recall = preset("long-history")
    assert write == WriteConfig() and recall.scoring.speaker_bonus > RecallConfig().scoring.speaker_bonus
    assert recall.views.semantic_k < RecallConfig().views.semantic_k  # long answers crowd wide first-hop views
    assert RippleMem(bow).recall_config == RecallConfig() != PAPER  # RippleMem() gets the recommended
    assert RecallConfig().context.weight > 0 and RecallConfig().views.semantic_k > PAPER.views.semantic_k
    with pytest.raises(ValueError, match="unknown preset"):
        preset("locomo-tuned")


async def test_async_path_matches_sync(memory):
    sync = memory.recall(QUESTION, namespace=NS, config=SMALL)
    result = await memory.arecall(QUESTION, namespace=NS, config=SMALL)
    assert turns(result) == turns(sync)
    assert [r.model_dump(exclude={"usage"}) for r in result.rounds] == \
        [r.model_dump(exclude={"usage"}) for r in sync.rounds]


def test_graph_standalone_with_context_dict(memory):
    graph = build_recall_graph(memory.reader)
    out = graph.invoke({"query": QUESTION}, context={"namespace": ["maya"], "config": SMALL.model_dump()})
    assert set(out) == {"result"}
    assert "S1:1" in turns(out["result"])


def test_the_recall_graph_reads_a_reader_and_a_memory_passed_instead_is_an_error_naming_it(memory):
    with pytest.raises(TypeError, match=r"reader must be a MemoryReader, got RippleMem: pass its \.reader"):
        build_recall_graph(memory)
    with pytest.raises(TypeError, match="reader must be a MemoryReader, got str"):
        build_recall_graph("memory")


def test_recall_graph_as_subgraph_node(memory):
    class Parent(TypedDict, total=False):
        query: str
        result: RecallResult
        summary: str

    def summarise(state: Parent) -> dict:
        return {"summary": ",".join(turns(state["result"]))}

    parent = StateGraph(Parent, context_schema=RecallContext)
    parent.add_node("recall", build_recall_graph(memory.reader))
    parent.add_node("summarise", summarise)
    parent.add_edge(START, "recall")
    parent.add_edge("recall", "summarise")
    parent.add_edge("summarise", END)
    out = parent.compile().invoke({"query": QUESTION}, context=RecallContext(namespace=NS, config=SMALL))
    assert "S1:1" in out["summary"].split(",")


def test_each_round_is_traced_with_metadata(memory):
    with collect_runs() as cb:
        # Passed explicitly too: LangGraph's node runs inherit explicit callbacks
        # (LangSmith's tracer arrives that way when tracing is enabled).
        memory.recall(QUESTION, namespace=NS, config=SMALL, callbacks=[cb])
    runs, stack = [], list(cb.traced_runs)
    while stack:
        run = stack.pop()
        runs.append(run)
        stack.extend(run.child_runs)
    names = {r.name for r in runs}
    assert set(NODE_NAMES) - {"answer"} <= names  # LangGraph's node runs
    root = next(r for r in cb.traced_runs if r.name == "ripplemem_recall")
    expand_node = next(r for r in root.child_runs if r.name == "expand")
    assert [c.name for c in expand_node.child_runs] == ["expand round 1"]  # nested under its node
    expand = next(r for r in runs if r.name == "expand round 1")
    meta = expand.extra["metadata"]
    assert meta["ripplemem_round"] == 1 and meta["ripplemem_node"] == "expand"
    assert meta["ripplemem_anchors"] == [memory.recall(QUESTION, namespace=NS, config=SMALL).rounds[1].anchors[0]]
    assert expand.outputs["count"] == len(expand.outputs["expanded"]) > 0
    first = next(r for r in runs if r.name == "tri_view_recall round 0")
    assert first.outputs["counts"] == {"semantic": 1, "lexical": 1, "cue": 0}


def test_no_child_runs_without_callbacks(memory, monkeypatch):
    from langchain_ripplemem._runtime import tracing
    configured = []
    monkeypatch.setattr(tracing, "get_callback_manager_for_config",
                        lambda cfg: configured.append(cfg) or type("M", (), {"handlers": []})())
    memory.recall(QUESTION, namespace=NS, config=SMALL)
    # Inside the graph a node's manager without handlers says it all: no manager is built per round.
    assert not configured
    with tracing.round_run(None, "expand", 1) as out:  # outside a graph run the config is consulted
        out["x"] = 1
    assert configured == [{}]


def test_no_edges_stops_with_a_reason():
    from langchain_core.messages import AIMessage, HumanMessage

    memory = RippleMem(BagOfWordsEmbeddings())
    memory.add_messages([HumanMessage("I am allergic to shellfish."), AIMessage("Noted.")], namespace=("u",))
    assert memory.edges(("u",)) == []
    result = memory.recall("What can Maya not eat?", namespace=("u",))
    assert len(result.rounds) == 1 and not result.rounds[0].sufficient  # stopped short, not satisfied
    assert "no recalled memory has edges" in result.rounds[0].reason


def test_the_askers_first_person_is_a_speaker_cue():
    # The user asks about themself: "I" is the user, whose own turn is the evidence, while the
    # assistant's reply repeats the question's words. One turn per session: no dialogue context.
    said = [("user", "I have 600 Instagram followers now."),
            ("assistant", "How many Instagram followers you have depends on posting."),
            ("user", "We baked bread on Sunday."), ("assistant", "Bread needs a hot oven."),
            ("user", "The garden needs rain."), ("assistant", "Rain is due on Friday.")]
    conv = Conversation.model_validate({"id": "u", "sessions": [
        {"id": f"S{i}", "time": f"2026-03-0{i + 1}T19:00:00+00:00",
         "turns": [{"id": f"S{i}:1", "speaker": who, "text": text}]} for i, (who, text) in enumerate(said)]})
    m = RippleMem(BagOfWordsEmbeddings())
    m.add_conversation(conv, namespace=("u",))
    question = "How many Instagram followers do I have?"
    plain = m.recall(question, namespace=("u",), k=2)
    asked = m.recall(question, namespace=("u",), k=2, asker="user")
    assert turns(plain)[0] == "S1:1"  # without an asker the assistant's reply looks most like the question
    assert turns(asked)[0] == "S0:1" and asked.cues.participants[-1] == "user"
    # Asking what the one asked said ("you recommended") is no question about the asker.
    recommended = "Remind me how many Instagram followers you recommended I aim for?"
    assert "user" not in m.recall(recommended, namespace=("u",), k=2, asker="user").cues.participants
    # Someone who is not a speaker here changes nothing; a blank asker is a clear error.
    assert turns(m.recall(question, namespace=("u",), k=2, asker="Maya")) == turns(plain)
    with pytest.raises(ValueError, match="asker"):
        m.recall(question, namespace=("u",), asker="  ")


def test_distinct_sessions_first_reorders_only_the_best_2n(memory):
    query = "What did Maya and Sam say about dinner and the trip?"
    plain = memory.recall(query, namespace=NS, k=7)
    spread = memory.recall(query, namespace=NS, k=7, config=RecallConfig(assembly={"distinct_sessions_first": 2}))
    sessions = [m.unit.source.session_id for m in plain.memories]
    assert len(set(sessions[:4])) >= 2 and sessions[0] == sessions[1]  # the fixture's best two share a session
    assert [m.unit.source.session_id for m in spread.memories][:2] == [sessions[0], next(
        s for s in sessions[:4] if s != sessions[0])]
    ids = [m.unit.id for m in plain.memories]
    assert {m.unit.id for m in spread.memories[:4]} == set(ids[:4])
    assert [m.unit.id for m in spread.memories][4:] == ids[4:]
