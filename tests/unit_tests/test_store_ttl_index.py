"""RippleMemStore's TTLs, per-item indexing, index_config and scores comparable across queries (sync and async)."""

# ruff: noqa: F811 - test_stores' fixtures (memory, store, mode), imported, are the tests' parameters here

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from langgraph.store.base import GetOp, PutOp, SearchOp

from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.stores import RippleMemStore

from .conftest import BagOfWordsEmbeddings
from .test_stores import MAYA, SAM, call, memory, mode, store  # noqa: F401 - fixtures shared

LONG_AGO = "2000-01-01T00:00:00+00:00"


def expire(memory: RippleMem, ns: tuple[str, ...], key: str) -> None:
    """Move an item's expiry into the past (its units stay until something reads or sweeps)."""
    ids = [u.id for u in memory.list_units(ns, include_suppressed=True) if u.metadata.get("store_key") == key]
    changed = memory.update_metadata({uid: {"store_expires_at": LONG_AGO} for uid in ids}, namespace=ns)
    assert ids and changed == len(ids)


def expiry(memory: RippleMem, ns: tuple[str, ...], key: str) -> str | None:
    (found,) = {u.metadata.get("store_expires_at") for u in memory.list_units(ns, include_suppressed=True)
                if u.metadata.get("store_key") == key}
    return found


def held_keys(memory: RippleMem, ns: tuple[str, ...]) -> set[str]:
    return {u.metadata.get("store_key") for u in memory.list_units(ns, include_suppressed=True)}


# -- TTL -----------------------------------------------------------------------------
async def test_an_expired_item_is_omitted_everywhere_and_erased(store, memory, mode):
    await call(store, mode, "put", MAYA, "trip", {"text": "Maya flies to Lisbon on Friday."}, ttl=60)
    await call(store, mode, "put", MAYA, "allergy", {"text": "Maya is allergic to shellfish."})
    await call(store, mode, "put", SAM, "trip", {"text": "Sam flies to Porto."}, ttl=60)
    expire(memory, MAYA, "trip")
    expire(memory, SAM, "trip")
    assert held_keys(memory, MAYA) == {"trip", "allergy"}  # expired, not yet read
    assert await call(store, mode, "get", MAYA, "trip") is None
    assert held_keys(memory, MAYA) == {"allergy"}  # the read erased it, as delete erases
    assert [i.key for i in await call(store, mode, "search", ("users",), query="flies to Lisbon")] == ["allergy"]
    assert await call(store, mode, "list_namespaces", prefix=("users",)) == [MAYA]
    assert memory.list_units(SAM, include_suppressed=True) == []


async def test_reads_refresh_the_ttl_unless_told_not_to(store, memory, mode):
    await call(store, mode, "put", MAYA, "trip", {"text": "Maya flies to Lisbon on Friday."}, ttl=60)
    put_at = datetime.fromisoformat(expiry(memory, MAYA, "trip"))
    assert timedelta(minutes=59) < put_at - datetime.now(timezone.utc) <= timedelta(minutes=60)
    memory.update_metadata({u.id: {"store_expires_at": (put_at - timedelta(minutes=30)).isoformat()}
                            for u in memory.list_units(MAYA)}, namespace=MAYA)
    shortened = expiry(memory, MAYA, "trip")
    assert (await call(store, mode, "get", MAYA, "trip", refresh_ttl=False)).key == "trip"
    assert [i.key for i in await call(store, mode, "search", MAYA, query="Lisbon", refresh_ttl=False)] == ["trip"]
    assert expiry(memory, MAYA, "trip") == shortened
    await call(store, mode, "get", MAYA, "trip")  # refresh_ttl defaults to the ttl_config's, else True
    assert expiry(memory, MAYA, "trip") > shortened
    memory.update_metadata({u.id: {"store_expires_at": shortened} for u in memory.list_units(MAYA)}, namespace=MAYA)
    await call(store, mode, "search", MAYA, query="Lisbon", refresh_ttl=True)
    assert expiry(memory, MAYA, "trip") > shortened


async def test_ttl_config_gives_the_default_ttl_and_the_refresh_rule(memory, mode):
    store = RippleMemStore(memory, ttl={"default_ttl": 5, "refresh_on_read": False})
    await call(store, mode, "put", MAYA, "trip", {"text": "Maya flies to Lisbon."})
    await call(store, mode, "put", MAYA, "home", {"text": "Maya lives in Paris."}, ttl=None)
    first = expiry(memory, MAYA, "trip")
    assert first is not None and expiry(memory, MAYA, "home") is None
    await call(store, mode, "get", MAYA, "trip")
    assert expiry(memory, MAYA, "trip") == first  # refresh_on_read=False
    with pytest.raises(ValueError, match=r"ttl\['default_ttl'\]"):
        RippleMemStore(memory, ttl={"default_ttl": 0})
    with pytest.raises(ValueError, match="unknown keys"):
        RippleMemStore(memory, ttl={"default": 5})


async def test_a_put_in_the_batch_that_reads_an_expired_item_starts_it_anew(store, memory, mode):
    await call(store, mode, "put", MAYA, "trip", {"text": "Maya flies to Lisbon."}, ttl=60)
    old = await call(store, mode, "get", MAYA, "trip")
    expire(memory, MAYA, "trip")
    ops = [GetOp(MAYA, "trip"), PutOp(MAYA, "trip", {"text": "Maya flies to Porto."}, ttl=60)]
    results = store.batch(ops) if mode == "sync" else await store.abatch(ops)
    assert results[0] is None
    new = await call(store, mode, "get", MAYA, "trip")
    assert new.value == {"text": "Maya flies to Porto."} and new.created_at > old.created_at


async def test_sweep_erases_expired_items(store, memory, mode):
    await call(store, mode, "put", MAYA, "trip", {"text": "Maya flies to Lisbon."}, ttl=60)
    await call(store, mode, "put", MAYA, "home", {"text": "Maya lives in Paris."})
    expire(memory, MAYA, "trip")
    assert (store.sweep_ttl() if mode == "sync" else await store.asweep_ttl()) == 1
    assert held_keys(memory, MAYA) == {"home"}
    assert (store.sweep_ttl() if mode == "sync" else await store.asweep_ttl()) == 0


def test_the_sweeper_thread_sweeps_until_stopped(memory):
    swept = threading.Event()

    class Watched(RippleMemStore):
        def sweep_ttl(self) -> int:
            erased = super().sweep_ttl()
            if erased:
                swept.set()
            return erased

    store = Watched(memory, ttl={"sweep_interval_minutes": 0.001})
    store.put(MAYA, "trip", {"text": "Maya flies to Lisbon."}, ttl=60)
    future = store.start_ttl_sweeper()
    assert store.start_ttl_sweeper() is future and not future.done()
    expire(memory, MAYA, "trip")
    assert swept.wait(timeout=60)  # hang guard only
    assert held_keys(memory, MAYA) == set()
    assert store.stop_ttl_sweeper(timeout=60) and future.done()
    assert RippleMemStore(memory).start_ttl_sweeper().done()  # no interval: nothing starts


# -- index=False, index=[paths], index_config -----------------------------------------
async def test_an_unindexed_item_is_kept_listed_and_filtered_but_never_recalled(store, memory, mode):
    await call(store, mode, "put", MAYA, "secret", {"text": "The door code is shellfish 4411.", "kind": "codes"},
               index=False)
    await call(store, mode, "put", MAYA, "allergy", {"text": "Maya is allergic to shellfish.", "kind": "health"})
    assert (await call(store, mode, "get", MAYA, "secret")).value["kind"] == "codes"
    assert [i.key for i in await call(store, mode, "search", MAYA)] == ["secret", "allergy"]
    assert [i.key for i in await call(store, mode, "search", MAYA, filter={"kind": "codes"})] == ["secret"]
    found = await call(store, mode, "search", MAYA, query="shellfish")
    assert [(i.key, i.score is None) for i in found] == [("allergy", False), ("secret", True)]
    assert all(m.unit.source.conversation_id != "secret" for m in memory.recall("shellfish", namespace=MAYA).memories)
    assert await call(store, mode, "search", MAYA, query="shellfish", limit=1) == found[:1]


async def test_a_user_correction_of_an_unindexed_item_is_undone_without_indexing_it(store, memory):
    store.put(MAYA, "secret", {"text": "The door code is shellfish 4411."}, index=False)
    assert store.suppress(MAYA, "secret", reason="wrong code") == 1 and store.get(MAYA, "secret") is None
    assert store.unsuppress(MAYA, "secret") == 1 and store.get(MAYA, "secret") is not None
    assert [i.score for i in store.search(MAYA, query="door code")] == [None]  # still unindexed


async def test_index_paths_choose_the_embedded_text(store, memory, mode):
    value = {"title": "Lisbon trip", "notes": {"body": "Pack sunscreen"}, "text": "ignored here"}
    await call(store, mode, "put", MAYA, "trip", value, index=["title", "notes.body"])
    (unit,) = memory.list_units(MAYA)
    assert "Lisbon trip" in unit.restatement and "sunscreen" in unit.restatement and "ignored" not in unit.restatement
    (hit,) = await call(store, mode, "search", MAYA, query="Pack sunscreen")
    assert hit.score == pytest.approx(1.0, abs=1e-6)  # one of its texts is the query itself
    await call(store, mode, "put", MAYA, "empty", {"text": "x"}, index=["missing.path"])  # no text: unindexed
    assert [i.score for i in await call(store, mode, "search", MAYA, query="x", filter={"text": "x"})] == [None]


def test_index_config_is_the_memory_s(memory):
    store = RippleMemStore(memory, index={"fields": ["title"]})
    assert store.index_config == {"dims": BagOfWordsEmbeddings.dim, "embed": memory.embeddings, "fields": ["title"]}
    assert store.embeddings is memory.embeddings
    assert RippleMemStore(memory).index_config["fields"] is None
    store.put(MAYA, "trip", {"title": "Lisbon trip", "text": "not embedded"})
    assert "Lisbon" in memory.list_units(MAYA)[0].restatement
    with pytest.raises(ValueError, match=r"index\['embed'\]"):
        RippleMemStore(memory, index={"embed": BagOfWordsEmbeddings()})
    with pytest.raises(ValueError, match=r"index\['dims'\]"):
        RippleMemStore(memory, index={"dims": 0})


# -- scores ------------------------------------------------------------------------------
async def test_scores_are_similarities_comparable_across_queries(store, memory, mode):
    text = "Maya is allergic to shellfish."
    await call(store, mode, "put", MAYA, "allergy", {"text": text})
    (perfect,) = await call(store, mode, "search", MAYA, query=text)
    (unrelated,) = await call(store, mode, "search", MAYA, query="quarterly tax forms deadline")
    embed = memory.embeddings
    for hit, query in ((perfect, text), (unrelated, "quarterly tax forms deadline")):
        expected = float(np.dot(embed.embed_query(query), embed.embed_documents([text])[0]))
        assert hit.score == pytest.approx(expected, abs=1e-5)
    assert perfect.score == pytest.approx(1.0, abs=1e-5) and unrelated.score < 0.1  # before: 1.444 for both


async def test_a_batch_of_searches_scores_each_query(store, mode):
    await call(store, mode, "put", MAYA, "allergy", {"text": "Maya is allergic to shellfish."})
    await call(store, mode, "put", MAYA, "home", {"text": "Maya lives in Paris."})
    ops = [SearchOp(MAYA, query="Maya lives in Paris."), SearchOp(MAYA, query="allergic to shellfish")]
    by_home, by_allergy = store.batch(ops) if mode == "sync" else await store.abatch(ops)
    assert by_home[0].key == "home" and by_allergy[0].key == "allergy"
    assert by_home[0].score > dict((i.key, i.score) for i in by_allergy)["home"]
