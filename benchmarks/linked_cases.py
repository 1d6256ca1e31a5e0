"""The linked-evidence suite: questions whose evidence is reached through a shared name.

Each case has a question and 2-3 evidence turns. An *anchor* turn shares words
with the question, so a first hop can find it. Every other evidence turn is
*bridged*: it shares no lexical token with the question (the BM25 vocabulary of
:func:`~langchain_ripplemem.text.lexical.lexical_tokens`), only a bridge cue (a person,
place, organisation, named thing or topic phrase) with another evidence turn,
possibly two hops from the anchor. Distractor turns (the same cue in an
irrelevant turn, a similar story about someone else) go into the haystack too.

``{A}`` and ``{B}`` stand for the haystack's two speakers. They are left out of
the token comparison: every turn of a haystack is said by one of them, so their
names identify nothing. ``session`` is a turn's session counted from the
case's start session in the haystack (:mod:`~benchmarks.haystack`).

The suite ships as ``benchmarks/data/linked_cases.json``, split into ``tune`` and
``heldout`` per domain; :func:`case_problems` and :func:`suite_problems` state
its invariants, and :func:`load_linked_cases` refuses a file that breaks them.

Example:
    >>> cases = load_linked_cases()
    >>> len(cases) >= 40 and {c.domain for c in cases} == set(DOMAINS)
    True
    >>> case = cases[0]
    >>> [t.key for t in bridged_turns(case)] == [t.key for t in case.evidence if t.bridge]
    True
    >>> fill("{A} asked {B}", {"{A}": "Maya", "{B}": "Sam"})
    'Maya asked Sam'

"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchmarks.suite_cases import SPEAKERS, SPLITS, SuiteTurn, fill, load_suite, question_tokens
from langchain_ripplemem.schemas import Conversation

__all__ = [
    "DEFAULT_SUITE",
    "DEV_SUITE",
    "DOMAINS",
    "MIN_CASES",
    "MIN_PER_DOMAIN",
    "SPEAKERS",
    "SPLITS",
    "Bridge",
    "CaseTurn",
    "LinkedCase",
    "bridged_turns",
    "case_problems",
    "cue_pattern",
    "fill",
    "load_linked_cases",
    "question_tokens",
    "suite_problems",
]

DOMAINS: tuple[str, ...] = ("food_health", "travel", "work", "family", "money", "belongings", "plans")
MIN_CASES = 40
MIN_PER_DOMAIN = 6
DEFAULT_SUITE = Path(__file__).parent / "data" / "linked_cases.json"
# Cases written after the splits were fixed, to look for failure modes (every one is looked at: "tune").
DEV_SUITE = Path(__file__).parent / "data" / "linked_dev_cases.json"

Kind = Literal["person", "place", "organisation", "venue", "product", "pet", "thing", "topic"]


class Bridge(BaseModel):
    """How a bridged turn is reached: the cue it shares with evidence turn ``source``."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    source: str = Field(alias="from", min_length=1, description="key of the evidence turn it is reached from")
    cue: str = Field(min_length=1, description="the shared string, in both turns' text")
    kind: Kind


class CaseTurn(SuiteTurn):
    """One turn to inject: evidence (with a ``key``, and a ``bridge`` when bridged) or a distractor."""

    bridge: Bridge | None = None


class LinkedCase(BaseModel):
    """A question, its evidence turns (anchors and bridged ones) and distractors."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(pattern=r"^[a-z]+-\d\d$")
    domain: Literal["food_health", "travel", "work", "family", "money", "belongings", "plans"]
    split: Literal["tune", "heldout"]
    question: str = Field(min_length=1)
    evidence: tuple[CaseTurn, ...] = Field(min_length=2, max_length=3)
    distractors: tuple[CaseTurn, ...] = ()
    note: str = ""

    @model_validator(mode="after")
    def _keys_and_bridges(self) -> LinkedCase:
        keys = [turn.key for turn in self.evidence]
        if None in keys or len(set(keys)) != len(keys):
            raise ValueError(f"case {self.id}: every evidence turn needs its own key, got {keys}")
        for turn in self.evidence:
            if turn.bridge is not None and turn.bridge.source not in keys:
                raise ValueError(f"case {self.id}: turn {turn.key!r} bridges from unknown key {turn.bridge.source!r}")
        if any(turn.bridge is not None or turn.key is not None for turn in self.distractors):
            raise ValueError(f"case {self.id}: distractors take neither a key nor a bridge")
        return self

    def turn(self, key: str) -> CaseTurn:
        """The evidence turn called ``key``."""
        return next(t for t in self.evidence if t.key == key)

    @property
    def category(self) -> str:
        """The reporting category: the domain."""
        return self.domain

    @property
    def category_number(self) -> int:
        """1-based index of the domain in :data:`DOMAINS`."""
        return DOMAINS.index(self.domain) + 1

    @property
    def gold_answer(self) -> None:
        """The suite scores retrieval only: no answer is written."""
        return None

    def injected_extra(self, ids: Mapping[str, str], haystack: Conversation) -> dict[str, Any]:
        """Which injected turn ids are bridged, and how many ``haystack`` turns already say each cue."""
        cues = {t.bridge.cue for t in self.evidence if t.bridge is not None}
        return {
            "bridged": [ids[t.key] for t in self.evidence if t.key is not None and t.bridge is not None],
            "cue_turns_in_haystack": {cue: _count_cue(haystack, cue) for cue in sorted(cues)},
        }


def cue_pattern(cue: str) -> re.Pattern[str]:
    """Case-insensitive whole-word pattern of a bridge cue."""
    return re.compile(r"(?<!\w)" + re.escape(cue) + r"(?!\w)", re.IGNORECASE)


def bridged_turns(case: LinkedCase) -> list[CaseTurn]:
    """The evidence turns reached only through a bridge."""
    return [turn for turn in case.evidence if turn.bridge is not None]


def case_problems(case: LinkedCase) -> list[str]:
    """What breaks the suite's rules in one case (empty when it is sound).

    * an anchor (a turn without a bridge) shares at least one token with the question;
    * a bridged turn shares none, and its cue is in its own text and in the
      text of the turn it bridges from, but not in the question;
    * following bridges back from any bridged turn reaches an anchor;
    * at least one turn is bridged, and no two evidence turns share a session.
    """
    problems: list[str] = []
    asked = question_tokens(case.question)
    for turn in case.evidence:
        shared = asked & question_tokens(turn.text)
        if turn.bridge is None:
            if not shared:
                problems.append(f"{case.id}/{turn.key}: anchor shares no token with the question")
            continue
        if shared:
            problems.append(f"{case.id}/{turn.key}: bridged turn shares {sorted(shared)} with the question")
        pattern = cue_pattern(turn.bridge.cue)
        if not question_tokens(turn.bridge.cue):
            problems.append(f"{case.id}/{turn.key}: cue {turn.bridge.cue!r} has no lexical token")
        for where, text in ((turn.key, turn.text), (turn.bridge.source, case.turn(turn.bridge.source).text)):
            if not pattern.search(text):
                problems.append(f"{case.id}/{turn.key}: cue {turn.bridge.cue!r} is not in turn {where!r}")
        if pattern.search(case.question):
            problems.append(f"{case.id}/{turn.key}: cue {turn.bridge.cue!r} is in the question")
        if not _reaches_anchor(case, turn):
            problems.append(f"{case.id}/{turn.key}: its bridges never reach an anchor")
    if not bridged_turns(case):
        problems.append(f"{case.id}: no evidence turn is bridged")
    sessions = [turn.session for turn in case.evidence]
    if len(set(sessions)) != len(sessions):
        problems.append(f"{case.id}: evidence turns share a session ({sessions})")
    return problems


def suite_problems(cases: Sequence[LinkedCase], *, shape: bool = True) -> list[str]:
    """What breaks the suite: each case's rules, unique ids and, with ``shape``, its size and split.

    The shape is: at least :data:`MIN_CASES` cases, :data:`MIN_PER_DOMAIN` per
    domain, and per domain a held-out part of a third of its cases rounded either way.
    """
    problems = [p for case in cases for p in case_problems(case)]
    ids = Counter(case.id for case in cases)
    problems += [f"case id {cid!r} is used {n} times" for cid, n in ids.items() if n > 1]
    if not shape:
        return problems
    if len(cases) < MIN_CASES:
        problems.append(f"{len(cases)} cases, expected at least {MIN_CASES}")
    for domain in DOMAINS:
        members = [case for case in cases if case.domain == domain]
        if len(members) < MIN_PER_DOMAIN:
            problems.append(f"domain {domain}: {len(members)} cases, expected at least {MIN_PER_DOMAIN}")
        heldout = sum(case.split == "heldout" for case in members)
        if not len(members) // 3 <= heldout <= -(-len(members) // 3):
            problems.append(f"domain {domain}: {heldout} of {len(members)} cases held out, expected about a third")
    return problems


def load_linked_cases(path: str | Path | None = None, split: str = "all", *, check: bool = True) -> list[LinkedCase]:
    """Load the suite (default: the shipped one), optionally one split of it.

    Args:
        path: a suite JSON file (``{"cases": [...]}``); default :data:`DEFAULT_SUITE`.
        split: ``"tune"``, ``"heldout"`` or ``"all"``.
        check: refuse a suite that breaks :func:`suite_problems` (checked on the whole file,
            before the split is taken; a custom file is held to each case's rules, not to the
            shipped suite's size and split).

    Raises:
        ValueError: naming the file and what is wrong with it, or a bad ``split``.

    """
    file = Path(path) if path is not None else DEFAULT_SUITE
    rules = (lambda cases: suite_problems(cases, shape=path is None)) if check else None
    return load_suite(file, LinkedCase, "linked suite", rules, split)


def _reaches_anchor(case: LinkedCase, turn: CaseTurn) -> bool:
    seen: set[str | None] = set()
    while turn.bridge is not None:
        if turn.key in seen:
            return False
        seen.add(turn.key)
        turn = case.turn(turn.bridge.source)
    return True


def _count_cue(conversation: Conversation, cue: str) -> int:
    pattern = cue_pattern(cue)
    return sum(1 for _, turn in conversation.turns() if pattern.search(turn.text))
