r"""Where the offline encoder's time goes, and whether integer kernels keep retrieval recall (issue 17, item 3).

Four parts, written to one results file:

- ``units``: the distinct texts the benchmarks embed (rule-based units with each
  dataset's preset, as ``python -m benchmarks`` builds them): their token lengths,
  the share past the 256-token window, and the padding that length-sorted
  batches leave.
- ``graphs``: the operators of the shipped graph and of the integer-kernel graph
  built from it (float ``MatMul`` on dequantized weights against ``MatMulInteger``).
- ``throughput``: texts/s (wall and CPU) on a seeded sample of LongMemEval units
  for kernels, threads, graph optimization levels and batch shapes, and the floor:
  the forward passes alone at the best setting. The machine is shared, so each row
  records the load average beside it; CPU seconds are the steadier figure.
- ``recall`` (with ``--vectors DIR``): ``python -m benchmarks``'s ``dense`` and
  ``ripplemem`` systems on LoCoMo and the LongMemEval file with each kernel choice,
  reading document vectors from the embedding cache under ``DIR`` (``benchmarks.cached_embeddings``,
  one folder per model id, so the two kernels' vectors never mix; built and saved when
  missing: about 40 minutes for the LongMemEval dev split with float kernels on a shared
  2-core machine). The issue's rule: take the faster kernels when recall_all moves by
  less than 0.5 points.

    python -m benchmarks.scale.encoder_bench --locomo ../shared/data/locomo/locomo10.json \
        --longmemeval ../shared/data/longmemeval/longmemeval_s_dev60.json \
        --vectors /tmp/encoder-vectors --out results/encoder.json
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import platform
import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from benchmarks.loaders import load_locomo, load_longmemeval
from benchmarks.measurements.output import emit
from langchain_ripplemem._runtime.minilm_models import integer_model_path, shipped_model_path
from langchain_ripplemem.embeddings import MiniLMOnnxEmbeddings, load_tokenizer
from langchain_ripplemem.presets import preset
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor
from langchain_ripplemem.write.extraction.windows import make_windows

DATASETS = ("locomo", "longmemeval")
RULE_POINTS = 0.5
KS = (5, 10, 30)
OVERALL = {"locomo": "overall_1_4", "longmemeval": "overall"}


def unit_texts(dataset: str, path: str) -> list[str]:
    """The distinct texts a benchmark run embeds as documents, in first-seen order."""
    from benchmarks.runner import PAPER_PRESETS

    write_config, _ = preset(PAPER_PRESETS[dataset])
    extractor = RuleBasedExtractor(write_config.extraction)
    texts: dict[str, None] = {}
    for bench in (load_locomo if dataset == "locomo" else load_longmemeval)(path):
        conv = bench.conversation
        for window in make_windows(conv, write_config.extraction.window_size, write_config.extraction.window_overlap):
            texts.update(dict.fromkeys(unit.restatement for unit in extractor.extract(window, (conv.id,)).units))
    return list(texts)


def length_profile(texts: Sequence[str]) -> dict[str, Any]:
    """Token lengths (untruncated), the share past the window, and padding of length-sorted passes."""
    lengths = np.array(MiniLMOnnxEmbeddings().count_tokens(list(texts)))
    window = MiniLMOnnxEmbeddings().max_length
    kept = np.minimum(lengths, window)
    padding = {}
    for budget in (512, 2048):
        passes = MiniLMOnnxEmbeddings(kernels="float", max_batch_tokens=budget).batches(kept.tolist())
        padded = sum(len(p) * int(kept[p].max()) for p in passes)
        padding[f"float_passes_of_{budget}_tokens"] = {"passes": len(passes),
                                                       "padding_share": round(1 - int(kept.sum()) / padded, 4)}
    return {"texts": len(texts), "tokens_kept": int(kept.sum()),
            "percentiles": {p: int(np.percentile(lengths, p)) for p in (10, 25, 50, 75, 90, 99)},
            "max": int(lengths.max()), "share_over_128": round(float((lengths > 128).mean()), 4),
            f"share_over_{window}": round(float((lengths > window).mean()), 4), "padding": padding}


def graph_ops() -> dict[str, dict[str, int]]:
    """Operator counts of the shipped graph and of the built integer-kernel graph."""
    import onnx

    out = {}
    for name, path in (("shipped", shipped_model_path()), ("integer", integer_model_path())):
        counts = collections.Counter(node.op_type for node in onnx.load(str(path)).graph.node)
        out[name] = {op: counts[op] for op in ("MatMul", "MatMulInteger", "DynamicQuantizeLinear", "Cast", "Mul",
                                               "Softmax", "LayerNormalization") if counts[op]}
    return out


def _timed(run: Callable[[], Any], texts: int, tokens: int) -> dict[str, Any]:
    run_start, cpu_start = time.perf_counter(), time.process_time()
    run()
    wall, cpu = time.perf_counter() - run_start, time.process_time() - cpu_start
    return {"texts_per_s": round(texts / wall, 1), "texts_per_cpu_s": round(texts / cpu, 1),
            "tokens_per_s": round(tokens / wall), "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "load_avg_1min": round(os.getloadavg()[0], 2)}


class _BatchedInteger(MiniLMOnnxEmbeddings):
    """Integer kernels with the float kernels' batches: faster, but a vector depends on its pass."""

    def batches(self, lengths: Sequence[int]) -> list[list[int]]:
        return MiniLMOnnxEmbeddings(kernels="float", batch_size=self.batch_size,
                                    max_batch_tokens=self.max_batch_tokens).batches(lengths)


def _session(kernels: str, level: str, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    path = integer_model_path() if kernels == "integer" else shipped_model_path()
    return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])


def _feeds(batch: list[list[int]]) -> dict[str, np.ndarray]:
    width = max(len(row) for row in batch)
    ids, mask = np.zeros((len(batch), width), np.int64), np.zeros((len(batch), width), np.int64)
    for row, tokens in enumerate(batch):
        ids[row, : len(tokens)], mask[row, : len(tokens)] = tokens, 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}


def throughput(texts: list[str]) -> list[dict[str, Any]]:
    """Rows of texts/s: whole ``embed_array`` calls per setting, then forward passes alone."""
    ids = [e.ids for e in load_tokenizer(256).encode_batch(texts)]
    tokens = sum(len(row) for row in ids)
    rows = []
    embedders: list[tuple[str, MiniLMOnnxEmbeddings]] = [
        ("float kernels, onnxruntime's default threads (the default before issue 17)",
         MiniLMOnnxEmbeddings(kernels="float", intra_op_num_threads=None)),
        ("float kernels, 1 thread", MiniLMOnnxEmbeddings(kernels="float", intra_op_num_threads=1)),
        ("float kernels, 2 threads", MiniLMOnnxEmbeddings(kernels="float", intra_op_num_threads=2)),
        ("integer kernels, onnxruntime's default threads", MiniLMOnnxEmbeddings(intra_op_num_threads=None)),
        ("integer kernels, 1 thread", MiniLMOnnxEmbeddings(intra_op_num_threads=1)),
        ("integer kernels, 2 threads", MiniLMOnnxEmbeddings(intra_op_num_threads=2)),
        ("integer kernels in float batches (not used), 1 thread", _BatchedInteger(intra_op_num_threads=1)),
    ]
    for name, embedder in embedders:
        embedder.embed_array(texts[:8])  # loads the session outside the timing
        rows.append({"setting": name, "scope": "embed_array",
                     **_timed(functools.partial(embedder.embed_array, texts), len(texts), tokens)})
        print(rows[-1], flush=True)
    passes = {"float": MiniLMOnnxEmbeddings(kernels="float").batches([len(r) for r in ids]),
              "integer": MiniLMOnnxEmbeddings().batches([len(r) for r in ids])}
    tokenize = _timed(lambda: load_tokenizer(256).encode_batch(texts), len(texts), tokens)
    rows.append({"setting": "tokenization alone", "scope": "tokenizer", **tokenize})
    for kernels, level in (("float", "ORT_DISABLE_ALL"), ("float", "ORT_ENABLE_BASIC"),
                           ("float", "ORT_ENABLE_EXTENDED"), ("float", "ORT_ENABLE_ALL"),
                           ("integer", "ORT_ENABLE_BASIC"), ("integer", "ORT_ENABLE_ALL")):
        session = _session(kernels, level, 1)
        feeds = [_feeds([ids[i] for i in p]) for p in passes[kernels]]

        def forward(session: Any = session, feeds: list[dict[str, np.ndarray]] = feeds) -> None:
            for feed in feeds:
                session.run(["last_hidden_state"], feed)

        rows.append({"setting": f"{kernels} kernels, {level}, 1 thread", "scope": "forward passes only",
                     **_timed(forward, len(texts), tokens)})
        print(rows[-1], flush=True)
    return rows


def _in_overall(dataset: str, record: dict[str, Any]) -> bool:
    """The questions of the overall row (benchmarks/results.py's grouping)."""
    return record["_category"] in (1, 2, 3, 4) if dataset == "locomo" else bool(record["_answerable"])


def recall(dataset: str, path: str, vectors: str) -> dict[str, Any]:
    """recall_all of ``dense`` and ``ripplemem`` with each kernel choice, the deltas and the questions that flip."""
    from benchmarks.cached_embeddings import CachedEmbeddings
    from benchmarks.runner import FreshMemories, run_benchmark

    conversations = (load_locomo if dataset == "locomo" else load_longmemeval)(path)
    scores: dict[str, dict[str, dict[str, float]]] = {}
    answers: dict[str, dict[str, dict[str, Any]]] = {}  # kernels -> system -> question id -> record
    for kernels in ("float", "integer"):
        # one folder per model id under ``vectors``: the kernels are part of the id, so they never mix
        cache = CachedEmbeddings(MiniLMOnnxEmbeddings(kernels=kernels), vectors)
        factory = FreshMemories(dataset)
        factory.embeddings = cache
        result = run_benchmark(dataset, conversations, ["dense", "ripplemem"], KS, memory_factory=factory,
                               progress=False, keep_questions=True)
        cache.save()
        scores[kernels] = {system: {f"recall_all@{k}": row["by_category"][OVERALL[dataset]][f"recall_all@{k}"]
                                    for k in KS} for system, row in result["systems"].items()}
        answers[kernels] = {system: {r["_id"]: r for r in records if _in_overall(dataset, r)}
                            for system, records in result["questions"].items()}
        print(dataset, kernels, scores[kernels], flush=True)
    deltas = {system: {key: round(100 * (scores["integer"][system][key] - value), 2) for key, value in row.items()}
              for system, row in scores["float"].items()}
    flips: dict[str, dict[str, Any]] = {}  # system -> @k -> gained and lost, and the questions scored
    for system, records in answers["float"].items():
        after = answers["integer"][system]
        scored = [q for q, r in records.items() if r["recall_all@10"] is not None]
        flips[system] = {f"@{k}": {"gained": sum(after[q][f"recall_all@{k}"] > records[q][f"recall_all@{k}"]
                                                 for q in scored),
                                   "lost": sum(after[q][f"recall_all@{k}"] < records[q][f"recall_all@{k}"]
                                               for q in scored)} for k in KS}
        flips[system]["questions"] = len(scored)
    return {"recall_all": scores, "integer_minus_float_points": deltas, "questions_that_flip": flips,
            "within_rule_at_10": all(abs(row["recall_all@10"]) < RULE_POINTS for row in deltas.values()),
            "within_rule_at_every_k": all(abs(d) < RULE_POINTS for row in deltas.values() for d in row.values())}


def _git_commit() -> str:
    """HEAD, with ``+dirty`` when the tree has changes."""
    import subprocess

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], capture_output=True, text=True, check=False).stdout.strip()

    dirty = git("status", "--porcelain", "--untracked-files=no")
    return git("rev-parse", "--short", "HEAD") + ("+dirty" if dirty else "")


def main() -> None:
    """Measure the units, graphs, throughput and (with ``--vectors``) recall; print (and write) the result."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--locomo", required=True, help="locomo10.json")
    parser.add_argument("--longmemeval", required=True, help="a LongMemEval-S file (the dev split)")
    parser.add_argument("--sample", type=int, default=600, help="LongMemEval units timed per setting")
    parser.add_argument("--vectors", default=None, help="embedding cache directory (one folder per model id)")
    parser.add_argument("--out", default=None, help="results JSON")
    args = parser.parse_args()
    texts = {"locomo": unit_texts("locomo", args.locomo), "longmemeval": unit_texts("longmemeval", args.longmemeval)}
    result: dict[str, Any] = {
        "git_commit": _git_commit(),
        "defaults": MiniLMOnnxEmbeddings().model_dump(),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "onnxruntime": __import__("onnxruntime").__version__},
        "units": {name: length_profile(items) for name, items in texts.items()},
        "graphs": graph_ops(),
    }
    sample = random.Random(0).sample(texts["longmemeval"], min(args.sample, len(texts["longmemeval"])))
    result["throughput"] = {"sample": f"{len(sample)} LongMemEval units (seed 0)",
                            "rows": throughput(sample)}
    if args.vectors:
        os.makedirs(args.vectors, exist_ok=True)
        paths = {"locomo": args.locomo, "longmemeval": args.longmemeval}
        result["recall"] = {name: recall(name, paths[name], args.vectors) for name in DATASETS}
    emit(result, args.out)


if __name__ == "__main__":
    main()
