"""A view's units: JSON parsed on read, a bounded number of models kept, rewrites kept when a model is dropped."""

import pytest

from langchain_ripplemem.index import unit_list
from langchain_ripplemem.index.unit_list import UnitList
from langchain_ripplemem.schemas import MemoryUnit

from .conftest import make_unit


def _units(n: int) -> list[MemoryUnit]:
    return [make_unit(f"Maya: note {i}", namespace=("u",), turns=[str(i)], participants=["Maya"]) for i in range(n)]


@pytest.fixture
def kept_three(monkeypatch):
    monkeypatch.setattr(unit_list, "PARSED_KEPT", 3)


def test_a_list_keeps_at_most_parsed_kept_models_and_parses_the_others_again(kept_three):
    units = _units(10)
    held = UnitList(units[:4])
    for unit in units[4:]:
        held.append(unit)
    assert held.parsed == 3  # the last three appended
    assert list(held) == units  # every row reads back, parsed again where dropped
    assert held.parsed == 3


@pytest.mark.parametrize("restored", [False, True])
def test_a_rewritten_row_keeps_its_rewrite_after_its_model_is_dropped(kept_three, restored):
    units = _units(8)
    held = UnitList(units)
    if restored:  # rows from a snapshot's blob, rewritten after the restore
        held = UnitList.from_json(*held.json_rows())
    rewritten = units[2].model_copy(update={"metadata": {"suppressed": True}})
    held[2] = rewritten
    for row in range(3, 8):  # reading five other rows drops row 2's model
        assert held[row] == units[row]
    assert held.parsed == 3
    assert held[2] == rewritten and held[2].metadata == {"suppressed": True}
    again = UnitList.from_json(*held.json_rows())
    assert list(again) == [*units[:2], rewritten, *units[3:]]


def test_a_row_appended_with_its_json_holds_that_json(kept_three):
    units = _units(6)
    source = UnitList(units)
    copy = UnitList()
    for row, unit in enumerate(units):
        copy.append(unit, source.json(row))
    assert copy.json_rows()[0] == source.json_rows()[0]
    assert list(copy) == units
    with pytest.raises(IndexError):
        source.json(6)


@pytest.mark.parametrize("restored", [False, True])
def test_take_reads_rows_as_indexing_does_parsing_dropped_and_restored_rows(kept_three, restored):
    units = _units(8)
    held = UnitList(units)  # only the last three are held as models
    if restored:  # none held: every row is parsed from the snapshot's blob
        held = UnitList.from_json(*held.json_rows())
    rows = [6, 0, 3, 3, 7]
    assert held.take(rows) == [units[row] for row in rows]
    assert held.parsed == 3  # what take parsed is kept as indexing keeps it: bounded
    with pytest.raises(IndexError):
        held.take([8])
