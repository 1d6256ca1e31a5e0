"""Recall's edge reads, one query a node against one query a hop, on SQLite and on PostgreSQL.

Builds one namespace of ``--size`` memories of the scale benchmark's dialogue
(``bench_scale.py``'s fake encoder and settings), then runs ``--queries`` warm recalls
with each of its two recall settings and records every read the walkable edges makes of
the edge store (``edge_rows`` with the units whose edges it needs). Recall reads a
walk's hop at a time (``LazyAdjacency.read``); before, it read each unit alone. Both
patterns are replayed, same units in the same order, on the store's SQLite file and
on a throwaway PostgreSQL cluster holding the same edges
(``throwaway_postgres.py``; skipped, with the reason, when it cannot
start). Reported per recall: queries, and wall and CPU ms (CPU of this process: the
client's share; PostgreSQL's own work shows in wall time).

    python -m benchmarks.scale.edge_reads --out results/edge_reads.json
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.measurements.output import emit
from benchmarks.results import run_metadata
from benchmarks.scale import bench_scale
from benchmarks.scale.throwaway_postgres import start_postgres, stop_postgres
from langchain_ripplemem.schemas import Edge
from langchain_ripplemem.storage import sqlite as sqlite_storage
from langchain_ripplemem.storage.postgres import PostgresEdgeBackend


def recorded_reads(memory: Any, queries: int) -> dict[str, list[list[str]]]:
    """Per recall setting, the unit lists recall's walkable edges asked the edge store for."""
    reads: list[list[str]] = []
    backend = type(memory.edge_backend)
    original = backend.edge_rows

    def recording(self: Any, namespace: Any, unit_ids: Any = None) -> Any:
        if unit_ids is not None:
            unit_ids = list(unit_ids)
            reads.append(unit_ids)
        return original(self, namespace, unit_ids)

    questions, out = bench_scale.seeded_questions(seed=2, n=queries + 5), {}
    backend.edge_rows = recording  # type: ignore[method-assign]
    try:
        for name in bench_scale.CONFIGS:
            config = bench_scale.recall_config(name)
            for question in questions[:5]:  # warm-up, as the scale benchmark's warm recalls
                memory.recall(question, namespace=bench_scale.NS, config=config)
            reads.clear()
            for question in questions[5:]:
                memory.recall(question, namespace=bench_scale.NS, config=config)
            out[name] = list(reads)
    finally:
        backend.edge_rows = original  # type: ignore[method-assign]
    return out


def replay(backend: Any, reads: list[list[str]], recalls: int) -> dict[str, Any]:
    """Per recall: queries, wall and CPU ms of the reads one unit at a time and one hop at a time."""
    out: dict[str, Any] = {}
    for label, pattern in (("per_node", [[uid] for ids in reads for uid in ids]), ("per_hop", reads)):
        wall, cpu = time.perf_counter(), time.process_time()
        for ids in pattern:
            backend.edge_rows(bench_scale.NS, ids)
        out[label] = {"queries": round(len(pattern) / recalls, 1),
                      "wall_ms": round((time.perf_counter() - wall) * 1000 / recalls, 2),
                      "cpu_ms": round((time.process_time() - cpu) * 1000 / recalls, 2)}
    out["wall_ratio"] = round(out["per_node"]["wall_ms"] / out["per_hop"]["wall_ms"], 2)
    return out


def main() -> None:
    """Build the store, record recall's reads, replay them on SQLite and PostgreSQL; print (and write) the result."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--size", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--out", default=None, help="results JSON (default: stdout only)")
    args = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="edge-reads-")) / "store"
    memory = bench_scale.filled(directory, args.size)
    reads = recorded_reads(memory, args.queries)
    memory.close()
    sqlite_edges, _ = sqlite_storage.open_sqlite_edges(directory / sqlite_storage.EDGES_FILENAME)
    rows = sqlite_edges.edge_rows(bench_scale.NS)
    result: dict[str, Any] = {**run_metadata(None), "size": args.size, "queries": args.queries, "edges": len(rows),
                              "sqlite": {name: replay(sqlite_edges, r, args.queries) for name, r in reads.items()}}
    try:
        server = start_postgres()
    except (ImportError, RuntimeError) as err:
        result["postgres"] = {"skipped": f"{type(err).__name__}: {err}"}
    else:
        try:
            graph = PostgresEdgeBackend(server.dsn)
            for start in range(0, len(rows), 20_000):
                graph.add(bench_scale.NS, [Edge(src=s, dst=d, type=t, weight=w)
                                           for s, d, t, w in rows[start : start + 20_000]])
            result["postgres"] = {name: replay(graph, r, args.queries) for name, r in reads.items()}
            graph.close()
        finally:
            stop_postgres(server)
    sqlite_edges.close()
    emit(result, args.out)


if __name__ == "__main__":
    main()
