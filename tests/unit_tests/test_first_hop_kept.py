"""Recollection only adds to the first hop (issue 35): a property over random small memories.

With ``RecallConfig.keep_first_hop = m`` and ``keep_spacing = c``, the memory that plain
dense top-k (``RippleMemory.search(view="semantic")``) or plain BM25 (``view="lexical"``,
score above 0) ranks ``d``-th (0-based, ``d < m``) is in recall's top ``K`` whenever
``c x (d + 1) <= K``: for every ``K``, dense's and BM25's top ``min(m, K // c)`` are in it,
whatever dialogue context, speaker and time bonuses and bridges do to the rest.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.memory import RippleMemory
from langchain_ripplemem.recall.assembly import keep_first_hop
from langchain_ripplemem.schemas import Conversation

from .conftest import BagOfWordsEmbeddings

WORDS = ["climbing", "gym", "football", "league", "fencing", "class", "dinner", "garden", "violin",
         "Portland", "museum", "marathon", "chess", "allergy", "sushi", "beach", "camping", "puppy"]
SPEAKERS = ["Dave", "Mira"]

turn = st.tuples(st.sampled_from(SPEAKERS), st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(
    lambda ws: "We talked about " + " and ".join(ws) + "."))
sessions = st.lists(st.lists(turn, min_size=1, max_size=6), min_size=1, max_size=4)


def _conversation(drawn: list[list[tuple[str, str]]]) -> Conversation:
    return Conversation.model_validate({"id": "c", "sessions": [
        {"id": f"S{s}", "time": f"2026-05-{s + 1:02d}T12:00:00+00:00",
         "turns": [{"id": f"S{s}:{t}", "speaker": sp, "text": text} for t, (sp, text) in enumerate(turns)]}
        for s, turns in enumerate(drawn)]})


def _missing(memory: RippleMemory, question: str, config: RecallConfig, m: int = 0) -> list[tuple[str, int]]:
    """The first-hop memories (view, rank) ``config`` must keep (its ``keep_first_hop``, else ``m``) but lost."""
    k, m, c = config.top_k, config.keep_first_hop or m, config.keep_spacing
    got = [x.unit.id for x in memory.recall(question, namespace="t", k=k, config=config).memories]
    missing = []
    for view in ("semantic", "lexical"):
        plain = [(u.id, s) for u, s in memory.search(question, namespace="t", k=m, view=view)]
        plain = [(uid, s) for uid, s in plain if view == "semantic" or s > 0]
        missing += [(view, d) for d, (uid, _) in enumerate(plain) if c * (d + 1) <= k and uid not in got[: c * (d + 1)]]
    return missing


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=sessions, words=st.lists(st.sampled_from(WORDS + SPEAKERS), min_size=1, max_size=4),
       k=st.integers(1, 12), m=st.integers(1, 6), c=st.integers(2, 3))
def test_plain_top_m_keeps_its_place(drawn: list[list[tuple[str, str]]], words: list[str], k: int, m: int,
                                     c: int) -> None:
    memory = RippleMemory(BagOfWordsEmbeddings())
    memory.add_conversation(_conversation(drawn), namespace="t")
    config = RecallConfig(keep_first_hop=m, keep_spacing=c, top_k=k)
    assert _missing(memory, "What has " + " ".join(words) + "?", config) == []


def test_default_keeps_the_first_hop() -> None:
    """``RecallConfig()`` itself keeps a first hop (the rule is the default, not an option)."""
    assert RecallConfig().keep_first_hop > 0


def test_a_stand_alone_remark_keeps_its_place() -> None:
    """A one-off remark the question matches best on its own is not pushed out by a topical stretch.

    Without the kept first hop, dialogue context lifts the turns of a session that keeps
    talking about the gym above the one turn that answers the question by itself.
    """
    stretch = [("Mira", "The gym was crowded today at the gym."), ("Dave", "The gym had a new wall."),
               ("Mira", "Yes the gym wall looks great."), ("Dave", "The gym staff were friendly."),
               ("Mira", "The gym is open late."), ("Dave", "The gym has showers too.")]
    remark = [("Mira", "Did you eat?"), ("Dave", "I went bouldering at the climbing gym for the first time."),
              ("Mira", "Nice weather.")]
    memory = RippleMemory(BagOfWordsEmbeddings())
    memory.add_conversation(_conversation([stretch, stretch[:3], remark]), namespace="t")
    question = "What did Dave try at the climbing gym for the first time?"
    kept = RecallConfig(keep_first_hop=3, keep_spacing=2, top_k=2)
    assert _missing(memory, question, kept) == []
    assert _missing(memory, question, kept.model_copy(update={"keep_first_hop": 0, "context_weight": 2.0,
                                                              "context_weight_2": 2.0}), m=3) != []


def test_keep_first_hop_orders_by_deadline() -> None:
    protected = {"e": ("semantic", 0, 0.9), "d": ("lexical", 1, 3.0), "z": ("semantic", 1, 0.5)}
    order = keep_first_hop(["a", "b", "c", "d", "e"], protected, 2, 6)
    # e (deadline 2), d and z (deadline 4): z was never gathered by recollection, it still comes.
    assert order.index("e") < 2 and order.index("d") < 4 and order.index("z") < 4
    assert order == ["a", "e", "d", "z", "b", "c"]
    assert keep_first_hop(["a", "b"], {}, 2, 5) == ["a", "b"]


def test_keep_first_hop_names_a_bad_spacing() -> None:
    with pytest.raises(ValueError, match="spacing"):
        keep_first_hop(["a"], {}, 1, 3)
