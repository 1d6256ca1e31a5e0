"""The set-question and stand-alone fact suites: their invariants, refusal of broken cases, and the runner."""

from __future__ import annotations

import json
from collections import Counter
from itertools import combinations

import pytest

from benchmarks.cached_embeddings import CachedEmbeddings
from benchmarks.cli import bench_main
from benchmarks.haystack import inject, name_conflicts, sample_haystacks
from benchmarks.report import results_markdown
from benchmarks.runner import FreshMemories
from benchmarks.set_fact_cases import (
    DEFAULT_SUITES,
    FACT_KINDS,
    MIN_CASES,
    SET_KINDS,
    FactCase,
    SetCase,
    answered_case_row,
    case_problems,
    load_fact_cases,
    load_set_cases,
    suite_problems,
)
from benchmarks.suite_runner import run_suite
from benchmarks.systems import SYSTEM_NAMES
from langchain_ripplemem.text.lexical import lexical_tokens
from tests.unit_tests.conftest import BagOfWordsEmbeddings

SETS = load_set_cases()
FACTS = load_fact_cases()


def _tokens(text: str) -> set[str]:
    """The BM25 vocabulary of a text, the speaker placeholders left out (every turn has a speaker)."""
    return set(lexical_tokens(text.replace("{A}", " ").replace("{B}", " ")))


@pytest.mark.parametrize("case", SETS, ids=[c.id for c in SETS])
def test_every_set_is_one_persons_remarks_in_their_own_words_and_sessions(case: SetCase):
    assert 2 <= len(case.evidence) <= 4 and 1 <= len(case.distractors) <= 2
    (speaker,) = {turn.speaker for turn in case.evidence}
    assert len({turn.session for turn in case.evidence}) == len(case.evidence)
    asked = _tokens(case.question)
    for turn in case.evidence:
        assert len(asked & _tokens(turn.text)) <= 1, turn.key  # not found by the question's words
        assert turn.answer.lower() in turn.text.lower() and turn.answer.lower() not in case.question.lower()
    for one, other in combinations(case.evidence, 2):
        assert len(_tokens(one.text) & _tokens(other.text)) <= 1, (one.key, other.key)
    for lure in case.distractors:
        assert (lure.speaker == speaker) == (lure.lure == "near_miss")
    assert case_problems(case) == []


@pytest.mark.parametrize("case", FACTS, ids=[c.id for c in FACTS])
def test_every_fact_is_said_once_beside_lures_that_look_alike(case: FactCase):
    (fact,) = case.evidence
    asked, said = _tokens(case.question), _tokens(fact.text)
    assert asked & said  # asked about directly
    assert fact.answer.lower() in fact.text.lower()
    for lure in case.distractors:
        assert fact.answer.lower() not in lure.text.lower()
        assert (asked | said) & _tokens(lure.text)
        assert (lure.speaker == fact.speaker) == (lure.lure == "near_miss")
    assert case_problems(case) == []


@pytest.mark.parametrize(("cases", "kinds", "suite"), [(SETS, SET_KINDS, "sets"), (FACTS, FACT_KINDS, "facts")])
def test_each_suite_covers_its_kinds_with_two_fifths_held_out(cases, kinds, suite):
    assert len(cases) >= MIN_CASES[suite]
    per_kind = Counter(case.kind for case in cases)
    assert set(per_kind) == set(kinds)
    for kind, n in per_kind.items():
        held = sum(c.split == "heldout" for c in cases if c.kind == kind)
        assert int(n * 0.4) <= held <= -(-n * 2 // 5), kind
    assert 0.35 <= sum(c.split == "heldout" for c in cases) / len(cases) <= 0.45
    assert len({case.id for case in cases}) == len(cases)
    texts = [turn.text for case in cases for turn in (*case.evidence, *case.distractors)]
    assert len(set(texts)) == len(texts)
    lures = Counter(lure.lure for case in cases for lure in case.distractors)
    assert lures["other_speaker"] >= len(cases) // 2 and lures["near_miss"] >= len(cases) // 2
    assert {turn.speaker for case in cases for turn in case.evidence} == {"{A}", "{B}"}
    assert suite_problems(suite, cases) == []
    raw = json.loads(DEFAULT_SUITES[suite].read_text(encoding="utf-8"))
    assert raw["license"].startswith(("CC BY 4.0", "MIT")) and raw["name"] and raw["version"]


def test_set_sizes_vary_and_questions_ask_for_sets_in_several_ways():
    sizes = Counter(len(case.evidence) for case in SETS)
    assert sizes[3] > len(SETS) // 2 and set(sizes) - {3}
    openings = Counter(case.question.split()[0] for case in SETS)
    assert {"What", "Which", "How", "Name"} <= set(openings)


def _set(**changes) -> SetCase:
    base = {
        "id": "hobbies-99", "kind": "hobbies", "split": "tune", "question": "Which instruments has {A} taken up?",
        "evidence": [
            {"key": "m1", "session": 0, "speaker": "{A}", "text": "Bought a banjo at the market.", "answer": "banjo"},
            {"key": "m2", "session": 3, "speaker": "{A}", "text": "First oboe lesson today.", "answer": "oboe"},
        ],
        "distractors": [{"session": 1, "speaker": "{B}", "text": "My son plays the drums.", "lure": "other_speaker"}],
    }
    base.update(changes)
    return SetCase.model_validate(base)


def _fact(**changes) -> FactCase:
    base = {
        "id": "family-99", "kind": "family", "split": "tune", "question": "Which town does {A}'s aunt live in?",
        "evidence": [{"key": "fact", "session": 2, "speaker": "{A}", "text": "My aunt lives in Hull.",
                      "answer": "Hull"}],
        "distractors": [{"session": 4, "speaker": "{B}", "text": "My aunt lives by the sea.", "lure": "other_speaker"}],
    }
    base.update(changes)
    return FactCase.model_validate(base)


def _member(key: str, session: int, text: str, answer: str, speaker: str = "{A}") -> dict:
    return {"key": key, "session": session, "speaker": speaker, "text": text, "answer": answer}


def test_set_case_problems_names_the_case_and_each_broken_rule():
    assert case_problems(_set()) == []
    same_session = _set(evidence=[_member("m1", 2, "Bought a banjo.", "banjo"), _member("m2", 2, "Oboe day.", "oboe")])
    assert case_problems(same_session) == ["hobbies-99: members share a session ([2, 2])"]
    both = _set(evidence=[_member("m1", 0, "Bought a banjo.", "banjo"), _member("m2", 3, "Oboe day.", "oboe", "{B}")])
    assert "both speakers" in " ".join(case_problems(both))
    worded = _set(evidence=[_member("m1", 0, "I have taken up the banjo, my first instrument.", "banjo"),
                            _member("m2", 3, "Oboe day.", "oboe")])
    assert case_problems(worded) == ["hobbies-99/m1: member shares ['instrument', 'taken'] with the question "
                                     "(at most 1)"]
    alike = _set(evidence=[_member("m1", 0, "Lovely banjo lesson at the hall.", "banjo"),
                           _member("m2", 3, "Lovely oboe lesson at the hall.", "oboe")])
    assert any(p.startswith("hobbies-99/m1+m2: members share") for p in case_problems(alike))
    unsaid = _set(evidence=[_member("m1", 0, "Bought a banjo.", "lute"), _member("m2", 3, "Oboe day.", "oboe")])
    assert case_problems(unsaid) == ["hobbies-99/m1: answer 'lute' is not in its text"]
    twice = _set(evidence=[_member("m1", 0, "Bought a banjo.", "banjo"), _member("m2", 3, "Banjo day.", "banjo")])
    assert "same answer" in " ".join(case_problems(twice))
    wrong_lure = _set(distractors=[{"session": 1, "speaker": "{A}", "text": "My son plays drums.",
                                    "lure": "other_speaker"}])
    assert case_problems(wrong_lure) == ["hobbies-99/distractor 1: a other_speaker lure is said by {B}, not {A}"]


def test_fact_case_problems_names_the_case_and_each_broken_rule():
    assert case_problems(_fact()) == []
    indirect = _fact(evidence=[_member("fact", 2, "Hull is where my mum's sister ended up.", "Hull")])
    assert case_problems(indirect) == ["family-99/fact: the fact shares no token with the question"]
    repeated = _fact(distractors=[{"session": 4, "speaker": "{B}", "text": "My aunt lives in Hull too.",
                                   "lure": "other_speaker"}])
    assert case_problems(repeated) == ["family-99/distractor 1: says the answer 'Hull'; a fact is said once"]
    unlike = _fact(distractors=[{"session": 4, "speaker": "{B}", "text": "Rain again.", "lure": "other_speaker"}])
    assert case_problems(unlike) == ["family-99/distractor 1: shares no token with the question or the fact"]


def test_schema_refuses_bad_fields_naming_them():
    with pytest.raises(ValueError, match="kind"):
        _set(kind="sports")
    with pytest.raises(ValueError, match="evidence"):
        _set(evidence=[_member("m1", 0, "Bought a banjo.", "banjo")])  # a set has 2-4 members
    with pytest.raises(ValueError, match="evidence"):
        _fact(evidence=[_member("a", 0, "My aunt lives in Hull.", "Hull"), _member("b", 1, "Aunt.", "Aunt")])
    with pytest.raises(ValueError, match="lure"):
        _set(distractors=[{"session": 1, "speaker": "{B}", "text": "My son plays the drums."}])
    with pytest.raises(ValueError, match="distractors"):
        _set(distractors=[])
    with pytest.raises(ValueError, match="its own key"):
        _set(evidence=[_member("m1", 0, "Bought a banjo.", "banjo"), _member("m1", 3, "Oboe day.", "oboe")])


def test_load_refuses_a_broken_case_naming_the_case_and_the_rule(tmp_path):
    broken = _set(evidence=[_member("m1", 2, "Bought a banjo.", "banjo"), _member("m2", 2, "Oboe day.", "oboe")])
    path = tmp_path / "suite.json"
    path.write_text(json.dumps({"cases": [broken.model_dump(exclude_none=True)]}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"suite\.json breaks the suite's rules: hobbies-99: members share a session"):
        load_set_cases(path)
    assert [c.id for c in load_set_cases(path, check=False)] == ["hobbies-99"]
    good = tmp_path / "good.json"
    twin = _set(id="hobbies-98", question="Which instruments has {A} taken up lately?",
                evidence=[_member("m1", 0, "Bought a lute.", "lute"), _member("m2", 3, "Sitar day.", "sitar")],
                distractors=[{"session": 1, "speaker": "{B}", "text": "My son plays a trumpet.",
                              "lure": "other_speaker"}])
    good.write_text(json.dumps({"cases": [_set().model_dump(exclude_none=True)]}), encoding="utf-8")
    assert [c.id for c in load_set_cases(good)] == ["hobbies-99"]  # a custom suite need not have 48 cases
    alike = tmp_path / "alike.json"
    alike.write_text(json.dumps({"cases": [_set().model_dump(exclude_none=True), twin.model_dump(exclude_none=True)]}),
                     encoding="utf-8")
    with pytest.raises(ValueError, match=r"hobbies-98: its question is alike hobbies-99's"):
        load_set_cases(alike)
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps({"cases": [_set().model_dump(exclude_none=True)]}), encoding="utf-8")
    with pytest.raises(ValueError, match="kind"):  # a set case is no fact case
        load_fact_cases(facts)
    with pytest.raises(ValueError, match="cannot read the facts suite"):
        load_fact_cases(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="split must be one of"):
        load_set_cases(split="train")


def test_every_shipped_case_fits_the_fallback_haystack():
    (hay,) = sample_haystacks()
    for case in (*SETS, *FACTS):
        assert not name_conflicts(case, hay), case.id
        question = inject(case, hay, "sets").questions[0]
        assert len(question.evidence) == len(case.evidence) and question.category_name == case.kind
        assert question.answer == "; ".join(t.answer for t in case.evidence) and "{" not in question.question


def test_run_suite_on_sets_end_to_end_on_the_fallback_haystack():
    cases = [next(c for c in SETS if c.split == split) for split in ("tune", "heldout")]
    factory = FreshMemories("sets", embeddings=CachedEmbeddings(BagOfWordsEmbeddings()))
    res = run_suite("sets", cases, sample_haystacks(), ["ripplemem", "dense", "bm25"], [5, 10],
                    case_row=answered_case_row, default_suite=DEFAULT_SUITES["sets"], memory_factory=factory,
                    progress=False)
    assert res["dataset"] == "sets" and res["n_questions"] == 2
    assert res["suite"]["path"] == "benchmarks/data/set_cases.json"
    for entry in res["systems"].values():
        assert list(entry["by_category"]) == [*SET_KINDS, "overall"]
        overall = entry["by_category"]["overall"]
        assert overall["recall_all@10"] <= overall["recall_frac@10"] <= 1.0
        assert set(entry["splits"]) == {"tune", "heldout"}
    rows = res["cases"]
    assert [row["id"] for row in rows] == [c.id for c in cases]
    assert rows[0]["answers"] == [t.answer for t in cases[0].evidence] and "bridged" not in rows[0]
    assert len(rows[0]["evidence"]) == len(cases[0].evidence) and rows[0]["kind"] == cases[0].kind
    markdown = results_markdown(res)
    assert "### Held-out vs tune: recall_frac (%), overall" in markdown
    assert "Anchors and bridged" not in markdown and "| case | kind | split | answers |" in markdown
    assert ", ".join(rows[1]["answers"]) in markdown


def test_cli_sets_and_facts_write_results_and_tables(tmp_path, monkeypatch):
    from benchmarks import cached_embeddings

    class Named(BagOfWordsEmbeddings):
        model_id = "bag-of-words"

    monkeypatch.setattr(cached_embeddings, "CachedEmbeddings",
                        lambda base=None, directory=None: CachedEmbeddings(Named(), directory))
    for suite in ("sets", "facts"):
        out, md = tmp_path / f"{suite}.json", tmp_path / f"{suite}.md"
        code = bench_main([suite, "--split", "heldout", "--limit", "1", "--systems", "ripplemem,hybrid_rrf",
                           "--k", "5,10", "--out", str(out), "--md", str(md), "--no-progress",
                           "--embedding-cache", str(tmp_path / "vectors")])
        assert code == 0
        res = json.loads(out.read_text(encoding="utf-8"))
        assert res["dataset"] == suite and res["suite"]["split"] == "heldout" and res["suite"]["n_cases"] == 1
        assert res["cases"][0]["split"] == "heldout" and list(res["systems"]) == ["ripplemem", "hybrid_rrf"]
        assert "recall_frac@10" in md.read_text(encoding="utf-8")
    assert bench_main(["facts", "--limit", "0", "--out", str(tmp_path / "x.json")]) == 2
    assert bench_main(["sets", "--suite", str(tmp_path / "missing.json")]) == 2


def test_the_suites_run_every_system_by_default():
    from benchmarks.cli import build_parser

    for suite in ("sets", "facts"):
        assert build_parser().parse_args([suite]).systems == ",".join(SYSTEM_NAMES)
