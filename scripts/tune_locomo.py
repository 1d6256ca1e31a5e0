"""Development loop for recollection quality (not a test, not the reported benchmark).

Runs selected systems on the LoCoMo *tuning* conversations (conv-26 .. conv-47 by
default; never the held-out three) with an on-disk embedding cache, so that a
change to linking, the controller or assembly costs seconds, not a re-embedding.
The reported numbers always come from `python -m benchmarks locomo` without a cache.

    python scripts/tune_locomo.py ../shared/data/locomo/locomo10.json --systems ripplemem,hybrid_rrf
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from benchmarks.loaders import LOCOMO_TUNE, load_locomo
from benchmarks.runner import run_benchmark
from langchain_ripplemem.config import RecallConfig, WriteConfig
from langchain_ripplemem.embeddings import MiniLMOnnxEmbeddings
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.presets import PAPER


class CachedEmbeddings(Embeddings):
    """An encoder (default MiniLM) with a text -> vector cache kept in one .npz file."""

    def __init__(self, path: Path, base: Any = None) -> None:
        self.path, self.base, self.cache = path, base or MiniLMOnnxEmbeddings(), {}
        self.model_id = getattr(self.base, "model_id", None)  # the calibrated edge threshold follows it
        if path.exists():
            data = np.load(path)
            self.cache = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))
        self.dirty = False

    def embed_array(self, texts: list[str]) -> np.ndarray:
        keys = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in self.cache]
        if missing:
            vectors = self.base.embed_array([texts[i] for i in missing])
            for i, v in zip(missing, vectors, strict=True):
                self.cache[keys[i]] = v
            self.dirty = True
        return np.stack([self.cache[k] for k in keys])

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_array(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_array([text])[0].tolist()

    def save(self) -> None:
        if self.dirty:
            keys = list(self.cache)
            np.savez(self.path, keys=np.array(keys), vectors=np.stack([self.cache[k] for k in keys]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("--systems", default="ripplemem,no_expansion,hybrid_rrf")
    parser.add_argument("--k", default="5,10,30")
    parser.add_argument("--conversations", default=",".join(LOCOMO_TUNE))
    parser.add_argument("--cache", default="/tmp/ripplemem-embedding-cache.npz")
    parser.add_argument("--out", default=None)
    parser.add_argument("--recall", default="{}", help='JSON overrides of RecallConfig() per settings group, '
                        'e.g. \'{"context": {"weight": 0.4}}\'')
    parser.add_argument("--write", default="{}", help="JSON overrides of WriteConfig() per settings group")
    args = parser.parse_args()
    recall_config = RecallConfig().replace(**json.loads(args.recall))
    write_config = WriteConfig().replace(**json.loads(args.write))
    wanted = set(args.conversations.split(","))
    convs = [c for c in load_locomo(args.path) if c.id in wanted]
    embeddings = CachedEmbeddings(Path(args.cache))
    try:
        results = run_benchmark("locomo", convs, args.systems.split(","), progress=False,
                                ks=[int(k) for k in args.k.split(",")],
                                recall_config=recall_config,
                                # The memory keeps the paper's settings: ripplemem_paper reads them.
                                memory_factory=lambda: RippleMem(embeddings, write_config=write_config,
                                                                 recall_config=PAPER))
    finally:
        embeddings.save()
    cats = ["multi-hop", "temporal", "open-domain", "single-hop", "overall_1_4", "adversarial"]
    print(f"{'system':14}" + "".join(f"{c[:11]:>12}" for c in cats) + "   (recall_all @10 / @30)  p50ms units@30")
    for name, sysres in results["systems"].items():
        # Tuning decisions look at the tuning split only.
        by_cat = sysres["splits"].get("tune", sysres)["by_category"]
        row = "".join(f"{by_cat[c]['recall_all@10']:>6.3f}/{by_cat[c]['recall_all@30']:.3f}" for c in cats)
        units = by_cat["overall_1_4"].get("units_mean@30", float("nan"))
        print(f"{name:14}{row}   {sysres['query_ms_p50']:8.1f} {units:6.1f}")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
