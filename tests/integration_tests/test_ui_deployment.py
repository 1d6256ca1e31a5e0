"""``ripplemem ui`` over the shared deployment: units in a Chroma server, edges and the log in PostgreSQL.

The command is given the options every serving command takes (``--chroma-host``,
``--chroma-port``, ``--postgres-dsn``); uvicorn is not started, the app it would serve
is asked directly. Another memory over the same deployment (an agent's) writes while
the page's memory is open: the page shows its writes, and a forget from the page is
gone for the agent too.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the [ui] extra")
from starlette.testclient import TestClient  # noqa: E402

from langchain_ripplemem.cli import main  # noqa: E402
from langchain_ripplemem.server.served_memory import open_deployment  # noqa: E402

from ..unit_tests.conftest import make_conversation  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_the_page_over_a_chroma_server_and_postgres(tmp_path, chroma_server, postgres_server, monkeypatch):
    import psycopg
    import uvicorn

    database = f"ui_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {database}")
    dsn = postgres_server.dsn.rsplit("/", 1)[0] + f"/{database}"
    namespace = f"users/ui-{uuid.uuid4().hex[:8]}"
    served: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: served.update(app=app, **options))
    deployment = {"persist": tmp_path / "unused", "chroma_host": chroma_server.host,
                  "chroma_port": chroma_server.port, "postgres_dsn": dsn}
    agent = open_deployment(**deployment)
    try:
        agent.add_conversation(make_conversation("c1"), namespace=namespace)
        argv = ["ui", "--persist", str(tmp_path / "unused"), "--chroma-host", chroma_server.host,
                "--chroma-port", str(chroma_server.port), "--postgres-dsn", dsn]
        assert main(argv) == 0
        client = TestClient(served["app"], base_url="http://127.0.0.1")
        with client:  # the lifespan: the page's memory stays open until the server stops
            def total(**params: Any) -> int:
                answer = client.get("/api/timeline", params={"namespace": namespace, **params})
                assert answer.status_code == 200, answer.text
                return answer.json()["total"]  # type: ignore[no-any-return]

            assert total() == 7
            agent.add_conversation(make_conversation("c2"), namespace=namespace)  # the agent keeps writing
            assert total() == 14 and total(conversation="c2") == 7
            forgot = client.post("/api/forget", json={"namespace": namespace, "what": "conversation",
                                                      "target": "c1", "confirm": "c1"})
            assert forgot.status_code == 200 and len(forgot.json()["unit_ids"]) == 7
            assert total() == 7
        assert {u.source.conversation_id for u in agent.list_units(namespace)} == {"c2"}
    finally:
        agent.close()
