"""What bridges memories at read time: the rarest shared cue, bridge potential, time, and event-relative times."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.presets import PAPER
from langchain_ripplemem.recall.assembly import bridged
from langchain_ripplemem.recall.bridging import (
    BridgeStrength,
    EventTime,
    bridge_potential,
    bridge_strength,
    mentioned_time,
    salience,
    time_bridges,
    time_hits,
)
from langchain_ripplemem.schemas import Conversation, Hit, MemoryUnit, TimeInterval
from langchain_ripplemem.text.cue_scores import cue_overlap
from langchain_ripplemem.text.identifying import rarity

from .conftest import make_unit

NS = ("bridging",)
DAY = datetime(2026, 3, 2, tzinfo=timezone.utc)  # a Monday


def day(offset: int, length: int = 1) -> TimeInterval:
    start = DAY + timedelta(days=offset)
    return TimeInterval(start=start, end=start + timedelta(days=length) - timedelta(microseconds=1))


def unit(i: int, names=(), topics=(), when: TimeInterval | None = None, phrase: str | None = None,
         text: str = "", speaker: str = "Maya") -> MemoryUnit:
    return make_unit(
        text or f"unit {i}", namespace=NS, session=f"S{i}", turns=[f"t{i}"], participants=[speaker], cues=list(names),
        topics=list(topics), time=when or day(0),
        metadata={"speaker": speaker, **({"time_phrase": phrase} if phrase else {})})


def index_of(units: list[MemoryUnit], filler: int = 40) -> NamespaceIndex:
    everything = [*units, *(unit(1000 + i, topics=["coffee"]) for i in range(filler))]
    index = NamespaceIndex(NS)
    vectors = np.random.default_rng(0).normal(size=(len(everything), 8)).astype(np.float32)
    index.add(everything, vectors)
    return index


# -- the rarest shared cue -------------------------------------------------------------


def test_bridge_strength_is_the_rarest_shared_cue_not_the_sum_of_half_rare_ones():
    # "a" and "b" share one rare name; "a" and "c" share three words each held by several memories.
    common = [unit(10 + i, topics=["train", "ticket", "station"]) for i in range(6)]
    a = unit(1, names=["harbor grill"], topics=["train", "ticket", "station"])
    b, c = unit(2, names=["harbor grill"]), unit(3, topics=["train", "ticket", "station"])
    index = index_of([a, b, c, *common])
    assert bridge_strength(index, a.id, b.id) == pytest.approx(index.rarity("harbor grill"))
    assert bridge_strength(index, a.id, c.id) == pytest.approx(index.rarity("train"))
    assert bridge_strength(index, a.id, b.id) > bridge_strength(index, a.id, c.id)
    # The noisy-or of linking counts the three half-rare words as more than the one name.
    linking = cue_overlap(index.rarity(k) for k in ("train", "ticket", "station"))
    assert linking > bridge_strength(index, a.id, c.id)
    assert bridge_strength(index, a.id, c.id, topic_weight=0.0) == 0.0  # a topic word weighs topic_weight of it


def test_a_shared_month_bridges_like_a_name_even_when_topic_words_do_not():
    a, b = unit(1, topics=["june", "passport"]), unit(2, topics=["june", "flight"])
    index = index_of([a, b])
    assert bridge_strength(index, a.id, b.id, topic_weight=0.0) == pytest.approx(index.rarity("june"))


def test_from_the_first_hop_a_topic_word_rare_in_english_bridges_and_a_common_one_does_not():
    # "peanut" says what two memories are about; "family" may be chance, however rare in one chat.
    a, b = unit(1, topics=["peanut", "famili"]), unit(2, topics=["peanut"])
    c = unit(3, topics=["famili"])
    index = index_of([a, b, c])
    first_hop = BridgeStrength(index, topic_weight=0.0, rare_topic_weight=0.5)
    assert first_hop(a.id, b.id) == pytest.approx(0.5 * index.rarity("peanut"))
    assert first_hop(a.id, c.id) == 0.0
    assert BridgeStrength(index, topic_weight=0.0)(a.id, b.id) == 0.0  # names only, as before


def test_bridge_potential_counts_names_others_hold_and_leaves_out_the_querys_own():
    a, b = unit(1, names=["harbor grill", "copper kettle"]), unit(2, names=["harbor grill"])
    alone = unit(3, names=["lumen labs"])  # no other memory holds it: no bridge out
    index = index_of([a, b, alone])
    assert bridge_potential(index, a.id) == pytest.approx(index.rarity("harbor grill"))
    assert bridge_potential(index, a.id, known={"harbor grill"}) == 0.0
    assert bridge_potential(index, alone.id) == 0.0


# -- time ------------------------------------------------------------------------------


def test_mentioned_time_is_a_specific_time_the_words_name_not_the_sessions_day():
    assert mentioned_time(unit(1, when=day(3))) is None  # the session's day
    assert mentioned_time(unit(2, when=day(3, 7), phrase="June 8th to 14th")) == day(3, 7)
    assert mentioned_time(unit(3, when=day(0, 90), phrase="this spring")) is None  # a season


def test_time_bridges_reach_overlapping_times_and_weaken_as_more_memories_name_them():
    flight = unit(1, when=day(10), phrase="June 10th")
    conference = unit(2, when=day(8, 7), phrase="June 8th to 14th")
    elsewhere = unit(3, when=day(30), phrase="July 1st")
    same_day = unit(4, when=day(10))  # a session on that day: not a named time
    index = index_of([flight, conference, elsewhere, same_day])
    bridges = time_bridges(index, flight.id, day(10))
    assert [b.unit_id for b in bridges] == [conference.id]
    assert bridges[0].weight == pytest.approx(rarity(2, len(index.ids)))
    crowded = index_of([flight, conference, *(unit(10 + i, when=day(10), phrase="June 10th") for i in range(8))])
    assert time_bridges(crowded, flight.id, day(10))[0].weight < bridges[0].weight
    # inside=True: every memory whose time lies in the period, its session's day included
    inside = time_bridges(index, "event", day(9, 3), inside=True)
    assert {b.unit_id for b in inside} == {flight.id, same_day.id}
    assert time_bridges(index, flight.id, day(0, 90)) == []  # a season bridges nothing


def _meets(u: MemoryUnit, interval: TimeInterval, inside: bool) -> bool:
    """time_bridges' rule, one memory at a time."""
    if inside:
        return u.time is not None and interval.start <= u.time.start and u.time.end <= interval.end
    when = mentioned_time(u)
    return when is not None and when.overlaps(interval)


def test_time_bridges_equal_the_rule_one_memory_at_a_time_as_the_index_grows():
    rng = np.random.default_rng(7)

    def random_unit(i: int) -> MemoryUnit:
        # edges of days to the microsecond, seasons, named times and session days
        when = day(int(rng.integers(0, 20)), int(rng.choice([1, 1, 2, 5, 40])))
        if rng.random() < 0.3:
            when = TimeInterval(start=when.start + timedelta(hours=int(rng.integers(0, 24))), end=when.end)
        return unit(i, when=when, phrase="then" if rng.random() < 0.5 else None)

    units = [random_unit(i) for i in range(120)]
    index = index_of(units[:80], filler=0)
    for step in range(2):
        if step:
            index.add(units[80:], np.ones((40, 8), dtype=np.float32))
        for anchor in units[:30]:
            for interval, inside in ((day(int(rng.integers(0, 20)), int(rng.integers(1, 4))), True),
                                     (anchor.time, False)):
                got = [b.unit_id for b in time_bridges(index, anchor.id, interval, inside=inside)]
                want = [u.id for u in index.units if u.id != anchor.id and _meets(u, interval, inside)]
                assert got == want


def test_time_hits_rank_by_weight_and_target_and_record_one_step_paths():
    flight = unit(1, when=day(10), phrase="June 10th")
    conference = unit(2, when=day(8, 7), phrase="June 8th to 14th")
    dinner = unit(3, when=day(10), phrase="June 10th")
    index = index_of([flight, conference, dinner])
    hits = time_hits(index, [flight.id], lambda ids: [1.0 if i == dinner.id else 0.0 for i in ids],
                     floor=0.5, top_n=5)
    assert [h.unit_id for h in hits] == [dinner.id, conference.id]
    assert all(h.path == [flight.id, h.unit_id] and h.channel == "structural" for h in hits)
    assert time_hits(index, [flight.id], lambda ids: [0.0] * len(ids), floor=0.5, top_n=1,
                     exclude={dinner.id})[0].unit_id == conference.id


def test_an_overlapping_event_reaches_times_that_meet_it_and_its_main_clauses_person_matches_the_target():
    # "Could Sam feed the cat while Maya is in Lisbon?": the trip's memory grounds the time.
    trip = unit(1, when=day(10, 8), phrase="June 10th to 17th")
    conference = unit(2, when=day(8, 7), phrase="June 8th to 14th", speaker="Sam")  # meets the trip, not inside
    packing = unit(3, when=day(12), phrase="June 12th")  # inside it, Maya's
    earlier = unit(4, when=day(2), phrase="June 2nd", speaker="Sam")  # Sam's, before the trip
    index = index_of([trip, conference, packing, earlier])

    def none(ids: list[str]) -> list[float]:
        return [0.0] * len(ids)

    inside = time_hits(index, [], none, floor=0.5, top_n=5, event=EventTime(trip.id, trip.time))
    assert {h.unit_id for h in inside} == {packing.id}  # "the weekend before" kind: inside the period only
    event = EventTime(trip.id, trip.time, overlapping=True, about=frozenset({"sam"}))
    hits = time_hits(index, [], none, floor=0.5, top_n=5, event=event)
    assert [h.unit_id for h in hits] == [conference.id, packing.id]
    assert [h.score for h in hits] == [1.0, 0.0]  # Sam's time during the trip is what the query asks
    assert all(h.anchor == trip.id for h in hits)
    unnamed = time_hits(index, [], none, floor=0.5, top_n=5, event=dataclasses.replace(event, about=frozenset()))
    assert [h.score for h in unnamed] == [0.0, 0.0]


def test_a_while_clause_grounds_the_query_time_at_the_events_memory_not_at_a_speakers_name():
    from langchain_ripplemem.recall.controller import ControllerInput, HeuristicController
    from langchain_ripplemem.schemas import QueryCues

    trip = unit(1, names=["lisbon"], when=day(10, 8), phrase="June 10th to 17th",
                text="flying to Lisbon June 10th to 17th")
    # Better supported, and shares two of the query's words: a speaker's name and a common word.
    passport = unit(2, when=day(3), phrase="June 3rd", text="Maya: my passport runs out June 3rd, a lifetime away")
    index = index_of([trip, passport, unit(3, names=["lisbon"], text="Lisbon has good tiles")])
    query = "Could Sam feed Biscuit while Maya is away in Lisbon?"
    evidence = {passport.id: [Hit(source="semantic", rank=0, score=0.9)],
                trip.id: [Hit(source="semantic", rank=3, score=0.5)]}
    cues = QueryCues(query=query, participants=["sam", "biscuit", "maya"], locations=["lisbon"])
    inp = ControllerInput(query=query, cues=cues, evidence=evidence, index=index, round=0, config=RecallConfig(),
                          with_edges=set())
    event = HeuristicController().event_time(inp)
    assert event is not None
    assert (event.memory, event.time, event.overlapping) == (trip.id, trip.time, True)
    assert event.about == {"sam", "biscuit"}  # the main clause's: not the event's own subject
    before = HeuristicController().event_time(ControllerInput(**{
        **inp.__dict__, "query": "What did Sam do the week before Maya was in Lisbon?"}))
    assert before is not None and not before.overlapping and not before.about
    # No name to go by: the speaker's name ("Maya") is no shared word, the dentist is.
    dentist = unit(4, when=day(5), phrase="June 5th", text="dentist appointment on June 5th")
    index = index_of([trip, passport, dentist])
    query = "Could Sam feed Biscuit while Maya is at the dentist?"
    evidence = {passport.id: [Hit(source="semantic", rank=0, score=0.9)],
                dentist.id: [Hit(source="semantic", rank=3, score=0.5)]}
    event = HeuristicController().event_time(ControllerInput(**{
        **inp.__dict__, "index": index, "query": query, "evidence": evidence, "cues": QueryCues(query=query),
        "support": None}))
    assert event is not None and event.memory == dentist.id


# -- assembly: one edge, below the anchor ------------------------------------------------


def test_bridged_inherits_the_path_strength_and_never_ranks_above_the_anchor():
    one = Hit(source="expansion", rank=0, score=1.0, channel="structural", anchor="a", path=["a", "m"], edge_weight=1.0)
    two = one.model_copy(update={"path": ["a", "x", "m"], "edge_weight": 0.5})
    config = RecallConfig(bridging={"weight": 1.2})  # a full target overlap (score 1): the floor plays no part
    assert bridged([one], {"a": 2.0}, config.bridging) == pytest.approx(2.0 * 0.999)  # 1.2 x 1.0 would pass the anchor
    assert bridged([two], {"a": 2.0}, config.bridging) == pytest.approx(2.0 * 1.2 * 0.5)
    assert bridged([one, two], {"a": 2.0}, config.bridging) == pytest.approx(2.0 * 0.999)  # the best hit
    assert bridged([one], {"a": 2.0}, PAPER.bridging) == 0.0


# -- the controller: a time relative to an event, and anchors with somewhere to go --------


def event_conversation():
    """A dentist appointment dated in one session; what Sam did that weekend, said in another, in other words."""
    chatter = ["How was your week?", "Busy, lots of meetings.", "Same here, the printer broke again.",
               "Did you watch the match?", "No, I fell asleep early.", "The weather has been grey all week."]
    filler = [{"id": f"F{s}:{i}", "speaker": "Sam" if i % 2 else "Maya", "text": text}
              for s in range(3) for i, text in enumerate(chatter)]
    return Conversation.model_validate({"id": "c", "sessions": [
        {"id": "S1", "time": "2026-05-04T18:00:00+00:00", "turns": [
            {"id": "S1:1", "speaker": "Sam", "text": "My appointment at Brightsmile dental is on Friday, May 15th."},
            *filler[:6]]},
        {"id": "S2", "time": "2026-05-11T18:00:00+00:00", "turns": [
            *filler[6:12],
            {"id": "S2:1", "speaker": "Sam", "text": "I went hiking up Mount Si yesterday, my legs are jelly."}]},
        {"id": "S3", "time": "2026-05-20T18:00:00+00:00", "turns": [
            *filler[12:],
            {"id": "S3:1", "speaker": "Sam", "text": "I hiked a bit last month as well."}]}]})


def test_a_time_relative_to_an_event_is_grounded_from_the_events_memory():
    from langchain_ripplemem.memory import RippleMem

    from .conftest import BagOfWordsEmbeddings

    memory = RippleMem(BagOfWordsEmbeddings())
    memory.add_conversation(event_conversation(), namespace=NS)
    query = "What did Sam do the weekend before his appointment at Brightsmile?"
    config = RecallConfig(assembly={"top_k": 3})
    result = memory.recall(query, namespace=NS, config=config)
    turns = [t for m in result.memories for t in m.unit.source.turn_ids]
    assert "S1:1" in turns and "S2:1" in turns  # Sunday May 10th, inside May 9th-10th
    assert "S3:1" not in turns
    assert "relative to an event" in result.rounds[0].reason
    off = memory.recall(query, namespace=NS, config=config.replace(bridging={"weight": 0.0}))
    assert "S2:1" not in [t for m in off.memories for t in m.unit.source.turn_ids]
    plain = memory.recall("What did Sam do at his appointment at Brightsmile?", namespace=NS, config=config)
    assert not any("relative to an event" in r.reason for r in plain.rounds)


def test_anchors_prefer_a_memory_whose_rare_name_leads_elsewhere(monkeypatch):
    from langchain_ripplemem.recall import controller
    from langchain_ripplemem.recall.controller import ControllerInput, HeuristicController
    from langchain_ripplemem.schemas import QueryCues

    # One memory repeats the question's words and leads nowhere.
    echo = unit(1, topics=["birthday", "dinner"], text="A good pick for a birthday dinner?")
    booking = unit(2, names=["harbor grill"], topics=["dinner"])  # ranked lower, names a place others hold
    menu = unit(3, names=["harbor grill"], topics=["oyster"])
    index = index_of([echo, booking, menu])
    query = "Is the birthday dinner a good pick?"
    evidence = {echo.id: [Hit(source="semantic", rank=0, score=0.9)],
                booking.id: [Hit(source="semantic", rank=2, score=0.6)]}

    def anchors(weight: float) -> list[str]:
        monkeypatch.setattr(controller, "ANCHOR_BRIDGE_WEIGHT", weight)
        inp = ControllerInput(query=query, cues=QueryCues(query=query), evidence=evidence, index=index, round=0,
                              config=RecallConfig(controller={"max_anchors": 1}), with_edges={echo.id, booking.id})
        return [uid for uid, _, _ in HeuristicController().candidates(inp)]

    assert anchors(0.0) == [echo.id, booking.id]
    assert anchors(3.0) == [booking.id, echo.id]
    monkeypatch.setattr(controller, "ANCHOR_BRIDGE_WEIGHT", 0.3)
    inp = ControllerInput(query=query, cues=QueryCues(query=query), evidence=evidence, index=index, round=0,
                          config=RecallConfig(controller={"sufficiency_similarity": 0.5}),
                          with_edges={echo.id, booking.id})
    plan = HeuristicController().decide(inp)  # every word covered, a strong match: only the bridge keeps it going
    assert plan["should_continue"] and "other memories also hold" in plan["reason"]
    stop = HeuristicController().decide(ControllerInput(**{**inp.__dict__, "config": RecallConfig(
        controller={"sufficiency_similarity": 0.5}, research={"paper_rules": True})}))  # anchors by support alone
    assert not stop["should_continue"]


def test_a_cue_shared_with_a_long_many_cued_memory_bridges_less_with_a_key_budget():
    # A long answer holds the same rare name among many other cues: a passing mention.
    short_a, short_b = unit(1, names=["harbor grill"]), unit(2, names=["harbor grill"])
    many = [f"tip{i}" for i in range(63)]
    long_c = unit(3, names=["harbor grill"], topics=many)
    index = index_of([short_a, short_b, long_c])
    name = index.rarity("harbor grill")
    strength = BridgeStrength(index, key_budget=16)
    assert strength(short_a.id, short_b.id) == pytest.approx(name)  # short memories keep the full weight
    n_long = len(index.keys[index.pos[long_c.id]])
    assert n_long > 16
    assert strength(short_a.id, long_c.id) == pytest.approx(name * salience(n_long, 16))
    assert salience(n_long, 16) < 1.0
    assert BridgeStrength(index)(short_a.id, long_c.id) == pytest.approx(name)  # budget 0: no discount
    assert bridge_potential(index, long_c.id, key_budget=16) < bridge_potential(index, long_c.id)



def test_recalls_share_edge_strengths_until_the_index_grows():
    from langchain_ripplemem.recall.bridging import shared_bridge_strength

    a, b = unit(1, names=["harbor grill"]), unit(2, names=["harbor grill"])
    index = index_of([a, b])
    shared = shared_bridge_strength(index, 0.5, 16)
    assert shared(a.id, b.id) == BridgeStrength(index, 0.5, 16)(a.id, b.id) > 0
    assert shared_bridge_strength(index, 0.5, 16) is shared  # the next recall reuses what this one computed
    assert shared_bridge_strength(index, 1.0, 16) is not shared
    # A third memory with the name makes it less rare: the strength is computed anew, not served stale.
    c = unit(3, names=["harbor grill"])
    index.add([c], np.zeros((1, 8), dtype=np.float32))
    grown = shared_bridge_strength(index, 0.5, 16)
    assert grown is not shared and grown(a.id, b.id) == BridgeStrength(index, 0.5, 16)(a.id, b.id) < shared(a.id, b.id)


def test_shared_edge_strengths_do_not_keep_their_index_alive():
    import gc
    import weakref

    from langchain_ripplemem.recall.bridging import shared_bridge_strength

    a, b = unit(1, names=["harbor grill"]), unit(2, names=["harbor grill"])
    index = index_of([a, b])
    assert shared_bridge_strength(index, 0.5, 16)(a.id, b.id) > 0
    gone = weakref.ref(index)
    del index
    gc.collect()
    assert gone() is None  # an evicted namespace's view is freed, edge strengths and all


def test_bridge_potentials_are_kept_per_index_size_and_follow_the_querys_names():
    a, b = unit(1, names=["harbor grill", "copper kettle"]), unit(2, names=["harbor grill", "copper kettle"])
    index = index_of([a, b, unit(3, names=["copper kettle"])])
    first = bridge_potential(index, a.id)
    assert first == pytest.approx(index.rarity("harbor grill"))  # the rarer of the two names
    # The names the query holds are left out on every call, kept or not.
    assert bridge_potential(index, a.id, known={"harbor grill"}) == pytest.approx(index.rarity("copper kettle"))
    assert bridge_potential(index, a.id, known={"harbor grill", "copper kettle"}) == 0.0
    # A fourth memory naming Harbor Grill makes it less rare: the potential is worked out anew, not served stale.
    index.add([unit(4, names=["harbor grill"])], np.zeros((1, 8), dtype=np.float32))
    grown = bridge_potential(index, a.id)
    assert grown == pytest.approx(index.rarity("harbor grill")) and grown < first


def test_time_hits_follow_kept_bridges_only_while_the_index_keeps_its_size():
    flight = unit(1, when=day(10), phrase="June 10th")
    conference = unit(2, when=day(8, 7), phrase="June 8th to 14th")
    index = index_of([flight, conference])
    first = time_hits(index, [flight.id], lambda ids: [0.0] * len(ids), floor=0.5, top_n=5)
    assert [h.unit_id for h in first] == [conference.id]
    assert time_hits(index, [flight.id], lambda ids: [0.0] * len(ids), floor=0.5, top_n=5,
                     exclude={conference.id}) == []  # what a recall excludes is left out of kept bridges
    # A memory added later names the same day: the flight's bridges are worked out anew, weaker and wider.
    dinner = unit(3, when=day(10), phrase="June 10th")
    index.add([dinner], np.zeros((1, 8), dtype=np.float32))
    grown = time_hits(index, [flight.id], lambda ids: [0.0] * len(ids), floor=0.5, top_n=5)
    assert {h.unit_id for h in grown} == {conference.id, dinner.id}
    assert grown[0].strength < first[0].strength
