from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from benchmarks.metrics import (
    aggregate,
    answer_f1,
    approx_tokens,
    bleu1,
    context_tokens,
    covered_sessions,
    covered_turns,
    latency_stats,
    normalise_evidence,
    normalize_answer,
    percentile,
    recall_all,
    recall_frac,
    session_recall,
    turns_covered_at_k,
)
from benchmarks.systems import reciprocal_rank_fusion
from tests.benchmarks.fixtures.bench_fakes import unit

NS = ("c1",)
KNOWN = {"D1:1", "D1:2", "D1:3", "D8:6", "D9:17", "D11:26", "D30:5", "D4:4", "D4:6", "D9:1"}
REAL_LOCOMO = Path("/work/shared/data/locomo/locomo10.json")


@pytest.mark.parametrize(
    ("raw", "resolved", "unresolved"),
    [
        (["D1:1"], ["D1:1"], []),
        (["D30:05"], ["D30:5"], []),  # leading zero
        (["D8:6; D9:17"], ["D8:6", "D9:17"], []),  # two ids, semicolon
        (["D9:1 D4:4 D4:6"], ["D9:1", "D4:4", "D4:6"], []),  # space separated
        (["D1:1, D1:2"], ["D1:1", "D1:2"], []),  # comma separated
        (["  D1:3  "], ["D1:3"], []),  # whitespace
        (["D:11:26"], ["D11:26"], []),  # stray colon
        (["D"], [], ["D"]),  # bare prefix
        (["D7:4"], [], ["D7:4"]),  # well formed but not in the conversation
        (["D1:1", "D01:01", "D1:1"], ["D1:1"], []),  # duplicates collapse
        ("D1:2", ["D1:2"], []),  # a single string
        ([], [], []),
        (None, [], []),
        (["", "  "], [], []),
    ],
)
def test_normalise_evidence(raw, resolved, unresolved):
    assert normalise_evidence(raw, KNOWN) == (resolved, unresolved)


def test_normalise_without_known_ids_keeps_well_formed_ids():
    assert normalise_evidence(["D7:04", "D", "x"]) == (["D7:4"], ["D", "x"])


def test_normalise_keeps_known_non_locomo_ids():
    known = {"answer_s1:0", "answer_s1:1"}
    assert normalise_evidence(["answer_s1:1", "answer_s2:0"], known) == (
        ["answer_s1:1"], ["answer_s2:0"])


def test_covered_turns_uses_provenance_of_multi_turn_units():
    units = [unit(NS, "a", ["D1:1"]), unit(NS, "b", ["D1:2", "D1:3"], session_id="s2")]
    assert covered_turns(units) == {"D1:1", "D1:2", "D1:3"}
    assert covered_sessions(units) == {"s1", "s2"}
    assert turns_covered_at_k(units, 1) == {"D1:1"}
    assert turns_covered_at_k(units, 5) == {"D1:1", "D1:2", "D1:3"}
    with pytest.raises(ValueError, match="k must be"):
        turns_covered_at_k(units, 0)


def test_recall_all_versus_frac():
    evidence = ["D1:1", "D1:2", "D2:1"]
    assert recall_all(evidence, {"D1:1", "D1:2", "D2:1", "D9:9"}) == 1.0
    assert recall_all(evidence, {"D1:1", "D1:2"}) == 0.0
    assert recall_frac(evidence, {"D1:1", "D1:2"}) == pytest.approx(2 / 3)
    assert recall_frac(evidence, set()) == 0.0
    with pytest.raises(ValueError, match="evidence is empty"):
        recall_all([], {"D1:1"})
    with pytest.raises(ValueError, match="evidence is empty"):
        recall_frac([], {"D1:1"})


def test_k_prefixes_only_count_the_top_k_units():
    # evidence D1:1 + D2:1; the multi-turn unit at rank 3 brings D2:1
    units = [
        unit(NS, "a", ["D1:1"]),
        unit(NS, "b", ["D1:5"]),
        unit(NS, "c", ["D2:1", "D2:2"]),
    ]
    evidence = ["D1:1", "D2:1"]
    got = {k: (recall_all(evidence, turns_covered_at_k(units, k)),
               recall_frac(evidence, turns_covered_at_k(units, k))) for k in (1, 2, 3, 10)}
    assert got == {1: (0.0, 0.5), 2: (0.0, 0.5), 3: (1.0, 1.0), 10: (1.0, 1.0)}


def test_session_recall():
    units = [unit(NS, "a", ["s1:0"], session_id="s1"), unit(NS, "b", ["s3:0"], session_id="s3")]
    assert session_recall(["s1", "s3"], units, 1) == (0.0, 0.5)
    assert session_recall(["s1", "s3"], units, 2) == (1.0, 1.0)


def test_context_tokens_rule():
    assert approx_tokens("") == 0
    assert approx_tokens("one two three") == 4  # ceil(3 * 1.3)
    units = [unit(NS, "one two three", ["D1:1"]), unit(NS, "four five", ["D1:2"])]
    assert context_tokens(units, 1) == 4
    assert context_tokens(units, 2) == 4 + 3  # ceil(2 * 1.3) = 3


def test_latency_stats_and_percentile():
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([0.0, 10.0], 95) == pytest.approx(9.5)
    stats = latency_stats([1.0, 2.0, 3.0, 4.0])
    assert stats["p50"] == 2.5 and stats["mean"] == 2.5
    assert stats["p95"] == pytest.approx(3.85)
    assert latency_stats([]) == {"p50": None, "p95": None, "mean": None}
    with pytest.raises(ValueError, match="empty"):
        percentile([], 50)
    with pytest.raises(ValueError, match="q must be"):
        percentile([1.0], 101)


def test_aggregate_groups_means_counters_and_none():
    records = [
        {"_cat": 1, "n_evaluated": 1, "recall_all@5": 1.0},
        {"_cat": 1, "n_evaluated": 1, "recall_all@5": 0.0},
        {"_cat": 1, "n_evaluated": 0, "recall_all@5": None},
        {"_cat": 5, "n_evaluated": 1, "recall_all@5": 1.0},
    ]
    out = aggregate(records, {
        "one": lambda r: r["_cat"] == 1,
        "five": lambda r: r["_cat"] == 5,
        "empty": lambda r: False,
    })
    assert out["one"] == {"n": 3, "n_evaluated": 2, "recall_all@5": 0.5}
    assert out["five"] == {"n": 1, "n_evaluated": 1, "recall_all@5": 1.0}
    assert out["empty"] == {"n": 0}


def test_answer_normalisation_f1_and_bleu1():
    assert normalize_answer("The  Harbor-Grill, in Lisbon!") == "harbor grill in lisbon"
    assert answer_f1("Lisbon", "lisbon.") == 1.0
    assert answer_f1("in Lisbon, Portugal", "Lisbon") == pytest.approx(0.5)
    assert answer_f1("Porto", "Lisbon") == 0.0
    assert answer_f1(2023, "2023") == 1.0
    # BLEU-1: precision 1/1 but brevity penalty exp(1 - 2/1)
    assert bleu1("Lisbon", "Lisbon Portugal") == pytest.approx(math.exp(-1))
    assert bleu1("in Lisbon Portugal", "Lisbon Portugal") == pytest.approx(2 / 3)
    assert bleu1("", "x") == 0.0


def test_reciprocal_rank_fusion():
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "d"]], k=60)
    assert [uid for uid, _ in fused] == ["b", "a", "d", "c"]
    assert fused[0][1] == pytest.approx(1 / 62 + 1 / 61)
    # ties keep first-seen order; duplicates inside one list count once
    assert [u for u, _ in reciprocal_rank_fusion([["x", "x"], ["y"]])] == ["x", "y"]
    with pytest.raises(ValueError, match="RRF k"):
        reciprocal_rank_fusion([["a"]], k=-1)


@pytest.mark.skipif(not REAL_LOCOMO.is_file(), reason="LoCoMo file not available")
def test_real_locomo_evidence_forms():
    data = json.loads(REAL_LOCOMO.read_text(encoding="utf-8"))
    malformed, unresolved, empty = set(), [], 0
    for record in data:
        known = {t["dia_id"] for key, turns in record["conversation"].items()
                 if re.fullmatch(r"session_\d+", key) for t in turns}
        for qa in record["qa"]:
            malformed.update(e for e in qa["evidence"] if not re.fullmatch(r"D\d+:\d+", e))
            resolved, missing = normalise_evidence(qa["evidence"], known)
            unresolved.extend((record["sample_id"], m) for m in missing)
            empty += not resolved
    assert malformed == {
        "D8:6; D9:17", "D", "D:11:26", "D9:1 D4:4 D4:6",
        "D22:1 D22:2 D9:10 D9:11", "D21:18 D21:22 D11:15 D11:19",
    }
    assert sorted(unresolved) == [("conv-42", "D"), ("conv-42", "D10:19"), ("conv-47", "D4:36")]
    assert empty == 4
