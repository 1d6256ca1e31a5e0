"""Split a conversation into overlapping windows of consecutive turns, and an overlong turn into chunks.

Windows follow the conversation's turn order and may span sessions: the
paper windows the dialogue stream, not each session. Every item keeps its
:class:`~langchain_ripplemem.schemas.Session`, so an extractor still knows
each turn's session id and timestamp.

Example:
    >>> from langchain_ripplemem.schemas import Conversation, Session, Turn
    >>> conv = Conversation(id="c", sessions=[
    ...     Session(id="S1", turns=[Turn(id=f"t{i}", speaker="A", text="hi") for i in range(5)])])
    >>> [w.turn_ids for w in make_windows(conv, size=3, overlap=1)]
    [['t0', 't1', 't2'], ['t2', 't3', 't4']]

"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from langchain_ripplemem.schemas import Conversation
from langchain_ripplemem.write.extraction.extractor import Window

__all__ = ["make_windows", "split_text"]

_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


def make_windows(conversation: Conversation, size: int, overlap: int = 0) -> list[Window]:
    """Cut ``conversation`` into windows of ``size`` turns sharing ``overlap`` turns.

    Each window starts ``size - overlap`` turns after the previous one. The
    last window ends at the last turn; a final window is not emitted when it
    would hold only turns the previous window already covered.

    Args:
        conversation: the conversation to split (sessions in order).
        size: turns per window, at least 1.
        overlap: turns shared by consecutive windows, ``0 <= overlap < size``.

    Returns:
        The windows, indexed from 0; empty when the conversation has no turns.

    Raises:
        ValueError: naming ``size`` or ``overlap`` when it is out of range.

    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"make_windows: size must be an integer >= 1, got {size!r}")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or overlap < 0:
        raise ValueError(f"make_windows: overlap must be an integer >= 0, got {overlap!r}")
    if overlap >= size:
        raise ValueError(
            f"make_windows: overlap ({overlap}) must be smaller than size ({size}), "
            "otherwise windows never advance"
        )
    items = conversation.turns()
    step = size - overlap
    windows: list[Window] = []
    start = 0
    while start < len(items):
        chunk = tuple(items[start:start + size])
        windows.append(Window(conversation_id=conversation.id, index=len(windows), items=chunk))
        if start + size >= len(items):
            break
        start += step
    return windows


def with_progress(windows: list[Window], enabled: bool, label: str) -> Iterable[Window]:
    """``windows``, with a tqdm progress bar when ``enabled`` (tqdm is imported only then)."""
    if not enabled:
        return windows
    from tqdm.auto import tqdm

    wrap: Callable[..., Iterable[Window]] = tqdm
    return wrap(windows, desc=f"ingest {label}", unit="window", leave=False)


def split_text(text: str, limit: int) -> list[str]:
    """Split ``text`` into chunks of at most ``limit`` characters at sentence boundaries.

    Example:
        >>> split_text("One. Two. Three.", 9)
        ['One. Two.', 'Three.']

    """
    if len(text) <= limit:
        return [text]
    chunks: list[str] = []
    parts: list[str] = []  # the sentences of the chunk being filled
    size = 0  # its length, with one space between sentences
    # Positions, not repeated slicing: linear in the text, however long a sentence is.
    for sentence in _SENTENCES.split(text):
        sentence = sentence.strip()
        start = 0
        while len(sentence) - start > limit:  # one sentence longer than the limit: cut at a space
            cut = sentence.rfind(" ", start, start + limit + 1)
            cut = cut if cut > start else start + limit
            if parts:
                chunks.append(" ".join(parts))
                parts, size = [], 0
            chunks.append(sentence[start:cut].strip())
            start = cut
            while start < len(sentence) and sentence[start].isspace():
                start += 1
        piece = sentence[start:]
        if not piece:
            continue
        if parts and size + 1 + len(piece) > limit:
            chunks.append(" ".join(parts))
            parts, size = [], 0
        size += len(piece) + (1 if parts else 0)
        parts.append(piece)
    if parts:
        chunks.append(" ".join(parts))
    return [c for c in chunks if c]
