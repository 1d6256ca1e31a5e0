"""A chat model that answers nothing is said in one line naming the step and the model, not as a
LangChain error dump (issue 52): every structured-output method, and the recall's answer."""

from __future__ import annotations

import pytest

from langchain_ripplemem.extraction.rules import RuleBasedExtractor
from langchain_ripplemem.memory import RippleMemory

from .conftest import BagOfWordsEmbeddings, make_conversation
from .fakes import ScriptedChatModel
from .openai_server import content

NS = ("users", "maya")
DUMPED = ("Received message", "additional_kwargs", "response_metadata", "Invalid json output", "Traceback")


@pytest.mark.parametrize("method", [None, "function_calling", "json_mode"])  # None: ChatOpenAI's json_schema
def test_an_empty_answer_to_a_structured_step_is_one_line_naming_the_model(openai_server, method):
    openai_server.script(*[content("")] * 3)  # one window, three attempts
    memory = RippleMemory(BagOfWordsEmbeddings(), llm=openai_server.chat_model(method))
    with pytest.warns(UserWarning):  # FailedWindowsWarning: the window failed
        report = memory.add_conversation(make_conversation(), namespace=NS)
    assert report.warnings == [f"conversation 'c1', window 0: attempt {n}: the model 'gpt-4.1-mini' returned an "
                               "empty answer: no ExtractionOutput object" for n in (1, 2, 3)]
    assert report.failed_windows[0].error == \
        "the model 'gpt-4.1-mini' returned an empty answer: no ExtractionOutput object"


def test_an_empty_answer_of_the_recall_says_so_and_keeps_the_memories(openai_server):
    openai_server.script(*[content("")] * 20)  # query cues, the controller's attempts, the answer: all empty
    memory = RippleMemory(BagOfWordsEmbeddings(), llm=openai_server.chat_model(), extractor=RuleBasedExtractor())
    memory.add_conversation(make_conversation(), namespace=NS)
    result = memory.recall("Where did Maya go hiking?", namespace=NS, answer=True,
                           config=memory.recall_config.replace(controller={"max_rounds": 1}))
    assert result.memories and result.answer is None and result.cited_ids == []
    assert result.warnings[-1] == ("answer: the model 'gpt-4.1-mini' returned an empty answer; "
                                   "the memories are returned without an answer")
    assert result.warnings[0].startswith("query cues: the chat model failed (the model 'gpt-4.1-mini' returned an "
                                         "empty answer: no QueryCueOutput object)")
    assert not any(dump in warning for warning in result.warnings for dump in DUMPED)


def test_a_model_that_names_no_model_is_the_model():
    model = ScriptedChatModel(responses=[{"semantic_query": "hiking", "keywords": ["hiking"], "participants": []},
                                         " \n"])
    memory = RippleMemory(BagOfWordsEmbeddings(), llm=model, extractor=RuleBasedExtractor())
    memory.add_conversation(make_conversation(), namespace=NS)
    result = memory.recall("Where did Maya go hiking?", namespace=NS, answer=True,
                           config=memory.recall_config.replace(controller={"max_rounds": 0}))
    assert result.answer is None
    assert result.warnings == \
        ["answer: the model returned an empty answer; the memories are returned without an answer"]
