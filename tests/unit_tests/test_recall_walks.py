"""Walks kept per view and graph state (recall/walks.py), which memories have edges, and the query-cue table.

Speed-only structures: each test checks that what they return is what recall
computed without them, and that a write or a grown view is never served a stale walk.
"""

import networkx as nx
import numpy as np
import pytest

from langchain_ripplemem.cli.demo import load_sample
from langchain_ripplemem.config import ExpansionConfig
from langchain_ripplemem.edges.adjacency import walkable_edges, with_edges
from langchain_ripplemem.edges.edge_cache import EdgeCache
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.recall import walks as recall_walks
from langchain_ripplemem.recall.controller import cue_values
from langchain_ripplemem.recall.expansion import Unreachable, expand_channel, reachable
from langchain_ripplemem.recall.walks import KeptWalks, shared_walks
from langchain_ripplemem.schemas import Edge, MemoryUnit
from langchain_ripplemem.storage.sqlite import open_sqlite_edges

from .conftest import make_unit

NS = ("walks",)


def make_units(n: int, participants=()) -> list[MemoryUnit]:
    return [make_unit(f"memory {i}", namespace=NS, turns=[str(i)], participants=list(participants))
            for i in range(n)]


def index_of(units: list[MemoryUnit]) -> NamespaceIndex:
    index = NamespaceIndex(NS)
    index.add(units, np.eye(len(units), dtype=np.float32))
    return index


@pytest.fixture
def chain():
    """Six memories: a-b-c-d semantic chain, a-e structural, b-f semantic; a walkable edges over them."""
    units = make_units(6)
    a, b, c, d, e, f = (u.id for u in units)
    backend, _ = open_sqlite_edges(None)
    cache = EdgeCache(backend)
    edges = [Edge(src=a, dst=b, type="semantic", weight=0.9), Edge(src=b, dst=c, type="semantic", weight=0.8),
             Edge(src=c, dst=d, type="semantic", weight=0.7), Edge(src=a, dst=e, type="structural", weight=0.6),
             Edge(src=b, dst=f, type="semantic", weight=0.5)]
    backend.add(NS, edges)
    return units, backend, cache


def plain(reached):
    return {uid: (r.anchor, r.path, r.strength) for uid, r in reached.items()}


def test_kept_walks_serve_the_same_reach_whatever_each_call_excludes(chain):
    units, _, cache = chain
    index, graph = index_of(units), cache.walkable(NS)
    a, b, c, d, e, f = (u.id for u in units)
    walks = shared_walks(index, graph, "semantic")
    assert walks is not None and shared_walks(index, graph, "semantic") is walks
    assert shared_walks(index, graph, "structural") is not walks  # one map per channel
    for taken in ({a}, {a, b}, {a, c, f}):
        exclude = Unreachable(taken=taken, rows=index.pos, limit=len(index))
        fresh = reachable(graph, [a, d], "semantic", 2, exclude)
        assert plain(reachable(graph, [a, d], "semantic", 2, exclude, walks=walks)) == plain(fresh)
        assert not taken & set(fresh)
    assert set(walks) == {(a, 2), (d, 2)}
    assert walks.steps.of(a) == [(b, 0.9)]  # semantic edges only
    assert walks.steps.of(b) == [(a, 0.9), (c, 0.8), (f, 0.5)]
    hits = expand_channel(graph, [a], "semantic", lambda ids: [0.5] * len(ids), ExpansionConfig(hops=2, per_channel=3),
                          exclude=Unreachable(taken={a}, rows=index.pos, limit=len(index)), walks=walks)
    assert [h.unit_id for h in hits] == [b, c, f] and hits[1].path == [a, b, c]


def test_a_write_or_a_grown_index_is_never_served_an_old_walk(chain):
    units, backend, cache = chain
    index, graph = index_of(units), cache.walkable(NS)
    a, b, _, d, _, _ = (u.id for u in units)
    before = shared_walks(index, graph, "semantic")
    assert before is not None
    exclude = Unreachable(taken={a}, rows=index.pos, limit=len(index))
    assert d not in reachable(graph, [a], "semantic", 2, exclude, walks=before)
    edge = Edge(src=a, dst=d, type="semantic", weight=0.95)  # a writer links a to d
    backend.add(NS, [edge])
    cache.add(NS, [edge])
    after = shared_walks(index, graph, "semantic")
    assert after is not before and not after and not after.steps  # no step read before the write is served
    assert reachable(graph, [a], "semantic", 2, exclude, walks=after)[d].path == [a, d]
    newer = make_units(7)[6]
    index.add([newer], np.ones((1, 6), dtype=np.float32))  # rows grew: rarities and held rows moved
    assert shared_walks(index, graph, "semantic") is not after


def test_walks_are_kept_only_for_a_graph_that_says_when_it_changes(chain):
    units, _, cache = chain
    index = index_of(units)
    hidden = nx.restricted_view(cache.walkable(NS), [units[1].id], [])
    assert shared_walks(index, hidden, "semantic") is None
    assert shared_walks(index, nx.Graph([(units[0].id, units[1].id)]), "semantic") is None


def test_kept_steps_stop_growing_at_their_limit():
    from langchain_ripplemem.recall.expansion import Steps

    steps = Steps(limit=5)
    steps.keep("a", [("b", 0.9), ("c", 0.5)])
    steps.keep("x", [("y", 1.0), ("z", 1.0)])  # 3 + 3 > 5: not kept
    assert set(steps) == {"a"} and steps.kept == 3
    assert not Steps(0).keep("a", []) and not Steps(0)


def test_kept_walks_stop_growing_at_their_limit():
    walks = KeptWalks(state=(), limit=3)
    walks[("a", 2)] = [{"b": (("a", "b"), 1.0)}, {"c": (("a", "b", "c"), 0.5)}]
    walks[("x", 2)] = [{"y": (("x", "y"), 1.0), "z": (("x", "z"), 1.0)}, {}]
    assert set(walks) == {("a", 2)} and walks.reached == 2


def test_the_walk_graph_says_which_memories_have_edges_as_the_whole_graph_does(chain):
    units, backend, cache = chain
    ids = [u.id for u in units] + ["no-such-memory"]
    whole = cache.networkx(NS)
    expected = {uid for uid in ids if uid in whole and whole.degree(uid) > 0}
    assert expected == set(ids[:-1])
    assert with_edges(walkable_edges(backend, NS), ids) == expected
    graph = cache.walkable(NS)
    _ = graph.adj[units[0].id]  # one node read already, the others asked
    assert with_edges(graph, ids) == expected == with_edges(whole, ids)


class CountingBackend:
    """An edge store that counts its reads (the walkable edges' queries) and its questions of which ids have edges."""

    def __init__(self, backend):
        self.backend, self.reads, self.asks = backend, [], []

    def edge_rows(self, namespace, unit_ids=None):
        self.reads.append(None if unit_ids is None else list(unit_ids))
        return self.backend.edge_rows(namespace, unit_ids)

    def with_edges(self, namespace, unit_ids):
        self.asks.append(list(unit_ids))
        return self.backend.with_edges(namespace, unit_ids)


def test_which_memories_have_edges_is_asked_without_reading_edges_and_kept_until_a_write(chain):
    units, backend, _ = chain
    a, b, *_ = (u.id for u in units)
    counting = CountingBackend(backend)
    cache = EdgeCache(counting)
    graph = cache.walkable(NS)
    _ = graph.adj[a]  # read: known without asking
    assert with_edges(graph, [a, b, "loner"]) == {a, b}
    assert counting.reads == [[a]] and counting.asks == [[b, "loner"]]
    assert with_edges(graph, [b, "loner"]) == {b} and len(counting.asks) == 1  # kept
    edge = Edge(src="loner", dst=a, type="semantic", weight=0.9)
    backend.add(NS, [edge])
    cache.add(NS, [edge])  # the write's mirror: "loner" and a are asked again
    assert with_edges(graph, [a, b, "loner"]) == {a, b, "loner"} and counting.asks[-1] == [a, "loner"]


def test_an_edge_store_without_with_edges_is_read_instead(chain):
    units, backend, _ = chain

    class EdgesOnly:  # an edge store written before with_edges was part of the protocol
        def edge_rows(self, namespace, unit_ids=None):
            return backend.edge_rows(namespace, unit_ids)

    ids = [u.id for u in units] + ["loner"]
    assert with_edges(walkable_edges(EdgesOnly(), NS), ids) == set(ids[:-1]) \
        == with_edges(walkable_edges(backend, NS), ids)


def test_an_answer_asked_while_a_write_landed_is_not_kept(chain):
    units, backend, _ = chain
    a = units[0].id
    graph = walkable_edges(backend, NS)
    adjacency = graph._adj

    class WriteDuringAsk:
        def with_edges(self, namespace, unit_ids):
            found = backend.with_edges(namespace, unit_ids)  # "loner" has no edge yet
            backend.add(NS, [Edge(src="loner", dst=a, type="semantic", weight=0.9)])
            adjacency.forget(["loner", a])  # the writer's catch-up, before the answer is stored
            return found

    adjacency.backend = WriteDuringAsk()
    assert with_edges(graph, ["loner"]) == set()  # what the store said when asked
    adjacency.backend = backend
    assert with_edges(graph, ["loner"]) == {"loner"}  # asked again: the stale answer was not kept


def test_a_batched_read_gives_each_node_what_reading_it_alone_gives():
    rng = np.random.default_rng(7)
    ids = [f"u{i:02d}" for i in range(30)]
    backend, _ = open_sqlite_edges(None)
    pairs = {tuple(sorted(rng.choice(30, 2, replace=False))) for _ in range(120)}
    backend.add(NS, [Edge(src=ids[i], dst=ids[j], type=("semantic", "structural")[int(rng.integers(2))],
                          weight=round(float(rng.random()), 3)) for i, j in pairs])
    alone = walkable_edges(backend, NS)
    batched = walkable_edges(backend, NS)
    batched._adj.read(ids + ["no-such-memory"])
    for uid in ids:  # same neighbours, types, weights and neighbour order
        assert list(batched._adj[uid].items()) == list(alone.adj[uid].items())
    assert "no-such-memory" not in batched and batched._adj.edges_read == alone._adj.edges_read


def test_a_walk_reads_each_hop_in_one_query(chain):
    units, backend, _ = chain
    a, b, c, d, e, f = (u.id for u in units)
    counting = CountingBackend(backend)
    graph = walkable_edges(counting, NS)
    found = reachable(graph, [a], "semantic", hops=3, exclude=set())
    assert set(found) == {b, c, d, f}
    # the anchor, then each hop's frontier ({b}, then {c, f}): one query each, not one a node
    assert counting.reads == [[a], [b], [c, f]]
    assert with_edges(graph, [a, b, c, d, e]) == {a, b, c, d, e} and counting.asks == [[d, e]]  # the unread ones
    counting.reads.clear()
    hiding_f = nx.restricted_view(walkable_edges(counting, NS), [f], [])  # recall hides memories so
    assert set(reachable(hiding_f, [a], "semantic", hops=3, exclude=set())) == {b, c, d}
    assert counting.reads == [[a], [b], [c]]


def test_cue_values_follow_the_index_as_it_grows():
    units = make_units(2, participants=["Maya", "SAM"])
    index = index_of(units)
    assert cue_values(index) == [frozenset({"maya", "sam"})] * 2
    other = make_unit("in Lisbon", namespace=NS, turns=["9"], locations=["Lisbon"])
    index.add([other], np.ones((1, 2), dtype=np.float32))
    assert cue_values(index)[2] == frozenset({"lisbon"}) and len(cue_values(index)) == 3


def test_recalls_that_share_kept_walks_return_what_fresh_recalls_return(bow):
    conversation, questions = load_sample()
    warm, cold = RippleMem(bow), RippleMem(bow)
    for m in (warm, cold):
        m.add_conversation(conversation, namespace=NS)
    asked = [q["question"] for q in questions]
    for question in asked:  # the warm memory walks from these anchors first
        warm.recall(question, namespace=NS)
    assert any(len(kept) for per_index in recall_walks._SHARED.values() for kept in per_index.values())
    for question in asked:
        again, fresh = warm.recall(question, namespace=NS), cold.recall(question, namespace=NS)
        assert [(m.unit.id, m.score, m.provenance) for m in again.memories] == \
            [(m.unit.id, m.score, m.provenance) for m in fresh.memories]
        assert [r.model_dump(exclude={"usage"}) for r in again.rounds] == \
            [r.model_dump(exclude={"usage"}) for r in fresh.rounds]


def test_units_past_the_rows_a_recall_scored_are_not_reached(chain):
    units, _, cache = chain
    index, graph = index_of(units), cache.walkable(NS)
    a, b, c, _, _, f = (u.id for u in units)
    # A writer added rows 3.. after the recall took its scores (limit 3): f (row 5) counts as absent.
    late = Unreachable(taken={a}, rows=index.pos, limit=3)
    walks = shared_walks(index, graph, "semantic")
    assert set(reachable(graph, [a], "semantic", 2, late)) == {b, c}
    assert set(reachable(graph, [a], "semantic", 2, late, walks=walks)) == {b, c}
    assert set(reachable(graph, [a], "semantic", 2, Unreachable(taken={a}, rows=index.pos, limit=6))) == {b, c, f}
