"""The incremental BM25 index scores and ranks exactly as a bm25s index rebuilt over the same units."""

from __future__ import annotations

from datetime import datetime, timezone

import bm25s
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_ripplemem.index import lexical_rows
from langchain_ripplemem.index import namespace_index as index_module
from langchain_ripplemem.index.bm25 import BM25Index, top_k
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.schemas import MemoryUnit
from langchain_ripplemem.text.lexical import lexical_tokens

from .conftest import make_unit

TERMS = [f"t{i}" for i in range(25)]
documents = st.lists(st.lists(st.sampled_from(TERMS), min_size=1, max_size=12), min_size=1, max_size=60)
queries = st.lists(st.sampled_from([*TERMS, "absent"]), min_size=1, max_size=8)


def _bm25s(docs: list[list[str]]) -> bm25s.BM25:
    retriever = bm25s.BM25()
    retriever.index(docs, show_progress=False)
    return retriever


@settings(max_examples=150, deadline=None)
@given(docs=documents, cuts=st.lists(st.integers(0, 60), max_size=4), query=queries, k=st.integers(1, 60))
def test_scores_and_rankings_equal_bm25s_after_any_growth(docs, cuts, query, k):
    index, start = BM25Index(), 0
    for cut in sorted({min(c, len(docs)) for c in cuts}) + [len(docs)]:
        index.extend(docs[start:cut])
        start = cut
    reference = _bm25s(docs)
    scores = index.scores(query)
    assert scores.dtype == np.float32
    assert np.array_equal(scores, reference.get_scores(query))  # bit for bit, not approximately
    k = min(k, len(docs))
    rows, values = top_k(scores, k)
    expected_rows, expected_values = reference.retrieve([query], k=k, show_progress=False, n_threads=1)
    scoring = expected_values[0] > 0  # rows scoring 0 share no term with the query: not returned
    assert np.array_equal(values, expected_values[0][scoring])  # the same scores, best first
    # The same rows, but in row order among equal scores (bm25s's order there is arbitrary);
    # at the last score kept, the earliest rows holding it.
    pairs = list(zip((-values).tolist(), rows.tolist(), strict=True))
    assert pairs == sorted(pairs)
    for value in set(values.tolist()):
        mine, theirs = rows[values == value], expected_rows[0][scoring][expected_values[0][scoring] == value]
        if value > values.min():
            assert sorted(mine.tolist()) == sorted(theirs.tolist())
        else:
            assert mine.tolist() == np.flatnonzero(scores == value)[: len(theirs)].tolist()


def test_top_k_selects_among_scoring_rows_whatever_else_ties():
    scores = np.zeros(50_000, dtype=np.float32)
    scores[[7, 9_000, 30_000, 49_999]] = [1.5, 3.0, 1.5, 1.5]
    rows, values = top_k(scores, 3)
    assert rows.tolist() == [9_000, 7, 30_000] and values.tolist() == [3.0, 1.5, 1.5]
    assert top_k(scores, 10)[0].tolist() == [9_000, 7, 30_000, 49_999]  # only the rows that score
    assert top_k(scores, 0)[0].tolist() == [] and top_k(np.zeros(3, dtype=np.float32), 2)[0].tolist() == []


@settings(max_examples=80, deadline=None)
@given(docs=documents, cuts=st.lists(st.integers(1, 60), max_size=4), query=queries)
def test_terms_scored_before_a_growth_are_scored_anew_after_it(docs, cuts, query):
    # The index keeps each term's scores between calls: scoring between writes must never serve them stale.
    index, start = BM25Index(), 0
    for cut in sorted({min(c, len(docs)) for c in cuts}) + [len(docs)]:
        index.extend(docs[start:cut])
        start = cut
        if len(index):
            assert np.array_equal(index.scores(query), _bm25s(docs[:cut]).get_scores(query))
    assert np.array_equal(index.scores(query), _bm25s(docs).get_scores(query))  # and again, from what it kept


def test_kept_term_scores_are_bounded_and_scores_stay_exact(monkeypatch):
    from langchain_ripplemem.index import bm25 as bm25_module
    monkeypatch.setattr(bm25_module, "_TERM_ROWS_KEPT", 5)
    docs = [["t1", "t2"], ["t1", "t3"], ["t1"], ["t2", "t3", "t1"]]
    index = BM25Index()
    index.extend(docs)
    for query in (["t1", "t2"], ["t3"], ["t1", "t3", "t2"]):
        assert np.array_equal(index.scores(query), _bm25s(docs).get_scores(query))
        assert index._term_cache_size <= 5


@settings(max_examples=80, deadline=None)
@given(docs=documents, data=st.data(), query=queries)
def test_subset_equals_bm25s_over_the_kept_documents(docs, data, query):
    keep = sorted(data.draw(st.sets(st.integers(0, len(docs) - 1), min_size=1)))
    index = BM25Index()
    index.extend(docs)
    subset = index.subset(keep)
    assert len(subset) == len(keep)
    assert np.array_equal(subset.scores(query), _bm25s([docs[i] for i in keep]).get_scores(query))


def test_an_empty_index_scores_nothing():
    assert BM25Index().scores(["t1"]).shape == (0,)


def _unit(i: int, text: str) -> MemoryUnit:
    return make_unit(text, uid=f"u{i}", turns=[str(i)], kind="event",
                     created_at=datetime(2026, 1, 1, tzinfo=timezone.utc))


TEXTS = ["Maya: I am allergic to shellfish.", "Sam: The oysters in Portland are great!", "Maya: ok.",
         "Sam: Hiking near Portland last week with Priya.", "Maya: shellfish again, shellfish everywhere",
         "Priya: the hike was long", "Sam: yes"]


def _index(texts: list[str]) -> NamespaceIndex:
    namespace_index = NamespaceIndex(("n",))
    namespace_index.add([_unit(i, t) for i, t in enumerate(texts)], np.eye(len(texts), 4, dtype=np.float32))
    return namespace_index


@pytest.mark.parametrize("query", ["shellfish Portland", "hike hiking", "nothing matches", "Maya"])
def test_a_grown_index_scores_as_bm25s_rebuilt_over_its_units(query):
    namespace_index = _index(TEXTS[:3])
    namespace_index.lexical_scores(query)  # builds the index over the first three
    namespace_index.add([_unit(i, t) for i, t in enumerate(TEXTS) if i >= 3], np.eye(4, 4, dtype=np.float32))
    corpus = [lexical_tokens(t) or ["_"] for t in TEXTS]  # the placeholder bm25s needed for "ok.", "yes"
    tokens = lexical_tokens(query)
    expected = _bm25s(corpus).get_scores(tokens) if tokens else np.zeros(len(TEXTS), dtype=np.float32)
    assert np.array_equal(namespace_index.lexical_scores(query), expected)
    ranked = namespace_index.lexical(query, 3)
    assert [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)
    assert all(s > 0 for _, s in ranked)


def test_a_delete_keeps_the_scores_of_the_units_left():
    namespace_index = _index(TEXTS)
    namespace_index.lexical_scores("shellfish")
    smaller = namespace_index.without(["u1", "u4"])
    left = [t for i, t in enumerate(TEXTS) if i not in (1, 4)]
    assert np.array_equal(smaller.lexical_scores("shellfish Portland hike"),
                          _bm25s([lexical_tokens(t) or ["_"] for t in left]).get_scores(
                              lexical_tokens("shellfish Portland hike")))


def test_a_write_tokenises_only_the_new_units(monkeypatch):
    namespace_index = _index(TEXTS[:5])
    namespace_index.lexical_scores("shellfish")
    seen: list[str] = []

    def counting(text: str) -> list[str]:
        seen.append(text)
        return lexical_tokens(text)

    monkeypatch.setattr(index_module, "lexical_tokens", counting)  # the queries
    monkeypatch.setattr(lexical_rows, "lexical_tokens", counting)  # the units
    namespace_index.add([_unit(5, TEXTS[5]), _unit(6, TEXTS[6])], np.eye(2, 4, dtype=np.float32))
    namespace_index.lexical_scores("hike")
    namespace_index.lexical("hike", 2)
    assert sorted(seen) == sorted([TEXTS[5], TEXTS[6], "hike", "hike"])


@settings(max_examples=60, deadline=None)
@given(docs=documents, data=st.data())
def test_rows_of_a_term_are_the_documents_holding_it(docs, data):
    index = BM25Index()
    index.extend(docs)
    keep = sorted(data.draw(st.sets(st.integers(0, len(docs) - 1), min_size=1)))
    subset = index.subset(keep)
    for term in [*TERMS, "absent"]:
        assert index.rows_of(term).tolist() == [i for i, doc in enumerate(docs) if term in doc]
        assert subset.rows_of(term).tolist() == [i for i, row in enumerate(keep) if term in docs[row]]
