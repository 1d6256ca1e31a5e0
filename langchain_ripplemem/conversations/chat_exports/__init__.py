"""Bring a history: the chats of a ChatGPT or Claude data export as conversations.

Both services send a ZIP archive whose ``conversations.json`` lists every chat; pass that
file or the archive itself. :func:`load_chatgpt_export` and :func:`load_claude_export`
return one :class:`~langchain_ripplemem.schemas.Conversation` per chat that has a message
with text (id: the chat's id, so importing again adds nothing), of one session named like
it, whose turns are the messages of the chat as it reads now (the branch of the last edit),
each with its own time; the person speaks as ``user``, the model as ``assistant``; the
chat's title is kept as ``conversation.title``. What each format keeps and leaves out:
:mod:`~langchain_ripplemem.conversations.chat_exports.chatgpt`,
:mod:`~langchain_ripplemem.conversations.chat_exports.claude`.

A chat that cannot be read is skipped with a :class:`~langchain_ripplemem.errors.MalformedChatWarning`
naming its position, title, id and the field; the rest is read. :func:`read_chat_export`
returns the whole account (:class:`ChatExport`: chats skipped, messages left out by reason),
and :func:`find_chat_export` tells an export from a conversation file (``ripplemem ingest``
detects the format so).

Example:
    >>> import json, tempfile, warnings
    >>> from pathlib import Path
    >>> chats = [{"uuid": "c1", "name": "Plants", "created_at": "2024-05-01T10:00:00Z", "chat_messages": [
    ...     {"uuid": "m1", "sender": "human", "created_at": "2024-05-01T10:00:01Z", "text": "My fern is dying."}]},
    ...     {"uuid": "c2", "name": "Broken", "chat_messages": "?"}]
    >>> path = Path(tempfile.mkdtemp()) / "conversations.json"
    >>> _ = path.write_text(json.dumps(chats))
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     conversations = load_claude_export(path)
    >>> [(c.id, c.title, [t.text for _, t in c.turns()]) for c in conversations]
    [('c1', 'Plants', ['My fern is dying.'])]
    >>> [type(w.message).__name__ for w in caught]
    ['MalformedChatWarning']
    >>> export = find_chat_export(path)
    >>> export.format, [str(chat) for chat in export.skipped]
    ('claude', ["chat [1] 'Broken' (id c2): chat_messages: expected a list, got str"])
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from langchain_ripplemem.conversations.chat_exports.chatgpt import chatgpt_chat
from langchain_ripplemem.conversations.chat_exports.claude import claude_chat
from langchain_ripplemem.conversations.chat_exports.export_reading import (
    ChatExport,
    ChatReader,
    SkippedChat,
    read_chats,
    read_export_json,
)
from langchain_ripplemem.errors import InvalidConversationError, MalformedChatWarning
from langchain_ripplemem.schemas import Conversation

__all__ = ["EXPORT_FORMATS", "ChatExport", "ExportFormat", "SkippedChat", "detect_export_format",
           "find_chat_export", "load_chatgpt_export", "load_claude_export", "read_chat_export"]

ExportFormat = Literal["chatgpt", "claude"]
#: The exports read, each with the field only its chats have.
EXPORT_FORMATS: dict[str, str] = {"chatgpt": "mapping", "claude": "chat_messages"}
_READERS: dict[str, ChatReader] = {"chatgpt": chatgpt_chat, "claude": claude_chat}


def load_chatgpt_export(path: str | Path) -> list[Conversation]:
    """The chats of a ChatGPT data export (``conversations.json`` or its ZIP archive), one conversation each.

    Malformed chats are skipped, each with a :class:`~langchain_ripplemem.errors.MalformedChatWarning`.

    Raises:
        InvalidConversationError: the file cannot be read or is no list of chats.
    """
    return _warned(read_chat_export(path, "chatgpt"))


def load_claude_export(path: str | Path) -> list[Conversation]:
    """The chats of a Claude data export (``conversations.json`` or its ZIP archive), one conversation each.

    Malformed chats are skipped, each with a :class:`~langchain_ripplemem.errors.MalformedChatWarning`.

    Raises:
        InvalidConversationError: the file cannot be read or is no list of chats.
    """
    return _warned(read_chat_export(path, "claude"))


def read_chat_export(path: str | Path, format: ExportFormat | Literal["auto"] = "auto") -> ChatExport:  # noqa: A002
    """Read an export: its conversations, the chats skipped and why, the messages left out.

    Args:
        path: ``conversations.json``, or the ZIP archive holding it.
        format: ``"chatgpt"``, ``"claude"``, or ``"auto"`` to tell by the chats' fields.

    Raises:
        InvalidConversationError: the file cannot be read, is no list of chats, is the other export, or
            (``"auto"``) is neither.
        ValueError: an unknown ``format``.
    """
    if format != "auto" and format not in _READERS:
        raise ValueError(f"format must be 'auto' or one of {sorted(_READERS)}, got {format!r}")
    data = read_export_json(path)
    found = detect_export_format(data)
    if found is None and format == "auto":
        raise InvalidConversationError(f"{path}: neither a ChatGPT export (chats with 'mapping') nor a Claude "
                                       "export (chats with 'chat_messages')")
    if found is not None and format not in ("auto", found):
        raise InvalidConversationError(f"{path}: a {found} export, not a {format} one (its chats have "
                                       f"{EXPORT_FORMATS[found]!r})")
    chosen = found or format
    return read_chats(data, str(path), chosen, _READERS[chosen])


def find_chat_export(path: str | Path) -> ChatExport | None:
    """The export at ``path``, or ``None`` when the file is not one (a conversation file, say).

    An archive is always taken for an export; a ``.json`` file when its chats have the fields
    of one (:func:`detect_export_format`); a JSON Lines or malformed file never is (reading
    it as conversations reports what is wrong).

    Raises:
        InvalidConversationError: an archive that holds no ``conversations.json``, or mixes
            ChatGPT and Claude chats.
    """
    path = Path(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return None
    try:
        data = read_export_json(path)
    except InvalidConversationError:
        if path.suffix.lower() == ".zip":
            raise
        return None
    chosen = detect_export_format(data)
    return read_chats(data, str(path), chosen, _READERS[chosen]) if chosen is not None else None


def detect_export_format(data: Any) -> ExportFormat | None:
    """``"chatgpt"`` or ``"claude"`` when the chats of ``data`` have that export's field, else ``None``.

    Raises:
        InvalidConversationError: chats of both exports in one list.

    Example:
        >>> detect_export_format([{"mapping": {}}]), detect_export_format([{"id": "c", "sessions": []}])
        ('chatgpt', None)
    """
    if not isinstance(data, list):
        return None
    found = [name for name, key in EXPORT_FORMATS.items()
             if any(isinstance(chat, Mapping) and key in chat for chat in data)]
    if len(found) > 1:
        raise InvalidConversationError("the file mixes ChatGPT chats ('mapping') and Claude chats "
                                       "('chat_messages'): import each export on its own")
    return found[0] if found else None  # type: ignore[return-value]


def _warned(export: ChatExport) -> list[Conversation]:
    for skipped in export.skipped:
        warnings.warn(MalformedChatWarning(f"{export.source}: {skipped}; skipped"), stacklevel=3)
    return export.conversations
