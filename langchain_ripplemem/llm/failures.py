"""What went wrong in a chat-model call: the kind of failure, and a short text for people and models.

Every LLM step (extraction, query cues, the recall controller, supersession)
sorts an exception raised by the model call into one :data:`FailureKind`:

* ``"invalid_output"``: the model answered, but not with valid output (a
  pydantic ``ValidationError``, an ``OutputParserException``, bad JSON, an
  answer cut off at the token limit, a refusal). Another attempt may succeed.
* ``"unreachable"``: the call itself failed in transit (timeout, connection
  refused, HTTP 5xx, 429 after the client's own retries) or for a reason this
  module does not know. Calling again right away will most likely fail too.
* ``"rejected"``: the provider refused *this* request (HTTP 400/413/422, the
  context window exceeded). Another request may work.
* ``"misconfigured"``: nothing can work with these settings (HTTP 401/403, an
  unknown model, an exhausted quota).

LangChain's provider-neutral ``ModelError`` classes decide first; HTTP status
codes on the exception (``status_code`` or ``response.status_code``) cover
providers that do not map their errors to them.

Apart from the kind, :func:`rejects_structured_output` tells whether a server
refused *how* structured output was asked for (``response_format``, tools):
llama-cpp-python's server answers ``json_schema`` with HTTP 500, others with
400 or 422. Another method may then work (:class:`~langchain_ripplemem.llm.calls.StructuredModel`).

Example:
    >>> from pydantic import BaseModel, ValidationError
    >>> class Plan(BaseModel):
    ...     anchors: list[str]
    >>> try:
    ...     Plan.model_validate({"anchors": [1]})
    ... except ValidationError as err:
    ...     print(failure_kind(err), "|", describe_error(err))
    invalid_output | anchors[0]: Input should be a valid string
    >>> failure_kind(TimeoutError("read timed out"))
    'unreachable'

"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from langchain_core import exceptions as lc
from pydantic import ValidationError

from langchain_ripplemem.schemas import is_blank

__all__ = ["FailureKind", "describe_error", "empty_answer", "failure_kind", "rejects_structured_output",
           "summarise_validation"]

FailureKind = Literal["invalid_output", "unreachable", "rejected", "misconfigured"]

_MISCONFIGURED_STATUS = {401, 403, 404}
_REJECTED_STATUS = {400, 413, 422}
_URL = re.compile(r"\s*\(?https?://\S+\)?")
_BOILERPLATE = re.compile(r"^\s*(For troubleshooting, visit:|For further information visit).*$", re.M)
_MAX_CHARS = 300
# An HTTP error of these statuses about one of these request fields refuses the structured-output method.
_METHOD_REFUSED_STATUS = {400, 422, 500, 501}
_STRUCTURED_FIELDS = re.compile(r"response_format|json_schema|json_object|tool_choice|\btools?\b|function", re.I)


def failure_kind(exc: BaseException) -> FailureKind:
    """Sort an exception raised by a chat-model call (see the module docs)."""
    if isinstance(exc, (lc.ModelAuthenticationError, lc.ModelPermissionDeniedError, lc.ModelNotFoundError)):
        return "misconfigured"
    if isinstance(exc, (lc.ContextOverflowError, lc.ModelInvalidRequestError)):
        return "rejected"
    if isinstance(exc, (ValueError, lc.ModelRefusalError)) or type(exc).__name__.endswith("FinishReasonError"):
        return "invalid_output"  # ValidationError, OutputParserException and JSONDecodeError are ValueErrors
    if _quota_exhausted(exc):
        return "misconfigured"
    status = _status(exc)
    if status in _MISCONFIGURED_STATUS:
        return "misconfigured"
    if status in _REJECTED_STATUS:
        return "rejected"
    return "unreachable"


def rejects_structured_output(exc: BaseException) -> bool:
    """Whether a server refused the request's structured-output method (not the model, the prompt or the key).

    An HTTP 400, 422, 500 or 501 whose message names ``response_format``,
    ``json_schema``, ``json_object``, tools or functions; never a prompt over the
    context window.

    Example:
        >>> class ServerError(Exception):
        ...     status_code = 500
        >>> rejects_structured_output(ServerError("('body', 'response_format', 'type'): "
        ...                                       "Input should be 'text' or 'json_object'"))
        True
        >>> rejects_structured_output(ServerError("The server had an error while processing your request."))
        False

    """
    if isinstance(exc, lc.ContextOverflowError) or _status(exc) not in _METHOD_REFUSED_STATUS:
        return False
    return bool(_STRUCTURED_FIELDS.search(str(exc)))


def describe_error(exc: BaseException) -> str:
    """One line on what was wrong: validation errors as ``path: message``, others as ``Type: message``.

    URLs and "visit ... for troubleshooting" lines are left out; the text is cut at 300 characters.
    """
    validation = _validation_error(exc)
    if validation is not None:
        return summarise_validation(validation)
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    if type(exc).__name__ == "LengthFinishReasonError":
        return "the answer was cut off at the output token limit (finish_reason 'length')"
    text = " ".join(_URL.sub("", _BOILERPLATE.sub("", _http_error_text(exc))).split())
    text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return text if len(text) <= _MAX_CHARS else text[: _MAX_CHARS - 3] + "..."


def empty_answer(message: Any) -> str | None:
    """``"the model 'NAME' returned an empty answer"`` when ``message`` says nothing, else ``None``.

    Empty: no text, no tool call, no refusal. Said instead of what a parser raises on
    it (langchain-openai's "does not have a 'parsed' field nor a 'refusal' field",
    with the whole message; "Invalid json output:"). The name is the one the provider
    reports (``response_metadata["model_name"]``), if any.

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> empty_answer(AIMessage("", response_metadata={"model_name": "gpt-4.1-mini"}))
        "the model 'gpt-4.1-mini' returned an empty answer"
        >>> empty_answer(AIMessage("No.")) is None
        True

    """
    if not hasattr(message, "content") or getattr(message, "tool_calls", None) or \
            getattr(message, "invalid_tool_calls", None) or (getattr(message, "additional_kwargs", None) or {}).get(
                "refusal"):
        return None
    content = message.content
    parts = [content] if isinstance(content, str) else \
        [b if isinstance(b, str) else str(b.get("text") or "") for b in content if isinstance(b, (str, dict))]
    if not all(is_blank(part) for part in parts):
        return None
    name = (getattr(message, "response_metadata", None) or {}).get("model_name")
    return f"the model {name!r} returned an empty answer" if isinstance(name, str) and name else \
        "the model returned an empty answer"


def _http_error_text(exc: BaseException) -> str:
    """An HTTP error by its status and the server's message, whatever the SDK puts in ``str()``.

    openai 3 says ``Error code: 400 - <message>``; openai 2 (which langchain-openai 1.6 allows) gives the
    whole JSON body instead: its ``body`` holds the message.

    Example:
        >>> class BadRequest(Exception):
        ...     status_code, body = 400, {"message": "Invalid request.", "type": "invalid_request_error"}
        >>> _http_error_text(BadRequest("Error code: 400 - {'error': {'message': 'Invalid request.', ...}}"))
        'Error code: 400 - Invalid request.'

    """
    body, status = getattr(exc, "body", None), getattr(exc, "status_code", None)
    error = body.get("error", body) if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    if isinstance(status, int) and isinstance(message, str) and message:
        return f"Error code: {status} - {message}"
    return str(exc)


def summarise_validation(error: ValidationError, limit: int = 4) -> str:
    """``field.path: message`` for the first ``limit`` errors (list items as ``[i]``), without URLs.

    Example:
        >>> from pydantic import BaseModel
        >>> class Event(BaseModel):
        ...     kind: str
        ...     turn_ids: list[str]
        >>> class Output(BaseModel):
        ...     events: list[Event]
        >>> try:
        ...     Output.model_validate({"events": [{"kind": "fact"}]})
        ... except ValidationError as err:
        ...     summarise_validation(err)
        'events[0].turn_ids: Field required'

    """
    parts = []
    for item in error.errors(include_url=False)[:limit]:
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in item["loc"]).lstrip(".")
        parts.append(f"{path}: {item['msg']}" if path else item["msg"])
    more = error.error_count() - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _validation_error(exc: BaseException | None) -> ValidationError | None:
    """The pydantic error itself or the one an output parser wrapped (``raise ... from``)."""
    for _ in range(4):
        if exc is None or isinstance(exc, ValidationError):
            return exc
        exc = exc.__cause__
    return None


def _status(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        status: Any = getattr(holder, "status_code", None)
        if isinstance(status, int):
            return status
    return None


def _quota_exhausted(exc: BaseException) -> bool:
    """OpenAI's 429 ``insufficient_quota``: no retry or wait helps until billing changes."""
    return getattr(exc, "code", None) == "insufficient_quota"
