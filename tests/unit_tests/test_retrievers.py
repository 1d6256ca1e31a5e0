"""RippleMemRetriever: the langchain-tests standard suite (offline) plus our own contract."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.presets import PAPER
from langchain_ripplemem.retrievers import RippleMemRetriever

from .conftest import filled_memory
from .fakes import ScriptedChatModel

NS = ("users", "maya")
QUESTION = "Should Maya accept Sam's birthday dinner pick at Harbor Grill?"


class TestRippleMemRetrieverStandard(RetrieversIntegrationTests):
    """The standard suite, run offline: the constructor params carry a pre-filled memory."""

    _memory: RippleMem | None = None

    @property
    def retriever_constructor(self) -> type[RippleMemRetriever]:
        return RippleMemRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        # One filled memory per test class: building it is the slow part, and the
        # standard tests only read.
        if TestRippleMemRetrieverStandard._memory is None:
            TestRippleMemRetrieverStandard._memory = filled_memory(NS)
        return {"memory": TestRippleMemRetrieverStandard._memory, "namespace": NS, "k": 4}

    @property
    def retriever_query_example(self) -> str:
        return QUESTION


@pytest.fixture(scope="module")
def memory() -> RippleMem:
    return filled_memory(NS)


def test_documents_carry_provenance_metadata(memory):
    docs = RippleMemRetriever(memory=memory, namespace=NS, k=7).invoke(QUESTION)
    assert 0 < len(docs) <= 7
    by_id = {u.id: u for u in memory.list_units(NS)}
    for doc in docs:
        unit = by_id[doc.id]
        meta = doc.metadata
        assert doc.page_content == unit.restatement
        assert meta["id"] == unit.id and meta["namespace"] == list(NS)
        assert meta["turn_ids"] == unit.source.turn_ids
        assert meta["conversation_id"] == "c1" and meta["session_id"] == unit.source.session_id
        assert meta["time_start"] is None or meta["time_start"].startswith("2026-")
        assert set(meta) >= {"participants", "locations", "kind", "score", "found_by", "paths"}
        assert all(src in {"semantic", "lexical", "cue"} or src.startswith("expansion:")
                   for src in meta["found_by"])
    scores = [d.metadata["score"] for d in docs]
    assert scores == sorted(scores, reverse=True)


def test_expanded_memories_report_their_paths(memory):
    # A one-per-view first hop leaves the allergy (S1:1) to graph expansion.
    small = PAPER.replace(views={"semantic_k": 1, "lexical_k": 1, "cue_k": 0})
    retriever = RippleMemRetriever(memory=memory, namespace=NS, k=30, config=small)
    docs = retriever.invoke("What did Maya say she would think about?")
    allergy = next(d for d in docs if d.metadata["turn_ids"] == ["S1:1"])
    assert allergy.metadata["found_by"] == ["expansion:structural"]
    (path,) = allergy.metadata["paths"]
    anchors = {d.id for d in docs if d.metadata["is_anchor"]}
    assert len(path) >= 2 and path[-1] == allergy.id and path[0] in anchors


def test_invoke_k_overrides_constructor_k(memory):
    retriever = memory.as_retriever(namespace=NS, k=6)
    assert len(retriever.invoke(QUESTION, k=2)) == 2
    assert len(retriever.invoke(QUESTION)) == 6


async def test_ainvoke_matches_invoke(memory):
    retriever = memory.as_retriever(namespace=NS, k=5)
    sync_ids = [d.id for d in retriever.invoke(QUESTION)]
    async_ids = [d.id for d in await retriever.ainvoke(QUESTION)]
    assert sync_ids == async_ids


def test_namespace_isolation(memory):
    assert memory.as_retriever(namespace=("users", "nobody"), k=3).invoke(QUESTION) == []


def test_recall_config_is_used(memory):
    no_expansion = RecallConfig(controller={"max_rounds": 0})
    docs = memory.as_retriever(namespace=NS, k=30, config=no_expansion).invoke(QUESTION)
    assert not any(s.startswith("expansion:") for d in docs for s in d.metadata["found_by"])


@pytest.mark.parametrize("bad", [0, -2])
def test_bad_k_is_rejected_naming_k(memory, bad):
    with pytest.raises(ValueError, match="k must"):
        RippleMemRetriever(memory=memory, k=bad)
    with pytest.raises(ValueError, match="k must"):
        memory.as_retriever(namespace=NS).invoke(QUESTION, k=bad)


def test_bad_namespace_is_rejected(memory):
    with pytest.raises(ValueError, match="namespace"):
        RippleMemRetriever(memory=memory, namespace=("a.b",))


def test_recall_nodes_nest_under_the_retriever_run(memory):
    # An explicit (inheritable) tracer sees the whole tree; collect_runs() registers its
    # handler as non-inheritable, so graph node runs would arrive as separate roots.
    tracer = RunCollectorCallbackHandler()
    memory.as_retriever(namespace=NS, k=3).invoke(QUESTION, config={"callbacks": [tracer]})
    (root,) = tracer.traced_runs
    assert root.run_type == "retriever"
    names, stack = set(), list(root.child_runs)
    while stack:
        run = stack.pop()
        names.add(run.name)
        stack.extend(run.child_runs)
    assert {"ripplemem_recall", "extract_cues", "tri_view_recall", "assemble"} <= names


def format_docs(docs: list[Document]) -> str:
    return "\n".join(f"[{d.id[:8]}] {d.page_content}" for d in docs)


def test_lcel_rag_chain_answers_from_recalled_memories(memory):
    def answer(messages):
        context = messages[-1].content
        assert "allergic to shellfish" in context and "Harbor Grill" in context
        return "No: Maya is allergic to shellfish and Harbor Grill is known for oysters."

    llm = ScriptedChatModel(responses=[answer])
    prompt = ChatPromptTemplate.from_messages([
        ("system", "Answer only from the memories."),
        ("human", "Memories:\n{context}\n\nQuestion: {question}"),
    ])
    retriever = memory.as_retriever(namespace=NS, k=10)
    chain = (
        {"context": retriever | RunnableLambda(format_docs), "question": lambda q: q}
        | prompt | llm | StrOutputParser()
    )
    assert chain.invoke(QUESTION).startswith("No: Maya is allergic")
    assert len(llm.calls) == 1
