"""What a forget that erases costs, against a delete that only deletes, at 1k and 10k units.

For each size a persistent store is written through ``RippleMemory`` (rule-based extraction
of synthetic turns of 12-30 words, 384-d pseudo-random vectors: the package's record shapes
without an encoder's cost), holding ``size`` units in one namespace and a 20-unit namespace
per forget beside it. Then, alternating, ``--forgets`` single-unit ``delete`` calls erase as the
package does and as many only delete (the backend's erasing switched off for the call: Chroma's
delete alone, no vector overwrite, no forced index persist, no ``VACUUM``, no WAL truncation),
and the 20-unit namespaces are dropped the same two ways. Reported per size and kind: wall
seconds and CPU seconds (this process and its children, the ``VACUUM`` process) a forget,
medians, the erasing steps' own wall seconds, and the SQLite file's size.

    python -m langchain_ripplemem.bench.measurements.forget_cost --out results/forget_cost.json
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import resource
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_ripplemem.bench.measurements.output import emit
from langchain_ripplemem.bench.results import run_metadata
from langchain_ripplemem.memory import RippleMemory
from langchain_ripplemem.schemas import Conversation
from langchain_ripplemem.storage import chroma, sqlite
from langchain_ripplemem.storage.base import Purged

SIZES = (1_000, 10_000)
TURNS_PER_CONVERSATION = 100
SMALL_NAMESPACE = 20
# The erasing steps timed on their own: (module, function name).
STEPS = ((chroma, "overwrite_vectors"), (chroma, "persist_index"), (chroma, "vacuum_store_file"),
         (chroma, "clear_unused_capacity"))


def conversation(rng: np.random.Generator, words: list[str], cid: str, turns: int) -> Conversation:
    """``turns`` turns of 12-30 words drawn from ``words``, two speakers, one session."""
    return Conversation.model_validate({"id": cid, "sessions": [{"id": "S1", "time": "2026-03-02T19:00:00+00:00",
        "turns": [{"id": f"S1:{i}", "speaker": ("Maya", "Sam")[i % 2],
                   "text": " ".join(rng.choice(words, size=int(rng.integers(12, 31)))).capitalize() + "."}
                  for i in range(turns)]}]})


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (the ``VACUUM`` process)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@contextlib.contextmanager
def timed_steps(spent: dict[str, list[float]]) -> Iterator[None]:
    """Time each erasing step (:data:`STEPS`) into ``spent`` while inside."""
    originals = {(module, name): getattr(module, name) for module, name in STEPS}

    def timing(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[name].append(time.perf_counter() - began)
        return timed

    for (module, name), function in originals.items():
        setattr(module, name, timing(name, function))
    try:
        yield
    finally:
        for (module, name), function in originals.items():
            setattr(module, name, function)


@contextlib.contextmanager
def deleting_only(memory: RippleMemory) -> Iterator[None]:
    """The memory's backends as they were before deletes erased: Chroma's delete alone, nothing purged."""
    units = memory.unit_backend
    assert isinstance(units, chroma.ChromaUnitBackend)
    saved = {name: units.__dict__.get(name) for name in ("_delete_erasing", "_persist_deletes", "purge")}
    units._delete_erasing = lambda ids: units.collection.delete(ids=ids)  # type: ignore[method-assign]
    units._persist_deletes = lambda deleted: None  # type: ignore[method-assign]
    units.purge = Purged  # type: ignore[method-assign]
    purge = sqlite.SQLiteEdgeBackend.purge
    sqlite.SQLiteEdgeBackend.purge = lambda self: Purged()  # type: ignore[method-assign]
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                units.__dict__.pop(name, None)
            else:
                setattr(units, name, value)
        sqlite.SQLiteEdgeBackend.purge = purge  # type: ignore[method-assign]


def measure(size: int, forgets: int, seed: int = 0) -> dict[str, Any]:
    """Build a store of ``size`` units and time ``forgets`` forgets of each kind, erasing and not."""
    rng = np.random.default_rng(seed)
    words = ["".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), size=int(rng.integers(3, 9))))
             for _ in range(5000)]
    directory = Path(tempfile.mkdtemp(prefix="forget-cost-"))
    memory = RippleMemory(DeterministicFakeEmbedding(size=384), persist_directory=directory)
    started = time.perf_counter()
    for start in range(0, size, TURNS_PER_CONVERSATION):
        memory.add_conversation(conversation(rng, words, f"c{start}", min(TURNS_PER_CONVERSATION, size - start)),
                                namespace=("big",))
    for i in range(2 * forgets):
        memory.add_conversation(conversation(rng, words, f"small{i}", SMALL_NAMESPACE), namespace=("small", str(i)))
    built = time.perf_counter() - started
    units = [u.id for u in memory.list_units(("big",))]
    victims = list(rng.choice(units, size=2 * forgets, replace=False))
    wall: dict[str, list[float]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)
    steps: dict[str, list[float]] = defaultdict(list)
    database = directory / "chroma.sqlite3"
    sizes = [database.stat().st_size]
    for i in range(2 * forgets):
        for kind, forget in (("one unit", functools.partial(memory.delete, [victims[i]], namespace=("big",))),
                             (f"a {SMALL_NAMESPACE}-unit namespace",
                              functools.partial(memory.delete_namespace, ("small", str(i))))):
            erasing = i % 2 == 0
            label = f"{kind}, {'erasing' if erasing else 'deleting only'}"
            before_wall, before_cpu = time.perf_counter(), cpu_seconds()
            with timed_steps(steps) if erasing else deleting_only(memory):
                forget()
            wall[label].append(time.perf_counter() - before_wall)
            cpu[label].append(cpu_seconds() - before_cpu)
        sizes.append(database.stat().st_size)
    memory.close()

    def median(values: list[float]) -> float:
        return round(statistics.median(values), 4)

    return {"units": size, "build_seconds": round(built, 1), "sqlite_bytes": sizes[0],
            "sqlite_bytes_after": sizes[-1],
            "median_wall_seconds": {k: median(v) for k, v in wall.items()},
            "median_cpu_seconds": {k: median(v) for k, v in cpu.items()},
            "median_step_wall_seconds": {k: median(v) for k, v in steps.items()},
            "forgets_of_each_kind": forgets}


def main() -> None:
    """Read the command line, measure, print the results and write them to ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--forgets", type=int, default=5, help="forgets of each kind, erasing and not")
    parser.add_argument("--out", default=None, help="results JSON (default: stdout only)")
    args = parser.parse_args()
    emit({**run_metadata(None), "runs": [measure(size, args.forgets) for size in args.sizes]}, args.out)


if __name__ == "__main__":
    main()
