"""RippleMemStore contract tests, modelled on LangGraph's own store tests (sync and async)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pytest
from langgraph.config import get_store
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.errors import ExtractionError
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.presets import PAPER_WRITE
from langchain_ripplemem.stores import RippleMemStore, item_text
from langchain_ripplemem.write.extraction.extractor import ExtractionResult
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor

from .conftest import BagOfWordsEmbeddings, make_conversation

MAYA, SAM = ("users", "maya"), ("users", "sam")


@pytest.fixture
def memory() -> RippleMem:
    return RippleMem(BagOfWordsEmbeddings(), write_config=PAPER_WRITE)  # tiny chats: the paper's edges


@pytest.fixture
def store(memory) -> RippleMemStore:
    return RippleMemStore(memory)


@pytest.fixture(params=["sync", "async"])
def mode(request) -> str:
    return request.param


async def call(store: RippleMemStore, mode: str, method: str, *args, **kwargs):
    """Run a BaseStore method through batch (sync) or abatch (async)."""
    if mode == "sync":
        return getattr(store, method)(*args, **kwargs)
    return await getattr(store, f"a{method}")(*args, **kwargs)


async def test_put_get_round_trip(store, mode):
    value = {"text": "I am allergic to shellfish.", "tags": ["health"], "level": 3}
    await call(store, mode, "put", MAYA, "allergy", value)
    item = await call(store, mode, "get", MAYA, "allergy")
    assert item.value == value and item.key == "allergy" and item.namespace == MAYA
    assert isinstance(item.created_at, datetime) and item.created_at == item.updated_at
    assert await call(store, mode, "get", MAYA, "missing") is None
    assert await call(store, mode, "get", SAM, "allergy") is None


async def test_re_put_replaces_units_and_keeps_created_at(store, memory, mode):
    await call(store, mode, "put", MAYA, "allergy", {"text": "I am allergic to shellfish."})
    first = await call(store, mode, "get", MAYA, "allergy")
    await call(store, mode, "put", MAYA, "allergy", {"text": "The allergist says peanuts are fine now."})
    second = await call(store, mode, "get", MAYA, "allergy")
    assert second.value == {"text": "The allergist says peanuts are fine now."}
    assert second.created_at == first.created_at and second.updated_at > first.updated_at
    (unit,) = memory.list_units(MAYA)
    assert "peanuts" in unit.restatement and unit.metadata["store_key"] == "allergy"


async def test_delete_removes_units_and_edges(store, memory, mode):
    await call(store, mode, "put", MAYA, "a", {"text": "Maya went hiking in Portland with Priya."})
    await call(store, mode, "put", MAYA, "b", {"text": "Maya and Priya hiked near Portland again."})
    gone = {u.id for u in memory.list_units(MAYA) if u.metadata["store_key"] == "a"}
    assert any({e.src, e.dst} & gone for e in memory.edges(MAYA))
    await call(store, mode, "delete", MAYA, "a")
    assert await call(store, mode, "get", MAYA, "a") is None
    assert await call(store, mode, "get", MAYA, "b") is not None
    assert not any({e.src, e.dst} & gone for e in memory.edges(MAYA))
    await call(store, mode, "delete", MAYA, "never-existed")  # a no-op, like LangGraph's stores


async def test_search_without_query_lists_filters_and_pages(store, mode):
    for i in range(5):
        await call(store, mode, "put", MAYA, f"doc{i}", {"text": f"note number {i}", "n": i,
                                                         "color": "red" if i % 2 else "blue"})
    listed = await call(store, mode, "search", MAYA)
    assert [r.key for r in listed] == [f"doc{i}" for i in range(5)] and all(r.score is None for r in listed)
    assert [r.key for r in await call(store, mode, "search", MAYA, limit=2, offset=2)] == ["doc2", "doc3"]
    assert [r.key for r in await call(store, mode, "search", MAYA, filter={"color": "red"})] == ["doc1", "doc3"]
    assert [r.key for r in await call(store, mode, "search", MAYA, filter={"n": {"$gte": 3}})] == ["doc3", "doc4"]
    with pytest.raises(ValueError, match="filter: unknown operator"):
        await call(store, mode, "search", MAYA, filter={"n": {"$near": 3}})


async def test_search_with_query_recollects_and_ranks(store, mode):
    await call(store, mode, "put", MAYA, "allergy", {"text": "I am allergic to shellfish, no shrimp."})
    await call(store, mode, "put", MAYA, "pet", {"text": "My cat Biscuit hates the vet."})
    await call(store, mode, "put", SAM, "grill", {"text": "Harbor Grill serves the best shrimp and oysters."})
    results = await call(store, mode, "search", ("users",), query="shrimp allergy")
    assert results[0].key == "allergy" and results[0].score is not None
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    assert {r.namespace for r in results} == {MAYA, SAM}
    only_maya = await call(store, mode, "search", MAYA, query="shrimp allergy")
    assert {r.namespace for r in only_maya} == {MAYA}
    assert [r.key for r in await call(store, mode, "search", ("users",), query="shrimp", limit=1)] == ["allergy"]
    unfiltered = await call(store, mode, "search", ("users",), query="shrimp")
    kept = await call(store, mode, "search", ("users",), query="shrimp", filter={"text": {"$ne": "x"}})
    assert [r.key for r in kept] == [r.key for r in unfiltered]
    grill = {"text": "Harbor Grill serves the best shrimp and oysters."}
    assert [r.key for r in await call(store, mode, "search", ("users",), query="shrimp", filter=grill)] == ["grill"]


async def test_search_filters_before_ranking_and_fills_the_page_as_langgraph_does(memory, mode):
    # Recollection returns its best few (top_k 3 here); the filter and the page are over every item.
    store = RippleMemStore(memory, recall_config=RecallConfig(assembly={"top_k": 3},
                                                              views={"semantic_k": 3, "lexical_k": 3, "cue_k": 3}))
    for day in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"):
        await call(store, mode, "put", MAYA, f"dinner-{day}", {"text": f"Dinner on {day} at the noodle bar.",
                                                              "kind": "plans"})
    await call(store, mode, "put", MAYA, "allergy", {"text": "I am allergic to shellfish.", "kind": "health"})
    await call(store, mode, "put", MAYA, "knee", {"text": "My knee hurts after running.", "kind": "health"})
    health = await call(store, mode, "search", MAYA, query="dinner at the noodle bar", filter={"kind": "health"},
                        limit=2)
    assert sorted(r.key for r in health) == ["allergy", "knee"]  # before: [], recollection's best were dinners
    scores = [r.score for r in health]  # what recollection ranked first, then the rest (score None)
    assert scores == sorted((s for s in scores if s is not None), reverse=True) + [None] * scores.count(None)
    page = await call(store, mode, "search", MAYA, query="dinner at the noodle bar", limit=8)
    assert len({r.key for r in page}) == 8 and page[0].key.startswith("dinner-")


async def test_search_dedupes_an_item_split_into_several_units(mode):
    memory = RippleMem(BagOfWordsEmbeddings(), extractor=RuleBasedExtractor(max_turn_chars=100))
    store = RippleMemStore(memory)
    long_text = " ".join(f"In summer {year} Maya went hiking in the Cascades with Priya." for year in range(2018, 2024))
    await call(store, mode, "put", MAYA, "hiking", {"text": long_text})
    assert len(memory.list_units(MAYA)) > 1
    results = await call(store, mode, "search", MAYA, query="hiking Cascades")
    assert [r.key for r in results] == ["hiking"]
    assert (await call(store, mode, "get", MAYA, "hiking")).value == {"text": long_text}


async def test_empty_query_lists(store, mode):
    await call(store, mode, "put", MAYA, "doc", {"text": "test document"})
    assert len(await call(store, mode, "search", MAYA, query="")) == 1
    assert len(await call(store, mode, "search", MAYA, query="test!@#$%^&*()")) == 1


async def test_list_namespaces(store, mode):
    spaces = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"), ("a", "c", "f"),
              ("b", "a", "f"), ("users", "123"), ("users", "456", "settings"), ("admin", "users", "789")]
    for i, ns in enumerate(spaces):
        await call(store, mode, "put", ns, f"id_{i}", {"data": f"value_{i:02d}"})
    ls = lambda **kw: call(store, mode, "list_namespaces", **kw)  # noqa: E731
    assert await ls() == sorted(spaces)
    assert await ls(prefix=("a", "b")) == [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"),
                                            ("a", "b", "f")]
    assert await ls(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert await ls(prefix=("a",), suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert await ls(prefix=("a", "b"), max_depth=3) == [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")]
    assert await ls(prefix=("a", "b"), limit=2) == [("a", "b", "c"), ("a", "b", "d", "e")]
    assert await ls(prefix=("a", "b"), offset=2) == [("a", "b", "d", "i"), ("a", "b", "f")]
    assert await ls(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert await ls(suffix=("*", "f")) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert await ls(prefix=("nonexistent",)) == []
    assert await ls(max_depth=1) == [("a",), ("admin",), ("b",), ("users",)]


async def test_batch_of_mixed_ops(store, mode):
    await call(store, mode, "put", MAYA, "old", {"text": "Maya adopted a cat named Biscuit."})
    ops = [
        PutOp(MAYA, "new", {"text": "first draft"}),
        GetOp(MAYA, "old"),
        GetOp(MAYA, "new"),  # reads see the store as it was before the batch
        SearchOp(("users",), query="cat Biscuit", limit=5),
        ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("users",)),)),
        PutOp(MAYA, "new", {"text": "final text"}),  # the last write per key wins
        PutOp(MAYA, "old", None),
    ]
    results = store.batch(ops) if mode == "sync" else await store.abatch(ops)
    assert results[0] is None and results[5] is None and results[6] is None
    assert results[1].value == {"text": "Maya adopted a cat named Biscuit."} and results[2] is None
    assert [r.key for r in results[3]] == ["old"]
    assert results[4] == [MAYA]
    assert (await call(store, mode, "get", MAYA, "new")).value == {"text": "final text"}
    assert await call(store, mode, "get", MAYA, "old") is None


async def test_namespaces_are_isolated(store, mode):
    await call(store, mode, "put", MAYA, "k", {"text": "Maya likes tea"})
    await call(store, mode, "put", SAM, "k", {"text": "Sam likes coffee"})
    assert (await call(store, mode, "get", MAYA, "k")).value == {"text": "Maya likes tea"}
    await call(store, mode, "delete", SAM, "k")
    assert (await call(store, mode, "get", MAYA, "k")).value == {"text": "Maya likes tea"}
    assert await call(store, mode, "search", SAM, query="likes") == []
    assert await call(store, mode, "search", ("users", "ma")) == []  # prefixes match whole labels


@pytest.mark.parametrize("namespace", [(), ("the", "thing.about"), ("some", "fun", ""), (123,)])
async def test_invalid_namespaces_are_rejected_like_langgraph(store, mode, namespace):
    with pytest.raises(InvalidNamespaceError):
        await call(store, mode, "put", namespace, "foo", {"text": "bar"})
    ops = [PutOp(namespace, "foo", {"text": "bar"})]
    with pytest.raises(InvalidNamespaceError):
        store.batch(ops) if mode == "sync" else await store.abatch(ops)


async def test_the_reserved_root_only_through_a_raw_put_as_langgraph_does(store, memory, mode):
    doc, ns = {"foo": "bar"}, ("langgraph", "foo")
    with pytest.raises(InvalidNamespaceError):
        await call(store, mode, "put", ns, "bar", doc)
    ops = [PutOp(ns, "bar", doc)]
    store.batch(ops) if mode == "sync" else await store.abatch(ops)  # before: InvalidNamespaceError
    assert (await call(store, mode, "get", ns, "bar")).value == doc
    assert [i.value for i in await call(store, mode, "search", ns)] == [doc]
    assert ns in await call(store, mode, "list_namespaces", prefix=("langgraph",))
    await call(store, mode, "delete", ns, "bar")
    assert await call(store, mode, "get", ns, "bar") is None
    with pytest.raises(InvalidNamespaceError, match="langgraph"):  # the memory's own API still refuses the root
        memory.list_units(ns)


@pytest.mark.parametrize("namespace", [("foo.bar",), ("foo", ""), (123,)])
async def test_invalid_labels_rejected_on_reads(store, mode, namespace):
    for method, args in [("get", (namespace, "key")), ("delete", (namespace, "key")), ("search", (namespace,))]:
        with pytest.raises(InvalidNamespaceError):
            await call(store, mode, method, *args)
    with pytest.raises(InvalidNamespaceError):
        await call(store, mode, "list_namespaces", prefix=namespace)


async def test_langgraph_is_fine_below_the_root(store, mode):
    ns = ("foo", "langgraph", "foo")
    await call(store, mode, "put", ns, "bar", {"foo": "bar"})
    assert (await call(store, mode, "get", ns, "bar")).value == {"foo": "bar"}
    assert (await call(store, mode, "search", ns))[0].value == {"foo": "bar"}
    assert await call(store, mode, "get", ("langgraph", "foo"), "bar") is None


async def test_bad_values_name_the_argument(store, mode):
    with pytest.raises(ValueError, match="value must be a dict"):
        await call(store, mode, "put", MAYA, "k", "just a string")
    with pytest.raises(ValueError, match="JSON-serialisable"):
        await call(store, mode, "put", MAYA, "k", {"text": "x", "when": datetime(2024, 1, 1)})
    with pytest.raises(ValueError, match=r'value\["time"\]'):
        await call(store, mode, "put", MAYA, "k", {"text": "x", "time": "not a time"})
    with pytest.raises(ValueError, match="key must be"):
        await call(store, mode, "put", MAYA, "", {"text": "x"})
    with pytest.raises(ValueError, match="ttl must be"):
        await call(store, mode, "put", MAYA, "k", {"text": "x"}, ttl=-5)
    with pytest.raises(ValueError, match="index must be"):
        await call(store, mode, "put", MAYA, "k", {"text": "x"}, index="text")
    assert await call(store, mode, "search", MAYA) == []  # nothing half-written


def test_text_rule():
    assert item_text({"text": "a", "content": "b"}) == "a"
    assert item_text({"content": "b", "other": "c"}) == "b"
    assert item_text({"food": "pizza", "speaker": "Maya", "time": "2024-01-01", "n": 3}) == "food: pizza"
    assert item_text({"n": 3}) == '{"n": 3}'


async def test_speaker_and_time_shape_the_units(store, memory, mode):
    value = {"text": "I adopted a cat yesterday.", "speaker": "Maya", "time": "2024-05-08T10:00:00Z"}
    await call(store, mode, "put", MAYA, "cat", value)
    (unit,) = memory.list_units(MAYA)
    assert "Maya" in unit.participants and unit.time.start.date().isoformat() == "2024-05-07"
    assert unit.source.conversation_id == "cat"


async def test_units_written_elsewhere_are_items_too(store, memory, mode):
    memory.add_conversation(make_conversation(), namespace=MAYA)
    await call(store, mode, "put", MAYA, "note", {"text": "Maya's birthday is in April."})
    listed = await call(store, mode, "search", MAYA, limit=100)
    assert len(listed) == len(memory.list_units(MAYA))
    foreign = next(r for r in listed if r.key != "note")
    assert foreign.value["conversation_id"] == "c1" and foreign.value["content"]
    await call(store, mode, "delete", MAYA, foreign.key)
    assert await call(store, mode, "get", MAYA, foreign.key) is None


async def test_a_value_without_units_is_an_error(memory, mode):
    class Nothing:
        def extract(self, window, namespace):
            return ExtractionResult()

        async def aextract(self, window, namespace):
            return ExtractionResult()

    memory.extractor = Nothing()
    store = RippleMemStore(memory)
    with pytest.raises(ExtractionError, match="produced no memory units"):
        await call(store, mode, "put", MAYA, "k", {"text": "hello"})


def test_store_wraps_the_extractor_once(memory):
    RippleMemStore(memory)
    wrapped = memory.extractor
    RippleMemStore(memory)
    assert memory.extractor is wrapped
    memory.add_conversation(make_conversation(), namespace=MAYA)  # unstamped: untouched
    assert not any("store_key" in u.metadata for u in memory.list_units(MAYA))


@dataclass
class UserContext:
    user_id: str


def test_graph_nodes_read_and_write_through_the_store(store):
    def remember(state: MessagesState, runtime: Runtime[UserContext]) -> dict:
        ns = ("users", runtime.context.user_id)
        text = state["messages"][-1].content
        runtime.store.put(ns, f"msg-{text[:4]}", {"text": text, "speaker": runtime.context.user_id})
        return {}

    def answer(state: MessagesState, runtime: Runtime[UserContext]) -> dict:
        hits = get_store().search(("users", runtime.context.user_id), query="Is Maya allergic to anything?", limit=1)
        return {"messages": [("ai", f"I remember: {hits[0].value['text']}")]}

    builder = StateGraph(MessagesState, context_schema=UserContext)
    builder.add_node("remember", remember)
    builder.add_node("answer", answer)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "answer")
    builder.add_edge("answer", END)
    graph = builder.compile(store=store)
    graph.invoke({"messages": [("user", "I am allergic to shellfish.")]}, context=UserContext("maya"))
    out = graph.invoke({"messages": [("user", "Book Harbor Grill?")]}, context=UserContext("maya"))
    assert out["messages"][-1].content == "I remember: I am allergic to shellfish."
    assert {i.key for i in store.search(("users", "maya"))} == {"msg-I am", "msg-Book"}
