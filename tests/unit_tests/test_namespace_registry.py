"""Listing namespaces is one read of the registry, which a write, an emptying delete and a drop keep exact."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from langchain_ripplemem.schemas import MemoryUnit, namespace_key
from langchain_ripplemem.storage.chroma import REGISTRY_FORMAT, ChromaUnitBackend
from langchain_ripplemem.storage.chroma_client import chroma_client

from .conftest import make_unit


def unit(ns: tuple[str, ...], text: str) -> MemoryUnit:
    return make_unit(text, namespace=ns)


def write(backend: ChromaUnitBackend, ns: tuple[str, ...], *texts: str) -> list[str]:
    units = [unit(ns, t) for t in texts]
    backend.upsert(ns, units, np.ones((len(units), 3), dtype=np.float32))
    return [u.id for u in units]


@pytest.fixture
def shared():
    """Two backends on one Chroma store, as two processes on one Chroma server."""
    client, name = chroma_client(None), f"units-{uuid.uuid4().hex[:8]}"
    yield ChromaUnitBackend(client, collection_name=name), ChromaUnitBackend(client, collection_name=name)
    for suffix in ("", "__namespaces"):
        client.delete_collection(name + suffix)


def test_listing_namespaces_reads_the_registry_only(shared, monkeypatch):
    backend, _ = shared
    for i in range(5):
        write(backend, ("users", f"u{i}"), "hello")
    asked = []
    get = backend.collection.get
    monkeypatch.setattr(backend.collection, "get", lambda **kw: asked.append(kw) or get(**kw))
    assert backend.namespaces() == [("users", f"u{i}") for i in range(5)]
    assert asked == []  # no read of the units' collection per namespace


def test_a_namespace_emptied_by_deletes_leaves_the_list_and_a_later_write_brings_it_back(shared):
    a, b = shared
    ids = write(a, ("maya",), "one", "two")
    write(a, ("sam",), "three")
    b.delete(("maya",), ids[:1])
    assert b.namespaces() == [("maya",), ("sam",)]  # still holds a unit
    b.delete(("maya",), ids[1:])
    assert a.namespaces() == [("sam",)]
    write(a, ("maya",), "four")  # a registered it before; b's delete unregistered it since
    assert b.namespaces() == [("maya",), ("sam",)]
    b.drop(("sam",))
    assert a.namespaces() == [("maya",)]


def test_a_registry_of_an_older_release_is_checked_once_on_open():
    client, name = chroma_client(None), f"units-{uuid.uuid4().hex[:8]}"
    units = client.get_or_create_collection(name, embedding_function=None)
    held = unit(("maya",), "hi")
    units.upsert(ids=[held.id], embeddings=np.ones((1, 3), dtype=np.float32),
                 metadatas=[{"ns": namespace_key(("maya",)), "unit": held.model_dump_json()}])
    old = client.get_or_create_collection(f"{name}__namespaces", embedding_function=None)  # no format
    keys = [namespace_key(("maya",)), namespace_key(("emptied",))]
    old.upsert(ids=keys, embeddings=np.ones((2, 1), dtype=np.float32), metadatas=[{"ns": k} for k in keys])
    backend = ChromaUnitBackend(client, collection_name=name)
    assert backend.namespaces() == [("maya",)]
    assert client.get_collection(f"{name}__namespaces").metadata == {"registry_format": REGISTRY_FORMAT}


def test_a_write_to_a_registered_namespace_reads_the_registry_instead_of_rewriting_it(shared, monkeypatch):
    backend, other = shared
    write(backend, ("users", "maya"), "hello")
    upserts = []
    upsert = backend._registry.upsert
    monkeypatch.setattr(backend._registry, "upsert", lambda **kw: upserts.append(kw["ids"]) or upsert(**kw))
    write(backend, ("users", "maya"), "again")  # registered already: an upsert costs twenty reads
    assert upserts == []
    ids = write(other, ("users", "sam"), "hi")
    other.delete(("users", "sam"), ids)  # another process empties it: unregistered
    write(backend, ("users", "sam"), "back")
    assert upserts == [[namespace_key(("users", "sam"))]]
    assert backend.namespaces() == [("users", "maya"), ("users", "sam")]
