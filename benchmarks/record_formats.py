"""LoCoMo and LongMemEval records as conversations: the benchmark datasets' formats.

The benchmark loaders (:mod:`benchmarks.loaders`) read the benchmark files through these. They
check as the package's own readers do (:mod:`langchain_ripplemem.conversations.checks`): every
problem raises :class:`~langchain_ripplemem.errors.InvalidConversationError` naming the record and
the field path.

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
from collections.abc import Mapping
from typing import Any

from langchain_ripplemem.conversations.checks import checked_conversation, checked_turn, required_fields, time_field
from langchain_ripplemem.errors import DuplicateSessionWarning, InvalidConversationError
from langchain_ripplemem.schemas import Conversation, Session

__all__ = ["conversation_from_locomo", "conversation_from_longmemeval"]

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
