"""Recollection only adds to the first hop (issue 35): a property over random small memories.

With ``kept_places.KEEP_FIRST_HOP = m`` and ``KEEP_SPACING = c`` (off by default), the memory that plain
dense top-k (``RippleMem.search(view="semantic")``) or plain BM25 (``view="lexical"``,
score above 0) ranks ``d``-th (0-based, ``d < m``) is in recall's top ``K`` whenever
``c x (d + 1) <= K``: for every ``K``, dense's and BM25's top ``min(m, K // c)`` are in it,
whatever dialogue context, speaker and time bonuses and bridges do to the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.recall import kept_places, set_questions, smoothing
from langchain_ripplemem.recall.kept_places import check_spacings, keep_first_hop
from langchain_ripplemem.recall.set_questions import own_matches, own_views, set_category
from langchain_ripplemem.schemas import QueryCues, RecallResult

from .conftest import BagOfWordsEmbeddings, drawn_conversation

WORDS = ["climbing", "gym", "football", "league", "fencing", "class", "dinner", "garden", "violin",
         "Portland", "museum", "marathon", "chess", "allergy", "sushi", "beach", "camping", "puppy"]
SPEAKERS = ["Dave", "Mira"]

turn = st.tuples(st.sampled_from(SPEAKERS), st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(
    lambda ws: "We talked about " + " and ".join(ws) + "."))
sessions = st.lists(st.lists(turn, min_size=1, max_size=6), min_size=1, max_size=4)


@contextmanager
def kept(**constants: float) -> Iterator[dict[str, float]]:
    """The kept-place constants (``KEEP_FIRST_HOP``, ``KEEP_OWN``, ...) and ``CONTEXT_MODE`` changed for the duration.

    Yields every kept-place constant as recall reads it then, by name.
    """
    with pytest.MonkeyPatch.context() as patch:
        for name, value in constants.items():
            module = next(m for m in (kept_places, set_questions, smoothing) if hasattr(m, name))
            patch.setattr(module, name, value)
        yield {name: getattr(module, name) for module, names in (
            (kept_places, ("KEEP_FIRST_HOP", "KEEP_SPACING", "KEEP_LEXICAL", "KEEP_LEXICAL_SPACING")),
            (set_questions, ("KEEP_OWN", "KEEP_OWN_SPACING", "KEEP_OWN_DENSITY", "DENSITY_NEIGHBOURS")))
            for name in names}


def _returned(memory: RippleMem, result: RecallResult) -> Callable[[str, int], bool]:
    """Whether a unit is among a result's first ``deadline`` memories, itself or as a repeat folded into one.

    A memory stands for the same speaker's same words said again (listed once): their turns are its sources.
    """
    got = [{(s.session_id, t) for s in x.sources for t in s.turn_ids} for x in result.memories]
    index = memory.reader.namespace_index("t")

    def returned(uid: str, deadline: int) -> bool:
        source = index.units[index.pos[uid]].source
        return all(any((source.session_id, t) in turns for turns in got[:deadline]) for t in source.turn_ids)
    return returned


def _missing(memory: RippleMem, question: str, config: RecallConfig, keep: dict[str, float],
             m: int = 0) -> list[tuple[str, int]]:
    """The first-hop memories (view, rank) recall must keep (``keep``'s sizes, else ``m``) but lost."""
    k = config.assembly.top_k
    result = memory.recall(question, namespace="t", k=k, config=config)
    returned = _returned(memory, result)
    # Dense of the question as asked; BM25 of what the lexical view matched (speakers moved to cues).
    lexical_text = " ".join([result.cues.query, *result.cues.keywords])
    missing = []
    for view, text, size, spacing in (
            ("semantic", question, keep["KEEP_FIRST_HOP"] or m, keep["KEEP_SPACING"]),
            ("lexical", lexical_text, keep["KEEP_LEXICAL"] or m, keep["KEEP_LEXICAL_SPACING"])):
        if not size:
            continue
        plain = [(u.id, s) for u, s in memory.search(text, namespace="t", k=size, view=view)]
        plain = [(uid, s) for uid, s in plain if view == "semantic" or s > 0]
        for d, (uid, _) in enumerate(plain):
            deadline = int(spacing * (d + 1) + 1e-9)
            if deadline <= k and not returned(uid, deadline):
                missing.append((view, d))
    return missing


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=sessions, words=st.lists(st.sampled_from(WORDS + SPEAKERS), min_size=1, max_size=4),
       k=st.integers(1, 12), m=st.integers(0, 6), lm=st.integers(0, 6),
       spacings=st.sampled_from([(1.5, 3.0, 0.0), (2.0, 2.0, 0.0), (1.0, 1.0, 0.0), (3.0, 1.5, 0.0), (3.0, 3.0, 3.0),
                                 (2.0, 4.0, 4.0), (4.0, 4.0, 2.0)]),
       mode=st.sampled_from(["sum", "max"]))
def test_plain_top_m_keeps_its_place(drawn: list[list[tuple[str, str]]], words: list[str], k: int, m: int, lm: int,
                                     spacings: tuple[float, float, float], mode: str) -> None:
    if m and lm and spacings[:2] == (1.0, 1.0):
        lm = 0  # both views at rank d by d do not fit (the config refuses them)
    memory = RippleMem(BagOfWordsEmbeddings())
    memory.add_conversation(drawn_conversation(drawn), namespace="t")
    # "What has Dave ...?" is a set question: with a third spacing, its speakers' own matches keep places too.
    own = {"KEEP_OWN": 3, "KEEP_OWN_SPACING": spacings[2]} if spacings[2] else {"KEEP_OWN": 0}
    config = RecallConfig(assembly={"top_k": k})
    question = "What has " + " ".join(words) + "?"
    with kept(KEEP_FIRST_HOP=m, KEEP_SPACING=spacings[0], KEEP_LEXICAL=lm, KEEP_LEXICAL_SPACING=spacings[1],
              CONTEXT_MODE=mode, **own) as keep:
        assert _missing(memory, question, config, keep) == []
        named = {w for w in words if w in SPEAKERS}
        if spacings[2] and len(named) == 1:  # _own_missing scores one speaker's own matches
            assert _own_missing(memory, question, named.pop(), config, keep) == []


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
    memory = RippleMem(BagOfWordsEmbeddings())
    memory.add_conversation(drawn_conversation([stretch, stretch[:3], remark]), namespace="t")
    question = "What did Dave try at the climbing gym for the first time?"
    loud = RecallConfig(assembly={"top_k": 2}, context={"weight": 2.0, "weight_2": 2.0})
    with kept(KEEP_FIRST_HOP=3, KEEP_SPACING=2.0, KEEP_LEXICAL=3, KEEP_LEXICAL_SPACING=2.0, KEEP_OWN=0) as keep:
        assert _missing(memory, question, loud, keep) == []
    with kept(KEEP_OWN=0) as keep:
        assert _missing(memory, question, loud, {**keep, "KEEP_SPACING": 2.0, "KEEP_LEXICAL_SPACING": 2.0},
                        m=3) != []


def _own_missing(memory: RippleMem, question: str, speaker: str, config: RecallConfig, keep: dict[str, float],
                 n: int = 0, spacing: float = 2.0) -> list[int]:
    """The ranks (0-based) of ``speaker``'s own top ``KEEP_OWN`` (else ``n``) matches that recall lost.

    Scored by :func:`own_matches` for the question as asked and what it asks for (:func:`own_views`).
    """
    k = config.assembly.top_k
    result = memory.recall(question, namespace="t", k=k, config=config)
    returned = _returned(memory, result)

    cues = result.cues.model_copy(update={"participants": [speaker.lower()]})
    # Not a set question: its own matches by the question alone, which recall does not keep.
    reader = memory.reader
    vectors = own_views(question, cues, np.asarray(reader.embed_query(cues.query), dtype=np.float32),
                        reader.embed_query) or [np.asarray(reader.embed_query(question), dtype=np.float32)]
    plain = [uid for uid, _ in own_matches(memory.reader.namespace_index("t"), vectors, [speaker],
                                           keep["KEEP_OWN"] or n, set(), keep["KEEP_OWN_DENSITY"],
                                           keep["DENSITY_NEIGHBOURS"])]
    spacing = keep["KEEP_OWN_SPACING"] if keep["KEEP_OWN"] else spacing
    return [d for d, uid in enumerate(plain)
            if (deadline := int(spacing * (d + 1) + 1e-9)) <= k and not returned(uid, deadline)]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=sessions, words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
       speaker=st.sampled_from(SPEAKERS), k=st.integers(1, 12), n=st.integers(1, 6),
       spacing=st.sampled_from([1.0, 1.5, 2.0, 3.0]))
def test_a_set_question_keeps_its_speakers_own_matches(drawn: list[list[tuple[str, str]]], words: list[str],
                                                       speaker: str, k: int, n: int, spacing: float) -> None:
    memory = RippleMem(BagOfWordsEmbeddings())
    memory.add_conversation(drawn_conversation(drawn), namespace="t")
    question = f"How many {' '.join(words)} things has {speaker} tried?"
    with kept(KEEP_OWN=n, KEEP_OWN_SPACING=spacing) as keep:
        assert _own_missing(memory, question, speaker, RecallConfig(assembly={"top_k": k}), keep) == []


def test_set_members_said_apart_keep_their_places() -> None:
    """Three one-off remarks by Dave, sessions apart, are not pushed out by Mira's talk about sport.

    Without ``KEEP_OWN``, dialogue context lifts the stretch where the sport keeps coming up.
    """
    stretch = [("Mira", "Sport at the club, sport all day."), ("Dave", "Mira loves sport."),
               ("Mira", "The club sport team won."), ("Dave", "Sport news again."), ("Mira", "Sport is life.")]
    remarks = [[("Mira", "How was work?"), ("Dave", "I tried fencing, a new sport for me."), ("Mira", "Rain.")],
               [("Dave", "Lunch was late."), ("Dave", "I tried bouldering, a fun sport."), ("Mira", "Okay.")],
               [("Mira", "Movies?"), ("Dave", "I tried rowing, a hard sport."), ("Mira", "Cool.")]]
    memory = RippleMem(BagOfWordsEmbeddings())
    memory.add_conversation(drawn_conversation([stretch, remarks[0], stretch, remarks[1], remarks[2]]), namespace="t")
    question = "Which sports has Dave tried?"
    loud = RecallConfig(assembly={"top_k": 6}, context={"weight": 2.0, "weight_2": 2.0})
    with kept(KEEP_OWN=3, KEEP_OWN_SPACING=2.0) as keep:
        assert _own_missing(memory, question, "Dave", loud, keep) == []
        assert _own_missing(memory, "Where did Dave try a sport?", "Dave", loud, keep, n=3) != []  # no set question
    with kept(KEEP_OWN=0) as keep:
        assert _own_missing(memory, question, "Dave", loud, keep, n=3) != []
    # The paper's rules keep no own places.
    with kept(KEEP_OWN=3, KEEP_OWN_SPACING=2.0) as keep:
        paper = loud.replace(research={"paper_rules": True})
        assert _own_missing(memory, question, "Dave", paper, {**keep, "KEEP_OWN": 0}, n=3) != []


def test_spacings_that_cannot_all_fit_are_refused() -> None:
    with pytest.raises(ValueError, match=r"1/dense \(1.5\) \+ 1/lexical \(2.0\)"):
        check_spacings([("dense", 3, 1.5), ("lexical", 3, 2.0), ("own", 0, 2.0)])
    # A set question's own places count too: with own places at spacing 2, first-hop places at 1.5 x d
    # would be due faster than the ranks can hold them.
    with pytest.raises(ValueError, match=r"1/dense \(1.5\) \+ 1/own \(2.0\)"):
        check_spacings([("dense", 10, 1.5), ("own", 15, 2.0)])
    check_spacings([("dense", 10, 1.5), ("own", 0, 2.0)])
    check_spacings([("dense", 10, 4.0), ("lexical", 5, 4.0), ("own", 15, 2.0)])


def test_recall_refuses_kept_places_that_cannot_all_fit() -> None:
    memory = RippleMem(BagOfWordsEmbeddings())
    memory.add_conversation(drawn_conversation([[("Dave", "I tried fencing."), ("Mira", "Nice.")]]), namespace="t")
    with kept(KEEP_FIRST_HOP=10, KEEP_SPACING=1.5), pytest.raises(ValueError, match="KEEP_SPACING"):
        memory.recall("Which sports has Dave tried?", namespace="t")


def test_keep_first_hop_orders_by_deadline() -> None:
    protected = {"e": ("semantic", 0, 0.9, 2), "d": ("lexical", 1, 3.0, 4), "z": ("semantic", 1, 0.5, 4)}
    order = keep_first_hop(["a", "b", "c", "d", "e"], protected, 6)
    # e (deadline 2), d and z (deadline 4): z was never gathered by recollection, it still comes.
    assert order == ["a", "e", "d", "z", "b", "c"]
    assert keep_first_hop(["a", "b"], {}, 5) == ["a", "b"]
    assert keep_first_hop(["a", "b"], {"z": ("semantic", 3, 0.1, 8)}, 5) == ["a", "b"]  # its deadline is past K


def test_own_matches_prefer_a_lone_remark_and_the_asked_kind() -> None:
    """Density lowers one of many near-copies below a remark said once; the category view finds a member."""
    chatter = [("Dave", "Tried gym, tried gym, club gym.")] * 6
    lone = [("Dave", "Tried fencing at the gym once."), ("Mira", "Nice."), ("Dave", "Sports: rowing on the lake.")]
    memory = RippleMem(BagOfWordsEmbeddings())
    memory.add_conversation(drawn_conversation([chatter, lone]), namespace="t")
    index, text = memory.reader.namespace_index("t"), {u.id: u.restatement for u in memory.list_units("t")}
    question = [memory.reader.embed_query("Which things has Dave tried at the gym?")]
    by_cosine = [text[uid] for uid, _ in own_matches(index, question, ["Dave"], 2, set())]
    by_density = [text[uid] for uid, _ in own_matches(index, question, ["Dave"], 2, set(), density=0.5)]
    assert not any("fencing" in t for t in by_cosine) and "fencing" in by_density[0]
    asked = [*question, memory.reader.embed_query(set_category("What sports has Dave tried?") or "")]
    assert any("rowing" in text[uid] for uid, _ in own_matches(index, asked, ["Dave"], 3, set(), density=0.5))
    assert not any("rowing" in text[uid] for uid, _ in own_matches(index, question, ["Dave"], 3, set(), density=0.5))
    hidden = {uid for uid, t in text.items() if "fencing" in t}
    assert all(uid not in hidden for uid, _ in own_matches(index, question, ["Dave"], 5, hidden, density=0.5))
    # A hidden memory (suppressed, or after as_of) is nobody's neighbour: as if it had never been said.
    alone = RippleMem(BagOfWordsEmbeddings())
    alone.add_conversation(drawn_conversation([lone]), namespace="t")
    chatter_ids = {uid for uid, t in text.items() if "club gym" in t}
    assert [score for _, score in own_matches(index, question, ["Dave"], 2, chatter_ids, density=0.5)] == \
        [score for _, score in own_matches(alone.reader.namespace_index("t"), question, ["Dave"], 2, set(),
                                           density=0.5)]


def test_own_views_read_the_question_as_asked() -> None:
    """A set question's own matches are scored by the question with its names, and by what it asks for."""
    embeddings = BagOfWordsEmbeddings()
    embed = embeddings.embed_query
    asked = "Which sports has Dave tried?"
    cues = QueryCues(query="Which sports has tried?", participants=["dave"])
    moved = np.asarray(embed(cues.query), dtype=np.float32)
    views = own_views(asked, cues, moved, embed)
    np.testing.assert_allclose(views[0], embed(asked))  # not the query the other views search
    np.testing.assert_allclose(views[1], embed("sports"))
    assert own_views(cues.query, cues, moved, embed)[0] is moved  # nothing moved: its vector, not embedded again
    given = np.asarray(embed(asked), dtype=np.float32)
    assert own_views(asked, cues, moved, embed, given)[0] is given  # the kept first hop's vector, reused
    assert own_views("Where did Dave try a sport?", cues.model_copy(update={"query": "Where did try a sport?"}),
                     moved, embed) == []
    assert own_views(asked, cues.model_copy(update={"participants": []}), moved, embed) == []
