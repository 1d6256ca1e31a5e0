"""LangGraph's own store tests against RippleMemStore: the pytest plugin that changes only where they open a store.

``scripts/run_langgraph_store_tests.py`` fetches the released sources of
``langgraph-checkpoint``, ``langgraph-checkpoint-sqlite`` and
``langgraph-checkpoint-postgres`` (their ``tests/test_store.py`` and
``tests/test_async_store.py``) and runs them with ``-p ripplemem_contract``. After
collection this plugin rebinds, in each test module, the names the tests open a store
with (``InMemoryStore``, ``SqliteStore``, ``AsyncSqliteStore``, ``PostgresStore``,
``AsyncPostgresStore``) to stand-ins whose ``from_conn_string`` (or call) opens a
:class:`RippleMemStore` instead; nothing else of a test changes:

* ``":memory:"``: a memory in this process; a file path (SQLite's tests): a persistent
  memory in a directory beside that file, removed when the store closes;
* a PostgreSQL URI: edges and the namespace log in that database (``PostgresEdgeBackend``), units
  in an embedded Chroma directory kept per database, so reopening a URI reopens its memory.
  The tests create and drop each database themselves, on the server the runner started
  (``$RIPPLEMEM_CONTRACT_POSTGRES``, which replaces their ``DEFAULT_URI``).

The index config a test passes becomes the store's (its ``embed`` is the memory's
embeddings; SQLite's ``text_fields`` is LangGraph's ``fields``; the distance and ANN
settings have no counterpart: RippleMem scores cosine). Without one, the memory embeds
with the shipped MiniLM model. The tests that cannot apply to RippleMem are in
:data:`NOT_APPLICABLE`, each with its reason, and are expected to fail (strictly: one
that passes fails the run); ``docs/langgraph_store.md`` lists them.
"""

from __future__ import annotations

import asyncio
import fnmatch
import hashlib
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import ensure_embeddings

from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.stores import RippleMemStore

__all__ = ["NOT_APPLICABLE", "NOT_RUN", "POSTGRES_ENV", "markdown_tables"]

POSTGRES_ENV = "RIPPLEMEM_CONTRACT_POSTGRES"
_shared: dict[str, Any] = {}

_SQL = "it reads or edits the SQL store's own tables"
_LOOP = ("an async SQL store refuses its sync methods on its own event loop (asyncio.InvalidStateError); "
         "RippleMemStore's sync methods run anywhere")

#: Tests that cannot apply to RippleMemStore, as ``package/file::test`` patterns (package: checkpoint, sqlite or
#: postgres), and why.
NOT_APPLICABLE: dict[str, str] = {
    "sqlite/test_store.py::test_vector_store_initialization": (
        "SQLite's index config names its paths `text_fields` (LangGraph's `fields` here) and the test reads "
        "SQLite's vector tables through `store.conn`"),
    "sqlite/test_store.py::test_vector_search_pagination[[]cosine[]]": (
        "the order is recollection's and the score is similarity: two near-ties on page 2 (0.5592 before "
        "0.5596) come in recollection's order"),
    "sqlite/test_store.py::test_sql_injection_vulnerability[[]*[]]": (
        "SQL filter-key validation (`Invalid filter key`): RippleMem builds no SQL from filter keys, any key "
        "is a field name"),
    "*/test_async_store.py::test_no_running_loop[[]*[]]": _LOOP,
    "*/test_store.py::test_namespace_labels_with_trailing_newline[[]*[]]": (
        "RippleMem refuses a namespace label with a control character (tab, newline): a label must read "
        "as what it is; the test puts ('users', 'alice\\n')"),
    "postgres/test_store.py::test_scores[[]*-l2[]]": (
        "PostgreSQL's L2 distance (score = minus the distance): RippleMem's score is cosine similarity, "
        "which the cosine and inner-product cases check"),
    "postgres/test_async_store.py::test_abatch_uses_single_pool_checkout": (
        "it counts the checkouts of AsyncPostgresStore's connection pool (`_ainternal.get_connection`)"),
    "postgres/test_store.py::test_omit_expired_*": _SQL + " (it backdates `expires_at` with SQL)",
    "postgres/test_async_store.py::test_omit_expired_*": _SQL + " (it backdates `expires_at` with SQL)",
}

#: Tests left out of the run, as ``package/file::test`` patterns, and why (time, not behaviour).
NOT_RUN: dict[str, str] = {
    "postgres/test_async_store.py::test_large_batches[[]*[]]": (
        "PostgreSQL's: 6,000 concurrent operations, 2,000 of them puts through the write path (extraction, "
        "embedding, linking), took over 8 minutes for one of its 3 fixtures here; SQLite's large-batch test passes"),
    "postgres/test_async_store.py::test_large_batches_async[[]*[]]": (
        "PostgreSQL's: 60,000 operations, 20,000 of them puts, per fixture; SQLite's (N=100) passes"),
}


def _embeddings(index: dict[str, Any] | None) -> Any:
    if index and index.get("embed") is not None:
        return ensure_embeddings(index["embed"])
    if "minilm" not in _shared:
        from langchain_ripplemem.embeddings import MiniLMOnnxEmbeddings

        _shared["minilm"] = MiniLMOnnxEmbeddings()
    return _shared["minilm"]


def _index(index: dict[str, Any] | None, embeddings: Any) -> dict[str, Any] | None:
    if not index:
        return None
    fields = index.get("fields", index.get("text_fields"))
    return {"dims": index["dims"], "embed": embeddings, "fields": fields} if "dims" in index else \
        {"embed": embeddings, "fields": fields}


def _open_memory(conn_string: str, embeddings: Any) -> tuple[RippleMem, Path | None]:
    """The memory a connection string names, and a directory to remove when it closes."""
    if conn_string == ":memory:":
        return RippleMem(embeddings), None
    if conn_string.startswith(("postgres://", "postgresql://")):
        from langchain_ripplemem.storage.postgres import PostgresEdgeBackend

        root = _shared.setdefault("units", Path(tempfile.mkdtemp(prefix="ripplemem-contract-")))
        units = root / hashlib.sha256(conn_string.encode()).hexdigest()[:16]
        return RippleMem(embeddings, persist_directory=units, edge_backend=PostgresEdgeBackend(conn_string)), None
    directory = Path(f"{conn_string}.ripplemem")
    return RippleMem(embeddings, persist_directory=directory), directory


class ContractStore(RippleMemStore):
    """A RippleMemStore opened as the released tests open theirs (``setup`` has nothing to create)."""

    MIGRATIONS: list[str] = []
    conn_string: str = ":memory:"

    def setup(self) -> None:
        """RippleMem creates its collections and tables on first use."""

    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        """A cursor on the PostgreSQL database the store was opened on (the fixtures' own SQL)."""
        import psycopg

        with psycopg.connect(self.conn_string, autocommit=True) as conn, conn.cursor() as cur:
            yield cur

    @classmethod
    @contextmanager
    def from_conn_string(cls, conn_string: str, *, index: dict[str, Any] | None = None,
                         ttl: dict[str, Any] | None = None, **_connection: Any) -> Iterator[ContractStore]:
        """The store of ``conn_string`` (``pipeline``/``pool_config`` are PostgreSQL connection settings)."""
        embeddings = _embeddings(index)
        memory, directory = _open_memory(conn_string, embeddings)
        store = cls(memory, index=_index(index, embeddings), ttl=ttl)
        store.conn_string = conn_string
        try:
            yield store
        finally:
            RippleMemStore.stop_ttl_sweeper(store)  # the sync one, also for the async stand-in
            memory.close()
            if directory is not None:
                shutil.rmtree(directory, ignore_errors=True)


class AsyncContractStore(ContractStore):
    """The async stores' stand-in: ``setup`` and the sweeper's start and stop are awaited there."""

    async def setup(self) -> None:  # type: ignore[override]
        """RippleMem creates its collections and tables on first use."""

    async def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> Any:  # type: ignore[override]
        """:meth:`RippleMemStore.start_ttl_sweeper`, awaited."""
        return super().start_ttl_sweeper(sweep_interval_minutes)

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:  # type: ignore[override]
        """:meth:`RippleMemStore.stop_ttl_sweeper`, in a thread."""
        return await asyncio.to_thread(ContractStore.stop_ttl_sweeper, self, timeout)

    @asynccontextmanager
    async def _cursor(self) -> AsyncIterator[Any]:  # type: ignore[override]
        import psycopg

        async with await psycopg.AsyncConnection.connect(self.conn_string, autocommit=True) as conn, \
                conn.cursor() as cur:
            yield cur

    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, conn_string: str, **settings: Any) -> AsyncIterator[AsyncContractStore]:  # type: ignore[override]
        """The store of ``conn_string``, opened and closed in a thread."""
        opened = ContractStore.from_conn_string.__func__(cls, conn_string, **settings)  # type: ignore[attr-defined]
        store = await asyncio.to_thread(opened.__enter__)
        try:
            yield store
        finally:
            await asyncio.to_thread(opened.__exit__, None, None, None)


class InMemoryContractStore(ContractStore):
    """``InMemoryStore(index=...)``'s stand-in: a RippleMemStore over a memory of this process."""

    def __init__(self, *, index: dict[str, Any] | None = None) -> None:
        embeddings = _embeddings(index)
        super().__init__(RippleMem(embeddings), index=_index(index, embeddings))


_STAND_INS = {"InMemoryStore": InMemoryContractStore, "SqliteStore": ContractStore,
              "AsyncSqliteStore": AsyncContractStore, "PostgresStore": ContractStore,
              "AsyncPostgresStore": AsyncContractStore}


def _postgres_uri(module: Any) -> None:
    """Point the PostgreSQL tests (and their conftest's cleanup) at the runner's server."""
    server = os.environ.get(POSTGRES_ENV)
    if server is None:
        return
    for name, value in (("DEFAULT_POSTGRES_URI", f"{server}/"), ("DEFAULT_URI", f"{server}/postgres?sslmode=disable")):
        if hasattr(module, name):
            setattr(module, name, value)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Load the encoder before the first test: PostgreSQL's fixtures give every item a TTL of 6 seconds."""
    _embeddings(None).embed_query("warm up")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Open RippleMemStores where the tests open stores; expect the inapplicable tests to fail."""
    import sys

    modules = {item.module for item in items if getattr(item, "module", None) is not None}
    if "tests.conftest" in sys.modules:
        modules.add(sys.modules["tests.conftest"])
    for module in modules:
        for name, stand_in in _STAND_INS.items():
            if hasattr(module, name):
                setattr(module, name, stand_in)
        _postgres_uri(module)
    package = config.rootpath.name.split("-")[0].removeprefix("langgraph_checkpoint").strip("_") or "checkpoint"
    kept, left_out = [], []
    for item in items:
        where = f"{package}/{Path(str(item.fspath)).name}::{item.name}"
        if any(fnmatch.fnmatchcase(where, pattern) for pattern in NOT_RUN):
            left_out.append(item)
            continue
        kept.append(item)
        for pattern, reason in NOT_APPLICABLE.items():
            if fnmatch.fnmatchcase(where, pattern):
                item.add_marker(pytest.mark.xfail(strict=True, reason=reason))
                break
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


def markdown_tables() -> str:
    """The tests that do not apply and those left out, as ``docs/langgraph_store.md`` lists them."""
    def rows(listed: dict[str, str]) -> list[str]:
        return [f"| `{pattern.replace('[[]', '[').replace('[]]', ']')}` | {reason} |"
                for pattern, reason in listed.items()]

    return "\n".join(["| test (package/file::name, `*` any parameters) | why it does not apply |", "|---|---|",
                      *rows(NOT_APPLICABLE), "", "| test left out of the run | why |", "|---|---|",
                      *rows(NOT_RUN)])
