"""Schema-guided LLM extraction (the paper's write step), validated before anything is written.

Each window is one structured-output call (``with_structured_output`` on
:class:`~langchain_ripplemem.write.extraction.extraction_prompt.ExtractionOutput`, with the
model's default method: ``json_schema`` for ``ChatOpenAI``; a server that
refuses it is asked by the next method, see :class:`~langchain_ripplemem.llm.calls.StructuredModel`).
At an OpenAI-compatible server the answer is bounded to :func:`output_tokens`
of the window size, unless the model sets its own ``max_tokens``. An attempt is
rejected when the output does not parse or validate (whether the output parser
reports it or the model call raises it, as ``ChatOpenAI``'s ``json_schema`` path
does), when an event cites a turn id outside the window, a restatement is empty
or a time does not parse; the next attempt is told why. After ``max_retries``
extra attempts the window is returned as :class:`~langchain_ripplemem.schemas.FailedWindow`
with no units: never a partial write.

When the model call itself fails (sorted by :mod:`~langchain_ripplemem.llm.failures`):

* **unreachable** (timeout, connection refused, HTTP 5xx, 429 once the chat
  model's own ``max_retries`` are spent) or **rejected** (HTTP 400/413/422, a
  window over the context limit): that window fails at once, without another
  attempt, its ``FailedWindow.error`` saying why. The other windows' units are
  kept. Ingesting the conversation again later extracts every window again and
  stores only units not stored yet (ids are stable).
* **misconfigured** (HTTP 401/403, an unknown model, an exhausted quota): no
  window can succeed, so :class:`~langchain_ripplemem.errors.ModelConfigurationError`
  is raised at once; ``RippleMem.add_conversation`` writes nothing.

No turn vanishes silently. ``events`` is required (``{"unexpected": 1}`` is
invalid output), but ``{"events": []}`` is a valid answer: nothing worth
keeping. A turn with text that no event of a successful window cites is named
in a warning and, with ``ExtractionConfig.rules_for_uncovered_turns`` (the default),
stored as the rule-based unit(s) of :class:`~langchain_ripplemem.write.extraction.rule_extractor.RuleBasedExtractor`
(``metadata["fallback"] == "uncovered_turn"``).

Sync and async share everything but the model call: :meth:`LLMExtractor._attempts`
is a generator that yields each request and receives the model's answer
(:func:`~langchain_ripplemem.llm.calls.structured_attempts`).

Example:
    >>> extractor = LLMExtractor("openai:gpt-4.1-mini")  # resolved on first use, not here
    >>> extractor.max_retries
    2

    ``extractor.extract(window, namespace)`` returns an ``ExtractionResult``: the
    window's units, or ``failed`` with no units (``tests/unit_tests/test_chat_openai.py``
    drives it against a local OpenAI-compatible server).

"""

from __future__ import annotations

import re
import time
from collections.abc import Generator
from datetime import datetime
from datetime import time as clock_time
from typing import TYPE_CHECKING, Any

from langchain_ripplemem._runtime.drivers import adrive, drive
from langchain_ripplemem.config import ExtractionConfig
from langchain_ripplemem.errors import ExtractionError, ModelConfigurationError
from langchain_ripplemem.llm.calls import (
    InvalidOutput,
    Request,
    StructuredModel,
    StructuredOutcome,
    resolve_chat_model,
    structured_attempts,
)
from langchain_ripplemem.schemas import (
    FailedWindow,
    MemoryUnit,
    Namespace,
    Provenance,
    Session,
    TimeInterval,
    Turn,
    Usage,
)
from langchain_ripplemem.text.names import normalise_cues
from langchain_ripplemem.text.time.timeparse import parse_timestamp
from langchain_ripplemem.write.extraction.extraction_prompt import (
    EXTRACTION_PROMPT,
    ExtractionOutput,
    extraction_inputs,
    retry_note,
)
from langchain_ripplemem.write.extraction.extractor import ExtractionResult, Window
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from langchain_ripplemem.write.extraction.extraction_prompt import ExtractedEvent, ExtractionOutput

__all__ = ["LLMExtractor", "output_tokens", "resolve_chat_model"]

_DATE_ONLY = re.compile(r"^\s*\d{4}-\d{2}-\d{2}\s*$")
_HAS_OFFSET = re.compile(r"(?:[zZ]|[+-]\d{2}:?\d{2})\s*$")
_FAILED_CALL = {"unreachable": "model unreachable", "rejected": "the model refused the request"}
# An event is ~100 tokens of JSON and a turn rarely holds more than two: the bound only stops a runaway.
_TOKENS_PER_TURN, _TOKENS_BASE = 200, 256


def output_tokens(window_size: int) -> int:
    """The output bound of one window's answer (see the module docs).

    Example:
        >>> output_tokens(40)
        8256

    """
    return _TOKENS_BASE + _TOKENS_PER_TURN * window_size


class LLMExtractor:
    """Extract memory units from windows with a chat model and structured output.

    Args:
        model: a LangChain chat model, or a ``"provider:model"`` string
            resolved on first use (see :func:`resolve_chat_model`).
        config: ``llm_max_retries`` and ``rules_for_uncovered_turns`` come from it
            (default ``ExtractionConfig()``).
        max_retries: extra attempts after an invalid output (0 = one attempt);
            overrides ``config.llm_max_retries``.
        temperature: used when resolving a string spec; None leaves the
            provider default. A model instance is used exactly as built.

    Attributes:
        max_tokens: a window's output bound at OpenAI-compatible servers
            (:func:`output_tokens` of ``config.window_size``), unless the model sets its own.

    Example:
        >>> extractor = LLMExtractor("openai:gpt-4.1-mini", max_retries=1)
        >>> extractor.max_retries, extractor.fallback is not None
        (1, True)

    """

    def __init__(self, model: BaseChatModel | str, *, config: ExtractionConfig | None = None,
                 max_retries: int | None = None, temperature: float | None = 0.0) -> None:
        config = config or ExtractionConfig()
        max_retries = config.llm_max_retries if max_retries is None else max_retries
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries must be an integer >= 0, got {max_retries!r}")
        self.max_retries = max_retries
        self.temperature = temperature
        self.fallback = RuleBasedExtractor(config) if config.rules_for_uncovered_turns else None
        self.max_tokens = output_tokens(config.window_size)
        self._spec = model
        self._model: BaseChatModel | None = None
        self._caller: StructuredModel | None = None

    @property
    def model(self) -> BaseChatModel:
        """The chat model in use (a string spec is resolved on first access)."""
        if self._model is None:
            self._model = resolve_chat_model(self._spec, temperature=self.temperature)
        return self._model

    def _structured(self) -> StructuredModel:
        if self._caller is None:
            model = self.model
            try:
                self._caller = StructuredModel(model, ExtractionOutput, max_tokens=self.max_tokens)
            except NotImplementedError as exc:
                raise ExtractionError(
                    f"{type(model).__name__} does not support with_structured_output; "
                    "use a chat model with tool calling or the RuleBasedExtractor") from exc
        return self._caller

    def extract(self, window: Window, namespace: Namespace) -> ExtractionResult:
        """Extract units from ``window`` (sync).

        Raises:
            ModelConfigurationError: the model refuses requests with these settings (see the module docs).
        """
        return drive(self._attempts(window, namespace), self._structured().invoke)

    async def aextract(self, window: Window, namespace: Namespace) -> ExtractionResult:
        """Extract units from ``window`` (async)."""
        return await adrive(self._attempts(window, namespace), self._structured().ainvoke)

    def _attempts(self, window: Window, namespace: Namespace
                  ) -> Generator[Request, Any, ExtractionResult]:
        """The whole extraction except the model call: yield requests, receive answers."""
        started = time.perf_counter()
        where = f"conversation {window.conversation_id!r}, window {window.index}"
        if not any(_has_text(turn) for _, turn in window.items):
            return ExtractionResult(warnings=[f"{where}: no turn has text; nothing to extract"])
        outcome: StructuredOutcome = yield from structured_attempts(
            ExtractionOutput, EXTRACTION_PROMPT.format_messages(**extraction_inputs(window)),
            check=lambda parsed: _units(parsed, window, namespace), retries=self.max_retries,
            retry_note=retry_note, run_name="ripplemem_extract",
            metadata={"conversation_id": window.conversation_id, "window": window.index})
        usage = outcome.usage
        usage.seconds["extract"] = time.perf_counter() - started
        if outcome.failure is None:
            return self._with_uncovered(window, namespace, outcome.value, usage, where)
        if outcome.failure == "misconfigured":
            raise ModelConfigurationError(
                f"{where}: the chat model refuses requests with these settings ({outcome.errors[-1]}); "
                "check the API key, the model name and the base URL") from outcome.exception
        error = outcome.errors[-1]
        if outcome.failure in _FAILED_CALL:
            error = f"{_FAILED_CALL[outcome.failure]}: {error}"
        failed = FailedWindow(conversation_id=window.conversation_id, turn_ids=window.turn_ids,
                              error=error, attempts=len(outcome.errors))
        return ExtractionResult(failed=failed, usage=usage, warnings=[
            f"{where}: attempt {i}: {e}" for i, e in enumerate(outcome.errors, start=1)])

    def _with_uncovered(self, window: Window, namespace: Namespace, units: list[MemoryUnit], usage: Usage,
                        where: str) -> ExtractionResult:
        """``units``, plus rule-based units (or a warning) for the turns with text that no unit cites."""
        cited = {turn_id for unit in units for turn_id in unit.source.turn_ids}
        uncovered: dict[str, tuple[Session, Turn]] = {}
        for session, turn in window.items:
            if turn.id not in cited and _has_text(turn):
                uncovered.setdefault(turn.id, (session, turn))
        if not uncovered:
            return ExtractionResult(units=units, usage=usage)
        if self.fallback is None:
            return ExtractionResult(units=units, usage=usage, warnings=[
                f"{where}: no extracted event cites turns {list(uncovered)}; they are not stored "
                "(ExtractionConfig.rules_for_uncovered_turns is off)"])
        rules = self.fallback.extract(Window(conversation_id=window.conversation_id, index=window.index,
                                             items=tuple(uncovered.values())), namespace)
        fallback = [u.model_copy(update={"metadata": {**u.metadata, "fallback": "uncovered_turn"}})
                    for u in rules.units]
        return ExtractionResult(units=units + fallback, usage=usage, warnings=[
            f"{where}: no extracted event cites turns {list(uncovered)}; stored them as rule-based units",
            *rules.warnings])


def _has_text(turn: Turn) -> bool:
    return bool(turn.text.strip() or (turn.image_caption or "").strip())


# --------------------------------------------------------------------------- validation


def _units(parsed: ExtractionOutput, window: Window, namespace: Namespace) -> list[MemoryUnit]:
    """Check one parsed answer against the window and turn it into units, or raise :class:`InvalidOutput`."""
    position = {turn.id: i for i, (_, turn) in enumerate(window.items)}
    units: dict[str, MemoryUnit] = {}
    for i, event in enumerate(parsed.events):
        restatement = " ".join(event.restatement.split())
        if not restatement:
            raise InvalidOutput(f"events[{i}].restatement is empty")
        unknown = [t for t in event.turn_ids if t not in position]
        if unknown or not event.turn_ids:
            raise InvalidOutput(
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
        raise InvalidOutput(f"events[{index}]: time_end {event.time_end!r} is before time_start "
                       f"{event.time_start!r}")
    return TimeInterval(start=start, end=end)


def _when(value: str | None, field: str, tz: Any, *, end: bool) -> datetime | None:
    if value is None or not value.strip():
        return None
    try:
        parsed = parse_timestamp(value)
    except ValueError as exc:
        raise InvalidOutput(f"{field}: {exc}") from None
    if tz is not None and not _HAS_OFFSET.search(value):
        parsed = parsed.replace(tzinfo=tz)  # a naive time is in the session's zone
    if _DATE_ONLY.match(value) and end:
        parsed = datetime.combine(parsed.date(), clock_time.max, tzinfo=parsed.tzinfo)  # 9999-12-31 has no day after
    return parsed
