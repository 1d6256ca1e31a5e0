"""What ``ripplemem ingest`` reads, and its progress: a conversation file, or a ChatGPT or Claude export.

``--format auto`` (the default) takes a ZIP archive, or a JSON list of chats with ChatGPT's
``mapping`` or Claude's ``chat_messages``, for an export
(:mod:`~langchain_ripplemem.conversations.chat_exports`), and anything else for a conversation file
(:func:`~langchain_ripplemem.conversations.files.load_conversations`). The progress bar counts turns
(an export's: messages) and the conversations (chats) done, and moves while each is embedded.
"""

from __future__ import annotations

import argparse
from types import TracebackType
from typing import Any

from langchain_ripplemem.cli.support import emit, warn
from langchain_ripplemem.conversations.chat_exports import ChatExport, find_chat_export, read_chat_export
from langchain_ripplemem.conversations.files import load_conversations
from langchain_ripplemem.schemas import Conversation

__all__ = ["FORMATS", "IngestProgress", "add_format_option", "read_ingest_file"]

#: ``--format`` values: detect, or say which.
FORMATS = ("auto", "conversations", "chatgpt", "claude")


def add_format_option(parser: argparse.ArgumentParser) -> None:
    """``--format``: what the file is (default: told by its shape)."""
    parser.add_argument("--format", choices=FORMATS, default="auto",
                        help="conversations (the package's JSON/JSONL, LoCoMo, LongMemEval), chatgpt or claude "
                        "(a data export: conversations.json or its .zip); default: %(default)s, told by the shape")


def read_ingest_file(args: argparse.Namespace) -> tuple[list[Conversation], ChatExport | None]:
    """The conversations of ``args.file`` and, for an export, what was read of it.

    An export's malformed chats are named on stderr (they are skipped; the rest is read), and
    its summary (chats, messages kept, messages left out and why) is printed.

    Raises:
        InvalidConversationError: the file cannot be read as the format says (nothing is written).
    """
    if args.format == "conversations":
        export = None
    elif args.format == "auto":
        export = find_chat_export(args.file)
    else:
        export = read_chat_export(args.file, args.format)
    if export is None:
        return load_conversations(args.file), None
    for skipped in export.skipped:
        warn(f"warning: {skipped}; skipped")
    emit(export.summary())
    return export.conversations, export


class IngestProgress:
    """A progress bar over the turns of ``conversations``, with the conversations done beside it.

    Use as a context manager; :meth:`on_embedded` moves the bar through a conversation as its
    memories are embedded, :meth:`done` past it.
    """

    def __init__(self, conversations: list[Conversation], *, chats: bool, quiet: bool) -> None:
        from tqdm.auto import tqdm

        self.total = len(conversations)
        self.noun = "chat" if chats else "conversation"
        self.finished = 0
        self.start = self.turns = 0
        self.bar: Any = tqdm(total=sum(len(s.turns) for c in conversations for s in c.sessions), desc="ingest",
                             unit="message" if chats else "turn", disable=quiet)

    def __enter__(self) -> IngestProgress:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.bar.close()

    def begin(self, conversation: Conversation) -> None:
        """``conversation`` is being added next."""
        self.start, self.turns = self.bar.n, sum(len(s.turns) for s in conversation.sessions)

    def on_embedded(self, done: int, total: int) -> None:
        """Embedding the conversation's memories: ``done`` of ``total``."""
        self._to(self.start + (self.turns * done // total if total else 0))

    def done(self) -> None:
        """The conversation begun last is stored."""
        self.finished += 1
        self._to(self.start + self.turns)
        self.bar.set_postfix_str(f"{self.finished}/{self.total} {self.noun}s")

    def _to(self, position: int) -> None:
        if position > self.bar.n:
            self.bar.update(position - self.bar.n)
