"""`ripplemem import` and `export` on the shared deployment: units in a Chroma server, edges in PostgreSQL.

The options are the ones the served graphs and ``ripplemem mcp`` use (``--chroma-host``,
``--chroma-port``, ``--postgres-dsn``); the memory they open has the default encoder.
"""

from __future__ import annotations

import uuid

import pytest

from langchain_ripplemem.cli import main
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.storage.export_format import read_export
from langchain_ripplemem.storage.postgres import PostgresEdgeBackend

from ..unit_tests.conftest import make_conversation

pytestmark = pytest.mark.integration


def test_import_into_and_export_from_a_chroma_server_and_postgresql(chroma_server, postgres_server, tmp_path):
    namespace = ("export-test", uuid.uuid4().hex[:8])  # the server and database are the session's: a fresh namespace
    label = "/".join(namespace)
    with RippleMem() as source:
        source.add_conversation(make_conversation(), namespace=namespace)
        source.export_namespace(namespace, tmp_path / "in.jsonl")
        question = "Where should Maya eat for her birthday?"
        expected = [m.unit.id for m in source.recall(question, namespace=namespace, k=5).memories]
    deployment = ["--persist", str(tmp_path / "local"), "--chroma-host", chroma_server.host,
                  "--chroma-port", str(chroma_server.port), "--postgres-dsn", postgres_server.dsn]
    assert main(["import", str(tmp_path / "in.jsonl"), *deployment]) == 0
    assert main(["import", str(tmp_path / "in.jsonl"), *deployment]) == 0  # again: adds nothing
    assert main(["export", str(tmp_path / "out.jsonl"), "--namespace", label, *deployment]) == 0
    carried, back = read_export(tmp_path / "in.jsonl"), read_export(tmp_path / "out.jsonl")
    assert [u.model_dump() for u in back.units] == [u.model_dump() for u in carried.units]
    assert back.edges == carried.edges
    # Chroma's HTTP transport rounds some float32 values by one unit in the last place: not bit for bit.
    assert abs(back.vectors - carried.vectors).max() < 1e-6
    with RippleMem(client=chroma_server.client(), edge_backend=PostgresEdgeBackend(postgres_server.dsn)) as served:
        assert [m.unit.id for m in served.recall(question, namespace=namespace, k=5).memories] == expected
        served.delete_namespace(namespace)
