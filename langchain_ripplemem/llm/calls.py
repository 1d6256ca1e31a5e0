"""Opt-in chat models: resolving them, calling them for validated structured output, usage.

Every LLM step of the package (extraction, query cues, controller, supersession)
asks for a pydantic schema through ``with_structured_output`` and checks the
parsed object with its own rule. :func:`structured_attempts` is that loop,
written once as a generator that yields each request and receives the model's
answer, or the exception its call raised; :func:`drive` and :func:`adrive` run
it with :meth:`StructuredModel.invoke` or :meth:`StructuredModel.ainvoke`.

:class:`StructuredModel` makes each call work on servers that implement only
part of the OpenAI API (llama.cpp, vLLM, LM Studio, Ollama):

* **Method.** The first call uses the model's default method (``json_schema``
  for ``ChatOpenAI``). When the server refuses the method itself (an HTTP error
  naming ``response_format``, tools, ...: :func:`~langchain_ripplemem.llm.failures.rejects_structured_output`;
  llama-cpp-python answers ``json_schema`` with a 500), the same request is sent
  once with the next method of :data:`METHODS` (``json_schema``, then
  ``function_calling``, then ``json_mode``), and the method that worked is
  remembered for that model (its class, name and base URL), so later calls,
  from any step, start with it. A log warning says so, once.
* **Output length.** At an OpenAI-compatible server other than OpenAI's own
  (a ``ChatOpenAI`` with another base URL), every call is bounded: by the
  model's own ``max_tokens`` when it has one, else by the step's bound
  (``max_tokens`` of :func:`call_structured`). ``ChatOpenAI`` sends the limit as
  ``max_completion_tokens``, which llama.cpp ignores, so it is sent as
  ``max_tokens`` too (in ``extra_body``). OpenAI's own endpoint gets the model
  exactly as built. Other providers take their own output limit as set on the model.

Only *invalid output* is retried, with a note telling the model what was wrong:
a parse or validation error raised inside the model call (ChatOpenAI's
``json_schema`` path parses there), a ``parsing_error``, a missing or malformed
tool call, or a rule of the caller (:class:`InvalidOutput`). Any other error of
the call ends the loop at once, sorted by :func:`~langchain_ripplemem.llm.failures.failure_kind`
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
import logging
import threading
import weakref
from collections.abc import Callable, Generator, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlparse

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from pydantic import BaseModel

from langchain_ripplemem._runtime.drivers import adrive, drive
from langchain_ripplemem.llm.failures import (
    FailureKind,
    describe_error,
    empty_answer,
    failure_kind,
    rejects_structured_output,
)
from langchain_ripplemem.schemas import Usage

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

__all__ = ["DEFAULT_MAX_TOKENS", "METHODS", "Answer", "InvalidOutput", "StructuredModel", "StructuredOutcome",
           "acall_structured", "adrive", "bounded", "call_structured", "default_retry_note", "drive", "output_bound",
           "read_structured", "resolve_chat_model", "structured_attempts", "usage_of", "working_method"]

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")
Request = tuple[list[BaseMessage], "RunnableConfig"]

METHODS = ("json_schema", "function_calling", "json_mode")  # the fallback order
DEFAULT_MAX_TOKENS = 1024  # a step's output bound at OpenAI-compatible servers, unless the step names its own
_OPENAI_HOSTS = ("api.openai.com", ".openai.azure.com")  # they take max_completion_tokens (and reject max_tokens)
_log = logging.getLogger(__name__)


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
        failure: why there is no value (see :mod:`~langchain_ripplemem.llm.failures`).
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
    ``langchain-openai``, the ``openai`` extra). An instance is returned unchanged:
    build it with ``temperature=0`` yourself.

    Raises:
        ImportError: a string spec needs ``pip install langchain``, or ``"openai:..."``
            needs ``pip install "langchain-ripplemem[openai]"``.
        TypeError: ``model`` is neither a string nor a ``BaseChatModel``.

    """
    from langchain_core.language_models import BaseChatModel

    kwargs = {} if temperature is None else {"temperature": temperature}
    if isinstance(model, str):
        try:
            from langchain.chat_models import init_chat_model
        except ImportError:
            return _openai_model(model, kwargs)
        return init_chat_model(model, **kwargs)
    if not isinstance(model, BaseChatModel):
        raise TypeError(f"model must be a BaseChatModel or a 'provider:model' string, "
                        f"got {type(model).__name__}")
    # An instance is used as built: copying it with another temperature would skip the
    # provider's validators (e.g. reasoning models that reject temperature 0).
    return model


def _openai_model(spec: str, kwargs: dict[str, Any]) -> BaseChatModel:
    """``"openai:NAME"`` without the ``langchain`` package: ``ChatOpenAI``, from the ``openai`` extra."""
    provider, _, name = spec.partition(":")
    if provider != "openai" or not name:
        raise ImportError(
            f"resolving the model string {spec!r} needs init_chat_model from the "
            "`langchain` package: `pip install langchain` (plus the provider package, e.g. "
            "langchain-anthropic), or pass a chat model instance instead")
    try:
        from langchain_openai import ChatOpenAI
    except ImportError:
        raise ImportError(f"the model string {spec!r} needs langchain-openai: "
                          'pip install "langchain-ripplemem[openai]" (or pass a chat model instance)') from None
    return ChatOpenAI(model=name, **kwargs)


def usage_of(message: Any) -> Usage:
    """One LLM call's usage from an AIMessage's ``usage_metadata`` (0 tokens when absent)."""
    meta = getattr(message, "usage_metadata", None) or {}
    return Usage(
        llm_calls=1,
        input_tokens=int(meta.get("input_tokens", 0) or 0),
        output_tokens=int(meta.get("output_tokens", 0) or 0),
    )


def read_structured(response: Any, schema: type[T]) -> T:
    """The parsed object of one ``include_raw`` answer, or :class:`InvalidOutput` saying what was wrong."""
    if not isinstance(response, dict):
        raise InvalidOutput(f"unexpected response type {type(response).__name__}")
    raw, parsed, error = response.get("raw"), response.get("parsed"), response.get("parsing_error")
    wrong_call = _wrong_tool_call(raw, schema.__name__)
    if wrong_call:  # before the parser's error, which would only say "unknown tool"
        raise InvalidOutput(wrong_call)
    if parsed is None and (empty := empty_answer(raw)):  # before the parser's error: a dump of the message
        raise InvalidOutput(f"{empty}: no {schema.__name__} object")
    if error is not None:
        raise InvalidOutput(describe_error(error))
    if parsed is None:
        text: str = getattr(raw, "content", None) or ""
        text = text if isinstance(text, str) else ""
        raise InvalidOutput(f"answered with text instead of {_article(schema.__name__)} {schema.__name__} object: "
                            f"{' '.join(text.split())[:80]!r}")
    if not isinstance(parsed, schema):  # a dict from a JSON-schema or TypedDict path
        try:
            parsed = schema.model_validate(parsed)
        except ValueError as err:
            raise InvalidOutput(describe_error(err)) from None
    return parsed


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


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

    An answer may come as an :class:`Answer` (from :class:`StructuredModel`): calls a
    server refused before it count in the usage, not as attempts.

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
        if isinstance(response, Answer):  # from StructuredModel: the calls the server refused count too
            usage = usage.add(Usage(llm_calls=len(response.rejected)))
            response = response.value
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


@dataclass(frozen=True)
class Answer:
    """What one request came to: the model's answer (or its call's exception), after any method fallback.

    Attributes:
        value: the ``include_raw`` answer, or the exception the call raised.
        rejected: the calls made before it with methods the server refused, one line each.
    """

    value: Any
    rejected: tuple[str, ...] = ()


class _WorkingMethods:
    """The structured-output method that worked for a model, after its default was refused; thread-safe.

    Keyed by :func:`model_identity`: instances of one model at one server share
    what was learned (a memory resolves a ``"provider:model"`` string once per
    step), other models never see it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._methods: dict[Hashable, str] = {}

    def get(self, model: Any) -> str | None:
        with self._lock:
            return self._methods.get(model_identity(model))

    def set(self, model: Any, method: str) -> None:
        key = model_identity(model)
        with self._lock:
            if key not in self._methods and key[0] == "instance":  # forgotten with the instance (ids are reused)
                weakref.finalize(model, self._forget, key)
            self._methods[key] = method

    def _forget(self, key: Hashable) -> None:
        with self._lock:
            self._methods.pop(key, None)


_WORKING_METHODS = _WorkingMethods()


def model_identity(model: Any) -> tuple[Any, ...]:
    """Which model at which server: class, model name and base URL (the instance when it names neither)."""
    name = next((v for a in ("model_name", "model", "model_id") if isinstance(v := getattr(model, a, None), str)),
                None)
    base = _base_url(model)
    if name is None and base is None:
        return ("instance", id(model))
    return (f"{type(model).__module__}.{type(model).__qualname__}", name, base)


def working_method(model: Any) -> str | None:
    """The method remembered for ``model`` (see the module docs); ``None`` while its default serves."""
    return _WORKING_METHODS.get(model)


def _base_url(model: Any) -> str | None:
    """The URL a ``ChatOpenAI``-style client sends to (its client's, which also reads ``OPENAI_BASE_URL``)."""
    url = getattr(getattr(model, "root_client", None), "base_url", None) or getattr(model, "openai_api_base", None)
    return str(url) if url else None


def _methods_to_try(model: Any) -> list[str | None]:
    """The remembered method or the model's default, then the later :data:`METHODS`; ``[None]``: only the default.

    The default is the ``method`` parameter's default of ``with_structured_output``
    (``json_schema`` for ``ChatOpenAI``); a model without that parameter has one way only.
    """
    import inspect

    try:
        parameter = inspect.signature(model.with_structured_output).parameters.get("method")
    except (TypeError, ValueError):
        parameter = None
    if parameter is None:
        return [None]
    start = working_method(model) or parameter.default
    if start not in METHODS:  # a default this module does not know: try it, then every method
        return [None, *METHODS]
    return list(METHODS[METHODS.index(start):])


def output_bound(model: Any, max_tokens: int) -> dict[str, Any]:
    """``with_structured_output`` arguments that bound the answer's length (see the module docs); ``{}``: none.

    Example:
        >>> from langchain_openai import ChatOpenAI
        >>> local = ChatOpenAI(model="smollm2", base_url="http://127.0.0.1:8080/v1", api_key="x")
        >>> output_bound(local, 512)
        {'max_tokens': 512, 'extra_body': {'max_tokens': 512}}
        >>> output_bound(ChatOpenAI(model="gpt-4.1-mini", api_key="x"), 512)
        {}

    """
    openai_client = any(c.__name__ == "BaseChatOpenAI" for c in type(model).__mro__)  # without importing it
    base = _base_url(model) if openai_client else None
    if base is None or (urlparse(base).hostname or "").endswith(_OPENAI_HOSTS):
        return {}
    limit = model.max_tokens or max_tokens
    return {"max_tokens": limit, "extra_body": {**(model.extra_body or {}), "max_tokens": limit}}


def bounded(model: BaseChatModel, max_tokens: int = DEFAULT_MAX_TOKENS) -> Any:
    """``model`` bound to :func:`output_bound` for a plain (not structured) call; ``model`` itself when none applies."""
    bound = output_bound(model, max_tokens)
    return model.bind(**bound) if bound else model


class StructuredModel:
    """A chat model asked for one schema: the method its server accepts, and bounded output (see the module docs).

    Args:
        model: the chat model.
        schema: the pydantic class asked for.
        max_tokens: the output bound at OpenAI-compatible servers when the model sets none.

    Raises:
        NotImplementedError: the model has no ``with_structured_output`` (from the first method's runnable).
    """

    def __init__(self, model: BaseChatModel, schema: type[BaseModel], *, max_tokens: int = DEFAULT_MAX_TOKENS) -> None:
        self.model, self.schema, self.max_tokens = model, schema, max_tokens
        self._runnables: dict[str | None, Any] = {}
        self._runnable(_methods_to_try(model)[0])

    def _runnable(self, method: str | None) -> Any:
        if method not in self._runnables:
            kwargs = {"include_raw": True, **output_bound(self.model, self.max_tokens)}
            if method is not None:
                kwargs["method"] = method
            self._runnables[method] = self.model.with_structured_output(self.schema, **kwargs)
        return self._runnables[method]

    def _calls(self, request: Request) -> Generator[tuple[Any, Request], Any, Answer]:
        """Send ``request`` with each method in turn until one is not refused; remember the one that served."""
        calls: list[tuple[str | None, Any]] = []
        for method in _methods_to_try(self.model):
            try:
                runnable = self._runnable(method)
            except (NotImplementedError, ValueError):  # this client cannot ask that way (the first one can)
                continue
            answer = yield runnable, request
            calls.append((method, answer))
            if not (isinstance(answer, BaseException) and rejects_structured_output(answer)):
                break
        method, answer = calls[-1]
        rejected = tuple(f"{m or 'the default method'}: {describe_error(a)}" for m, a in calls[:-1])
        served = not isinstance(answer, BaseException) or failure_kind(answer) == "invalid_output"
        if rejected and served and method is not None:
            _WORKING_METHODS.set(self.model, method)
            _log.warning("%s refused structured output by %s; asking it by %s from now on",
                         model_identity(self.model)[1] or type(self.model).__name__,
                         ", ".join(m or "its default method" for m, _ in calls[:-1]), method)
        return Answer(answer, rejected)

    def invoke(self, request: Request) -> Answer:
        """The :class:`Answer` to ``request`` (an exception of the call is its value, not raised)."""
        return drive(self._calls(request), _invoke)

    async def ainvoke(self, request: Request) -> Answer:
        """Async :meth:`invoke`."""
        return await adrive(self._calls(request), _ainvoke)


def _invoke(call: tuple[Any, Request]) -> Any:
    runnable, (messages, config) = call
    try:
        return runnable.invoke(messages, config=config)
    except Exception as err:  # noqa: BLE001 - sorted by the attempts loop
        return err


async def _ainvoke(call: tuple[Any, Request]) -> Any:
    runnable, (messages, config) = call
    try:
        return await runnable.ainvoke(messages, config=config)
    except Exception as err:  # noqa: BLE001 - sorted by the attempts loop
        return err


def call_structured(
    model: BaseChatModel, schema: type[T], messages: list[BaseMessage] | Any, *,
    check: Callable[[T], Any] | None = None, retries: int = 2, run_name: str | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> StructuredOutcome:
    """Invoke for ``schema`` until valid, ``retries`` extra attempts are spent, or the call itself fails.

    See :func:`structured_attempts` for ``check`` and ``retries``, :class:`StructuredModel` for ``max_tokens``.
    """
    steps = structured_attempts(schema, messages, check=check, retries=retries, run_name=run_name)
    return drive(steps, StructuredModel(model, schema, max_tokens=max_tokens).invoke)


async def acall_structured(
    model: BaseChatModel, schema: type[T], messages: list[BaseMessage] | Any, *,
    check: Callable[[T], Any] | None = None, retries: int = 2, run_name: str | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> StructuredOutcome:
    """Async :func:`call_structured` (same loop)."""
    steps = structured_attempts(schema, messages, check=check, retries=retries, run_name=run_name)
    return await adrive(steps, StructuredModel(model, schema, max_tokens=max_tokens).ainvoke)
