"""The update suite: knowledge updates, each case a memory of its own (issue 52).

A case (``benchmarks/data/update_cases.json``, written by ``benchmarks/update_source.py``) is four
sessions of small talk. In an *update* case one person states something about
themselves (``old``) and, 40-100 days later, changes it (``new``); in a *kept* case the
later statement (``second``) leaves the first standing: a second pet, job or phone,
another person's change, a statement on another subject that shares words with it.

Every question names the statement it needs (``evidence``) and, for an update, the one
it must rank above (``outranks``, :attr:`~.loaders.BenchQuestion.outranks`): about now,
the newer above the older; about the past, or ``as_of`` a day between the two, the
older above the newer. Its category is that role (``now``, ``past``, ``as_of``,
``kept``). :func:`detection_rows` checks the write side: an update's older statement
superseded by its newer one, and neither statement of a kept case superseded.

Example:
    >>> cases = load_update_cases()
    >>> len(cases) >= MIN_CASES, {c.split for c in cases} == {"tune", "heldout"}
    (True, True)
    >>> bench = update_conversations(cases[:1])[0]
    >>> [(q.category_name, q.evidence, q.outranks) for q in bench.questions][0]
    ('now', ['home-01:new'], ['home-01:old'])

"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from benchmarks.cached_embeddings import CachedEmbeddings
from benchmarks.loaders import BenchConversation, BenchQuestion
from benchmarks.own_memories import run_own_memories
from benchmarks.runner import DEFAULT_KS, FreshMemories
from benchmarks.small_memory import SmallSession, SmallTurn, case_conversation
from benchmarks.suite_cases import load_suite
from langchain_ripplemem.index.marks import SUPERSEDED_BY

__all__ = ["DEFAULT_SUITE", "MIN_CASES", "MIN_KINDS", "ROLES", "UpdateCase", "case_problems", "detection_rows",
           "detection_summary", "load_update_cases", "run_updates", "update_case_row", "update_conversations",
           "update_problems", "updates_markdown"]

DEFAULT_SUITE = Path(__file__).parent / "data" / "update_cases.json"
#: The questions' roles, the suite's reporting categories in this order.
ROLES = ("now", "past", "as_of", "kept")
MIN_CASES = 40
MIN_KINDS = 8
HELDOUT_SHARE = Fraction(2, 5)
#: An update's two statements are at least this many days apart (a change, not a correction).
MIN_GAP_DAYS = 28


class UpdateQuestion(BaseModel):
    """A question of a case: what it needs, what that must rank above, and its ``as_of`` if any."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    role: Literal["now", "past", "as_of", "kept"]
    question: str = Field(min_length=1)
    evidence: tuple[str, ...] = Field(min_length=1)
    outranks: tuple[str, ...] = ()
    as_of: str | None = None


class UpdateCase(BaseModel):
    """One small memory with a change (``update``) or a statement that leaves the first standing."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str = Field(pattern=r"^[a-z]+-\d\d$")
    kind: str = Field(pattern=r"^[a-z]+$")
    split: Literal["tune", "heldout"]
    update: bool
    speakers: tuple[str, str]
    asker: str | None = None
    questions: tuple[UpdateQuestion, ...] = Field(min_length=1)
    sessions: tuple[SmallSession, ...] = Field(min_length=2, max_length=6)

    def turn(self, key: str) -> SmallTurn:
        """The statement called ``key``."""
        return next(t for s in self.sessions for t in s.turns if t.key == key)

    def said_at(self, key: str) -> datetime:
        """When the statement called ``key`` was made (its session's time)."""
        return datetime.fromisoformat(next(s.time for s in self.sessions if any(t.key == key for t in s.turns)))


def update_problems(cases: Sequence[UpdateCase]) -> list[str]:
    """What breaks the suite's rules (empty when sound): :func:`case_problems`, then the suite's own.

    Over the suite: at least :data:`MIN_CASES` cases of :data:`MIN_KINDS` kinds, kept cases,
    two-person and user/assistant cases, and a held-out share within one case of :data:`HELDOUT_SHARE`.
    """
    problems = case_problems(cases)
    if len(cases) < MIN_CASES:
        problems.append(f"{len(cases)} cases, expected at least {MIN_CASES}")
    if len({c.kind for c in cases}) < MIN_KINDS:
        problems.append(f"{len({c.kind for c in cases})} kinds, expected at least {MIN_KINDS}")
    if not any(not c.update for c in cases) or not any(c.asker for c in cases) or all(c.asker for c in cases):
        problems.append("expected kept cases, user/assistant cases and two-person cases")
    held = sum(c.split == "heldout" for c in cases)
    if abs(held - HELDOUT_SHARE * len(cases)) > 1:
        problems.append(f"{held} of {len(cases)} cases held out, expected two fifths")
    return problems


def case_problems(cases: Sequence[UpdateCase]) -> list[str]:
    """What breaks the rules of each case, and ids used twice.

    Per case: 10-40 turns; an update has one ``old`` and one ``new`` statement by the same
    speaker at least :data:`MIN_GAP_DAYS` apart, a ``now`` and a ``past`` question, and its
    ``as_of`` questions fall between the two; a kept case has one ``first`` and one ``second``.
    """
    problems = []
    for case in cases:
        turns = [t for s in case.sessions for t in s.turns]
        if not 10 <= len(turns) <= 40:
            problems.append(f"{case.id}: {len(turns)} turns, expected 10-40")
        keys = Counter(t.key for t in turns if t.key)
        expected = ("old", "new") if case.update else ("first", "second")
        if sorted(keys.elements()) != sorted(expected):
            problems.append(f"{case.id}: statements {sorted(keys.elements())}, expected {list(expected)}")
            continue
        for q in case.questions:
            if not set(q.evidence) | set(q.outranks) <= set(expected):
                problems.append(f"{case.id}: question {q.question!r} names a statement the case lacks")
        if case.update:
            problems += _update_problems(case)
    ids = Counter(c.id for c in cases)
    return problems + [f"case id {i!r} is used {n} times" for i, n in ids.items() if n > 1]


def _update_problems(case: UpdateCase) -> list[str]:
    problems = []
    old, new = case.said_at("old"), case.said_at("new")
    if case.turn("old").speaker != case.turn("new").speaker:
        problems.append(f"{case.id}: the old and new statements have different speakers")
    if (new - old).days < MIN_GAP_DAYS:
        problems.append(f"{case.id}: the statements are {(new - old).days} days apart, expected {MIN_GAP_DAYS}+")
    if not {"now", "past"} <= {q.role for q in case.questions}:
        problems.append(f"{case.id}: an update needs a 'now' and a 'past' question")
    for q in case.questions:
        if q.role == "as_of" and not (q.as_of and old.date().isoformat() <= q.as_of < new.date().isoformat()):
            problems.append(f"{case.id}: as_of {q.as_of} is not between the two statements")
    return problems


def load_update_cases(path: str | Path | None = None, split: str = "all") -> list[UpdateCase]:
    """The suite's cases (default: the shipped file, held to :func:`update_problems`), optionally one split.

    A file of one's own is held to :func:`case_problems` only: a few cases need not make a suite.

    Raises:
        ValueError: on an unknown ``split``, or naming the file and what breaks its rules.
    """
    file = Path(path) if path is not None else DEFAULT_SUITE
    return load_suite(file, UpdateCase, "update suite", update_problems if path is None else case_problems, split)


def update_conversations(cases: Sequence[UpdateCase]) -> list[BenchConversation]:
    """One conversation per case (its own namespace when run), with its questions."""
    out = []
    for case in cases:
        conversation = case_conversation(case.id, case.sessions)
        questions = [BenchQuestion(
            id=f"{case.id}:{q.role}", question=q.question, answer=None, category=ROLES.index(q.role) + 1,
            category_name=q.role, evidence=[f"{case.id}:{key}" for key in q.evidence],
            outranks=[f"{case.id}:{key}" for key in q.outranks], question_date=q.as_of, asker=case.asker)
            for q in case.questions]
        out.append(BenchConversation(conversation=conversation, questions=questions, dataset="updates",
                                     split=case.split))
    return out


def update_case_row(case: UpdateCase) -> dict[str, Any]:
    """The case's row in the results: kind, split, whether it is an update, and its two statements."""
    keys = ("old", "new") if case.update else ("first", "second")
    return {"id": case.id, "kind": case.kind, "split": case.split, "update": case.update,
            "statements": {key: case.turn(key).text for key in keys},
            "questions": [q.question for q in case.questions]}


def detection_rows(cases: Sequence[UpdateCase], embeddings: Any = None) -> list[dict[str, Any]]:
    """What the write path marked in each case: which statement is superseded, and by which.

    Each case is ingested with the suite's write settings (:class:`~.runner.FreshMemories`).
    ``right`` is whether the marks are the case's truth: an update's older statement
    superseded by its newer one and nothing else marked; nothing of a kept case marked.
    """
    factory = FreshMemories("updates", embeddings=embeddings)
    rows = []
    for case, bench in zip(cases, update_conversations(cases), strict=True):
        memory = factory()
        namespace = (case.id,)
        try:
            memory.add_conversation(bench.conversation, namespace=namespace)
            by_turn = {u.source.turn_ids[0]: u for u in memory.list_units(namespace)}
        finally:
            memory.delete_namespace(namespace)
            memory.close()
        # "old", "new", "first", "second", or a small-talk turn's "S<session>:<n>"
        key = {u.id: t.removeprefix(f"{case.id}:") for t, u in by_turn.items()}
        marks = {key[u.id]: key.get(u.metadata[SUPERSEDED_BY], "?") for u in by_turn.values()
                 if u.metadata.get(SUPERSEDED_BY)}
        right = marks == {"old": "new"} if case.update else not marks
        rows.append({"id": case.id, "split": case.split, "update": case.update, "superseded": marks,
                     "right": right})
    return rows


def detection_summary(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Per split (and ``all``): updates and how many were marked right; kept cases and how many stayed unmarked."""
    out = {}
    for split in ("all", "tune", "heldout"):
        mine = [r for r in rows if split in ("all", r["split"])]
        out[split] = {"updates": sum(r["update"] for r in mine), "updates_marked": sum(
            r["update"] and r["right"] for r in mine), "kept": sum(not r["update"] for r in mine),
            "kept_unmarked": sum(not r["update"] and r["right"] for r in mine)}
    return out


def updates_markdown(results: dict[str, Any]) -> str:
    """The suite's own tables: found@k beside recall_all@k per role, and what the write path marked."""
    ks, systems = results["k"], list(results["systems"])
    lines = ["### Found, and found above the wrong statement", "",
             "recall_all@k: the right statement in the top k and above the wrong one (kept: both or the named "
             "one in the top k); found@k: the right statement in the top k, wherever the wrong one is.", "",
             "| split | role | system | n | " + " | ".join(f"recall_all@{k} | found@{k}" for k in ks) + " |",
             "|" + "---|" * (4 + 2 * len(ks))]
    for split in ("all", "tune", "heldout"):
        for role in ROLES:
            for name in systems:
                system = results["systems"][name]
                groups = system["by_category"] if split == "all" else system["splits"].get(split, {}).get(
                    "by_category", {})
                group = groups.get(role)
                if not group or not group.get("n"):
                    continue
                cells = [_pct(group.get(f"{metric}@{k}")) for k in ks for metric in ("recall_all", "found")]
                lines.append(f"| {split} | {role} | {name} | {group['n']} | " + " | ".join(cells) + " |")
    questions = results.get("questions") or {}
    if questions:
        lines += ["", "### Ranks per question", "",
                  "Rank of the right statement / of the wrong one (kept: of the statements the question needs) in "
                  f"each system's top {max(ks)}; - = not retrieved.", "",
                  "| question | split | " + " | ".join(systems) + " |", "|" + "---|" * (2 + len(systems))]
        for at, record in enumerate(questions[systems[0]]):
            cells = []
            for name in systems:
                mine = questions[name][at]
                ranks = [*mine["_evidence_ranks"].values(), *(mine.get("_outranked_ranks") or {}).values()]
                cells.append(" / ".join("-" if r is None else str(r) for r in ranks))
            lines.append(f"| {record['_id']} | {record['_split']} | " + " | ".join(cells) + " |")
    detection = results.get("detection")
    if detection:
        lines += ["", "### What the write path marked", "", detection["rule"] + ".", "",
                  "| split | updates marked right | kept cases left unmarked |", "|---|---|---|"]
        for split, row in detection["by_split"].items():
            lines.append(f"| {split} | {row['updates_marked']} of {row['updates']} | "
                         f"{row['kept_unmarked']} of {row['kept']} |")
        wrong = [r for r in detection["cases"] if not r["right"]]
        if wrong:
            lines += ["", "Cases marked wrong: " + "; ".join(
                f"`{r['id']}` ({r['split']}): {r['superseded'] or 'nothing marked'}" for r in wrong) + "."]
    return "\n".join(lines)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def run_updates(cases: Sequence[UpdateCase], systems: Sequence[str], ks: Sequence[int] = DEFAULT_KS, *,
                progress: bool = True, embeddings: CachedEmbeddings | None = None,
                suite_path: str | Path | None = None, split: str = "all") -> dict[str, Any]:
    """Benchmark ``systems`` on ``cases``, each case ingested into its own fresh namespace; the results dict.

    Raises:
        ValueError: on no cases, or the runner's own argument errors.
    """
    conversations = update_conversations(cases)
    results = run_own_memories("updates", conversations, systems, ks, default_suite=DEFAULT_SUITE,
                               suite_path=suite_path, split=split, progress=progress, embeddings=embeddings,
                               haystack="none: each case is a memory of its own")
    results["cases"] = [update_case_row(case) for case in cases]
    rows = detection_rows(cases, embeddings)
    results["detection"] = {"rule": "an update's older statement superseded by its newer one; no statement of a "
                            "kept case superseded (rule-based supersession, the suite's write settings)",
                            "by_split": detection_summary(rows), "cases": rows}
    return results
