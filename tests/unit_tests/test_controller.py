"""The heuristic controller: missing support read off the evidence, and a plan that reuses its decision's work."""

from __future__ import annotations

import pytest

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.recall.controller import ControllerInput, HeuristicController
from langchain_ripplemem.schemas import Hit, QueryCues
from langchain_ripplemem.text.lexical import lexical_token_set, stem

from .test_bridging import index_of, unit

TEXTS = ["Maya is allergic to shellfish.", "Sam booked Harbor Grill for Friday.",
         "Harbor Grill is a seafood place by the pier.", "The hiking trip was rained out."]


def _input(query: str, evidence_rows: list[int], participants: tuple[str, ...] = (), **groups: dict[str, object]):
    units = [unit(i, names=["harbor grill"] if "Harbor" in t else (), text=t) for i, t in enumerate(TEXTS)]
    index = index_of(units)
    evidence = {units[i].id: [Hit(source="semantic", rank=r, score=0.8 - 0.1 * r)]
                for r, i in enumerate(evidence_rows)}
    return ControllerInput(query=query, cues=QueryCues(query=query, participants=list(participants)),
                           evidence=evidence, index=index, round=0, config=RecallConfig(**groups),
                           with_edges=set(evidence))


@pytest.mark.parametrize("rows", [[], [0], [1], [0, 1], [1, 2], [0, 1, 2, 3]])
def test_missing_terms_are_the_query_words_no_evidence_memory_says(rows):
    inp = _input("Is Maya allergic to the seafood Sam booked at the pier?", rows, participants=("maya",))
    said = set().union(*(lexical_token_set(TEXTS[i]) for i in rows))
    expected = [w for w in ["allergic", "seafood", "sam", "booked", "pier"] if stem(w) not in said]
    assert HeuristicController().missing_terms(inp) == expected


def test_a_query_word_no_memory_holds_is_not_missing_support_but_keeps_recall_going():
    # "accept" and "pick" are words of the question: no memory could supply them.
    controller = HeuristicController()
    inp = _input("Should Maya accept Sam's pick at the pier?", [1], participants=("maya",))
    assert controller.uncovered_terms(inp) == (["pier"], ["accept", "pick"])
    plan = controller.plan(inp, controller.decide(inp))
    assert plan["target"].keywords == ["pier"] and "accept" not in plan["target"].restatement.split("(")[-1]
    # Only words of the question left: not sufficient, and the reason says no memory holds them.
    asked = _input("Should Maya accept Sam's booking?", [1], participants=("maya",),
                   controller={"sufficiency_similarity": 0.5})
    decision = controller.decide(asked)
    assert decision["should_continue"] and decision["heuristic"].missing == []
    assert decision["reason"].startswith("no memory says accept")
    assert controller.plan(asked, decision)["target"].keywords == []


def test_a_plan_made_from_its_decision_equals_one_made_from_scratch():
    controller = HeuristicController()
    inp = _input("Should Maya accept Sam's dinner pick at the pier?", [1, 0])
    decision = controller.decide(inp)
    assert decision["should_continue"] and decision["heuristic"].missing
    # With support missing the decision needs no anchor ranking: the plan ranks them.
    assert decision["heuristic"].candidates is None
    reused, fresh = controller.plan(inp, decision), controller.plan(inp, {"reason": decision["reason"]})
    assert reused["anchors"] == fresh["anchors"] and reused["target"] == fresh["target"]
    # Work done on other evidence (another round) is not reused.
    later = ControllerInput(**{**inp.__dict__, "round": 1})
    assert controller.plan(later, decision)["anchors"] == controller.plan(later, {})["anchors"]


class _CountingController(HeuristicController):
    def __init__(self) -> None:
        self.ranked = 0

    def candidates(self, inp: ControllerInput) -> list[tuple[str, float, float]]:
        self.ranked += 1
        return super().candidates(inp)


def test_anchors_are_ranked_only_where_they_decide_or_plan():
    covered = _input("Sam booked Harbor Grill", [1, 2],
                     controller={"sufficiency_similarity": 0.99})
    controller = _CountingController()
    decision = controller.decide(covered)  # nothing missing: whether an anchor bridges decides
    assert not decision["heuristic"].missing and decision["heuristic"].candidates is not None
    controller.plan(covered, decision)
    assert controller.ranked == 1  # the plan reused the decision's ranking
    # After a round, bridging expands from what that round bridged to: no ranking of the evidence.
    later = ControllerInput(**{**_input("Is Maya allergic to seafood?", [1, 2],
                                        bridging={"weight": 0.75}).__dict__, "round": 1})
    controller.ranked = 0
    controller.plan(later, controller.decide(later))
    assert controller.ranked == 0


def test_anchors_read_the_support_passed_with_the_evidence_and_sum_it_when_it_is_missing_or_stale():
    from langchain_ripplemem.recall.evidence import supports

    inp = _input("Sam booked Harbor Grill", [0, 1, 2, 3])
    fresh = HeuristicController().candidates(inp)
    given = ControllerInput(**{**inp.__dict__, "support": supports(inp.evidence, inp.config)})
    assert HeuristicController().candidates(given) == fresh
    # The controller ranks by the support it is given: the nodes pass it on and never sum hits again.
    last = fresh[-1][0]
    boosted = ControllerInput(**{**inp.__dict__, "support": {**supports(inp.evidence, inp.config), last: 9.0}})
    assert HeuristicController().candidates(boosted)[0][0] == last
    # Support for other evidence (fewer memories) is not trusted: it is summed again.
    stale = ControllerInput(**{**inp.__dict__, "support": {last: 9.0}})
    assert HeuristicController().candidates(stale) == fresh
