"""Profile a cold open: build a one-namespace store, then open it in a new process and recall once.

Uses ``bench_scale.py``'s builder (fake embeddings, synthetic dialogue), so only
the package's own cost shows. Prints the open and first-recall times and the
functions with the most time of their own.

    python scripts/profile_cold_open.py build /tmp/cold 10000
    python scripts/profile_cold_open.py open /tmp/cold --stats /tmp/cold.prof
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time
from pathlib import Path

import bench_scale


def build(path: Path, size: int) -> None:
    memory = bench_scale.filled(path, size)
    memory.close()
    print(f"{size} memories in {path}")


def open_and_recall(path: Path, stats: Path | None, top: int) -> None:
    question = bench_scale._questions(seed=3, n=1)[0]
    profiler = cProfile.Profile()
    t0, c0 = time.perf_counter(), time.process_time()
    profiler.enable()
    memory = bench_scale._memory(path, {})
    opened = time.perf_counter() - t0
    result = memory.recall(question, namespace=bench_scale.NS, config=bench_scale._config("paper"))
    profiler.disable()
    print(json.dumps({"open_s": round(opened, 3), "first_recall_s": round(time.perf_counter() - t0, 3),
                      "cpu_s": round(time.process_time() - c0, 3), "memories": len(result.memories)}))
    if stats:
        profiler.dump_stats(str(stats))
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)
    memory.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("dir", type=Path)
    b.add_argument("size", type=int)
    o = sub.add_parser("open")
    o.add_argument("dir", type=Path)
    o.add_argument("--stats", type=Path, help="also write the cProfile stats here")
    o.add_argument("--top", type=int, default=20)
    args = parser.parse_args()
    if args.command == "build":
        build(args.dir, args.size)
    else:
        open_and_recall(args.dir, args.stats, args.top)


if __name__ == "__main__":
    main()
