"""The small-memory suite: each case a memory of its own, 14-22 turns, no haystack (issue 36).

Every user's memory starts small. A case (``benchmarks/data/small_memory_cases.json``,
written by ``benchmarks/small_memory_source.py``) is a few sessions of small talk
holding an *option* turn, which the question names ("Can Ben eat at the Thai place
Ana recommended?"), and a *constraint* turn said in another session ("My doctor told
me I'm allergic to peanuts"), which shares a rare word or name with the option turn
and little with the question. Both are needed (``recall_all``). The split is fixed in
the file; :func:`small_memory_problems` states the rules the loader holds it to.

Example:
    >>> cases = load_small_memory_cases()
    >>> len(cases) >= MIN_CASES, {c.split for c in cases} == {"tune", "heldout"}
    (True, True)
    >>> bench = small_memory_conversations(cases[:1])[0]
    >>> bench.questions[0].evidence == [f"{cases[0].id}:option", f"{cases[0].id}:constraint"]
    True

"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from benchmarks.cached_embeddings import CachedEmbeddings
from benchmarks.loaders import BenchConversation, BenchQuestion
from benchmarks.own_memories import run_own_memories
from benchmarks.runner import DEFAULT_KS
from benchmarks.suite_cases import question_tokens
from langchain_ripplemem.schemas import Conversation

__all__ = ["DEFAULT_SUITE", "HELDOUT_SHARE", "KINDS", "MIN_CASES", "SmallCase", "SmallSession", "SmallTurn",
           "case_conversation",
           "load_small_memory_cases",
           "run_small_memory", "small_case_row", "small_memory_conversations", "small_memory_problems"]

DEFAULT_SUITE = Path(__file__).parent / "data" / "small_memory_cases.json"
KINDS = ("diet", "pets", "cars", "places", "people", "jobs", "health", "travel", "gifts")
MIN_CASES = 30
HELDOUT_SHARE = Fraction(2, 5)
#: The constraint turn shares at most this many lexical tokens with the question: its words do not find it.
MAX_CONSTRAINT_OVERLAP = 1


class SmallTurn(BaseModel):
    """One turn of a case; the evidence turns carry a ``key``."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    speaker: str = Field(min_length=1)
    text: str = Field(min_length=1)
    key: str | None = None


class SmallSession(BaseModel):
    """A session: its time and turns."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    time: str
    turns: tuple[SmallTurn, ...] = Field(min_length=1)


class SmallCase(BaseModel):
    """One small memory and the question asked of it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str = Field(pattern=r"^[a-z]+-\d\d$")
    kind: Literal["diet", "pets", "cars", "places", "people", "jobs", "health", "travel", "gifts"]
    split: Literal["tune", "heldout"]
    speakers: tuple[str, str]
    question: str = Field(min_length=1)
    evidence: tuple[str, ...] = Field(min_length=2)
    sessions: tuple[SmallSession, ...] = Field(min_length=2, max_length=6)

    def turn(self, key: str) -> SmallTurn:
        """The evidence turn called ``key``."""
        return next(t for s in self.sessions for t in s.turns if t.key == key)


def small_memory_problems(cases: Sequence[SmallCase]) -> list[str]:
    """What breaks the suite's rules (empty when sound).

    Per case: 10-40 turns, each evidence key on exactly one turn, the evidence in different
    sessions, the constraint sharing at most :data:`MAX_CONSTRAINT_OVERLAP` tokens with the
    question and at least one with the option turn. Over the suite: unique ids, at least
    :data:`MIN_CASES` cases, and a held-out share within one case of :data:`HELDOUT_SHARE`.
    """
    problems = []
    for case in cases:
        turns = [(n, t) for n, s in enumerate(case.sessions) for t in s.turns]
        if not 10 <= len(turns) <= 40:
            problems.append(f"{case.id}: {len(turns)} turns, expected 10-40")
        keys = Counter(t.key for _, t in turns if t.key)
        for key in case.evidence:
            if keys[key] != 1:
                problems.append(f"{case.id}: evidence {key!r} is on {keys[key]} turns, expected 1")
        if problems:
            continue
        where = {t.key: n for n, t in turns if t.key}
        if len({where[k] for k in case.evidence}) != len(case.evidence):
            problems.append(f"{case.id}: evidence turns share a session")
        if "constraint" in case.evidence and "option" in case.evidence:
            said = question_tokens(case.turn("constraint").text)
            if len(said & question_tokens(case.question)) > MAX_CONSTRAINT_OVERLAP:
                problems.append(f"{case.id}: the constraint shares {sorted(said & question_tokens(case.question))} "
                                "with the question")
            if not said & question_tokens(case.turn("option").text):
                problems.append(f"{case.id}: the constraint shares no word with the option turn")
    ids = Counter(c.id for c in cases)
    problems += [f"case id {i!r} is used {n} times" for i, n in ids.items() if n > 1]
    if len(cases) < MIN_CASES:
        problems.append(f"{len(cases)} cases, expected at least {MIN_CASES}")
    held = sum(c.split == "heldout" for c in cases)
    if abs(held - HELDOUT_SHARE * len(cases)) > 1:
        problems.append(f"{held} of {len(cases)} cases held out, expected two fifths")
    return problems


def load_small_memory_cases(path: str | Path | None = None, split: str = "all") -> list[SmallCase]:
    """The suite's cases (default: the shipped file), optionally one split.

    Raises:
        ValueError: on an unknown ``split``, or naming the file and what breaks its rules.
    """
    if split not in ("tune", "heldout", "all"):
        raise ValueError(f"split must be 'tune', 'heldout' or 'all', got {split!r}")
    file = Path(path) if path is not None else DEFAULT_SUITE
    try:
        cases = [SmallCase.model_validate(c) for c in json.loads(file.read_text(encoding="utf-8"))["cases"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{file}: not a small-memory suite ({exc})") from exc
    problems = small_memory_problems(cases) if path is None else \
        [p for p in small_memory_problems(cases) if "expected at least" not in p and "held out" not in p]
    if problems:
        raise ValueError(f"{file}: " + "; ".join(problems))
    return [c for c in cases if split in ("all", c.split)]


def small_memory_conversations(cases: Sequence[SmallCase]) -> list[BenchConversation]:
    """One conversation per case (its own namespace when run), with its one question."""
    out = []
    for case in cases:
        conversation = case_conversation(case.id, case.sessions)
        question = BenchQuestion(
            id=case.id, question=case.question, answer=None, category=KINDS.index(case.kind) + 1,
            category_name=case.kind, evidence=[f"{case.id}:{key}" for key in case.evidence])
        out.append(BenchConversation(conversation=conversation, questions=[question], dataset="small",
                                     split=case.split))
    return out


def case_conversation(case_id: str, sessions: Sequence[SmallSession]) -> Conversation:
    """A case's conversation: sessions ``S1``, ``S2``, ...; turns by key (``<case>:<key>``) or place.

    A turn without a key is ``<case>:S<session>:<turn>``: the suites' evidence names turns by key.
    """
    return Conversation.model_validate({"id": case_id, "sessions": [
        {"id": f"S{n}", "time": session.time, "turns": [
            {"id": f"{case_id}:{t.key}" if t.key else f"{case_id}:S{n}:{i}", "speaker": t.speaker, "text": t.text}
            for i, t in enumerate(session.turns, 1)]}
        for n, session in enumerate(sessions, 1)]})


def small_case_row(case: SmallCase, bench: BenchConversation) -> dict[str, Any]:
    """The case's row in the results: kind, split, question, evidence ids and the evidence texts."""
    return {"id": case.id, "kind": case.kind, "split": case.split, "question": case.question,
            "evidence": bench.questions[0].evidence, "turns": sum(len(s.turns) for s in case.sessions),
            "answers": [case.turn(k).text for k in case.evidence]}


def run_small_memory(cases: Sequence[SmallCase], systems: Sequence[str], ks: Sequence[int] = DEFAULT_KS, *,
                     progress: bool = True, embeddings: CachedEmbeddings | None = None,
                     suite_path: str | Path | None = None, split: str = "all") -> dict[str, Any]:
    """Benchmark ``systems`` on ``cases``, each case ingested into its own fresh namespace; the results dict.

    Raises:
        ValueError: on no cases, or the runner's own argument errors.
    """
    conversations = small_memory_conversations(cases)
    results = run_own_memories("small", conversations, systems, ks, default_suite=DEFAULT_SUITE,
                               suite_path=suite_path, split=split, progress=progress, embeddings=embeddings,
                               haystack="none: each case is a memory of its own")
    results["cases"] = [small_case_row(case, bench) for case, bench in zip(cases, conversations, strict=True)]
    return results
