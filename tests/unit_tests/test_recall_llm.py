"""The read path with a chat model: LLM cues, LLM controller, answer node (scripted fake)."""

import re

import pytest

from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.presets import PAPER
from langchain_ripplemem.recall import NODE_NAMES, LLMController, build_recall_graph
from langchain_ripplemem.recall.controller import ControllerInput
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor

from .conftest import filled_memory
from .fakes import ScriptedChatModel

NS = ("maya",)
CONFIG = PAPER.replace(views={"semantic_k": 2, "lexical_k": 1, "cue_k": 0}, controller={"max_rounds": 1})
CUES = {"semantic_query": "Maya's dinner plans and food restrictions", "keywords": ["dinner"],
        "participants": ["Maya"], "locations": [], "time_start": None, "time_end": None}


def evidence_ids(messages) -> list[str]:
    return re.findall(r"^([0-9a-f]{32}) \|", messages[-1].content, flags=re.M)


def plan(**overrides):
    def respond(messages):
        ids = evidence_ids(messages)
        return {"should_continue": True, "anchors": ids[:1], "target_restatement": "food allergy of Maya",
                "target_participants": ["Maya"], "target_locations": [], "target_keywords": ["allergic"],
                "stop_reason": "", **overrides}
    return respond


def memory_with(responses) -> tuple[RippleMem, ScriptedChatModel]:
    model = ScriptedChatModel(responses=responses)
    # filled_memory's tiny chat has the paper's edges
    return filled_memory(NS, extractor=RuleBasedExtractor(), llm=model, recall_config=CONFIG), model


def test_graph_has_answer_node_with_llm():
    memory, _ = memory_with([])
    nodes = set(build_recall_graph(memory.reader, llm=memory.llm).get_graph().nodes) - {"__start__", "__end__"}
    assert nodes == set(NODE_NAMES)


def test_llm_cues_controller_and_answer():
    memory, model = memory_with([CUES, plan(), "Maya is allergic to shellfish [1], so not Harbor Grill [2]."])
    result = memory.recall("Should Maya accept the dinner pick?", namespace=NS, answer=True)
    assert result.cues.query == CUES["semantic_query"] and result.cues.participants == ["maya"]
    first, second = result.rounds
    assert not first.sufficient and second.anchors and second.target.restatement == "food allergy of Maya"
    assert second.expanded  # the LLM's anchor was expanded
    assert second.reason == "round budget spent (1)"  # no controller call after the last round
    assert result.answer.startswith("Maya is allergic")
    assert result.cited_ids == [result.memories[0].unit.id, result.memories[1].unit.id]
    assert result.usage.llm_calls == 3 and result.usage.input_tokens == 300
    assert model.remaining == 0


def test_llm_cues_add_to_the_grounded_cues_of_the_question():
    nameless = {**CUES, "participants": [], "keywords": ["restrictions"]}
    memory, _ = memory_with([nameless, plan(should_continue=False, stop_reason="the booking answers it")])
    result = memory.recall("Should Maya accept the dinner pick?", namespace=NS)
    # Without the grounded cues, a model that misses the name loses the speaker scoring it drives.
    assert result.cues.query == CUES["semantic_query"] and result.cues.participants == ["maya"]
    assert result.cues.keywords[0] == "restrictions" and "dinner" in result.cues.keywords


def test_invalid_controller_output_leaves_the_round_to_the_heuristic_controller():
    memory, model = memory_with([CUES, "not json", "still not", {"anchors": "wrong type"}, "I don't know [9]."])
    result = memory.recall("Should Maya accept the dinner pick?", namespace=NS, answer=True)
    first, second = result.rounds  # without the fallback: one round, stopped with the evidence so far
    assert first.reason.startswith("controller output invalid after retries")
    assert "; the heuristic controller decided: " in first.reason and not first.sufficient
    assert second.anchors and second.target.restates_query  # the heuristic's plan: its target restates the query
    assert result.warnings[0].endswith("; the heuristic controller decided this round")
    assert result.answer == "I don't know [9]." and result.cited_ids == []  # [9] is out of range
    assert result.usage.llm_calls == 5


def test_all_invalid_anchors_leave_the_plan_to_the_heuristic_controller():
    memory, _ = memory_with([CUES, plan(anchors=["nope", "f" * 32]), "No idea."])
    result = memory.recall("Should Maya accept the dinner pick?", namespace=NS)
    first, second = result.rounds
    assert not first.sufficient and second.anchors and set(second.anchors) <= set().union(*first.first_hop.values())
    assert second.target.restates_query and second.expanded
    (warning,) = result.warnings
    assert "controller named no valid anchor (got ['nope'" in warning
    assert warning.endswith("; the heuristic controller planned this round")


def test_a_stop_without_a_reason_leaves_the_decision_to_the_heuristic_controller():
    memory, _ = memory_with([CUES, plan(should_continue=False, stop_reason=" ")])
    result = memory.recall("Should Maya accept the dinner pick?", namespace=NS)
    assert len(result.rounds) == 2 and result.rounds[1].expanded  # the heuristic went on: "accept" is unheld
    assert result.rounds[0].reason.startswith("controller stopped without a stop reason; the heuristic controller "
                                              "decided: ")


def test_the_controller_prompt_shows_the_best_supported_evidence_only():
    memory, _ = memory_with([])
    index = memory.reader.namespace_index(NS)
    ids = [unit.id for unit in index.units][:4]
    support = dict(zip(ids, [0.1, 0.4, 0.3, 0.2], strict=True))
    inp = ControllerInput(query="Should Maya accept the dinner pick?", cues=None, evidence={uid: [] for uid in ids},
                          index=index, round=0, config=CONFIG.replace(controller={"llm_evidence": 2}),
                          with_edges=set(), support=support)
    assert evidence_ids(LLMController(memory.llm).messages(inp).to_messages()) == [ids[1], ids[2]]
    inp.config = CONFIG
    assert evidence_ids(LLMController(memory.llm).messages(inp).to_messages()) == [ids[1], ids[2], ids[3], ids[0]]


def test_controller_can_stop_early():
    memory, _ = memory_with([CUES, plan(should_continue=False, stop_reason="the booking answers it"), "Yes."])
    result = memory.recall("Should Maya accept the dinner pick?", namespace=NS)
    assert result.rounds[0].sufficient and result.rounds[0].reason == "the booking answers it"


def test_anchors_are_capped_at_max_anchors():
    def many(messages):
        return plan(anchors=evidence_ids(messages))(messages)
    memory, _ = memory_with([CUES, many, "ok"])
    cfg = CONFIG.replace(views={"semantic_k": 5}, controller={"max_anchors": 2})
    result = memory.recall("Should Maya accept the dinner pick?", namespace=NS, config=cfg)
    assert len(result.rounds[1].anchors) == 2


async def test_async_llm_path():
    memory, model = memory_with([CUES, plan(), "Shellfish allergy [1]."])
    result = await memory.arecall("Should Maya accept the dinner pick?", namespace=NS, answer=True)
    assert result.answer == "Shellfish allergy [1]." and len(result.rounds) == 2
    assert model.remaining == 0


async def test_async_llm_path_leaves_an_unusable_plan_to_the_heuristic_controller():
    memory, _ = memory_with([CUES, plan(should_continue=False, stop_reason="")])
    result = await memory.arecall("Should Maya accept the dinner pick?", namespace=NS)
    assert len(result.rounds) == 2 and result.rounds[1].expanded
    assert result.warnings == ["controller: controller stopped without a stop reason; the heuristic controller "
                               "decided this round"]


def test_unparseable_llm_time_is_dropped_not_guessed():
    memory, _ = memory_with([{**CUES, "time_start": "sometime soon"}, plan(should_continue=False), "ok"])
    result = memory.recall("Should Maya accept the dinner pick?", namespace=NS)
    assert result.cues.time is None


def test_no_answer_call_unless_asked_and_a_failed_answer_keeps_the_memories():
    memory, model = memory_with([CUES, plan()])
    result = memory.recall("Should Maya accept the dinner pick?", namespace=NS)  # no answer asked
    assert result.answer is None and result.memories and model.remaining == 0
    assert result.usage.llm_calls == 2  # cues and controller only
    docs = memory.as_retriever(namespace=NS, k=3).invoke("Should Maya accept the dinner pick?")
    assert docs  # the retriever never asks for an answer (its cue and controller calls fail over)
    memory, model = memory_with([CUES, plan(), RuntimeError("HTTP 500 from the provider")])
    result = memory.recall("Should Maya accept the dinner pick?", namespace=NS, answer=True)
    assert result.answer is None and result.memories
    assert any("answer" in w and "HTTP 500" in w for w in result.warnings)
    assert result.usage.llm_calls == 3


async def test_a_failed_async_answer_keeps_the_memories():
    memory, _ = memory_with([CUES, plan(), RuntimeError("HTTP 500 from the provider")])
    result = await memory.arecall("Should Maya accept the dinner pick?", namespace=NS, answer=True)
    assert result.answer is None and result.memories and "HTTP 500" in result.warnings[0]


def test_answer_needs_a_chat_model(bow):
    memory = RippleMem(bow)
    with pytest.raises(ValueError, match="answer=True needs a chat model"):
        memory.recall("anything", answer=True)


@pytest.mark.parametrize("bad", [None, 3])
def test_llm_must_be_a_model_or_string(bad):
    from langchain_ripplemem.llm.calls import resolve_chat_model

    with pytest.raises((TypeError, ValueError)):
        resolve_chat_model(bad)


def test_the_garbage_collector_runs_while_a_chat_model_is_waited_on():
    """Recall holds the collector off (collector.py), but not across a chat model's calls: they may take seconds."""
    import gc

    seen: list[bool] = []

    def cues(messages):
        seen.append(gc.isenabled())
        return CUES

    memory, _ = memory_with([cues, plan(), "Not Harbor Grill [1]."])
    memory.recall("Should Maya accept the dinner pick?", namespace=NS, answer=True)
    assert seen == [True]
