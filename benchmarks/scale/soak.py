"""Soak test: N writer processes and M reader processes on one Chroma server.

The processes are in ``soak_workers.py``. Each writer does ``--ops`` operations on its own namespace (``soak/w<i>``, or
one shared namespace with ``--shared``): an ``add_conversation`` of a small new
conversation, and every ``--delete-every``-th operation a ``delete`` of one
unit it wrote earlier. Each reader recalls on random writer namespaces, one
recall every ``--read-pause`` seconds, for as long as any writer is writing
(fast writes must not leave the readers with an empty store); then once more
per namespace, with the writers done. All processes start together. At the end
a fresh memory (as a new process would open it) compares what the writers
expect with what the store holds and runs ``check_store``.

Reported (and written to ``--out`` as JSON): operations/s (all, writes, reads),
errors, lost units (expected but missing or unreadable; must be 0), resurrected units
(deleted but present), cross-namespace leaks seen by readers, recall latency
p50/p95, write latency p50/p95, CPU seconds, the integrity summary, and
staleness: before each recall a reader notes how many units the writers had
already committed to that namespace (shared counters the writers bump after each
operation returns); after it, how many its own view held. The shortfall is how
far behind the reader's cached view was (catch-up follows PostgreSQL
notifications or the SQLite change log); the final recalls, after every writer
finished, must show none.

Without ``--host``/``--port`` a local server is started (``chroma run``) in a
temporary directory and stopped at the end.

    python -m benchmarks.scale.soak --writers 2 --readers 2 --ops 30 --out results/soak.json

``--postgres DSN`` (or ``local``: a throwaway cluster) keeps edges, the namespace log
and writer locks in PostgreSQL (``storage/postgres.py``): the shared deployment.

``--embedded DIR`` points every process at one embedded ``persist_directory``
instead: the unsupported setup, kept to reproduce why it is refused, e.g.
``--embedded /tmp/x --writers 2 --readers 1 --ops 150 --turns 10 --delete-every 0``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

import langchain_ripplemem
from benchmarks.processes import free_port, stop_process_group
from benchmarks.scale.soak_workers import make_memory, reader, writer, writer_namespace
from benchmarks.scale.throwaway_postgres import start_postgres, stop_postgres


def _pct(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 2) if values else None


def _commit() -> str:
    """The commit of the package this run imported (``+dirty`` when its tree has changes)."""
    root = Path(langchain_ripplemem.__file__).resolve().parents[1]
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--", ".",
                            ":!results"],  # a previous run's results file is not the code
                           capture_output=True, text=True)
    return (head.stdout.strip() or "unknown") + ("+dirty" if dirty.stdout.strip() else "")


def start_server(path: Path) -> tuple[subprocess.Popen[bytes], int]:
    """Start ``chroma run`` on a free port with its data at ``path``; the process and the port, once it answers."""
    import chromadb

    exe = str(Path(sys.executable).with_name("chroma"))
    if not Path(exe).exists():
        exe = shutil.which("chroma") or sys.exit("the `chroma` CLI is not installed (pip install chromadb)")
    port = free_port()
    log = open(path.parent / "chroma.log", "wb")  # noqa: SIM115 - lives as long as the server
    proc = subprocess.Popen([exe, "run", "--path", str(path), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            chromadb.HttpClient(host="127.0.0.1", port=port).heartbeat()
            return proc, port
        except Exception:  # noqa: BLE001 - not up yet
            time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    sys.exit(f"Chroma server did not start; see {path.parent / 'chroma.log'}")


def main(argv: list[str] | None = None) -> int:
    """Run the writers and readers, check the store; print and write the summary (exit 1 on a failure)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=2)
    parser.add_argument("--readers", type=int, default=2)
    parser.add_argument("--ops", type=int, default=30, help="operations per writer")
    parser.add_argument("--read-pause", type=float, default=0.05,
                        help="seconds a reader waits between recalls (readers read while any writer writes)")
    parser.add_argument("--turns", type=int, default=6, help="turns per written conversation")
    parser.add_argument("--delete-every", type=int, default=5, help="every n-th write op is a delete (0: never)")
    parser.add_argument("--k", type=int, default=10, help="memories per recall")
    parser.add_argument("--shared", action="store_true", help="all writers use one namespace")
    parser.add_argument("--embeddings", choices=["hash", "minilm"], default="hash")
    parser.add_argument("--host", default=None)
    parser.add_argument("--port", type=int, default=None)
    parser.add_argument("--edges-path", default=None, help="edge SQLite file (default: a temp file)")
    parser.add_argument("--embedded", default=None, metavar="DIR",
                        help="UNSUPPORTED, for reproducing: all processes open this embedded persist_directory "
                             "instead of a server (expect StoreLockedError once the lock is wired)")
    parser.add_argument("--postgres", default=None, metavar="DSN",
                        help='edges, namespace log and writer locks in PostgreSQL at DSN ("local": start a '
                             "throwaway cluster, as the tests do) instead of an SQLite file")
    parser.add_argument("--traceback", action="store_true", help="print each error's traceback")
    parser.add_argument("--profile", default=None, metavar="DIR", help="write each writer's cProfile stats here")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="ripplemem-soak-"))
    server = postgres = None
    if args.postgres == "local":
        postgres = start_postgres()
        args.postgres = postgres.dsn
    if args.embedded:
        host, port = "", 0
    elif args.host is None:
        server, port = start_server(work / "chroma")
        host = "127.0.0.1"
    else:
        host, port = args.host, args.port or 8000
    cfg = {"host": host, "port": port, "collection": f"soak-{uuid.uuid4().hex[:8]}",
           "edges_path": args.edges_path or str(work / "graph.sqlite3"), "ops": args.ops,
           "turns": args.turns, "delete_every": args.delete_every, "k": args.k, "shared": args.shared,
           "embeddings": args.embeddings, "writers": args.writers, "traceback": args.traceback,
           "embedded": args.embedded, "postgres": args.postgres, "profile": args.profile,
           "read_pause": args.read_pause}
    try:
        ctx = mp.get_context("spawn")
        start = ctx.Barrier(args.writers + args.readers + 1)
        results = ctx.Queue()
        shared = argparse.Namespace(committed=ctx.Array("i", args.writers), writing=ctx.Value("i", args.writers))
        procs = [ctx.Process(target=writer, args=(i, cfg, start, results, shared)) for i in range(args.writers)]
        procs += [ctx.Process(target=reader, args=(i, cfg, start, results, shared)) for i in range(args.readers)]
        for p in procs:
            p.start()
        start.wait(timeout=300)
        began = time.perf_counter()
        outs = [results.get(timeout=3600) for _ in procs]
        wall = time.perf_counter() - began
        for p in procs:
            p.join(timeout=60)

        from langchain_ripplemem.cli.integrity import check_store

        try:
            memory = make_memory(cfg)
        except Exception as err:  # noqa: BLE001 - e.g. a store the run corrupted
            raise SystemExit(f"cannot open the store after the run: {type(err).__name__}: {err}") from None
        writers = [o for o in outs if o["role"] == "writer"]
        readers = [o for o in outs if o["role"] == "reader"]
        expected: dict[tuple[str, ...], set[str]] = {}
        deleted: dict[tuple[str, ...], set[str]] = {}
        for w in writers:
            ns = writer_namespace(cfg, w["index"])
            expected.setdefault(ns, set()).update(set(w["written"]) - set(w["deleted"]))
            deleted.setdefault(ns, set()).update(w["deleted"])
        store_errors: list[str] = []
        found: dict[tuple[str, ...], set[str]] = {}
        for ns in expected:
            try:
                found[ns] = {u.id for u in memory.list_units(ns)}
            except Exception as err:  # noqa: BLE001 - a namespace the store cannot load any more
                store_errors.append(f"{'/'.join(ns)}: {type(err).__name__}: {err}"[:300])
                found[ns] = set()
        lost = sum(len(expected[ns] - found[ns]) for ns in expected)
        resurrected = sum(len(deleted[ns] & found[ns]) for ns in expected)
        unexpected = sum(len(found[ns] - expected[ns] - deleted[ns]) for ns in expected)
        dangling = None
        try:
            report = check_store(memory)
            integrity_ok, integrity = report.ok, report.summary()
            dangling = sum(len(item.dangling_edges) for item in report.namespaces)
        except Exception as err:  # noqa: BLE001
            integrity_ok, integrity = False, f"check_store failed: {type(err).__name__}: {err}"
        recall_ms = [x for r in readers for x in r["latency_ms"]]
        write_ms = [x for w in writers for x in w["latency_ms"]]
        lag = [x for r in readers for x in r["lag"]]
        n_write, n_read = sum(w["ops"] for w in writers), sum(r["ops"] for r in readers)
        summary = {
            "config": {k: v for k, v in cfg.items() if k not in ("edges_path", "postgres", "profile")}
            | {"readers": args.readers, "edges": "postgres" if cfg["postgres"] else "sqlite"},
            "commit": _commit(), "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
            "wall_seconds": round(wall, 2),
            "ops": n_write + n_read, "ops_per_s": round((n_write + n_read) / wall, 2),
            "write_ops": n_write, "write_ops_per_s": round(n_write / wall, 2),
            "read_ops": n_read, "read_ops_per_s": round(n_read / wall, 2),
            "errors": sum(len(o["errors"]) for o in outs),
            "error_samples": [e for o in outs for e in o["errors"]][:10],
            "expected_units": sum(len(v) for v in expected.values()),
            "found_units": sum(len(found[ns] & expected[ns]) for ns in expected),
            "lost_units": lost, "resurrected_units": resurrected, "unexpected_units": unexpected,
            "cross_namespace_leaks": sum(r["leaks"] for r in readers),
            "dangling_edges": dangling,
            # recalls that found nothing although the writers had already committed units there
            "empty_recalls": sum(r["empty"] for r in readers),
            "stale_recalls": sum(1 for r in readers for x in r["lag"] if x > 0),
            "staleness_units_p50": _pct(lag, 50), "staleness_units_p95": _pct(lag, 95),
            "staleness_units_max": max(lag, default=None),
            "recall_ms_p50": _pct(recall_ms, 50), "recall_ms_p95": _pct(recall_ms, 95),
            "write_ms_p50": _pct(write_ms, 50), "write_ms_p95": _pct(write_ms, 95),
            # CPU seconds of the writer and reader processes (steadier than wall time on a shared machine)
            "writer_cpu_s": round(sum(w.get("cpu_seconds", 0.0) for w in writers), 2),
            "reader_cpu_s": round(sum(r.get("cpu_seconds", 0.0) for r in readers), 2),
            # each reader's last recall per namespace, after every writer finished: view must equal committed
            "reader_final_views": [r["final"] for r in readers],
            "final_stale_views": sum(1 for r in readers for v in r["final"].values()
                                     if v is None or v["view"] != v["committed"]),
            "final_units": {"/".join(ns): len(ids) for ns, ids in found.items()},
            "store_errors": store_errors,
            "integrity_ok": integrity_ok, "integrity": integrity,
        }
    finally:
        if server is not None:
            stop_process_group(server)
        if postgres is not None:
            stop_postgres(postgres)
        shutil.rmtree(work, ignore_errors=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(summary, indent=2) + "\n")
    shown = {k: v for k, v in summary.items() if k not in ("integrity", "config", "machine")}
    print(json.dumps(shown, indent=2))
    print(summary["integrity"])
    bad = (summary["errors"] or lost or resurrected or summary["cross_namespace_leaks"] or not integrity_ok
           or summary["final_stale_views"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
