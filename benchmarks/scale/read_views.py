r"""What pinned indexes cost: recall latency and ingest throughput of this tree against a git ref's, in one run.

A recall reads one pinned index of its namespace from start to end
(``NamespaceIndex.pinned``): its reads are bounded by the index's row count, and a
write that follows a pinned index copies the name counts and lifecycle state it would
change. This measures, on the scale benchmark's dialogue and fake encoder (so the
index's work is not hidden behind an encoder's):

* ``quiet``: recalls with no write between them (one pinned index serves them all);
* ``after_write``: a recall right after each small write (it makes the next pinned index);
* ``ingest``: writes of a 20-turn session, alone and each after a recall (the write
  then copies what the recall's view holds);

each in CPU milliseconds, medians. Each tree runs in its own process (the ref's tree is
exported with ``git archive``), the two taking turns ``--rounds`` times, so the
machine's drift falls on both; ``ratio`` is this tree's median over the ref's.

    python -m benchmarks.scale.read_views --out results/read_views.json
    python -m benchmarks.scale.read_views --size 2000 --rounds 1  # a quicker look
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

# Only what the ref's tree has too: the worker below runs against either package.
from benchmarks.scale.bench_scale import NS, SEMANTIC_THRESHOLD, seeded_questions
from benchmarks.scale.scale_dialogue import Dialogue, FastFakeEmbeddings
from langchain_ripplemem.config import WriteConfig
from langchain_ripplemem.memory import RippleMem

__all__ = ["measure", "run_tree"]

ROOT = Path(__file__).resolve().parents[3]


def _cpu_ms(call: Any) -> float:
    started = time.process_time()
    call()
    return (time.process_time() - started) * 1000.0


def measure(size: int, queries: int, writes: int) -> dict[str, Any]:
    """In the imported package: fill a namespace to ``size`` memories, then time recalls and writes (CPU ms)."""
    memory = RippleMem(FastFakeEmbeddings(), write_config=WriteConfig(
        linking={"semantic_threshold": SEMANTIC_THRESHOLD}))
    dialogue, stored = Dialogue(seed=1), 0
    while stored < size:
        stored += memory.add_conversation(dialogue.next_session(size - stored), namespace=NS).new_units
    questions = seeded_questions(seed=2, n=queries)
    for question in questions:  # warm-up: caches per index, the encoder's first calls
        memory.recall(question, namespace=NS)
    quiet = [_cpu_ms(lambda q=q: memory.recall(q, namespace=NS)) for q in questions]
    after_write = []
    for i, question in enumerate(questions):
        memory.add_conversation(dialogue.conversation(f"small{i}", turns=2), namespace=NS)
        after_write.append(_cpu_ms(lambda q=question: memory.recall(q, namespace=NS)))
    alone = [_cpu_ms(lambda i=i: memory.add_conversation(dialogue.conversation(f"alone{i}", turns=20),
                                                         namespace=NS)) for i in range(writes)]
    after_recall = []
    for i in range(writes):
        memory.recall(questions[i % len(questions)], namespace=NS)
        after_recall.append(_cpu_ms(lambda i=i: memory.add_conversation(
            dialogue.conversation(f"after{i}", turns=20), namespace=NS)))
    memory.close()
    return {"memories": stored, "quiet_recall": quiet, "recall_after_write": after_write,
            "write_alone": alone, "write_after_recall": after_recall}


def run_tree(tree: Path, size: int, queries: int, writes: int) -> dict[str, Any]:
    """:func:`measure` in a new process that imports the package of ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    args = json.dumps({"size": size, "queries": queries, "writes": writes})
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", args], cwd=tree, env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the measurement in {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _export(ref: str, into: Path) -> Path:
    """The package tree of git ``ref`` of this checkout, written under ``into``."""
    archive = into / "ref.tar"
    with open(archive, "wb") as out:
        subprocess.run(["git", "-C", str(ROOT), "archive", ref, "langchain_ripplemem"], stdout=out, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "tree", filter="data")
    return into / "tree"


def _commit(ref: str) -> str:
    got = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", ref], capture_output=True, text=True)
    return got.stdout.strip() or ref


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Both trees, taking turns; medians per tree and this tree's ratio to the ref's."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--against", default="main", help="the git ref to compare with (default main)")
    parser.add_argument("--size", type=int, default=20_000, help="memories in the namespace")
    parser.add_argument("--queries", type=int, default=20, help="recalls of each kind per round")
    parser.add_argument("--writes", type=int, default=10, help="20-turn writes of each kind per round")
    parser.add_argument("--rounds", type=int, default=2, help="turns each tree takes")
    parser.add_argument("--out", default=None, help="results JSON")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        print(json.dumps(measure(**json.loads(args.worker))))
        return {}
    runs: dict[str, list[dict[str, Any]]] = {"ref": [], "this": []}
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"ref": _export(args.against, Path(tmp)), "this": ROOT}
        for _ in range(args.rounds):
            for name, tree in trees.items():
                runs[name].append(run_tree(tree, args.size, args.queries, args.writes))
    kinds = ["quiet_recall", "recall_after_write", "write_alone", "write_after_recall"]
    medians = {name: {kind: round(statistics.median([x for run in got for x in run[kind]]), 2) for kind in kinds}
               for name, got in runs.items()}
    result = {"benchmark": "read_views", "size": args.size, "memories": runs["this"][0]["memories"],
              "against": args.against, "against_commit": _commit(args.against), "this_commit": _commit("HEAD"),
              "rounds": args.rounds, "queries": args.queries, "writes": args.writes, "unit": "CPU ms, median",
              "ref": medians["ref"], "this": medians["this"],
              "ratio": {kind: round(medians["this"][kind] / medians["ref"][kind], 3) for kind in kinds}}
    text = json.dumps(result, indent=1)
    if args.out:
        Path(args.out).write_text(text + "\n", "utf-8")
    print(text)
    return result


if __name__ == "__main__":
    main()
