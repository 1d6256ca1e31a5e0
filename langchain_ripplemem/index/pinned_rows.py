"""What a pinned index shares with the namespace index that writers keep growing: its first ``n`` rows.

Writers append rows to a namespace index (:mod:`~langchain_ripplemem.index.namespace_index`)
while recalls read it. A recall reads a *pinned index*, the index as it was when the recall
started: its first ``n`` rows. The cue postings only grow (a delete builds a new index),
so a pinned index holds them as they are and bounds every read by ``n`` here
(:class:`PostingsBelow`), instead of copying every posting list of a namespace.

Example:
    >>> postings = {"maya": [0, 1]}
    >>> below = PostingsBelow(postings, 2)
    >>> postings["maya"].append(2); postings["new"] = [2]
    >>> list(below["maya"]), "new" in below, sorted(below)
    ([0, 1], False, ['maya'])
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Mapping, Sequence
from itertools import islice
from typing import Any, TypeVar, overload

__all__ = ["PostingsBelow", "Prefix", "row_of"]

_T = TypeVar("_T")


def row_of(i: int, n: int) -> int:
    """Index ``i`` of a sequence of ``n`` rows as a row (negative: from the end); ``IndexError`` outside.

    Example:
        >>> row_of(-1, 3), row_of(2, 3)
        (2, 2)
    """
    row = i + n if i < 0 else i
    if not 0 <= row < n:
        raise IndexError("row out of range")
    return row


class Prefix(Sequence[_T]):
    """The first ``k`` items of a list that writers append to (ids, keys per row, a posting list's rows)."""

    __slots__ = ("_items", "_k")

    def __init__(self, items: list[_T], k: int) -> None:
        self._items, self._k = items, k

    def __len__(self) -> int:
        return self._k

    @overload
    def __getitem__(self, i: int) -> _T: ...

    @overload
    def __getitem__(self, i: slice) -> list[_T]: ...

    def __getitem__(self, i: int | slice) -> _T | list[_T]:
        if isinstance(i, slice):
            return self._items[: self._k][i]
        return self._items[row_of(i, self._k)]

    def __iter__(self) -> Iterator[_T]:
        return islice(self._items, self._k)

    def __bool__(self) -> bool:
        return self._k > 0


class PostingsBelow(Mapping[Any, Prefix[int]]):
    """``value -> rows`` of one cue field, rows below ``n`` only; values first posted later are absent.

    Args:
        postings: the field's posting lists (each ascending; they only grow).
        n: how many rows are read.
    """

    __slots__ = ("_n", "_postings")

    def __init__(self, postings: Mapping[Any, list[int]], n: int) -> None:
        self._postings, self._n = postings, n

    def _prefix(self, value: Any) -> Prefix[int] | None:
        rows = dict.get(self._postings, value) if isinstance(self._postings, dict) else self._postings.get(value)
        if not rows or rows[0] >= self._n:  # a defaultdict is never grown by a read
            return None
        k = len(rows)
        return Prefix(rows, k if rows[k - 1] < self._n else bisect_left(rows, self._n, 0, k))

    def __getitem__(self, value: Any) -> Prefix[int]:
        found = self._prefix(value)
        if found is None:
            raise KeyError(value)
        return found

    def get(self, value: Any, default: Any = None) -> Any:  # type: ignore[override]
        """``value``'s rows below ``n``, if it has any; else ``default``."""
        found = self._prefix(value)
        return default if found is None else found

    def __contains__(self, value: object) -> bool:
        return self._prefix(value) is not None

    def __iter__(self) -> Iterator[Any]:
        return (value for value, rows in list(self._postings.items()) if rows and rows[0] < self._n)

    def __len__(self) -> int:
        return sum(1 for _ in self)
