"""Encoder batch-shape benchmark (not a test): CPU time per token budget of a forward pass.

Embeds two workloads with ``MiniLMOnnxEmbeddings(kernels="float")`` under several ``max_batch_tokens``
budgets (and the old fixed 64 texts per pass): the turns of LoCoMo's first
conversation (short, ~36 tokens) and 64 chunks of 256 tokens (a long turn). It times
process CPU seconds with one onnxruntime thread, so that other load on the machine
changes the numbers little, and reports the largest pass (texts x width) of each. The
"64 texts per pass" row is the old setting: slices of 64 in input order, one pass each.

    python -m benchmarks.measurements.batch_shapes ../shared/data/locomo/locomo10.json \
        --out results/batch_shapes.json
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import time

from benchmarks.record_formats import conversation_from_locomo
from langchain_ripplemem.embeddings import MiniLMOnnxEmbeddings

BUDGETS = (256, 512, 1024, 2048, 4096)


def main() -> None:
    """Read the command line, measure, print the results and write them to ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("locomo")
    parser.add_argument("--repeat", type=int, default=3, help="runs per setting (the fastest is kept)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()

    with open(args.locomo, encoding="utf-8") as file:
        conversation = conversation_from_locomo(json.load(file)[0])
    short = [f"{t.speaker}: {t.text}" for s in conversation.sessions for t in s.turns]
    words = sorted({w for text in short for w in text.split()})
    rng = random.Random(0)
    long = [" ".join(rng.choice(words) for _ in range(400)) for _ in range(64)]  # cut to 256 tokens
    settings = {"64 texts per pass": {"batch_size": 64, "max_batch_tokens": 64 * 512}}
    settings.update({f"{b} tokens per pass": {"max_batch_tokens": b} for b in BUDGETS})
    rows = []
    for name, params in settings.items():
        # Float kernels: the integer kernels (the default since issue 17) run one text per pass.
        emb = MiniLMOnnxEmbeddings(intra_op_num_threads=1, kernels="float", **params)
        emb.embed_array(["warm up"])
        for workload, texts in (("locomo turns", short), ("256-token chunks", long)):
            # Before, the write path sent slices of 64 texts in input order; now it sends them all.
            step = 64 if name == "64 texts per pass" else len(texts)
            lengths = [min(n, emb.max_length) for n in emb.count_tokens(texts)]
            biggest = max(len(b) * max(lengths[first + i] for i in b) for first in range(0, len(texts), step)
                          for b in emb.batches(lengths[first : first + step]))
            seconds = []
            for _ in range(args.repeat):
                started = time.process_time()
                for first in range(0, len(texts), step):
                    emb.embed_array(texts[first : first + step])
                seconds.append(time.process_time() - started)
            rows.append({"setting": name, "workload": workload, "texts": len(texts),
                         "tokens": sum(lengths), "largest_pass_tokens": biggest,
                         "cpu_seconds": round(min(seconds), 2)})
            print(json.dumps(rows[-1]), flush=True)
    result = {"rows": rows, "machine": {"python": platform.python_version(), "onnx_threads": 1}}
    if args.out:
        with open(args.out, "w", encoding="utf-8") as file:
            json.dump(result, file, indent=1)
            file.write("\n")


if __name__ == "__main__":
    main()
