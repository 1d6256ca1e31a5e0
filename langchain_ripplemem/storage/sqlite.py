"""SQLite behind the edge and namespace-log seams: the embedded default.

One SQLite file (``ripplemem_graph.sqlite3`` next to the Chroma files, WAL
mode) holds both:

* :class:`SQLiteEdgeBackend`: the ``edges`` table (one row per typed edge,
  ``src < dst``, with its namespace key: edges never cross namespaces) and the
  ``linked`` table (units whose linking finished: an ingest that crashed after
  the unit write but before linking leaves units missing here, and the next
  open links them).
* :class:`SQLiteNamespaceLog`: ``ns_version`` (bumped by every write to a
  namespace) and ``ns_changes`` (what each version changed, so a stale cache in
  another process catches up instead of reloading), plus the writer lock of a
  namespace, a file lock beside the SQLite file
  (:func:`~langchain_ripplemem.storage.locks.namespace_writer`). SQLite's WAL
  mode and file locks need a local disk: for several machines use a server
  backend.

``path=None`` keeps everything in memory, private to one memory object (no
writer lock needed).

The file holds unit ids, namespace keys and edge weights, never a unit's text.
Deleted rows still leave no bytes behind: the connection zeroes what it deletes
(``PRAGMA secure_delete``), and :meth:`SQLiteEdgeBackend.purge` (run after every
forget) checkpoints the write-ahead log into the file and truncates it, so no older
page image stays in ``-wal`` either.

Example:
    >>> from langchain_ripplemem.schemas import Edge
    >>> edges, log = open_sqlite_graph(None)
    >>> edges.add(("u1",), [Edge(src="a", dst="b", type="semantic", weight=0.9)], linked=["b"])
    >>> [e.dst for e in edges.edges(("u1",), ["b"])], edges.linked_ids(("u1",))
    (['b'], {'b'})
    >>> log.record(("u1",), ["b"]), log.changes(("u1",), 0, 1).units
    (1, {'b'})

"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from langchain_ripplemem.schemas import Edge, Namespace, namespace_from_key, namespace_key
from langchain_ripplemem.storage.base import Changes, EdgeRow, Purged
from langchain_ripplemem.storage.locks import namespace_writer

__all__ = ["CHANGES_KEPT", "GRAPH_FILENAME", "WAL_CHECKPOINT_PAGES", "SQLiteEdgeBackend", "SQLiteNamespaceLog",
           "open_sqlite_graph"]

GRAPH_FILENAME = "ripplemem_graph.sqlite3"
# Versions whose changes are kept: a cache further behind than this reloads.
CHANGES_KEPT = 256
# SQLite binds at most 32,766 variables per statement (999 in old builds): chunk id lists.
_CHUNK = 400
# WAL pages before a checkpoint copies them into the file (SQLite's default: 1,000). A write's
# edges land on random pages of two id-keyed indexes (one page each past a few thousand units),
# and a checkpoint copies each page once however often it was written since: at 10,000 (a WAL
# of at most ~40 MB) the edge insert of a 20-unit write costs about a third less CPU at 50k units.
WAL_CHECKPOINT_PAGES = 10_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS edges (
    ns TEXT NOT NULL, src TEXT NOT NULL, dst TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('semantic', 'structural')),
    weight REAL NOT NULL,
    PRIMARY KEY (ns, src, dst, type)
);
CREATE INDEX IF NOT EXISTS edges_by_dst ON edges (ns, dst);
CREATE TABLE IF NOT EXISTS linked (
    ns TEXT NOT NULL, unit_id TEXT NOT NULL, PRIMARY KEY (ns, unit_id)
);
CREATE TABLE IF NOT EXISTS ns_version (
    ns TEXT PRIMARY KEY, version INTEGER NOT NULL
);
-- units = JSON ids added or rewritten (NULL = anything, e.g. a drop: reload),
-- edges = JSON ids that gained edges, removed = JSON ids deleted with their edges.
CREATE TABLE IF NOT EXISTS ns_changes (
    ns TEXT NOT NULL, version INTEGER NOT NULL, units TEXT, edges TEXT, removed TEXT,
    PRIMARY KEY (ns, version)
);
"""
_BUMP = ("INSERT INTO ns_version (ns, version) VALUES (?, 1) "
         "ON CONFLICT (ns) DO UPDATE SET version = version + 1 RETURNING version")


# How long a statement waits for another process's lock before it fails.
_BUSY_SECONDS = 30.0


def _to_wal(conn: sqlite3.Connection) -> None:
    """Put the file in WAL mode, waiting out another process's write as any statement would.

    Switching the mode fails at once with "database is locked" while another connection
    writes (SQLite does not wait on its busy timeout for it): two processes opening a
    new edge file together, one creating the tables while the other switches, made the
    second fail at start.
    """
    deadline, pause = time.monotonic() + _BUSY_SECONDS, 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(2 * pause, 0.1)


class _Connection:
    """One SQLite connection shared by threads (serialised by a lock); SQLite locks across processes."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = str(path) if path is not None else ":memory:"
        if path is not None:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(self.path, check_same_thread=False, timeout=_BUSY_SECONDS)
        self.lock = threading.RLock()
        with self.lock, self.conn:
            if path is not None:
                _to_wal(self.conn)
                self.conn.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
            # Deleted rows (edges, marks, pruned change rows) are overwritten with zeros, not left in free space.
            self.conn.execute("PRAGMA secure_delete=ON")
            self.conn.executescript(_SCHEMA)
            columns = {row[1] for row in self.conn.execute("PRAGMA table_info(ns_changes)")}
            if "removed" not in columns:  # an edge file from before deletes were logged
                self.conn.execute("ALTER TABLE ns_changes ADD COLUMN removed TEXT")

    def purge(self) -> Purged:
        """Copy the write-ahead log into the file and truncate it: no page image from before a delete stays.

        Another process reading the file can keep the checkpoint from finishing; the
        result then says so (its next forget, or any later one, checkpoints again).
        """
        if self.path == ":memory:":
            return Purged()
        with self.lock:
            busy, _, _ = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            return Purged(kept=(f"{self.path}-wal: another process was reading the edge file, so its write-ahead "
                                "log (unit ids of the forgotten units, no text) was not truncated",))
        return Purged(files=(self.path, f"{self.path}-wal"))

    def close(self) -> None:
        with self.lock:
            self.conn.close()


def open_sqlite_graph(path: str | Path | None) -> tuple[SQLiteEdgeBackend, SQLiteNamespaceLog]:
    """The edge backend and namespace log of one SQLite file (``None``: in memory), sharing a connection."""
    connection = _Connection(path)
    return SQLiteEdgeBackend(connection), SQLiteNamespaceLog(connection)


def _ordered(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


class SQLiteEdgeBackend:
    """Typed edges and linked marks per namespace in SQLite (see the module docs)."""

    def __init__(self, connection: _Connection | str | Path | None) -> None:
        self._db = connection if isinstance(connection, _Connection) else _Connection(connection)

    @property
    def path(self) -> str:
        """The SQLite file (``":memory:"`` for an in-memory store)."""
        return self._db.path

    def edges(self, namespace: Namespace, unit_ids: Iterable[str] | None = None) -> list[Edge]:
        """Every edge of the namespace, or only those touching ``unit_ids``."""
        return [Edge(src=s, dst=d, type=t, weight=w) for s, d, t, w in self.edge_rows(namespace, unit_ids)]

    def edge_rows(self, namespace: Namespace, unit_ids: Iterable[str] | None = None) -> list[EdgeRow]:
        """:meth:`edges` as ``(src, dst, type, weight)`` tuples."""
        key = namespace_key(namespace)
        with self._db.lock:
            if unit_ids is None:
                rows = self._db.conn.execute("SELECT src, dst, type, weight FROM edges WHERE ns = ?",
                                             (key,)).fetchall()
            else:
                ids, rows = list(unit_ids), []
                for start in range(0, len(ids), _CHUNK):
                    chunk = ids[start : start + _CHUNK]
                    marks = ",".join("?" * len(chunk))
                    # Two indexed searches: SQLite answers "src IN (..) OR dst IN (..)" by scanning
                    # the whole namespace (a walk reads one node's edges at a time).
                    rows += self._db.conn.execute(
                        f"SELECT rowid, src, dst, type, weight FROM edges WHERE ns = ? AND src IN ({marks}) "
                        f"UNION ALL SELECT rowid, src, dst, type, weight FROM edges WHERE ns = ? AND dst IN ({marks})",
                        (key, *chunk, key, *chunk)).fetchall()
                # In the order they were written, whatever the chunking: a stable order for every reader
                # (walks do not depend on it: expansion keeps each unit's strongest path).
                rows = [row[1:] for row in sorted(rows)]
        return list(dict.fromkeys(rows))  # an edge between two listed ids comes back twice

    def with_edges(self, namespace: Namespace, unit_ids: Iterable[str]) -> set[str]:
        """Those of ``unit_ids`` that have at least one edge: one index probe per end, no edge row read."""
        key, ids = namespace_key(namespace), list(dict.fromkeys(unit_ids))
        found: set[str] = set()
        with self._db.lock:
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                values = ",".join(["(?)"] * len(chunk))
                found.update(row[0] for row in self._db.conn.execute(
                    f"WITH ids(u) AS (VALUES {values}) SELECT u FROM ids "
                    "WHERE EXISTS (SELECT 1 FROM edges WHERE ns = ? AND src = ids.u) "
                    "OR EXISTS (SELECT 1 FROM edges WHERE ns = ? AND dst = ids.u)", (*chunk, key, key)))
        return found

    def add(self, namespace: Namespace, edges: Iterable[Edge], linked: Iterable[str] = ()) -> None:
        """Insert edges and mark units linked, in one transaction."""
        key = namespace_key(namespace)
        rows = [(key, *_ordered(e.src, e.dst), e.type, float(e.weight)) for e in edges]
        with self._db.lock, self._db.conn:
            self._db.conn.executemany(
                "INSERT OR REPLACE INTO edges (ns, src, dst, type, weight) VALUES (?, ?, ?, ?, ?)", rows)
            self._db.conn.executemany("INSERT OR IGNORE INTO linked (ns, unit_id) VALUES (?, ?)",
                                      [(key, uid) for uid in linked])

    def remove_units(self, namespace: Namespace, unit_ids: Iterable[str]) -> int:
        """Delete units' edges and linked marks; returns edges removed."""
        key = namespace_key(namespace)
        removed = 0
        with self._db.lock, self._db.conn:
            for uid in dict.fromkeys(unit_ids):
                removed += self._db.conn.execute(
                    "DELETE FROM edges WHERE ns = ? AND (src = ? OR dst = ?)", (key, uid, uid)).rowcount
                self._db.conn.execute("DELETE FROM linked WHERE ns = ? AND unit_id = ?", (key, uid))
        return removed

    def drop(self, namespace: Namespace) -> int:
        """Remove every edge and mark of exactly this namespace; returns edges removed."""
        key = namespace_key(namespace)
        with self._db.lock, self._db.conn:
            removed = self._db.conn.execute("DELETE FROM edges WHERE ns = ?", (key,)).rowcount
            self._db.conn.execute("DELETE FROM linked WHERE ns = ?", (key,))
        return int(removed)

    def linked_ids(self, namespace: Namespace) -> set[str]:
        """Units whose linking completed."""
        with self._db.lock:
            rows = self._db.conn.execute("SELECT unit_id FROM linked WHERE ns = ?",
                                         (namespace_key(namespace),)).fetchall()
        return {r[0] for r in rows}

    def namespaces(self) -> list[Namespace]:
        """Namespaces that have any edge or linked unit."""
        with self._db.lock:
            rows = self._db.conn.execute("SELECT ns FROM linked UNION SELECT ns FROM edges").fetchall()
        return sorted(namespace_from_key(r[0]) for r in rows)

    def purge(self) -> Purged:
        """Checkpoint and truncate the file's write-ahead log (see :meth:`_Connection.purge`)."""
        return self._db.purge()

    def close(self) -> None:
        """Close the SQLite connection."""
        self._db.close()


class SQLiteNamespaceLog:
    """Namespace versions, their change rows and the namespaces' writer locks (see the module docs)."""

    def __init__(self, connection: _Connection | str | Path | None) -> None:
        self._db = connection if isinstance(connection, _Connection) else _Connection(connection)

    @property
    def path(self) -> str:
        """The SQLite file (``":memory:"`` for an in-memory store)."""
        return self._db.path

    def version(self, namespace: Namespace) -> int:
        """How many writes the namespace has seen (0 for none)."""
        with self._db.lock:
            row = self._db.conn.execute("SELECT version FROM ns_version WHERE ns = ?",
                                        (namespace_key(namespace),)).fetchone()
        return int(row[0]) if row else 0

    def record(self, namespace: Namespace, units: Iterable[str] | None, edges: Iterable[str] = (),
               removed: Iterable[str] = ()) -> int:
        """Log a write; returns the new version (see :meth:`NamespaceLog.record`)."""
        key = namespace_key(namespace)
        with self._db.lock, self._db.conn:
            version = int(self._db.conn.execute(_BUMP, (key,)).fetchone()[0])
            self._db.conn.execute(
                "INSERT OR REPLACE INTO ns_changes (ns, version, units, edges, removed) VALUES (?, ?, ?, ?, ?)",
                (key, version, None if units is None else json.dumps(sorted(set(units))),
                 json.dumps(sorted(set(edges))), json.dumps(sorted(set(removed)))))
            self._db.conn.execute("DELETE FROM ns_changes WHERE ns = ? AND version <= ?",
                                  (key, version - CHANGES_KEPT))
        return version

    def changes(self, namespace: Namespace, after: int, upto: int) -> Changes | None:
        """What versions ``after+1 .. upto`` changed, merged.

        A cache applies them as: drop ``removed``, then fetch ``units`` and the edges
        of ``edges`` as stored now (an id deleted and written again comes back).
        ``None`` when a reload is needed: a drop happened, or some version left no
        change row (pruned, or written by an older release).
        """
        with self._db.lock:
            rows = self._db.conn.execute(
                "SELECT units, edges, removed FROM ns_changes WHERE ns = ? AND version > ? AND version <= ?",
                (namespace_key(namespace), after, upto)).fetchall()
        if len(rows) != upto - after or any(units is None for units, _, _ in rows):
            return None
        return Changes(units={u for units, _, _ in rows for u in json.loads(units)},
                       edges={u for _, edges, _ in rows for u in json.loads(edges)},
                       removed={u for _, _, removed in rows for u in json.loads(removed or "[]")})

    def writer(self, namespace: Namespace) -> AbstractContextManager[None]:
        """The namespace's cross-process writer lock, a file beside the SQLite file.

        Every process that shares this file takes it around a write of the
        namespace, so their writes never interleave. An in-memory log is private to
        one object: nothing to lock.
        """
        if self._db.path == ":memory:":
            return nullcontext()
        return namespace_writer(self._db.path, namespace_key(namespace))

    def close(self) -> None:
        """Close the SQLite connection."""
        self._db.close()
