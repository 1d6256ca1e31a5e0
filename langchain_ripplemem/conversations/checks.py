"""The checks every reader of conversation records shares: fields, turns, times, ids, pydantic's messages.

The package's own JSON form (:mod:`~langchain_ripplemem.conversations.files`) and the
benchmark harness's LoCoMo and LongMemEval readers (``benchmarks/record_formats.py``, outside the
package) raise through these, so a bad record reads alike whatever its format:
:class:`~langchain_ripplemem.errors.InvalidConversationError` naming the record and the field path.

Example:
    >>> error_location(("sessions", 2, "turns", 5, "text"))
    'sessions[2].turns[5].text'

"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from langchain_ripplemem.errors import DuplicateSessionWarning, InvalidConversationError
from langchain_ripplemem.schemas import Conversation, Turn
from langchain_ripplemem.timestamps import parse_timestamp

__all__ = [
    "checked_conversation",
    "checked_turn",
    "error_location",
    "error_message",
    "repeated_sessions",
    "required_fields",
    "time_field",
]

def error_message(error: Any) -> str:
    """Pydantic's message for one error, without the ``"Value error, "`` it puts before our own."""
    raised = error.get("ctx", {}).get("error") if error["type"] == "value_error" else None
    return str(raised) if raised is not None else str(error["msg"])


def repeated_sessions(conv: Conversation, where: str) -> list[str]:
    """A message per session whose id an earlier session of ``conv`` has (each also a :class:`DuplicateSessionWarning`).

    Both sessions keep their turns, but memories name their session by id, so recall
    takes them for one session.
    """
    first: dict[str, int] = {}
    messages = []
    for s, session in enumerate(conv.sessions):
        if session.id in first:
            messages.append(f"{where}: sessions[{s}].id: session id {session.id!r} is used again (first at "
                            f"sessions[{first[session.id]}]); both are kept, but recall takes them for one "
                            "session: give each session its own id")
            warnings.warn(messages[-1], DuplicateSessionWarning, stacklevel=5)  # the caller of add_conversation
        first.setdefault(session.id, s)
    return messages


def checked_conversation(conv: Conversation, where: str) -> Conversation:
    """Reject conversations without turns and duplicate turn ids."""
    seen: dict[str, str] = {}
    for s, session in enumerate(conv.sessions):
        for t, turn in enumerate(session.turns):
            here = f"sessions[{s}].turns[{t}]"
            if turn.id in seen:
                raise InvalidConversationError(
                    f"{where}: {here}.id: duplicate turn id {turn.id!r} (also at {seen[turn.id]})")
            seen[turn.id] = here
    if not seen:
        raise InvalidConversationError(f"{where}: conversation {conv.id!r} has no turns")
    return conv


def required_fields(raw: Any, fields: Sequence[str], path: str) -> Mapping[str, Any]:
    """``raw`` itself when it is an object holding every one of ``fields``, else an error at ``path``."""
    if not isinstance(raw, Mapping):
        raise InvalidConversationError(f"{path}: expected an object, got {type(raw).__name__}")
    missing = [f for f in fields if f not in raw]
    if missing:
        raise InvalidConversationError(f"{path}: missing field {missing[0]!r}")
    return raw


def checked_turn(path: str, **fields: Any) -> Turn:
    """A :class:`Turn` of ``fields``, or an error naming ``path`` and the bad field."""
    try:
        return Turn(**fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InvalidConversationError(
            f"{path}.{error_location(error['loc'])}: {error_message(error)}") from exc


def time_field(value: Any, where: str) -> datetime:
    """``value`` read by :func:`~.extraction.timestamps.parse_timestamp`, or an error naming ``where``."""
    try:
        return parse_timestamp(value)
    except ValueError as exc:
        raise InvalidConversationError(f"{where}: {exc}") from exc


def error_location(loc: Sequence[str | int]) -> str:
    """Pydantic's ``("sessions", 2, "turns", 5, "text")`` -> ``"sessions[2].turns[5].text"``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
