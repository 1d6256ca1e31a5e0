"""LoCoMo and LongMemEval records as conversations, and the checks every record reader shares.

:func:`~langchain_ripplemem.adapters.load_conversations` and
:func:`~langchain_ripplemem.adapters.conversation_from_json` recognise these records in a file
or a parsed object; the benchmark loaders (:mod:`langchain_ripplemem.bench.loaders`) read the
benchmark files through them. Every problem raises
:class:`~langchain_ripplemem.errors.InvalidConversationError` naming the record and the field path.

Example:
    >>> conv = conversation_from_longmemeval({
    ...     "question_id": "q-1", "haystack_session_ids": ["s-a"],
    ...     "haystack_dates": ["2023/05/20 (Sat) 02:21"],
    ...     "haystack_sessions": [[{"role": "user", "content": "I went to Lisbon."}]]})
    >>> [(t.id, t.speaker) for _, t in conv.turns()]
    [('s-a:0', 'user')]

"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from langchain_ripplemem.errors import DuplicateSessionWarning, InvalidConversationError
from langchain_ripplemem.extraction.timestamps import parse_timestamp
from langchain_ripplemem.schemas import Conversation, Session, Turn

__all__ = [
    "checked_conversation",
    "checked_turn",
    "conversation_from_locomo",
    "conversation_from_longmemeval",
    "error_location",
    "error_message",
    "repeated_sessions",
    "required_fields",
    "time_field",
]

_LOCOMO_SESSION = re.compile(r"^session_(\d+)$")


def conversation_from_locomo(record: Mapping[str, Any]) -> Conversation:
    """Convert one LoCoMo record (``locomo10.json`` item) into a conversation.

    Sessions are ``conversation["session_N"]`` in numeric order with
    ``session_N_date_time`` as their time (session id ``"session_N"``); turn
    ids are the ``dia_id``s (``"D1:3"``); ``blip_caption`` becomes
    ``image_caption``, ``img_url`` and the image ``query`` are kept as extra
    fields (``img_url``, ``image_query``). ``sample_id`` is the conversation id.

    Raises:
        InvalidConversationError: naming the missing or bad field.

    """
    where = f"LoCoMo record {record.get('sample_id', '?')!r}" if isinstance(record, Mapping) \
        else "LoCoMo record"
    if not isinstance(record, Mapping) or not isinstance(record.get("conversation"), Mapping):
        raise InvalidConversationError(f"{where}: missing object field 'conversation'")
    conv = record["conversation"]
    numbers = sorted(int(m.group(1)) for key in conv if (m := _LOCOMO_SESSION.match(key)))
    sessions = []
    for n in numbers:
        key = f"session_{n}"
        raw_turns = conv[key]
        if not isinstance(raw_turns, list):
            raise InvalidConversationError(f"{where}: conversation.{key} must be a list of turns")
        stamp = conv.get(f"{key}_date_time")
        when = time_field(stamp, f"{where}: conversation.{key}_date_time") if stamp else None
        turns = []
        for i, raw in enumerate(raw_turns):
            path = f"{where}: conversation.{key}[{i}]"
            turn = required_fields(raw, ("dia_id", "speaker", "text"), path)
            extra = {"img_url": turn["img_url"]} if "img_url" in turn else {}
            if "query" in turn:
                extra["image_query"] = turn["query"]
            turns.append(checked_turn(path, id=turn["dia_id"], speaker=turn["speaker"],
                               text=turn["text"], image_caption=turn.get("blip_caption"),
                               **extra))
        sessions.append(Session(id=key, time=when, turns=turns))
    sample_id = record.get("sample_id")
    if not isinstance(sample_id, str) or not sample_id:
        raise InvalidConversationError(f"{where}: missing string field 'sample_id'")
    return checked_conversation(Conversation(id=sample_id, sessions=sessions), where)


def conversation_from_longmemeval(record: Mapping[str, Any]) -> Conversation:
    """Convert one LongMemEval(-S) record into a conversation (id = ``question_id``).

    Sessions come from ``haystack_session_ids``, ``haystack_dates``
    (``"2023/05/20 (Sat) 02:21"``) and ``haystack_sessions``; a turn's speaker
    is its ``role``, its id ``f"{session_id}:{i}"``, and ``has_answer`` is
    kept as an extra field of the turn. ``question_date`` is kept on the
    conversation. A session id listed again with the same turns (LongMemEval-S
    lists a few filler sessions twice, at two dates) is kept once, at its first
    listing, with a :class:`DuplicateSessionWarning` naming it.

    Raises:
        InvalidConversationError: naming the missing or bad field, or both
            places of a session id listed twice with different turns.

    """
    qid = record.get("question_id") if isinstance(record, Mapping) else None
    where = f"LongMemEval record {qid!r}"
    fields = ("question_id", "haystack_session_ids", "haystack_dates", "haystack_sessions")
    required_fields(record, fields, where)
    ids, dates, bodies = (record[f] for f in fields[1:])
    if not (len(ids) == len(dates) == len(bodies)):
        raise InvalidConversationError(
            f"{where}: haystack_session_ids, haystack_dates and haystack_sessions differ in "
            f"length ({len(ids)}, {len(dates)}, {len(bodies)})")
    sessions: list[Session] = []
    first_listing: dict[str, int] = {}
    for s, (raw_sid, stamp, body) in enumerate(zip(ids, dates, bodies, strict=True)):
        sid = str(raw_sid)
        when = time_field(stamp, f"{where}: haystack_dates[{s}]")
        if not isinstance(body, list):
            raise InvalidConversationError(f"{where}: haystack_sessions[{s}] must be a list")
        if sid in first_listing:
            _check_repeat(where, sid, first_listing[sid], s, bodies, dates)
            continue
        first_listing[sid] = s
        turns = []
        for i, raw in enumerate(body):
            path = f"{where}: haystack_sessions[{s}][{i}]"
            turn = required_fields(raw, ("role", "content"), path)
            extra = {"has_answer": turn["has_answer"]} if "has_answer" in turn else {}
            turns.append(checked_turn(path, id=f"{sid}:{i}", speaker=turn["role"],
                               text=turn["content"], **extra))
        sessions.append(Session(id=sid, time=when, turns=turns))
    extra = {"question_date": record["question_date"]} if "question_date" in record else {}
    return checked_conversation(Conversation(id=str(qid), sessions=sessions, **extra), where)


def _check_repeat(where: str, sid: str, first: int, again: int, bodies: Any, dates: Any) -> None:
    """A session id listed twice: the same turns are dropped with a warning, different turns are an error."""
    def said(body: Any) -> list[tuple[Any, Any]]:
        return [(t.get("role"), t.get("content")) if isinstance(t, Mapping) else (None, t) for t in body]

    if said(bodies[first]) != said(bodies[again]):
        raise InvalidConversationError(
            f"{where}: session id {sid!r} is listed twice with different turns "
            f"(haystack_sessions[{first}] and haystack_sessions[{again}])")
    warnings.warn(
        f"{where}: session {sid!r} is listed twice with the same turns (haystack_sessions[{first}] "
        f"at {dates[first]!r} and [{again}] at {dates[again]!r}); kept once, at its first listing",
        DuplicateSessionWarning, stacklevel=3)


# --------------------------------------------------------------------------- checks


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
