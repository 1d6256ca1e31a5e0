"""Every LLM step through the real ``ChatOpenAI`` client against a local OpenAI-compatible server.

Each structured-output method ``ChatOpenAI`` offers is driven at least once:
``json_schema`` (its default, which parses inside the model call),
``function_calling`` (a forced tool call) and ``json_mode`` (JSON text parsed
afterwards). The server records what was sent, so the tests also check the
request each method makes.
"""

from __future__ import annotations

import doctest
import json
import re
from typing import Any

import pytest

from langchain_ripplemem.config import WriteConfig
from langchain_ripplemem.errors import ModelConfigurationError
from langchain_ripplemem.llm import calls
from langchain_ripplemem.llm import failures as model_errors
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.presets import PAPER, PAPER_WRITE
from langchain_ripplemem.recall import assembly
from langchain_ripplemem.write.extraction.llm_extractor import LLMExtractor
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor
from langchain_ripplemem.write.extraction.windows import make_windows

from .conftest import BagOfWordsEmbeddings, make_conversation
from .openai_server import ScriptedOpenAIServer, content, delay, error, tool_call
from .test_lifecycle import unit_id
from .test_llm_supersession import ACME, LISBON, MAYA, marks

NS = ("maya",)
METHODS = ["json_schema", "function_calling", "json_mode"]
# make_conversation() in windows of four turns: two windows, nothing shared.
WRITE = WriteConfig(extraction={"window_size": 4, "window_overlap": 0})
FIRST = ["S1:1", "S1:2", "S1:3", "S2:1"]
SECOND = ["S2:2", "S3:1", "S3:2"]
EVENTS_1 = {"events": [
    {"restatement": "Maya is allergic to shellfish and carries an epipen.", "participants": ["Maya"],
     "locations": [], "time_start": "2026-03-02", "time_end": None, "kind": "fact", "turn_ids": ["S1:1", "S1:3"]},
    {"restatement": "Sam said the allergy is rough.", "participants": ["Sam"], "locations": [],
     "time_start": None, "time_end": None, "kind": "observation", "turn_ids": ["S1:2"]},
    {"restatement": "Sam's cousin cooks at Harbor Grill in Portland.", "participants": ["Sam"],
     "locations": ["Harbor Grill", "Portland"], "time_start": None, "time_end": None, "kind": "fact",
     "turn_ids": ["S2:1"]}]}
EVENTS_2 = {"events": [
    {"restatement": "Maya hiked near Portland with Priya.", "participants": ["Maya", "Priya"],
     "locations": ["Portland"], "time_start": None, "time_end": None, "kind": "event", "turn_ids": ["S2:2"]},
    {"restatement": "Sam proposed Harbor Grill for Maya's birthday dinner; Maya will think about it.",
     "participants": ["Sam", "Maya"], "locations": ["Harbor Grill"], "time_start": None, "time_end": None,
     "kind": "plan", "turn_ids": ["S3:1", "S3:2"]}]}


def good(answer: dict[str, Any], method: str) -> Any:
    """A valid structured answer the way ``method`` carries it."""
    return tool_call(answer) if method == "function_calling" else content(answer)


def malformed(method: str) -> Any:
    """Output that cannot be parsed: a tool call with broken JSON, or text that is no JSON."""
    return tool_call('{"events": [{"restatement": ') if method == "function_calling" else \
        content("Sure! Here are the memories: Maya is allergic to shellfish.")


def sent_schema(request: dict[str, Any]) -> str | None:
    """Which schema a request asked for, and how: ``json_schema:Name``, ``tool:Name``, ``json_object``, or None."""
    fmt = request.get("response_format")
    if fmt is not None:
        return f"json_schema:{fmt['json_schema']['name']}" if fmt["type"] == "json_schema" else fmt["type"]
    if request.get("tools"):
        assert request["tool_choice"]["function"]["name"] == request["tools"][0]["function"]["name"]
        return f"tool:{request['tools'][0]['function']['name']}"
    return None


def last_user_text(request: dict[str, Any], holding: str = "") -> str:
    return next(m["content"] for m in reversed(request["messages"]) if m["role"] == "user" and holding in m["content"])


def llm_memory(server: ScriptedOpenAIServer, method: str | None = None, bow=None, **model_kwargs) -> RippleMem:
    return RippleMem(bow or BagOfWordsEmbeddings(), llm=server.chat_model(method, **model_kwargs),
                     write_config=WRITE)


# -- extraction (issue 12, items 4 and 5) ------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_a_malformed_answer_is_retried_and_a_failed_window_keeps_the_good_ones(openai_server, method):
    openai_server.script(malformed(method), good(EVENTS_1, method),  # first window: retried once
                         malformed(method), malformed(method), malformed(method))  # second: fails
    memory = llm_memory(openai_server, method)
    report = memory.add_conversation(make_conversation(), namespace=NS)

    assert len(openai_server.requests) == 5 and openai_server.remaining == 0
    expected = {"json_schema": "json_schema:ExtractionOutput", "function_calling": "tool:ExtractionOutput",
                "json_mode": "json_object"}[method]
    assert {sent_schema(r) for r in openai_server.requests} == {expected}
    retry = openai_server.requests[1]["messages"][-1]
    assert retry["role"] == "user" and retry["content"].startswith("Your previous answer was rejected: ")
    assert "http" not in retry["content"]

    (failed,) = report.failed_windows
    assert failed.turn_ids == SECOND and failed.attempts == 3
    stored = memory.list_units(NS)
    assert sorted(u.restatement for u in stored) == sorted(e["restatement"] for e in EVENTS_1["events"])
    assert report.new_units == 3 and report.usage.llm_calls == 5


def test_errors_say_what_was_wrong_for_each_method(openai_server):
    """What the model is told on a retry, and a failed window reports, names the actual problem."""
    openai_server.script(content({"events": [{"restatement": "x", "turn_ids": ["S1:1"]}]}),  # json_schema
                         tool_call('{"events": ['),  # function_calling: arguments that are not JSON
                         content("no JSON here"))  # json_mode
    window = make_windows(make_conversation(), WRITE.extraction.window_size, WRITE.extraction.window_overlap)[0]
    errors = [LLMExtractor(openai_server.chat_model(method), max_retries=0).extract(window, NS).failed.error
              for method in METHODS]
    assert errors[0] == "events[0].kind: Field required"
    assert errors[1].startswith("the ExtractionOutput call's arguments are not valid JSON: Expecting value")
    assert errors[2].startswith("OutputParserException: Invalid json output: no JSON here")
    assert not any("http" in e or "answer by calling" in e for e in errors)


@pytest.mark.parametrize("failure", [
    error(500, "The server had an error while processing your request."),
    error(429, "Rate limit reached for gpt-4.1-mini", "requests", "rate_limit_exceeded"),
    delay(10.0),
], ids=["500", "429", "timeout"])
def test_an_unreachable_model_fails_its_window_at_once_and_the_others_are_kept(openai_server, failure):
    openai_server.script(failure, good(EVENTS_2, "json_schema"))
    memory = llm_memory(openai_server, timeout=0.5)
    report = memory.add_conversation(make_conversation(), namespace=NS)
    assert len(openai_server.requests) == 2  # no retry of a failed call: the client has its own max_retries
    (failed,) = report.failed_windows
    assert failed.turn_ids == FIRST and failed.attempts == 1
    assert failed.error.startswith("model unreachable: OpenAI")
    assert {u.restatement for u in memory.list_units(NS)} == {e["restatement"] for e in EVENTS_2["events"]}


@pytest.mark.parametrize("failure", [
    error(401, "Incorrect API key provided: test.", "invalid_request_error", "invalid_api_key"),
    error(404, "The model `gpt-4.1-mini` does not exist or you do not have access to it.",
          "invalid_request_error", "model_not_found"),
    error(429, "You exceeded your current quota.", "insufficient_quota", "insufficient_quota"),
], ids=["401", "404", "quota"])
def test_a_model_refusing_the_settings_stops_the_ingest_before_anything_is_written(openai_server, failure):
    openai_server.script(failure, good(EVENTS_2, "json_schema"))
    memory = llm_memory(openai_server)
    with pytest.raises(ModelConfigurationError, match="window 0: the chat model refuses requests") as info:
        memory.add_conversation(make_conversation(), namespace=NS)
    assert "check the API key" in str(info.value) and "http" not in str(info.value)
    assert len(openai_server.requests) == 1 and memory.list_units(NS) == []


@pytest.mark.parametrize("fallback", [True, False])
def test_an_empty_answer_loses_no_turn(openai_server, fallback):
    openai_server.script(content({"events": []}), content(EVENTS_2))
    memory = RippleMem(BagOfWordsEmbeddings(), llm=openai_server.chat_model(),
                       write_config=WRITE.replace(extraction={"rules_for_uncovered_turns": fallback}))
    report = memory.add_conversation(make_conversation(), namespace=NS)
    assert report.failed_windows == []
    (warning,) = [w for w in report.warnings if "no extracted event cites" in w]
    assert warning.startswith(f"conversation 'c1', window 0: no extracted event cites turns {FIRST}")
    from_rules = sorted(t for u in memory.list_units(NS) if u.metadata.get("fallback") for t in u.source.turn_ids)
    assert from_rules == (sorted(FIRST) if fallback else [])


def test_an_answer_without_events_is_invalid_and_retried(openai_server):
    openai_server.script(content({"unexpected": 1}), content(EVENTS_1), content(EVENTS_2))
    report = llm_memory(openai_server).add_conversation(make_conversation(), namespace=NS)
    assert report.failed_windows == [] and report.usage.llm_calls == 3
    assert "events: Field required" in openai_server.requests[1]["messages"][-1]["content"]


async def test_async_ingest_treats_parse_errors_raised_by_the_call_as_failed_attempts(openai_server):
    replies = {"S1:1": [malformed("json_schema"), content(EVENTS_1)], "S2:2": [content(EVENTS_2)]}

    def by_window(request):  # windows run concurrently: answer by the window's first turn id
        first = re.search(r'"id": "([^"]+)"', last_user_text(request, "<transcript>")).group(1)
        return replies[first].pop(0)

    openai_server.script(by_window, by_window, by_window)
    report = await llm_memory(openai_server).aadd_conversation(make_conversation(), namespace=NS)
    assert report.failed_windows == [] and report.new_units == 5 and len(openai_server.requests) == 3


# -- recall: cues, controller and answer (items 6 and 14) -------------------------------

CUES = {"semantic_query": "Maya's dinner plans and food restrictions", "keywords": ["dinner"],
        "participants": ["Maya"], "locations": [], "time_start": None, "time_end": None}
RECALL = PAPER.replace(views={"semantic_k": 2, "lexical_k": 1, "cue_k": 0}, controller={"max_rounds": 1})


def plan(method: str):
    def reply(request):
        ids = re.findall(r"^([0-9a-f]{32}) \|", last_user_text(request, "<<<"), flags=re.M)
        return good({"should_continue": True, "anchors": ids[:1], "target_restatement": "food allergy of Maya",
                     "target_participants": ["Maya"], "target_locations": [], "target_keywords": ["allergic"],
                     "stop_reason": ""}, method)
    return reply


def recall_memory(server: ScriptedOpenAIServer, method: str | None = None, **model_kwargs) -> RippleMem:
    memory = RippleMem(BagOfWordsEmbeddings(), extractor=RuleBasedExtractor(), recall_config=RECALL,
                       llm=server.chat_model(method, **model_kwargs),
                       write_config=PAPER_WRITE)  # seven turns: too few for rare-cue edges
    memory.add_conversation(make_conversation(), namespace=NS)
    return memory


@pytest.mark.parametrize("method", METHODS)
def test_recall_with_each_structured_output_method(openai_server, method):
    openai_server.script(good(CUES, method), plan(method), content("Maya is allergic to shellfish [1]."))
    result = recall_memory(openai_server, method).recall("Should Maya accept the dinner pick?", namespace=NS,
                                                         answer=True)
    cues, controller, answer = openai_server.requests
    kind = {"json_schema": "json_schema:{}", "function_calling": "tool:{}", "json_mode": "json_object"}[method]
    assert sent_schema(cues) == kind.format("QueryCueOutput")
    assert sent_schema(controller) == kind.format("ControllerPlan") and sent_schema(answer) is None
    assert result.cues.query == CUES["semantic_query"] and result.rounds[1].expanded
    # The answer prompt, its evidence lines and the citation parser agree on "[n] | date | text".
    assert "'[n] | date | text'" in answer["messages"][0]["content"] and "e.g. [1]" in answer["messages"][0]["content"]
    first_line = last_user_text(answer, "<<<").split("<<<\n", 1)[1].splitlines()[0]
    assert first_line == f"[1] | {result.memories[0].unit.time.start.date()} | {result.memories[0].unit.restatement}"
    assert result.cited_ids == [result.memories[0].unit.id]


@pytest.mark.parametrize("failure", [error(500, "upstream down"), delay(10.0)], ids=["500", "timeout"])
def test_recall_does_not_retry_a_dead_model(openai_server, failure):
    """A 500 or a timeout ends a step's loop at once: one call for the cues (was 3), at most one for the controller."""
    openai_server.script(failure, failure)
    memory = recall_memory(openai_server, timeout=0.5)
    result = memory.recall("Should Maya accept the dinner pick?", namespace=NS)
    asked = [sent_schema(r) for r in openai_server.requests]
    assert asked.count("json_schema:QueryCueOutput") == 1 and asked.count("json_schema:ControllerPlan") <= 1
    assert result.cues.participants == ["maya"]  # the rule-based cues
    if "json_schema:ControllerPlan" in asked:
        reason = result.rounds[0].reason
        assert reason.startswith("controller model unreachable (1 calls): OpenAI") and "http" not in reason


@pytest.mark.parametrize("failure", [error(500, "The server had an error."), delay(10.0)], ids=["500", "timeout"])
def test_a_dead_model_costs_one_call_per_recall_and_the_memories_come_back(openai_server, failure):
    """Once one call finds the model unreachable, the recall's other LLM steps fall back without calling it."""
    openai_server.script(failure, failure, failure)
    memory = recall_memory(openai_server, timeout=0.5)
    result = memory.recall("Should Maya accept the dinner pick?", namespace=NS, answer=True)
    assert len(openai_server.requests) == 1  # the cue call; no controller call, no answer call (was 7 calls)
    assert result.memories and result.answer is None
    assert result.cues.participants == ["maya"]  # rule-based cues
    assert [w.split(":")[0] for w in result.warnings] == ["query cues", "answer"]
    assert len(result.rounds) == 2 and result.rounds[1].expanded is not None  # the heuristic controller expanded


async def test_a_dead_model_costs_one_call_per_async_recall(openai_server):
    openai_server.script(error(500), error(500), error(500))
    memory = recall_memory(openai_server, timeout=0.5)
    result = await memory.arecall("Should Maya accept the dinner pick?", namespace=NS, answer=True)
    assert len(openai_server.requests) == 1 and result.memories and result.answer is None


def test_a_failed_answer_is_reported_in_one_line_without_urls(openai_server):
    openai_server.script(content(CUES), plan("json_schema"),
                         error(400, "Invalid request, see https://platform.openai.com/docs for details.",
                               "invalid_request_error"))
    result = recall_memory(openai_server).recall("Should Maya accept the dinner pick?", namespace=NS, answer=True)
    assert result.answer is None and result.memories
    (warning,) = [w for w in result.warnings if w.startswith("answer:")]
    assert "OpenAIInvalidRequestError: Error code: 400 - Invalid request, see for details." in warning
    assert "http" not in warning


def test_controller_reason_summarises_validation_errors_without_urls(openai_server):
    bad_plan = content({"should_continue": "maybe", "anchors": "none"})
    openai_server.script(content(CUES), bad_plan, bad_plan, bad_plan, content("ok"))
    result = recall_memory(openai_server).recall("Should Maya accept the dinner pick?", namespace=NS)
    assert result.rounds[0].reason.startswith(
        "controller output invalid after retries (3 calls): should_continue: Input should be a valid boolean, "
        "unable to interpret input; anchors: Input should be a valid array; the heuristic controller decided: ")


# -- LLM supersession (json_mode) and the loop itself -------------------------------------


def supersede_acme(request):
    block = last_user_text(request, "<<<")
    label = {text: lab for lab, text in re.findall(r'(M\d+) \| \S+ \| "(.*)"', block)}
    new = next(lab for text, lab in label.items() if "Lisbon" in text)
    old = next(lab for text, lab in label.items() if "Acme" in text)
    return content({"superseded": [{"new": new, "old": old, "attribute": "employer"}]})


def test_llm_supersession_through_json_mode(openai_server, bow):
    openai_server.script(content("not json"), supersede_acme)
    memory = RippleMem(bow, extractor=RuleBasedExtractor(), llm=openai_server.chat_model("json_mode"),
                       write_config=WriteConfig(supersession={"llm": True}))
    memory.add_conversation(ACME, namespace=MAYA)
    report = memory.add_conversation(LISBON, namespace=MAYA)
    assert [sent_schema(r) for r in openai_server.requests] == ["json_object", "json_object"]
    assert report.superseded == [unit_id(memory, "work at Acme")] and marks(memory, "work at Acme")
    assert report.usage.llm_calls == 2


def test_llm_supersession_with_a_bad_key_writes_nothing(openai_server, bow):
    openai_server.script(error(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key"))
    memory = RippleMem(bow, extractor=RuleBasedExtractor(), llm=openai_server.chat_model(),
                       write_config=WriteConfig(supersession={"llm": True}))
    memory.add_conversation(ACME, namespace=MAYA)
    before = memory.list_units(MAYA)
    with pytest.raises(ModelConfigurationError, match="LLM supersession: the chat model refuses"):
        memory.add_conversation(LISBON, namespace=MAYA)
    assert memory.list_units(MAYA) == before


async def test_call_structured_outcome_of_a_timeout(openai_server):
    from langchain_ripplemem.recall.recall_prompts import QueryCueOutput

    openai_server.script(delay(10.0), delay(10.0))
    model = openai_server.chat_model(timeout=0.3)
    for outcome in [calls.call_structured(model, QueryCueOutput, "q", retries=2),
                    await calls.acall_structured(model, QueryCueOutput, "q", retries=2)]:
        assert outcome.value is None and outcome.unreachable and outcome.failure == "unreachable"
        assert outcome.usage.llm_calls == 1 and len(outcome.errors) == 1
        assert outcome.errors[0].startswith("OpenAITimeoutError: Request timed out")
    assert len(openai_server.requests) == 2


@pytest.mark.parametrize("module", [calls, model_errors, assembly])
def test_docstring_examples(module):
    assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0


def test_the_test_server_records_requests_and_reports_an_empty_script(openai_server):
    model = openai_server.chat_model()
    with pytest.raises(Exception, match="no scripted reply left for request 1"):
        model.invoke("hello")
    assert json.loads(json.dumps(openai_server.requests))[0]["messages"] == [{"role": "user", "content": "hello"}]
