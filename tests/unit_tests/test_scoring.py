import math
from datetime import datetime, timedelta, timezone

import pytest

from langchain_ripplemem.config import LinkingConfig, WriteConfig
from langchain_ripplemem.schemas import ExpansionTarget, TimeInterval
from langchain_ripplemem.text.cue_scores import jaccard, structural_score, time_similarity

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


def day(offset: float, length: float = 0.0) -> TimeInterval:
    return TimeInterval(start=T0 + timedelta(days=offset), end=T0 + timedelta(days=offset + length))


def cues(p=(), loc=(), t=None) -> ExpansionTarget:
    return ExpansionTarget(restatement="x", participants=list(p), locations=list(loc), time=t)


def test_jaccard_is_case_insensitive_and_zero_for_empty():
    assert jaccard(["Maya", "Sam"], ["maya", "Priya"]) == pytest.approx(1 / 3)
    assert jaccard([], ["maya"]) == 0.0


def test_time_similarity_overlap_and_decay():
    assert time_similarity(day(0, 2), day(1, 3)) == 1.0  # intervals intersect
    assert time_similarity(day(0), day(0)) == 1.0
    assert time_similarity(day(0), day(7)) == pytest.approx(math.exp(-1))
    assert time_similarity(day(0), day(14)) == pytest.approx(math.exp(-2))
    # gap is measured between the nearest ends
    assert time_similarity(day(0, 3), day(10)) == pytest.approx(math.exp(-1))
    with pytest.raises(ValueError, match="tau_days"):
        time_similarity(day(0), day(1), tau_days=0)


def test_structural_score_all_cues_hand_computed():
    a = cues(["Maya", "Sam"], ["Portland"], day(0))
    b = cues(["Maya"], ["Portland", "Harbor Grill"], day(7))
    expected = (0.5 * 0.5 + 0.2 * 0.5 + 0.3 * math.exp(-1)) / 1.0
    assert structural_score(a, b, LinkingConfig()) == pytest.approx(expected)


def test_structural_score_renormalises_over_shared_cue_types():
    # b has no location: only P and T count, weights renormalised by 0.8.
    a = cues(["Maya"], ["Portland"], day(0))
    b = cues(["Maya", "Sam"], [], day(14))
    expected = (0.5 * 0.5 + 0.3 * math.exp(-2)) / 0.8
    assert structural_score(a, b, LinkingConfig()) == pytest.approx(expected)
    # only time in common
    assert structural_score(cues(t=day(0)), cues(["Sam"], t=day(0)), LinkingConfig()) == pytest.approx(1.0)


def test_no_comparable_cue_type_gives_none_not_zero():
    assert structural_score(cues(["Maya"]), cues(loc=["Lisbon"]), LinkingConfig()) is None
    assert structural_score(cues(), cues(), LinkingConfig()) is None
    # comparable but disjoint is a real zero
    assert structural_score(cues(["Maya"]), cues(["Sam"]), LinkingConfig()) == 0.0


def test_custom_betas_are_used(monkeypatch):
    from langchain_ripplemem.text import cue_scores

    for name, beta in (("BETA_PARTICIPANTS", 1.0), ("BETA_LOCATIONS", 0.0), ("BETA_TIME", 1.0)):
        monkeypatch.setattr(cue_scores, name, beta)
    a, b = cues(["Maya"], ["X"], day(0)), cues(["Maya"], ["Y"], day(7))
    assert structural_score(a, b, WriteConfig().linking) == pytest.approx((1.0 + math.exp(-1)) / 2)
