"""Recall work that follows the query, not the namespace: caches grown by a write's units, bounded walks and sorts."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_ripplemem.config import ContextConfig
from langchain_ripplemem.index import sessions
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.index.sessions import neighbour_rows, speakers
from langchain_ripplemem.recall.query_cues import reference_time
from langchain_ripplemem.recall.smoothing import best_first, in_context, smooth
from langchain_ripplemem.schemas import MemoryUnit, TimeInterval

from .conftest import make_unit

NS = ("grow",)
DAY0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


def unit(i: int, session: str, turn: int | None, speaker: str = "Maya", day: int = 0) -> MemoryUnit:
    metadata = {"speaker": speaker} | ({"turn_index": turn} if turn is not None else {})
    when = DAY0 + timedelta(days=day)
    return make_unit(f"text {i}", uid=f"u{i}", namespace=NS, session=session, turns=[str(i)], metadata=metadata,
                     time=TimeInterval(start=when, end=when))


def grown(units: list[MemoryUnit], cuts: list[int]) -> NamespaceIndex:
    """A view fed in batches, the caches asked after each batch."""
    index, start = NamespaceIndex(NS), 0
    for cut in [*sorted(set(cuts)), len(units)]:
        batch = units[start:cut]
        if batch:
            index.add(batch, np.zeros((len(batch), 4), dtype=np.float32))
            neighbour_rows(index), speakers(index), reference_time(index)
        start = max(start, cut)
    return index


def fresh(units: list[MemoryUnit]) -> NamespaceIndex:
    index = NamespaceIndex(NS)
    index.add(units, np.zeros((len(units), 4), dtype=np.float32))
    return index


turns = st.lists(st.tuples(st.sampled_from(["S1", "S2", "S3"]), st.one_of(st.none(), st.integers(0, 30)),
                           st.sampled_from(["Maya", "Sam", "Priya"]), st.integers(0, 40)), min_size=1, max_size=40)


@settings(max_examples=120, deadline=None)
@given(spec=turns, cuts=st.lists(st.integers(0, 40), max_size=5))
def test_caches_of_a_grown_index_equal_a_fresh_build(spec, cuts):
    units = [unit(i, s, t, speaker, day) for i, (s, t, speaker, day) in enumerate(spec)]
    index, reference = grown(units, cuts), fresh(units)
    assert neighbour_rows(index).tolist() == neighbour_rows(reference).tolist()
    assert speakers(index) == speakers(reference)
    assert reference_time(index) == reference_time(reference)


def test_a_write_orders_only_its_own_units(monkeypatch):
    index = grown([unit(i, "S1", i) for i in range(50)], [])
    calls: list[int] = []
    original = sessions._order_key
    monkeypatch.setattr(sessions, "_order_key", lambda u, row: calls.append(row) or original(u, row))
    index.add([unit(50, "S1", 50), unit(51, "S2", 0)], np.zeros((2, 4), dtype=np.float32))
    assert neighbour_rows(index)[49].tolist() == [48, 50]
    assert calls == [50, 51]


def test_scores_taken_before_a_write_are_smoothed_without_the_new_rows():
    index = fresh([unit(0, "S1", 1), unit(1, "S1", 2)])
    scores = np.array([1.0, 0.0])
    # Another writer adds turn 3 of the session after the scores were taken.
    index.add([unit(2, "S1", 4), unit(3, "S1", 3)], np.zeros((2, 4), dtype=np.float32))
    neighbour_rows(index)  # the cache now knows rows 2 and 3
    expected = smooth(scores, np.array([[-1, 1], [0, -1]]), (0.5, 0.25))
    assert in_context(index, scores, ContextConfig(weight=0.5, weight_2=0.25)).tolist() == expected.tolist()


def test_expansion_walks_the_anchors_neighbourhood_not_the_whole_graph(monkeypatch):
    import networkx as nx

    from langchain_ripplemem.config import RecallConfig

    from .conftest import filled_memory

    memory = filled_memory(NS)  # the paper's edges: seven turns are too few for cue edges
    config = RecallConfig(controller={"sufficiency_similarity": 2.0, "max_rounds": 1},  # always expands
                          views={"semantic_k": 2, "lexical_k": 1, "cue_k": 1})
    expected = memory.recall("Where could Maya celebrate her birthday?", namespace=NS, config=config)
    assert expected.rounds[-1].expanded  # the expansion path ran

    def no_full_pass(graph: nx.Graph) -> None:
        raise AssertionError("recall iterated over every node of the graph")

    monkeypatch.setattr(nx.Graph, "__iter__", no_full_pass)
    got = memory.recall("Where could Maya celebrate her birthday?", namespace=NS, config=config)
    assert [m.unit.id for m in got.memories] == [m.unit.id for m in expected.memories]


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, -1.0, 2.5]), min_size=1, max_size=60),
       k=st.integers(1, 70))
def test_best_first_is_the_full_sorts_first_k(values, k):
    array = np.array(values)
    rows = np.arange(len(values)) * 3  # rows need not be contiguous
    assert best_first(rows, array, k).tolist() == rows[np.lexsort((rows, -array))][:k].tolist()


def test_one_pass_over_the_matrix_serves_every_ask_for_the_same_query():
    rng = np.random.default_rng(0)
    index = NamespaceIndex(NS)
    assert index.cosines(np.ones(4, dtype=np.float32)).shape == (0,)  # empty: no width yet
    index.add([unit(i, "S1", i) for i in range(20)], rng.standard_normal((20, 4)).astype(np.float32))
    query = rng.standard_normal(4).astype(np.float32)
    first = index.cosines(query)
    assert index.cosines(query.tolist()) is first  # the same query as a list (recall state) hits
    assert np.array_equal(first, index.matrix @ query)
    assert not first.flags.writeable
    assert [uid for uid, _ in index.semantic(query, 3)] == [index.ids[i] for i in np.argsort(-first)[:3]]
    index.add([unit(20, "S1", 20)], np.ones((1, 4), dtype=np.float32))
    assert len(index.cosines(query)) == 21  # a grown view is a new pass


def test_another_writers_logged_units_are_not_rechecked_against_every_linked_id(tmp_path):
    from langchain_ripplemem.memory import RippleMem

    from .conftest import BagOfWordsEmbeddings
    from .test_crash_safety import many_turns

    reader = RippleMem(BagOfWordsEmbeddings(), client=None, edges_path=tmp_path / "g.sqlite3")
    writer = RippleMem(BagOfWordsEmbeddings(), unit_backend=reader.unit_backend,
                       edges_path=tmp_path / "g.sqlite3")
    writer.add_conversation(many_turns("first", 6), namespace=NS)
    reader.recall("what about turn 1?", namespace=NS)  # loads and checks the view once
    calls = []
    original = reader.edge_backend.linked_ids
    reader.edge_backend.linked_ids = lambda ns: calls.append(ns) or original(ns)  # type: ignore[method-assign]
    for i in range(3):
        writer.add_conversation(many_turns(f"more{i}", 4), namespace=NS)
        got = reader.recall("what about turn 2?", namespace=NS)  # catches up with the logged units
        assert len(reader.reader.namespace_index(NS)) == 6 + 4 * (i + 1) and got.memories
    assert calls == []
