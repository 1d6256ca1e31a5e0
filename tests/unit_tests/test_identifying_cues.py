"""Identifying cues: extraction, rarity, cue edges across sessions, and the vectorised cue view."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from langchain_ripplemem.config import LinkingConfig, WriteConfig
from langchain_ripplemem.index.cue_rows import unit_cues
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.presets import PAPER_WRITE
from langchain_ripplemem.recall.assembly import BRIDGE_WITHIN_SESSION
from langchain_ripplemem.recall.bridging import BRIDGE_FLOOR
from langchain_ripplemem.schemas import Conversation, MemoryUnit, QueryCues, TimeInterval
from langchain_ripplemem.text.cue_scores import cue_overlap, structural_score
from langchain_ripplemem.text.identifying import cue_key, identifying_cues, rarity
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor
from langchain_ripplemem.write.extraction.windows import make_windows
from langchain_ripplemem.write.linking import local_linking
from langchain_ripplemem.write.linking.local_linking import link_rows

from .conftest import make_unit

NS = ("cues",)
DAY = datetime(2026, 3, 2, tzinfo=timezone.utc)


def test_names_leave_out_speakers_and_topic_words_leave_out_chat_vocabulary():
    names, topics = identifying_cues("Hey Sam! My cousin Dani got the head chef job at Harbor Grill, great news.",
                                     speakers=["Sam", "Maya"])
    assert names == ["dani", "harbor grill"]
    assert "sam" not in topics and "great" not in topics and "news" not in topics
    assert {"chef", "job"} <= set(topics)


def test_a_capitalised_word_opening_a_sentence_is_a_topic_word_not_a_name():
    names, topics = identifying_cues("Biscuit threw up on the rug.")
    assert names == [] and "biscuit" in topics
    assert identifying_cues("My cat Biscuit threw up.").names == ["biscuit"]


def test_keys_meet_across_inflections_and_possessives():
    assert cue_key("Kayaks") == cue_key("kayak")
    assert cue_key("Luigi's") == cue_key("luigi")


def test_rarity_falls_with_document_frequency_on_the_namespaces_own_scale():
    assert rarity(1, 1000) == pytest.approx(1.0)
    assert rarity(2, 1000) > rarity(20, 1000) > rarity(500, 1000) > 0.0
    assert rarity(1000, 1000) == 0.0
    # Two of four units cannot tell rare from common; two of eleven can (issue 36: no floor of 20 units).
    assert rarity(2, 4) < 0.6 < rarity(2, 11)


def test_rule_units_carry_names_and_topics_and_a_weekend_cue():
    conversation = Conversation.model_validate({"id": "c", "sessions": [
        {"id": "S1", "time": "2026-03-30T19:00:00+00:00", "turns": [  # a Monday
            {"id": "S1:1", "speaker": "Maya", "text": "Leo dragged me kayaking on Lake Union yesterday."},
            {"id": "S1:2", "speaker": "Sam", "text": "Did Leo fall in?"}]}]})
    window = make_windows(conversation, 40, 2)[0]
    first, second = RuleBasedExtractor().extract(window, NS).units
    assert "lake union" in first.cues and "weekend" in first.topics and "kayak" in first.topics
    assert second.cues == ["leo"] and "maya" not in second.topics and "sam" not in second.topics


def test_units_stored_before_cues_existed_get_them_from_their_text():
    old = MemoryUnit.model_validate({
        "id": "x", "namespace": list(NS), "restatement": "Maya: Harbor Grill has oysters",
        "participants": ["Maya"], "metadata": {"speaker": "Maya"},
        "source": {"conversation_id": "c", "session_id": "s", "turn_ids": ["t"]}})
    assert old.cues is None and old.topics is None
    assert unit_cues(old).names == ["harbor grill"] and "oyster" in unit_cues(old).topics


def cue_unit(i: int, session: str, names=(), topics=(), day: int = 0, who=("Maya", "Sam")) -> MemoryUnit:
    when = DAY + timedelta(days=day)
    return make_unit(
        f"unit {i}", namespace=NS, session=session, turns=[f"t{i}"], participants=list(who), cues=list(names),
        topics=list(topics), time=TimeInterval(start=when, end=when + timedelta(hours=23)),
        metadata={"speaker": who[0]})


def random_index(seed: int = 0, n: int = 300) -> NamespaceIndex:
    rng = np.random.default_rng(seed)
    people = ["Maya", "Sam", "Priya", "Lee"]
    vocabulary = [f"w{i}" for i in range(40)]
    units = []
    for i in range(n):
        who = tuple(rng.choice(people, size=int(rng.integers(1, 3)), replace=False).tolist())
        names = rng.choice(vocabulary[:10], size=int(rng.integers(0, 2)), replace=False).tolist()
        topics = rng.choice(vocabulary[5:], size=int(rng.integers(0, 4)), replace=False).tolist()
        units.append(cue_unit(i, f"S{i // 20}", names, topics, day=int(rng.integers(0, 40)), who=who))
    index = NamespaceIndex(NS)
    vectors = rng.normal(size=(n, 8)).astype(np.float32)
    index.add(units, vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    return index


@pytest.mark.parametrize("key_weight,topic_weight", [(0.0, 1.0), (1.0, 1.0), (0.7, 0.4)])
def test_cue_view_matches_a_brute_force_reference(key_weight, topic_weight):
    index = random_index()
    config, query_vector = WriteConfig().linking, index.matrix[0]
    keys = ["w1", "w7", "w30", "unknown"]
    for cues in (QueryCues(query="q", participants=["priya"]),
                 QueryCues(query="q", participants=["maya", "lee"], time=index.units[5].time),
                 QueryCues(query="q", locations=["lisbon"])):
        expected = []
        for row, unit in enumerate(index.units):
            shared = set(index.keys[row]) & set(keys)
            touches = bool(shared and key_weight) or any(
                rows and row in rows for rows in index.posting_lists(cues))
            if not touches:
                continue
            names = {k for k in shared if k in index.name_counts.first_name}
            overlap = cue_overlap([rarity(len(index.postings["cues"][k]), len(index)) *
                                   (1.0 if k in names else topic_weight) for k in shared])
            score = (structural_score(cues, unit, config) or 0.0) + key_weight * overlap
            if score > 0:
                expected.append((score, float(index.matrix[row] @ query_vector), row))
        expected.sort(key=lambda t: (-round(t[0], 9), -t[1], t[2]))
        got = index.cues(cues, 40, config, query_vector, keys=keys, key_weight=key_weight,
                        topic_weight=topic_weight)
        assert [s for _, s in got] == pytest.approx([s for s, _, _ in expected[:40]])
        assert {uid for uid, _ in got} == {index.ids[r] for _, _, r in expected[:40]} or \
            len({round(s, 9) for s, _, _ in expected[:41]}) < 41  # ties at the cut may swap members


def test_a_shared_rare_name_links_sessions_where_shared_speakers_and_day_do_not(monkeypatch):
    monkeypatch.setattr(local_linking, "MAX_SEMANTIC_EDGES", 0)
    filler = [cue_unit(i, "S1", topics=["coffee"], day=0) for i in range(60)]
    booking = cue_unit(100, "S9", names=["harbor grill"], topics=["birthday", "coffee"], day=50)
    menu = cue_unit(101, "S3", names=["harbor grill"], topics=["oyster"], day=20)
    units = [*filler[:30], menu, *filler[30:], booking]
    index = NamespaceIndex(NS)
    index.add(units, np.random.default_rng(0).normal(size=(len(units), 8)).astype(np.float32))
    edges = [e for e in link_rows(index, list(range(len(units))), WriteConfig().linking) if e.type == "structural"]
    assert [(e.src, e.dst) for e in edges] == [(booking.id, menu.id)]
    assert edges[0].weight == pytest.approx(rarity(2, len(units)))
    # The paper's s_str links the filler turns to each other: same speakers, same day.
    paper = link_rows(index, list(range(len(units))), PAPER_WRITE.linking)
    assert sum(e.src in {u.id for u in filler} and e.dst in {u.id for u in filler} for e in paper) > 100


def test_cue_edges_do_not_depend_on_how_units_were_batched(monkeypatch):
    full = random_index(seed=3, n=120)
    monkeypatch.setattr(local_linking, "MAX_SEMANTIC_EDGES", 0)
    monkeypatch.setattr(local_linking, "CUE_THRESHOLD", 0.5)
    config = LinkingConfig()
    batch = link_rows(full, list(range(len(full))), config)
    grown, one_by_one = NamespaceIndex(NS), []
    for row, unit in enumerate(full.units):
        grown.add([unit], full.matrix[row : row + 1])
        one_by_one += link_rows(grown, [row], config)
    assert batch and sorted(map(repr, batch)) == sorted(map(repr, one_by_one))


# -- recall: a memory reached through a rare shared name enters the top K ------------------------------

def bridged_conversation() -> Conversation:
    chatter = ["We watched a movie about birthday dinner disasters.", "The dinner at work was boring.",
               "Your birthday cake recipe was great.", "I booked a dentist visit.", "Dinner plans fell through.",
               "The weather turned cold again.", "My plants need more light.", "Traffic was terrible today.",
               "I started reading a novel about sailors.", "The gym was packed this morning.",
               "We painted the fence blue.", "The printer jammed twice.", "I tried a new running route.",
               "The museum had a dinosaur exhibit.", "My phone battery keeps dying.", "I fixed the leaking tap.",
               "The train was late by an hour.", "We adopted a rescue kitten.", "The concert tickets sold out.",
               "I am learning to knit scarves.", "The library extended my loan.", "Our neighbour plays drums."]
    turns = [{"id": f"F:{i}", "speaker": "Maya" if i % 2 else "Sam", "text": text} for i, text in enumerate(chatter)]
    return Conversation.model_validate({"id": "c", "sessions": [
        {"id": "S1", "time": "2026-01-05T18:00:00+00:00", "turns": [
            {"id": "S1:1", "speaker": "Maya", "text": "My cousin waited tables at Copper Kettle, every course "
                                                      "there comes with peanut sauce."}]},
        {"id": "S2", "time": "2026-02-05T18:00:00+00:00", "turns": turns},
        {"id": "S3", "time": "2026-03-05T18:00:00+00:00", "turns": [
            {"id": "S3:1", "speaker": "Sam", "text": "I booked the tasting menu at Copper Kettle for your birthday "
                                                     "dinner!"}]}]})


def test_a_memory_bridged_by_a_rare_name_enters_the_top_k_without_sharing_a_query_word():
    from langchain_ripplemem.config import RecallConfig
    from langchain_ripplemem.memory import RippleMem
    from langchain_ripplemem.presets import PAPER

    from .conftest import BagOfWordsEmbeddings

    memory = RippleMem(BagOfWordsEmbeddings())
    memory.add_conversation(bridged_conversation(), namespace=NS)
    query = "Where is the birthday dinner booked?"
    base = PAPER.replace(views={"semantic_k": 6, "lexical_k": 6, "cue_k": 0}, assembly={"top_k": 3},
                         controller={"max_anchors": 1, "sufficiency_similarity": 1.01})
    bridging = base.replace(bridging={"weight": 1.0}, research={"paper_rules": False})  # target cues and all

    def turns(config: RecallConfig) -> list[str]:
        return [t for m in memory.recall(query, namespace=NS, config=config).memories for t in m.unit.source.turn_ids]

    assert "S3:1" in turns(base) and "S1:1" not in turns(base)
    with_bridge = turns(bridging)
    assert with_bridge[0] == "S3:1" and "S1:1" in with_bridge
    assert not identifying_cues(query).names and "Copper Kettle".lower() not in query.lower()


def test_bridged_scores_carry_a_chain_round_by_round():
    from langchain_ripplemem.config import RecallConfig
    from langchain_ripplemem.presets import PAPER
    from langchain_ripplemem.recall.assembly import bridged_scores
    from langchain_ripplemem.schemas import Hit

    config = RecallConfig(bridging={"weight": 1.0})
    hop1 = Hit(source="expansion", rank=0, score=1.0, round=1, channel="structural", anchor="a", path=["a", "b"],
               edge_weight=0.8)
    hop2 = Hit(source="expansion", rank=0, score=0.0, round=2, channel="structural", anchor="b", path=["b", "c"],
               edge_weight=0.5)
    semantic = Hit(source="expansion", rank=0, score=1.0, round=1, channel="semantic", anchor="a", edge_weight=1.0)
    scores = bridged_scores({"a": [], "b": [hop1], "c": [hop2], "d": [semantic]},
                            {"a": 2.0, "b": 0.1, "c": 0.1, "d": 0.2}, config.bridging)
    assert scores["b"] == pytest.approx(2.0 * 0.8 * 1.0)
    assert scores["c"] == pytest.approx(1.6 * 0.5 * BRIDGE_FLOOR)  # from b's score after round 1, no overlap
    assert scores["d"] == 0.2  # only cue (structural) edges bridge
    assert bridged_scores({"b": [hop1]}, {"a": 2.0, "b": 0.1}, PAPER.bridging)["b"] == 0.1  # the paper's rho


def test_an_index_grown_between_queries_ranks_as_one_built_at_once():
    # The cue view's arrays are extended with the rows a write adds, not rebuilt (a recall right after a write).
    whole = random_index()
    grown = NamespaceIndex(NS)
    config, keys = WriteConfig().linking, ["w1", "w7", "w30"]
    queries = [QueryCues(query="q", participants=["priya"]), QueryCues(query="q", locations=["lisbon"]),
               QueryCues(query="q", participants=["maya", "lee"], time=whole.units[5].time)]

    def ranked(index: NamespaceIndex) -> list[list[tuple[str, float]]]:
        return [index.cues(cues, 30, config, index.matrix[0], keys=keys, key_weight=0.7) for cues in queries]

    for start, stop in ((0, 1), (1, 7), (7, 40), (40, 41), (41, len(whole))):
        grown.add(whole.units[start:stop], whole.matrix[start:stop])
        ranked(grown)  # caches the arrays at this size
    assert ranked(grown) == ranked(whole) and any(ranked(whole))


def test_a_word_capitalised_by_its_place_is_no_name_where_it_is_written_in_lower_case():
    # LongMemEval's assistant answers: a Title Case "Activities" makes a name of a word that
    # fifty other turns write in lower case; bridging over it reached nothing relevant.
    texts = ["Try the Activities near Harbor Grill.", "I booked Harbor Grill.",
             "Biscuit threw up again.", "I walked Biscuit today."] + ["more activities today"] * 3
    units = [make_unit(t, namespace=NS, turns=[str(i)]) for i, t in enumerate(texts)]
    index = NamespaceIndex(NS)
    index.add(units, np.eye(len(units), dtype=np.float32))
    assert "activ" in index.name_counts.first_name and not index.is_name("activ")
    assert index.rarity("activ", topic_weight=0.0) == 0.0
    assert index.is_name("harbor grill") and index.is_name("biscuit")  # a sentence's first word stays a name
    assert index.rarity("harbor grill", topic_weight=0.0) > 0.0


def test_a_markdown_list_or_emphasis_marker_opens_a_sentence():
    text = "**Echinacea**: an herb.\n- Practice daily.\n* Yoga helps.\nI met Sam at Harbor Grill."
    assert identifying_cues(text).names == ["sam", "harbor grill"]


def test_a_bridge_within_the_anchors_own_session_lifts_nothing_by_default():
    from langchain_ripplemem.config import RecallConfig
    from langchain_ripplemem.recall.assembly import bridged_scores
    from langchain_ripplemem.schemas import Hit

    def hop(target: str) -> Hit:
        return Hit(source="expansion", rank=0, score=1.0, round=1, channel="structural", anchor="a",
                   path=["a", target], edge_weight=0.8)

    places = {"a": ("S1", "maya", 3), "same": ("S1", "maya", 5), "other": ("S2", "maya", 0)}
    evidence, direct = {"a": [], "same": [hop("same")], "other": [hop("other")]}, {"a": 2.0, "same": 0.1, "other": 0.1}
    config = RecallConfig(bridging={"weight": 1.0})
    assert not BRIDGE_WITHIN_SESSION  # assembly passes where each memory was said
    scores = bridged_scores(evidence, direct, config.bridging, places.get)
    assert scores["same"] == 0.1 and scores["other"] == pytest.approx(2.0 * 0.8)
    assert bridged_scores(evidence, direct, config.bridging)["same"] == pytest.approx(2.0 * 0.8)  # places unknown


@pytest.mark.parametrize(("place", "lifts"), [
    (("S1", "maya", 4), True),  # the same speaker's next turn: one message sent in two parts
    (("S1", "maya", 2), True),  # ... or the part before
    (("S1", "maya", 5), False),  # the same speaker two turns on: a reply came between
    (("S1", "sam", 4), False),  # the other speaker's reply
    (("S1", None, 4), False),  # no speaker known
    (("S2", "sam", 0), True),  # another session
])
def test_a_bridge_within_a_session_lifts_only_the_rest_of_the_anchors_message(place, lifts):
    from langchain_ripplemem.config import BridgingConfig
    from langchain_ripplemem.recall.assembly import bridged_scores, lifts_across
    from langchain_ripplemem.schemas import Hit

    hit = Hit(source="expansion", rank=0, score=0.0, round=1, channel="structural", anchor="a",
              path=["a", "m"], edge_weight=0.8)
    places = {"a": ("S1", "maya", 3), "m": place}
    scores = bridged_scores({"a": [], "m": [hit]}, {"a": 2.0, "m": 0.1},
                            BridgingConfig(weight=1.0), places.get)
    assert lifts_across(places["a"], place) is lifts
    assert (scores["m"] > 0.1) is lifts
    assert not lifts_across(("S1", None, 3), ("S1", None, 4))  # without speakers, never


def test_a_name_said_only_at_sentence_starts_is_a_name_once_two_memories_start_with_it():
    # The extractor cannot tell "Rafa texted me" from "Count me in"; the namespace can: a name
    # is never written in lower case, a common English word is one, and one start proves nothing.
    from langchain_ripplemem.memory import RippleMem
    from tests.unit_tests.conftest import BagOfWordsEmbeddings

    texts = ["Rafa texted me in a panic about his landlord.", "Rafa's couch is off the table now.",
             "Hazel keeps teasing my kid at school.", "Hazel got the lead in the school play.",
             "Count me in for the hike on Sunday.", "Count the chairs before the guests arrive.",
             "Pottery class was fun this week.", "Yep, the kids loved it.", "Yep, see you there.",
             "Thimble chewed my shoe.", "Thimble is a menace.", "I sewed it back with a thimble."]
    turns = [{"id": f"S1:{i}", "speaker": "Maya" if i % 2 else "Sam", "text": t} for i, t in enumerate(texts)]
    conversation = {"id": "c1", "sessions": [{"id": "S1", "time": "2026-03-02T10:00:00Z", "turns": turns}]}
    with RippleMem(BagOfWordsEmbeddings()) as memory:
        memory.add_conversation(conversation, namespace=NS)
        index = memory.index.namespace_index(NS)
        assert index.is_name("rafa") and index.is_name("hazel")
        assert not index.is_name("count")  # a common English word ("Count me in")
        assert not index.is_name(cue_key("Pottery"))  # one sentence start
        assert not index.is_name("yep")  # chat
        assert not index.is_name("thimbl")  # written in lower case too: a word


def test_a_verb_starting_a_sentence_is_no_part_of_the_name_after_it():
    assert identifying_cues("Cut the Lisbon trip short, sadly.").names == ["lisbon"]
    assert identifying_cues("Try the Copper Kettle tonight.").names == ["copper kettl"]
    assert identifying_cues("Bank of America called again.").names == ["bank america"]  # no verb: kept whole


def test_a_common_word_opening_a_sentence_before_a_name_leaves_the_name_a_key_of_its_own():
    # "Blame Coach Henley." and "Coach Henley signed us up." must share a key, or no edge joins them.
    first = identifying_cues("Brunch is a no for me, sorry! Blame Coach Henley.").names
    second = identifying_cues("Coach Henley signed the under-10s up for the tournament.").names
    assert "coach henley" in set(first) & set(second)
    assert identifying_cues("Harbor Grill is closed.").names == ["harbor grill"]  # two words: kept whole


def test_a_weekday_in_the_plural_is_a_schedule_two_memories_can_share_and_the_singular_dates_a_day():
    rota = identifying_cues("Declan's new rule: anyone wanting Tuesdays free goes on the overnight rota.").topics
    degree = identifying_cues("Enrolled in the midwifery degree! Lectures are Tuesdays, nine to five.").topics
    assert "tuesdays" in set(rota) & set(degree)
    assert identifying_cues("See you on Tuesday at the depot.").topics == ["depot"]


def test_a_word_starts_a_sentence_exactly_where_the_regular_expression_said():
    """``_at_sentence_start`` reads backwards; the expression it replaced is the specification."""
    import re

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from langchain_ripplemem.text import identifying

    spec = re.compile(r"(?:[.!?:;\"\u201c\u201d(\n*#>|\u2022]|(?:^|\n)\s*[-\u2013\u2014])\s*$")
    pieces = [" ", "  ", "\n", "\t", "\u00a0", "\u2003", "-", "\u2013", "\u2014", ".", "!", ":", ";", "\"", "(",
              "*", "#", ">", "|", "\u2022", ",", "x", "ab", "'", "Sam", "Harbor Grill", "1."]

    @settings(max_examples=1500, deadline=None, derandomize=True)
    @given(st.lists(st.sampled_from(pieces), max_size=8))
    def check(parts):
        text = "".join(parts) + " Rafa went. Then Lisbon"
        for match in identifying._PHRASE.finditer(text):
            expected = match.start() == 0 or bool(spec.search(text[: match.start()]))
            assert identifying._at_sentence_start(text, match) == expected, (text, match.group(0))

    check()
