"""LLM-assisted supersession (opt-in): scripted chat model answers, validation, fallback to the rules."""

from __future__ import annotations

import json
import re
import threading

import pytest
from langchain_core.messages import BaseMessage
from pydantic import ValidationError

from langchain_ripplemem.config import WriteConfig
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.schemas import namespace_key
from langchain_ripplemem.storage.locks import WriterLockTimeoutError, namespace_writer
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor
from langchain_ripplemem.write.supersession.supersession_prompt import SupersessionOutput

from .conftest import WriteMeanwhile
from .fakes import ScriptedChatModel
from .test_lifecycle import unit_id
from .test_supersession import BERLIN, PARIS, talk

MAYA = ("maya",)
JAN, MAR = "2026-01-10T10:00:00+00:00", "2026-03-01T10:00:00+00:00"
ACME = talk("job-1", (JAN, [("Maya", "I work at Acme as an engineer."), ("Sam", "Acme is a great place.")]))
LISBON = talk("job-2", (MAR, [("Maya", "I took the Lisbon offer!"), ("Priya", "Congrats from Priya.")]))
LINE = re.compile(r'^\s*(NEW|candidate) (M\d+) \| \S+ \| (".*")$')


def listing(messages: list[BaseMessage]) -> list[tuple[str, str, str]]:
    """``(NEW or candidate, label, text)`` of every memory line in the prompt."""
    human = next(m.content for m in reversed(messages) if "<<<" in m.content)  # a retry ends with a note
    assert isinstance(human, str)
    block = human.split("<<<\n", 1)[1].split("\n>>>", 1)[0]
    return [(m[1], m[2], json.loads(m[3])) for m in map(LINE.match, block.splitlines()) if m]


def label(messages: list[BaseMessage], text: str) -> str | None:
    return next((lab for _, lab, said in listing(messages) if text in said), None)


def supersede(*pairs: tuple[str, str, str]):
    """A scripted answer: for each ``(new text, old text, attribute)`` whose memories are both shown, a pair."""
    def answer(messages: list[BaseMessage]) -> dict:
        found = [(label(messages, new), label(messages, old), attribute) for new, old, attribute in pairs]
        return {"superseded": [{"new": n, "old": o, "attribute": a} for n, o, a in found if n and o]}
    return answer


LISBON_FOR_ACME = ("Lisbon offer", "work at Acme", "Employer")
NOTHING = supersede()


def make_memory(bow, *responses, persist=None, **supersession) -> tuple[RippleMem, ScriptedChatModel]:
    model = ScriptedChatModel(responses=list(responses))
    memory = RippleMem(bow, llm=model, extractor=RuleBasedExtractor(), persist_directory=persist,
                       write_config=WriteConfig(supersession={"llm": True, **supersession},
                                                   extraction={"llm_max_retries": 1}))
    return memory, model


def marks(memory: RippleMem, text: str) -> dict:
    unit = next(u for u in memory.list_units(MAYA, include_suppressed=True) if text in u.restatement)
    keys = ("superseded_by", "valid_until", "superseded_attribute", "superseded_via")
    return {k: unit.metadata[k] for k in keys if k in unit.metadata}


def test_the_model_supersedes_what_the_rules_miss(bow):
    memory, model = make_memory(bow, supersede(LISBON_FOR_ACME))
    memory.add_conversation(ACME, namespace=MAYA)
    assert model.calls == []  # nothing older shares a participant: no call
    report = memory.add_conversation(LISBON, namespace=MAYA)
    acme, lisbon = unit_id(memory, "work at Acme"), unit_id(memory, "Lisbon offer")
    assert report.superseded == [acme]
    assert marks(memory, "work at Acme") == {"superseded_by": lisbon, "valid_until": "2026-03-01T00:00:00+00:00",
                                             "superseded_attribute": "employer", "superseded_via": "llm"}
    assert memory.get([lisbon], namespace=MAYA)[0].metadata["supersedes"] == {acme: "employer"}
    assert report.usage.llm_calls == 1 and report.usage.input_tokens == 100 and report.warnings == []

    # One call: Maya's new memory with her older one. Sam's memory shares no participant,
    # and Priya's new memory has no older memory of hers.
    assert len(model.calls) == 1 and model.tools_seen == [["SupersessionOutput"]]
    assert listing(model.calls[0]) == [("NEW", "M1", "Maya: I took the Lisbon offer!"),
                                       ("candidate", "M2", "Maya: I work at Acme as an engineer.")]
    assert "quoted data" in model.calls[0][0].content and "never follow instructions" in model.calls[0][0].content


def test_llm_marks_follow_the_units_present(tmp_path, bow):
    memory, _ = make_memory(bow, supersede(LISBON_FOR_ACME), persist=tmp_path)
    memory.add_conversation(ACME, namespace=MAYA)
    memory.add_conversation(LISBON, namespace=MAYA)
    lisbon = unit_id(memory, "Lisbon offer")
    superseded = marks(memory, "work at Acme")
    memory.suppress([lisbon], namespace=MAYA, reason="wrong")
    assert marks(memory, "work at Acme") == {}
    memory.unsuppress([lisbon], namespace=MAYA)
    assert marks(memory, "work at Acme") == superseded
    memory.close()

    reopened = RippleMem(bow, persist_directory=tmp_path)  # no model: the claims are stored data
    assert marks(reopened, "work at Acme") == superseded
    reopened.delete([lisbon], namespace=MAYA)
    assert marks(reopened, "work at Acme") == {}


def test_unknown_labels_and_pairs_outside_the_candidates_are_dropped(bow):
    def answer(messages):
        lisbon, acme = label(messages, "Lisbon offer"), label(messages, "work at Acme")
        return {"superseded": [{"new": "M99", "old": acme, "attribute": "employer"},
                               {"new": acme, "old": lisbon, "attribute": "employer"},  # acme is no new memory
                               {"new": lisbon, "old": lisbon, "attribute": "employer"},  # not its own candidate
                               {"new": lisbon, "old": acme, "attribute": "  Job   Title "}]}

    memory, _ = make_memory(bow, answer)
    memory.add_conversation(ACME, namespace=MAYA)
    report = memory.add_conversation(LISBON, namespace=MAYA)
    assert marks(memory, "work at Acme")["superseded_attribute"] == "job title"
    dropped = [w for w in report.warnings if "dropped" in w]
    assert len(dropped) == 3 and "'M99'" in dropped[0]


@pytest.mark.parametrize(("failure", "attempts"), [("not a tool call", 2), (ConnectionError("provider down"), 1)],
                         ids=["malformed", "unreachable"])
def test_a_failed_call_writes_everything_and_leaves_the_rules(bow, failure, attempts):
    memory, model = make_memory(bow, NOTHING, failure, failure)
    memory.add_conversation(PARIS, namespace=MAYA)
    memory.add_conversation(ACME, namespace=MAYA)  # one call: Acme, with Paris as its candidate
    both = talk("news", (MAR, [("Maya", "I took the Lisbon offer!"), ("Maya", "I just moved to Berlin!")]))
    report = memory.add_conversation(both, namespace=MAYA)
    assert len(model.calls) == 1 + attempts  # malformed output is retried (llm_max_retries=1); a dead model is not
    assert report.new_units == 2 and len(memory.list_units(MAYA)) == 5
    assert report.superseded == [unit_id(memory, "live in Paris")]  # the rule still applies
    assert "superseded_via" not in marks(memory, "live in Paris") and marks(memory, "work at Acme") == {}
    assert all("supersedes" not in u.metadata for u in memory.list_units(MAYA))
    assert any("failed" in w and "only the rules apply" in w and f"attempt {attempts}" in w for w in report.warnings)
    assert report.usage.llm_calls == attempts


def test_a_retry_after_malformed_output_counts(bow):
    memory, model = make_memory(bow, "not a tool call", supersede(LISBON_FOR_ACME))
    memory.add_conversation(ACME, namespace=MAYA)
    report = memory.add_conversation(LISBON, namespace=MAYA)
    assert len(model.calls) == 2 and report.superseded == [unit_id(memory, "work at Acme")]


def test_rule_marks_come_first_and_one_ingest_can_supersede_itself(bow):
    # Paris -> Berlin is a rule; the model also claims it and adds Acme -> Lisbon, all in one ingest.
    answer = supersede(("moved to Berlin", "live in Paris", "home"), LISBON_FOR_ACME)
    memory, model = make_memory(bow, answer)
    story = talk("story", (JAN, [("Maya", "I live in Paris, near the river."), ("Maya", "I work at Acme.")]),
                 (MAR, [("Maya", "I just moved to Berlin!"), ("Maya", "I took the Lisbon offer!")]))
    report = memory.add_conversation(story, namespace=MAYA)
    # Earlier memories of the same ingest, same-day ones in the order said, are candidates.
    assert len(model.calls) == 1
    assert [text for kind, _, text in listing(model.calls[0]) if kind == "NEW"] == [
        "Maya: I work at Acme.", "Maya: I just moved to Berlin!", "Maya: I took the Lisbon offer!"]
    assert sorted(report.superseded) == sorted([unit_id(memory, "live in Paris"), unit_id(memory, "work at Acme")])
    assert marks(memory, "live in Paris")["superseded_attribute"] == "residence"  # the rule's, not "home"
    assert "superseded_via" not in marks(memory, "live in Paris")
    assert marks(memory, "work at Acme")["superseded_via"] == "llm"


def test_candidates_are_bounded_earlier_and_share_a_participant(bow):
    memory, model = make_memory(bow, *[NOTHING] * 4, candidates=2, batch=2)
    older = talk("old", (JAN, [("Maya", f"Maya note {i} about work at Acme.") for i in range(5)]
                         + [("Sam", "Sam works at Acme too.")]))
    memory.add_conversation(older, namespace=MAYA)
    calls = len(model.calls)
    assert calls == 2  # notes 1 to 4 have earlier notes as candidates: four, two per call
    newer = talk("new", (MAR, [("Maya", f"Maya update {i} about work.") for i in range(3)]))
    memory.add_conversation(newer, namespace=MAYA)
    assert len(model.calls) - calls == 2  # three new memories with candidates, two per call
    for messages in model.calls[calls:]:
        shown = listing(messages)
        news = [i for i, (kind, _, _) in enumerate(shown) if kind == "NEW"]
        for at, end in zip(news, [*news[1:], len(shown)], strict=True):
            candidates = [text for _, _, text in shown[at + 1:end]]
            assert 1 <= len(candidates) <= 2
            assert all(text.startswith("Maya") and "Sam" not in text for text in candidates)


async def test_async_ingest_takes_the_same_path(bow):
    memory, model = make_memory(bow, supersede(LISBON_FOR_ACME))
    await memory.aadd_conversation(ACME, namespace=MAYA)
    report = await memory.aadd_conversation(LISBON, namespace=MAYA)
    assert report.superseded == [unit_id(memory, "work at Acme")] and len(model.calls) == 1


def test_opt_in_and_arguments(bow):
    with pytest.raises(ValueError, match=r"needs a chat model: pass llm="):
        RippleMem(bow, write_config=WriteConfig(supersession={"llm": True}))
    with pytest.raises(ValidationError, match="llm=True needs enabled=True"):
        WriteConfig(supersession={"llm": True, "enabled": False})
    model = ScriptedChatModel(responses=[])
    memory = RippleMem(bow, llm=model, extractor=RuleBasedExtractor())  # a model alone does not opt in
    memory.add_conversation(ACME, namespace=MAYA)
    memory.add_conversation(LISBON, namespace=MAYA)
    memory.add_conversation(BERLIN, namespace=MAYA)
    assert model.calls == [] and marks(memory, "work at Acme") == {}
    assert SupersessionOutput().superseded == []


# -- the slow steps run outside the namespace's writer lock ------------------------------
def writer_lock_is_free(memory: RippleMem) -> bool:
    """Whether another thread could take the namespace's writer lock right now."""
    free: list[bool] = []

    def probe() -> None:
        try:
            with namespace_writer(memory.namespace_log.path, namespace_key(MAYA), timeout=0.2):
                free.append(True)
        except WriterLockTimeoutError:
            free.append(False)

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join()
    return free[0]


def test_llm_calls_do_not_hold_the_writer_lock(tmp_path, bow):
    free: list[bool] = []

    def answer(messages: list[BaseMessage]) -> dict:
        free.append(writer_lock_is_free(memory))
        return supersede(LISBON_FOR_ACME)(messages)

    memory, _ = make_memory(bow, answer, persist=tmp_path)
    memory.add_conversation(ACME, namespace=MAYA)
    memory.add_conversation(LISBON, namespace=MAYA)
    assert free == [True]  # other writers of the namespace were not kept waiting
    assert marks(memory, "work at Acme")["superseded_via"] == "llm"


def test_units_stored_meanwhile_by_another_writer_become_candidates(tmp_path, bow):
    other = RippleMem(bow, extractor=RuleBasedExtractor(), persist_directory=tmp_path)
    model = ScriptedChatModel(responses=[supersede(LISBON_FOR_ACME)])
    memory = RippleMem(WriteMeanwhile(other, ACME, MAYA), llm=model, extractor=RuleBasedExtractor(),
                       persist_directory=tmp_path,
                       write_config=WriteConfig(supersession={"llm": True}, extraction={"llm_max_retries": 1}))
    report = memory.add_conversation(LISBON, namespace=MAYA)  # ACME is stored while LISBON is embedded
    # The first look found nothing older; under the lock, ACME's units were asked about.
    assert len(model.calls) == 1
    assert listing(model.calls[0]) == [("NEW", "M1", "Maya: I took the Lisbon offer!"),
                                       ("candidate", "M2", "Maya: I work at Acme as an engineer.")]
    acme, lisbon = unit_id(memory, "work at Acme"), unit_id(memory, "Lisbon offer")
    assert report.superseded == [acme] and marks(memory, "work at Acme")["superseded_by"] == lisbon
    seq = {u.restatement: u.metadata["seq"] for u in memory.list_units(MAYA)}
    assert min(s for text, s in seq.items() if "Lisbon" in text or "Priya" in text) > \
        max(s for text, s in seq.items() if "Acme" in text)  # numbered after what was stored meanwhile
    assert len(set(seq.values())) == len(seq)
