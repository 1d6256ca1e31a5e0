"""Which embedding model made a store's vectors: recorded with the store, checked when a memory opens it.

Vectors of two embedding models are not comparable, and usually not even of one
width: a store built with the default 384-dimension MiniLM and opened with a
16-dimension model failed deep inside a recall (numpy's ``matmul`` "mismatch in
its core dimension") or inside Chroma's upsert. A unit backend that implements
:class:`EmbeddingRecord` (Chroma does: the unit collection's metadata) keeps the
model's name and dimension, and :func:`check_embedding_model` compares them with
the embeddings a memory is opened with (:class:`EmbeddingModelCheck`: once, before
the memory first embeds, writes or searches vectors; reading units, stats,
deletes and integrity checks never need the model, so a store of any model opens
for them):

* a recorded name other than the one passed is a mismatch, whatever the
  dimensions (two models' vectors are not comparable even at one width);
* so is the same name with another dimension (e.g. a model whose output width is
  a setting);
* a store from before models were recorded has only its vectors' dimension,
  which is checked; the model is recorded with the next write;
* an empty store records the model of its first write.

A model's name is its own (``model_id``, ``model`` or ``model_name``), else its
class name (:func:`~langchain_ripplemem.embeddings.embedding_model_name`).

Example:
    >>> class Record:
    ...     def __init__(self, stored): self.stored, self.used = stored, None
    ...     def embedding_model(self): return self.stored
    ...     def use_embedding_model(self, name): self.used = name
    >>> store = Record(EmbeddingModel("minilm", 384))
    >>> check_embedding_model(store, "minilm", lambda: 384, "the store"); store.used
    'minilm'
    >>> check_embedding_model(store, "tiny", lambda: 16, "the store")
    Traceback (most recent call last):
    ...
    langchain_ripplemem.errors.EmbeddingModelMismatchError: the store was built with embedding model 'minilm' \
(384 dimensions) and cannot be used with 'tiny' (16 dimensions): vectors of different models are not \
comparable. Open it with the embeddings that built it, or ingest into a new store.

"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import NamedTuple, Protocol, runtime_checkable

from langchain_ripplemem.errors import EmbeddingModelMismatchError

__all__ = ["EmbeddingModel", "EmbeddingModelCheck", "EmbeddingRecord", "check_embedding_model", "mismatch"]


class EmbeddingModel(NamedTuple):
    """An embedding model as a store knows it."""

    name: str | None  # None: a store from before models were recorded (only its vectors' width is known)
    dimension: int

    def __str__(self) -> str:
        if self.name is None:
            return f"an unrecorded model ({self.dimension} dimensions)"
        return f"{self.name!r} ({self.dimension} dimensions)"


@runtime_checkable
class EmbeddingRecord(Protocol):
    """A unit backend that records which embedding model made its vectors (optional beside ``UnitBackend``)."""

    def embedding_model(self) -> EmbeddingModel | None:
        """The recorded model; for a store that never recorded one, its vectors' dimension; ``None`` when empty."""
        ...

    def use_embedding_model(self, name: str) -> None:
        """Vectors written from now on are ``name``'s: record it (with their dimension) if the store has no record."""
        ...


def mismatch(stored: EmbeddingModel, passed: EmbeddingModel, store: str) -> EmbeddingModelMismatchError:
    """The error naming the model that built ``store`` and the one passed."""
    return EmbeddingModelMismatchError(
        f"{store} was built with embedding model {stored} and cannot be used with {passed}: vectors of "
        "different models are not comparable. Open it with the embeddings that built it, or ingest into a new store.")


def check_embedding_model(backend: EmbeddingRecord, name: str, dimension: Callable[[], int], store: str) -> None:
    """Check that ``backend``'s vectors are of the model ``name``, then tell it which model writes.

    Args:
        backend: the unit backend.
        name: the model the memory is opened with.
        dimension: that model's dimension; called only when the store holds vectors
            (it may embed a probe text).
        store: the store, for the message (e.g. ``"the store in ./mem"``).

    Raises:
        EmbeddingModelMismatchError: naming both models, before anything is read or written.
    """
    stored = backend.embedding_model()
    if stored is not None:
        passed = EmbeddingModel(name, dimension())
        if (stored.name is not None and stored.name != name) or stored.dimension != passed.dimension:
            raise mismatch(stored, passed, store)
    backend.use_embedding_model(name)


class EmbeddingModelCheck:
    """:func:`check_embedding_model` of one memory, run at its first use of vectors; a mismatch fails every use.

    Args:
        backend: the unit backend; one that keeps no record (no :class:`EmbeddingRecord`) is never checked.
        name: the model the memory is opened with (the backend records it with its first write).
        dimension: that model's dimension (called at most once, when the store holds vectors).
        store: the store, for the message.
    """

    def __init__(self, backend: object, name: str, dimension: Callable[[], int], store: str) -> None:
        self._record = backend if isinstance(backend, EmbeddingRecord) else None
        self._name, self._dimension, self._store = name, dimension, store
        self._lock = threading.Lock()
        self._checked = self._record is None
        self._error: EmbeddingModelMismatchError | None = None

    def __call__(self) -> None:
        """Raise :class:`~langchain_ripplemem.errors.EmbeddingModelMismatchError` when the models differ."""
        if not self._checked:
            with self._lock:
                if not self._checked and self._record is not None:
                    try:
                        check_embedding_model(self._record, self._name, self._dimension, self._store)
                    except EmbeddingModelMismatchError as err:
                        self._error = err
                    self._checked = True
        if self._error is not None:
            raise EmbeddingModelMismatchError(str(self._error))
