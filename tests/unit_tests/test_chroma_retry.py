"""Transient Chroma read errors: a namespace load is retried on ``InternalError`` only, a few times."""

from __future__ import annotations

from typing import Any

import pytest
from chromadb.errors import InternalError

from langchain_ripplemem.index.unit_index import UnitIndex
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.storage import chroma_client as chroma_module
from langchain_ripplemem.storage.chroma_client import read_retrying

from .conftest import filled_memory

MAYA = ("maya",)


class FlakyCollection:
    """A Chroma collection whose next ``failures`` reads raise ``error`` (``None``: every read)."""

    def __init__(self, inner: Any, failures: int | None, error: Exception | None = None) -> None:
        self.inner, self.failures = inner, failures
        self.error = error or InternalError("Error finding id")
        self.gets = 0

    def get(self, **kwargs: Any) -> Any:
        self.gets += 1
        if self.failures is None or self.failures > 0:
            if self.failures is not None:
                self.failures -= 1
            raise self.error
        return self.inner.get(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.fixture
def pauses(monkeypatch) -> list[float]:
    taken: list[float] = []
    monkeypatch.setattr(chroma_module, "_sleep", taken.append)
    return taken


@pytest.fixture
def memory() -> RippleMem:
    return filled_memory(MAYA, write_config=None)


def reload_with(memory: RippleMem, collection: FlakyCollection) -> UnitIndex:
    """The memory's index, reading through ``collection``, with its cached view dropped."""
    memory.unit_backend.collection = collection
    memory.index.invalidate(MAYA)
    return memory.index


def test_an_index_load_that_fails_once_is_retried(memory, pauses, caplog):
    expected = [u.id for u in memory.list_units(MAYA)]
    flaky = FlakyCollection(memory.unit_backend.collection, failures=1)
    reload_with(memory, flaky)
    assert [u.id for u in memory.list_units(MAYA)] == expected
    # the namespace's ids (failed once, read again), then its records by id
    assert flaky.gets == 3 and pauses == [chroma_module.READ_BACKOFF_SECONDS]
    assert "retrying a read of namespace ['maya'] from Chroma" in caplog.text and "attempt 1 of" in caplog.text
    result = memory.recall("What is Maya allergic to?", namespace=MAYA, k=3)
    assert any("shellfish" in m.unit.restatement for m in result.memories)
    assert flaky.gets == 3  # the view is cached again


def test_an_index_load_that_always_fails_raises_after_a_few_attempts(memory, pauses):
    flaky = FlakyCollection(memory.unit_backend.collection, failures=None)
    index = reload_with(memory, flaky)
    with pytest.raises(InternalError) as caught:
        index.namespace_index(MAYA)
    assert flaky.gets == chroma_module.READ_ATTEMPTS
    message = str(caught.value)
    assert "namespace ['maya']" in message and f"failed {chroma_module.READ_ATTEMPTS} times" in message
    assert "Error finding id" in message and isinstance(caught.value.__cause__, InternalError)
    first = chroma_module.READ_BACKOFF_SECONDS
    assert pauses == [first * 2**i for i in range(chroma_module.READ_ATTEMPTS - 1)]
    with pytest.raises(InternalError):  # no half-loaded view was cached
        index.namespace_index(MAYA)


def test_other_errors_are_not_retried(memory, pauses):
    flaky = FlakyCollection(memory.unit_backend.collection, failures=None, error=ValueError("bad where"))
    index = reload_with(memory, flaky)
    with pytest.raises(ValueError, match="bad where"):
        index.namespace_index(MAYA)
    assert flaky.gets == 1 and pauses == []


def test_the_namespace_list_is_retried_too(memory, pauses):
    flaky = FlakyCollection(memory.unit_backend._registry, failures=2)  # the list is read from the registry
    memory.unit_backend._registry = flaky
    assert memory.namespaces() == [MAYA]
    assert flaky.gets == 3 and len(pauses) == 2


def test_read_retrying_arguments(pauses):
    calls = []

    def read() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise InternalError("Error creating hnsw segment reader: Nothing found on disk")
        return "ok"

    assert read_retrying(read, "x", attempts=3, backoff=0.5) == "ok"
    assert pauses == [0.5, 1.0]
    with pytest.raises(ValueError, match="attempts must be at least 1, got 0"):
        read_retrying(read, "x", attempts=0)
