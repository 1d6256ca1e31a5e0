"""Where an ingest's CPU time goes as one namespace grows, per window of 1,000 memories.

Builds a store the way ``bench_scale.py`` does (fake embeddings, the same seeded
dialogue, one 20-turn session per ``add_conversation``) and prints one JSON line
per window: the CPU rate, and milliseconds of CPU per memory in Chroma's
upsert, linking, the edge store's insert, the namespace log and Python's
garbage collector by generation (a full collection walks every object the
process holds, so it grows with the namespace; it runs about every 25 % of
growth). Not a test and not the benchmark: the timers wrap the calls.

    python -m benchmarks.scale.ingest_breakdown /tmp/ingest50k 50000 > /tmp/ingest50k.jsonl
"""

from __future__ import annotations

import argparse
import gc
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import langchain_ripplemem.write.transaction as ingest
from benchmarks.scale import bench_scale
from benchmarks.scale.scale_dialogue import Dialogue

WINDOW = 1000


def _timed(owner: Any, name: str, key: str, spent: dict[str, float]) -> None:
    call: Callable[..., Any] = getattr(owner, name)

    def timed(*args: Any, **kwargs: Any) -> Any:
        began = time.process_time()
        try:
            return call(*args, **kwargs)
        finally:
            spent[key] = spent.get(key, 0.0) + time.process_time() - began

    setattr(owner, name, timed)


def install_timers(memory: Any) -> tuple[dict[str, float], Callable[[str, dict[str, int]], None]]:
    """CPU seconds spent in each part of ``memory``'s writes, added up in the dict returned as they run.

    Chroma's upsert, linking, the edge insert, the namespace log, and the garbage
    collector by generation (the callback returned, already in ``gc.callbacks``).
    """
    spent: dict[str, float] = {}
    _timed(memory.unit_backend.collection, "upsert", "chroma", spent)
    _timed(ingest, "link_rows", "link", spent)
    _timed(memory.edge_backend, "add", "edge_add", spent)
    _timed(memory.namespace_log, "record", "log_record", spent)
    collecting: dict[str, float] = {}

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collecting["began"] = time.process_time()
        else:
            key = f"gc{info['generation']}"
            spent[key] = spent.get(key, 0.0) + time.process_time() - collecting["began"]

    gc.callbacks.append(on_gc)
    return spent, on_gc


def main() -> None:
    """Ingest ``size`` memories into ``directory``, printing one JSON line per window."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path, help="a new store's directory")
    parser.add_argument("size", type=int, help="memories to ingest")
    args = parser.parse_args()
    memory = bench_scale.scale_memory(args.directory, {})
    spent, on_gc = install_timers(memory)
    dialogue, stored, units, cpu = Dialogue(seed=1), 0, 0, 0.0
    while stored < args.size:
        conversation = dialogue.next_session(args.size - stored)
        began = time.process_time()
        new = memory.add_conversation(conversation, namespace=bench_scale.NS).new_units
        cpu += time.process_time() - began
        stored, units = stored + new, units + new
        if units >= WINDOW or stored >= args.size:
            print(json.dumps({"memories": stored, "per_cpu_s": round(units / cpu, 1),
                              "cpu_ms_per_memory": round(1000 * cpu / units, 3),
                              **{k: round(1000 * v / units, 3) for k, v in sorted(spent.items())}}), flush=True)
            spent.clear()
            units, cpu = 0, 0.0
    gc.callbacks.remove(on_gc)
    memory.close()


if __name__ == "__main__":
    main()
