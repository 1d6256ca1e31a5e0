"""Warm recall with and without holding the garbage collector off (``langchain_ripplemem/_runtime/collector.py``).

Builds one namespace per ``--sizes`` entry with the scale benchmark's dialogue and
fake encoder (``bench_scale.py``), then, in the same process, runs ``--queries``
warm recalls per recall setting and mode: pausing on (the default) and off
(``collector.set_enabled(False)``), in alternating blocks of ``--block`` recalls,
each recall a new question. Reported per mode: CPU and wall ms per recall (mean,
p50, p95), the collections that ran during recalls per 100 recalls, by generation,
and their time per recall; and the on/off ratio of mean CPU. A full collection is
rare and long, so the mean shows its cost where a median does not. The counts of
collections and of tracked objects do not depend on the machine's speed that day,
the times do. On a commit from before ``collector.py`` (run it from that checkout),
only ``not_paused`` is measured: what recall did then.

    python -m benchmarks.scale.gc_pauses --out results/gc_pauses.json
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.measurements.output import emit
from benchmarks.results import run_metadata
from benchmarks.scale import bench_scale

try:
    from langchain_ripplemem._runtime import collector
except ImportError:  # a commit from before the pause: recall as it was
    collector = None  # type: ignore[assignment]

MODES = ("paused", "not_paused") if collector is not None else ("not_paused",)


class CollectionClock:
    """Collections by generation, and their seconds, while :attr:`on`."""

    def __init__(self) -> None:
        self.on, self.started = False, 0.0
        self.count, self.seconds = [0, 0, 0], [0.0, 0.0, 0.0]

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        """A ``gc.callbacks`` hook: time each collection that runs while on."""
        if not self.on:
            return
        if phase == "start":
            self.started = time.perf_counter()
        else:
            self.count[info["generation"]] += 1
            self.seconds[info["generation"]] += time.perf_counter() - self.started


def _stats(seconds: list[float]) -> dict[str, float]:
    ms = 1000 * np.asarray(seconds)
    return {"mean": round(float(ms.mean()), 2), "p50": round(float(np.percentile(ms, 50)), 2),
            "p95": round(float(np.percentile(ms, 95)), 2)}


def measure(memory: Any, config: Any, questions: list[str], block: int) -> dict[str, Any]:
    """Per mode: recall times and the collections that ran during them (modes alternate by block)."""
    cpu: dict[str, list[float]] = {m: [] for m in MODES}
    wall: dict[str, list[float]] = {m: [] for m in MODES}
    clocks = {m: CollectionClock() for m in MODES}
    for clock in clocks.values():
        gc.callbacks.append(clock)
    try:
        for start in range(0, len(questions), block):
            mode = MODES[(start // block) % len(MODES)]
            if collector is not None:
                collector.set_enabled(mode == "paused")
            for question in questions[start : start + block]:
                clocks[mode].on = True
                w, c = time.perf_counter(), time.process_time()
                memory.recall(question, namespace=bench_scale.NS, config=config)
                wall[mode].append(time.perf_counter() - w)
                cpu[mode].append(time.process_time() - c)
                clocks[mode].on = False
    finally:
        if collector is not None:
            collector.set_enabled(True)
        for clock in clocks.values():
            gc.callbacks.remove(clock)
    out: dict[str, Any] = {}
    for mode in MODES:
        n = len(cpu[mode])
        out[mode] = {"recalls": n, "cpu_ms": _stats(cpu[mode]), "wall_ms": _stats(wall[mode]),
                     "collections_per_100": [round(100 * c / n, 1) for c in clocks[mode].count],
                     "collection_ms_per_recall": [round(1000 * s / n, 2) for s in clocks[mode].seconds]}
    if "paused" in out:
        out["cpu_mean_ratio"] = round(out["paused"]["cpu_ms"]["mean"] / out["not_paused"]["cpu_ms"]["mean"], 3)
    return out


def main() -> None:
    """Measure every size in ``--sizes``; print (and write) the result."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 50_000])
    parser.add_argument("--queries", type=int, default=200, help="recalls per mode and setting")
    parser.add_argument("--block", type=int, default=25, help="recalls in a row with one mode")
    parser.add_argument("--out", default=None, help="results JSON (default: stdout only)")
    args = parser.parse_args()
    result: dict[str, Any] = {**run_metadata(None), "queries": args.queries, "block": args.block,
                              "settings": list(bench_scale.CONFIGS), "sizes": {}}
    for size in args.sizes:
        memory = bench_scale.filled(Path(tempfile.mkdtemp(prefix="gc-pauses-")) / "store", size)
        per_size: dict[str, Any] = {"objects_tracked": 0}
        for seed, name in enumerate(bench_scale.CONFIGS):
            config = bench_scale.recall_config(name)
            questions = bench_scale.seeded_questions(seed=10 + seed, n=2 * args.queries + 20)
            for question in questions[:20]:  # warm-up: the view, the recall graph, the first walks
                memory.recall(question, namespace=bench_scale.NS, config=config)
            per_size[name] = measure(memory, config, questions[20 : 20 + len(MODES) * args.queries], args.block)
        per_size["objects_tracked"] = len(gc.get_objects())
        result["sizes"][str(size)] = per_size
        memory.close()
    emit(result, args.out)


if __name__ == "__main__":
    main()
