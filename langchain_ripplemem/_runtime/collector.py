"""Recall holds Python's cyclic garbage collector off while it runs.

A recall allocates thousands of short-lived containers (LangGraph's state, the
evidence, parsed memories). With the collector on, its young collections run in
the middle of that work and move whatever is alive at that moment toward the
oldest generation; every so many such moves the collector walks every object of
the process (a full collection). Held off during the recall, the short-lived
objects are freed by reference counting before the collector looks. On the scale
benchmark's 50k-memory namespace, with the flat caches of
``edges/adjacency.py`` too, the collector took 0.68 and 1.27 ms a recall
(paper, tuned settings) against 2.07 and 4.92 before, and its young collections
fell from 188-206 to 17-33 per 100 recalls (``benchmarks/scale/gc_pauses.py``;
docs/scale.md, "Garbage collection"). Ingest is not paused: a long write would
hold the collector off for its whole length, and no gain showed there.

The collector is one per process, so a pause is too:

* overlapping pauses (threads recalling at once) share one; the collector
  comes back when the last ends, or :data:`MAX_PAUSE_SECONDS` after the first
  began, whichever is first (a pause ends or begins: the clock is checked then),
  so a busy server never runs long without it;
* a collector the application turned off stays off;
* :func:`set_enabled` (or ``RIPPLEMEM_GC_PAUSE=0`` in the environment) turns
  pausing off for the process, e.g. for an application that tunes the collector itself.

Cycles made during a pause are collected after it, by the next collection.

Example:
    >>> import gc
    >>> with collector_paused():
    ...     gc.isenabled()
    False
    >>> gc.isenabled()
    True
"""

from __future__ import annotations

import functools
import gc
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

__all__ = ["MAX_PAUSE_SECONDS", "collector_paused", "flat_pairs", "pairs", "paused", "set_enabled"]

# Longest the collector stays off while pauses overlap (see the module docs).
MAX_PAUSE_SECONDS = 1.0

_P = ParamSpec("_P")
_R = TypeVar("_R")


class _Pause:
    """The process's pause: how many hold it, since when, and whether it turned the collector off."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.enabled = os.environ.get("RIPPLEMEM_GC_PAUSE", "1").strip().lower() not in ("0", "false", "no", "off")
        self.holders = 0
        self.since = 0.0
        self.turned_off = False  # this pause disabled the collector (and must enable it again)

    def enter(self) -> None:
        with self.lock:
            if self.holders == 0 and self.enabled and gc.isenabled():
                gc.disable()
                self.turned_off, self.since = True, time.monotonic()
            self.holders += 1
            self._expire()

    def exit(self) -> None:
        with self.lock:
            self.holders -= 1
            if self.holders == 0:
                self._resume()
            else:
                self._expire()

    def _expire(self) -> None:
        if self.turned_off and time.monotonic() - self.since > MAX_PAUSE_SECONDS:
            self._resume()

    def _resume(self) -> None:
        if self.turned_off:
            self.turned_off = False
            gc.enable()


_PAUSE = _Pause()


def set_enabled(enabled: bool) -> None:
    """Whether recall pauses the collector in this process (default: yes)."""
    with _PAUSE.lock:
        _PAUSE.enabled = bool(enabled)


@contextmanager
def collector_paused(when: bool = True) -> Iterator[None]:
    """Hold the cyclic garbage collector off inside the block (see the module docs); ``when=False``: do nothing."""
    if not when:
        yield
        return
    _PAUSE.enter()
    try:
        yield
    finally:
        _PAUSE.exit()


def paused(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """``func`` run inside :func:`collector_paused` (a recall graph's node, say)."""

    @functools.wraps(func)
    def run(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with collector_paused():
            return func(*args, **kwargs)

    return run


def flat_pairs(items: Iterable[tuple[Any, Any]]) -> tuple[Any, ...]:
    """``[(a, b), (c, d)]`` as ``(a, b, c, d)``: for caches that outlive a recall.

    One tuple of strings and numbers leaves the collector's lists at its first pass; a
    list of pairs, or a tuple of pairs, may stay in them for several (collections reorder
    their lists, and a tuple is let go only once its items are).

    Example:
        >>> flat = flat_pairs([("a", 0.5), ("b", 0.25)])
        >>> flat, pairs(flat)
        (('a', 0.5, 'b', 0.25), [('a', 0.5), ('b', 0.25)])
    """
    return tuple(x for pair in items for x in pair)


def pairs(flat: tuple[Any, ...]) -> list[tuple[Any, Any]]:
    """The pairs :func:`flat_pairs` flattened, in order."""
    return list(zip(flat[::2], flat[1::2], strict=True))
