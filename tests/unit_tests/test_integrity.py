"""check_store and `ripplemem check`: a clean store is ok, each kind of damage is reported."""

from __future__ import annotations

import json
import sqlite3

import pytest

from langchain_ripplemem.cli import main
from langchain_ripplemem.cli.integrity import check_store
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.schemas import namespace_key
from langchain_ripplemem.storage.sqlite import EDGES_FILENAME

from .conftest import BagOfWordsEmbeddings, filled_memory, make_conversation

A, B = ("users", "a"), ("users", "b")


@pytest.fixture
def store(tmp_path):
    memory = RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path)
    memory.add_conversation(make_conversation("c1"), namespace=A)
    memory.add_conversation(make_conversation("c2"), namespace=B)
    return tmp_path, memory


def _sql(directory, *statements):
    conn = sqlite3.connect(directory / EDGES_FILENAME)
    with conn:
        for sql, params in statements:
            conn.execute(sql, params)
    conn.close()


def test_clean_store_is_ok_with_counts(store):
    _, memory = store
    report = check_store(memory)
    assert report.ok, report.summary()
    a = report.namespace(A)
    assert a.chroma_units == a.index_units == a.live_index_units == 7
    assert a.edges == len(memory.edges(A)) > 0
    assert report.summary().splitlines()[-1] == "ok"
    assert [ns.namespace for ns in report.namespaces] == [A, B]


def test_dangling_and_cross_namespace_edges_inserted_into_sqlite_are_reported(store):
    directory, memory = store
    a_unit, b_unit = memory.list_units(A)[0].id, memory.list_units(B)[0].id
    _sql(directory,
         ("INSERT INTO edges VALUES (?, ?, ?, 'semantic', 0.9)", (namespace_key(A), a_unit, "ghost")),
         ("INSERT INTO edges VALUES (?, ?, ?, 'structural', 0.5)", (namespace_key(A), a_unit, b_unit)))
    report = check_store(RippleMem(BagOfWordsEmbeddings(), persist_directory=directory))
    assert not report.ok
    a = report.namespace(A)
    assert [(e.src, e.dst) for e in a.dangling_edges] == [(a_unit, "ghost")]
    assert [(e.src, e.dst) for e in a.cross_namespace_edges] == [(a_unit, b_unit)]
    assert report.namespace(B).ok
    text = report.summary()
    assert " - 1 dangling edge, 1 cross-namespace edge\n" in text and "ghost" in text
    assert text.splitlines()[-1] == "2 problems"


def test_linked_marks_and_unlinked_units_are_reported_and_relink_repairs(store):
    directory, memory = store
    victim = memory.list_units(B)[3].id
    _sql(directory,
         ("INSERT INTO linked VALUES (?, 'no-such-unit')", (namespace_key(A),)),
         ("DELETE FROM linked WHERE unit_id = ?", (victim,)))
    reopened = RippleMem(BagOfWordsEmbeddings(), persist_directory=directory)
    report = check_store(reopened)
    assert report.namespace(A).orphan_linked_marks == ["no-such-unit"]
    assert report.namespace(B).unlinked_units == [victim]
    assert "interrupted ingest" in report.summary()
    repaired = check_store(reopened, relink=True)
    assert repaired.relinked == 1 and repaired.namespace(B).ok
    assert not repaired.ok  # an orphan mark is not something relinking invents units for


def test_edges_of_a_namespace_without_units_are_dangling(store):
    directory, memory = store
    _sql(directory, ("INSERT INTO edges VALUES ('[\"gone\"]', 'x', 'y', 'semantic', 0.9)", ()))
    report = check_store(RippleMem(BagOfWordsEmbeddings(), persist_directory=directory))
    gone = report.namespace(("gone",))
    assert gone.chroma_units == 0 and len(gone.dangling_edges) == 1 and not report.ok


def test_stale_cached_index_and_duplicate_content_are_reported():
    memory = filled_memory(A, write_config=None)
    assert check_store(memory).ok
    unit = memory.list_units(A)[0]
    # Another writer (here: the collection directly) stores the same content under a new id.
    twin = unit.model_copy(update={"id": "twin"})
    memory.unit_backend.collection.upsert(
        ids=["twin"], embeddings=[memory.index.namespace_index(A).vector(unit.id).tolist()],
        documents=[twin.restatement],
        metadatas=[{"ns": namespace_key(A), "kind": twin.kind, "unit": twin.model_dump_json()}])
    report = check_store(memory).namespace(A)
    assert report.stale_index == ["twin"]  # this memory's cached index did not see the write
    assert report.duplicate_units == [sorted([unit.id, "twin"])]
    assert report.namespace_mismatches == []
    assert report.unlinked_units == ["twin"]


def test_unreadable_record_is_reported():
    memory = filled_memory(A, write_config=None)
    memory.unit_backend.collection.add(ids=["junk"], embeddings=[[1.0] + [0.0] * 511], metadatas=[{"x": 1}])
    report = check_store(memory)
    assert report.unreadable_records == ["junk"] and not report.ok
    assert report.namespace(A).ok


def test_cli_check_exit_codes_and_output(store, capsys):
    directory, memory = store
    assert main(["check", "--persist", str(directory)]) == 0
    out = capsys.readouterr().out
    assert "users/a: 7 units" in out and out.strip().endswith("ok")

    a_unit = memory.list_units(A)[0].id
    _sql(directory, ("INSERT INTO edges VALUES (?, ?, 'ghost', 'semantic', 0.9)", (namespace_key(A), a_unit)))
    assert main(["check", "--persist", str(directory)]) == 1
    out = capsys.readouterr().out
    assert "1 dangling edge" in out and "1 dangling edges" not in out and out.strip().endswith("1 problem")
    assert main(["check", "--persist", str(directory), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["namespaces"][0]["dangling_edges"][0]["dst"] == "ghost"


def test_cli_check_missing_directory_is_an_error(tmp_path, capsys):
    assert main(["check", "--persist", str(tmp_path / "nope")]) == 2
    assert "no store at" in capsys.readouterr().err
    assert not (tmp_path / "nope").exists()


def test_metadata_changed_behind_the_cached_index_is_stale():
    memory = filled_memory(A, write_config=None)
    unit = memory.list_units(A)[0]
    changed = unit.model_copy(update={"metadata": {**unit.metadata, "note": "edited elsewhere"}})
    memory.unit_backend.collection.update(ids=[unit.id], metadatas=[
        {"ns": namespace_key(A), "kind": unit.kind, "unit": changed.model_dump_json()}])
    report = check_store(memory).namespace(A)
    assert report.stale_index == [unit.id] and not report.ok
