r"""Conversations from files: JSON (one object or a list) or JSONL (``.jsonl``/``.ndjson``, one object a line).

Each object is in the package's own form (``{"id", "sessions": [{"id", "time", "turns": [...]}]}``).
Every problem raises :class:`~langchain_ripplemem.errors.InvalidConversationError` naming the file,
the line or record, and the field path (``sessions[2].turns[5].text``).

Example:
    >>> import json, pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "chats.jsonl"
    >>> _ = path.write_text(json.dumps({"id": "c1", "sessions": [{"id": "S1", "time": "2026-03-02", "turns": [
    ...     {"id": "t1", "speaker": "Maya", "text": "I adopted a beagle."}]}]}) + "\n", encoding="utf-8")
    >>> [c.id for c in load_conversations(path)]
    ['c1']

"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from langchain_ripplemem.conversations.checks import checked_conversation, error_location, error_message
from langchain_ripplemem.errors import InvalidConversationError
from langchain_ripplemem.schemas import Conversation

__all__ = ["conversation_from_json", "load_conversations"]


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
    """A conversation of the package's form, every error prefixed with ``where``."""
    if not isinstance(record, Mapping):
        raise InvalidConversationError(
            f"{where}: expected a conversation object, got {type(record).__name__}")
    return _from_native(record, where)


def _from_native(record: Mapping[str, Any], where: str) -> Conversation:
    # The schema reads the times (timestamps.parse_timestamp: LoCoMo's and LongMemEval's forms too).
    try:
        conv = Conversation.model_validate(record)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = error_location(error["loc"]) or "(record)"
        raise InvalidConversationError(f"{where}: {field}: {error_message(error)}") from exc
    return checked_conversation(conv, where)
