"""Claude's data export: ``conversations.json``, a list of chats with their messages in order.

A chat holds ``uuid``, ``name``, ``created_at`` (ISO 8601) and ``chat_messages``; a message
holds ``uuid``, ``sender`` (``human`` or ``assistant``), ``created_at``, its text as
``content`` blocks (``{"type": "text", "text": ...}``, beside ``thinking``, ``tool_use`` and
``tool_result`` blocks) or, in older exports, as ``text``, and the ``attachments`` and
``files`` sent with it. Where messages name their ``parent_message_uuid`` (an edited
message or a regenerated answer makes a branch), the chat as it reads now is the branch
ending at ``current_leaf_message_uuid`` (without it, at the last leaf); otherwise it is the
list in order. Along it a message is kept when

* ``sender`` is ``human`` (speaker ``user``) or ``assistant``;
* its text blocks have text (with ``content`` blocks, only they count; thinking, tool use
  and results are left out), else its ``text`` has. Attachments and files are not read: a
  message that is only a file or an image is left out.

Each kept message is a turn: id its ``uuid``, time its ``created_at``.

Example:
    >>> from collections import Counter
    >>> chat = {"uuid": "c1", "name": "Hi", "created_at": "2024-05-01T10:00:00Z", "chat_messages": [
    ...     {"uuid": "m1", "sender": "human", "created_at": "2024-05-01T10:00:01Z", "text": "I'm Ana."},
    ...     {"uuid": "m2", "sender": "assistant", "created_at": "2024-05-01T10:00:05Z", "content": [
    ...         {"type": "thinking", "thinking": "Greet her."}, {"type": "text", "text": "Hello Ana!"}]}]}
    >>> [(t.id, t.speaker, t.text) for _, t in claude_chat(chat, Counter()).turns()]
    [('m1', 'user', "I'm Ana."), ('m2', 'assistant', 'Hello Ana!')]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from langchain_ripplemem.conversations.chat_exports.export_reading import (
    NO_TEXT,
    OTHER_BRANCH,
    SYSTEM_OR_TOOL,
    chat_conversation,
    speaker_of,
    text_of,
)
from langchain_ripplemem.conversations.checks import time_field
from langchain_ripplemem.errors import InvalidConversationError
from langchain_ripplemem.schemas import Conversation, Turn

__all__ = ["claude_chat", "current_messages"]

_SENDERS = {"human": "user", "assistant": "assistant"}


def claude_chat(chat: Mapping[str, Any], left_out: Counter[str]) -> Conversation | None:
    """One chat of the export as a conversation (``None`` when none of its current messages has text).

    Raises:
        InvalidConversationError: naming the field that cannot be read (the chat is then skipped).
    """
    chat_id = chat.get("uuid")
    if not isinstance(chat_id, str) or not chat_id:
        raise InvalidConversationError("missing string field 'uuid'")
    title = chat.get("name") if isinstance(chat.get("name"), str) else None
    created = time_field(chat["created_at"], "created_at") if chat.get("created_at") is not None else None
    messages = chat.get("chat_messages")
    if not isinstance(messages, list):
        raise InvalidConversationError(f"chat_messages: expected a list, got {type(messages).__name__}")
    path = current_messages(messages, chat.get("current_leaf_message_uuid"))
    left_out[OTHER_BRANCH] += len(messages) - len(path)
    turns = []
    for position in path:
        turn = _turn(position, messages[position], left_out)
        if turn is not None:
            turns.append(turn)
    return chat_conversation(chat_id, title, created, turns, "claude")


def current_messages(messages: list[Any], leaf: Any = None) -> list[int]:
    """Positions of the messages of the chat as it reads now: the branch ending at ``leaf``, or all in order.

    The messages form a tree when one names another as its ``parent_message_uuid``; the
    branch then ends at ``leaf`` when it is a message, else at the last message no other
    names as its parent.

    Raises:
        InvalidConversationError: a message that is no object, two messages with one uuid, or a cycle.

    Example:
        >>> tree = [{"uuid": "a"}, {"uuid": "b", "parent_message_uuid": "a"},
        ...         {"uuid": "b2", "parent_message_uuid": "a"}, {"uuid": "c", "parent_message_uuid": "b"}]
        >>> current_messages(tree, "b2"), current_messages(tree), current_messages([{"uuid": "x"}, {"uuid": "y"}])
        ([0, 2], [0, 1, 3], [0, 1])
    """
    at: dict[str, int] = {}
    for position, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise InvalidConversationError(f"chat_messages[{position}]: expected an object, "
                                           f"got {type(message).__name__}")
        uuid = message.get("uuid")
        if isinstance(uuid, str) and uuid:
            if uuid in at:
                raise InvalidConversationError(f"chat_messages[{position}].uuid: {uuid!r} again "
                                               f"(first at chat_messages[{at[uuid]}])")
            at[uuid] = position
    parents = {parent for m in messages if isinstance(parent := m.get("parent_message_uuid"), str)} & at.keys()
    if not parents:  # no message answers another: the list is the chat
        return list(range(len(messages)))
    if not isinstance(leaf, str) or leaf not in at:
        leaf = next((uuid for uuid in reversed(at) if uuid not in parents), None)
        if leaf is None:  # every message is another's parent
            raise InvalidConversationError("chat_messages: the parents go round in a cycle")
    path: list[int] = []
    uuid = leaf
    while isinstance(uuid, str) and uuid in at:
        if len(path) == len(messages):
            raise InvalidConversationError(f"chat_messages: the parents of {leaf!r} go round in a cycle")
        path.append(at[uuid])
        uuid = messages[at[uuid]].get("parent_message_uuid")
    return path[::-1]


def _turn(position: int, message: Mapping[str, Any], left_out: Counter[str]) -> Turn | None:
    """A current message as a turn, or ``None`` (counted in ``left_out``: why)."""
    where = f"chat_messages[{position}]"
    sender = message.get("sender")
    role = _SENDERS.get(sender) if isinstance(sender, str) else None
    if role is None:
        left_out[SYSTEM_OR_TOOL] += 1
        return None
    content = message.get("content")
    if isinstance(content, list):
        blocks = []
        for b, block in enumerate(content):
            if not isinstance(block, Mapping):
                raise InvalidConversationError(f"{where}.content[{b}]: expected an object, "
                                               f"got {type(block).__name__}")
            if block.get("type") == "text":
                blocks.append(block.get("text"))
        text = text_of(blocks, f"{where}.content")
    else:
        text = text_of([message.get("text")], f"{where}.text")
    if not text:
        left_out[NO_TEXT] += 1
        return None
    uuid = message.get("uuid")
    stamp = message.get("created_at")
    return Turn(id=uuid if isinstance(uuid, str) and uuid else f"message-{position}", speaker=speaker_of(role),
                text=text, time=time_field(stamp, f"{where}.created_at") if stamp is not None else None)
