"""Freed heap goes back to the operating system after large loads and evictions (langchain_ripplemem._runtime.heap)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from langchain_ripplemem._runtime import heap
from langchain_ripplemem.cache_bounds import LRUCache
from langchain_ripplemem.index.unit_index import UnitIndex
from langchain_ripplemem.storage.chroma import ChromaUnitBackend

from .conftest import make_unit


@pytest.fixture
def trims(monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(heap, "_resolved", [calls.append])
    monkeypatch.setattr(heap, "_pending", [0])
    return calls


def test_trims_once_enough_has_been_freed(trims):
    step = heap.TRIM_AFTER_BYTES // 4
    assert [heap.freed(step) for _ in range(9)] == [False, False, False, True, False, False, False, True, False]
    assert trims == [0, 0]


def test_evictions_note_what_they_free(monkeypatch):
    noted: list[int] = []
    monkeypatch.setattr(heap, "freed", noted.append)
    cache: LRUCache[str] = LRUCache(max_items=2, max_bytes=10**9, size=len)
    for key, value in (("a", "x" * 3), ("b", "y" * 5), ("c", "z"), ("d", "w")):
        cache.put(key, value)
    assert noted == [3, 5]  # "a" then "b" left


def test_an_index_load_notes_its_reply(trims):
    index = UnitIndex(ChromaUnitBackend())
    units = [make_unit(f"memory {i}") for i in range(2000)]
    index.add(("n",), units, np.ones((len(units), 4), dtype=np.float32))
    index.invalidate(("n",))
    assert not trims
    assert len(index.namespace_index(("n",))) == 2000 and trims == [0]  # 2,000 units' reply is past the trim threshold


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's (Linux)")
def test_glibc_trims():
    assert heap.trim() is True
