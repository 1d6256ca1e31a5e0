"""Forgetting with server backends (issue 52, defect 2): what reaches a Chroma server's files, what is reported kept.

Through a Chroma server's API a forget overwrites the units' vectors and makes the server
persist its HNSW index and purge its log; the server's SQLite free pages are its operator's
(``ForgetReport.kept`` says how to purge them). PostgreSQL holds ids only; the report says
what it keeps. The server's files are read from its data directory, as its operator would.
"""

from __future__ import annotations

import sqlite3
import uuid

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_ripplemem.memory import RippleMemory

from ..unit_tests.conftest import Secret, filler, secret_conversation

pytestmark = pytest.mark.integration
MAYA = ("users", "maya")


def server_log_rows(server_path, ids: list[str]) -> int:
    """Rows of the server's log (``embeddings_queue``) that still carry a write of ``ids``."""
    with sqlite3.connect(f"file:{server_path / 'chroma.sqlite3'}?mode=ro", uri=True) as db:
        marks = ",".join("?" * len(ids))
        return int(db.execute(f"SELECT COUNT(*) FROM embeddings_queue WHERE operation != 3 AND id IN ({marks})",
                              ids).fetchone()[0])


def collection_directories(server_path, collection_id: str) -> list:
    """The server's HNSW segment directories of one collection."""
    with sqlite3.connect(f"file:{server_path / 'chroma.sqlite3'}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT id FROM segments WHERE scope = 'VECTOR' AND collection = ?",
                          (collection_id,)).fetchall()
    return [server_path / row[0] for row in rows if (server_path / row[0]).is_dir()]


def test_a_chroma_server_purges_its_log_and_index_and_the_report_says_what_it_keeps(
        chroma_server, collection_name, tmp_path):
    memory = RippleMemory(DeterministicFakeEmbedding(size=48), client=chroma_server.client(),
                          collection_name=collection_name, graph_path=tmp_path / "graph.sqlite3")
    # The index exists before the secret is written: hnswlib writes a new index's uncleared memory to disk.
    memory.add_conversation(filler("garden", 5), namespace=MAYA)
    secret = Secret()
    memory.add_conversation(secret_conversation(secret), namespace=MAYA)
    ids = secret.remember_vectors(memory, MAYA)
    assert server_log_rows(chroma_server.path, ids) == len(ids)  # the control: the log holds the writes

    report = memory.delete(ids, namespace=MAYA)
    assert server_log_rows(chroma_server.path, ids) == 0
    directories = collection_directories(chroma_server.path, str(memory.unit_backend.collection.id))
    assert directories and all(secret.traces(d) == [] for d in directories)
    assert report.units == len(ids) and len(report.kept) == 1 and "chroma vacuum --path" in report.kept[0]
    assert str(tmp_path / "graph.sqlite3") in report.files and secret.traces(tmp_path) == []
    memory.close()


def test_postgres_reports_what_it_keeps(chroma_server, collection_name, postgres_server):
    psycopg = pytest.importorskip("psycopg")
    from langchain_ripplemem.storage.postgres import PostgresGraph

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    dsn = postgres_server.dsn.rsplit("/", 1)[0] + f"/{name}"
    graph = PostgresGraph(dsn)
    memory = RippleMemory(DeterministicFakeEmbedding(size=48), client=chroma_server.client(),
                          collection_name=collection_name, graph_store=graph)
    secret = Secret()
    memory.add_conversation(secret_conversation(secret), namespace=MAYA)
    memory.add_conversation(filler("garden", 3), namespace=MAYA)
    gone = [u.id for u in memory.list_units(MAYA) if u.source.conversation_id == "dog"]
    report = memory.delete_conversation("dog", namespace=MAYA)
    assert sorted(report.unit_ids) == sorted(gone)
    assert any(kept.startswith("PostgreSQL: ") and "VACUUM FULL" in kept for kept in report.kept)
    with psycopg.connect(dsn) as conn:
        left = conn.execute("SELECT COUNT(*) FROM ripplemem_edges WHERE src = ANY(%s) OR dst = ANY(%s)",
                            (gone, gone)).fetchone()[0]
    assert left == 0
    memory.close()
