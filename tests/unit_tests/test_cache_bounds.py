"""Per-namespace caches are bounded (count and bytes) and evicted least recently used (issue 16, item 3)."""

from __future__ import annotations

import pytest

from langchain_ripplemem.cache_bounds import CacheBounds, LRUCache
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.schemas import namespace_key

from .conftest import BagOfWordsEmbeddings, make_unit


def test_the_least_recently_used_leave_past_the_count():
    cache: LRUCache[str] = LRUCache(max_items=3, max_bytes=10**6, size=len)
    for key in "abcd":
        cache.put(key, key)
        if key == "c":
            assert cache.get("a") == "a"  # "a" is now more recent than "b"
    assert cache.keys() == ["c", "a", "d"]
    assert cache.get("b") is None


def test_values_are_re_sized_when_used_and_the_one_in_use_stays():
    grows: list[int] = [10]
    cache: LRUCache[list[int]] = LRUCache(max_items=10, max_bytes=25, size=lambda v: v[0])
    cache.put("a", [10])
    cache.put("b", grows)
    grows[0] = 100  # a namespace that grew past the byte bound by itself
    assert cache.get("b") is grows
    assert cache.keys() == ["b"] and cache.nbytes == 100
    assert cache.pop("b") is grows and cache.nbytes == 0 and len(cache) == 0


@pytest.mark.parametrize(("field", "value"), [("max_namespaces", 0), ("max_bytes", -1), ("max_namespaces", 2.5)])
def test_bounds_must_be_positive_integers(field, value):
    with pytest.raises(ValueError, match=field):
        CacheBounds(**{field: value})


def _say(memory: RippleMem, i: int) -> None:
    memory.add_conversation({"id": f"c{i}", "sessions": [{"id": "S1", "time": "2026-03-02T19:00:00+00:00", "turns": [
        {"id": "S1:1", "speaker": "Maya", "text": f"My locker code is {1000 + i}, topic number {i}."},
        {"id": "S1:2", "speaker": "Sam", "text": "Noted, I will keep it secret."}]}]}, namespace=("users", f"u{i}"))


def test_a_memory_keeps_at_most_its_bound_and_reloads_what_left(tmp_path):
    memory = RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path,
                       cache_bounds=CacheBounds(max_namespaces=3))
    for i in range(6):
        _say(memory, i)
    for i in range(6):
        got = memory.recall("What is the locker code?", namespace=("users", f"u{i}"), k=2)
        assert f"{1000 + i}" in got.memories[0].unit.restatement  # evicted or not, its own memories only
        assert {m.unit.namespace for m in got.memories} == {("users", f"u{i}")}
        assert len(memory.index._indexes) <= 3 and len(memory.edge_cache._graphs) <= 3
    assert memory.index._indexes.keys()[-1] == namespace_key(("users", "u5"))

    memory.add_conversation({"id": "late", "sessions": [{"id": "S9", "turns": [
        {"id": "S9:1", "speaker": "Maya", "text": "New locker code 4242 for the gym."}]}]}, namespace=("users", "u0"))
    top = memory.recall("locker code for the gym", namespace=("users", "u0"), k=1).memories[0]
    assert "4242" in top.unit.restatement


def test_a_byte_bound_keeps_only_the_namespace_in_use():
    memory = RippleMem(BagOfWordsEmbeddings(), cache_bounds=CacheBounds(max_bytes=1))
    for i in range(3):
        _say(memory, i)
    memory.recall("locker code", namespace=("users", "u1"))
    assert memory.index._indexes.keys() == memory.edge_cache._walks.keys() == [namespace_key(("users", "u1"))]
    assert memory.stats(("users", "u2")).units == 2  # reloaded from storage on use


WORDS = ("puppy park leash shoes morning walk pottery class Lisbon Berlin violin lessons marathon training "
         "garden tomatoes allergy shellfish birthday dinner concert tickets camping trip chess club").split()


def _dialogue(memory: RippleMem, ns: tuple[str, ...], sessions: int, turns: int, seed: int) -> None:
    """Two speakers, texts of 4 to 60 words (the estimates count characters too)."""
    import random

    rng = random.Random(seed)
    for s in range(sessions):
        memory.add_conversation({"id": f"c{s}", "sessions": [{
            "id": f"S{s}", "time": f"2026-03-{1 + s % 28:02d}T19:00:00+00:00", "turns": [
                {"id": f"S{s}:{t}", "speaker": ("Maya", "Sam")[t % 2],
                 "text": " ".join(rng.choice(WORDS) for _ in range(rng.choice((4, 12, 60)))) + "."}
                for t in range(turns)]}]}, namespace=ns)


def _freed(drop) -> int:  # noqa: ANN001 - a callable that lets go of the cached value
    """Bytes tracemalloc sees freed when ``drop()`` lets the value go."""
    import gc
    import tracemalloc

    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    drop()
    gc.collect()
    return before - tracemalloc.get_traced_memory()[0]


def test_the_estimates_match_what_a_namespace_frees_when_it_leaves():
    import tracemalloc

    from langchain_ripplemem.edges.edge_cache import _graph_bytes

    memory = RippleMem(BagOfWordsEmbeddings())
    ns = ("users", "maya")
    _dialogue(memory, ns, sessions=12, turns=20, seed=1)
    tracemalloc.start()
    try:
        memory.index.invalidate(ns)
        memory.edge_cache.invalidate(ns)
        for query in ("Who went to the park?", "What about the violin lessons in Lisbon?"):
            memory.recall(query, namespace=ns)  # derived caches (BM25, context, cosines) built too
        memory.edge_cache._walks.pop(namespace_key(ns))  # recall walks a graph read node by node: measure
        memory.edge_cache.networkx(ns)  # the whole one
        index, graph = memory.index.cached(ns), memory.edge_cache._graphs.peek(namespace_key(ns))
        assert index is not None and graph is not None and graph.number_of_edges() > 0
        estimates = {"view": index.nbytes, "graph": _graph_bytes(graph)}
        del index, graph
        measured = {"view": _freed(lambda: memory.index.invalidate(ns)),
                    "graph": _freed(lambda: memory.edge_cache.invalidate(ns))}
    finally:
        tracemalloc.stop()
    for what, estimate in estimates.items():
        # Never well under (the bound would not hold); not far over (it would waste the bound). The per-unit amounts
        # were measured under constraints/bench.txt's versions, where the view comes to 0.90-0.91 of what it frees;
        # at the dependency floors (.ci/run's second run; pydantic 2.11, numpy 1.26) units hold a bit more: 0.89-0.90.
        assert 0.85 <= estimate / measured[what] <= 1.5, (what, estimate, measured[what])


@pytest.mark.parametrize("sessions", [4, 24])
def test_the_walk_graph_estimate_matches_what_it_frees(sessions):
    """The graph recall walks holds flat tuples, far smaller per edge than NetworkX's dicts: its own estimate."""
    import tracemalloc

    from langchain_ripplemem.edges.adjacency import adjacency_of
    from langchain_ripplemem.edges.edge_cache import _walk_bytes

    memory = RippleMem(BagOfWordsEmbeddings())
    ns = ("users", "maya")
    _dialogue(memory, ns, sessions=sessions, turns=20, seed=1)
    ids = list(memory.reader.namespace_index(ns).ids)
    tracemalloc.start()
    try:
        memory.edge_cache.invalidate(ns)
        walk = memory.reader.walkable_edges(ns)
        adjacency_of(walk).read(ids)
        assert adjacency_of(walk).edges_read > 0
        estimate = _walk_bytes(walk)
        del walk
        measured = _freed(lambda: memory.edge_cache.invalidate(ns))
    finally:
        tracemalloc.stop()
    assert 0.9 <= estimate / measured <= 1.5, (estimate, measured)


@pytest.mark.slow
def test_memory_held_across_many_namespaces_stays_within_the_bound():
    import tracemalloc

    bound = 3 * 2**20
    memory = RippleMem(BagOfWordsEmbeddings(), cache_bounds=CacheBounds(max_bytes=bound))
    spaces = [("users", f"u{i}") for i in range(120)]
    for i, ns in enumerate(spaces):
        _dialogue(memory, ns, sessions=1, turns=24, seed=i)
    # A first pass fills the process-wide text caches (bounded LRUs of their own), so the
    # measured pass sees what the namespace caches hold, whatever ran before this test.
    for ns in spaces:
        memory.recall("Who went to the park with the puppy?", namespace=ns)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for ns in spaces:  # every namespace once: more than the bound holds
            memory.recall("Who went to the park with the puppy?", namespace=ns)
        import gc

        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert len(memory.index._indexes) < len(spaces)  # the bound was what limited it
    # Live objects stay under the resident bound: views, graphs and every cache the recalls filled.
    assert grown <= bound, grown


def test_indexing_units_leaves_the_recall_cue_set_cache_alone():
    """Each unit's cues are indexed once: caching them only filled the process-wide cache with every unit seen."""
    import numpy as np

    from langchain_ripplemem.index.namespace_index import NamespaceIndex
    from langchain_ripplemem.text.cue_scores import _cue_set

    units = [make_unit(f"Person{i} met Friend{i} in Town{i}.", namespace=("t",), turns=[str(i)],
                       participants=[f"Person{i}", f"Friend{i}"], locations=[f"Town{i}"]) for i in range(300)]
    _cue_set.cache_clear()
    index = NamespaceIndex(("t",))
    index.add(units, np.ones((300, 4), dtype=np.float32))
    assert _cue_set.cache_info().currsize == 0
    assert index.postings["participants"]["person7"] == [7] and index.postings["locations"]["town7"] == [7]


def test_the_process_wide_text_caches_stay_within_a_few_megabytes():
    """They belong to no namespace, so no CacheBounds covers them: filled past their bounds, about 20 MB together."""
    import tracemalloc

    from langchain_ripplemem.cache_bounds import clear_text_caches
    from langchain_ripplemem.text.cue_scores import _cue_set, cue_set
    from langchain_ripplemem.text.lexical import stem

    clear_text_caches()
    tracemalloc.start()
    try:
        for i in range((stem.cache_info().maxsize or 0) + 1000):
            stem(f"wordy{i}ness")  # made here and dropped: only the cache keeps each word
        for i in range((_cue_set.cache_info().maxsize or 0) + 1000):
            cue_set((f"Person {i}", f"Friend {i}", f"Place {i}"))
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
        clear_text_caches()
    assert held <= 32 * 2**20, held
