"""Schema-guided LLM extraction (the paper's write step), validated before anything is written.

Each window is one structured-output call (``with_structured_output`` on
:class:`~langchain_ripplemem.prompts.extraction.ExtractionOutput`). An attempt
is rejected when the output does not parse, an event cites a turn id outside
the window, a restatement is empty or a time does not parse; the next
attempt is told why. After ``max_retries`` extra attempts the window is
returned as :class:`~langchain_ripplemem.schemas.FailedWindow` with no units:
never a partial write. Errors raised by the model itself (network, auth,
rate limits) propagate; chat models have their own ``max_retries`` for those.

Sync and async share everything but the model call: :meth:`LLMExtractor._attempts`
is a generator that yields each request and receives the model's answer.

Example:
    >>> extractor = LLMExtractor("openai:gpt-4.1-mini")  # resolved on first use
    >>> result = extractor.extract(window, ("demo",))  # doctest: +SKIP
    >>> result.failed or result.units  # doctest: +SKIP

"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable, Generator
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from langchain_ripplemem.chat_models import resolve_chat_model, usage_of
from langchain_ripplemem.extraction.base import ExtractionResult, Window
from langchain_ripplemem.extraction.cues import normalise_cues
from langchain_ripplemem.extraction.timeparse import parse_timestamp
from langchain_ripplemem.schemas import (
    FailedWindow,
    MemoryUnit,
    Namespace,
    Provenance,
    Session,
    TimeInterval,
    Usage,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import Runnable, RunnableConfig

    from langchain_ripplemem.prompts.extraction import ExtractedEvent

__all__ = ["LLMExtractor", "resolve_chat_model"]

Request = tuple["list[BaseMessage]", "RunnableConfig"]
_DATE_ONLY = re.compile(r"^\s*\d{4}-\d{2}-\d{2}\s*$")
_HAS_OFFSET = re.compile(r"(?:[zZ]|[+-]\d{2}:?\d{2})\s*$")


class _Invalid(Exception):
    """An attempt's output broke a rule; the message is shown to the model on retry."""


class LLMExtractor:
    """Extract memory units from windows with a chat model and structured output.

    Args:
        model: a LangChain chat model, or a ``"provider:model"`` string
            resolved on first use (see :func:`resolve_chat_model`).
        max_retries: extra attempts after an invalid output (0 = one attempt).
        temperature: used when resolving a string spec; None leaves the
            provider default. A model instance is used exactly as built.

    Example:
        >>> extractor = LLMExtractor("openai:gpt-4.1-mini", max_retries=1)
        >>> extractor.max_retries
        1

    """

    def __init__(self, model: BaseChatModel | str, *, max_retries: int = 2,
                 temperature: float | None = 0.0) -> None:
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries must be an integer >= 0, got {max_retries!r}")
        self.max_retries = max_retries
        self.temperature = temperature
        self._spec = model
        self._model: BaseChatModel | None = None
        self._runnable: Runnable[Any, Any] | None = None

    @property
    def model(self) -> BaseChatModel:
        """The chat model in use (a string spec is resolved on first access)."""
        if self._model is None:
            self._model = resolve_chat_model(self._spec, temperature=self.temperature)
        return self._model

    def _structured(self) -> Runnable[Any, Any]:
        if self._runnable is None:
            from langchain_ripplemem.errors import ExtractionError
            from langchain_ripplemem.prompts.extraction import ExtractionOutput

            model = self.model
            try:
                self._runnable = model.with_structured_output(ExtractionOutput, include_raw=True)
            except NotImplementedError as exc:
                raise ExtractionError(
                    f"{type(model).__name__} does not support with_structured_output; "
                    "use a chat model with tool calling or the RuleBasedExtractor") from exc
        return self._runnable

    def extract(self, window: Window, namespace: Namespace) -> ExtractionResult:
        """Extract units from ``window`` (sync)."""
        steps = self._attempts(window, namespace)
        try:
            request = next(steps)
            while True:
                messages, config = request
                request = steps.send(self._structured().invoke(messages, config=config))
        except StopIteration as done:
            return done.value

    async def aextract(self, window: Window, namespace: Namespace) -> ExtractionResult:
        """Extract units from ``window`` (async)."""
        steps = self._attempts(window, namespace)
        call: Callable[..., Awaitable[Any]] = self._structured().ainvoke
        try:
            request = next(steps)
            while True:
                messages, config = request
                request = steps.send(await call(messages, config=config))
        except StopIteration as done:
            return done.value

    def _attempts(self, window: Window, namespace: Namespace
                  ) -> Generator[Request, Any, ExtractionResult]:
        """The whole extraction except the model call: yield requests, receive answers."""
        from langchain_core.messages import HumanMessage

        from langchain_ripplemem.prompts.extraction import (
            EXTRACTION_PROMPT,
            extraction_inputs,
            retry_note,
        )

        started = time.perf_counter()
        usage = Usage()
        if not any(t.text.strip() or (t.image_caption or "").strip() for _, t in window.items):
            return ExtractionResult(warnings=[
                f"conversation {window.conversation_id!r}, window {window.index}: no turn "
                "has text; nothing to extract"])
        prompt = EXTRACTION_PROMPT.format_messages(**extraction_inputs(window))
        errors: list[str] = []
        for attempt in range(1, self.max_retries + 2):
            messages = prompt + ([HumanMessage(retry_note(errors[-1]))] if errors else [])
            config: RunnableConfig = {
                "run_name": "ripplemem_extract",
                "metadata": {"conversation_id": window.conversation_id,
                             "window": window.index, "attempt": attempt}}
            response = yield messages, config
            usage = usage.add(usage_of(response.get("raw") if isinstance(response, dict) else None))
            try:
                units = _units(response, window, namespace)
            except _Invalid as exc:
                errors.append(str(exc))
                continue
            usage.seconds["extract"] = time.perf_counter() - started
            return ExtractionResult(units=units, usage=usage)
        usage.seconds["extract"] = time.perf_counter() - started
        failed = FailedWindow(conversation_id=window.conversation_id, turn_ids=window.turn_ids,
                              error=errors[-1], attempts=len(errors))
        return ExtractionResult(failed=failed, usage=usage, warnings=[
            f"conversation {window.conversation_id!r}, window {window.index}: attempt {i}: {e}"
            for i, e in enumerate(errors, start=1)])


# --------------------------------------------------------------------------- validation


def _units(response: Any, window: Window, namespace: Namespace) -> list[MemoryUnit]:
    """Validate one structured-output answer and turn it into units, or raise :class:`_Invalid`."""
    from langchain_ripplemem.prompts.extraction import ExtractionOutput

    if not isinstance(response, dict):
        raise _Invalid(f"unexpected response type {type(response).__name__}")
    if response.get("parsing_error") is not None:
        raise _Invalid(f"output does not match the schema: {str(response['parsing_error'])[:300]}")
    parsed = response.get("parsed")
    if not isinstance(parsed, ExtractionOutput):
        raise _Invalid("no structured output: answer by calling the ExtractionOutput tool")
    position = {turn.id: i for i, (_, turn) in enumerate(window.items)}
    units: dict[str, MemoryUnit] = {}
    for i, event in enumerate(parsed.events):
        restatement = " ".join(event.restatement.split())
        if not restatement:
            raise _Invalid(f"events[{i}].restatement is empty")
        unknown = [t for t in event.turn_ids if t not in position]
        if unknown or not event.turn_ids:
            raise _Invalid(
                f"events[{i}].turn_ids {unknown or '[]'} cite no turn of this window; "
                f"valid ids are {window.turn_ids[0]!r} to {window.turn_ids[-1]!r} as given")
        turn_ids = sorted(set(event.turn_ids), key=position.__getitem__)
        sessions = list(dict.fromkeys(window.items[position[t]][0].id for t in turn_ids))
        session = window.items[position[turn_ids[0]]][0]
        metadata: dict[str, Any] = {"extractor": "llm", "window_index": window.index}
        if session.time is not None:
            metadata["session_time"] = session.time.isoformat()
        if len(sessions) > 1:
            metadata["session_ids"] = ",".join(sessions)
        unit = MemoryUnit.create(
            namespace=namespace, restatement=restatement,
            source=Provenance(conversation_id=window.conversation_id, session_id=session.id,
                              turn_ids=turn_ids),
            participants=normalise_cues(event.participants),
            locations=normalise_cues(event.locations, location=True),
            time=_interval(event, i, session), kind=event.kind, metadata=metadata)
        units.setdefault(unit.id, unit)
    return list(units.values())


def _interval(event: ExtractedEvent, index: int, session: Session) -> TimeInterval | None:
    """The event's time; date-only values cover the whole day; naive ones take the session zone."""
    if event.time_start is None and event.time_end is None:
        return None
    tz = session.time.tzinfo if session.time is not None else None
    start = _when(event.time_start, f"events[{index}].time_start", tz, end=False)
    end = _when(event.time_end, f"events[{index}].time_end", tz, end=True)
    if start is None:  # only an end: a point (or that whole day)
        start = _when(event.time_end, f"events[{index}].time_end", tz, end=False)
    if end is None:
        end = _when(event.time_start, f"events[{index}].time_start", tz, end=True)
    assert start is not None and end is not None
    if end < start:
        raise _Invalid(f"events[{index}]: time_end {event.time_end!r} is before time_start "
                       f"{event.time_start!r}")
    return TimeInterval(start=start, end=end)


def _when(value: str | None, field: str, tz: Any, *, end: bool) -> datetime | None:
    if value is None or not value.strip():
        return None
    try:
        parsed = parse_timestamp(value)
    except ValueError as exc:
        raise _Invalid(f"{field}: {exc}") from None
    if tz is not None and not _HAS_OFFSET.search(value):
        parsed = parsed.replace(tzinfo=tz)  # a naive time is in the session's zone
    if _DATE_ONLY.match(value) and end:
        parsed = parsed + timedelta(days=1) - timedelta(microseconds=1)
    return parsed
