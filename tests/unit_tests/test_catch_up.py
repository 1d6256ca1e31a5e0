"""A memory whose cached views went stale catches up from the edge file's change log."""

from __future__ import annotations

import sqlite3

import pytest

from langchain_ripplemem.cli.integrity import check_store
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.presets import PAPER, PAPER_WRITE
from langchain_ripplemem.schemas import Conversation, Edge, namespace_key
from langchain_ripplemem.storage import sqlite as edge_store
from langchain_ripplemem.storage.sqlite import SQLiteNamespaceLog, open_sqlite_edges

from .conftest import BagOfWordsEmbeddings

NS = ("n",)


def turns(cid: str, texts: list[str]) -> Conversation:
    return Conversation.model_validate({"id": cid, "sessions": [{
        "id": "S1", "time": "2026-03-02T19:00:00+00:00",
        "turns": [{"id": f"{cid}:{i}", "speaker": "Maya" if i % 2 else "Sam", "text": t}
                  for i, t in enumerate(texts, 1)]}]})


@pytest.fixture
def pair(tmp_path):
    """Two memories on one store (as two processes would be), both with the namespace loaded."""
    # The paper's structural edges: three-turn chats are too small for rare-cue edges.
    a = RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path, write_config=PAPER_WRITE)
    b = RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path, write_config=PAPER_WRITE)
    a.add_conversation(turns("c1", ["I adopted a puppy called Toby.", "Toby loves the dog park.",
                                    "We walk Toby every morning."]), namespace=NS)
    assert len(b.list_units(NS)) == 3 and b.edges(NS)
    return a, b


def cached_index(memory: RippleMem):
    return memory.index.cached(NS)


def graph_edges(memory: RippleMem) -> set[tuple[str, str, str]]:
    graph = memory.edge_cache.networkx(NS)
    return {(*sorted((u, v)), t) for u, v, data in graph.edges(data=True) for t in data["types"]}


def test_added_units_and_their_edges_arrive_without_a_reload(pair):
    a, b = pair
    index = cached_index(b)
    a.add_conversation(turns("c2", ["Toby chewed my shoes at the dog park.", "Sam bought Toby a new leash."]),
                       namespace=NS)
    assert {u.id for u in b.list_units(NS)} == {u.id for u in a.list_units(NS)}
    assert cached_index(b) is index  # caught up in place, not reloaded
    assert graph_edges(b) == graph_edges(a)
    assert {(e.src, e.dst, e.type) for e in b.edges(NS)} == {(e.src, e.dst, e.type) for e in a.edges(NS)}
    hit = b.recall("leash", namespace=NS, k=1).memories[0]
    assert "leash" in hit.unit.restatement
    assert check_store(b).ok


def test_catching_up_reads_the_edges_of_the_new_units_only(pair, monkeypatch):
    a, b = pair
    old = {u.id for u in a.list_units(NS)}
    asked: list[set[str]] = []
    edges = b.edge_backend.edges

    def recording(namespace, unit_ids=None):
        asked.append(set(unit_ids) if unit_ids is not None else {"<all>"})
        return edges(namespace, unit_ids)

    monkeypatch.setattr(b.edge_backend, "edges", recording)
    report = a.add_conversation(turns("c2", ["Toby chewed my shoes at the dog park.", "Sam walks Toby too."]),
                                namespace=NS)
    assert any(e.dst in old for e in a.edges(NS) if e.src in report.unit_ids or e.dst in report.unit_ids)
    b.reader.prepare(NS)  # catch up, as a recall does first
    assert graph_edges(b) == graph_edges(a)  # every new edge arrived...
    assert asked == [set(report.unit_ids)]  # ...by asking for the new units' edges, not the old units' ones


def test_a_suppression_elsewhere_hides_the_memory_here(pair):
    a, b = pair
    index = cached_index(b)
    target = next(u for u in a.list_units(NS) if "park" in u.restatement)
    a.suppress([target.id], namespace=NS, reason="never said that")
    assert target.id not in {m.unit.id for m in b.recall("dog park", namespace=NS).memories}
    assert cached_index(b) is index
    assert target.id in cached_index(b).suppressed


def whole_loads(memory: RippleMem, monkeypatch) -> list[int]:
    """Counts the unit backend's whole-namespace reads (loads without ids)."""
    calls: list[int] = []
    load = memory.unit_backend.load

    def counting(namespace, ids=None):
        calls.extend([1] if ids is None else [])
        return load(namespace, ids)

    monkeypatch.setattr(memory.unit_backend, "load", counting)
    return calls


def test_a_delete_elsewhere_leaves_here_without_a_reload(pair, monkeypatch):
    a, b = pair
    loads = whole_loads(b, monkeypatch)
    gone = a.list_units(NS)[0]
    a.delete([gone.id], namespace=NS)
    assert gone.id not in {u.id for u in b.list_units(NS)}
    assert gone.id not in {m.unit.id for m in b.recall("Toby", namespace=NS, k=5).memories}
    assert loads == []  # the view was rebuilt from memory, not read back from Chroma
    assert gone.id not in b.edge_cache.networkx(NS)
    assert graph_edges(b) == graph_edges(a)
    assert all(gone.id not in (e.src, e.dst) for e in b.edges(NS))
    assert check_store(b).ok


def test_a_delete_then_a_rewrite_elsewhere_brings_the_unit_back(pair, monkeypatch):
    a, b = pair
    loads = whole_loads(b, monkeypatch)
    gone = a.list_units(NS)[0]
    a.delete([gone.id], namespace=NS)
    a.add_conversation(turns("c1", ["I adopted a puppy called Toby.", "Toby loves the dog park.",
                                    "We walk Toby every morning."]), namespace=NS)  # re-ingest: same ids
    assert [u.id for u in b.list_units(NS)] != [] and gone.id in {u.id for u in b.list_units(NS)}
    assert loads == []
    assert graph_edges(b) == graph_edges(a)
    assert cached_index(b).matrix.shape == cached_index(a).matrix.shape


def test_a_dropped_namespace_elsewhere_reloads(pair):
    a, b = pair
    index = cached_index(b)
    a.delete_namespace(NS)
    assert b.list_units(NS) == []
    assert cached_index(b) is not index


def test_a_gap_in_the_change_log_reloads(pair, monkeypatch):
    a, b = pair
    index = cached_index(b)
    monkeypatch.setattr(edge_store, "CHANGES_KEPT", 1)  # keep only the newest version's row
    a.add_conversation(turns("c3", ["Toby met a cat.", "The cat was not impressed."]), namespace=NS)
    a.add_conversation(turns("c4", ["Toby slept all day."]), namespace=NS)  # two versions, one row kept
    assert len(b.list_units(NS)) == 6
    assert cached_index(b) is not index


def test_change_log_rows_and_gaps():
    edges, log = open_sqlite_edges(None)
    ns = ("x",)
    v1 = log.record(ns, ["u1"])
    edges.add(ns, [Edge(src="u2", dst="u1", type="semantic", weight=0.9)], linked=["u2"])
    v2 = log.record(ns, (), ["u1", "u2"])
    assert log.changes(ns, 0, v2) == ({"u1"}, {"u1", "u2"}, set())
    assert log.changes(ns, v1, v2) == (set(), {"u1", "u2"}, set())
    log.record(ns, (), (), removed=["u2"])
    assert log.changes(ns, v2, log.version(ns)) == (set(), set(), {"u2"})  # a delete: logged
    log.record(ns, None)
    assert log.changes(ns, v2, log.version(ns)) is None  # a drop: reload
    assert log.changes(ns, 0, log.version(ns) + 1) is None  # a version without a row


def test_an_edge_file_from_before_deletes_were_logged_opens_and_catches_up(tmp_path):
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:  # the previous release's change table: no "removed" column
        conn.execute("CREATE TABLE ns_changes (ns TEXT NOT NULL, version INTEGER NOT NULL, units TEXT, "
                     "edges TEXT, PRIMARY KEY (ns, version))")
        conn.execute("INSERT INTO ns_changes VALUES (?, 1, '[\"u1\"]', '[]')", (namespace_key(("x",)),))
        conn.execute("CREATE TABLE ns_version (ns TEXT PRIMARY KEY, version INTEGER NOT NULL)")
        conn.execute("INSERT INTO ns_version VALUES (?, 1)", (namespace_key(("x",)),))
    log = SQLiteNamespaceLog(path)
    assert log.changes(("x",), 0, 1) == ({"u1"}, set(), set())
    log.record(("x",), (), (), removed=["u1"])
    assert log.changes(("x",), 1, 2) == (set(), set(), {"u1"})


def test_recall_walks_past_edges_to_units_the_index_does_not_hold_yet(pair):
    # A graph loaded (or caught up) a moment after the view can hold another writer's
    # new edges before the view holds their new units; the soak's readers hit it.
    a, b = pair
    ids = [u.id for u in b.list_units(NS)]
    b.edge_cache.add(NS, [Edge(src=uid, dst="f" * 32, type="structural", weight=1.0) for uid in ids])
    # One anchor, never sufficient: expansion walks its cue edges, weighed by their cues (bridging).
    config = PAPER.replace(views={"semantic_k": 1, "lexical_k": 1, "cue_k": 0},
                           controller={"max_anchors": 1, "sufficiency_similarity": 1.01}, bridging={"weight": 1.0})
    result = b.recall("Who walks Toby every morning?", namespace=NS, config=config)
    assert result.memories and "f" * 32 not in {m.unit.id for m in result.memories}


def test_a_reopened_store_recalls_what_the_warm_one_did(tmp_path):
    warm = RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path, write_config=PAPER_WRITE)
    texts = [f"{who} took {pet} to the {place} on {day}." for who, pet, place, day in zip(
        ["Maya", "Sam", "Priya", "Jonas"] * 5, ["Toby", "Rex", "Luna", "Milo", "Bella"] * 4,
        ["dog park", "beach", "vet", "lake"] * 5, ["Monday", "Friday"] * 10, strict=True)]
    warm.add_conversation(turns("c1", texts), namespace=NS)
    queries = ["Who took Luna to the vet?", "Where did Rex go on Friday?", "What did Maya do?"]
    before = [[(m.unit.id, round(m.score, 9)) for m in warm.recall(q, namespace=NS).memories] for q in queries]
    edges = graph_edges(warm)
    warm.close()
    cold = RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path, write_config=PAPER_WRITE)
    after = [[(m.unit.id, round(m.score, 9)) for m in cold.recall(q, namespace=NS).memories] for q in queries]
    assert after == before and all(before)
    assert graph_edges(cold) == edges and edges
    cold.close()


def walked(memory: RippleMem, nodes) -> dict[str, dict]:
    graph = memory.reader.walkable_edges(NS)
    return {n: dict(graph.adj[n]) if n in graph else {} for n in nodes}


def test_the_walked_graph_follows_other_writers_edges_and_deletes(pair):
    a, b = pair
    old = [u.id for u in a.list_units(NS)]
    before = walked(b, old)  # read (and kept) before the other writer changes them
    report = a.add_conversation(turns("c2", ["Toby chewed my shoes at the dog park.", "We walk Toby at the park."]),
                                namespace=NS)
    b.reader.prepare(NS)
    whole = a.edge_cache.networkx(NS)
    nodes = [*old, *report.unit_ids]
    assert walked(b, nodes) == {n: dict(whole.adj[n]) if n in whole else {} for n in nodes} != before
    a.delete([old[1]], namespace=NS)
    b.reader.prepare(NS)
    assert old[1] not in b.reader.walkable_edges(NS)
    assert all(old[1] not in nbrs for nbrs in walked(b, nodes).values())
