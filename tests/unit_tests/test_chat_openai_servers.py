"""Every LLM step against a server that implements part of the OpenAI API, as llama-cpp-python's does.

``ScriptedOpenAIServer(like_llama_cpp=True)`` answers a ``json_schema`` response
format with llama-cpp-python's HTTP 500 and honours ``max_tokens`` only, never
``max_completion_tokens`` (what ``ChatOpenAI`` sends). The package must fall back to
the next structured-output method once, remember it for that model, and bound
every answer in a way such a server honours.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from langchain_ripplemem.config import WriteConfig
from langchain_ripplemem.llm import calls as chat_models
from langchain_ripplemem.llm.calls import DEFAULT_MAX_TOKENS, call_structured, working_method
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.recall.recall_prompts import QueryCueOutput
from langchain_ripplemem.write.extraction.llm_extractor import output_tokens
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor

from .conftest import make_conversation
from .openai_server import RUNAWAY_TOKENS, ScriptedOpenAIServer, content, error, runaway, tool_call
from .test_chat_openai import (
    CUES,
    EVENTS_1,
    EVENTS_2,
    FIRST,
    NS,
    SECOND,
    WRITE,
    llm_memory,
    plan,
    recall_memory,
    sent_schema,
    supersede_acme,
)
from .test_llm_supersession import ACME, LISBON, MAYA

QUESTION = "Should Maya accept the dinner pick?"


@pytest.fixture
def llama_server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer(like_llama_cpp=True) as server:
        yield server


def test_a_refused_json_schema_falls_back_to_function_calling_once_and_is_remembered(llama_server, caplog):
    llama_server.script(tool_call(EVENTS_1), tool_call(EVENTS_2))  # the refusals use no scripted reply
    memory = llm_memory(llama_server)
    with caplog.at_level(logging.WARNING, logger="langchain_ripplemem.llm.calls"):
        report = memory.add_conversation(make_conversation(), namespace=NS)

    # Window 1 is refused once and asked again with a tool; window 2 goes straight to the tool.
    assert [sent_schema(r) for r in llama_server.requests] == [
        "json_schema:ExtractionOutput", "tool:ExtractionOutput", "tool:ExtractionOutput"]
    assert report.failed_windows == [] and report.usage.llm_calls == 3
    cited = sorted(t for u in memory.list_units(NS) for t in u.source.turn_ids)
    assert cited == sorted(FIRST + SECOND)
    assert working_method(memory.llm) == "function_calling"
    (note,) = [r.getMessage() for r in caplog.records]
    assert note == "gpt-4.1-mini refused structured output by json_schema; asking it by function_calling from now on"


def test_the_method_learned_by_one_step_serves_the_others_of_that_model_only(llama_server):
    llama_server.script(tool_call(CUES), plan("function_calling"), content("Maya is allergic [1]."))
    result = recall_memory(llama_server).recall(QUESTION, namespace=NS, answer=True)
    assert [sent_schema(r) for r in llama_server.requests] == [
        "json_schema:QueryCueOutput", "tool:QueryCueOutput", "tool:ControllerPlan", None]
    assert result.cues.query == CUES["semantic_query"] and result.rounds[1].expanded and result.answer

    # Another instance of the same model at the same server knows it; another model does not.
    llama_server.script(tool_call(CUES), tool_call(CUES))
    same, other = llama_server.chat_model(), llama_server.chat_model(model="another-model")
    assert call_structured(same, QueryCueOutput, "q").value is not None
    assert call_structured(other, QueryCueOutput, "q").value is not None
    assert [sent_schema(r) for r in llama_server.requests[4:]] == [
        "tool:QueryCueOutput", "json_schema:QueryCueOutput", "tool:QueryCueOutput"]
    assert working_method(other) == "function_calling"


async def test_the_fallback_goes_on_to_json_mode_when_tools_are_refused_too(llama_server):
    llama_server.script(error(400, "tool_choice 'ExtractionOutput' is not supported by this server",
                              "invalid_request_error"), content(CUES))
    model = llama_server.chat_model()
    outcome = await chat_models.acall_structured(model, QueryCueOutput, "q", retries=0)
    assert [sent_schema(r) for r in llama_server.requests] == [
        "json_schema:QueryCueOutput", "tool:QueryCueOutput", "json_object"]
    assert outcome.value.semantic_query == CUES["semantic_query"] and outcome.usage.llm_calls == 3
    assert working_method(model) == "json_mode"


def test_a_server_error_that_is_no_refusal_is_not_retried_with_another_method(openai_server):
    openai_server.script(error(500, "The server had an error while processing your request."))
    model = openai_server.chat_model()
    outcome = call_structured(model, QueryCueOutput, "q")
    assert outcome.unreachable and len(openai_server.requests) == 1 and working_method(model) is None


def test_llm_supersession_at_a_llama_cpp_server(llama_server, bow):
    llama_server.script(lambda request: tool_call(supersede_acme(request).message["content"]))
    memory = RippleMem(bow, extractor=RuleBasedExtractor(), llm=llama_server.chat_model(),
                       write_config=WriteConfig(supersession={"llm": True}))
    memory.add_conversation(ACME, namespace=MAYA)
    report = memory.add_conversation(LISBON, namespace=MAYA)
    assert [sent_schema(r) for r in llama_server.requests] == [
        "json_schema:SupersessionOutput", "tool:SupersessionOutput"]
    assert len(report.superseded) == 1 and report.usage.llm_calls == 2


# -- output length -------------------------------------------------------------------------


@pytest.mark.parametrize("own_limit", [None, 64], ids=["step's bound", "model's max_tokens"])
def test_every_answer_is_bounded_in_a_way_llama_cpp_honours(llama_server, own_limit):
    """ChatOpenAI sends ``max_completion_tokens`` only, which llama.cpp ignores: a runaway answer ran to the end."""
    llama_server.script(runaway())
    model = llama_server.chat_model("json_mode", **({} if own_limit is None else {"max_tokens": own_limit}))
    outcome = call_structured(model, QueryCueOutput, "q", retries=0)
    limit = own_limit or DEFAULT_MAX_TOKENS
    assert llama_server.runaway_tokens == [limit] and limit < RUNAWAY_TOKENS
    assert outcome.errors == ["the answer was cut off at the output token limit (finish_reason 'length')"]
    (request,) = llama_server.requests
    assert request["max_tokens"] == request["max_completion_tokens"] == limit


def test_extraction_is_bounded_by_its_window_size(llama_server, bow):
    llama_server.script(runaway(), tool_call(EVENTS_1), tool_call(EVENTS_2))  # window 1 runs away, then is retried
    report = llm_memory(llama_server, "function_calling", bow).add_conversation(make_conversation(), namespace=NS)
    bound = output_tokens(WRITE.extraction.window_size)
    assert [r["max_tokens"] for r in llama_server.requests] == [bound] * 3
    assert llama_server.runaway_tokens == [bound] and report.failed_windows == []


def test_openai_itself_gets_the_model_as_built():
    from langchain_openai import ChatOpenAI

    assert chat_models.output_bound(ChatOpenAI(model="gpt-4.1-mini", api_key="x"), 512) == {}
    local = ChatOpenAI(model="m", api_key="x", base_url="http://127.0.0.1:1/v1", extra_body={"top_k": 5})
    assert chat_models.output_bound(local, 512) == {"max_tokens": 512, "extra_body": {"top_k": 5, "max_tokens": 512}}
