"""Unit vectors from any LangChain ``Embeddings``: the one place that calls the encoder.

``embed_array`` is used when the model has it (the offline default does); vectors
are re-normalised so that cosine is a dot product whatever the model returns.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from langchain_core.embeddings import Embeddings


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def embed_texts(embeddings: Embeddings, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """Embed documents as an ``(n, dim)`` float32 array of unit vectors, in batches."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    fast = getattr(embeddings, "embed_array", None)
    chunks = []
    for start in range(0, len(texts), batch_size):
        batch = list(texts[start : start + batch_size])
        chunks.append(np.asarray(fast(batch) if fast else embeddings.embed_documents(batch), dtype=np.float32))
    return _unit_rows(np.vstack(chunks))


def embed_query(embeddings: Embeddings, text: str) -> np.ndarray:
    """One query's unit vector (``embed_query``, which some models treat unlike documents)."""
    fast = getattr(embeddings, "embed_array", None)
    vector = np.asarray(fast([text])[0] if fast else embeddings.embed_query(text), dtype=np.float32)
    return _unit_rows(vector[None, :])[0]
