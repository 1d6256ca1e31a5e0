"""ChatGPT's data export: ``conversations.json``, a list of chats, each a tree of messages.

A chat holds ``id`` (or ``conversation_id``), ``title``, ``create_time`` (seconds since
1970, as a float) and ``mapping``: node id -> ``{"message", "parent", "children"}``. Editing a
message or regenerating an answer adds a sibling node, so the tree keeps every version; the
chat as it reads now is the branch from the root to ``current_node`` (without it, to the
latest leaf). Along that branch a message is kept when

* ``author.role`` is ``user`` or ``assistant`` (``system`` and ``tool`` messages are left out,
  and so are an assistant's calls to a tool: ``recipient`` other than ``all``);
* it is not ``metadata.is_visually_hidden_from_conversation`` (custom instructions, context);
* its ``content.content_type`` is ``text`` or ``multimodal_text`` (``code``,
  ``execution_output``, ``tether_quote``, ``thoughts``, ``reasoning_recap`` and the like are
  left out), and its ``parts`` have text: the strings, and the ``text`` of part objects (an
  audio transcription); image pointers have none, so an image sent alone is left out.

Each kept message is a turn: id the node's, speaker ``user`` or ``assistant``, text its parts
joined by newlines, time its ``create_time`` (``null`` stays unknown: the chat's time stands in).

Example:
    >>> from collections import Counter
    >>> left_out = Counter()
    >>> chat = {"id": "c1", "title": "Hi", "create_time": 1714557600.0, "current_node": "b", "mapping": {
    ...     "r": {"message": None, "parent": None, "children": ["a"]},
    ...     "a": {"message": {"author": {"role": "user"}, "create_time": 1714557601.0,
    ...                       "content": {"content_type": "text", "parts": ["I'm Ana."]}},
    ...           "parent": "r", "children": ["b"]},
    ...     "b": {"message": {"author": {"role": "assistant"}, "create_time": None,
    ...                       "content": {"content_type": "text", "parts": ["Hello Ana!"]}},
    ...           "parent": "a", "children": []}}}
    >>> [(t.id, t.speaker, t.text) for _, t in chatgpt_chat(chat, left_out).turns()]
    [('a', 'user', "I'm Ana."), ('b', 'assistant', 'Hello Ana!')]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from langchain_ripplemem.conversations.chat_exports.export_reading import (
    HIDDEN,
    NO_TEXT,
    NOT_TEXT,
    OTHER_BRANCH,
    SYSTEM_OR_TOOL,
    chat_conversation,
    epoch_time,
    speaker_of,
    text_of,
)
from langchain_ripplemem.errors import InvalidConversationError
from langchain_ripplemem.schemas import Conversation, Turn

__all__ = ["branch", "chatgpt_chat"]

_SPOKEN = ("user", "assistant")
_TEXT_CONTENT = ("text", "multimodal_text")


def chatgpt_chat(chat: Mapping[str, Any], left_out: Counter[str]) -> Conversation | None:
    """One chat of the export as a conversation (``None`` when no message on its branch has text).

    Raises:
        InvalidConversationError: naming the field that cannot be read (the chat is then skipped).
    """
    chat_id = chat.get("conversation_id") or chat.get("id")
    if not isinstance(chat_id, str) or not chat_id:
        raise InvalidConversationError("missing string field 'id'")
    title = chat.get("title") if isinstance(chat.get("title"), str) else None
    created = epoch_time(chat.get("create_time"), "create_time")
    mapping = chat.get("mapping")
    if not isinstance(mapping, Mapping):
        raise InvalidConversationError(f"mapping: expected an object of nodes, got {type(mapping).__name__}")
    path = branch(mapping, chat.get("current_node"))
    on_path = {node_id for node_id, _ in path}
    left_out[OTHER_BRANCH] += sum(1 for node_id, node in mapping.items()
                                  if node_id not in on_path and _spoken(node))
    turns = []
    for node_id, node in path:
        turn = _turn(node_id, node.get("message"), left_out)
        if turn is not None:
            turns.append(turn)
    return chat_conversation(chat_id, title, created, turns, "chatgpt")


def branch(mapping: Mapping[str, Any], current: Any) -> list[tuple[str, Mapping[str, Any]]]:
    """The nodes from the root to ``current`` (default: the latest leaf), in order.

    Raises:
        InvalidConversationError: ``current`` or a parent that is not in ``mapping``, a node that is no
            object, or a cycle.

    Example:
        >>> tree = {"r": {"parent": None}, "a": {"parent": "r"}, "b": {"parent": "r"}, "c": {"parent": "b"}}
        >>> [node_id for node_id, _ in branch(tree, "c")], [node_id for node_id, _ in branch(tree, "a")]
        (['r', 'b', 'c'], ['r', 'a'])
    """
    if current is None:
        current = _latest_leaf(mapping)
    elif not isinstance(current, str) or current not in mapping:
        raise InvalidConversationError(f"current_node: {current!r} is not a node of mapping")
    path: list[tuple[str, Mapping[str, Any]]] = []
    node_id = current
    while node_id is not None:
        node = mapping.get(node_id)
        if not isinstance(node, Mapping):
            what = "missing" if node is None else f"a {type(node).__name__}, not an object"
            raise InvalidConversationError(f"mapping[{node_id!r}]: {what} (on the branch to {current!r})")
        if len(path) > len(mapping):
            raise InvalidConversationError(f"mapping: the parents of {current!r} go round in a cycle")
        path.append((node_id, node))
        node_id = node.get("parent")
        if node_id is not None and not isinstance(node_id, str):
            raise InvalidConversationError(f"mapping[{path[-1][0]!r}].parent: expected a node id, got {node_id!r}")
    return path[::-1]


def _latest_leaf(mapping: Mapping[str, Any]) -> str | None:
    """Without ``current_node``: the leaf whose message is the latest (the last of equals), else none."""
    parents = {parent for node in mapping.values() if isinstance(node, Mapping)
               and isinstance(parent := node.get("parent"), str)}
    leaves = [node_id for node_id in mapping if node_id not in parents]

    def sent(node_id: str) -> float:
        message = mapping[node_id].get("message") if isinstance(mapping[node_id], Mapping) else None
        when = message.get("create_time") if isinstance(message, Mapping) else None
        return when if isinstance(when, (int, float)) else float("-inf")

    return max(reversed(leaves), key=sent, default=None)


def _spoken(node: Any) -> bool:
    message = node.get("message") if isinstance(node, Mapping) else None
    author = message.get("author") if isinstance(message, Mapping) else None
    return isinstance(author, Mapping) and author.get("role") in _SPOKEN


def _turn(node_id: str, message: Any, left_out: Counter[str]) -> Turn | None:
    """The message of a node on the branch as a turn, or ``None`` (counted in ``left_out``: why)."""
    if message is None:  # the tree's root, or a placeholder
        return None
    where = f"mapping[{node_id!r}].message"
    if not isinstance(message, Mapping):
        raise InvalidConversationError(f"{where}: expected an object, got {type(message).__name__}")
    author = message.get("author")
    role = author.get("role") if isinstance(author, Mapping) else None
    if role not in _SPOKEN or (role == "assistant" and message.get("recipient", "all") not in ("all", None)):
        left_out[SYSTEM_OR_TOOL] += 1
        return None
    metadata = message.get("metadata")
    if isinstance(metadata, Mapping) and metadata.get("is_visually_hidden_from_conversation"):
        left_out[HIDDEN] += 1
        return None
    content = message.get("content")
    if not isinstance(content, Mapping):
        raise InvalidConversationError(f"{where}.content: expected an object, got {type(content).__name__}")
    if content.get("content_type", "text") not in _TEXT_CONTENT:
        left_out[NOT_TEXT] += 1
        return None
    parts = content.get("parts") or []
    if not isinstance(parts, list):
        raise InvalidConversationError(f"{where}.content.parts: expected a list, got {type(parts).__name__}")
    text = text_of(parts, f"{where}.content.parts")
    if not text:
        left_out[NO_TEXT] += 1
        return None
    return Turn(id=node_id, speaker=speaker_of(role), text=text,
                time=epoch_time(message.get("create_time"), f"{where}.create_time"))
