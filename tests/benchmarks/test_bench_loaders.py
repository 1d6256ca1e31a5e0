from __future__ import annotations

import json

import pytest

from benchmarks.loaders import (
    LOCOMO_HELDOUT,
    LOCOMO_TUNE,
    load_locomo,
    load_longmemeval,
    locomo_split,
)
from tests.benchmarks.fixtures.bench_fakes import (
    LOCOMO_TINY,
    LONGMEMEVAL_TINY,
    locomo_adapter,
    longmemeval_adapter,
)


def test_load_locomo_questions_categories_and_evidence():
    convs = load_locomo(LOCOMO_TINY, adapter=locomo_adapter)
    assert [c.id for c in convs] == ["conv-26", "conv-48"]
    assert [c.split for c in convs] == ["tune", "heldout"]
    assert all(c.dataset == "locomo" for c in convs)
    q = {q.id: q for q in convs[0].questions}
    assert len(q) == 8
    assert q["conv-26:q0"].category_name == "single-hop" and q["conv-26:q0"].evidence == ["D1:1"]
    assert q["conv-26:q1"].category == 2 and q["conv-26:q1"].evidence == ["D2:3"]
    assert q["conv-26:q2"].category_name == "multi-hop"
    assert q["conv-26:q2"].evidence == ["D2:1", "D1:3"]
    assert q["conv-26:q3"].evidence == ["D1:2"] and q["conv-26:q3"].unresolved == ["D"]
    assert q["conv-26:q4"].evidence == ["D2:2"] and q["conv-26:q4"].unresolved == ["D7:4"]
    assert q["conv-26:q5"].evidence == [] and q["conv-26:q5"].category_name == "open-domain"
    adversarial = q["conv-26:q6"]
    assert adversarial.category_name == "adversarial" and not adversarial.answerable
    assert adversarial.answer is None
    assert adversarial.extra["adversarial_answer"] == "It was in Lisbon"
    assert q["conv-26:q7"].answer == "2023"  # ints become strings
    assert q["conv-26:q7"].evidence == ["D1:1", "D1:2"]


def test_load_locomo_limit():
    assert len(load_locomo(LOCOMO_TINY, limit=1, adapter=locomo_adapter)) == 1
    with pytest.raises(ValueError, match="limit"):
        load_locomo(LOCOMO_TINY, limit=0, adapter=locomo_adapter)


def test_load_locomo_rejects_bad_files(tmp_path):
    with pytest.raises(ValueError, match="not found"):
        load_locomo(tmp_path / "missing.json", adapter=locomo_adapter)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_locomo(bad, adapter=locomo_adapter)
    bad.write_text(json.dumps({"qa": []}), encoding="utf-8")
    with pytest.raises(ValueError, match="JSON list"):
        load_locomo(bad, adapter=locomo_adapter)
    bad.write_text(json.dumps([{"sample_id": "x"}]), encoding="utf-8")
    with pytest.raises(ValueError, match="not a LoCoMo sample"):
        load_locomo(bad, adapter=locomo_adapter)
    record = json.loads(LOCOMO_TINY.read_text(encoding="utf-8"))[1]
    record["qa"][0]["category"] = 9
    bad.write_text(json.dumps([record]), encoding="utf-8")
    with pytest.raises(ValueError, match="unknown category 9"):
        load_locomo(bad, adapter=locomo_adapter)


def test_locomo_splits():
    assert len(LOCOMO_TUNE) == 7 and len(LOCOMO_HELDOUT) == 3
    assert locomo_split("conv-47") == "tune"
    assert locomo_split("conv-50") == "heldout"
    assert locomo_split("other") is None


def test_load_longmemeval_turn_and_session_evidence():
    convs = load_longmemeval(LONGMEMEVAL_TINY, adapter=longmemeval_adapter)
    assert [c.id for c in convs] == ["q_user_1", "q_multi_2", "q_user_3_abs"]
    assert all(len(c.questions) == 1 and c.split is None for c in convs)
    single, multi, abstain = (c.questions[0] for c in convs)
    assert single.category_name == "single-session-user" and single.category == 1
    assert single.evidence == ["answer_s1:0"]
    assert single.evidence_sessions == ["answer_s1"]
    assert single.question_date == "2023/06/01 (Thu) 10:00"
    assert multi.category_name == "multi-session"
    assert multi.evidence == ["answer_m1:0", "answer_m2:2"]
    assert multi.evidence_sessions == ["answer_m1", "answer_m2"]
    # abstention: no turn-level evidence, still scored at session level
    assert not abstain.answerable and abstain.evidence == []
    assert abstain.evidence_sessions == ["answer_s3"]


def test_longmemeval_positional_turn_ids_when_adapter_numbers_differently():
    def one_based(record):
        conv = longmemeval_adapter(record)
        for session in conv.sessions:
            for i, turn in enumerate(session.turns):
                turn.id = f"{session.id}#{i + 1}"
        return conv

    single = load_longmemeval(LONGMEMEVAL_TINY, limit=1, adapter=one_based)[0].questions[0]
    assert single.evidence == ["answer_s1#1"] and single.unresolved == []


def test_longmemeval_missing_fields(tmp_path):
    bad = tmp_path / "lme.json"
    bad.write_text(json.dumps([{"question_id": "x"}]), encoding="utf-8")
    with pytest.raises(ValueError, match="missing"):
        load_longmemeval(bad, adapter=longmemeval_adapter)


def test_the_package_converters_are_the_default():
    convs = load_locomo(LOCOMO_TINY)
    assert convs[0].questions[2].evidence == ["D2:1", "D1:3"]
    lme = load_longmemeval(LONGMEMEVAL_TINY)
    assert lme[1].questions[0].evidence_sessions == ["answer_m1", "answer_m2"]
    assert len(lme[1].questions[0].evidence) == 2


def test_longmemeval_session_listed_twice_loads_with_the_real_adapter(tmp_path):
    # As in LongMemEval-S: the same session at two dates. Evidence stays on the first listing.
    records = json.loads(LONGMEMEVAL_TINY.read_text(encoding="utf-8"))
    record = records[0]
    at = record["haystack_session_ids"].index("answer_s1")
    for key in ("haystack_session_ids", "haystack_dates", "haystack_sessions"):
        record[key] = [*record[key], record[key][at]]
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    with pytest.warns(UserWarning, match="'answer_s1' is listed twice with the same turns"):
        (conv,) = load_longmemeval(path)
    assert [s.id for s in conv.conversation.sessions].count("answer_s1") == 1
    assert len(conv.conversation.sessions) == len(record["haystack_sessions"]) - 1
    assert conv.questions[0].evidence == ["answer_s1:0"] and conv.questions[0].evidence_sessions == ["answer_s1"]


def test_per_type_keeps_the_first_answerable_records_of_each_type(tmp_path):
    records = json.loads(LONGMEMEVAL_TINY.read_text(encoding="utf-8"))
    second_user = {**records[0], "question_id": "q_user_4"}
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([*records, second_user]), encoding="utf-8")
    ids = [c.questions[0].id for c in load_longmemeval(path, per_type=1, adapter=longmemeval_adapter)]
    assert ids == ["q_user_1", "q_multi_2"]  # the abstention record and the second user record left out
    both = load_longmemeval(path, per_type=2, adapter=longmemeval_adapter)
    assert [c.questions[0].id for c in both] == ["q_user_1", "q_multi_2", "q_user_4"]
    with pytest.raises(ValueError, match="per_type must be >= 1"):
        load_longmemeval(path, per_type=0, adapter=longmemeval_adapter)
