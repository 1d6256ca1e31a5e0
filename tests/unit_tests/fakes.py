"""A scripted fake chat model for the whole offline test suite.

``ScriptedChatModel(responses=[...])`` answers each call with the next
scripted response:

* ``dict``: with tools bound (``bind_tools`` / ``with_structured_output``) an
  ``AIMessage`` calling the first bound tool with these args; without tools,
  the dict as JSON text.
* ``str``: plain text content (for structured output: a malformed answer,
  because it calls no tool).
* ``AIMessage``: returned as is (usage added when it has none).
* ``Exception`` instance: raised (to test error propagation).
* callable: called with the list of messages; its return value is handled
  as above (for answers that depend on the prompt).

Every call is recorded in ``calls`` (the messages) and ``tools_seen`` (the
bound tool names), and every message carries ``usage_metadata`` with
``input_tokens`` / ``output_tokens`` per call, so token accounting is testable.
Running out of responses raises ``RuntimeError`` naming the call number.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field, PrivateAttr


class ScriptedChatModel(BaseChatModel):
    """Fake chat model that replays scripted responses, with tool calling and usage."""

    responses: list[Any] = Field(default_factory=list)
    input_tokens: int = 100
    output_tokens: int = 20
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    tools_seen: list[list[str]] = Field(default_factory=list)
    _cursor: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    @property
    def remaining(self) -> int:
        """Scripted responses not used yet."""
        return len(self.responses) - self._cursor

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: str | None = None,
                   **kwargs: Any) -> Runnable[Any, AIMessage]:
        names = [convert_to_openai_tool(tool)["function"]["name"] for tool in tools]
        return self.bind(tool_names=names, **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  tool_names: list[str] | None = None, **kwargs: Any) -> ChatResult:
        call_number = len(self.calls) + 1
        self.calls.append(list(messages))
        self.tools_seen.append(list(tool_names or []))
        if self._cursor >= len(self.responses):
            raise RuntimeError(
                f"ScriptedChatModel: no scripted response left for call {call_number} "
                f"({len(self.responses)} scripted)")
        response = self.responses[self._cursor]
        self._cursor += 1
        if callable(response) and not isinstance(response, BaseMessage):
            response = response(list(messages))
        if isinstance(response, BaseException):
            raise response
        message = self._message(response, tool_names or [], call_number)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _message(self, response: Any, tool_names: list[str], call_number: int) -> AIMessage:
        usage = {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                 "total_tokens": self.input_tokens + self.output_tokens}
        if isinstance(response, AIMessage):
            if response.usage_metadata is None:
                response = response.model_copy(update={"usage_metadata": usage})
            return response
        if isinstance(response, dict):
            if tool_names:
                return AIMessage(content="", usage_metadata=usage, tool_calls=[
                    {"name": tool_names[0], "args": response, "id": f"call_{call_number}"}])
            return AIMessage(content=json.dumps(response), usage_metadata=usage)
        if isinstance(response, str):
            return AIMessage(content=response, usage_metadata=usage)
        raise TypeError(f"ScriptedChatModel: cannot replay a {type(response).__name__}")
