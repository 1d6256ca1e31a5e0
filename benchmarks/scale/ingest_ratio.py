r"""Ingest at a large size against a small one, the two writers taking turns: a ratio the machine's drift cancels in.

``bench_scale.py`` builds each size in its own process minutes apart, and on a shared
machine the same code gave 0.63x and 0.83x there (docs/scale.md). Here one writer process
per store takes turns with the other, a block of writes each: the small one writes the
benchmark dialogue's memories 0 to ``--small``, the large one ``--large - --small`` to
``--large`` (bench_scale's "last 1,000 memories" windows). Each times its own writes in
CPU time (the fake embedding model's share is small and kept, as bench_scale keeps it),
and the parts of them ``ingest_breakdown.py`` times (Chroma's upsert, linking, the edge
insert, the namespace log, the garbage collector by generation).
The large store is built once (``--workdir`` keeps it for later runs) and copied for each
repeat; its writer first writes ``--warm-up`` memories untimed (opening the store and the
first write's one-time work are not ingest at that size), and each writer runs a full
garbage collection before its timed writes.

    python -m benchmarks.scale.ingest_ratio --out results/ingest_ratio.json
    python -m benchmarks.scale.ingest_ratio --large 20000 --repeats 2 \
        --workdir /tmp/ratio  # a quicker look
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing as mp
import shutil
import statistics
import tempfile
import time
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from benchmarks.scale.bench_scale import NS, filled, package_commit, scale_memory
from benchmarks.scale.ingest_breakdown import install_timers
from benchmarks.scale.scale_dialogue import Dialogue


def _positioned(start: int) -> Dialogue:
    """The dialogue after its first ``start`` memories (a turn makes one memory), as ``filled`` wrote them."""
    dialogue, made = Dialogue(seed=1), 0
    while made < start:
        made += len(dialogue.next_session(start - made)["sessions"][0]["turns"])
    return dialogue


def _writer(store: str, start: int, warm_up: int, conn: Connection) -> None:
    """Write the dialogue from memory ``start`` on: ``warm_up`` untimed, then a block per request."""
    memory, dialogue = scale_memory(Path(store), {}), _positioned(start)
    spent, _ = install_timers(memory)  # CPU seconds by part of the write (ingest_breakdown.py's timers)
    held = len(memory.index.namespace_index(NS))
    if held != start:
        conn.send({"error": f"{store} holds {held} memories, not {start}"})
        return

    def write(count: int) -> tuple[int, float]:
        made, cpu = 0, 0.0
        while made < count:
            conversation = dialogue.next_session(count - made)
            c0 = time.process_time()
            made += memory.add_conversation(conversation, namespace=NS).new_units
            cpu += time.process_time() - c0
        return made, cpu

    write(warm_up)
    # Opening a store leaves the collector with every object the load made pending: its first full
    # collection would land in the timed writes. One now starts both writers from a settled collector.
    gc.collect()
    conn.send({"ready": len(memory.index.namespace_index(NS))})
    while (count := conn.recv()) is not None:
        spent.clear()
        made, cpu = write(count)
        conn.send({"memories": made, "cpu_s": cpu, "parts_s": dict(spent)})
    memory.close()


def _start(store: Path, start: int, warm_up: int) -> tuple[BaseProcess, Connection]:
    parent, child = mp.Pipe()
    proc = mp.get_context("spawn").Process(target=_writer, args=(str(store), start, warm_up, child))
    proc.start()
    ready = parent.recv()
    if "error" in ready:
        raise RuntimeError(ready["error"])
    return proc, parent


def one_repeat(base: Path, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Fresh stores (an empty one, a copy of the large build), then the writers' turns."""
    small_dir, large_dir = work / "small", work / "large"
    shutil.rmtree(small_dir, ignore_errors=True)
    shutil.rmtree(large_dir, ignore_errors=True)
    shutil.copytree(base, large_dir)
    writers = {"small": _start(small_dir, 0, 0),
               "large": _start(large_dir, args.large - args.small - args.warm_up, args.warm_up)}
    totals = {name: [0, 0.0] for name in writers}
    parts: dict[str, dict[str, float]] = {name: {} for name in writers}
    blocks: list[dict[str, float]] = []
    try:
        for _ in range(args.small // args.block):
            block = {}
            for name, (_, conn) in writers.items():
                conn.send(args.block)
                got = conn.recv()
                totals[name][0] += got["memories"]
                totals[name][1] += got["cpu_s"]
                for part, seconds in got["parts_s"].items():
                    parts[name][part] = parts[name].get(part, 0.0) + seconds
                block[name] = round(got["memories"] / got["cpu_s"], 1)
            blocks.append(block)
    finally:
        for proc, conn in writers.values():
            conn.send(None)
            proc.join()
    rates = {name: round(made / cpu, 1) for name, (made, cpu) in totals.items()}
    ms = {name: {"total": round(1000 * cpu / made, 3),
                 **{part: round(1000 * s / made, 3) for part, s in sorted(parts[name].items())}}
          for name, (made, cpu) in totals.items()}
    return {"memories": {name: made for name, (made, _) in totals.items()}, "per_cpu_s": rates,
            "ratio": round(rates["large"] / rates["small"], 3), "cpu_ms_per_memory": ms, "blocks": blocks}


def main() -> None:
    """Build the large store once, then ``--repeats`` rounds of the two writers; print (and write) the ratio."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--small", type=int, default=1000, help="memories the small store is written from 0 to")
    p.add_argument("--large", type=int, default=50000, help="the size the large store is written up to")
    p.add_argument("--block", type=int, default=200, help="memories a writer writes in one turn")
    p.add_argument("--warm-up", type=int, default=100, help="memories the large writer writes untimed first")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--workdir", help="keep the large build here (reused when it is there)")
    p.add_argument("--out", help="write the results (JSON) here")
    args = p.parse_args()
    if args.small % args.block or args.large <= args.small + args.warm_up:
        p.error("--small must be a multiple of --block, and --large over --small + --warm-up")
    work = Path(args.workdir or tempfile.mkdtemp(prefix="ripplemem-ratio-"))
    base = work / f"base-{args.large - args.small - args.warm_up}"
    try:
        if not base.exists():
            print(f"building {base.name}", flush=True)
            filled(base.with_suffix(".tmp"), args.large - args.small - args.warm_up).close()
            base.with_suffix(".tmp").rename(base)
        repeats = []
        for i in range(args.repeats):
            repeats.append(one_repeat(base, work / "run", args))
            print(f"repeat {i + 1}: {repeats[-1]['per_cpu_s']} -> {repeats[-1]['ratio']:.3f}", flush=True)
    finally:
        shutil.rmtree(work / "run", ignore_errors=True)
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    ratios = [r["ratio"] for r in repeats]
    out = {"benchmark": "ingest_ratio", "commit": package_commit(), "started": time.strftime("%Y-%m-%d %H:%M"),
           "settings": {k: getattr(args, k) for k in ("small", "large", "block", "warm_up", "repeats")},
           "ratio_median": round(statistics.median(ratios), 3), "ratio_min": min(ratios), "ratio_max": max(ratios),
           "repeats": repeats}
    print(json.dumps({k: out[k] for k in ("ratio_median", "ratio_min", "ratio_max")}))
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
