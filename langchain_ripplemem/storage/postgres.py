"""PostgreSQL behind the edge and namespace-log seams: the shared deployment's graph store.

With units in a Chroma server, every process on every host that opens
``PostgresGraph(dsn)`` shares one memory:

* edges and linked marks (:class:`~langchain_ripplemem.storage.base.EdgeBackend`):
  tables ``ripplemem_edges`` and ``ripplemem_linked``; an edge batch and its
  linked marks commit in one transaction;
* the namespace log (:class:`~langchain_ripplemem.storage.base.NamespaceLog`):
  ``ripplemem_ns_version`` and ``ripplemem_ns_changes``, bumped in one
  transaction that also sends ``NOTIFY ripplemem_ns`` with the namespace and
  its new version;
* writer coordination: a session advisory lock per namespace
  (``pg_advisory_lock(hashtextextended(key, 0))``) held on a pooled connection
  for the length of a write; PostgreSQL releases it when a writer dies;
* cache catch-up: a listener thread (``LISTEN ripplemem_ns``) keeps the versions
  it has been told, so a read asks the database for a namespace's version only
  the first time, and whenever the listener is down. Under the writer lock the
  version is always read from the database: a writer never builds on a stale cache.

Use it as the graph store of a memory (psycopg 3 and psycopg_pool: the ``[postgres]`` extra)::

    graph = PostgresGraph("postgresql://app@db:5432/memories")
    memory = RippleMemory(client=chromadb.HttpClient(host="chroma"), graph_store=graph)
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from langchain_ripplemem.schemas import Edge, Namespace, namespace_from_key, namespace_key
from langchain_ripplemem.storage.base import Changes, EdgeRow, Purged

__all__ = ["CHANNEL", "CHANGES_KEPT", "PostgresGraph"]

CHANNEL = "ripplemem_ns"
# Versions whose changes are kept: a cache further behind than this reloads.
CHANGES_KEPT = 256
_LISTEN_POLL_SECONDS = 1.0
_log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS ripplemem_edges (
    ns TEXT NOT NULL, src TEXT NOT NULL, dst TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('semantic', 'structural')),
    weight DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (ns, src, dst, type)
);
CREATE INDEX IF NOT EXISTS ripplemem_edges_by_dst ON ripplemem_edges (ns, dst);
CREATE TABLE IF NOT EXISTS ripplemem_linked (ns TEXT NOT NULL, unit_id TEXT NOT NULL, PRIMARY KEY (ns, unit_id));
CREATE TABLE IF NOT EXISTS ripplemem_ns_version (ns TEXT PRIMARY KEY, version BIGINT NOT NULL);
-- units = JSON ids added or rewritten (NULL = anything, e.g. a drop: reload),
-- edges = JSON ids that gained edges, removed = JSON ids deleted with their edges.
CREATE TABLE IF NOT EXISTS ripplemem_ns_changes (
    ns TEXT NOT NULL, version BIGINT NOT NULL, units JSONB, edges JSONB NOT NULL, removed JSONB NOT NULL,
    PRIMARY KEY (ns, version)
);
"""
# A write's edges and linked marks, and a logged version, are one statement each: one
# transaction and one round trip (a writer holds its namespace's lock meanwhile).
_ADD = """
WITH edge_rows AS (
    INSERT INTO ripplemem_edges (ns, src, dst, type, weight)
    SELECT %(ns)s, * FROM unnest(%(src)s::text[], %(dst)s::text[], %(type)s::text[], %(weight)s::float8[])
    ON CONFLICT (ns, src, dst, type) DO UPDATE SET weight = EXCLUDED.weight
)
INSERT INTO ripplemem_linked (ns, unit_id) SELECT %(ns)s, unnest(%(linked)s::text[]) ON CONFLICT DO NOTHING
"""
# Bump the version, log its change row, prune rows older than CHANGES_KEPT versions, notify at commit.
_RECORD = """
WITH bumped AS (
    INSERT INTO ripplemem_ns_version (ns, version) VALUES (%(ns)s, 1) ON CONFLICT (ns)
    DO UPDATE SET version = ripplemem_ns_version.version + 1 RETURNING version
), logged AS (
    INSERT INTO ripplemem_ns_changes (ns, version, units, edges, removed)
    SELECT %(ns)s, version, %(units)s::jsonb, %(edges)s::jsonb, %(removed)s::jsonb FROM bumped
    ON CONFLICT (ns, version) DO UPDATE SET units = EXCLUDED.units, edges = EXCLUDED.edges,
        removed = EXCLUDED.removed
), pruned AS (
    DELETE FROM ripplemem_ns_changes WHERE ns = %(ns)s AND version <= (SELECT version FROM bumped) - %(kept)s
)
SELECT version, pg_notify(%(channel)s, json_build_array(%(ns)s::text, version)::text) FROM bumped
"""
_SCHEMA_LOCK = 0x7269_7070_6C65  # one advisory key: processes creating the tables take turns


def _ordered(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


class PostgresGraph:
    """Edges, linked marks, the namespace log and writer locks in PostgreSQL (see the module docs).

    Args:
        dsn: a libpq connection string, e.g. ``"postgresql://user@host:5432/db"``.
        pool_size: most pooled connections (writes hold one for their writer lock).
        listen: keep versions current from ``NOTIFY`` (else every read asks the database).

    Raises:
        ImportError: psycopg or psycopg_pool is not installed (``pip install "langchain-ripplemem[postgres]"``).
        ValueError: naming ``pool_size`` when it is below 2.
    """

    def __init__(self, dsn: str, *, pool_size: int = 8, listen: bool = True) -> None:
        try:
            import psycopg  # noqa: F401
            from psycopg_pool import ConnectionPool
        except ImportError as err:
            raise ImportError('PostgresGraph needs psycopg and psycopg_pool: pip install '
                              '"langchain-ripplemem[postgres]"') from err
        if pool_size < 2:
            raise ValueError(f"pool_size must be at least 2 (a write holds one), got {pool_size}")
        self.dsn = dsn
        self._pool = ConnectionPool(dsn, min_size=1, max_size=pool_size, kwargs={"autocommit": True}, open=True)
        self._closed = False
        self._held = threading.local()  # namespace keys whose writer lock this thread holds
        self._known: dict[str, int] = {}  # versions the listener has been told
        self._known_lock = threading.Lock()
        self._listening = threading.Event()
        self._stop = threading.Event()
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            conn.execute(_SCHEMA)
        self._listener: threading.Thread | None = None
        if listen:
            self._listener = threading.Thread(target=self._listen, name="ripplemem-pg-listen", daemon=True)
            self._listener.start()
            self._listening.wait(timeout=10)

    # -- the edge backend ----------------------------------------------------------------
    def edges(self, namespace: Namespace, unit_ids: Iterable[str] | None = None) -> list[Edge]:
        """Every edge of the namespace, or only those touching ``unit_ids``."""
        return [Edge(src=s, dst=d, type=t, weight=w) for s, d, t, w in self.edge_rows(namespace, unit_ids)]

    def edge_rows(self, namespace: Namespace, unit_ids: Iterable[str] | None = None) -> list[EdgeRow]:
        """:meth:`edges` as ``(src, dst, type, weight)`` tuples."""
        key = namespace_key(namespace)
        with self._pool.connection() as conn:
            if unit_ids is None:
                rows = conn.execute("SELECT src, dst, type, weight FROM ripplemem_edges WHERE ns = %s",
                                    (key,)).fetchall()
            else:
                ids = list(unit_ids)
                rows = conn.execute(
                    "SELECT src, dst, type, weight FROM ripplemem_edges "
                    "WHERE ns = %s AND (src = ANY(%s) OR dst = ANY(%s))", (key, ids, ids)).fetchall()
        return [(s, d, t, w) for s, d, t, w in rows]

    def with_edges(self, namespace: Namespace, unit_ids: Iterable[str]) -> set[str]:
        """Those of ``unit_ids`` that have at least one edge: one index probe per end, no edge row read."""
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT u FROM unnest(%(ids)s::text[]) AS ids(u) "
                "WHERE EXISTS (SELECT 1 FROM ripplemem_edges e WHERE e.ns = %(ns)s AND e.src = ids.u) "
                "OR EXISTS (SELECT 1 FROM ripplemem_edges e WHERE e.ns = %(ns)s AND e.dst = ids.u)",
                {"ids": list(dict.fromkeys(unit_ids)), "ns": namespace_key(namespace)}).fetchall()
        return {row[0] for row in rows}

    def add(self, namespace: Namespace, edges: Iterable[Edge], linked: Iterable[str] = ()) -> None:
        """Insert edges and mark units linked, in one transaction (one statement: one round trip)."""
        # One row per (src, dst, type), the last weight winning: a statement may not update a row twice.
        rows = {(*_ordered(e.src, e.dst), e.type): float(e.weight) for e in edges}
        with self._pool.connection() as conn:
            conn.execute(_ADD, {"ns": namespace_key(namespace), "src": [k[0] for k in rows],
                                "dst": [k[1] for k in rows], "type": [k[2] for k in rows],
                                "weight": list(rows.values()), "linked": list(dict.fromkeys(linked))})

    def remove_units(self, namespace: Namespace, unit_ids: Iterable[str]) -> int:
        """Delete units' edges and linked marks; returns edges removed."""
        key, ids = namespace_key(namespace), list(dict.fromkeys(unit_ids))
        with self._pool.connection() as conn, conn.transaction():
            removed = conn.execute("DELETE FROM ripplemem_edges WHERE ns = %s AND (src = ANY(%s) OR dst = ANY(%s))",
                                   (key, ids, ids)).rowcount
            conn.execute("DELETE FROM ripplemem_linked WHERE ns = %s AND unit_id = ANY(%s)", (key, ids))
        return int(removed)

    def drop(self, namespace: Namespace) -> int:
        """Remove every edge and mark of exactly this namespace; returns edges removed."""
        key = namespace_key(namespace)
        with self._pool.connection() as conn, conn.transaction():
            removed = conn.execute("DELETE FROM ripplemem_edges WHERE ns = %s", (key,)).rowcount
            conn.execute("DELETE FROM ripplemem_linked WHERE ns = %s", (key,))
        return int(removed)

    def purge(self) -> Purged:
        """Nothing the package can do safely: say what the server keeps (``docs/lifecycle.md``, "Deletes").

        The tables hold unit ids, namespace keys and weights, no text. A deleted row stays
        in its page as a dead tuple until a vacuum reuses the space (``VACUUM FULL`` rewrites
        the table, under an exclusive lock), and in the server's WAL, archives and backups.
        """
        return Purged(kept=("PostgreSQL: the deleted edge and linked rows (unit ids, no text) stay as dead tuples "
                            "until VACUUM (VACUUM FULL ripplemem_edges, ripplemem_linked rewrites them), and in the "
                            "server's WAL, WAL archive and backups",))

    def linked_ids(self, namespace: Namespace) -> set[str]:
        """Units whose linking completed."""
        with self._pool.connection() as conn:
            rows = conn.execute("SELECT unit_id FROM ripplemem_linked WHERE ns = %s",
                                (namespace_key(namespace),)).fetchall()
        return {r[0] for r in rows}

    def namespaces(self) -> list[Namespace]:
        """Namespaces that have any edge or linked mark."""
        with self._pool.connection() as conn:
            rows = conn.execute("SELECT ns FROM ripplemem_linked UNION SELECT ns FROM ripplemem_edges").fetchall()
        return sorted(namespace_from_key(r[0]) for r in rows)

    # -- the namespace log -----------------------------------------------------------------
    def version(self, namespace: Namespace) -> int:
        """How many writes the namespace has seen (0 for none)."""
        key = namespace_key(namespace)
        if self._listening.is_set() and key not in self._holding():
            known = self._known.get(key)
            if known is not None:
                return known
        with self._pool.connection() as conn:
            row = conn.execute("SELECT version FROM ripplemem_ns_version WHERE ns = %s", (key,)).fetchone()
        version = int(row[0]) if row else 0
        self._learn(key, version)
        return version

    def record(self, namespace: Namespace, units: Iterable[str] | None, edges: Iterable[str] = (),
               removed: Iterable[str] = ()) -> int:
        """Log a write and notify every listener; returns the new version (one statement: one round trip)."""
        key = namespace_key(namespace)
        with self._pool.connection() as conn:
            row = conn.execute(_RECORD, {
                "ns": key, "kept": CHANGES_KEPT, "channel": CHANNEL,
                "units": None if units is None else json.dumps(sorted(set(units))),
                "edges": json.dumps(sorted(set(edges))), "removed": json.dumps(sorted(set(removed)))}).fetchone()
        version = int(row[0]) if row else 0  # the statement always returns the bumped row
        self._learn(key, version)
        return version

    def changes(self, namespace: Namespace, after: int, upto: int) -> Changes | None:
        """What versions ``after+1 .. upto`` changed, merged; ``None`` when a cache must reload."""
        with self._pool.connection() as conn:
            rows = conn.execute(
                "SELECT units, edges, removed FROM ripplemem_ns_changes WHERE ns = %s AND version > %s "
                "AND version <= %s", (namespace_key(namespace), after, upto)).fetchall()
        if len(rows) != upto - after or any(units is None for units, _, _ in rows):
            return None
        return Changes(units={u for units, _, _ in rows for u in units},
                       edges={u for _, edges, _ in rows for u in edges},
                       removed={u for _, _, removed in rows for u in removed})

    @contextmanager
    def writer(self, namespace: Namespace) -> Iterator[None]:
        """Hold the namespace's advisory lock (re-entrant within a thread) for the length of a write."""
        key, held = namespace_key(namespace), self._holding()
        if key in held:
            yield
            return
        with self._pool.connection() as conn:
            conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))
            held.add(key)
            try:
                yield
            finally:
                held.discard(key)
                conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))

    def close(self) -> None:
        """Stop the listener and close the pool (a second call does nothing)."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._listener is not None:
            self._listener.join(timeout=2 * _LISTEN_POLL_SECONDS + 1)
        self._pool.close()

    # -- internals -------------------------------------------------------------------------
    def _holding(self) -> set[str]:
        held: set[str] | None = getattr(self._held, "keys", None)
        if held is None:
            held = self._held.keys = set()
        return held

    def _learn(self, key: str, version: int) -> None:
        with self._known_lock:
            if version > self._known.get(key, -1):
                self._known[key] = version

    def _listen(self) -> None:
        """Follow ``NOTIFY`` on its own connection; while it is down, versions come from the database."""
        import psycopg

        while not self._stop.is_set():
            try:
                with psycopg.connect(self.dsn, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    with self._known_lock:
                        self._known.clear()  # anything may have happened while nobody listened
                    self._listening.set()
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=_LISTEN_POLL_SECONDS, stop_after=1000):
                            key, version = json.loads(note.payload)
                            self._learn(str(key), int(version))
            except Exception as err:  # noqa: BLE001 - reconnect; reads fall back to the database meanwhile
                self._listening.clear()
                if not self._stop.is_set():
                    _log.warning("PostgreSQL listener lost its connection, reconnecting: %s", err)
                    self._stop.wait(_LISTEN_POLL_SECONDS)
            finally:
                self._listening.clear()

    def __enter__(self) -> PostgresGraph:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
