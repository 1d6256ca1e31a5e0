"""An encoder wrapper that embeds each distinct document text once, kept on disk per model between runs.

Benchmarks rebuild memories over the same texts: the linked suite injects every
case into its own copy of a haystack, and a LongMemEval rerun ingests the same
~500 long turns per haystack. :class:`CachedEmbeddings` keys each document
vector by the encoder's ``model_id``, its ``runtime`` (the library versions that
compute it, when the encoder names them) and the text, so a rerun re-embeds
nothing, and vectors of another model (or of a changed ``model_id``: truncation,
kernels), or made under another onnxruntime, are never reused: a results file is
then what anyone with the pinned dependencies gets from a cold cache.

On disk (``directory``, see :func:`default_cache_dir`) each model has its own
folder; :meth:`CachedEmbeddings.save` writes the vectors embedded since the last
save as one new shard file (written aside, then renamed into place: a crash
leaves the old shards whole), so saving after every haystack costs that
haystack's vectors, not the whole cache. Only the shards' keys are held in
memory, as sorted arrays (about 40 bytes a text: a dict of them held ~190 and
grew a cold LongMemEval run by 10 MB); vectors are read back from their shard
when asked for.

Queries pass straight through, so the query latency a benchmark reports still
includes embedding the question. The wrapper has no ``embed_array``: the
package would route queries through it.

Example:
    >>> import tempfile
    >>> class Letters:
    ...     model_id = "letters"
    ...     calls = 0
    ...     def embed_documents(self, texts):
    ...         self.calls += 1
    ...         return [[float(len(t)), 1.0] for t in texts]
    ...     def embed_query(self, text):
    ...         return [float(len(text)), 1.0]
    >>> base, folder = Letters(), tempfile.mkdtemp()
    >>> cached = CachedEmbeddings(base, folder)
    >>> cached.embed_documents(["ab", "c"]) == cached.embed_documents(["c", "ab"])[::-1]
    True
    >>> _ = cached.save()
    >>> CachedEmbeddings(base, folder).embed_documents(["c"]), base.calls
    ([[1.0, 1.0]], 1)

"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import uuid
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_ripplemem._runtime.minilm_models import CACHE_ENV, cache_dir

__all__ = ["CACHE_ENV", "CachedEmbeddings", "default_cache_dir", "model_folder"]

_SHARD_GLOB = "shard-*.npz"


def default_cache_dir() -> Path:
    """Where ``python -m benchmarks`` keeps document vectors: ``$RIPPLEMEM_CACHE_DIR``, else the user's cache.

    The user's cache is ``$XDG_CACHE_HOME/langchain-ripplemem`` (default
    ``~/.cache/langchain-ripplemem``); vectors go to its ``embeddings`` folder.

    Example:
        >>> default_cache_dir().name
        'embeddings'

    """
    return cache_dir() / "embeddings"


def model_folder(directory: str | Path, model_id: str) -> Path:
    """The folder of ``model_id``'s vectors under ``directory``: a readable slug plus a hash of the exact id.

    Example:
        >>> model_folder("/c", "org/model:int8").name
        'org_model_int8-6cb0517a91'

    """
    slug = re.sub(r"[^A-Za-z0-9.-]+", "_", model_id).strip("_")[:60] or "model"
    return Path(directory) / f"{slug}-{hashlib.sha256(model_id.encode('utf-8')).hexdigest()[:10]}"


class CachedEmbeddings(Embeddings):
    """``base`` (default: the offline MiniLM) with a text -> vector cache for documents.

    Args:
        base: any LangChain ``Embeddings``; created on first use when ``None``.
            A persistent cache needs its ``model_id``.
        directory: the cache root (vectors go to :func:`model_folder` under it);
            ``None`` keeps vectors in memory only, for this object's life.

    Raises:
        ValueError: if ``directory`` is a file (e.g. the old single-``.npz`` cache).

    """

    def __init__(self, base: Any = None, directory: str | Path | None = None) -> None:
        self._base = base
        self.directory = Path(directory).expanduser() if directory is not None else None
        if self.directory is not None and self.directory.is_file():
            raise ValueError(f"embedding cache {self.directory} is a file; give a directory "
                             "(the single-.npz cache format is no longer read)")
        self._pending: dict[str, np.ndarray] = {}  # key -> vector, embedded since the last save
        self._where: _KeyIndex | None = None  # key -> (shard, row), loaded on first use
        self._shards: list[Path] = []
        self.embedded = 0  # texts this object sent to the encoder
        self.reused = 0  # texts it answered from the cache

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

    @property
    def vectors_id(self) -> str | None:
        """What the stored vectors are of: ``model_id``, plus the encoder's ``runtime`` when it has one."""
        runtime = getattr(self.base, "runtime", None)
        return f"{self.model_id} | {runtime}" if runtime and self.model_id else self.model_id

    @property
    def folder(self) -> Path | None:
        """The folder of this model's vectors under ``directory`` (``None`` without one).

        Raises:
            ValueError: if the encoder has no ``model_id`` (its vectors could not be told apart).

        """
        if self.directory is None:
            return None
        vectors_id = self.vectors_id
        if not vectors_id:
            raise ValueError(f"a persistent embedding cache needs an encoder with a model_id; "
                             f"{type(self.base).__name__} has none (pass directory=None)")
        return model_folder(self.directory, vectors_id)

    def __len__(self) -> int:
        """Distinct texts with a vector (on disk or pending)."""
        return len(self._index()) + len(self._pending)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Vectors of ``texts``; only texts never seen before (under this ``model_id``) reach the encoder."""
        keys = [_key(text) for text in texts]
        stored, _ = self._index().find(keys)
        missing: dict[str, str] = {}  # key -> text, each new text once
        for key, text, shard in zip(keys, texts, stored.tolist(), strict=True):
            if shard < 0 and key not in self._pending:
                missing.setdefault(key, text)
        if missing:
            fresh = list(missing.values())
            fast = getattr(self.base, "embed_array", None)
            vectors = np.asarray(fast(fresh) if fast else self.base.embed_documents(fresh), dtype=np.float32)
            self._pending.update(zip(missing, vectors, strict=True))
        self.embedded += len(missing)
        self.reused += len(texts) - len(missing)
        return [vector.tolist() for vector in self._vectors(keys)]

    def embed_query(self, text: str) -> list[float]:
        """The encoder's query vector (never cached: query latency stays honest)."""
        return list(self.base.embed_query(text))

    def save(self) -> Path | None:
        """Write the vectors embedded since the last save as one new shard; returns it (``None``: nothing new).

        The shard is written to a temporary file in the same folder and renamed
        into place, so readers never see half a shard.
        """
        folder = self.folder
        if folder is None or not self._pending:
            return None
        folder.mkdir(parents=True, exist_ok=True)
        keys = list(self._pending)
        target = folder / f"shard-{uuid.uuid4().hex}.npz"
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".partial-", suffix=".npz")
        try:
            with os.fdopen(handle, "wb") as out:
                np.savez(out, keys=np.array(keys, dtype="S32"), model_id=np.array(self.vectors_id),
                         vectors=np.stack([self._pending[key] for key in keys]))
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        self._index().add([np.array(keys, dtype="S32")], [len(self._shards)])
        self._shards.append(target)
        self._pending.clear()
        return target

    def _index(self) -> _KeyIndex:
        """Key -> (shard, row) of every stored vector of this model (read once: keys only)."""
        if self._where is None:
            self._where = _KeyIndex()
            found: list[np.ndarray] = []
            folder = self.folder
            for path in sorted(folder.glob(_SHARD_GLOB)) if folder is not None and folder.is_dir() else []:
                try:
                    with np.load(path) as data:
                        if str(data["model_id"]) != self.vectors_id:
                            raise ValueError(f"written for model {data['model_id']}")
                        keys = data["keys"]
                except (OSError, ValueError, KeyError) as exc:
                    warnings.warn(f"embedding cache: skipping {path}: {exc}", stacklevel=2)
                    continue
                found.append(keys)
                self._shards.append(path)
            self._where.add(found, list(range(len(found))))  # one sort for all shards
        return self._where

    def _vectors(self, keys: list[str]) -> list[np.ndarray]:
        """The vectors of ``keys`` (all known), reading each shard they live in once."""
        shards, rows = self._index().find(keys)
        out: list[np.ndarray | None] = [self._pending.get(key) for key in keys]
        wanted: dict[int, list[tuple[int, int]]] = {}  # shard -> (position in out, row)
        for position, (shard, row) in enumerate(zip(shards.tolist(), rows.tolist(), strict=True)):
            if out[position] is None:
                wanted.setdefault(shard, []).append((position, row))
        for shard, places in wanted.items():
            with np.load(self._shards[shard]) as data:
                vectors = data["vectors"]
            for position, row in places:
                out[position] = vectors[row]
        return [vector for vector in out if vector is not None]

class _KeyIndex:
    """Where each stored vector is: keys sorted in one array, their shard and row in two more."""

    def __init__(self) -> None:
        self.keys = np.empty(0, dtype="S32")
        self.shards = np.empty(0, dtype=np.int32)
        self.rows = np.empty(0, dtype=np.int32)

    def __len__(self) -> int:
        return len(self.keys)

    def add(self, keys: list[np.ndarray], shards: list[int]) -> None:
        """Take each ``keys[i]`` (a shard's keys, in row order) as stored in shard ``shards[i]``."""
        if not keys:
            return
        per_shard = [np.asarray(k, dtype="S32") for k in keys]
        merged = np.concatenate([self.keys, *per_shard])
        shard = np.concatenate([self.shards, *(np.full(len(k), number, dtype=np.int32)
                                               for k, number in zip(per_shard, shards, strict=True))])
        row = np.concatenate([self.rows, *(np.arange(len(k), dtype=np.int32) for k in per_shard)])
        order = np.argsort(merged, kind="stable")
        self.keys, self.shards, self.rows = merged[order], shard[order], row[order]

    def find(self, keys: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Shard and row of each of ``keys``; shard ``-1`` for a key not stored."""
        wanted = np.array(keys, dtype="S32")
        if not len(self.keys):
            return np.full(len(wanted), -1, dtype=np.int32), np.zeros(len(wanted), dtype=np.int32)
        at = np.minimum(np.searchsorted(self.keys, wanted), len(self.keys) - 1)
        hit = self.keys[at] == wanted
        return np.where(hit, self.shards[at], -1), self.rows[at]


def _key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()
