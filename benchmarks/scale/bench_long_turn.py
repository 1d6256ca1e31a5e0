r"""Long-input benchmark (not a test): peak memory and time of ingesting one long turn.

Each case runs in a fresh Python process, so its peak RSS (``ru_maxrss``) is its own:
``RippleMem()`` with its defaults (offline MiniLM, rule-based extractor) ingests a
conversation of three turns, the middle one SIZE characters of natural dialogue (the
shipped sample conversation, repeated). The model is loaded before the clock starts.
With ``--locomo``, a last case ingests LoCoMo's first conversation the same way and
reports turns/s, so that a change for long inputs can be checked against normal ones.

    python -m benchmarks.scale.bench_long_turn --sizes 20000,200000 \
        --locomo ../shared/data/locomo/locomo10.json --out results/long_turn.json
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import time
from importlib import resources
from typing import Any

from benchmarks.record_formats import conversation_from_locomo

MODULE = "benchmarks.scale.bench_long_turn"  # what a case's fresh process runs


def _long_text(size: int) -> str:
    """``size`` characters of the sample dialogue's sentences, reshuffled on every pass.

    A plain repetition would give identical chunks, which ingest keeps once.
    """
    import random
    import re

    sample = json.loads(resources.files("langchain_ripplemem").joinpath(
        "data/sample_conversation.json").read_text(encoding="utf-8"))
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(t["text"] for s in sample["sessions"] for t in s["turns"]))
    shuffle, parts, length = random.Random(0).shuffle, [], 0
    while length < size:
        shuffle(sentences)
        parts.extend(sentences)
        length += sum(len(s) + 1 for s in sentences)
    return " ".join(parts)[:size]


def _conversation(case: str) -> Any:
    if case.startswith("locomo:"):
        path = case.removeprefix("locomo:")
        with open(path, encoding="utf-8") as file:
            return conversation_from_locomo(json.load(file)[0])
    text = _long_text(int(case))
    return {"id": "long", "sessions": [{"id": "S1", "time": "2026-02-14T10:00:00Z", "turns": [
        {"id": "t1", "speaker": "Maya", "text": "Hi Sam, how was your week?"},
        {"id": "t2", "speaker": "Sam", "text": text},
        {"id": "t3", "speaker": "Maya", "text": "Wow, thanks for telling me all that."}]}]}


def _child(case: str) -> None:
    from langchain_ripplemem.memory import RippleMem

    conversation = _conversation(case)
    memory = RippleMem()
    memory.reader.embed_query("warm up")  # the model load is not the ingest
    rss_loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    cpu, wall = time.process_time(), time.perf_counter()
    report = memory.add_conversation(conversation)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    units = memory.index.namespace_index(memory.default_namespace).units
    tokens = memory.embeddings.count_tokens([u.restatement for u in units])  # type: ignore[attr-defined]
    window = memory.embeddings.max_length  # type: ignore[attr-defined]
    print(json.dumps({
        "case": case if not case.startswith("locomo:") else "locomo10[0]",
        "turns": report.turns, "units": report.new_units,
        "seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
        "turns_per_s": round(report.turns / wall, 1),
        "seconds_by_stage": {k: round(v, 2) for k, v in report.usage.seconds.items()},
        "rss_after_model_load_mb": round(rss_loaded),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "max_tokens_per_unit": max(tokens, default=None),
        "tokens_past_the_window": sum(max(0, t - window) for t in tokens),
        "tokens_in_units": sum(tokens),
    }))
    memory.close()


def main() -> None:
    """Run each case in a fresh process, print its row and with ``--out`` write them all."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,200000", help="comma-separated turn sizes in characters")
    parser.add_argument("--locomo", default=None, help="locomo10.json: also ingest its first conversation")
    parser.add_argument("--repeat", type=int, default=1, help="runs per case (the best time is kept)")
    parser.add_argument("--out", default=None)
    parser.add_argument("--_child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._child:
        _child(args._child)
        return
    cases = [s.strip() for s in args.sizes.split(",") if s.strip()]
    if args.locomo:
        cases.append(f"locomo:{args.locomo}")
    rows = []
    for case in cases:
        runs = [json.loads(subprocess.run([sys.executable, "-m", MODULE, "--_child", case], check=True,
                                          capture_output=True, text=True).stdout.strip().splitlines()[-1])
                for _ in range(args.repeat)]
        best = min(runs, key=lambda r: r["seconds"])
        best["peak_rss_mb"] = max(r["peak_rss_mb"] for r in runs)
        rows.append(best)
        print(json.dumps(best), flush=True)
    result = {"cases": rows, "machine": {"python": platform.python_version(), "cpus": _cpus()}}
    if args.out:
        with open(args.out, "w", encoding="utf-8") as file:
            json.dump(result, file, indent=1)
            file.write("\n")


def _cpus() -> int | None:
    import os

    return os.cpu_count()


if __name__ == "__main__":
    main()
