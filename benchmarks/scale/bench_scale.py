"""Scale benchmark: what recall, ingest and memory cost as one namespace grows, and with many namespaces.

Not a test: it writes ``results/scale.json`` (one entry per ``--label``, so a
"before" and an "after" run sit side by side) and ``report`` renders the docs
table from it. A fast fake embedding model (``scale_dialogue.FastFakeEmbeddings``)
and synthetic two-person dialogue (``scale_dialogue.Dialogue``) keep the
package's own cost in view; embedding time is excluded from ingest rates.

One namespace, per size (1k, 10k, 50k, 100k memories), each in its own store:

* a builder process ingests one 20-turn session per ``add_conversation`` and
  records the ingest rate (memories/s, embedding excluded) of the last 1,000
  memories before the size; then, warm, 50 recalls per setting (wall and CPU
  time, p50/p95; the paper's settings and the tuned ones), an exact-search pass over the same vectors (``matrix @ q``
  and a top-k: the floor), and 10 rounds of "write a 2-turn session, recall";
* a new process then opens the store and times its first recall (open
  included) and its peak RSS.

Many namespaces (2,000 x 50 memories in one store): a new process times
``namespaces()``, the first and the second recall in 200 random namespaces,
and reads its RSS after that warm-up, next to the cache bound it was given.

    python -m benchmarks.scale.bench_scale run --label after --out results/scale.json
    python -m benchmarks.scale.bench_scale report results/scale.json --md docs/scale_tables.md
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

import langchain_ripplemem
from benchmarks.scale.scale_dialogue import Dialogue, FastFakeEmbeddings
from benchmarks.scale.scale_report import write_report
from langchain_ripplemem.cache_bounds import CacheBounds
from langchain_ripplemem.config import RecallConfig, WriteConfig

MODULE = "benchmarks.scale.bench_scale"  # what ``_child`` runs a step as
NS = ("scale", "one")
QUERIES = 50
RATE_WINDOW = 1000
AFTER_WRITE_ROUNDS = 10
# Recall settings by value, so every version of the package runs the same ones: the paper's
# tri-view sizes with the hybrid alignment (the default; RecallConfig() before issue 14), and the tuned
# settings (RecallConfig() since issue 14).
CONFIGS: dict[str, dict[str, Any]] = {
    "paper": {"views": {"semantic_k": 10, "lexical_k": 5, "cue_k": 5},
              "controller": {"max_rounds": 1, "sufficiency_similarity": 0.55}, "expansion": {"per_channel": 5},
              "scoring": {"speaker_bonus": 0.0, "time_bonus": 0.0},
              "context": {"weight": 0.0, "weight_2": 0.0}},
    "tuned": {"views": {"semantic_k": 45, "lexical_k": 45, "cue_k": 40},
              "controller": {"max_rounds": 1, "sufficiency_similarity": 0.8}, "expansion": {"per_channel": 10},
              "scoring": {"speaker_bonus": 0.5, "time_bonus": 0.5},
              "context": {"weight": 0.5, "weight_2": 0.3}},
}
# The fake encoder is not calibrated (edges/calibration.py): 0.8 gives ~1.7
# semantic edges per memory on this dialogue, near what MiniLM gives on LoCoMo.
SEMANTIC_THRESHOLD = 0.8


def _ms(seconds: list[float]) -> dict[str, float]:
    return {"p50": round(1000 * float(np.percentile(seconds, 50)), 2),
            "p95": round(1000 * float(np.percentile(seconds, 95)), 2)}


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def scale_memory(path: Path, kwargs: dict[str, Any]) -> Any:
    """A memory at ``path`` with the fake encoder and the benchmark's write settings; ``kwargs`` to RippleMem."""
    from langchain_ripplemem.memory import RippleMem

    if "cache_bounds" in kwargs:  # JSON can only say it as a dict
        kwargs = {**kwargs, "cache_bounds": CacheBounds(**kwargs["cache_bounds"])}
    return RippleMem(FastFakeEmbeddings(), persist_directory=path,
                     write_config=_settings(WriteConfig, {"linking": {"semantic_threshold": SEMANTIC_THRESHOLD}}),
                     **kwargs)


def recall_config(name: str) -> Any:
    """The recall settings ``CONFIGS[name]`` as a ``RecallConfig``."""
    return _settings(RecallConfig, CONFIGS[name])


# The flat names of the grouped settings these runs set, where they differ from the group's own name.
_FLAT = {("context", "weight"): "context_weight", ("context", "weight_2"): "context_weight_2"}


def _settings(model: Any, groups: dict[str, dict[str, Any]]) -> Any:
    """``model(**groups)``; flat, as it was before the settings were grouped (issue 37), for an older package.

    ``--commit`` runs compare the package at other commits with the same settings.
    """
    if set(groups) <= set(model.model_fields):
        return model(**groups)
    return model(**{_FLAT.get((group, name), name): value
                    for group, values in groups.items() for name, value in values.items()})


def _timed_recalls(memory: Any, questions: list[str], ns: tuple[str, ...], config: Any) -> dict[str, Any]:
    wall, cpu = [], []
    for q in questions:
        w, c = time.perf_counter(), time.process_time()
        memory.recall(q, namespace=ns, config=config)
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return {"wall_ms": _ms(wall), "cpu_ms": _ms(cpu)}


def seeded_questions(seed: int, n: int) -> list[str]:
    """``n`` questions of the dialogue seeded with ``seed``."""
    dialogue = Dialogue(seed)
    return [dialogue.question() for _ in range(n)]


# -- one namespace ----------------------------------------------------------------------
def filled(path: Path, size: int) -> Any:
    """A memory at ``path`` (opened with the benchmark's settings) holding ``size`` memories of the dialogue."""
    memory, dialogue, stored = scale_memory(path, {}), Dialogue(seed=1), 0
    while stored < size:
        stored += memory.add_conversation(dialogue.next_session(size - stored), namespace=NS).new_units
    return memory


def build_single(args: argparse.Namespace) -> dict[str, Any]:
    """Ingest to ``args.size``, then warm recalls, the exact floor and recall right after writes."""
    memory, out = scale_memory(Path(args.dir), json.loads(args.memory_kwargs)), {"size": args.size}
    dialogue, stored, window, curve = Dialogue(seed=1), 0, [], []
    began = time.perf_counter()
    while stored < args.size:
        conversation = dialogue.next_session(args.size - stored)
        t0, c0 = time.perf_counter(), time.process_time()
        report = memory.add_conversation(conversation, namespace=NS)
        embed = report.usage.seconds.get("embed", 0.0)
        # Wall time less embedding; and CPU time (the fake model's CPU share is small and kept).
        seconds, cpu = time.perf_counter() - t0 - embed, time.process_time() - c0
        stored += report.new_units
        window.append((report.new_units, seconds, cpu))
        if sum(n for n, _, _ in window) >= RATE_WINDOW or stored >= args.size:
            units = sum(n for n, _, _ in window)
            curve.append({"memories": stored, "per_s": round(units / sum(s for _, s, _ in window), 1),
                          "per_cpu_s": round(units / sum(c for _, _, c in window), 1)})
            window = []
    out["ingest"] = {"seconds": round(time.perf_counter() - began, 1), "memories": stored,
                     "per_s_at_size": curve[-1]["per_s"], "per_cpu_s_at_size": curve[-1]["per_cpu_s"],
                     "curve": curve}
    questions = seeded_questions(seed=2, n=QUERIES)
    out["warm"] = {}
    for name in CONFIGS:
        _timed_recalls(memory, questions[:5], NS, recall_config(name))  # warm-up
        out["warm"][name] = _timed_recalls(memory, questions, NS, recall_config(name))
    out["exact_floor"] = exact_floor(memory, questions)
    after, after_cpu = [], []
    for i in range(AFTER_WRITE_ROUNDS):
        memory.add_conversation(dialogue.conversation(f"w{i}", turns=2), namespace=NS)
        t0, c0 = time.perf_counter(), time.process_time()
        memory.recall(questions[i], namespace=NS, config=recall_config("paper"))
        after.append(time.perf_counter() - t0)
        after_cpu.append(time.process_time() - c0)
    # CPU time too: work the store's own threads go on with after a write shows in wall time only
    out["after_write"] = {"wall_ms": _ms(after), "cpu_ms": _ms(after_cpu)}
    out["after_write"]["ratio_to_warm_p50"] = round(
        out["after_write"]["wall_ms"]["p50"] / out["warm"]["paper"]["wall_ms"]["p50"], 2)
    out["after_write"]["cpu_ratio_to_warm_p50"] = round(
        out["after_write"]["cpu_ms"]["p50"] / out["warm"]["paper"]["cpu_ms"]["p50"], 2)
    out["ingest_peak_rss_mb"] = _peak_rss_mb()
    memory.close()
    return out


def exact_floor(memory: Any, questions: list[str], k: int = 30) -> dict[str, Any]:
    """Exact dense top-k over the same vectors (re-embedded: the fake model is deterministic)."""
    embeddings = FastFakeEmbeddings()
    matrix = np.stack([embeddings.vector(u.restatement) for u in memory.list_units(NS, include_suppressed=True)])
    wall = []
    for q in questions:
        vector = embeddings.vector(q)
        t0 = time.perf_counter()
        scores = matrix @ vector
        top = np.argpartition(-scores, min(k, len(scores)) - 1)[:k]
        top[np.argsort(-scores[top])]
        wall.append(time.perf_counter() - t0)
    return {"wall_ms": _ms(wall), "vectors": len(matrix)}


def open_single(args: argparse.Namespace) -> dict[str, Any]:
    """A new process: open the store, first recall (open included), then peak RSS.

    With ``--whole 1`` the view's snapshot is not used (nor saved): the view is read
    whole from Chroma, as in the first open after an upgrade or in a process without a
    snapshot directory.
    """
    question = seeded_questions(seed=3, n=1)[0]
    kwargs = json.loads(args.memory_kwargs) | ({"snapshot_directory": False} if args.whole else {})
    t0, c0 = time.perf_counter(), time.process_time()
    import chromadb  # noqa: F401 - timed on its own too (a server imports once, at start)

    import langchain_ripplemem.memory  # noqa: F401

    imported = time.perf_counter() - t0
    memory = scale_memory(Path(args.dir), kwargs)
    opened = time.perf_counter() - t0
    memory.recall(question, namespace=NS, config=recall_config("paper"))
    out = {"import_s": round(imported, 3), "open_s": round(opened, 3),
           "first_recall_s": round(time.perf_counter() - t0, 3),
           "first_recall_cpu_s": round(time.process_time() - c0, 3)}
    out["serving_peak_rss_mb"] = _peak_rss_mb()
    memory.close()
    return out


# -- many namespaces ------------------------------------------------------------------
def _namespace(i: int) -> tuple[str, ...]:
    return ("users", f"u{i:05d}")


def build_many(args: argparse.Namespace) -> dict[str, Any]:
    """``args.namespaces`` namespaces of ``args.per_namespace`` memories each in one store; the build time."""
    memory = scale_memory(Path(args.dir), json.loads(args.memory_kwargs))
    began = time.perf_counter()
    for i in range(args.namespaces):
        memory.add_conversation(Dialogue(seed=100 + i).conversation("c1", turns=args.per_namespace),
                                namespace=_namespace(i))
    memory.close()
    return {"namespaces": args.namespaces, "per_namespace": args.per_namespace,
            "build_s": round(time.perf_counter() - began, 1)}


def probe_many(args: argparse.Namespace) -> dict[str, Any]:
    """A new process: ``namespaces()``, then first and warm recall in ``args.probe`` random namespaces."""
    kwargs = json.loads(args.memory_kwargs)
    memory = scale_memory(Path(args.dir), kwargs)
    out: dict[str, Any] = {"cache_bound": kwargs or None, "rss_open_mb": _rss_mb()}
    t0 = time.perf_counter()
    try:
        out["namespaces_found"] = len(memory.namespaces())
        out["namespaces_s"] = round(time.perf_counter() - t0, 2)
    except Exception as err:  # noqa: BLE001 - recorded: the "before" code fails here
        out["namespaces_error"] = f"{type(err).__name__}: {str(err)[:300]} (after {time.perf_counter() - t0:.1f} s)"
    picked = random.Random(5).sample(range(args.namespaces), args.probe)
    rounds = []
    for _ in range(2):
        wall = []
        for i in picked:
            question = Dialogue(seed=100 + i).question()
            t0 = time.perf_counter()
            memory.recall(question, namespace=_namespace(i), config=recall_config("paper"))
            wall.append(time.perf_counter() - t0)
        rounds.append(_ms(wall))
    out["first_recall_ms"], out["warm_recall_ms"] = rounds
    out["rss_after_warmup_mb"], out["peak_rss_mb"] = _rss_mb(), _peak_rss_mb()
    memory.close()
    return out


# -- orchestration --------------------------------------------------------------------
def _child(step: str, args: argparse.Namespace, **extra: Any) -> dict[str, Any]:
    """Run one step in a new process; its JSON, or the error it died with."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        result_path = handle.name
    cmd = [sys.executable, "-m", MODULE, step, "--result", result_path, "--memory-kwargs", args.memory_kwargs,
           *(x for key, value in extra.items() for x in (f"--{key.replace('_', '-')}", str(value)))]
    started = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    try:
        result = json.loads(Path(result_path).read_text() or "{}")
    finally:
        os.unlink(result_path)
    if proc.returncode != 0 or "error" in result:
        result["error"] = result.get("error") or proc.stderr[-1500:]
        print(f"  {step} failed after {time.perf_counter() - started:.0f} s: {result['error'][-300:]}", flush=True)
    return result


def run(args: argparse.Namespace) -> None:
    """Every size, then the many-namespace store, each step in a new process; saved to ``args.out`` as it goes."""
    work = Path(args.workdir or tempfile.mkdtemp(prefix="ripplemem-scale-"))
    entry: dict[str, Any] = {
        "label": args.label, "commit": args.commit or package_commit(), "started": time.strftime("%Y-%m-%d %H:%M"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
        "settings": {"queries": QUERIES, "rate_window": RATE_WINDOW, "configs": CONFIGS,
                     "semantic_threshold": SEMANTIC_THRESHOLD, "memory_kwargs": json.loads(args.memory_kwargs),
                     "turns_per_write": 20, "after_write_rounds": AFTER_WRITE_ROUNDS},
        "single": [], "many": None}
    try:
        for size in args.sizes:
            store = work / f"single-{size}"
            print(f"size {size}: building", flush=True)
            row = _child("_build", args, dir=store, size=size)
            print(f"size {size}: opening in a new process", flush=True)
            row["open"] = _child("_open", args, dir=store)
            print(f"size {size}: opening without the view's snapshot", flush=True)
            row["open_whole"] = _child("_open", args, dir=store, whole=1)
            entry["single"].append(row)
            shutil.rmtree(store, ignore_errors=True)
            _save(args.out, entry)
        if args.namespaces:
            store = work / "many"
            print(f"{args.namespaces} namespaces x {args.per_namespace}: building", flush=True)
            many = _child("_build_many", args, dir=store, namespaces=args.namespaces, per_namespace=args.per_namespace)
            many["probe"] = _child("_probe_many", args, dir=store, namespaces=args.namespaces, probe=args.probe)
            entry["many"] = many
            shutil.rmtree(store, ignore_errors=True)
            _save(args.out, entry)
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)


def package_commit() -> str:
    """The short git commit of the imported package's tree."""
    root = Path(langchain_ripplemem.__file__).resolve().parents[1]
    got = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return got.stdout.strip() or "unknown"


def _save(path: str, entry: dict[str, Any]) -> None:
    out = Path(path)
    data: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {"benchmark": "scale", "runs": {}}
    data["runs"][entry["label"]] = entry
    out.write_text(json.dumps(data, indent=1) + "\n")


def main(argv: list[str] | None = None) -> None:
    """``run``, ``report``, or one step of a run (the steps ``_child`` starts)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="run the benchmark and store it under --label in --out")
    p.add_argument("--label", required=True, help='e.g. "before" or "after"')
    p.add_argument("--out", default="results/scale.json")
    p.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000, 50000, 100000])
    p.add_argument("--namespaces", type=int, default=2000)
    p.add_argument("--per-namespace", type=int, default=50)
    p.add_argument("--probe", type=int, default=200)
    p.add_argument("--memory-kwargs", default="{}",
                   help='JSON keyword arguments for RippleMem, e.g. {"cache_bounds": {"max_namespaces": 100}}')
    p.add_argument("--commit", help="the code's commit (default: git HEAD of the imported package)")
    p.add_argument("--workdir", help="keep the stores here (default: a temporary directory)")
    p.add_argument("--timeout", type=float, default=4 * 3600, help="seconds per step (a hang guard)")
    p = sub.add_parser("report", help="render the docs table from a results file")
    p.add_argument("results")
    p.add_argument("--md", required=True)
    for step in ("_build", "_open", "_build_many", "_probe_many"):
        p = sub.add_parser(step)
        for flag in ("--result", "--dir", "--memory-kwargs"):
            p.add_argument(flag, required=True)
        for flag in ("--size", "--namespaces", "--per-namespace", "--probe"):
            p.add_argument(flag, type=int)
        p.add_argument("--whole", type=int, default=0, help="1: open without the view's snapshot")
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(args)
    if args.command == "report":
        return write_report(Path(args.results), Path(args.md))
    steps = {"_build": build_single, "_open": open_single, "_build_many": build_many, "_probe_many": probe_many}
    try:
        result = steps[args.command](args)
    except Exception as err:  # noqa: BLE001 - the parent records it
        result = {"error": f"{type(err).__name__}: {str(err)[:500]}\n{traceback.format_exc()[-1500:]}"}
    Path(args.result).write_text(json.dumps(result))


if __name__ == "__main__":
    main()
