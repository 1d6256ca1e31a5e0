"""Durable typed edges: SQLite next to the Chroma directory, NetworkX in memory.

The edge table is the source of truth; a NetworkX graph per namespace is built
from it lazily and kept in step with every write, so expansion never touches
disk. A pair of units may carry both edge types: the NetworkX edge holds a
``{"semantic": w, "structural": w}`` mapping.

Edges never cross namespaces: every row carries its namespace key, and both
ends are checked against it on insert.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import NamedTuple

import networkx as nx

from langchain_ripplemem.schemas import Edge, Namespace, namespace_key
from langchain_ripplemem.storage.locks import namespace_writer

_SCHEMA = """
CREATE TABLE IF NOT EXISTS edges (
    ns TEXT NOT NULL, src TEXT NOT NULL, dst TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('semantic', 'structural')),
    weight REAL NOT NULL,
    PRIMARY KEY (ns, src, dst, type)
);
CREATE INDEX IF NOT EXISTS edges_by_dst ON edges (ns, dst);
-- units whose linking finished: an ingest that crashed after the unit write
-- but before linking leaves units missing here, and the next open links them.
CREATE TABLE IF NOT EXISTS linked (
    ns TEXT NOT NULL, unit_id TEXT NOT NULL, PRIMARY KEY (ns, unit_id)
);
-- bumped by every write to a namespace, so another process (or another memory
-- object) on the same store knows its cached view of that namespace is stale.
CREATE TABLE IF NOT EXISTS ns_version (
    ns TEXT PRIMARY KEY, version INTEGER NOT NULL
);
-- what each version changed, so a stale cache can catch up instead of reloading:
-- units = JSON ids whose stored record was added or rewritten, edges = JSON ids that
-- gained edges, removed = JSON ids deleted (with their edges); units NULL = anything
-- else (a drop): reload everything.
CREATE TABLE IF NOT EXISTS ns_changes (
    ns TEXT NOT NULL, version INTEGER NOT NULL, units TEXT, edges TEXT, removed TEXT,
    PRIMARY KEY (ns, version)
);
"""
_BUMP = ("INSERT INTO ns_version (ns, version) VALUES (?, 1) "
         "ON CONFLICT (ns) DO UPDATE SET version = version + 1 RETURNING version")
# Versions whose changes are kept: a cache further behind than this reloads.
CHANGES_KEPT = 256

GRAPH_FILENAME = "ripplemem_graph.sqlite3"


class Changes(NamedTuple):
    """What a run of versions changed in a namespace (see :meth:`EdgeStore.changes`)."""

    units: set[str]  # ids whose stored record was added or rewritten
    edges: set[str]  # ids that gained edges
    removed: set[str]  # ids deleted, with every edge touching them


class EdgeStore:
    """Typed edges per namespace, durable in SQLite and mirrored in NetworkX.

    Args:
        path: SQLite file, or ``None`` for an in-memory store (ephemeral memories).

    Example:
        >>> from langchain_ripplemem.schemas import Edge
        >>> store = EdgeStore(None)
        >>> store.add_edges(("u1",), [Edge(src="a", dst="b", type="semantic", weight=0.9)])
        1
        >>> store.neighbors(("u1",), "b")
        {'a': {'semantic': 0.9}}

    """

    def __init__(self, path: str | Path | None) -> None:
        self.path = str(path) if path is not None else ":memory:"
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        # One connection shared by threads, serialised by a lock: SQLite's own
        # locking then handles other processes on the same file.
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0)
        self._lock = threading.RLock()
        with self._lock, self._conn:
            if path is not None:
                self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.executescript(_SCHEMA)
            columns = {row[1] for row in self._conn.execute("PRAGMA table_info(ns_changes)")}
            if "removed" not in columns:  # an edge file from before deletes were logged
                self._conn.execute("ALTER TABLE ns_changes ADD COLUMN removed TEXT")
        self._graphs: dict[str, nx.Graph] = {}

    # -- reads -----------------------------------------------------------------
    def graph(self, namespace: Namespace) -> nx.Graph:
        """The namespace's graph (loaded from SQLite on first use)."""
        key = namespace_key(namespace)
        with self._lock:
            graph = self._graphs.get(key)
            if graph is None:
                graph = nx.Graph()
                rows = self._conn.execute(
                    "SELECT src, dst, type, weight FROM edges WHERE ns = ?", (key,)
                ).fetchall()
                for src, dst, etype, weight in rows:
                    _put(graph, src, dst, etype, weight)
                self._graphs[key] = graph
            return graph

    def neighbors(self, namespace: Namespace, unit_id: str) -> dict[str, dict[str, float]]:
        """Neighbour id -> ``{edge type: weight}`` for one unit."""
        graph = self.graph(namespace)
        if unit_id not in graph:
            return {}
        return {nbr: dict(data["types"]) for nbr, data in graph.adj[unit_id].items()}

    def edges(self, namespace: Namespace) -> list[Edge]:
        """All edges of a namespace."""
        out = []
        for a, b, data in self.graph(namespace).edges(data=True):
            src, dst = _ordered(a, b)
            out += [Edge(src=src, dst=dst, type=etype, weight=w)  # type: ignore[arg-type]
                    for etype, w in sorted(data["types"].items())]
        return sorted(out, key=lambda e: (e.src, e.dst, e.type))

    def count(self, namespace: Namespace) -> dict[str, int]:
        """Edge counts by type."""
        counts = {"semantic": 0, "structural": 0}
        for _, _, data in self.graph(namespace).edges(data=True):
            for etype in data["types"]:
                counts[etype] += 1
        return counts

    def linked_ids(self, namespace: Namespace) -> set[str]:
        """Units whose linking completed."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT unit_id FROM linked WHERE ns = ?", (namespace_key(namespace),)
            ).fetchall()
        return {r[0] for r in rows}

    def stored_rows(self, namespace: Namespace) -> list[tuple[str, str, str]]:
        """``(src, dst, type)`` rows as they are on disk, bypassing the cached graph (integrity checks)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT src, dst, type FROM edges WHERE ns = ? ORDER BY src, dst, type",
                (namespace_key(namespace),)).fetchall()
        return [(str(a), str(b), str(t)) for a, b, t in rows]

    def version(self, namespace: Namespace) -> int:
        """How many writes the namespace has seen (0 for none)."""
        with self._lock:
            row = self._conn.execute("SELECT version FROM ns_version WHERE ns = ?",
                                     (namespace_key(namespace),)).fetchone()
        return int(row[0]) if row else 0

    def bump(self, namespace: Namespace, units: Iterable[str] | None = None,
             removed: Iterable[str] = ()) -> int:
        """Record a write: ids added or rewritten (``None``: anything, e.g. a drop) and ids deleted.

        Returns the new version.
        """
        with self._lock, self._conn:
            return self._bump(namespace_key(namespace), units, (), removed)

    def _bump(self, key: str, units: Iterable[str] | None, edges: Iterable[str],
              removed: Iterable[str] = ()) -> int:
        """Next version and its change row (inside the caller's transaction)."""
        version = int(self._conn.execute(_BUMP, (key,)).fetchone()[0])
        self._conn.execute(
            "INSERT OR REPLACE INTO ns_changes (ns, version, units, edges, removed) VALUES (?, ?, ?, ?, ?)",
            (key, version, None if units is None else json.dumps(sorted(set(units))),
             json.dumps(sorted(set(edges))), json.dumps(sorted(set(removed)))))
        self._conn.execute("DELETE FROM ns_changes WHERE ns = ? AND version <= ?", (key, version - CHANGES_KEPT))
        return version

    def changes(self, namespace: Namespace, after: int, upto: int) -> Changes | None:
        """What versions ``after+1 .. upto`` changed, merged.

        A cache applies them as: drop ``removed``, then fetch ``units`` and the edges
        of ``edges`` as stored now (an id deleted and written again comes back).
        ``None`` when a reload is needed: a drop happened, or some version left no
        change row (pruned, or written by an older release).
        """
        with self._lock:
            rows = self._conn.execute(
                "SELECT units, edges, removed FROM ns_changes WHERE ns = ? AND version > ? AND version <= ?",
                (namespace_key(namespace), after, upto)).fetchall()
        if len(rows) != upto - after or any(units is None for units, _, _ in rows):
            return None
        return Changes(units={u for units, _, _ in rows for u in json.loads(units)},
                       edges={u for _, edges, _ in rows for u in json.loads(edges)},
                       removed={u for _, _, removed in rows for u in json.loads(removed or "[]")})

    def catch_up(self, namespace: Namespace, unit_ids: set[str], removed: Iterable[str] = ()) -> None:
        """Drop ``removed`` from a cached graph, then add the stored edges touching ``unit_ids``.

        A namespace without a cached graph is left alone: its first use loads it whole.
        """
        key = namespace_key(namespace)
        ids = list(unit_ids)
        with self._lock:
            graph = self._graphs.get(key)
            if graph is None:
                return
            graph.remove_nodes_from(list(removed))
            for start in range(0, len(ids), 400):  # SQLite's bound-parameter limit
                chunk = ids[start : start + 400]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT src, dst, type, weight FROM edges WHERE ns = ? AND (src IN ({marks}) "
                    f"OR dst IN ({marks}))", (key, *chunk, *chunk)).fetchall()
                for src, dst, etype, weight in rows:
                    _put(graph, src, dst, etype, weight)

    def writer(self, namespace: Namespace) -> AbstractContextManager[None]:
        """The namespace's cross-process writer lock (``locking.namespace_writer``) for a file store.

        Every process that shares this edge file takes it around a write of the
        namespace, so their writes (units, links, version bumps) never interleave.
        An in-memory store is private to one object: nothing to lock.
        """
        if self.path == ":memory:":
            return nullcontext()
        return namespace_writer(self.path, namespace_key(namespace))

    def invalidate(self, namespace: Namespace) -> None:
        """Forget the cached graph of a namespace; the next use reloads it from SQLite."""
        with self._lock:
            self._graphs.pop(namespace_key(namespace), None)

    def namespaces(self) -> list[str]:
        """Namespace keys that have any edge or linked unit."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT ns FROM linked UNION SELECT ns FROM edges"
            ).fetchall()
        return [r[0] for r in rows]

    # -- writes ----------------------------------------------------------------
    def add_edges(
        self, namespace: Namespace, edges: Iterable[Edge], linked: Iterable[str] = ()
    ) -> int:
        """Insert edges (and mark units linked) in one transaction; returns edges written."""
        key = namespace_key(namespace)
        rows = [(key, *_ordered(e.src, e.dst), e.type, float(e.weight)) for e in edges]
        linked = list(linked)
        with self._lock:
            graph = self.graph(namespace)
            with self._conn:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO edges (ns, src, dst, type, weight) "
                    "VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
                self._conn.executemany(
                    "INSERT OR IGNORE INTO linked (ns, unit_id) VALUES (?, ?)",
                    [(key, uid) for uid in linked],
                )
                self._bump(key, (), [*linked, *(end for row in rows for end in row[1:3])])
            for _, src, dst, etype, weight in rows:
                _put(graph, src, dst, etype, weight)
        return len(rows)

    def remove_units(self, namespace: Namespace, unit_ids: Iterable[str]) -> int:
        """Delete units' edges and linked marks; returns edges removed."""
        key = namespace_key(namespace)
        ids = list(dict.fromkeys(unit_ids))
        removed = 0
        with self._lock:
            graph = self.graph(namespace)
            with self._conn:
                for uid in ids:
                    cur = self._conn.execute(
                        "DELETE FROM edges WHERE ns = ? AND (src = ? OR dst = ?)", (key, uid, uid)
                    )
                    removed += cur.rowcount
                    self._conn.execute(
                        "DELETE FROM linked WHERE ns = ? AND unit_id = ?", (key, uid)
                    )
                self._bump(key, (), (), removed=ids)
            graph.remove_nodes_from(ids)
        return removed

    def drop_namespace(self, namespace: Namespace) -> None:
        """Remove every edge and mark of exactly this namespace."""
        key = namespace_key(namespace)
        with self._lock:
            with self._conn:
                self._conn.execute("DELETE FROM edges WHERE ns = ?", (key,))
                self._conn.execute("DELETE FROM linked WHERE ns = ?", (key,))
                self._bump(key, None, ())
            self._graphs.pop(key, None)

    def close(self) -> None:
        """Close the SQLite connection."""
        with self._lock:
            self._conn.close()


def _ordered(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def _put(graph: nx.Graph, src: str, dst: str, etype: str, weight: float) -> None:
    if graph.has_edge(src, dst):
        graph.edges[src, dst]["types"][etype] = weight
    else:
        graph.add_edge(src, dst, types={etype: weight})
