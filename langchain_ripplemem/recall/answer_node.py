"""The recall graph's last node, ``answer``: an answer from the recalled memories, citing them (chat model only).

It runs only when the input asks ``with_answer`` and the memory has a chat model. Its sync
and async entries share their preparation and finishing code. An answer that fails or
comes back empty keeps the memories, leaves ``answer`` ``None`` and says why in the
result's warnings; once an earlier call of the recall found the model unreachable, no
call is made.

Example:
    >>> from langchain_ripplemem.schemas import RecallResult
    >>> state = {"result": RecallResult(query="q", namespace=("maya",)), "model_down": "connection refused"}
    >>> AnswerNode().answer(state)["result"].warnings
    ['answer: skipped, the chat model is unreachable (connection refused)']

"""

from __future__ import annotations

import time
from typing import Any

from langchain_ripplemem.llm.calls import bounded, usage_of
from langchain_ripplemem.llm.failures import describe_error, empty_answer
from langchain_ripplemem.recall.assembly import format_evidence, parse_citations
from langchain_ripplemem.recall.node_context import timed_usage
from langchain_ripplemem.recall.recall_prompts import ANSWER_PROMPT
from langchain_ripplemem.recall.state import RecallState
from langchain_ripplemem.schemas import Usage

__all__ = ["AnswerNode"]


class AnswerNode:
    """The ``answer`` node (a mixin of :class:`~langchain_ripplemem.recall.nodes.RecallNodes`): it reads ``llm``."""

    llm: Any

    def _answer_update(self, state: RecallState, message: Any, started: float) -> dict[str, Any]:
        result = state["result"]
        usage = timed_usage(result.usage, "answer", started, usage_of(message))
        if empty := empty_answer(message):  # no answer, said in one line
            warning = f"answer: {empty}; the memories are returned without an answer"
            result = result.model_copy(update={"usage": usage, "warnings": [*result.warnings, warning]})
            return {"result": result, "answer": None, "usage": usage}
        text = message.content if isinstance(message.content, str) else str(message.content)
        result = result.model_copy(update={"answer": text, "usage": usage,
                                           "cited_ids": parse_citations(text, result.memories)})
        return {"result": result, "answer": text, "usage": usage}

    def _answer_failed(self, state: RecallState, error: Exception, started: float) -> dict[str, Any]:
        """A failed answer call keeps the recalled memories and says what went wrong."""
        result = state["result"]
        usage = timed_usage(result.usage, "answer", started, Usage(llm_calls=1))
        warning = f"answer: the chat model call failed ({describe_error(error)}); " \
                  "the memories are returned without an answer"
        result = result.model_copy(update={"usage": usage, "warnings": [*result.warnings, warning]})
        return {"result": result, "answer": None, "usage": usage}

    def _answer_messages(self, state: RecallState) -> Any:
        return ANSWER_PROMPT.invoke({"query": state["query"],
                                     "evidence": format_evidence(state["result"].memories)})

    def _answer_skipped(self, state: RecallState) -> dict[str, Any] | None:
        """No answer call when an earlier call of this recall found the model unreachable."""
        if not state.get("model_down"):
            return None
        result = state["result"]
        warning = f"answer: skipped, the chat model is unreachable ({state['model_down']})"
        return {"result": result.model_copy(update={"warnings": [*result.warnings, warning]}), "answer": None}

    def answer(self, state: RecallState) -> dict[str, Any]:
        """Answer from the K memories, citing them (LLM only, when the input asks ``with_answer``)."""
        if (skipped := self._answer_skipped(state)) is not None:
            return skipped
        started = time.perf_counter()
        try:
            message = bounded(self.llm).invoke(self._answer_messages(state))
        except Exception as err:  # noqa: BLE001 - any provider error: keep the memories, report it
            return self._answer_failed(state, err, started)
        return self._answer_update(state, message, started)

    async def aanswer(self, state: RecallState) -> dict[str, Any]:
        """Async :meth:`answer`."""
        if (skipped := self._answer_skipped(state)) is not None:
            return skipped
        started = time.perf_counter()
        try:
            message = await bounded(self.llm).ainvoke(self._answer_messages(state))
        except Exception as err:  # noqa: BLE001 - any provider error: keep the memories, report it
            return self._answer_failed(state, err, started)
        return self._answer_update(state, message, started)
