"""The deployment's store factory (server/served_store.py) and where the served memory lives (served_memory)."""

from __future__ import annotations

import json

import pytest

from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.server import served_memory
from langchain_ripplemem.server.served_store import served_store, store_ttl

from .conftest import BagOfWordsEmbeddings


@pytest.fixture
def served(monkeypatch):
    memory = RippleMem(BagOfWordsEmbeddings())
    served_memory.set_memory(memory)
    yield memory
    served_memory.set_memory(None)


async def test_the_store_is_the_served_memory_s_with_langgraph_json_ttls(served, monkeypatch):
    ttl = {"default_ttl": 60, "refresh_on_read": False, "sweep_interval_minutes": 30}
    monkeypatch.setenv("LANGGRAPH_STORE", json.dumps({"path": "x.y", "ttl": ttl}))
    async with served_store() as store, served_store() as second:
        assert store.memory is served and second.memory is served
        assert store.ttl_config == {**ttl, "default_ttl": 60.0, "sweep_interval_minutes": 30.0}
        assert store._sweeper is not None and second._sweeper is None  # one sweeper per process
        await store.aput(("users", "maya"), "diet", {"text": "Maya is vegetarian."})
        assert [u.metadata["store_ttl"] for u in served.list_units(("users", "maya"))] == [60.0]
    assert store._sweeper is None  # stopped with its context


def test_store_ttl_names_a_bad_environment():
    with pytest.raises(ValueError, match=r"\$LANGGRAPH_STORE must be a JSON object"):
        store_ttl({"LANGGRAPH_STORE": "[1, 2]"})
    with pytest.raises(ValueError, match=r"\$LANGGRAPH_STORE must be a JSON object"):
        store_ttl({"LANGGRAPH_STORE": "{not json"})


def test_the_served_memory_reads_where_it_lives_from_the_environment(tmp_path):
    with pytest.raises(ValueError, match=r"\$RIPPLEMEM_CHROMA_PORT must be a port number"):
        served_memory.open_served_memory({"RIPPLEMEM_CHROMA_HOST": "127.0.0.1", "RIPPLEMEM_CHROMA_PORT": "http"})
    with served_memory.open_served_memory({"RIPPLEMEM_PERSIST": str(tmp_path / "m")}) as memory:
        assert memory.persist_directory == tmp_path / "m"
