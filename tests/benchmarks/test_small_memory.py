"""Issue 36.1: a small memory gets cue edges, types its names right, and its suite is well-formed."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from benchmarks.small_memory import (
    DEFAULT_SUITE,
    HELDOUT_SHARE,
    MIN_CASES,
    load_small_memory_cases,
    small_memory_conversations,
    small_memory_problems,
)
from langchain_ripplemem.embeddings import MiniLMOnnxEmbeddings
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.text.entity_types import entity_type
from langchain_ripplemem.text.identifying import cue_key, entity_phrases, rarity

NS = ("small",)
# Four sessions, 11 turns, two people; Lyon, Pixel, Renault and peanuts each come up in two sessions.
ELEVEN_TURNS = {"id": "ana-ben", "sessions": [
    {"id": "S1", "time": "2026-03-02T19:00:00+00:00", "turns": [
        {"id": "S1:1", "speaker": "Ana", "text": "Hey Ben, how was your week?"},
        {"id": "S1:2", "speaker": "Ben", "text": "My doctor told me I'm allergic to peanuts, so no more satay for me."},
        {"id": "S1:3", "speaker": "Ana", "text": "Our cat Pixel knocked a plant off the shelf again this morning."}]},
    {"id": "S2", "time": "2026-03-09T19:00:00+00:00", "turns": [
        {"id": "S2:1", "speaker": "Ben", "text": "I finally bought a Renault, a little blue hatchback."},
        {"id": "S2:2", "speaker": "Ana", "text": "I'm flying to Lyon next month to visit my aunt."},
        {"id": "S2:3", "speaker": "Ben", "text": "Nice, the weather has been lovely lately."}]},
    {"id": "S3", "time": "2026-03-16T19:00:00+00:00", "turns": [
        {"id": "S3:1", "speaker": "Ana", "text": "Pixel has started sleeping on my keyboard while I work."},
        {"id": "S3:2", "speaker": "Ben", "text": "Ha, that sounds like a good excuse for a break."},
        {"id": "S3:3", "speaker": "Ana", "text": "The Thai place on Rue Mercière does an amazing peanut curry."}]},
    {"id": "S4", "time": "2026-03-23T19:00:00+00:00", "turns": [
        {"id": "S4:1", "speaker": "Ben", "text": "The Renault broke down on the motorway yesterday, what a pain."},
        {"id": "S4:2", "speaker": "Ana", "text": "Lyon was wonderful, we walked along the river every evening."}]},
]}
PAIRS = {"peanut": ("S1:2", "S3:3"), "pixel": ("S1:3", "S3:1"), "renault": ("S2:1", "S4:1"), "lyon": ("S2:2", "S4:2")}


def _turn_of(memory: RippleMem) -> dict[str, str]:
    return {u.id: u.source.turn_ids[0] for u in memory.list_units(namespace=NS)}


@pytest.fixture(scope="module")
def eleven() -> RippleMem:
    memory = RippleMem(MiniLMOnnxEmbeddings())
    memory.add_conversation(ELEVEN_TURNS, namespace=NS)
    return memory


def test_a_word_two_of_eleven_memories_share_is_rare():
    assert rarity(2, 11) > 0.6 > rarity(2, 4)  # the default cue_threshold: two of four cannot tell


def test_the_eleven_turn_memory_links_each_pair_said_in_two_sessions(eleven: RippleMem):
    turn = _turn_of(eleven)
    linked = {frozenset((turn[e.src], turn[e.dst])) for e in eleven.edges(namespace=NS) if e.type == "structural"}
    for word, pair in PAIRS.items():
        assert frozenset(pair) in linked, word


def test_the_allergy_is_reached_from_the_thai_place_over_their_peanut_edge(eleven: RippleMem):
    turn = _turn_of(eleven)
    result = eleven.recall("Can Ben eat at the Thai place Ana recommended?", namespace=NS, k=11)
    order = [turn[m.unit.id] for m in result.memories]
    assert order[0] == "S3:3"
    allergy = next(m for m in result.memories if turn[m.unit.id] == "S1:2")
    assert any(hit.source == "expansion" and hit.channel == "structural" for hit in allergy.provenance)
    assert order.index("S1:2") < 5


def test_entity_types_a_car_brand_a_pet_and_a_street(eleven: RippleMem):
    units = {u.source.turn_ids[0]: u for u in eleven.list_units(namespace=NS)}
    bought, pet, thai = units["S2:1"], units["S1:3"], units["S3:3"]
    assert "Renault" not in bought.participants + bought.locations
    assert bought.metadata["entities"] == {"Renault": "organization"}
    assert "Renault" not in units["S4:1"].participants + units["S4:1"].locations
    assert "Pixel" not in pet.participants and pet.metadata["entities"] == {"Pixel": "animal"}
    assert thai.locations == ["Rue Mercière"] and thai.participants == ["Ana"]
    assert "renault" in bought.cues and "pixel" in pet.cues  # still names that link


@pytest.mark.parametrize("text, name", [("We met Zoë at the market.", "zoë"),
                                         ("The bus to Łódź was late.", "łódź"),
                                         ("Lunch with Élodie today.", "élodie")])
def test_capitalised_names_of_any_script_are_names(text: str, name: str):
    assert cue_key(name.capitalize()) in entity_phrases(text)


def test_a_unicode_name_links_two_memories(bow):
    memory = RippleMem(bow)
    chat = iter(["Rainy again today.", "I made soup for dinner.", "Work was long.", "The bus was late."])
    sessions = []
    for n, said in enumerate(["I had coffee with Łukasz near the river.", "Did you hear Łukasz got a new job?"], 1):
        turns = [{"id": f"S{n}:{i}", "speaker": "Ana" if i % 2 else "Ben", "text": next(chat)} for i in (1, 2)]
        sessions.append({"id": f"S{n}", "time": f"2026-01-0{4 * n}T10:00:00+00:00",
                         "turns": [*turns, {"id": f"S{n}:3", "speaker": "Ana", "text": said}]})
    memory.add_conversation({"id": "u", "sessions": sessions}, namespace=("uni",))
    units = {u.source.turn_ids[0]: u for u in memory.list_units(namespace=("uni",))}
    assert "łukasz" in units["S1:3"].cues and "łukasz" in units["S2:3"].cues  # a name, whole
    pairs = {frozenset((e.src, e.dst)) for e in memory.edges(namespace=("uni",))}
    assert frozenset((units["S1:3"].id, units["S2:3"].id)) in pairs


def test_the_small_memory_suite_is_well_formed_and_its_split_fixed():
    cases = load_small_memory_cases()
    raw = json.loads(DEFAULT_SUITE.read_text(encoding="utf-8"))["cases"]
    assert len(cases) == len(raw) >= MIN_CASES and small_memory_problems(cases) == []
    assert abs(sum(c.split == "heldout" for c in cases) - HELDOUT_SHARE * len(cases)) <= 1
    assert len(Counter(c.kind for c in cases)) >= 8
    assert any("user" in c.speakers for c in cases) and any("user" not in c.speakers for c in cases)
    for case, bench in zip(cases, small_memory_conversations(cases), strict=True):
        ids = {t.id for s in bench.conversation.sessions for t in s.turns}
        assert set(bench.questions[0].evidence) <= ids and bench.split == case.split
        assert 2 <= len(case.sessions) <= 6 and 10 <= len(ids) <= 40


def test_a_suite_breaking_its_rules_is_refused(tmp_path):
    raw = json.loads(DEFAULT_SUITE.read_text(encoding="utf-8"))
    raw["cases"][0]["evidence"] = ["option", "missing"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(ValueError, match="missing"):
        load_small_memory_cases(bad)


@pytest.mark.parametrize("phrase, before, kind", [
    ("Calle Mayor", "we had tapas on ", "location"), ("Hauptstraße", "she lives on the ", "location"),
    ("Ulica Długa", "a flat on ", "location"), ("Via Roma", "", "location"),
    ("Rex", "my dog, ", "animal"), ("Nibbles", "our hamster named ", "animal"),
    ("Peugeot", "he drives a ", "organization"), ("Kindle", "I lost my ", "organization"),
    ("Ferrari", "a ride in the ", "organization"),
    ("Sam", "I met ", None), ("Aunt Rosa", "my ", None)])
def test_entity_types_follow_general_rules(phrase: str, before: str, kind: str | None):
    assert entity_type(phrase, before) == kind
