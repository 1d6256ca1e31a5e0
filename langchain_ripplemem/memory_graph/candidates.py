"""Which earlier units can be a new unit's semantic edges, and their cosines scored one row at a time.

Under ``"cues"`` structural edges (the default) a new unit's semantic pool matters
only through the rows whose cosine reaches ``semantic_threshold``: the others never
make an edge. :func:`above` takes one product of a block of new rows with the rows
before them and keeps, per row, those over the threshold (less a margin for
rounding), instead of a top-``semantic_pool`` partition over every earlier row per
new unit. :func:`similarities` then scores what is kept exactly, each row reduced
on its own, so a unit's scores do not depend on which other rows were scored with
it: linking a batch gives the edges linking one unit at a time gives, in any process.

Tried and not kept: a bound from each row's projection on 64 leading directions
(Cauchy-Schwarz on the remainder). It is exact, but on the scale benchmark's
dialogue 3.8 % of rows passed it per new unit and 40 % for a 20-unit block, so
reading those rows cost more than the full product (docs/scale.md, "Ingest").

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> m = rng.standard_normal((6, 8)).astype(np.float32)
    >>> m /= np.linalg.norm(m, axis=1, keepdims=True)
    >>> bool(np.allclose(similarities(m, [0, 2], m[1]), m[[0, 2]] @ m[1]))
    True
    >>> [rows.tolist() for rows in above(m, [3, 5], -1.0)]
    [[0, 1, 2], [0, 1, 2, 3, 4]]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from langchain_ripplemem.blas import product

__all__ = ["above", "similarities"]

# Slack for float32 rounding in the block product (its error is ~1e-6): :func:`similarities`
# decides; a row is dropped here only when it is clearly under the threshold.
_MARGIN = 1e-4


def similarities(matrix: np.ndarray, rows: Sequence[int] | np.ndarray, vector: np.ndarray) -> np.ndarray:
    """Cosines of ``matrix[rows]`` with a unit ``vector``, each row reduced on its own (see the module docs)."""
    picked = matrix[np.asarray(rows, dtype=np.int64)]
    return np.multiply(picked, vector, dtype=np.float32).sum(axis=1, dtype=np.float32)


def above(matrix: np.ndarray, block: list[int], threshold: float) -> list[np.ndarray]:
    """Per row of ``block``, the earlier rows of ``matrix`` whose cosine with it may reach ``threshold``."""
    sims = product(matrix[block], matrix[: max(block) + 1].T)
    return [np.flatnonzero(sims[offset, :row] >= threshold - _MARGIN) for offset, row in enumerate(block)]
