"""Per namespace, what readers get while a write of it runs: what was there before the outermost write began.

The namespace index (:mod:`~langchain_ripplemem.index.unit_index`) and the edge cache
(:mod:`~langchain_ripplemem.edges.edge_cache`) each hold one, so no reader sees a write half done.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

__all__ = ["HeldDuringWrites"]

_T = TypeVar("_T")


class HeldDuringWrites(Generic[_T]):
    """Per namespace, what readers get while a write of it runs: what was there before the outermost write began.

    Writes of one namespace take turns, and a write may open another inside it (the
    same thread): the thing is taken when the outermost block opens and let go when it
    closes.

    Example:
        >>> held, lock = HeldDuringWrites(), threading.RLock()
        >>> with held.holding("ns", lock, lambda: "before"):
        ...     with held.holding("ns", lock, lambda: "never taken"):
        ...         inside = held.get("ns")
        >>> inside, held.get("ns")
        ('before', None)
    """

    def __init__(self) -> None:
        self._held: dict[str, tuple[int, _T]] = {}

    def get(self, key: str) -> _T | None:
        """What readers of ``key`` get while a write runs; ``None`` when none does."""
        found = self._held.get(key)
        return None if found is None else found[1]

    @contextmanager
    def holding(self, key: str, lock: threading.RLock, take: Callable[[], _T]) -> Iterator[None]:
        """Hold ``take()`` (called under ``lock`` by the outermost block) for ``key``'s readers until the block ends."""
        with lock:
            depth, thing = self._held[key] if key in self._held else (0, take())
            self._held[key] = (depth + 1, thing)
        try:
            yield
        finally:
            with lock:
                depth, thing = self._held.pop(key)
                if depth > 1:
                    self._held[key] = (depth - 1, thing)
