"""Build :class:`~langchain_ripplemem.schemas.Conversation` objects from what users have.

* LangChain message lists: :func:`conversation_from_messages`.
* Files: :func:`load_conversations` reads JSON (one object or a list) or JSONL
  (``.jsonl``/``.ndjson``, one object per line). Each object may be in the
  package's own form (``{"id", "sessions": [{"id", "time", "turns": [...]}]}``),
  a LoCoMo record or a LongMemEval record; the format is detected per record
  (the benchmark records are read by :mod:`langchain_ripplemem.record_formats`).

Every problem raises :class:`~langchain_ripplemem.errors.InvalidConversationError`
naming the file, the line or record, and the field path
(``sessions[2].turns[5].text``).

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> conv = conversation_from_messages(
    ...     [HumanMessage("I'm allergic to shellfish."), AIMessage("Noted!")],
    ...     conversation_id="chat-1", session_time="2024-03-01T10:00:00Z")
    >>> [(t.id, t.speaker, t.text) for t in conv.sessions[0].turns]
    [('S1:0-05d0655d', 'user', "I'm allergic to shellfish."), ('S1:1-e56549bd', 'assistant', 'Noted!')]

"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from langchain_ripplemem.errors import InvalidConversationError
from langchain_ripplemem.record_formats import (
    checked_conversation,
    conversation_from_locomo,
    conversation_from_longmemeval,
    error_location,
    error_message,
    time_field,
)
from langchain_ripplemem.schemas import ASSISTANT_SPEAKER, Conversation, Session, Turn

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage, MessageLikeRepresentation

__all__ = [
    "conversation_from_json",
    "conversation_from_messages",
    "load_conversations",
    "single_turn_conversation",
]

_ROLE_DEFAULTS = {"human": "user", "ai": ASSISTANT_SPEAKER}
_ROLE_KEYS = {"human": ("human", "user"), "ai": ("ai", "assistant")}


def _digest(parts: list[Any]) -> str:
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def _chat_messages(messages: Any) -> list[BaseMessage]:
    """``messages`` as LangChain messages, or an error naming the item that is none."""
    from langchain_core.messages import convert_to_messages

    if isinstance(messages, (str, bytes, Mapping)) or not isinstance(messages, Iterable):
        raise InvalidConversationError(
            f"messages must be a list of chat messages, got {type(messages).__name__} "
            "(one message goes in a list: [HumanMessage(text)])")
    out: list[BaseMessage] = []
    for position, item in enumerate(messages):
        try:
            out.extend(convert_to_messages([item]))
        except (ValueError, TypeError, NotImplementedError) as error:
            raise InvalidConversationError(
                f"messages[{position}]: not a chat message (a LangChain message, a {{'role', 'content'}} dict "
                f"or a (role, text) pair), got {type(item).__name__}: {error}") from None
    return out


def conversation_from_messages(
    messages: Iterable[MessageLikeRepresentation],
    *,
    conversation_id: str | None = None,
    session_time: datetime | str | None = None,
    session_id: str = "S1",
    speaker_names: Mapping[str, str] | None = None,
) -> Conversation:
    """Turn a LangChain message list into a one-session conversation.

    Human messages are spoken by ``"user"`` and AI messages by ``"assistant"``
    unless ``message.name`` is set or ``speaker_names`` maps the role
    (keys ``"user"``/``"human"`` and ``"assistant"``/``"ai"``) to a name.
    System and tool messages, and AI messages with no text (pure tool calls),
    are skipped. A turn's id is ``message.id`` when set (LangGraph's message state sets
    it), else its position and a hash of its speaker and text (``"S1:2-5f0c9a1e"``):
    the same message added again is the same turn, and a message without an id that
    reads otherwise is a new turn. So an edit replaces what was remembered of a message
    only when the message has an id; two chats without ids that open alike (and so
    share the default conversation id) never replace each other's turns.

    Args:
        messages: the chat history.
        conversation_id: defaults to a hash of the first message (its id, speaker
            and text), so the same chat keeps its id as it grows: adding the whole
            history again after each exchange adds only the new messages.
        session_time: when the session happened (datetime or any format
            :func:`~langchain_ripplemem.extraction.timestamps.parse_timestamp` reads).
        session_id: id of the single session.
        speaker_names: role -> display name, e.g. ``{"user": "Maya"}``.

    Each message is a LangChain message or anything ``convert_to_messages`` takes
    (a ``{"role", "content"}`` dict, a ``(role, text)`` pair, a string: the user's).

    Raises:
        InvalidConversationError: ``messages`` not a list, an item that is no chat
            message, no usable message, duplicate message ids or a bad ``session_time``.

    """
    names = dict(speaker_names or {})
    turns: list[Turn] = []
    for position, message in enumerate(_chat_messages(messages)):
        role = getattr(message, "type", None)
        if role not in _ROLE_KEYS:
            continue
        text = message.text.strip()
        if not text:
            continue
        speaker = message.name or next(
            (names[k] for k in _ROLE_KEYS[role] if k in names), _ROLE_DEFAULTS[role])
        turn_id = message.id or f"{session_id}:{len(turns)}-{_digest([speaker, text])[:8]}"
        if any(t.id == turn_id for t in turns):
            raise InvalidConversationError(
                f"messages[{position}]: duplicate message id {turn_id!r}")
        turns.append(Turn(id=turn_id, speaker=speaker, text=text))
    if not turns:
        raise InvalidConversationError(
            "messages: no human or AI message with text; nothing to remember")
    when = time_field(session_time, "session_time") if session_time is not None else None
    if conversation_id is None:
        # A chat is named by where it starts: re-adding the history as it grows keeps the id, so
        # the turns already remembered make the same units and only the new ones are added.
        first = turns[0]
        conversation_id = f"conv-{_digest([session_id, [first.id, first.speaker, first.text]])[:16]}"
    return Conversation(id=conversation_id,
                        sessions=[Session(id=session_id, time=when, turns=turns)])


def single_turn_conversation(text: str, *, speaker: str, conversation_id: str | None = None,
                             session_id: str = "S1", turn_id: str | None = None,
                             time: datetime | None = None) -> Conversation:
    """One statement as a conversation of one session and one turn (remember tools, the store, MCP).

    Args:
        text: what was said.
        speaker: who said it.
        conversation_id: default ``note-<hash>`` of the speaker, the text and the (UTC) day it
            was said: the same statement said again that day is the same memory (adding it
            again stores nothing), and said on a later day it is new evidence of when it held.
        session_id: the session's id.
        turn_id: default ``"<session_id>:0"``.
        time: when it was said (default now, UTC).

    Example:
        >>> conv = single_turn_conversation("I moved to Porto.", speaker="Bob", conversation_id="n1")
        >>> [(t.id, t.speaker, t.text) for _, t in conv.turns()]
        [('S1:0', 'Bob', 'I moved to Porto.')]

    """
    when = time or datetime.now(timezone.utc)
    turn = Turn(id=turn_id or f"{session_id}:0", speaker=speaker, text=text)
    if conversation_id is None:
        day = (when.astimezone(timezone.utc) if when.tzinfo else when).date().isoformat()
        conversation_id = f"note-{_digest([speaker, text, day])[:16]}"
    return Conversation(id=conversation_id, sessions=[Session(id=session_id, time=when, turns=[turn])])


def load_conversations(path: str | Path) -> list[Conversation]:
    """Read conversations from a JSON or JSONL file (see the module docs for formats).

    Raises:
        InvalidConversationError: naming the file, line/record and field for
            unreadable bytes, malformed JSON, missing fields, bad timestamps,
            conversations without turns and duplicate ids.

    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidConversationError(f"{path}: cannot read file ({exc.strerror})") from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_number = raw[:exc.start].count(b"\n") + 1
        raise InvalidConversationError(
            f"{path}: line {line_number}: not UTF-8 (byte {raw[exc.start]:#04x} at offset "
            f"{exc.start}); re-save the file as UTF-8") from exc
    if not text.strip():  # else the JSON parser's "Expecting value", as if the file were malformed
        size = "0 bytes" if not raw else "only whitespace"
        raise InvalidConversationError(
            f"{path} is empty ({size}): a .json file holds one conversation object or a list of them, "
            "a .jsonl file one per line")
    records: list[tuple[str, Any]] = []
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                records.append((f"{path}: line {number}", _loads(line, f"{path}: line {number}")))
    else:
        data = _loads(text, str(path))
        items = data if isinstance(data, list) else [data]
        prefix = (lambda i: f"{path}: [{i}]") if isinstance(data, list) else (lambda i: str(path))
        records = [(prefix(i), item) for i, item in enumerate(items)]
    if not records:
        raise InvalidConversationError(f"{path}: no conversations in file")
    conversations: list[Conversation] = []
    seen: dict[str, str] = {}
    for where, record in records:
        conv = _from_record(record, where)
        if conv.id in seen:
            raise InvalidConversationError(
                f"{where}: duplicate conversation id {conv.id!r} (first at {seen[conv.id]})")
        seen[conv.id] = where
        conversations.append(conv)
    return conversations


def conversation_from_json(data: str | Mapping[str, Any], *, where: str = "conversation") -> Conversation:
    """One conversation from a JSON text or an already parsed object, checked as :func:`load_conversations` checks.

    The package's own form, a LoCoMo record and a LongMemEval record are all accepted.

    Raises:
        InvalidConversationError: naming ``where`` and the field for malformed JSON, missing fields,
            bad timestamps, no turns or duplicate turn ids.

    Example:
        >>> conv = conversation_from_json('{"id": "c1", "sessions": [{"id": "S1", "time": "2026-03-02", '
        ...                               '"turns": [{"id": "t1", "speaker": "Maya", "text": "Hi!"}]}]}')
        >>> conv.sessions[0].turns[0].text
        'Hi!'
    """
    record = _loads(data, where) if isinstance(data, str) else data
    return _from_record(record, where)


# --------------------------------------------------------------------------- helpers


def _loads(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line = f"line {exc.lineno} column {exc.colno}" if "line " not in where else \
            f"column {exc.colno}"
        raise InvalidConversationError(f"{where}: {line}: malformed JSON: {exc.msg}") from exc


def _from_record(record: Any, where: str) -> Conversation:
    """Dispatch on the record's shape, prefixing every error with ``where``."""
    if not isinstance(record, Mapping):
        raise InvalidConversationError(
            f"{where}: expected a conversation object, got {type(record).__name__}")
    try:
        if "haystack_sessions" in record:
            return conversation_from_longmemeval(record)
        if "conversation" in record and isinstance(record["conversation"], Mapping):
            return conversation_from_locomo(record)
    except InvalidConversationError as exc:
        raise InvalidConversationError(f"{where}: {exc}") from exc
    return _from_native(record, where)


def _from_native(record: Mapping[str, Any], where: str) -> Conversation:
    # The schema reads the times (timestamps.parse_timestamp: LoCoMo and LongMemEval forms too).
    try:
        conv = Conversation.model_validate(record)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = error_location(error["loc"]) or "(record)"
        raise InvalidConversationError(f"{where}: {field}: {error_message(error)}") from exc
    return checked_conversation(conv, where)
