"""Per-encoder calibration of the semantic edge threshold.

docs/concepts.md's 0.85 was set for Qwen3-Embedding, whose cosines run high. MiniLM's
run lower: on LoCoMo units the median cosine of a unit to its nearest
neighbour is about 0.75, and only 29 of 87,571 pairs of one conversation reach
0.85, so the semantic channel would be almost empty. We therefore take the
threshold to be the pairwise-cosine quantile that keeps the top 1 % of pairs.
:func:`quantile_threshold` computes it, and ``benchmarks/measurements/edge_threshold.py`` (``make bench-calibration``)
reproduces it on the LoCoMo tuning conversations and writes
``results/calibration.json``. The measured value is recorded here per encoder.
An unknown encoder falls back to the paper's 0.85: calibrate it with
:func:`quantile_threshold` on a sample of your own units.
"""

from __future__ import annotations

from typing import Any

import numpy as np

PAPER_SEMANTIC_THRESHOLD = 0.85
EDGE_QUANTILE = 0.99

# model_id -> threshold at EDGE_QUANTILE of pairwise cosine on LoCoMo tuning units
# (results/calibration.json, written by benchmarks/measurements/edge_threshold.py).
CALIBRATED_SEMANTIC_THRESHOLDS: dict[str, float] = {
    "sentence-transformers/all-MiniLM-L6-v2:onnx-int8": 0.72,  # float kernels, the default until issue 17
    "sentence-transformers/all-MiniLM-L6-v2:onnx-int8-dynamic": 0.72,
}


def quantile_threshold(vectors: np.ndarray, quantile: float = EDGE_QUANTILE, max_rows: int = 2000) -> float:
    """Cosine value below which ``quantile`` of all unit pairs fall.

    Args:
        vectors: ``(n, d)`` unit vectors of one namespace (a sample is enough).
        quantile: share of pairs below the threshold (0.99 keeps the top 1 %).
        max_rows: rows sampled (evenly) to bound the ``n^2`` cost.
    """
    if not 0.0 < quantile < 1.0:
        raise ValueError(f"quantile must be in (0, 1), got {quantile}")
    matrix = np.asarray(vectors, dtype=np.float32)
    if len(matrix) < 2:
        raise ValueError("need at least two vectors to calibrate")
    if len(matrix) > max_rows:
        matrix = matrix[np.linspace(0, len(matrix) - 1, max_rows).astype(int)]
    sims = matrix @ matrix.T
    return float(np.quantile(sims[np.triu_indices(len(matrix), 1)], quantile))


def semantic_threshold_for(embeddings: Any) -> float:
    """The calibrated threshold for an encoder, or the paper's 0.85 when unknown."""
    return CALIBRATED_SEMANTIC_THRESHOLDS.get(getattr(embeddings, "model_id", None) or "",
                                              PAPER_SEMANTIC_THRESHOLD)
