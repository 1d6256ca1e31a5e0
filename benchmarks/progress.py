"""The benchmark's progress bar (turns, moving inside each memory's build) and its memory probe.

On LongMemEval one haystack is ~500 long turns and takes minutes to embed, so a
bar over conversations stands still for minutes. :class:`RunProgress` counts
the turns of the conversations left to run; while a memory is built it moves
with the embedding (``on_embedded``, the hook of ``RippleMem.add_conversation``),
so tqdm's rate is in turns per second and its ETA covers the whole run.

Example:
    >>> bar = RunProgress([("a", 100), ("b", 300)], enabled=False)
    >>> bar.start("a", "ingest"); bar.on_embedded(128, 256); bar.done_turns
    50
    >>> bar.finish(); bar.start("b", "ingest"); bar.done_turns
    100

"""

from __future__ import annotations

import ctypes
import gc
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["RunProgress", "heap_in_use_mb", "rss_mb"]


def rss_mb() -> float | None:
    """Resident memory of this process in MiB after a garbage collection (``None`` off Linux).

    Example:
        >>> value = rss_mb()
        >>> value is None or value > 0
        True

    """
    gc.collect()  # what is still resident, not what only waits for the collector
    status = Path("/proc/self/status")
    if not sys.platform.startswith("linux") or not status.is_file():
        return None
    for line in status.read_text(encoding="ascii", errors="replace").splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return None


class _MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (glibc 2.33+), every field a ``size_t``."""

    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                      "fsmblks", "uordblks", "fordblks", "keepcost")]


def heap_in_use_mb(*, collect: bool = True) -> float | None:
    """Bytes the C allocator has handed out and not had back, in MiB (``None`` off glibc).

    RSS also counts memory freed but kept by glibc for reuse (its arenas seldom
    shrink), so a run whose live memory is flat can still grow in RSS; this is
    the live part of what goes through ``malloc`` (Python's objects over 512
    bytes, numpy arrays, sqlite, onnxruntime, Chroma's Rust side). Python's
    small objects sit in its own arenas and are not counted here.

    Args:
        collect: run a garbage collection first; ``False`` right after :func:`rss_mb`, which ran one.

    Example:
        >>> value = heap_in_use_mb()
        >>> value is None or value > 0
        True

    """
    if collect:
        gc.collect()
    try:
        mallinfo2 = ctypes.CDLL(None).mallinfo2
    except (AttributeError, OSError):  # not glibc, or older than 2.33
        return None
    mallinfo2.restype = _MallInfo2
    info = mallinfo2()
    return round((info.uordblks + info.hblkhd) / 2**20, 1)


class RunProgress:
    """A tqdm bar over the turns of ``conversations`` (``(id, turns)`` pairs still to run).

    Args:
        conversations: the conversations to run, in order, with their turn counts.
        enabled: show the bar (tqdm is imported only then); the counts are kept either way.

    """

    def __init__(self, conversations: Sequence[tuple[str, int]], enabled: bool = True) -> None:
        self.turns = dict(conversations)
        self.done_turns = 0
        self._finished = 0
        self._current: tuple[str, int] = ("", 0)
        self._moved = 0  # turns of the current conversation already on the bar
        self.bar: Any = None
        if enabled:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=sum(self.turns.values()), desc="turns", unit="turn", dynamic_ncols=True)

    def start(self, conversation_id: str, phase: str) -> None:
        """A conversation's build begins (``phase`` names it in the bar)."""
        self._current, self._moved = (conversation_id, self.turns.get(conversation_id, 0)), 0
        self.phase(phase)

    def phase(self, phase: str) -> None:
        """Show what the current conversation is doing."""
        if self.bar is not None:
            self.bar.set_postfix_str(f"conversation {self._finished + 1}/{len(self.turns)} "
                                     f"{self._current[0]}: {phase}", refresh=False)

    def on_embedded(self, done: int, total: int) -> None:
        """Embedding progress of the current build: move its turns by the same share."""
        self._advance(self._current[1] * done // max(total, 1))

    def finish(self) -> None:
        """The current conversation is scored: all its turns are done."""
        self._advance(self._current[1])
        self._finished += 1

    def close(self) -> None:
        """Close the bar."""
        if self.bar is not None:
            self.bar.close()

    def _advance(self, moved: int) -> None:
        step = moved - self._moved
        if step > 0:
            self._moved = moved
            self.done_turns += step
            if self.bar is not None:
                self.bar.update(step)
