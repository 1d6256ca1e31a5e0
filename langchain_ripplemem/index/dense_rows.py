"""The dense rows of a namespace index: one unit vector per row, and the cosines of the last few queries.

An exact cosine matrix: a few thousand 384-d vectors is one small matrix product,
faster and exact compared with a filtered HNSW query. The matrix grows by
doubling; rows past the namespace's published count are never read.

Example:
    >>> import numpy as np
    >>> dense = DenseRows()
    >>> dense.write(0, 2, np.eye(2, dtype=np.float32))
    >>> dense.cosines(np.array([1.0, 0.0]), 2).tolist(), DenseRows.from_state(dense.state(2)).rows(2).shape
    ([1.0, 0.0], (2, 2))
"""

from __future__ import annotations

import threading

import numpy as np

from langchain_ripplemem._runtime.blas import product

__all__ = ["DenseRows"]

# Queries whose cosines are kept (DenseRows.cosines): one recall's query and target.
_COSINES_KEPT = 4


class DenseRows:
    """A growable ``(rows, dim)`` float32 matrix of unit vectors, with the cosines of recent queries.

    Args:
        dim: the vectors' width, if known (the first :meth:`write` sets it otherwise).
    """

    def __init__(self, dim: int | None = None) -> None:
        self._matrix = np.zeros((0, dim or 0), dtype=np.float32)
        # (query vector bytes, rows) -> cosines: one recall asks several times for the same query.
        self._cosines: dict[tuple[bytes, int], np.ndarray] = {}
        self._cosines_lock = threading.Lock()

    @property
    def width(self) -> int:
        """The vectors' width (0 before the first write)."""
        return int(self._matrix.shape[1])

    @property
    def nbytes(self) -> int:
        """Bytes of the matrix as allocated (its room to grow included)."""
        return int(self._matrix.nbytes)

    def rows(self, n: int) -> np.ndarray:
        """The first ``n`` rows (a slice of the matrix, no copy)."""
        return self._matrix[:n]

    def write(self, start: int, stop: int, vectors: np.ndarray) -> None:
        """Put ``vectors`` in rows ``start:stop``, growing the matrix (rows before ``start`` are kept)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if self._matrix.shape[1] != vectors.shape[1] or stop > self._matrix.shape[0]:
            grown = np.zeros((max(stop, 2 * self._matrix.shape[0], 64), vectors.shape[1]), dtype=np.float32)
            if self._matrix.shape[1] == vectors.shape[1]:
                grown[:start] = self._matrix[:start]
            self._matrix = grown
        self._matrix[start:stop] = vectors

    def cosines(self, query: np.ndarray, n: int) -> np.ndarray:
        """Cosine of each of the first ``n`` rows with a unit query vector (read-only; the last few are kept).

        Tri-view recall, assembly and expansion ask for the same query's scores: one
        pass over the matrix serves them all, with the values a fresh product gives.
        """
        query = np.asarray(query, dtype=np.float32)
        matrix = self.rows(n)
        if len(matrix) == 0:  # no vectors yet, nor their width
            return np.zeros(0, dtype=np.float32)
        key = (query.tobytes(), len(matrix))
        scores = self._cosines.get(key)
        if scores is None:
            scores = product(matrix, query)
            scores.flags.writeable = False
            with self._cosines_lock:
                while len(self._cosines) >= _COSINES_KEPT:
                    self._cosines.pop(next(iter(self._cosines)))
                self._cosines[key] = scores
        return scores

    def state(self, n: int) -> np.ndarray:
        """The first ``n`` rows as one contiguous float32 array (a snapshot writes its bytes)."""
        return np.ascontiguousarray(self.rows(n), dtype=np.float32)

    @classmethod
    def from_state(cls, matrix: np.ndarray) -> DenseRows:
        """Rows over ``matrix`` as it is (a memory-mapped snapshot's: copied only when a write grows it)."""
        dense = cls(matrix.shape[1])
        dense._matrix = matrix
        return dense
