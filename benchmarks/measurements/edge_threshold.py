"""Calibrate the semantic edge threshold for an encoder (a reproducible, documented step).

For each LoCoMo *tuning* conversation (never the held-out three) it embeds the
rule-based units with the default encoder and takes the pairwise-cosine quantile
that keeps the top 1 % of pairs (edges/calibration.py). The median over
conversations is the encoder's threshold; copy it into
CALIBRATED_SEMANTIC_THRESHOLDS when it changes.

    python -m benchmarks.measurements.edge_threshold ../shared/data/locomo/locomo10.json \
        --out results/calibration.json

(``make bench-calibration``.)
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from benchmarks.loaders import LOCOMO_TUNE, load_locomo
from langchain_ripplemem.config import WriteConfig
from langchain_ripplemem.edges.calibration import CALIBRATED_SEMANTIC_THRESHOLDS, EDGE_QUANTILE, quantile_threshold
from langchain_ripplemem.embeddings import MiniLMOnnxEmbeddings, embed_texts
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor
from langchain_ripplemem.write.extraction.windows import make_windows


def main() -> None:
    """Calibrate on the LoCoMo file named on the command line; print (and with ``--out`` write) the result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    embeddings, extractor = MiniLMOnnxEmbeddings(), RuleBasedExtractor(WriteConfig().extraction)
    per_conversation = {}
    for bench in load_locomo(args.path):
        if bench.id not in LOCOMO_TUNE:
            continue
        conv = bench.conversation
        texts = list({u.id: u.restatement for w in make_windows(conv, WriteConfig().extraction.window_size,
                                                                 WriteConfig().extraction.window_overlap)
                      for u in extractor.extract(w, (conv.id,)).units}.values())
        per_conversation[conv.id] = round(quantile_threshold(embed_texts(embeddings, texts)), 4)
        print(conv.id, len(texts), per_conversation[conv.id], flush=True)
    result = {"encoder": embeddings.model_id, "quantile": EDGE_QUANTILE,
              "per_conversation": per_conversation,
              "threshold": round(statistics.median(per_conversation.values()), 2),
              "in_use": CALIBRATED_SEMANTIC_THRESHOLDS.get(embeddings.model_id)}
    print(json.dumps(result, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
