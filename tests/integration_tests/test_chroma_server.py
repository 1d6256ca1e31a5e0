"""RippleMem against a real Chroma server: the supported multi-process setup.

Units live in the server (``client=chromadb.HttpClient(...)``), edges in a
SQLite file every process opens (``edges_path``; SQLite WAL handles several
processes), and writers of one namespace take its writer lock beside that file
(``locking.namespace_writer``). Part of the default ``python -m pytest`` run;
``-m integration`` selects just these. They skip, with the reason, only when
no local Chroma server can be started.

Seen here: with several processes writing at once, the Chroma server (1.5.9)
now and then answers a namespace load (``collection.get`` with embeddings)
with a transient ``InternalError`` ("Error creating hnsw segment reader:
Nothing found on disk" on a new collection, "Error finding id" while another
client deletes in the same namespace). ``chroma_client.read_retrying`` retries those
reads, so the writer processes below need no retries of their own.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from langchain_ripplemem.cli.integrity import check_store
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.storage.locks import embedded_store_directory
from langchain_ripplemem.write.linking.local_linking import link_rows

from ..unit_tests.conftest import BagOfWordsEmbeddings, make_conversation
from ..unit_tests.test_crash_safety import many_turns

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
MAYA, SAM = ("users", "maya"), ("users", "sam")


@pytest.fixture
def memory_factory(chroma_server, collection_name, tmp_path):
    """New memories on the test's collection and edge file (each one: a separate 'process' view)."""
    def make(edges_path: Path | None = None) -> RippleMem:
        return RippleMem(BagOfWordsEmbeddings(), client=chroma_server.client(),
                         collection_name=collection_name, edges_path=edges_path or tmp_path / "graph.sqlite3")
    return make


def test_ingest_recall_and_reopen(memory_factory):
    memory = memory_factory()
    report = memory.add_conversation(make_conversation(), namespace=MAYA)
    assert report.units == report.new_units == 7
    assert memory.add_conversation(make_conversation(), namespace=MAYA).new_units == 0
    result = memory.recall("What is Maya allergic to?", namespace=MAYA, k=5)
    assert any("shellfish" in m.unit.restatement for m in result.memories)
    edges = memory.edges(MAYA)
    assert edges

    assert embedded_store_directory(memory.unit_backend.client) is None  # a server client needs no directory lock
    other = memory_factory()  # a new client, as a new process would open it
    assert [u.id for u in other.list_units(MAYA)] == [u.id for u in memory.list_units(MAYA)]
    assert other.edges(MAYA) == edges
    assert check_store(other).ok


def test_delete_and_delete_namespace_keep_namespaces_apart(memory_factory):
    memory = memory_factory()
    memory.add_conversation(make_conversation("c1"), namespace=MAYA)
    memory.add_conversation(make_conversation("c2"), namespace=SAM)
    maya = [u.id for u in memory.list_units(MAYA)]
    sam = [u.id for u in memory.list_units(SAM)]
    assert maya and sam and not set(maya) & set(sam)
    assert memory.get(sam, namespace=MAYA) == []
    recalled = {m.unit.id for m in memory.recall("Harbor Grill dinner", namespace=SAM).memories}
    assert recalled and recalled <= set(sam)

    assert memory.delete(sam[:2], namespace=MAYA).units == 0  # another namespace's ids: untouched
    assert memory.delete([maya[0], maya[1]], namespace=MAYA).units == 2
    assert {u.id for u in memory.list_units(MAYA)} == set(maya[2:])
    assert all(maya[0] not in (e.src, e.dst) for e in memory.edges(MAYA))
    assert len(memory.list_units(SAM)) == 7

    assert memory.delete_namespace(SAM).units == 7
    assert memory.list_units(SAM) == [] and memory.edges(SAM) == []
    assert memory.namespaces() == [MAYA]
    fresh = memory_factory()
    assert {u.id for u in fresh.list_units(MAYA)} == set(maya[2:]) and fresh.list_units(SAM) == []
    report = check_store(fresh)
    assert report.ok, report.summary()


WRITER = r"""
import sys
import chromadb
from langchain_ripplemem.memory import RippleMem
from tests.unit_tests.conftest import BagOfWordsEmbeddings
from tests.unit_tests.test_crash_safety import many_turns

host, port, collection, graph, ns = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
memory = RippleMem(BagOfWordsEmbeddings(), client=chromadb.HttpClient(host=host, port=port),
                   collection_name=collection, edges_path=graph)
ids = []
for i in range(4):
    ids += memory.add_conversation(many_turns(f"{ns}-{i}", 10), namespace=(ns,)).unit_ids
print(" ".join(ids))
"""


def run_writers(script: str, chroma_server, collection_name: str, graph: Path, names: list[str]) -> list[str]:
    """Start one writer process per name at once; their stdout, once all exited 0."""
    procs = [subprocess.Popen(
        [sys.executable, "-c", script, chroma_server.host, str(chroma_server.port), collection_name,
         str(graph), name], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in names]
    outs = []
    for name, proc in zip(names, procs, strict=True):
        out, err = proc.communicate(timeout=300)  # hang guard only
        assert proc.returncode == 0, err[-3000:]
        print(f"writer {name}: {err.count('retrying a read')} transient Chroma read retries")  # shown with -s
        outs.append(out)
    return outs


@pytest.mark.slow
def test_several_writer_processes_on_one_server(chroma_server, collection_name, tmp_path, memory_factory):
    names = ["w0", "w1", "w2"]
    outs = run_writers(WRITER, chroma_server, collection_name, tmp_path / "graph.sqlite3", names)
    written = {(name,): set(out.split()) for name, out in zip(names, outs, strict=True)}
    memory = memory_factory()
    for ns, ids in written.items():
        assert len(ids) == 40
        assert {u.id for u in memory.list_units(ns)} == ids  # nothing lost
    report = check_store(memory)
    assert report.ok, report.summary()


def test_a_second_process_sees_writes_made_after_it_loaded_the_namespace(memory_factory):
    reader, writer = memory_factory(), memory_factory()
    reader.add_conversation(make_conversation("c1"), namespace=MAYA)
    assert len(reader.list_units(MAYA)) == 7
    writer.add_conversation(many_turns("later", 5), namespace=MAYA)
    assert len(writer.list_units(MAYA)) == 12
    assert len(reader.list_units(MAYA)) == 12


def test_delete_in_one_process_and_write_in_another_leave_no_dangling_edge(memory_factory):
    a, b = memory_factory(), memory_factory()
    a.add_conversation(make_conversation("c1"), namespace=MAYA)
    assert len(b.list_units(MAYA)) == 7  # B has loaded the namespace
    a.delete([u.id for u in a.list_units(MAYA)], namespace=MAYA)
    b.add_conversation(make_conversation("c2"), namespace=MAYA)
    report = check_store(memory_factory())
    assert report.ok, report.summary()


# Two writers on ONE namespace. In "shared" they only ingest; in "churn" each one
# also deletes part of what it wrote before, while the other links new units.
SAME_NAMESPACE_WRITER = r"""
import json, sys
import chromadb
from langchain_ripplemem.memory import RippleMem
from tests.unit_tests.conftest import BagOfWordsEmbeddings
from tests.unit_tests.test_crash_safety import many_turns

host, port, collection, graph, me = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
memory = RippleMem(BagOfWordsEmbeddings(), client=chromadb.HttpClient(host=host, port=port),
                   collection_name=collection, edges_path=graph)
out = {"shared": [], "churn": [], "deleted": []}
previous = []
for i in range(6):
    out["shared"] += memory.add_conversation(many_turns(f"{me}-s{i}", 12), namespace=("shared",)).unit_ids
    ids = memory.add_conversation(many_turns(f"{me}-c{i}", 12), namespace=("churn",)).unit_ids
    out["churn"] += ids
    gone = previous[::2]
    assert memory.delete(gone, namespace=("churn",)).units == len(gone)
    out["deleted"] += gone
    previous = ids
print(json.dumps(out))
"""


@pytest.mark.slow
def test_two_writer_processes_on_one_namespace_are_serialised(chroma_server, collection_name, tmp_path,
                                                               memory_factory):
    graph = tmp_path / "edges" / "graph.sqlite3"
    outs = [json.loads(out) for out in run_writers(SAME_NAMESPACE_WRITER, chroma_server, collection_name,
                                                   graph, ["a", "b"])]
    memory = memory_factory(graph)
    shared, churn = memory.list_units(("shared",)), memory.list_units(("churn",))

    # No unit lost, none deleted that survived.
    assert {u.id for u in shared} == {i for o in outs for i in o["shared"]}
    assert len(shared) == 2 * 6 * 12
    assert {u.id for u in churn} == {i for o in outs for i in o["churn"]} - {i for o in outs for i in o["deleted"]}
    report = check_store(memory)  # no dangling edge, no unlinked unit, no duplicate
    assert report.ok, report.summary()

    # The commits did not interleave: every commit numbered its units after all
    # units before it, so insertion numbers never repeat ...
    for units in (shared, churn):
        seqs = [u.metadata["seq"] for u in units]
        assert len(set(seqs)) == len(seqs)
    # ... and each commit linked against every unit committed before it, the other
    # writer's included: the stored edges are exactly what one process writing the
    # same units in the same order would have made.
    index = memory.index.namespace_index(("shared",))
    replay = link_rows(index, list(range(len(index))), memory.write_config.linking)
    assert sorted((e.src, e.dst, e.type) for e in memory.edges(("shared",))) == \
        sorted((*sorted((e.src, e.dst)), e.type) for e in replay)
    writer_of = {i: k for k, o in enumerate(outs) for i in o["shared"]}
    assert {writer_of[e.src] != writer_of[e.dst] for e in replay} == {True, False}
