"""Opt-in chat models: resolving them, calling them for validated structured output, usage.

Every LLM step of the package (extraction, query cues, controller, supersession)
asks for a pydantic schema through ``with_structured_output`` (whatever method
the model uses by default: ``json_schema`` for ``ChatOpenAI``) and checks the
parsed object with its own rule. :func:`structured_attempts` is that loop,
written once as a generator that yields each request and receives the model's
answer, or the exception its call raised; :func:`drive` and :func:`adrive` run
it with ``invoke`` or ``ainvoke``.

Only *invalid output* is retried, with a note telling the model what was wrong:
a parse or validation error raised inside the model call (ChatOpenAI's
``json_schema`` path parses there), a ``parsing_error``, a missing or malformed
tool call, or a rule of the caller (:class:`InvalidOutput`). Any other error of
the call ends the loop at once, sorted by :func:`~langchain_ripplemem.model_errors.failure_kind`
(the chat model's own ``max_retries`` already covered transient errors), and the
outcome says so (:attr:`StructuredOutcome.unreachable`), so a caller can skip its
remaining LLM calls instead of waiting for each to time out.

Example:
    >>> from pydantic import BaseModel
    >>> class Answer(BaseModel):
    ...     text: str
    >>> steps = structured_attempts(Answer, [], retries=1)
    >>> _ = next(steps)  # the first request
    >>> _ = steps.send({"raw": None, "parsed": None, "parsing_error": ValueError("bad")})
    >>> try:
    ...     steps.send(TimeoutError("read timed out"))
    ... except StopIteration as done:
    ...     outcome = done.value
    >>> outcome.value, outcome.failure, outcome.unreachable, outcome.errors
    (None, 'unreachable', True, ['ValueError: bad', 'TimeoutError: read timed out'])

"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from pydantic import BaseModel

from langchain_ripplemem.drivers import adrive, drive
from langchain_ripplemem.model_errors import FailureKind, describe_error, failure_kind
from langchain_ripplemem.schemas import Usage

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

__all__ = ["InvalidOutput", "StructuredOutcome", "acall_structured", "adrive", "call_structured", "default_retry_note",
           "drive", "read_structured", "resolve_chat_model", "structured_attempts", "structured_runnable", "usage_of"]

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")
Request = tuple[list[BaseMessage], "RunnableConfig"]


def default_retry_note(error: str) -> str:
    """The human message appended to a retry: what was wrong with the previous answer."""
    return f"Your previous answer was rejected: {error}\nAnswer again, following the schema exactly."


class InvalidOutput(Exception):
    """An answer broke a rule; the message says which, and is shown to the model on the retry."""


@dataclass(frozen=True)
class StructuredOutcome:
    """What a structured call came to.

    Attributes:
        value: the checked result (the parsed object, or what the caller's
            ``check`` made of it); ``None`` when every attempt failed.
        usage: calls and tokens of every attempt.
        errors: what was wrong with each failed attempt, in order (one line each).
        failure: why there is no value (see :mod:`~langchain_ripplemem.model_errors`).
        exception: the model call's own error that ended the loop, if one did.
    """

    value: Any
    usage: Usage
    errors: list[str] = field(default_factory=list)
    failure: FailureKind | None = None
    exception: BaseException | None = None

    @property
    def unreachable(self) -> bool:
        """The model could not be used (transport or configuration): its next call would fail too."""
        return self.failure in ("unreachable", "misconfigured")


def resolve_chat_model(model: BaseChatModel | str, *,
                       temperature: float | None = 0.0) -> BaseChatModel:
    """Return a chat model for ``model`` (an instance or a ``"provider:model"`` string).

    Strings go through ``langchain.chat_models.init_chat_model`` with
    ``temperature`` (the paper extracts at 0; None leaves the provider default);
    without the ``langchain`` package only ``"openai:..."`` works (via
    ``langchain-openai``). An instance is returned unchanged: build it with
    ``temperature=0`` yourself.

    Raises:
        ImportError: a string spec needs ``pip install langchain``.
        TypeError: ``model`` is neither a string nor a ``BaseChatModel``.

    """
    from langchain_core.language_models import BaseChatModel

    kwargs = {} if temperature is None else {"temperature": temperature}
    if isinstance(model, str):
        try:
            from langchain.chat_models import init_chat_model
        except ImportError:
            provider, _, name = model.partition(":")
            if provider == "openai" and name:
                from langchain_openai import ChatOpenAI

                return ChatOpenAI(model=name, **kwargs)
            raise ImportError(
                f"resolving the model string {model!r} needs init_chat_model from the "
                "`langchain` package: `pip install langchain` (plus the provider package, e.g. "
                "langchain-anthropic), or pass a chat model instance instead") from None
        return init_chat_model(model, **kwargs)
    if not isinstance(model, BaseChatModel):
        raise TypeError(f"model must be a BaseChatModel or a 'provider:model' string, "
                        f"got {type(model).__name__}")
    # An instance is used as built: copying it with another temperature would skip the
    # provider's validators (e.g. reasoning models that reject temperature 0).
    return model


def usage_of(message: Any) -> Usage:
    """One LLM call's usage from an AIMessage's ``usage_metadata`` (0 tokens when absent)."""
    meta = getattr(message, "usage_metadata", None) or {}
    return Usage(
        llm_calls=1,
        input_tokens=int(meta.get("input_tokens", 0) or 0),
        output_tokens=int(meta.get("output_tokens", 0) or 0),
    )


def structured_runnable(model: BaseChatModel, schema: type[T]) -> Any:
    """``model.with_structured_output(schema, include_raw=True)`` (raw kept for usage and error texts)."""
    return model.with_structured_output(schema, include_raw=True)


def read_structured(response: Any, schema: type[T]) -> T:
    """The parsed object of one ``include_raw`` answer, or :class:`InvalidOutput` saying what was wrong."""
    if not isinstance(response, dict):
        raise InvalidOutput(f"unexpected response type {type(response).__name__}")
    raw, parsed, error = response.get("raw"), response.get("parsed"), response.get("parsing_error")
    wrong_call = _wrong_tool_call(raw, schema.__name__)
    if wrong_call:  # before the parser's error, which would only say "unknown tool"
        raise InvalidOutput(wrong_call)
    if error is not None:
        raise InvalidOutput(describe_error(error))
    if parsed is None:
        text: str = getattr(raw, "content", None) or ""
        text = text if isinstance(text, str) else ""
        if text.strip():
            raise InvalidOutput(f"answered with text instead of a {schema.__name__} object: "
                                f"{' '.join(text.split())[:80]!r}")
        raise InvalidOutput(f"empty answer: no {schema.__name__} object")
    if not isinstance(parsed, schema):  # a dict from a JSON-schema or TypedDict path
        try:
            parsed = schema.model_validate(parsed)
        except ValueError as err:
            raise InvalidOutput(describe_error(err)) from None
    return parsed


def _wrong_tool_call(raw: Any, name: str) -> str | None:
    """What is wrong with the raw answer's tool calls, if it made any that cannot be read as ``name``."""
    for call in getattr(raw, "invalid_tool_calls", None) or []:
        called = call.get("name") or name
        try:
            json.loads(call.get("args") or "")
        except ValueError as err:
            return f"the {called} call's arguments are {describe_error(err)}"
        return f"the {called} call is malformed: {call.get('error') or 'no detail'}"
    calls = [c.get("name") for c in getattr(raw, "tool_calls", None) or []]
    if calls and name not in calls:
        return f"called {', '.join(map(repr, calls))} instead of answering with {name}"
    return None


def structured_attempts(
    schema: type[T], messages: list[BaseMessage] | Any, *,
    check: Callable[[T], Any] | None = None, retries: int = 2,
    retry_note: Callable[[str], str] = default_retry_note, run_name: str | None = None,
    metadata: dict[str, Any] | None = None,
) -> Generator[Request, Any, StructuredOutcome]:
    """The retry loop: yields ``(messages, config)`` requests, receives answers or the call's exception.

    Args:
        schema: the pydantic class asked for.
        messages: the prompt (a list of messages or a prompt value).
        check: turns the parsed object into the outcome's value, or raises
            :class:`InvalidOutput`; default: the parsed object.
        retries: extra attempts after invalid output.
        retry_note: ``error -> text`` appended as a human message to a retry.
        run_name: tracing name of each call.
        metadata: tracing metadata of each call (``attempt`` is added).

    Returns:
        the :class:`StructuredOutcome`.
    """
    base = messages.to_messages() if hasattr(messages, "to_messages") else list(messages)
    usage, errors = Usage(), list[str]()
    for attempt in range(1, retries + 2):
        request = base + ([HumanMessage(retry_note(errors[-1]))] if errors else [])
        config: RunnableConfig = {"metadata": {**(metadata or {}), "attempt": attempt}}
        if run_name:
            config["run_name"] = run_name
        response = yield request, config
        if isinstance(response, BaseException):
            usage = usage.add(Usage(llm_calls=1))
            errors.append(describe_error(response))
            kind = failure_kind(response)
            if kind != "invalid_output":
                return StructuredOutcome(None, usage, errors, kind, response)
            continue
        usage = usage.add(usage_of(response.get("raw") if isinstance(response, dict) else None))
        try:
            parsed = read_structured(response, schema)
            value = check(parsed) if check is not None else parsed
        except InvalidOutput as problem:
            errors.append(str(problem))
            continue
        return StructuredOutcome(value, usage, errors)
    return StructuredOutcome(None, usage, errors, "invalid_output")


def invoke_caught(runnable: Any) -> Callable[[Request], Any]:
    """``request -> runnable.invoke(messages, config)``, a raised exception returned as the answer.

    The attempts loop sorts a call's exception (retried, or the end of the loop), so a
    driver (:func:`~langchain_ripplemem.drivers.drive`) sends it in instead of raising.
    """
    def call(request: Request) -> Any:
        try:
            return runnable.invoke(request[0], config=request[1])
        except Exception as err:  # noqa: BLE001 - sorted by the loop
            return err
    return call


def ainvoke_caught(runnable: Any) -> Callable[[Request], Awaitable[Any]]:
    """Async :func:`invoke_caught`."""
    async def call(request: Request) -> Any:
        try:
            return await runnable.ainvoke(request[0], config=request[1])
        except Exception as err:  # noqa: BLE001 - sorted by the loop
            return err
    return call


def call_structured(
    model: BaseChatModel, schema: type[T], messages: list[BaseMessage] | Any,
    *, check: Callable[[T], Any] | None = None, retries: int = 2, run_name: str | None = None,
) -> StructuredOutcome:
    """Invoke for ``schema`` until valid, ``retries`` extra attempts are spent, or the call itself fails.

    See :func:`structured_attempts` for ``check`` and ``retries``.
    """
    runnable = structured_runnable(model, schema)
    steps = structured_attempts(schema, messages, check=check, retries=retries, run_name=run_name)
    return drive(steps, invoke_caught(runnable))


async def acall_structured(
    model: BaseChatModel, schema: type[T], messages: list[BaseMessage] | Any,
    *, check: Callable[[T], Any] | None = None, retries: int = 2, run_name: str | None = None,
) -> StructuredOutcome:
    """Async :func:`call_structured` (same loop)."""
    runnable = structured_runnable(model, schema)
    steps = structured_attempts(schema, messages, check=check, retries=retries, run_name=run_name)
    return await adrive(steps, ainvoke_caught(runnable))
