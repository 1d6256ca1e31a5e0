"""The soak test's processes: its writers and readers, the memory each opens, and what they write.

``soak.py`` starts them together and checks what they leave behind.
"""

from __future__ import annotations

import hashlib
import random
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_ripplemem.storage.postgres import PostgresGraph

NAMES = ["Maya", "Sam", "Priya", "Jonas", "Ana"]
TOPICS = ["hiking", "oysters", "birthday", "allergy", "concert", "garden", "chess", "sailing",
          "pottery", "marathon", "violin", "camping", "baking", "museum", "cycling", "yoga"]
PLACES = ["Portland", "Seattle", "Boise", "Denver", "Austin", "Tucson"]
QUERIES = ["Who went hiking in Portland?", "What did Maya say about the concert?",
           "When was the birthday dinner?", "Which allergy did Sam mention?",
           "What happened in Seattle last week?", "Who plays the violin?"]


class HashEmbeddings(Embeddings):
    """Hashed bag of words (fast, deterministic): the store is under test, not the encoder."""

    dim = 384

    def _vec(self, text: str) -> list[float]:
        v = np.zeros(self.dim, dtype=np.float32)
        for tok in text.lower().replace(",", " ").replace(".", " ").replace("?", " ").split():
            v[int(hashlib.md5(tok.encode()).hexdigest(), 16) % self.dim] += 1.0
        v[0] += 1e-3
        return (v / np.linalg.norm(v)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text."""
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """The vector of ``text``."""
        return self._vec(text)


def conversation(cid: str, n_turns: int, seed: int) -> dict[str, Any]:
    """A one-session conversation of ``n_turns`` seeded turns, its id in every text."""
    rng = random.Random(seed)
    turns = [{"id": f"S1:{t}", "speaker": NAMES[t % len(NAMES)],
              "text": f"{rng.choice(NAMES)} and I went to a {rng.choice(TOPICS)} event in "
                      f"{rng.choice(PLACES)}, then talked about {rng.choice(TOPICS)} ({cid}/{t})."}
             for t in range(n_turns)]
    day = 1 + seed % 28
    return {"id": cid, "sessions": [{"id": "S1", "time": f"2026-06-{day:02d}T18:00:00+00:00", "turns": turns}]}


def make_memory(cfg: dict[str, Any]) -> Any:
    """The memory a process of the run opens: on the Chroma server (edges in SQLite or PostgreSQL) or embedded."""
    import chromadb
    from chromadb.config import Settings

    from langchain_ripplemem.memory import RippleMemory

    embeddings = HashEmbeddings() if cfg["embeddings"] == "hash" else None
    if cfg["embedded"]:  # the unsupported setup, to reproduce what goes wrong
        return RippleMemory(embeddings, persist_directory=cfg["embedded"], collection_name=cfg["collection"])
    client = chromadb.HttpClient(host=cfg["host"], port=cfg["port"],
                                 settings=Settings(anonymized_telemetry=False))
    if cfg.get("postgres"):  # the shared deployment: edges, log and writer locks in PostgreSQL
        graph = PostgresGraph(cfg["postgres"])
        return RippleMemory(embeddings, client=client, collection_name=cfg["collection"],
                            graph_store=graph)
    return RippleMemory(embeddings, client=client, collection_name=cfg["collection"],
                        graph_path=cfg["graph_path"])


def writer_namespace(cfg: dict[str, Any], i: int) -> tuple[str, ...]:
    """Writer ``i``'s namespace (the shared one with ``--shared``)."""
    return ("soak", "shared") if cfg["shared"] else ("soak", f"w{i}")


def writer(i: int, cfg: dict[str, Any], start: Any, results: Any, shared: Any) -> None:
    """Writer ``i``: ``cfg["ops"]`` writes and deletes after the start barrier; its record onto ``results``."""
    out: dict[str, Any] = {"role": "writer", "index": i, "ops": 0, "errors": [], "written": [],
                           "deleted": [], "latency_ms": []}
    try:
        memory = make_memory(cfg)
        ns = writer_namespace(cfg, i)
        rng = random.Random(1000 + i)
        profiler = _profiler(cfg)
        start.wait()
        began, cpu = time.perf_counter(), time.process_time()
        for op in range(cfg["ops"]):
            t0 = time.perf_counter()
            kind = "add"
            try:
                if cfg["delete_every"] and op % cfg["delete_every"] == cfg["delete_every"] - 1 and out["written"]:
                    kind = "delete"
                    alive = sorted(set(out["written"]) - set(out["deleted"]))
                    victim = rng.choice(alive)
                    if memory.delete([victim], namespace=ns).units != 1:
                        raise RuntimeError(f"delete of own unit {victim} deleted nothing")
                    out["deleted"].append(victim)
                else:
                    report = memory.add_conversation(
                        conversation(f"w{i}-{op}", cfg["turns"], seed=i * 100_000 + op), namespace=ns)
                    out["written"] += report.unit_ids
            except Exception as err:  # noqa: BLE001 - counted and reported
                out["errors"].append(f"writer {i} {kind}: {type(err).__name__}: {err}"[:500])
                if cfg["traceback"]:
                    traceback.print_exc()
            out["latency_ms"].append((time.perf_counter() - t0) * 1000)
            out["ops"] += 1
            shared.committed[i] = len(out["written"]) - len(out["deleted"])  # units alive in the store
        out["seconds"], out["cpu_seconds"] = time.perf_counter() - began, time.process_time() - cpu
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(str(Path(cfg["profile"]) / f"writer{i}.prof"))
    except Exception:  # noqa: BLE001
        out["errors"].append(traceback.format_exc()[-1500:])
    finally:
        with shared.writing.get_lock():
            shared.writing.value -= 1
    results.put(out)


def _profiler(cfg: dict[str, Any]) -> Any:
    """A running cProfile when ``--profile DIR`` was given (one file per writer)."""
    if not cfg.get("profile"):
        return None
    import cProfile

    Path(cfg["profile"]).mkdir(parents=True, exist_ok=True)
    profiler = cProfile.Profile()
    profiler.enable()
    return profiler


def _committed(cfg: dict[str, Any], shared: Any, ns: tuple[str, ...]) -> int:
    """Units the writers of ``ns`` have committed and not deleted, as of their last finished operation."""
    return sum(shared.committed[w] for w in range(cfg["writers"]) if writer_namespace(cfg, w) == ns)


def reader(i: int, cfg: dict[str, Any], start: Any, results: Any, shared: Any) -> None:
    """Reader ``i``: recalls while any writer writes, then once per namespace; its record onto ``results``."""
    out: dict[str, Any] = {"role": "reader", "index": i, "ops": 0, "errors": [], "leaks": 0,
                           "latency_ms": [], "empty": 0, "lag": [], "final": {}}
    try:
        memory = make_memory(cfg)
        rng = random.Random(2000 + i)
        namespaces = sorted({writer_namespace(cfg, w) for w in range(cfg["writers"])})

        def recall(ns: tuple[str, ...]) -> tuple[int, int] | None:
            """One recall; (units committed before it, units in this process's view after it)."""
            committed = _committed(cfg, shared, ns)
            t0 = time.perf_counter()
            try:
                result = memory.recall(rng.choice(QUERIES), namespace=ns, k=cfg["k"])
            except Exception as err:  # noqa: BLE001
                out["errors"].append(f"reader {i} recall: {type(err).__name__}: {err}"[:500])
                if cfg["traceback"]:
                    traceback.print_exc()
                return None
            finally:
                out["ops"] += 1
            out["latency_ms"].append((time.perf_counter() - t0) * 1000)
            out["leaks"] += sum(1 for m in result.memories if m.unit.namespace != ns)
            out["empty"] += committed > 0 and not result.memories
            index = memory.index.cached(ns)  # the view the recall used, without a catch-up of its own
            return committed, len(index.units) if index is not None else 0

        start.wait()
        began, cpu = time.perf_counter(), time.process_time()
        while shared.writing.value > 0:
            seen = recall(rng.choice(namespaces))
            if seen is not None:
                out["lag"].append(max(0, seen[0] - seen[1]))
            time.sleep(cfg["read_pause"])
        out["seconds"], out["cpu_seconds"] = time.perf_counter() - began, time.process_time() - cpu
        for ns in namespaces:  # every writer is done: a view that still lags is stale for good
            seen = recall(ns)
            out["final"]["/".join(ns)] = {"committed": seen[0], "view": seen[1]} if seen else None
    except Exception:  # noqa: BLE001
        out["errors"].append(traceback.format_exc()[-1500:])
    results.put(out)
