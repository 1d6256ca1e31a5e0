"""A record keeps its unit as JSON, creation time first, and no Chroma document; any key order loads back."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np

from langchain_ripplemem.schemas import MemoryUnit, namespace_key
from langchain_ripplemem.storage.chroma import ChromaUnitBackend
from langchain_ripplemem.storage.chroma_client import HNSW_SYNC_THRESHOLD
from langchain_ripplemem.storage.chroma_records import stored_json

from .conftest import make_unit

NS = ("maya",)
START = datetime(2026, 3, 1, 9, 30, 0, 250_000, tzinfo=timezone.utc)


def _unit(i: int, **fields) -> MemoryUnit:
    return make_unit(f"Maya: note {i} \u00e9 \"quoted\" created_at", namespace=NS, turns=[str(i)],
                     created_at=START + timedelta(seconds=i), **fields)


def test_the_stored_json_puts_the_creation_time_first_and_parses_back_to_the_unit():
    tricky = _unit(1, metadata={"created_at": "not the unit's", "nested": {"created_at": 1}},
                   participants=["Maya"], cues=["harbor grill"])
    plus_two = timezone(timedelta(hours=2))
    offset = _unit(2).model_copy(update={"created_at": datetime(2026, 3, 1, 11, 0, tzinfo=plus_two)})
    for unit in (tricky, offset, _unit(3)):
        text = stored_json(unit)
        assert text.startswith('{"created_at":"')
        assert MemoryUnit.model_validate_json(text) == unit
        assert text.count('"created_at":') == unit.model_dump_json().count('"created_at":')


def test_units_created_in_order_are_stored_in_that_order_whatever_their_ids():
    # What keeps Chroma's index of metadata values append-only: new units sort after earlier ones.
    units = [_unit(i) for i in range(40)]
    assert sorted(u.id for u in units) != [u.id for u in units]  # ids (hashes) are in no such order
    texts = [stored_json(u) for u in units]
    assert sorted(texts) == texts


def test_records_in_either_key_order_load_back_and_updates_keep_the_new_order():
    backend = ChromaUnitBackend()
    try:
        new, old = _unit(1, participants=["Maya"]), _unit(2)
        backend.upsert(NS, [new], np.ones((1, 3), dtype=np.float32))
        # a record written by an earlier release: the id first
        record = {"ns": namespace_key(NS), "kind": old.kind, "unit": old.model_dump_json()}
        backend.collection.upsert(ids=[old.id], embeddings=np.ones((1, 3), dtype=np.float32),
                                  documents=[old.restatement], metadatas=[record])
        loaded = {u.id: u for units, _ in backend.load(NS) for u in units}
        assert loaded == {new.id: new, old.id: old}
        # No Chroma document any more (the text is in the unit's JSON); a record with one loads the same.
        documents = backend.collection.get(ids=[new.id, old.id], include=["documents"])
        assert dict(zip(documents["ids"], documents["documents"], strict=True)) == {
            new.id: None, old.id: old.restatement}
        changed = old.model_copy(update={"metadata": {"superseded_by": new.id}})
        backend.update(NS, [changed])
        assert {u.id: u for units, _ in backend.load(NS) for u in units}[old.id] == changed
        stored = backend.collection.get(ids=[old.id], include=["metadatas"])["metadatas"][0]["unit"]
        assert stored == stored_json(changed)
    finally:
        backend.close()


def _hnsw(backend: ChromaUnitBackend) -> dict:
    return backend.client.get_collection(backend.collection.name).configuration["hnsw"]


def test_the_unit_collection_persists_its_index_every_200_records_in_new_and_older_stores(tmp_path):
    # Every write reads back what was written since the index last persisted: a smaller threshold
    # makes an upsert cheaper (docs/scale.md "Ingest"). Stores made before keep their data and get it.
    import chromadb
    from chromadb.config import Settings

    fresh = ChromaUnitBackend(persist_directory=tmp_path / "new")
    try:
        assert _hnsw(fresh)["sync_threshold"] == HNSW_SYNC_THRESHOLD == 200
        assert (_hnsw(fresh)["max_neighbors"], _hnsw(fresh)["ef_construction"]) == (4, 8)
    finally:
        fresh.close()
    older = tmp_path / "older"
    client = chromadb.PersistentClient(path=str(older), settings=Settings(anonymized_telemetry=False))
    made = client.create_collection("ripplemem_units", embedding_function=None,
                                    metadata={"hnsw:space": "cosine", "hnsw:construction_ef": 8, "hnsw:M": 4})
    unit = _unit(1)
    made.add(ids=[unit.id], embeddings=np.ones((1, 4), dtype=np.float32), documents=[unit.restatement],
             metadatas=[{"ns": namespace_key(NS), "kind": unit.kind, "unit": stored_json(unit)}])
    assert made.configuration["hnsw"]["sync_threshold"] == 1000  # Chroma's default
    reopened = ChromaUnitBackend(persist_directory=older)
    try:
        assert _hnsw(reopened)["sync_threshold"] == 200
        assert (_hnsw(reopened)["max_neighbors"], _hnsw(reopened)["ef_construction"]) == (4, 8)
        assert [u.id for units, _ in reopened.load(NS) for u in units] == [unit.id]
    finally:
        reopened.close()


class _SpyCollection:
    """A Chroma collection that records the keyword arguments of every get and delete."""

    def __init__(self, collection):
        self._collection, self.calls = collection, []

    def __getattr__(self, name):
        return getattr(self._collection, name)

    def get(self, **kwargs):
        self.calls.append(("get", kwargs))
        return self._collection.get(**kwargs)

    def delete(self, **kwargs):
        self.calls.append(("delete", kwargs))
        return self._collection.delete(**kwargs)


def test_reads_and_deletes_by_id_keep_to_their_namespace_without_a_chroma_filter():
    """Chroma given ids and a filter passes over the whole collection per id: 200 ids took 10.8 s at 100k records."""
    backend = ChromaUnitBackend()
    try:
        other = ("sam",)
        mine = [_unit(i) for i in range(3)]
        theirs = make_unit("Sam: mine", namespace=other, turns=["9"], created_at=START)
        backend.upsert(NS, mine, np.ones((3, 3), dtype=np.float32))
        backend.upsert(other, [theirs], np.full((1, 3), 2.0, dtype=np.float32))
        spy = backend.collection = _SpyCollection(backend.collection)
        ids = [mine[1].id, theirs.id, "no-such-id"]
        loaded = [(u.id, [round(x, 3) for x in v.tolist()])
                  for units, vectors in backend.load(NS, ids) for u, v in zip(units, vectors, strict=True)]
        assert loaded == [(mine[1].id, [1.0, 1.0, 1.0])]  # not Sam's, though asked for by id
        assert sorted(u.id for units, _ in backend.load(NS) for u in units) == sorted(u.id for u in mine)
        backend.delete(NS, [mine[0].id, theirs.id])
        assert [u.id for units, _ in backend.load(other) for u in units] == [theirs.id]  # left alone
        assert sorted(u.id for units, _ in backend.load(NS) for u in units) == sorted(u.id for u in mine[1:])
        assert spy.calls and not [kw for _, kw in spy.calls if "ids" in kw and "where" in kw]
    finally:
        backend.close()
