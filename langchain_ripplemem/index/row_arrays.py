"""Row arrays of a namespace index: growable buffers, the distinct rows of posting lists, top indices.

Example:
    >>> import numpy as np
    >>> distinct_rows([np.array([3, 1]), np.array([1, 2])], 4).tolist()
    [1, 2, 3]
    >>> top_indices(np.array([0.5, 2.0, 0.5]), 2)
    [1, 0]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["distinct_rows", "extended", "top_indices"]

_NO_ROWS = np.zeros(0, dtype=np.int64)


def distinct_rows(arrays: Sequence[np.ndarray], n: int) -> np.ndarray:
    """The distinct rows of some posting arrays, ascending (``np.unique`` of their concatenation).

    A speaker's postings hold about half the rows: marking them in a row mask is linear,
    where sorting them for ``np.unique`` took about 1 ms a cue-view query at 100k rows.
    """
    if not arrays:
        return _NO_ROWS
    total = sum(len(a) for a in arrays)
    if total * 16 < n:  # a few short postings: sorting them is cheaper than a pass over every row
        return np.unique(np.concatenate(arrays))
    top = max((int(rows.max()) for rows in arrays if len(rows)), default=-1)  # a grown index's rows past n
    mask = np.zeros(max(n, top + 1), dtype=bool)
    for rows in arrays:
        mask[rows] = True
    return np.flatnonzero(mask)


def extended(cached: tuple[int, np.ndarray] | None, items: Sequence[object], n: int, dtype: type,
             width: int | None = None) -> tuple[int, np.ndarray]:
    """``(n, buffer)``: ``items[:n]`` in the first ``n`` rows of a buffer with room to grow.

    Only the items past ``cached``'s count are converted (the lists only grow), so a
    recall right after a write does not convert a namespace's rows again. Rows
    already filled are never written again: a reader holding the older pair still
    reads what it read.
    """
    filled, buffer = cached if cached is not None else (0, None)
    tail = () if width is None else (width,)
    if buffer is None or len(buffer) < n:
        grown = np.empty((max(n, 2 * filled, 16), *tail), dtype=dtype)
        if buffer is not None:
            grown[:filled] = buffer[:filled]
        buffer = grown
    buffer[filled:n] = np.asarray(items[filled:n], dtype=dtype).reshape(n - filled, *tail)
    return n, buffer


def top_indices(scores: np.ndarray, k: int) -> list[int]:
    """The rows of the ``k`` highest scores, best first, ties by row."""
    k = min(k, len(scores))
    part = np.argpartition(-scores, k - 1)[:k]
    # Stable tie-break by row (insertion order) keeps results deterministic.
    return sorted(part.tolist(), key=lambda i: (-float(scores[i]), i))
