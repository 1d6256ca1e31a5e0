"""Knowledge updates: a newer statement supersedes an older one, as-of recall, and the marks surviving
re-ingest and a new process. Offline."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from langchain_ripplemem.config import RecallConfig, WriteConfig
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.recall import RecallContext, build_recall_graph
from langchain_ripplemem.retrievers import RippleMemRetriever
from langchain_ripplemem.schemas import Conversation
from langchain_ripplemem.tools import create_recall_tool
from langchain_ripplemem.write.supersession.statement_rules import Fact, facts

from .conftest import make_conversation, make_unit, reopened_in_new_process
from .test_lifecycle import MAYA, seen_ids, snapshot, unit_id


def talk(cid: str, *sessions: tuple[str, list[tuple[str, str]]]) -> Conversation:
    """A conversation from ``(iso time, [(speaker, text), ...])`` sessions."""
    return Conversation.model_validate({"id": cid, "sessions": [
        {"id": f"S{n}", "time": when,
         "turns": [{"id": f"{cid}:S{n}:{i}", "speaker": s, "text": t} for i, (s, t) in enumerate(turns)]}
        for n, (when, turns) in enumerate(sessions, start=1)]})


PARIS = talk("home-1", ("2026-01-10T10:00:00+00:00", [("Maya", "I live in Paris, near the river.")]))
BERLIN = talk("home-2", ("2026-03-01T10:00:00+00:00", [("Maya", "I just moved to Berlin!")]))


@pytest.mark.parametrize(("text", "participants", "expected"), [
    ("Maya: I live in Paris, near the river.", ["Maya"], [("maya", "residence", "paris")]),
    ("Maya: I just moved to Berlin last month!", ["Maya"], [("maya", "residence", "berlin")]),
    ("Maya: We're based in New York City now.", ["Maya"], [("maya", "residence", "new york city")]),
    ("Maya lives in Lisbon.", ["Maya"], [("maya", "residence", "lisbon")]),
    ("Maya now lives in Porto - she loves it.", ["Maya"], [("maya", "residence", "porto")]),
    ("Maya Lopez works for Initech.", ["Maya Lopez"], [("maya lopez", "employer", "initech")]),
    ("Sam: Maya moved to Rome.", ["Sam", "Maya"], [("maya", "residence", "rome")]),
    ("Maya: I work at Acme as an engineer.", ["Maya"], [("maya", "employer", "acme")]),
    ("Maya: I started a new job at Globex.", ["Maya"], [("maya", "employer", "globex")]),
    ("Maya: I quit my job yesterday.", ["Maya"], [("maya", "employer", "none")]),
    ("Maya: I work as a nurse at the clinic.", ["Maya"], [("maya", "occupation", "nurse")]),
    ("Maya: I'm married to Sam.", ["Maya", "Sam"], [("maya", "relationship", "married"), ("maya", "partner", "sam")]),
    ("Maya: We broke up last week.", ["Maya"], [("maya", "relationship", "single"), ("maya", "partner", "none")]),
    ("Maya: My favourite colour is blue.", ["Maya"], [("maya", "favourite:color", "blue")]),
    ("Maya's favorite book is Dune by Frank Herbert.", ["Maya"], [("maya", "favourite:book", "dune")]),
    ("Maya: Do you live in Paris?", ["Maya"], []),
    ("Maya: If I moved to Rome I would be happy.", ["Maya"], []),
    ("Maya: I used to live in Paris.", ["Maya"], []),
    ("Maya: She lives in Oslo.", ["Maya"], []),
    ("Maya: I went hiking near Portland last week with Priya.", ["Maya", "Priya"], []),
])
def test_fact_patterns(text, participants, expected):
    unit = make_unit(text, namespace=MAYA, participants=participants)
    assert facts(unit) == [Fact(*e) for e in expected]


def test_newer_statement_supersedes_older(bow):
    memory = RippleMem(bow)
    assert memory.add_conversation(PARIS, namespace=MAYA).superseded == []
    report = memory.add_conversation(BERLIN, namespace=MAYA)
    paris, berlin = unit_id(memory, "Paris"), unit_id(memory, "Berlin")
    assert report.superseded == [paris]
    (old,) = memory.get([paris], namespace=MAYA)
    (new,) = memory.get([berlin], namespace=MAYA)
    assert old.metadata["superseded_by"] == berlin
    assert old.metadata["valid_until"] == new.time.start.isoformat()
    assert old.metadata["superseded_attribute"] == "residence"
    assert "superseded_by" not in new.metadata
    assert {u.id for u in memory.list_units(MAYA)} == {paris, berlin}  # both kept


def test_recall_prefers_current_facts_and_answers_as_of(bow):
    memory = RippleMem(bow)
    memory.add_conversation(PARIS, namespace=MAYA)
    memory.add_conversation(BERLIN, namespace=MAYA)
    memory.add_conversation(talk("home-3", ("2026-03-05T10:00:00+00:00", [
        ("Maya", "I live in Berlin, near the park.")])), namespace=MAYA)  # same value: no new mark
    paris, berlin, park = unit_id(memory, "Paris"), unit_id(memory, "moved to Berlin"), unit_id(memory, "park")
    query = "Where does Maya live?"

    def scores(**kwargs) -> dict[str, float]:
        return {m.unit.id: m.score for m in memory.recall(query, namespace=MAYA, **kwargs).memories}

    weights_only = {"asked_first": False}  # the weight alone (recall/updates.py orders chains after it)
    flat = scores(config=RecallConfig(lifecycle={"superseded_weight": 1.0, **weights_only}))
    half = {"superseded_weight": 0.5, **weights_only}
    now = scores(config=RecallConfig(lifecycle=half))
    assert set(now) == {paris, berlin, park}
    assert now[paris] == pytest.approx(0.5 * flat[paris]) and now[berlin] == flat[berlin]
    # "I live in Paris" and "I live in Berlin" match the question equally well: the current one wins.
    assert max(flat, key=flat.get) == paris and max(now, key=now.get) == park
    # By default the chain's current statement also comes before the one it replaced, whatever the weight.
    for weight in (0.5, 1.0):
        order = [m.unit.id for m in memory.recall(query, namespace=MAYA, config=RecallConfig(
            lifecycle={"superseded_weight": weight})).memories]
        assert order.index(berlin) < order.index(paris)
    # Before the move: Berlin does not exist yet, Paris is current (not down-weighted).
    for as_of in (datetime(2026, 2, 1, tzinfo=timezone.utc), date(2026, 2, 1), "2026-02-01T00:00:00+00:00"):
        then = memory.recall(query, namespace=MAYA, as_of=as_of)
        assert [m.unit.id for m in then.memories] == [paris]
        assert berlin not in seen_ids(then)
    alone = memory.recall(query, namespace=MAYA, as_of="2026-02-01",
                          config=RecallConfig(lifecycle={"superseded_weight": 1.0})).memories[0].score
    assert memory.recall(query, namespace=MAYA, as_of="2026-02-01",
                         config=RecallConfig(lifecycle={"superseded_weight": 0.5})).memories[0].score == alone
    # After the move, as of a later date: Paris was superseded by then.
    later = scores(as_of=datetime(2026, 6, 1), config=RecallConfig(lifecycle=half))  # naive = UTC
    assert later[paris] == pytest.approx(now[paris]) and later[berlin] == pytest.approx(now[berlin])
    with pytest.raises(ValueError, match="as_of"):
        memory.recall(query, namespace=MAYA, as_of="next tuesday")
    with pytest.raises(ValueError, match="as_of"):
        memory.recall(query, namespace=MAYA, as_of=20260201)  # type: ignore[arg-type]


def test_as_of_threads_through_the_graph_context_and_the_retriever(bow):
    memory = RippleMem(bow)
    memory.add_conversation(PARIS, namespace=MAYA)
    memory.add_conversation(BERLIN, namespace=MAYA)
    paris, berlin = unit_id(memory, "Paris"), unit_id(memory, "Berlin")
    graph = build_recall_graph(memory.reader)
    out = graph.invoke({"query": "Where does Maya live?"},
                       context=RecallContext(namespace=MAYA, as_of="2026-02-01"))
    assert [m.unit.id for m in out["result"].memories] == [paris]
    out = graph.invoke({"query": "Where does Maya live?"}, context={"namespace": ["maya"], "as_of": "2026-02-01"})
    assert [m.unit.id for m in out["result"].memories] == [paris]
    docs = RippleMemRetriever(memory=memory, namespace=MAYA, k=5).invoke("Where does Maya live?")
    by_id = {d.id: d for d in docs}
    assert by_id[paris].metadata["superseded_by"] == berlin and "superseded_by" not in by_id[berlin].metadata
    old = RippleMemRetriever(memory=memory, namespace=MAYA, as_of=datetime(2026, 2, 1, tzinfo=timezone.utc))
    assert [d.id for d in old.invoke("Where does Maya live?")] == [paris]
    listing = create_recall_tool(memory, namespace=MAYA).invoke({"query": "Where does Maya live?"})
    assert f"(superseded from 2026-03-01 by [{berlin}])" in listing


def test_supersession_rule_details(bow):
    memory = RippleMem(bow)
    memory.add_conversation(talk("a", ("2026-01-01T09:00:00+00:00", [
        ("Maya", "I live in Paris and I work at Acme."),
        ("Sam", "I live in Rome."),
        ("Maya", "My favourite book is Dune.")])), namespace=MAYA)
    report = memory.add_conversation(talk("b", ("2026-02-01T09:00:00+00:00", [
        ("Maya", "I moved to Berlin."),
        ("Maya", "My favourite book is still Dune!")])), namespace=MAYA)
    assert report.superseded == []  # Acme is still current; Dune restated; Sam is someone else
    assert not any("superseded_by" in u.metadata for u in memory.list_units(MAYA))
    report = memory.add_conversation(talk("c", ("2026-03-01T09:00:00+00:00", [
        ("Maya", "I just started a new job at Globex.")])), namespace=MAYA)
    both = unit_id(memory, "Paris and")
    assert report.superseded == [both]  # now every fact of it is outdated
    (unit,) = memory.get([both], namespace=MAYA)
    assert unit.metadata["superseded_by"] == unit_id(memory, "Globex")  # the later of the two
    assert unit.metadata["valid_until"].startswith("2026-03-01")


def test_supersession_follows_the_units_present(bow):
    memory = RippleMem(bow)
    memory.add_conversation(BERLIN, namespace=MAYA)  # newer first: order is by time, not arrival
    report = memory.add_conversation(PARIS, namespace=MAYA)
    paris, berlin = unit_id(memory, "Paris"), unit_id(memory, "Berlin")
    assert report.superseded == [paris]
    memory.suppress([berlin], namespace=MAYA, reason="I never moved")
    assert "superseded_by" not in memory.get([paris], namespace=MAYA)[0].metadata
    memory.unsuppress([berlin], namespace=MAYA)
    assert memory.get([paris], namespace=MAYA)[0].metadata["superseded_by"] == berlin
    memory.delete([berlin], namespace=MAYA)
    assert "superseded_by" not in memory.get([paris], namespace=MAYA)[0].metadata


def test_supersession_can_be_switched_off(bow):
    memory = RippleMem(bow, write_config=WriteConfig(supersession={"enabled": False}))
    memory.add_conversation(PARIS, namespace=MAYA)
    assert memory.add_conversation(BERLIN, namespace=MAYA).superseded == []
    assert not any("superseded_by" in u.metadata for u in memory.list_units(MAYA))


def test_reingest_keeps_marks_and_changes_nothing(bow):
    memory = RippleMem(bow)
    memory.add_conversation(PARIS, namespace=MAYA)
    memory.add_conversation(BERLIN, namespace=MAYA)
    memory.suppress([unit_id(memory, "Berlin")], namespace=MAYA, reason="typo")
    memory.unsuppress([unit_id(memory, "Berlin")], namespace=MAYA)
    memory.suppress([unit_id(memory, "Paris")], namespace=MAYA, reason="audit me")
    before = snapshot(memory, MAYA)
    for conv in (PARIS, BERLIN):
        report = memory.add_conversation(conv, namespace=MAYA)
        assert report.new_units == 0 and report.superseded == []
    assert snapshot(memory, MAYA) == before
    longer = BERLIN.model_copy(deep=True)
    longer.sessions[0].turns.append(longer.sessions[0].turns[0].model_copy(
        update={"id": "home-2:S1:9", "text": "The flat has a balcony."}))
    report = memory.add_conversation(longer, namespace=MAYA)
    assert report.new_units == 1 and report.superseded == []
    units, _ = snapshot(memory, MAYA)
    assert units[: len(before[0])] == before[0]


def test_marks_persist_for_a_new_process(tmp_path, bow):
    memory = RippleMem(bow, persist_directory=tmp_path)
    memory.add_conversation(make_conversation(), namespace=MAYA)
    memory.add_conversation(PARIS, namespace=MAYA)
    memory.add_conversation(BERLIN, namespace=MAYA)
    hidden = unit_id(memory, "epipen")
    memory.suppress([hidden], namespace=MAYA, reason="never had one")
    expected = {"visible": sorted(u.id for u in memory.list_units(MAYA)),
                "audit": sorted(u.id for u in memory.list_units(MAYA, include_suppressed=True)),
                "reason": "never had one", "superseded": {unit_id(memory, "Paris"): unit_id(memory, "Berlin")},
                "recalled": False}
    memory.close()  # an embedded store belongs to one process at a time
    assert reopened_in_new_process(tmp_path, (
        "units = m.list_units(('maya',), include_suppressed=True)\n"
        f"r = m.recall('doctor epipen just in case', namespace=('maya',))\n"
        "print(json.dumps({'visible': sorted(u.id for u in m.list_units(('maya',))),"
        " 'audit': sorted(u.id for u in units),"
        " 'reason': [u.metadata['suppressed']['reason'] for u in units if 'suppressed' in u.metadata][0],"
        " 'superseded': {u.id: u.metadata['superseded_by'] for u in units if 'superseded_by' in u.metadata},"
        f" 'recalled': {hidden!r} in {{x.unit.id for x in r.memories}}}}))\n")) == expected


# -- recency decay ---------------------------------------------------------------------------
