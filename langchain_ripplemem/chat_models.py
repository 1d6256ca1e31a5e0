"""Opt-in chat models: resolving them, calling them for validated structured output, usage.

Every LLM step of the package (extraction, query cues, controller) asks for a
pydantic schema, validates the parsed object with its own rule, and retries a
bounded number of times. Sync and async share one loop, written once as a
generator that is driven by ``invoke`` or ``ainvoke``.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from langchain_ripplemem.schemas import Usage

T = TypeVar("T", bound=BaseModel)
Validator = Callable[[Any], "str | None"]
Outcome = tuple["Any | None", Usage, list[str]]


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
    """``model.with_structured_output(schema, include_raw=True)`` (raw kept for usage)."""
    return model.with_structured_output(schema, include_raw=True)


def _loop(schema: type[T], validate: Validator | None, retries: int) -> Generator[None, Any, Outcome]:
    usage, errors = Usage(), []
    for attempt in range(retries + 1):
        response = yield
        if isinstance(response, BaseException):
            usage = usage.add(Usage(llm_calls=1))
            errors.append(f"attempt {attempt + 1}: {type(response).__name__}: {response}")
            continue
        usage = usage.add(usage_of(response.get("raw")))
        parsed, error = response.get("parsed"), response.get("parsing_error")
        if parsed is not None and not isinstance(parsed, schema):
            try:
                parsed = schema.model_validate(parsed)
            except ValueError as err:
                parsed, error = None, err
        if parsed is None:
            errors.append(f"attempt {attempt + 1}: output did not parse as {schema.__name__}: {error}")
            continue
        problem = validate(parsed) if validate else None
        if problem:
            errors.append(f"attempt {attempt + 1}: {problem}")
            continue
        return parsed, usage, errors
    return None, usage, errors


def call_structured(
    model: BaseChatModel, schema: type[T], messages: list[BaseMessage] | Any,
    *, validate: Validator | None = None, retries: int = 2,
) -> Outcome:
    """Invoke for ``schema`` until valid or ``retries`` extra attempts are spent.

    Returns:
        ``(parsed or None, usage, errors of the failed attempts)``.
    """
    runnable, loop = structured_runnable(model, schema), _loop(schema, validate, retries)
    next(loop)
    try:
        while True:
            try:
                response: Any = runnable.invoke(messages)
            except Exception as err:  # a provider or parser error is one failed attempt
                response = err
            loop.send(response)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def acall_structured(
    model: BaseChatModel, schema: type[T], messages: list[BaseMessage] | Any,
    *, validate: Validator | None = None, retries: int = 2,
) -> Outcome:
    """Async :func:`call_structured` (same loop)."""
    runnable, loop = structured_runnable(model, schema), _loop(schema, validate, retries)
    next(loop)
    try:
        while True:
            try:
                response: Any = await runnable.ainvoke(messages)
            except Exception as err:
                response = err
            loop.send(response)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
