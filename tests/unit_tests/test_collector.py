"""Recall holds the cyclic garbage collector off (collector.py), and gives it back as it found it."""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from langchain_ripplemem._runtime import collector
from langchain_ripplemem._runtime.collector import collector_paused, paused, set_enabled
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.recall import NODE_NAMES, RecallContext, build_recall_graph

from .conftest import filled_memory

NS = ("maya",)
QUESTION = "Should Maya accept Sam's dinner pick?"


@pytest.fixture(autouse=True)
def _collector_restored() -> Iterator[None]:
    threshold, enabled = gc.get_threshold(), gc.isenabled()
    yield
    gc.set_threshold(*threshold)
    set_enabled(True)
    (gc.enable if enabled else gc.disable)()


@pytest.fixture(scope="module")
def memory() -> RippleMem:
    return filled_memory(NS)


def frames_during_collections(run) -> list[set[str]]:
    """The function names on the stack at each collection that starts while ``run()`` runs."""
    stacks: list[set[str]] = []

    def seen(phase: str, info: dict) -> None:
        if phase == "start":
            frame, names = sys._getframe(1), set()
            while frame is not None:
                names.add(frame.f_code.co_name)
                frame = frame.f_back
            stacks.append(names)

    gc.set_threshold(5)  # a collection every few allocations: a recall would see hundreds
    gc.callbacks.append(seen)
    try:
        run()
    finally:
        gc.callbacks.remove(seen)
    return stacks


def test_block_pauses_and_restores():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # an inner pause ending does not end the outer one
    assert gc.isenabled()


def test_a_collector_the_application_turned_off_stays_off():
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_pausing_turned_off_leaves_the_collector_alone():
    set_enabled(False)
    with collector_paused():
        assert gc.isenabled()


def test_error_inside_still_restores():
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_overlapping_threads_share_one_pause():
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def first() -> None:
        with collector_paused():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with collector_paused():
            second_in.set()
            first_out.wait(5)
            seen["after the first ended"] = gc.isenabled()
        seen["after both ended"] = gc.isenabled()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert seen == {"after the first ended": False, "after both ended": True}


def test_overlapping_pauses_give_the_collector_back_past_the_limit(monkeypatch):
    monkeypatch.setattr(collector, "MAX_PAUSE_SECONDS", 0.05)
    with collector_paused():
        assert not gc.isenabled()
        time.sleep(0.1)
        with collector_paused():  # a pause beginning past the limit gives the collector back
            assert gc.isenabled()
        assert gc.isenabled()
    assert gc.isenabled()
    with collector_paused():  # and the next pause, after all ended, holds it off again
        assert not gc.isenabled()


def test_paused_keeps_the_function_and_its_result():
    @paused
    def add(a: int, b: int = 1) -> int:
        """Adds."""
        assert not gc.isenabled()
        return a + b

    assert add(2, b=3) == 5 and add.__doc__ == "Adds." and add.__name__ == "add"
    assert gc.isenabled()


def test_no_collection_runs_inside_a_recall(memory):
    """Without the pause, a recall at this threshold sees collections inside RippleMem.recall."""
    memory.recall(QUESTION, namespace=NS)  # the graph is built and the view loaded before the run: not timed here
    stacks = frames_during_collections(lambda: memory.recall(QUESTION, namespace=NS))
    # At the pause's two ends a collection may run (the allocations that start and end it); inside the run none.
    assert not [names for names in stacks if "invoke" in names], "a collection ran inside recall"
    set_enabled(False)
    stacks = frames_during_collections(lambda: memory.recall(QUESTION, namespace=NS))
    assert [names for names in stacks if "invoke" in names], "the check would not see a collection"


def test_recall_graph_nodes_run_paused_as_a_subgraph_too(memory):
    """The compiled graph on its own (as a subgraph or in `langgraph dev`): its nodes hold the collector off."""
    graph = build_recall_graph(memory.reader)
    nodes = set(NODE_NAMES) - {"answer"}

    def run() -> None:
        graph.invoke({"query": QUESTION}, context=RecallContext(namespace=NS))

    stacks = frames_during_collections(run)
    assert not [names & nodes for names in stacks if names & nodes]
    set_enabled(False)
    assert [names & nodes for names in frames_during_collections(run) if names & nodes]


def test_what_recall_keeps_between_recalls_is_not_tracked_by_the_collector(memory):
    """The walkable edges' edges, the walks' steps and the time bridges a view keeps: flat tuples, not dicts and lists.

    Each tracked object a recall keeps is walked by every later full collection, and
    moving it to the oldest generation brings the next one closer.
    """
    from langchain_ripplemem.recall import bridging, walks

    memory.recall("When is Sam's dinner at the seafood place?", namespace=NS)
    gc.collect()
    index = memory.reader.namespace_index(NS)
    edges = list(dict.values(memory.reader.walkable_edges(NS)._adj))
    steps = [s for kept in walks._SHARED[index].values() for s in kept.steps.values()]
    bridges = [found for key, shared in bridging._SHARED[index].items() if key[1] == "mentioned"
               for found in shared._found.values()]
    assert edges and steps and bridges
    assert [held for held in edges + steps + bridges if gc.is_tracked(held)] == []


def test_a_pause_when_false_does_nothing():
    with collector_paused(when=False):
        assert gc.isenabled()
