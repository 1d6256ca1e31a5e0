"""A view loaded whole (no snapshot) parses each unit once: recall's per-unit values are derived during the load."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from langchain_ripplemem.index import unit_list
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.recall.derived import derive_all
from langchain_ripplemem.schemas import MemoryUnit

from .conftest import make_unit
from .test_index_snapshot import NS, QUERIES, build, memory, recalls


class CountingParses:
    """Stands in for ``MemoryUnit`` in ``unit_list``: counts the rows a view parses again from their JSON."""

    def __init__(self) -> None:
        self.count = 0

    def model_validate_json(self, data: bytes) -> MemoryUnit:
        self.count += 1
        return MemoryUnit.model_validate_json(data)


@pytest.fixture
def parses(monkeypatch) -> CountingParses:
    monkeypatch.setattr(unit_list, "PARSED_KEPT", 3)  # a view far larger than what it keeps parsed
    counter = CountingParses()
    monkeypatch.setattr(unit_list, "MemoryUnit", counter)
    return counter


def _parsed_by_first_recall(path: Path, parses: CountingParses, derive: bool, delete: bool = False) -> tuple[int, int]:
    """(units in the namespace, rows parsed again from JSON by the whole load and the first recall); no snapshots."""
    with memory(path, snapshot_directory=False) as cold:
        if not derive:
            cold.index.derive = None
        if delete:
            cold.delete(cold.list_units(namespace=NS)[0].id, namespace=NS)
        else:
            cold.index.invalidate(NS)
        parses.count = 0
        index = cold.index.namespace_index(NS)
        loaded, derived = parses.count, set(index.derived)
        cold.recall(QUERIES[0], namespace=NS)
        if derive:
            assert loaded == 0  # the load derives from the models it read, not from their JSON
            assert set(cold.index.namespace_index(NS).derived) <= derived  # the first recall builds nothing per unit
        return len(index), parses.count


@pytest.mark.parametrize("delete", [False, True], ids=["open", "after a delete"])
def test_a_whole_load_derives_what_recall_keeps_while_its_units_are_parsed(tmp_path, parses, delete):
    build(tmp_path)
    n, parsed = _parsed_by_first_recall(tmp_path, parses, derive=True, delete=delete)
    assert n > 10
    # The probe sees the passes: derived one by one on first use, each parsed the rows again.
    n, parsed_on_use = _parsed_by_first_recall(tmp_path, parses, derive=False, delete=delete)
    assert parsed_on_use - parsed > 3 * (n - unit_list.PARSED_KEPT), (parsed, parsed_on_use, n)


def test_recalls_are_the_same_whether_derived_during_the_load_or_on_first_use(tmp_path):
    warm = build(tmp_path)
    for derive in (True, False):
        with memory(tmp_path, snapshot_directory=False) as cold:
            if not derive:
                cold.index.derive = None
            assert recalls(cold) == warm


def test_a_delete_derives_only_for_an_index_that_had_derived_values() -> None:
    units = [make_unit(f"Maya: note {i}", namespace=NS, turns=[str(i)], participants=["Maya"],
                       metadata={"speaker": "Maya"}) for i in range(4)]
    index = NamespaceIndex(NS, 2)
    index.add(units, np.ones((4, 2), dtype=np.float32))
    assert index.without([units[0].id], derive_all).derived == {}  # a writer's view: nothing to carry on
    derive_all(index)
    after = index.without([units[0].id], derive_all)
    assert set(after.derived) == set(index.derived)
    assert after.derived["row_speakers"] == (3, ["maya"] * 3)

