"""An encoder wrapper that embeds each distinct document text once, for benchmarks that rebuild memories.

The linked suite injects every case into its own copy of a haystack, so the same
haystack turns are embedded again and again; caching them by text makes a
rebuild cost linking and indexing only. Queries pass straight through, so the
query latency a benchmark reports still includes embedding the question. The
wrapper keeps the encoder's ``model_id``, so memories calibrate their semantic
edge threshold exactly as with the bare encoder.

Example:
    >>> class Letters:
    ...     model_id = "letters"
    ...     calls = 0
    ...     def embed_documents(self, texts):
    ...         self.calls += 1
    ...         return [[float(len(t)), 1.0] for t in texts]
    ...     def embed_query(self, text):
    ...         return [float(len(text)), 1.0]
    >>> base = Letters()
    >>> cached = CachedEmbeddings(base)
    >>> cached.embed_documents(["ab", "c"]) == cached.embed_documents(["c", "ab"])[::-1]
    True
    >>> base.calls, cached.model_id
    (1, 'letters')

"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

__all__ = ["CachedEmbeddings"]


class CachedEmbeddings(Embeddings):
    """``base`` (default: the offline MiniLM) with a text -> vector cache for documents.

    Args:
        base: any LangChain ``Embeddings``; created on first use when ``None``.
        path: an ``.npz`` file to load the cache from and :meth:`save` it to (optional).

    """

    def __init__(self, base: Any = None, path: str | Path | None = None) -> None:
        self._base = base
        self.path = Path(path) if path is not None else None
        self._cache: dict[str, np.ndarray] = {}
        self._dirty = False
        if self.path is not None and self.path.is_file():
            with np.load(self.path) as data:
                self._cache = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))

    @property
    def base(self) -> Any:
        """The wrapped encoder."""
        if self._base is None:
            from langchain_ripplemem.embeddings import MiniLMOnnxEmbeddings

            self._base = MiniLMOnnxEmbeddings()
        return self._base

    @property
    def model_id(self) -> str | None:
        """The wrapped encoder's ``model_id`` (the calibrated edge threshold follows it)."""
        return getattr(self.base, "model_id", None)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Vectors of ``texts``; only texts never seen before reach the encoder."""
        keys = [hashlib.sha1(text.encode("utf-8")).hexdigest() for text in texts]
        missing: dict[str, str] = {}  # key -> text, each new text once
        for key, text in zip(keys, texts, strict=True):
            if key not in self._cache:
                missing.setdefault(key, text)
        if missing:
            fresh = list(missing.values())
            fast = getattr(self.base, "embed_array", None)
            vectors = np.asarray(fast(fresh) if fast else self.base.embed_documents(fresh), dtype=np.float32)
            self._cache.update(zip(missing, vectors, strict=True))
            self._dirty = True
        return [self._cache[key].tolist() for key in keys]

    def embed_query(self, text: str) -> list[float]:
        """The encoder's query vector (never cached: query latency stays honest)."""
        return list(self.base.embed_query(text))

    def save(self) -> Path | None:
        """Write the cache to ``path`` when it has new vectors; returns the path written, if any."""
        if self.path is None or not self._dirty or not self._cache:
            return None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = list(self._cache)
        np.savez(self.path, keys=np.array(keys), vectors=np.stack([self._cache[k] for k in keys]))
        self._dirty = False
        return self.path
