"""The deployment's store under ``langgraph dev``: RippleMemStore behind the server's /store API and runtime.store.

``langgraph.json`` names :mod:`langchain_ripplemem.server.served_store` as the server's
store. A client puts, gets and searches items over HTTP; an agent served beside the
checkout's graphs (``store_agent_graph.py``) writes through ``runtime.store`` and recalls
what the client put; the checkout's own ``recall`` graph finds both, for they share one
memory. Once over a store directory, once over a Chroma server and PostgreSQL.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.unit_tests.langgraph_dev import running_dev_server

AGENT = f"{Path(__file__).with_name('store_agent_graph.py')}:graph"
NS = ["memories", "maya"]

pytestmark = [pytest.mark.slow, pytest.mark.integration]


def check_the_served_store(url: str) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=url)
    store = client.store
    store.put_item(NS, "allergy", {"text": "Maya is allergic to shellfish.", "kind": "health"})
    store.put_item(NS, "grill", {"text": "Maya's favourite restaurant is Harbor Grill, for its shrimp.",
                                 "kind": "places"}, ttl=60)
    store.put_item(NS, "code", {"text": "The gate code is 4411.", "kind": "codes"}, index=False)
    assert store.get_item(NS, "allergy")["value"] == {"text": "Maya is allergic to shellfish.", "kind": "health"}
    assert store.get_item(NS, "code")["value"]["kind"] == "codes"

    found = store.search_items(["memories"], query="Which seafood can Maya not eat?", filter={"kind": "health"})
    assert [item["key"] for item in found["items"]] == ["allergy"]
    assert isinstance(found["items"][0]["score"], float)
    ranked = store.search_items(NS, query="shellfish allergy")["items"]
    assert ranked[0]["key"] == "allergy" and ranked[-1]["key"] == "code" and ranked[-1]["score"] is None
    assert store.list_namespaces(prefix=["memories"])["namespaces"] == [NS]

    run = client.runs.wait(None, "store_agent", input={"user_id": "maya", "note": "Maya moved to Porto in May.",
                                                       "question": "Is Maya allergic to anything?"})
    assert run["recalled"][0]["key"] == "allergy", run
    assert run["recalled"][0]["value"]["text"] == "Maya is allergic to shellfish."
    assert store.get_item(NS, "agent-note")["value"] == {"text": "Maya moved to Porto in May.", "kind": "agent"}
    recalled = client.runs.wait(None, "recall", input={"query": "Where did Maya move, and what is she allergic to?"},
                                context={"namespace": NS})
    said = " ".join(m["unit"]["restatement"] for m in recalled["result"]["memories"])
    assert "Porto" in said and "shellfish" in said and "4411" not in said

    store.delete_item(NS, "allergy")
    assert store.get_item(NS, "allergy") is None


def test_the_store_over_a_directory(tmp_path):
    with running_dev_server(tmp_path, {"RIPPLEMEM_PERSIST": str(tmp_path / "memory")}, {"store_agent": AGENT}) as url:
        check_the_served_store(url)


def test_the_store_over_a_chroma_server_and_postgres(tmp_path, chroma_server, postgres_server):
    import psycopg

    database = f"served_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {database}")
    env = {"RIPPLEMEM_PERSIST": str(tmp_path / "unused"), "RIPPLEMEM_CHROMA_HOST": chroma_server.host,
           "RIPPLEMEM_CHROMA_PORT": str(chroma_server.port),
           "RIPPLEMEM_POSTGRES_DSN": postgres_server.dsn.rsplit("/", 1)[0] + f"/{database}"}
    with running_dev_server(tmp_path, env, {"store_agent": AGENT}) as url:
        check_the_served_store(url)
