"""What the ChatGPT and Claude readers share: the file, a chat's times and turns, the record of what was left out.

A reader turns one chat of the export's list into a :class:`~langchain_ripplemem.schemas.Conversation`
(or ``None`` when no message of it has text) and counts each message it leaves out by
reason; a chat it cannot read raises :class:`~langchain_ripplemem.errors.InvalidConversationError`
naming the field, and :func:`read_chats` skips that chat (a :class:`SkippedChat`) and reads the rest.

Example:
    >>> from datetime import datetime, timezone
    >>> conv = chat_conversation("c-1", "Lunch", None, [
    ...     Turn(id="m1", speaker="user", text="I'm vegetarian.", time=datetime(2024, 5, 1, tzinfo=timezone.utc))],
    ...     "chatgpt")
    >>> conv.id, conv.title, conv.sessions[0].id, conv.sessions[0].time.isoformat()
    ('c-1', 'Lunch', 'c-1', '2024-05-01T00:00:00+00:00')
"""

from __future__ import annotations

import json
import zipfile
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from langchain_ripplemem.conversations.checks import checked_conversation
from langchain_ripplemem.errors import InvalidConversationError
from langchain_ripplemem.schemas import ASSISTANT_SPEAKER, Conversation, Session, Turn, counted

__all__ = ["EXPORT_FILE", "HIDDEN", "NOT_TEXT", "NO_TEXT", "OTHER_BRANCH", "SYSTEM_OR_TOOL", "USER_SPEAKER",
           "ChatExport", "ChatReader", "SkippedChat", "chat_conversation", "epoch_time", "read_chats",
           "read_export_json", "speaker_of", "text_of"]

#: The speaker of the person's own messages in an imported chat (the model's is ``"assistant"``).
USER_SPEAKER = "user"
#: The file both services put their chats in, at the top of the ZIP archive they send.
EXPORT_FILE = "conversations.json"

# Why a message is left out (ChatExport.left_out's keys).
SYSTEM_OR_TOOL = "of the system or a tool"
HIDDEN = "hidden (custom instructions, context)"
OTHER_BRANCH = "on other branches (edited or regenerated)"
NOT_TEXT = "of code, tool output or reasoning"
NO_TEXT = "without text (empty, or images and files alone)"

#: One chat of the export -> its conversation (``None``: no message with text), counting what it leaves out.
ChatReader = Callable[[Mapping[str, Any], Counter[str]], "Conversation | None"]


@dataclass(frozen=True)
class SkippedChat:
    """A chat of the export that could not be read, and why (it was skipped; the rest was read).

    Example:
        >>> str(SkippedChat(3, "abc", "Trip", "mapping: expected an object of nodes, got list"))
        "chat [3] 'Trip' (id abc): mapping: expected an object of nodes, got list"
    """

    position: int
    chat_id: str | None
    title: str | None
    reason: str

    def __str__(self) -> str:
        name = repr(self.title) if self.title else "(untitled)"
        ident = f" (id {self.chat_id})" if self.chat_id else ""
        return f"chat [{self.position}] {name}{ident}: {self.reason}"


@dataclass
class ChatExport:
    """An export read: one conversation per chat with text, the chats skipped, the messages left out.

    Attributes:
        format: ``"chatgpt"`` or ``"claude"``.
        source: the file read.
        chats: chats in the file.
        conversations: one per chat that has a message with text, in the file's order.
        skipped: chats that could not be read (malformed), each named.
        left_out: messages not remembered, by reason (system and tool messages, other branches, no text...).
    """

    format: str
    source: str
    chats: int = 0
    conversations: list[Conversation] = field(default_factory=list)
    skipped: list[SkippedChat] = field(default_factory=list)
    left_out: Counter[str] = field(default_factory=Counter)

    @property
    def messages(self) -> int:
        """Messages kept: each is a turn of its chat's conversation."""
        return sum(len(session.turns) for conv in self.conversations for session in conv.sessions)

    def summary(self) -> str:
        """One line: chats read, the conversations and messages kept, what was left out.

        Example:
            >>> export = ChatExport("claude", "conversations.json", chats=3, left_out=Counter({NO_TEXT: 2}))
            >>> export.summary()
            'claude export conversations.json: 3 chats -> 0 conversations, 0 messages (3 chats without text); \
left out: 2 messages without text (empty, or images and files alone)'
        """
        without = self.chats - len(self.conversations) - len(self.skipped)
        notes = [f"{counted(without, 'chat')} without text"] if without else []
        notes += [f"{len(self.skipped)} malformed, skipped"] if self.skipped else []
        line = (f"{self.format} export {self.source}: {counted(self.chats, 'chat')} -> "
                f"{counted(len(self.conversations), 'conversation')}, {counted(self.messages, 'message')}"
                + (f" ({', '.join(notes)})" if notes else ""))
        if self.left_out:
            line += "; left out: " + ", ".join(f"{counted(n, 'message')} {why}"
                                               for why, n in self.left_out.most_common())
        return line


def read_chats(data: Any, source: str, format: str, read: ChatReader) -> ChatExport:  # noqa: A002 - the CLI's word
    """Every chat of ``data`` (the export's list) through ``read``; a chat that fails is skipped and named.

    Raises:
        InvalidConversationError: ``data`` is no list (a chat that cannot be read, or whose id an
            earlier chat has, is skipped instead).
    """
    if not isinstance(data, list):
        raise InvalidConversationError(
            f"{source}: a {format} export is a list of chats, got {type(data).__name__}")
    export = ChatExport(format=format, source=source, chats=len(data))
    first: dict[str, int] = {}
    for position, chat in enumerate(data):
        left_out: Counter[str] = Counter()  # the chat's own: a chat skipped leaves nothing out
        try:
            if not isinstance(chat, Mapping):
                raise InvalidConversationError(f"expected a chat object, got {type(chat).__name__}")
            conv = read(chat, left_out)
        except (InvalidConversationError, ValueError, TypeError) as err:  # a field of a shape no reader expects
            export.skipped.append(_skipped(position, chat, str(err)))
            continue
        if conv is not None and conv.id in first:
            export.skipped.append(_skipped(position, chat, f"the id of chat [{first[conv.id]}] again"))
            continue
        export.left_out.update(left_out)
        if conv is not None:
            first[conv.id] = position
            export.conversations.append(conv)
    return export


def _skipped(position: int, chat: Any, reason: str) -> SkippedChat:
    def named(*keys: str) -> str | None:
        values = [chat.get(k) for k in keys] if isinstance(chat, Mapping) else []
        return next((v for v in values if isinstance(v, str) and v), None)

    return SkippedChat(position, named("conversation_id", "id", "uuid"), named("title", "name"), reason)


def chat_conversation(chat_id: str, title: str | None, created: datetime | None, turns: list[Turn],
                      source: str) -> Conversation | None:
    """One chat as a conversation of one session (both named by the chat's id); ``None`` without turns.

    The session's time is the chat's creation, else its first message's; each turn keeps its own.
    """
    if not turns:
        return None
    when = created or next((turn.time for turn in turns if turn.time is not None), None)
    conv = Conversation(id=chat_id, sessions=[Session(id=chat_id, time=when, turns=turns)], title=title,
                        source=source)
    return checked_conversation(conv, f"chat {chat_id!r}")


def speaker_of(role: str) -> str:
    """``"user"`` for the person, ``"assistant"`` for the model (``role`` is one of the two)."""
    return USER_SPEAKER if role == USER_SPEAKER else ASSISTANT_SPEAKER


def text_of(parts: list[Any], where: str) -> str:
    """The text of a message's parts: its strings, and the ``text`` of part objects (image pointers have none).

    Example:
        >>> print(text_of(["Look:", {"content_type": "image_asset_pointer"}, {"text": "a cat"}, ""], "parts"))
        Look:
        a cat
    """
    texts = []
    for part in parts:
        if isinstance(part, Mapping):
            part = part.get("text")
        if isinstance(part, str) and part.strip():
            texts.append(part.strip())
        elif part is not None and not isinstance(part, str):
            raise InvalidConversationError(f"{where}: expected text, got {type(part).__name__}")
    return "\n".join(texts)


def epoch_time(value: Any, where: str) -> datetime | None:
    """A ChatGPT time: seconds since 1970 (UTC), as the export writes them; ``None`` stays ``None``.

    Example:
        >>> epoch_time(1714557600.25, "create_time").isoformat()
        '2024-05-01T10:00:00.250000+00:00'
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidConversationError(f"{where}: expected seconds since 1970, got {value!r}")
    try:
        return datetime.fromtimestamp(value, tz=timezone.utc)
    except (OverflowError, OSError, ValueError) as err:
        raise InvalidConversationError(f"{where}: {value!r} is no time ({err})") from None


def read_export_json(path: str | Path) -> Any:
    """The parsed ``conversations.json``: the file itself, or the one in the export's ZIP archive.

    Raises:
        InvalidConversationError: naming the file for a missing or unreadable file, an archive
            without ``conversations.json``, bytes that are not UTF-8 and malformed JSON.
    """
    path = Path(path)
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                names = sorted((n for n in archive.namelist() if Path(n).name == EXPORT_FILE),
                               key=lambda n: n.count("/"))
                if not names:
                    raise InvalidConversationError(f"{path}: the archive holds no {EXPORT_FILE}")
                raw, where = archive.read(names[0]), f"{path}: {names[0]}"
        else:
            raw, where = path.read_bytes(), str(path)
    except (OSError, zipfile.BadZipFile) as err:
        raise InvalidConversationError(f"{path}: cannot read file ({err})") from err
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as err:
        raise InvalidConversationError(f"{where}: not UTF-8 (byte offset {err.start})") from err
    except json.JSONDecodeError as err:
        raise InvalidConversationError(
            f"{where}: line {err.lineno} column {err.colno}: malformed JSON: {err.msg}") from err
