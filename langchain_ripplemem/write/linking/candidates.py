"""Which earlier units can be a new unit's semantic edges, and their cosines scored one row at a time.

Under ``"cues"`` structural edges (the default) a new unit's semantic pool matters
only through its ``keep`` best rows whose cosine reaches ``semantic_threshold``
(``keep``: the semantic edges a unit keeps): the others never make an edge.
:func:`leading` returns, per row of a block of new rows, a superset of those rows;
:func:`similarities` then scores what is kept exactly, each row reduced on its own,
so a unit's scores do not depend on which other rows were scored with it: linking a
batch gives the edges linking one unit at a time gives, in any process.

Below ``PROJECTED_FROM`` earlier rows, :func:`above` takes one product of the block
with the rows before it and keeps the rows over the threshold (less a margin for
rounding). From there that product is linear in the namespace (12 ms a 20-unit
write at 50k rows, docs/scale.md "Ingest"), so :func:`leading` bounds each cosine
instead from the rows' coordinates on the namespace's ``DIMENSIONS`` leading
directions (:class:`Projection`, kept per namespace index and grown with it): for any two rows,
``q . x = (Pq) . (Px) + q' . x'`` with ``|q' . x'| <= |q'| |x'|`` (Cauchy-Schwarz on
what the directions leave). A row is dropped only when its upper bound is under the
threshold, or under the lower bounds of ``keep`` other rows (then those rows are
closer whatever the exact values): the rows that can make edges all stay, and the
edges are exactly those of the full product. The rows left are scored with one
product each and cut the same way (with a rounding margin), so :func:`similarities`
scores a handful. The bound with the threshold alone (tried before) kept too many
rows: 3.8 % per new unit on the scale benchmark's dialogue, which has about 90
earlier rows over the threshold per unit at 40k rows; with the ``keep``-th lower
bound 0.8 % are left at 50k (400 rows), and 6 after their products.

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> m = rng.standard_normal((6, 8)).astype(np.float32)
    >>> m /= np.linalg.norm(m, axis=1, keepdims=True)
    >>> bool(np.allclose(similarities(m, [0, 2], m[1]), m[[0, 2]] @ m[1]))
    True
    >>> [rows.tolist() for rows in above(m, [3, 5], -1.0)]
    [[0, 1, 2], [0, 1, 2, 3, 4]]
    >>> [rows.tolist() for rows in leading(Projection(m, dimensions=2), m, [5], -1.0, keep=5)]
    [[0, 1, 2, 3, 4]]
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from langchain_ripplemem._runtime.blas import one_thread, product

__all__ = ["DIMENSIONS", "PROJECTED_FROM", "Projection", "above", "leading", "projection", "similarities"]

# Slack for float32 rounding in the block product (its error is ~1e-6): :func:`similarities`
# decides; a row is dropped here only when it is clearly under the threshold.
_MARGIN = 1e-4
# Earlier rows from which a block is bounded through its projection instead of one full product.
PROJECTED_FROM = 4096
# Leading directions kept (4 bytes each per row, beside the index): 96 of 384 carry 94 % of the
# benchmark dialogue's energy. Fewer leave more rows to read whole (at 50k, per new unit:
# 64 directions 1,100 rows, 96: 400, 128: 180), more make the projected product dearer.
DIMENSIONS = 96
# Rows of the projected coordinates multiplied at a time (512 x 96 floats: 192 KB, kept in cache).
_CHUNK = 512
# Rows the directions are taken from (evenly spaced); taken again when the index has doubled.
_SAMPLE = 2048


class Projection:
    """Rows' coordinates on the leading directions of a matrix, and the norm of what each row leaves.

    Any orthonormal directions keep :func:`leading` exact; leading ones make its bound tight.
    ``extend`` adds the rows appended to the matrix since.
    """

    def __init__(self, matrix: np.ndarray, dimensions: int = DIMENSIONS) -> None:
        if dimensions < 1:
            raise ValueError(f"dimensions must be at least 1, got {dimensions}")
        n = len(matrix)
        sample = np.asarray(matrix[np.linspace(0, n - 1, min(n, _SAMPLE)).astype(np.int64)], dtype=np.float64)
        basis = np.linalg.svd(sample, full_matrices=False)[2][:dimensions]  # orthonormal rows
        self._basis64, self._basis = basis, basis.astype(np.float32)
        self.built_for = n
        self._coords = np.zeros((0, len(basis)), dtype=np.float32)
        self._rest = np.zeros(0, dtype=np.float32)
        self.rows = 0
        self.extend(matrix)

    @property
    def coords(self) -> np.ndarray:
        """``(rows, dimensions)`` coordinates on the directions."""
        return self._coords[: self.rows]

    @property
    def rest(self) -> np.ndarray:
        """Per row, the norm of its part off the directions (slightly over, never under)."""
        return self._rest[: self.rows]

    def extend(self, matrix: np.ndarray) -> None:
        """Project the rows of ``matrix`` past :attr:`rows` (the earlier ones must be unchanged)."""
        n = len(matrix)
        if n <= self.rows:
            return
        if n > len(self._rest):
            size = max(n, 2 * len(self._rest), 256)
            coords, rest = np.zeros((size, self._coords.shape[1]), np.float32), np.zeros(size, np.float32)
            coords[: self.rows], rest[: self.rows] = self.coords, self.rest
            self._coords, self._rest = coords, rest
        for start in range(self.rows, n, _SAMPLE):  # bounded float64 temporaries
            new = np.asarray(matrix[start : min(n, start + _SAMPLE)], dtype=np.float64)
            coords = new @ self._basis64.T
            left = np.einsum("ij,ij->i", new, new) - np.einsum("ij,ij->i", coords, coords)
            self._coords[start : start + len(new)] = coords
            self._rest[start : start + len(new)] = np.sqrt(np.maximum(left, 0.0)) * (1 + 1e-6) + 1e-7
        self.rows = n


_projections: weakref.WeakKeyDictionary[Any, Projection] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def projection(owner: Any, matrix: np.ndarray) -> Projection:
    """``owner``'s projection of ``matrix`` (its index's), made on first use, grown with it, renewed at twice the rows.

    Indexes only grow in place (a delete makes a new index), so the rows projected stay right.
    Kept beside the index, not in its snapshot: a process that writes builds it once.
    """
    with _lock, one_thread():  # numpy's BLAS and LAPACK would otherwise spin threads after each call
        held = _projections.get(owner)
        if held is None or held.rows > len(matrix) or len(matrix) >= 2 * held.built_for:
            held = _projections[owner] = Projection(matrix)
        held.extend(matrix)
        return held


def similarities(matrix: np.ndarray, rows: Sequence[int] | np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Cosines of ``matrix[rows]`` with a unit ``vector``, each row reduced on its own (see the module docs)."""
    picked = matrix[np.asarray(rows, dtype=np.int64)]
    return np.multiply(picked, vector, dtype=np.float32).sum(axis=1, dtype=np.float32)


def above(matrix: np.ndarray, block: list[int], threshold: float) -> list[np.ndarray]:
    """Per row of ``block``, the earlier rows of ``matrix`` whose cosine with it may reach ``threshold``."""
    sims = product(matrix[block], matrix[: max(block) + 1].T)
    return [np.flatnonzero(sims[offset, :row] >= threshold - _MARGIN) for offset, row in enumerate(block)]


def leading(projected: Projection, matrix: np.ndarray, block: list[int], threshold: float,
            keep: int) -> list[np.ndarray]:
    """Per row of ``block``, earlier rows holding every row that can be among its ``keep`` closest over ``threshold``.

    Exact: a row left out has a cosine under the threshold, or under those of ``keep``
    rows that are kept (see the module docs). The rows the bound keeps are then
    scored with one product each and cut the same way, less a rounding margin.
    """
    upto = max(block) + 1
    coords, rest = projected.coords, projected.rest
    approx = _block_product(coords, block, upto)
    out = []
    with one_thread():  # once for the block: each product below is small
        for offset, row in enumerate(block):
            slack = rest[:row] * rest[row]  # a row at a time: no second (block, rows) array
            slack += _MARGIN
            rows = np.flatnonzero(approx[offset, :row] + slack >= threshold)
            near, slack = approx[offset, rows], slack[rows]
            rows = _cut(rows, near - slack, near + slack, keep, threshold)
            out.append(_exact_cut(matrix, row, rows, approx[offset, rows], rest, keep, threshold))
    return out


def _block_product(coords: np.ndarray, block: list[int], upto: int) -> np.ndarray:
    """``coords[block] @ coords[:upto].T``, taken ``_CHUNK`` rows of ``coords`` at a time.

    Each chunk's product with the block is one small matrix product whose result stays in
    cache while it is turned into the block's rows; one ``(block, upto)`` product wrote a
    long result row by row and took twice as long (7 against 4 ms a 20-row write at 50k
    rows). The values are the same: each is one row's dot product with one block row.
    """
    queries = np.ascontiguousarray(coords[block].T)
    out = np.empty((len(block), upto), dtype=np.float32)
    with one_thread():
        for start in range(0, upto, _CHUNK):
            stop = min(upto, start + _CHUNK)
            out[:, start:stop] = (coords[start:stop] @ queries).T
    return out


def _exact_cut(matrix: np.ndarray, row: int, rows: np.ndarray, near: np.ndarray, rest: np.ndarray, keep: int,
               threshold: float) -> np.ndarray:
    """``rows`` (``near``: their projected cosines with ``row``) cut by their cosines with ``row``.

    Each cosine is within ``_MARGIN`` of :func:`similarities`'. The ``keep`` rows nearest by the
    projection are scored first: ``keep`` rows reach the least of their cosines, so a row whose
    upper bound is under it is not among the ``keep`` closest. That leaves about half the rows to
    read whole (190 of 370 per new unit at 50k rows on the scale benchmark's dialogue; reading a
    row whole costs more than its projected product).
    """
    if len(rows) <= keep or keep == 0:
        return rows
    first = rows[np.argpartition(-near, keep - 1)[:keep]]
    kth = float((matrix[first] @ matrix[row]).min()) - _MARGIN
    if kth > threshold:
        rows = rows[near + rest[rows] * rest[row] + _MARGIN >= kth]
    if len(rows) <= keep:
        return rows
    cosines = matrix[rows] @ matrix[row]
    return _cut(rows, cosines - _MARGIN, cosines + _MARGIN, keep, threshold)


def _cut(rows: np.ndarray, lower: np.ndarray, upper: np.ndarray, keep: int, threshold: float) -> np.ndarray:
    """``rows`` less those whose ``upper`` bound is under the threshold or under ``keep`` others' ``lower`` bound."""
    rows, lower, upper = rows[upper >= threshold], lower[upper >= threshold], upper[upper >= threshold]
    if len(rows) > keep > 0:
        kth = float(np.partition(lower, len(rows) - keep)[len(rows) - keep])
        if kth > threshold:
            return rows[upper >= kth]
    return rows
