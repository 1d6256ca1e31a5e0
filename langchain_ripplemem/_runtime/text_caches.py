"""The process-wide memo caches of text work, each registered where it is defined.

A cache belongs to no namespace, so no cache bound covers it; a caller that wants every
build to start alike (a benchmark building hundreds of memories) empties them all at once
through :func:`clear`. Registering at the definition keeps this module at the bottom:
it names no module that holds a cache.

Example:
    >>> from functools import lru_cache
    >>> @text_cache
    ... @lru_cache(maxsize=8)
    ... def double(text: str) -> str:
    ...     return text * 2
    >>> _ = double("a"); clear(); double.cache_info().currsize
    0
"""

from __future__ import annotations

from typing import Protocol, TypeVar

__all__ = ["clear", "text_cache"]


class _Clearable(Protocol):
    def cache_clear(self) -> None: ...


C = TypeVar("C", bound=_Clearable)
_CACHES: list[_Clearable] = []


def text_cache(cached: C) -> C:
    """Register ``cached`` (an ``lru_cache`` wrapper) with :func:`clear`; returns it unchanged."""
    _CACHES.append(cached)
    return cached


def clear() -> None:
    """Empty every registered cache."""
    for cached in _CACHES:
        cached.cache_clear()
