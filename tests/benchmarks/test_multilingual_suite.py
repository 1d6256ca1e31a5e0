"""The multilingual suite's file keeps its rules, and ``python -m benchmarks multilingual`` runs it (issue 36.2)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from benchmarks.cli import bench_main
from benchmarks.multilingual import (
    DEFAULT_SUITE,
    LANGUAGES,
    load_multilingual_cases,
    multilingual_conversations,
)
from langchain_ripplemem.text.lexical import lexical_tokens


def test_six_languages_five_cases_each_and_a_fixed_split():
    cases = load_multilingual_cases()
    assert Counter(c.language for c in cases) == {lang: 5 for lang in LANGUAGES}
    for lang in LANGUAGES:
        splits = Counter(c.split for c in cases if c.language == lang)
        assert splits == {"tune": 3, "heldout": 2}
    assert {c.id for c in load_multilingual_cases(split="heldout")} == {c.id for c in cases if c.split == "heldout"}


def test_each_case_is_a_small_conversation_with_its_evidence_among_small_talk():
    cases = load_multilingual_cases()
    for case, bench in zip(cases, multilingual_conversations(cases), strict=True):
        turns = bench.conversation.sessions[0].turns
        assert 10 <= len(turns) <= 30, case.id
        evidence = bench.questions[0].evidence
        assert evidence and set(evidence) <= {t.id for t in turns}
        assert {t.speaker for t in turns} == set(case.speakers)


def test_every_question_shares_a_word_or_speaker_with_its_evidence():
    """The lexical or cue view has something to find in every language, Hebrew and Chinese too."""
    cases = load_multilingual_cases()
    for case, bench in zip(cases, multilingual_conversations(cases), strict=True):
        said = {t.id: t for t in bench.conversation.sessions[0].turns}
        question = set(lexical_tokens(case.question))
        shared = [bool(question & set(lexical_tokens(said[e].text))) or said[e].speaker in case.question
                  for e in bench.questions[0].evidence]
        assert any(shared), case.id


def test_a_suite_short_of_a_language_is_refused(tmp_path):
    raw = json.loads(DEFAULT_SUITE.read_text(encoding="utf-8"))
    raw["cases"] = [c for c in raw["cases"] if c["language"] != "he"]
    bad = tmp_path / "suite.json"
    bad.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ValueError, match="he: 0 cases"):
        load_multilingual_cases(bad)


@pytest.mark.slow
def test_the_command_writes_results_and_tables(tmp_path):
    out, md = tmp_path / "multilingual.json", tmp_path / "multilingual.md"
    code = bench_main(["multilingual", "--limit", "1", "--systems", "bm25,ripplemem", "--k", "5",
                       "--no-embedding-cache", "--no-progress", "--out", str(out), "--md", str(md)])
    assert code == 0
    results = json.loads(out.read_text(encoding="utf-8"))
    assert results["dataset"] == "multilingual" and results["suite"]["n_cases"] == 1
    assert results["systems"]["bm25"]["by_category"]["de"]["recall_all@5"] == 1.0
    assert "| de (n=1) |" in md.read_text(encoding="utf-8")
