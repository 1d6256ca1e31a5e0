"""The set and fact suites: memories unlike one another, and one-off remarks asked about directly.

**Set questions** (``benchmarks/data/set_cases.json``) ask for a set ("Which
instruments has {A} picked up?", "How many times did {A} ...") answered by *all*
its members: 2-4 one-off remarks by one person, each in its own session and its
own words, sharing little with the question and less with one another. Nothing
links them but what the question asks for, so no cue or bridge can carry recall
from one member to the next.

**Stand-alone facts** (``benchmarks/data/fact_cases.json``) ask about one remark said
once ("Where did {A} say her sister lives?"), beside distractors on the same
topic (the other speaker's sister, another detail of the same one).

Every evidence turn names its ``answer`` (the member or the fact, as said); every
distractor says what kind of lure it is: ``other_speaker`` (a like remark by the
other person) or ``near_miss`` (the same person, something planned, not done,
or another detail). Each suite is split ``tune``/``heldout`` per kind, two fifths
held out; :func:`set_case_problems`, :func:`fact_case_problems` and
:func:`suite_problems` state the invariants, and the loaders refuse a file that
breaks them.

Example:
    >>> sets, facts = load_set_cases(), load_fact_cases()
    >>> len(sets) >= MIN_CASES["sets"] and {c.kind for c in sets} == set(SET_KINDS)
    True
    >>> all(len(c.evidence) == 1 for c in facts) and {c.kind for c in facts} == set(FACT_KINDS)
    True

"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction
from itertools import combinations
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchmarks.loaders import BenchConversation
from benchmarks.suite_cases import (
    SPEAKERS,
    SuiteTurn,
    heldout_share_problem,
    load_suite,
    question_tokens,
)
from langchain_ripplemem.schemas import Conversation

__all__ = [
    "DEFAULT_SUITES",
    "FACT_KINDS",
    "HELDOUT_SHARE",
    "MAX_MEMBER_OVERLAP",
    "MAX_QUESTION_OVERLAP",
    "MIN_CASES",
    "MIN_PER_KIND",
    "SET_KINDS",
    "AnsweredCase",
    "Distractor",
    "FactCase",
    "Member",
    "SetCase",
    "answered_case_row",
    "case_problems",
    "fact_case_problems",
    "load_answered_cases",
    "load_fact_cases",
    "load_set_cases",
    "set_case_problems",
    "suite_problems",
]

SetKind = Literal["hobbies", "places", "purchases", "people", "health", "learning", "food", "home", "work",
                  "events"]
FactKind = Literal["family", "acquaintances", "places", "belongings", "pets", "numbers", "dates", "work"]
SET_KINDS: tuple[str, ...] = get_args(SetKind)
FACT_KINDS: tuple[str, ...] = get_args(FactKind)
DATA = Path(__file__).parent / "data"
DEFAULT_SUITES: dict[str, Path] = {"sets": DATA / "set_cases.json", "facts": DATA / "fact_cases.json"}
MIN_CASES: dict[str, int] = {"sets": 48, "facts": 40}
MIN_PER_KIND = 4
HELDOUT_SHARE = Fraction(2, 5)
#: A set member shares at most this many lexical tokens with the question: it is not found by its words.
MAX_QUESTION_OVERLAP = 1
#: Two members of a set share at most this many lexical tokens: each is said in its own words.
MAX_MEMBER_OVERLAP = 1
#: Two cases whose questions share this share of their tokens (Jaccard) are alike.
ALIKE_QUESTIONS = 0.6


class Member(SuiteTurn):
    """An evidence turn: a set's member, or the fact, with its ``answer`` as the turn says it."""

    key: str = Field(min_length=1)
    answer: str = Field(min_length=1, description="the member or the fact, a phrase of the turn's text")


class Distractor(SuiteTurn):
    """A turn that looks like evidence and is not."""

    lure: Literal["other_speaker", "near_miss"] = Field(
        description="other_speaker: a like remark by the other person; near_miss: the same person, "
                    "something not in the set (planned, not done) or another detail")


class AnsweredCase(BaseModel):
    """A question, the evidence turns that answer it, and 1-2 distractors."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(pattern=r"^[a-z]+-\d\d$")
    kind: str
    split: Literal["tune", "heldout"]
    question: str = Field(min_length=1)
    evidence: tuple[Member, ...]
    distractors: tuple[Distractor, ...] = Field(min_length=1, max_length=2)
    note: str = ""

    @model_validator(mode="after")
    def _unique_keys(self) -> AnsweredCase:
        keys = [turn.key for turn in self.evidence]
        if len(set(keys)) != len(keys):
            raise ValueError(f"case {self.id}: every evidence turn needs its own key, got {keys}")
        if any(turn.key is not None for turn in self.distractors):
            raise ValueError(f"case {self.id}: distractors take no key")
        return self

    @property
    def category(self) -> str:
        """The reporting category: the kind."""
        return self.kind

    @property
    def category_number(self) -> int:
        """1-based index of the kind in its suite's kinds."""
        return _kinds(self).index(self.kind) + 1

    @property
    def gold_answer(self) -> str:
        """The answers of the evidence turns, ``"; "``-separated."""
        return "; ".join(turn.answer for turn in self.evidence)

    def injected_extra(self, ids: Mapping[str, str], haystack: Conversation) -> dict[str, Any]:
        """Nothing beyond the haystack, the start session and the speakers."""
        return {}


class SetCase(AnsweredCase):
    """A set question: 2-4 members, one person's one-off remarks."""

    kind: SetKind
    evidence: tuple[Member, ...] = Field(min_length=2, max_length=4)


class FactCase(AnsweredCase):
    """A stand-alone fact: one remark, asked about directly."""

    kind: FactKind
    evidence: tuple[Member, ...] = Field(min_length=1, max_length=1)


def set_case_problems(case: SetCase) -> list[str]:
    """What breaks the set suite's rules in one case (empty when it is sound).

    * one person says every member, each in its own session;
    * a member shares at most :data:`MAX_QUESTION_OVERLAP` tokens with the question,
      and two members at most :data:`MAX_MEMBER_OVERLAP` with each other;
    * plus :func:`_answer_and_lure_problems`.
    """
    problems = _answer_and_lure_problems(case)
    if len({turn.speaker for turn in case.evidence}) != 1:
        problems.append(f"{case.id}: members are said by both speakers; a set is one person's")
    sessions = [turn.session for turn in case.evidence]
    if len(set(sessions)) != len(sessions):
        problems.append(f"{case.id}: members share a session ({sessions})")
    asked = question_tokens(case.question)
    for turn in case.evidence:
        shared = asked & question_tokens(turn.text)
        if len(shared) > MAX_QUESTION_OVERLAP:
            problems.append(f"{case.id}/{turn.key}: member shares {sorted(shared)} with the question "
                            f"(at most {MAX_QUESTION_OVERLAP})")
    for one, other in combinations(case.evidence, 2):
        shared = question_tokens(one.text) & question_tokens(other.text)
        if len(shared) > MAX_MEMBER_OVERLAP:
            problems.append(f"{case.id}/{one.key}+{other.key}: members share {sorted(shared)} "
                            f"(at most {MAX_MEMBER_OVERLAP})")
    return problems


def fact_case_problems(case: FactCase) -> list[str]:
    """What breaks the fact suite's rules in one case (empty when it is sound).

    * the fact shares at least one token with the question (it is asked about directly);
    * its answer is said once: in no distractor;
    * every distractor shares a token with the question or the fact (it looks alike);
    * plus :func:`_answer_and_lure_problems`.
    """
    problems = _answer_and_lure_problems(case)
    (fact,) = case.evidence
    asked, said = question_tokens(case.question), question_tokens(fact.text)
    if not asked & said:
        problems.append(f"{case.id}/{fact.key}: the fact shares no token with the question")
    for n, turn in enumerate(case.distractors, 1):
        if fact.answer.lower() in turn.text.lower():
            problems.append(f"{case.id}/distractor {n}: says the answer {fact.answer!r}; a fact is said once")
        if not (asked | said) & question_tokens(turn.text):
            problems.append(f"{case.id}/distractor {n}: shares no token with the question or the fact")
    return problems


def case_problems(case: AnsweredCase) -> list[str]:
    """What breaks its suite's rules in one case: :func:`set_case_problems` or :func:`fact_case_problems`."""
    if isinstance(case, SetCase):
        return set_case_problems(case)
    if isinstance(case, FactCase):
        return fact_case_problems(case)
    raise ValueError(f"case {case.id}: a {type(case).__name__} is neither a SetCase nor a FactCase")


def _answer_and_lure_problems(case: AnsweredCase) -> list[str]:
    """Both suites' rules: answers, lures and distinct turns.

    * each evidence turn's answer is in its text and not in the question, and no two are the same;
    * an ``other_speaker`` lure is said by the other person than the evidence, a ``near_miss``
      by the same person;
    * no turn's text is another's.
    """
    problems: list[str] = []
    for turn in case.evidence:
        if turn.answer.lower() not in turn.text.lower():
            problems.append(f"{case.id}/{turn.key}: answer {turn.answer!r} is not in its text")
        if turn.answer.lower() in case.question.lower():
            problems.append(f"{case.id}/{turn.key}: answer {turn.answer!r} is in the question")
    answers = [turn.answer.lower() for turn in case.evidence]
    if len(set(answers)) != len(answers):
        problems.append(f"{case.id}: two evidence turns have the same answer ({answers})")
    speaker = case.evidence[0].speaker
    other = next(s for s in SPEAKERS if s != speaker)
    for n, lure in enumerate(case.distractors, 1):
        expected = other if lure.lure == "other_speaker" else speaker
        if lure.speaker != expected:
            problems.append(f"{case.id}/distractor {n}: a {lure.lure} lure is said by {expected}, not {lure.speaker}")
    texts = [turn.text for turn in (*case.evidence, *case.distractors)]
    if len(set(texts)) != len(texts):
        problems.append(f"{case.id}: two turns have the same text")
    return problems


def suite_problems(suite: str, cases: Sequence[AnsweredCase], *, shape: bool = True) -> list[str]:
    """What breaks suite ``suite`` (``"sets"``, ``"facts"``): each case's rules, no two cases alike, and its shape.

    No two cases alike: ids unique, no turn text in two cases, and no two questions
    sharing :data:`ALIKE_QUESTIONS` of their tokens. The shape (``shape``, the shipped
    file): at least :data:`MIN_CASES` cases, :data:`MIN_PER_KIND` per kind, and per kind a
    held-out part of :data:`HELDOUT_SHARE` of its cases rounded either way.
    """
    problems = [p for case in cases for p in case_problems(case)]
    ids = Counter(case.id for case in cases)
    problems += [f"case id {cid!r} is used {n} times" for cid, n in ids.items() if n > 1]
    owner: dict[str, str] = {}
    for case in cases:
        for turn in (*case.evidence, *case.distractors):
            first = owner.setdefault(turn.text, case.id)
            if first != case.id:
                problems.append(f"{case.id}: turn {turn.text!r} is also in case {first}")
    for one, other in combinations(cases, 2):
        a, b = question_tokens(one.question), question_tokens(other.question)
        if a and b and len(a & b) / len(a | b) >= ALIKE_QUESTIONS:
            problems.append(f"{other.id}: its question is alike {one.id}'s ({sorted(a & b)})")
    if not shape:
        return problems
    if len(cases) < MIN_CASES[suite]:
        problems.append(f"{len(cases)} cases, expected at least {MIN_CASES[suite]}")
    for kind in SET_KINDS if suite == "sets" else FACT_KINDS:
        members = [case for case in cases if case.kind == kind]
        if len(members) < MIN_PER_KIND:
            problems.append(f"kind {kind}: {len(members)} cases, expected at least {MIN_PER_KIND}")
        held = heldout_share_problem(f"kind {kind}", len(members), sum(c.split == "heldout" for c in members),
                                     HELDOUT_SHARE, "two fifths")
        problems += [held] if held else []
    return problems


def load_answered_cases(
    suite: str, path: str | Path | None = None, split: str = "all", *, check: bool = True
) -> list[AnsweredCase]:
    """Load suite ``suite`` (``"sets"`` or ``"facts"``; default: the shipped file), optionally one split.

    Args:
        suite: ``"sets"`` or ``"facts"``.
        path: a suite JSON file (``{"cases": [...]}``); default :data:`DEFAULT_SUITES`.
        split: ``"tune"``, ``"heldout"`` or ``"all"``.
        check: refuse a suite that breaks :func:`suite_problems` (on the whole file, before the
            split is taken; a custom file is held to the case rules, not the shipped suite's shape).

    Raises:
        ValueError: on an unknown ``suite`` or ``split``, or naming the file and what is wrong with it.

    """
    if suite not in DEFAULT_SUITES:
        raise ValueError(f"suite must be one of {sorted(DEFAULT_SUITES)}, got {suite!r}")
    file = Path(path) if path is not None else DEFAULT_SUITES[suite]
    model: type[AnsweredCase] = SetCase if suite == "sets" else FactCase
    rules = (lambda cases: suite_problems(suite, cases, shape=path is None)) if check else None
    return load_suite(file, model, f"{suite} suite", rules, split)


def load_set_cases(path: str | Path | None = None, split: str = "all", *, check: bool = True) -> list[AnsweredCase]:
    """The set suite (:func:`load_answered_cases` with ``"sets"``)."""
    return load_answered_cases("sets", path, split, check=check)


def load_fact_cases(path: str | Path | None = None, split: str = "all", *, check: bool = True) -> list[AnsweredCase]:
    """The fact suite (:func:`load_answered_cases` with ``"facts"``)."""
    return load_answered_cases("facts", path, split, check=check)


def answered_case_row(case: AnsweredCase, bench: BenchConversation) -> dict[str, Any]:
    """The case's row in the results: its kind, split, filled question, evidence ids, answers and lures."""
    question = bench.questions[0]
    return {
        "id": case.id, "kind": case.kind, "split": case.split, "question": question.question,
        "evidence": question.evidence, **question.extra,
        "answers": [turn.answer for turn in case.evidence],
        "lures": [turn.lure for turn in case.distractors],
    }


def _kinds(case: AnsweredCase) -> tuple[str, ...]:
    return SET_KINDS if isinstance(case, SetCase) else FACT_KINDS
