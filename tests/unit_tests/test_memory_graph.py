from datetime import datetime, timezone

import networkx as nx
import numpy as np
import pytest

from langchain_ripplemem.config import ExpansionConfig, WriteConfig
from langchain_ripplemem.edges.edge_cache import EdgeCache
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.presets import PAPER_WRITE
from langchain_ripplemem.recall.expansion import expand_channel, reachable
from langchain_ripplemem.schemas import Edge, MemoryUnit, TimeInterval
from langchain_ripplemem.storage.sqlite import WAL_CHECKPOINT_PAGES, SQLiteEdgeBackend, open_sqlite_edges
from langchain_ripplemem.write.linking import local_linking
from langchain_ripplemem.write.linking.local_linking import link_rows

from .conftest import make_unit

NS = ("u",)
T = TimeInterval.point(datetime(2026, 1, 1, tzinfo=timezone.utc))


def unit(i: int, participants=(), locations=(), time=None) -> MemoryUnit:
    return make_unit(f"unit {i}", namespace=NS, turns=[f"t{i}"], participants=list(participants),
                     locations=list(locations), time=time)


def unit_vec(*weights: float, dim: int = 8) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[: len(weights)] = weights
    return v / np.linalg.norm(v)


def neighbours(cache: EdgeCache, ns: tuple[str, ...], uid: str) -> dict[str, dict[str, float]]:
    graph = cache.networkx(ns)
    return {n: dict(d["types"]) for n, d in graph.adj[uid].items()} if uid in graph else {}


def test_edge_backend_roundtrip_and_namespace_separation(tmp_path):
    path = tmp_path / "g.sqlite3"
    store = SQLiteEdgeBackend(path)
    store.add(("a",), [Edge(src="x", dst="y", type="semantic", weight=0.9),
                       Edge(src="y", dst="x", type="structural", weight=0.7)], linked=["x", "y"])
    store.add(("b",), [Edge(src="x", dst="z", type="semantic", weight=0.95)])
    assert neighbours(EdgeCache(store), ("a",), "x") == {"y": {"semantic": 0.9, "structural": 0.7}}
    assert neighbours(EdgeCache(store), ("b",), "x") == {"z": {"semantic": 0.95}}
    store.close()
    reopened = SQLiteEdgeBackend(path)
    assert EdgeCache(reopened).count(("a",)) == {"semantic": 1, "structural": 1}
    assert reopened.linked_ids(("a",)) == {"x", "y"}
    assert reopened.with_edges(("a",), ["x", "y", "z", "x"]) == {"x", "y"}  # either end; not b's "z"
    assert reopened.with_edges(("b",), ["z", "y"]) == {"z"} and reopened.with_edges(("b",), []) == set()
    many = [f"id{i}" for i in range(1000)] + ["x"]  # past one statement's chunk of ids
    assert reopened.with_edges(("b",), many) == {"x"}
    assert reopened.remove_units(("a",), ["y"]) == 2
    assert neighbours(EdgeCache(reopened), ("a",), "x") == {}
    assert EdgeCache(reopened).count(("b",)) == {"semantic": 1, "structural": 0}  # untouched
    assert reopened.namespaces() == [("a",), ("b",)]  # ("a",) keeps x's linked mark
    reopened.drop(("b",))
    assert reopened.namespaces() == [("a",)]
    assert reopened.edges(("b",)) == []


def test_an_edge_file_opens_while_another_process_is_writing_it(tmp_path):
    """Switching to WAL fails at once while another connection writes; opening waits it out instead."""
    import sqlite3
    import threading

    path = tmp_path / "g.sqlite3"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)  # a new file: not WAL yet
    other.execute("CREATE TABLE other_writer (x)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO other_writer VALUES (1)")
    done = threading.Timer(0.3, lambda: other.execute("COMMIT"))
    done.start()
    try:
        opened = SQLiteEdgeBackend(path)
    finally:
        done.join()
        other.close()
    assert opened._db.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    opened.add(("a",), [Edge(src="x", dst="y", type="semantic", weight=0.9)])
    assert opened.with_edges(("a",), ["x"]) == {"x"}
    opened.close()


def test_the_edge_file_checkpoints_its_wal_at_the_bound_it_names(tmp_path):
    """Every connection to the file sets it (a per-connection setting, not stored in the file)."""
    for opened in (SQLiteEdgeBackend(tmp_path / "g.sqlite3"), open_sqlite_edges(tmp_path / "g.sqlite3")[0]):
        assert opened._db.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == WAL_CHECKPOINT_PAGES
        assert opened._db.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        opened.close()


def test_semantic_threshold_and_cap(monkeypatch):
    index = NamespaceIndex(NS)
    base = unit_vec(1.0)
    # 8 near-duplicates of the new unit (cos ~0.99) and 2 unrelated ones
    olds = [unit(i) for i in range(10)]
    vecs = [unit_vec(1.0, 0.1 * (i % 3 + 1), 0.01 * i) for i in range(8)] + [unit_vec(0, 1), unit_vec(0, 0, 1)]
    index.add(olds, np.stack(vecs))
    index.add([unit(99)], base[None, :])
    monkeypatch.setattr(local_linking, "CUE_POOL", 0)
    cfg = WriteConfig(linking={"semantic_threshold": 0.85})  # at most MAX_SEMANTIC_EDGES = 6
    edges = link_rows(index, [10], cfg.linking)
    sem = [e for e in edges if e.type == "semantic"]
    assert len(sem) == 6
    assert all(e.weight >= 0.85 for e in sem)
    kept = {e.dst for e in sem}
    assert olds[8].id not in kept and olds[9].id not in kept
    # the six strongest were kept
    sims = sorted(((float(v @ base), u.id) for u, v in zip(olds, vecs, strict=True)), reverse=True)[:6]
    assert kept == {uid for _, uid in sims}


def test_structural_edges_need_shared_cues_and_threshold():
    index = NamespaceIndex(NS)
    far = [unit_vec(0, 1)] * 4
    olds = [unit(0, ["Maya"], ["Lisbon"], T), unit(1, ["Sam"], [], T), unit(2, [], [], None),
            unit(3, ["Priya"], ["Oslo"], None)]
    index.add(olds, np.stack(far))
    index.add([unit(9, ["Maya"], ["Lisbon"], T)], unit_vec(1.0)[None, :])
    edges = link_rows(index, [4], PAPER_WRITE.linking)
    structural = {e.dst: e.weight for e in edges if e.type == "structural"}
    assert structural == {olds[0].id: pytest.approx(1.0)}  # unit 1: s_str=(0*0.5+1*0.3)/0.8=0.375 < 0.6
    assert not [e for e in edges if e.type == "semantic"]


def test_structural_cap_and_incremental_order(monkeypatch):
    index = NamespaceIndex(NS)
    units = [unit(i, ["Maya"], [], T) for i in range(12)]
    index.add(units, np.stack([unit_vec(1.0, 0.05 * i) for i in range(12)]))
    monkeypatch.setattr(local_linking, "MAX_SEMANTIC_EDGES", 0)
    edges = link_rows(index, list(range(12)), PAPER_WRITE.linking)
    by_src: dict[str, int] = {}
    for e in edges:
        assert e.type == "structural"
        by_src[e.src] = by_src.get(e.src, 0) + 1
        # a unit links only to units inserted before it
        assert index.pos[e.dst] < index.pos[e.src]
    assert max(by_src.values()) == 6
    assert units[0].id not in by_src  # the first unit has nobody to link to


def test_reachable_and_expansion_prefers_short_strong_paths():
    g = nx.Graph()
    for a, b, t, w in [("A", "B", "semantic", 0.9), ("B", "C", "semantic", 0.9), ("C", "D", "semantic", 0.9),
                       ("A", "E", "structural", 0.7), ("A", "C2", "semantic", 0.5)]:
        g.add_edge(a, b, types={t: w})
    reach = reachable(g, ["A"], "semantic", 2, exclude={"A"})
    assert set(reach) == {"B", "C", "C2"}  # D is 3 hops away; E only via structural
    assert reach["C"].path == ["A", "B", "C"]
    hits = expand_channel(g, ["A"], "semantic", lambda ids: [0.5 for _ in ids], ExpansionConfig(hops=2, per_channel=2),
                          exclude={"A"})
    # equal scores: shorter path first, then stronger path
    assert [h.unit_id for h in hits] == ["B", "C2"]
    assert hits[0].anchor == "A" and hits[0].rank == 0


@pytest.mark.parametrize("path_floor", [None, 0.5])
@pytest.mark.parametrize("top_n", [1, 7, 40])
def test_expansion_keeps_the_top_n_of_a_full_ranking_when_scores_sit_on_rounding_edges(path_floor, top_n):
    # Scores and strengths a hair either side of where rounding flips: only contenders get sort keys
    # (expansion._contention_bar), and the top n must still be the full ranking's.
    rng = np.random.default_rng(7)
    g = nx.Graph()
    for i in range(30):
        g.add_edge("A", f"h{i}", types={"semantic": float(rng.choice([0.5, 0.5 + 1e-7, 0.9]))})
        g.add_edge(f"h{i}", f"m{i}", types={"semantic": float(rng.choice([0.5, 0.5 - 1e-7, 0.8]))})
    reach = reachable(g, ["A"], "semantic", 2, exclude={"A"})
    edge = [0.5004999, 0.5005, 0.5005001, 0.501, 0.4995, None]
    score = {uid: edge[int(rng.integers(len(edge)))] for uid in reach}
    hits = expand_channel(g, ["A"], "semantic", lambda ids: [score[i] for i in ids],
                          ExpansionConfig(hops=2, per_channel=top_n), exclude={"A"}, path_floor=path_floor)
    f = path_floor
    full = sorted((uid for uid in reach if score[uid] is not None), key=lambda uid: (
        (-round(reach[uid].strength * (f + (1.0 - f) * score[uid]), 6), len(reach[uid].path), uid) if f is not None
        else (-round(score[uid], 3), len(reach[uid].path), -round(reach[uid].strength, 6), 0.0, uid)))
    assert [h.unit_id for h in hits] == full[:top_n]
    assert [h.rank for h in hits] == list(range(len(hits)))


@pytest.mark.parametrize("order", [1, -1])
def test_a_walk_keeps_the_strongest_path_of_each_length_whatever_the_neighbour_order(order):
    # D is two hops from A through B (weak) and through C (strong); E through C and F (equal).
    edges = [("A", "B", 0.9), ("A", "C", 0.6), ("B", "D", 0.2), ("C", "D", 0.9), ("A", "F", 0.6),
             ("C", "E", 0.5), ("F", "E", 0.5)]
    g = nx.Graph()
    for a, b, w in edges[::order]:
        g.add_edge(a, b, types={"semantic": w})
    reach = reachable(g, ["A"], "semantic", 2, exclude={"A"})
    assert reach["D"].path == ["A", "C", "D"] and reach["D"].strength == pytest.approx(0.54)
    assert reach["E"].path == ["A", "C", "E"]  # equally strong: the smaller path


def test_walk_restarts_when_a_writer_grows_the_graph_underneath():
    graph = nx.Graph()

    class GrowsOnce(dict):
        """Edge types that, read for the first time, add an edge at the anchor (a concurrent writer)."""

        grown = False

        def get(self, key, default=None):
            if not GrowsOnce.grown:
                GrowsOnce.grown = True
                graph.add_edge("a", "late", types={"semantic": 1.0})
            return super().get(key, default)

    graph.add_edge("a", "b", types=GrowsOnce(semantic=0.9))
    graph.add_edge("a", "c", types={"semantic": 0.8})
    got = reachable(graph, ["a"], "semantic", hops=1, exclude=set())
    assert GrowsOnce.grown and set(got) == {"b", "c", "late"}


def test_a_graph_loaded_whole_equals_the_one_mirrored_edge_by_edge(tmp_path):
    rng = np.random.default_rng(7)
    names = [f"n{i:02d}" for i in range(30)]
    edges = [Edge(src=str(a), dst=str(b), type=str(t), weight=float(w)) for a, b, t, w in zip(
        rng.choice(names, 200), rng.choice(names, 200), rng.choice(["semantic", "structural"], 200),
        rng.random(200), strict=True) if a != b]
    store = SQLiteEdgeBackend(tmp_path / "g.sqlite3")
    mirrored = EdgeCache(store)
    mirrored.networkx(NS)  # loaded while empty, then kept in step edge by edge
    for edge in edges:
        store.add(NS, [edge])
        mirrored.add(NS, [edge])
    reopened = SQLiteEdgeBackend(tmp_path / "g.sqlite3")
    loaded = EdgeCache(reopened).networkx(NS)  # a cold open: one pass over rows
    reopened.close()
    expected = mirrored.networkx(NS)
    as_dict = lambda g: {frozenset((a, b)): d["types"] for a, b, d in g.edges(data=True)}  # noqa: E731
    assert as_dict(loaded) == as_dict(expected) and len(as_dict(loaded)) > 50
    assert any(len(types) == 2 for types in as_dict(loaded).values())  # pairs with both types merge
    assert EdgeCache(store).count(NS) == mirrored.count(NS)
    assert sorted(store.edge_rows(NS)) == sorted((e.src, e.dst, e.type, e.weight) for e in store.edges(NS))
    store.close()
