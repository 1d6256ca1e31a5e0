"""Would an approximate index make linking sublinear? Edge recall and cost of IVF probing at 50k rows.

Linking is exact and linear in the namespace (``memory_graph/candidates.py``: a
product over every earlier row's 96 projected coordinates, then a bound). This
measures the approximate alternative the issue names, an inverted file: k-means
centres taken from the first 16,384 rows (``nlist`` of them), every row filed under
its nearest centre, and a new unit's semantic candidates read only from the
``nprobe`` centres nearest to it. For the last 2,000 of 50,000 rows it reports the
semantic edges found (against the exact top ``max_semantic_edges`` over the
threshold), the share of earlier rows read, and the CPU time per new unit of the
exact bound (:func:`~langchain_ripplemem.memory_graph.candidates.leading`) against
the probe followed by the same bound on the rows probed, blocks of 20 rows as a
20-turn write has them. Two sets of vectors:

* ``scale``: the scale benchmark's dialogue (``scale_dialogue.py``, its fake
  embedding, threshold 0.8 as ``bench_scale.py`` sets it);
* ``longmemeval``: the units of every LongMemEval development haystack in file
  order (MiniLM from the embedding cache, the calibrated threshold), one long history.

    python scripts/linking_ann.py --longmemeval ../shared/data/longmemeval/longmemeval_s_dev60.json \\
        --out results/linking_ann.json
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from results_io import emit
from scale_dialogue import Dialogue, FastFakeEmbeddings

from langchain_ripplemem._runtime.blas import one_thread
from langchain_ripplemem.bench.cached_embeddings import CachedEmbeddings
from langchain_ripplemem.bench.loaders import load_longmemeval
from langchain_ripplemem.bench.results import run_metadata
from langchain_ripplemem.config import WriteConfig
from langchain_ripplemem.memory import RippleMemory
from langchain_ripplemem.memory_graph.calibration import semantic_threshold_for
from langchain_ripplemem.memory_graph.candidates import Projection, _cut, _exact_cut, leading, similarities

ROWS, TESTED, BLOCK, TRAIN = 50_000, 2_000, 20, 16_384
GRID = [(256, 8), (256, 16), (512, 8), (512, 16), (512, 32)]


def _matrix(memory: RippleMemory, conversations: Any, limit: int, per_namespace: int) -> np.ndarray:
    """Unit vectors of ``conversations`` in order, ``per_namespace`` to a namespace (linking stays small)."""
    parts, total = [], 0
    for i, conv in enumerate(conversations):
        namespace = (f"n{i // per_namespace}",)
        total += memory.add_conversation(conv, namespace=namespace).new_units
        if (i + 1) % per_namespace == 0 or total >= limit:
            parts.append(np.asarray(memory.index.view(namespace).matrix))
        if total >= limit:
            break
    return np.concatenate(parts)[:limit]


def _scale_vectors() -> np.ndarray:
    dialogue = Dialogue(seed=1)
    conversations = (dialogue.conversation(f"c{i}", turns=dialogue.turns_per_session) for i in range(10 * ROWS))
    return _matrix(RippleMemory(FastFakeEmbeddings()), conversations, ROWS, per_namespace=50)


def _longmemeval_vectors(path: str, embeddings: Any) -> np.ndarray:
    conversations = [bench.conversation for bench in load_longmemeval(path)]
    return _matrix(RippleMemory(embeddings), conversations, ROWS, per_namespace=1)


def _best(matrix: np.ndarray, row: int, rows: np.ndarray, threshold: float, keep: int) -> set[int]:
    """The ``keep`` closest of ``rows`` over the threshold, scored as linking scores them (ties: the later row)."""
    sims = similarities(matrix, rows, matrix[row])
    over, over_sims = rows[sims >= threshold], sims[sims >= threshold]
    return set(over[np.lexsort((-over, -over_sims))][:keep].tolist())


def _exact(matrix: np.ndarray, row: int, threshold: float, keep: int) -> set[int]:
    near = np.flatnonzero(matrix[:row] @ matrix[row] >= threshold - 1e-3)  # then scored one row at a time
    return _best(matrix, row, near, threshold, keep)


def _kmeans(rows: np.ndarray, k: int, rounds: int = 10) -> np.ndarray:
    centres = rows[np.random.default_rng(0).choice(len(rows), k, replace=False)].copy()
    for _ in range(rounds):
        nearest = np.argmax(rows @ centres.T, axis=1)
        for j in range(k):
            members = rows[nearest == j]
            if len(members):
                centres[j] = members.sum(axis=0) / np.linalg.norm(members.sum(axis=0))
    return centres


def _probed(projected: Projection, matrix: np.ndarray, block: list[int], centres: np.ndarray,
            lists: list[np.ndarray], nprobe: int, threshold: float, keep: int) -> list[np.ndarray]:
    """:func:`leading`'s bound, over the rows filed under each new row's ``nprobe`` nearest centres."""
    coords, rest = projected.coords, projected.rest
    nearest = np.argpartition(-(matrix[block] @ centres.T), nprobe - 1, axis=1)[:, :nprobe]
    out = []
    for offset, row in enumerate(block):
        rows = np.concatenate([lists[c] for c in nearest[offset]])
        rows = rows[rows < row]
        approx = coords[rows] @ coords[row]
        slack = rest[rows] * rest[row] + 1e-4
        kept = approx + slack >= threshold
        rows, approx, slack = rows[kept], approx[kept], slack[kept]
        at = _cut(np.arange(len(rows)), approx - slack, approx + slack, keep, threshold)  # positions: approx kept
        out.append(_exact_cut(matrix, row, rows[at], approx[at], rest, keep, threshold))
    return out


def _recall(matrix: np.ndarray, exact: dict[int, set[int]], pools: list[np.ndarray], threshold: float,
            keep: int) -> float:
    """Share of the exact semantic edges of the tested rows that their ``pools`` yield."""
    found = sum(len(edges & _best(matrix, row, pool, threshold, keep))
                for (row, edges), pool in zip(exact.items(), pools, strict=True))
    return round(found / max(1, sum(map(len, exact.values()))), 4)


def _cpu_ms_per_row(linker: Any, blocks: list[list[int]]) -> tuple[float, list[np.ndarray]]:
    started, found = time.process_time(), []
    for block in blocks:
        found += linker(block)
    return (time.process_time() - started) * 1000 / sum(map(len, blocks)), found


def measure(matrix: np.ndarray, threshold: float, keep: int) -> dict[str, Any]:
    tested = list(range(len(matrix) - TESTED, len(matrix)))
    exact = {row: _exact(matrix, row, threshold, keep) for row in tested}
    blocks = [tested[i : i + BLOCK] for i in range(0, TESTED, BLOCK)]
    projected = Projection(matrix)
    with one_thread():
        exact_ms, pools = _cpu_ms_per_row(lambda b: leading(projected, matrix, b, threshold, keep), blocks)
        bound_recall = _recall(matrix, exact, pools, threshold, keep)  # 1.0: the bound is exact
        runs = []
        for nlist, nprobe in GRID:
            centres = _kmeans(matrix[:TRAIN], nlist)
            filed = np.argmax(matrix @ centres.T, axis=1)
            lists = [np.flatnonzero(filed == c) for c in range(nlist)]
            ms, pools = _cpu_ms_per_row(lambda b, c=centres, li=lists, p=nprobe: _probed(
                projected, matrix, b, c, li, p, threshold, keep), blocks)
            read = np.mean([np.isin(filed[:row], np.argpartition(-(centres @ matrix[row]), nprobe - 1)[:nprobe]).mean()
                            for row in tested])
            runs.append({"nlist": nlist, "nprobe": nprobe, "rows_read": round(float(read), 4),
                         "edge_recall": _recall(matrix, exact, pools, threshold, keep),
                         "cpu_ms_per_unit": round(ms, 4)})
    return {"rows": len(matrix), "tested": TESTED, "threshold": threshold, "keep": keep,
            "exact_edges": sum(map(len, exact.values())),
            "exact_bound_cpu_ms_per_unit": round(exact_ms, 4),
            "exact_bound_edge_recall": bound_recall, "ivf": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--longmemeval", required=True, help="longmemeval_s_dev60.json")
    parser.add_argument("--cache", default=None, help="embedding cache directory (vectors per model)")
    parser.add_argument("--out", default=None, help="results JSON (default: stdout only)")
    args = parser.parse_args()
    keep = min(WriteConfig().semantic_pool, WriteConfig().max_semantic_edges)
    lme = CachedEmbeddings(directory=args.cache)
    result = {**run_metadata(args.longmemeval), "train_rows": TRAIN, "block": BLOCK,
              "scale": measure(_scale_vectors(), 0.8, keep),
              "longmemeval": measure(_longmemeval_vectors(args.longmemeval, lme), semantic_threshold_for(lme), keep)}
    emit(result, args.out)


if __name__ == "__main__":
    main()
