"""Dialogue context, speaker cues, the cue view and the heuristic target's vector."""

from __future__ import annotations

import numpy as np
import pytest

from langchain_ripplemem.config import ContextConfig, LinkingConfig, RecallConfig
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.index.sessions import neighbour_rows, speakers
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.presets import PAPER, PAPER_WRITE
from langchain_ripplemem.recall.query_cues import move_speakers
from langchain_ripplemem.recall.smoothing import context_weights, in_context, smooth, top_in_context
from langchain_ripplemem.schemas import ASSISTANT_SPEAKER, Conversation, MemoryUnit, QueryCues, TimeInterval
from langchain_ripplemem.text.cue_scores import structural_score

from .conftest import BagOfWordsEmbeddings, make_conversation, make_unit

NS = ("ctx",)


SMALL_PAPER = PAPER.replace(views={"semantic_k": 1, "lexical_k": 1, "cue_k": 0})


def ctx(weight: float, weight_2: float = 0.0) -> ContextConfig:
    """Dialogue-context settings of these weights."""
    return ContextConfig(weight=weight, weight_2=weight_2)


def unit(uid: str, session: str, turn_index: int | None, participants=("Maya",), day: int = 1) -> MemoryUnit:
    metadata = {"speaker": participants[0]} | ({"turn_index": turn_index} if turn_index is not None else {})
    start = np.datetime64(f"2026-03-{day:02d}T10:00").astype(object)
    return make_unit(f"text {uid}", uid=uid, namespace=NS, session=session, turns=[uid],
                     participants=list(participants), time=TimeInterval(start=start, end=start), metadata=metadata)


def index_of(units: list[MemoryUnit]) -> NamespaceIndex:
    index = NamespaceIndex(NS)
    index.add(units, np.eye(len(units), 8, dtype=np.float32))
    return index


def test_neighbours_follow_turn_order_within_a_session_only():
    # Written out of order and interleaved across two sessions.
    index = index_of([unit("a2", "S1", 2), unit("b1", "S2", 1), unit("a1", "S1", 1), unit("a3", "S1", 3)])
    rows = {uid: i for i, uid in enumerate(index.ids)}
    nb = neighbour_rows(index)
    assert nb[rows["a1"]].tolist() == [-1, rows["a2"]]
    assert nb[rows["a2"]].tolist() == [rows["a1"], rows["a3"]]
    assert nb[rows["a3"]].tolist() == [rows["a2"], -1]
    assert nb[rows["b1"]].tolist() == [-1, -1]  # alone in its session


def test_neighbours_are_rebuilt_when_the_index_grows():
    index = index_of([unit("a1", "S1", 1)])
    assert neighbour_rows(index) is neighbour_rows(index)  # cached
    index.add([unit("a2", "S1", 2)], np.ones((1, 8), dtype=np.float32))
    assert neighbour_rows(index).tolist() == [[-1, 1], [0, -1]]


def test_in_context_equals_smooth_before_and_after_the_index_grows():
    rng = np.random.default_rng(3)
    order = rng.permutation(30)
    index = index_of([unit(f"u{i}", f"S{i % 3}", int(i)) for i in order[:20]])
    weights = (0.5, 0.3)
    scores = rng.standard_normal(20)
    assert in_context(index, scores, ctx(*weights)).tolist() == smooth(scores, neighbour_rows(index), weights).tolist()
    index.add([unit(f"u{i}", f"S{i % 3}", int(i)) for i in order[20:]], np.ones((10, 8), dtype=np.float32))
    scores = rng.standard_normal(30)  # the cached rows each distance away follow the growth
    assert in_context(index, scores, ctx(*weights)).tolist() == smooth(scores, neighbour_rows(index), weights).tolist()
    # scores taken before the growth: the later rows are nobody's neighbours
    early = scores[:20]
    trimmed = np.where(neighbour_rows(index)[:20] < 20, neighbour_rows(index)[:20], -1)
    assert in_context(index, early, ctx(*weights)).tolist() == smooth(early, trimmed, weights).tolist()


def test_read_only_scores_are_smoothed_once_and_again_when_the_index_grows(monkeypatch):
    from langchain_ripplemem.recall import smoothing

    calls = []
    original = smoothing._in_context
    monkeypatch.setattr(smoothing, "_in_context", lambda *a: calls.append(a[3]) or original(*a))
    index = index_of([unit(f"u{i}", "S1", i) for i in range(6)])
    scores = np.arange(6, dtype=np.float32)
    scores.flags.writeable = False  # as a view's cosines are
    first = in_context(index, scores, ctx(*(0.5, 0.3)))
    assert in_context(index, scores, ctx(*(0.5, 0.3))) is first and len(calls) == 1  # kept
    assert not first.flags.writeable and first.tolist() == smooth(scores, neighbour_rows(index), (0.5, 0.3)).tolist()
    assert in_context(index, scores, ctx(*(0.5, 0.0))) is not first and len(calls) == 2  # other weights
    assert in_context(index, scores.copy(), ctx(*(0.5, 0.3))) is not first and len(calls) == 3  # writable: not kept
    # A late unit of turn 0 sorts between turns 0 and 1: row 0's next neighbour is now a row past the scores.
    index.add([unit("late", "S1", 0)], np.ones((1, 8), dtype=np.float32))
    regrown = in_context(index, scores, ctx(*(0.5, 0.3)))
    trimmed = np.where(neighbour_rows(index)[:6] < 6, neighbour_rows(index)[:6], -1)
    assert len(calls) == 4 and regrown.tolist() != first.tolist()
    assert regrown.tolist() == smooth(scores, trimmed, (0.5, 0.3)).tolist()


def test_a_recall_smooths_its_query_cosines_once(talk, monkeypatch):
    from langchain_ripplemem.recall import smoothing

    smoothed = []
    original = smoothing._in_context
    monkeypatch.setattr(smoothing, "_in_context",
                        lambda index, scores, *a: smoothed.append(scores.flags.writeable)
                        or original(index, scores, *a))
    config = PAPER.replace(context={"weight": 0.5}, controller={"max_rounds": 0})  # cosine alignment
    talk.recall("what do the kids like", namespace=NS, config=config)
    # the semantic view's cosines once (assembly reuses them), the lexical view's BM25 scores once
    assert sorted(smoothed) == [False, True]


def test_units_without_turn_index_keep_write_order():
    index = index_of([unit("x", "S1", None), unit("y", "S1", None)])
    assert neighbour_rows(index).tolist() == [[-1, 1], [0, -1]]


def test_smooth_adds_the_best_neighbour_and_ignores_missing_or_negative_ones():
    nb = np.array([[-1, 1], [0, 2], [1, -1]])
    assert smooth(np.array([1.0, 0.0, -2.0]), nb, (0.5,)).tolist() == [1.0, 0.5, -2.0]
    assert smooth(np.array([1.0, 0.0, 3.0]), nb, (0.0, 0.0)).tolist() == [1.0, 0.0, 3.0]


def test_smooth_reaches_two_turns_but_not_across_a_session_end():
    # Rows 0-3 are one session in order, row 4 is alone in another.
    nb = np.array([[-1, 1], [0, 2], [1, 3], [2, -1], [-1, -1]])
    scores = np.array([4.0, 0.0, 0.0, 0.0, 0.0])
    assert smooth(scores, nb, (0.5, 0.25)).tolist() == [4.0, 2.0, 1.0, 0.0, 0.0]
    assert smooth(scores, nb, (0.0, 0.25)).tolist() == [4.0, 0.0, 1.0, 0.0, 0.0]


def test_top_in_context_excludes_hidden_keeps_positive_and_breaks_ties_by_row():
    index = index_of([unit("a1", "S1", 1), unit("a2", "S1", 2), unit("a3", "S1", 3), unit("b1", "S2", 1)])
    scores = np.array([0.0, 2.0, 0.0, 0.0])
    got = top_in_context(index, scores, ctx(*(0.5,)), k=4, positive=True)
    assert got == [("a2", 2.0), ("a1", 1.0), ("a3", 1.0)]  # b1 has no match and no matching neighbour
    assert [uid for uid, _ in top_in_context(index, scores, ctx(*(0.5,)), k=4, positive=True, exclude=["a1"])] == \
        ["a2", "a3"]
    assert len(top_in_context(index, scores, ctx(*(0.0,)), k=4)) == 4  # without `positive`, every unit ranks


def test_speakers_come_from_unit_metadata():
    index = index_of([unit("a1", "S1", 1, ("Maya", "Sam")), unit("a2", "S1", 2, ("Sam", "Maya"))])
    assert speakers(index) == frozenset({"maya", "sam"})


def test_move_speakers_keeps_people_who_are_only_talked_about():
    cues = QueryCues(query="Did Maya's cousin Priya like Sam's pick?", keywords=["maya", "cousin", "priya", "sam"],
                     participants=["maya", "priya", "sam"])
    moved = move_speakers(cues, frozenset({"maya", "sam"}))
    assert moved.query == "Did cousin Priya like pick?"
    assert moved.keywords == ["cousin", "priya"]
    assert moved.participants == cues.participants
    assert move_speakers(cues, frozenset()) is cues
    only_names = QueryCues(query="Maya", participants=["maya"])
    assert move_speakers(only_names, frozenset({"maya"})).query == "Maya"  # never an empty query


def dialogue(names: dict[str, str] | None = None) -> Conversation:
    """The answer (S1:2) shares no word with the question it answers (S1:1); ``names`` renames the speakers."""
    sessions = [
        [("Sam", "What do your kids like to do these days?"), ("Maya", "They were stoked about the dinosaur exhibit.")],
        [("Sam", "Maya, kids like it!")],
        [("Maya", "I like kids books about pirates.")],
        [("Sam", "Kids like candy, mine too.")],
    ]
    return Conversation.model_validate({"id": "d", "sessions": [
        {"id": f"S{n}", "time": f"2026-03-0{n}T19:00:00+00:00",
         "turns": [{"id": f"S{n}:{i}", "speaker": (names or {}).get(who, who), "text": text}
                   for i, (who, text) in enumerate(turns, 1)]}
        for n, turns in enumerate(sessions, 1)]})


@pytest.fixture(scope="module")
def talk() -> RippleMem:
    m = RippleMem(BagOfWordsEmbeddings())
    m.add_conversation(dialogue(), namespace=NS)
    return m


def recalled(memory: RippleMem, query: str, config: RecallConfig, k: int) -> list[str]:
    return [m.unit.source.turn_ids[0] for m in memory.recall(query, namespace=NS, config=config, k=k).memories]


def test_context_finds_the_answer_to_the_question_turn(talk):
    base = PAPER.replace(views={"semantic_k": 2, "lexical_k": 2, "cue_k": 0}, controller={"max_rounds": 0})
    query = "what do the kids like to do these days"
    assert "S1:2" not in recalled(talk, query, base, k=2)
    with_context = base.replace(context={"weight": 0.8})
    assert recalled(talk, query, with_context, k=2) == ["S1:1", "S1:2"]


def test_chats_with_an_assistant_score_each_turn_on_its_own_unless_asked():
    chat = RippleMem(BagOfWordsEmbeddings())
    chat.add_conversation(dialogue({"Sam": "user", "Maya": ASSISTANT_SPEAKER}), namespace=NS)
    base = PAPER.replace(views={"semantic_k": 2, "lexical_k": 2, "cue_k": 0}, controller={"max_rounds": 0},
                         context={"weight": 0.8})
    query = "what do the kids like to do these days"
    index = chat.reader.namespace_index(NS)
    assert context_weights(index, base.context) == (0.0, 0.0)
    assert "S1:2" not in recalled(chat, query, base, k=2)  # the assistant's answer is not lifted by the request
    kept_on = base.replace(context={"assistant_chats": True})
    assert context_weights(index, kept_on.context) == (0.8, 0.0)
    assert recalled(chat, query, kept_on, k=2) == ["S1:1", "S1:2"]


def test_speaker_bonus_prefers_what_the_named_person_said(talk):
    base = PAPER.replace(views={"semantic_k": 5, "lexical_k": 5, "cue_k": 5}, controller={"max_rounds": 0})
    question = "What kids do Maya like?"
    assert recalled(talk, question, base, k=1) == ["S2:1"]  # Sam's turn names Maya
    bonus = base.replace(scoring={"speaker_bonus": 1.0})
    assert recalled(talk, question, bonus, k=1) == ["S3:1"]  # Maya's own words


class CountingEmbeddings(BagOfWordsEmbeddings):
    def __init__(self) -> None:
        self.queries: list[str] = []

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return super().embed_query(text)


def test_heuristic_target_reuses_the_query_vector():
    embeddings = CountingEmbeddings()
    memory = RippleMem(embeddings, write_config=PAPER_WRITE)  # seven units: too few for rare-cue edges
    memory.add_conversation(make_conversation(), namespace=("maya",))
    question = "What did Maya say she would think about?"
    result = memory.recall(question, namespace=("maya",), config=SMALL_PAPER)
    assert len(result.rounds) == 2 and result.rounds[1].target.restates_query
    assert embeddings.queries == [question]  # one encoder call: no second one for the target


def test_cue_view_matches_a_brute_force_ranking():
    rng = np.random.default_rng(0)
    people = ["Maya", "Sam", "Priya", "Lee"]
    units = []
    for i in range(60):
        who = tuple(rng.choice(people, size=int(rng.integers(1, 3)), replace=False).tolist())
        units.append(unit(f"u{i:02d}", f"S{i % 4}", i, who, day=int(rng.integers(1, 20))))
    index = NamespaceIndex(NS)
    vectors = rng.normal(size=(60, 8)).astype(np.float32)
    index.add(units, vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    query_vector = index.matrix[0]
    for cues in (QueryCues(query="q", participants=["priya"]),
                 QueryCues(query="q", participants=["maya", "sam"], time=units[5].time)):
        expected = sorted(
            ((s, float(index.matrix[i] @ query_vector), i) for i, u in enumerate(index.units)
             if (s := structural_score(cues, u, LinkingConfig())) is not None and s > 0),
            key=lambda t: (-t[0], -t[1], t[2]))
        got = index.cues(cues, 25, LinkingConfig(), query_vector)
        assert [uid for uid, _ in got] == [index.ids[i] for _, _, i in expected[:25]]
        assert [s for _, s in got] == pytest.approx([s for s, _, _ in expected[:25]])


@pytest.mark.parametrize("n", [10, 1000, 100_000])
def test_the_cue_views_candidate_rows_are_the_distinct_posting_rows_ascending(n):
    from langchain_ripplemem.index.row_arrays import distinct_rows

    rng = np.random.default_rng(n)
    for sizes in ([], [0], [3], [n // 2, 5], [n, n // 3, 1]):
        arrays = [np.sort(rng.choice(n + 4, size=min(s, n + 4), replace=False)) for s in sizes]  # some past n
        expected = np.unique(np.concatenate(arrays)) if arrays else np.zeros(0, dtype=np.int64)
        assert distinct_rows(arrays, n).tolist() == expected.tolist()
