"""The multilingual suite: short conversations in six languages, each its own memory, a question in its language.

Each case of ``data/multilingual_cases.json`` is one small conversation: the
small talk of its language (``small_talk``, the same dozen turns for every case
of that language) with the case's own turns spread among it, one evidence turn
or two, and a distractor that shares the question's ordinary words. The
question, in the conversation's language, shares a rare name or word with its
evidence, often inflected ("Małgorzaty" and "Małgorzata", "לחתולה" and "חתולה"),
or names the speaker who said it. Unlike the injected suites
(:mod:`~.suite_runner`) there is no haystack: the case *is* the memory, as a
new user's is. The split (``tune``/``heldout``) is fixed in the file.

Run with ``python -m benchmarks multilingual``; results have the suites' shape
(categories are the languages) and go through the same runner and tables.

Example:
    >>> cases = load_multilingual_cases()
    >>> sorted({c.language for c in cases}) == sorted(LANGUAGES)
    True
    >>> bench = multilingual_conversations(cases[:1])[0]
    >>> len(bench.conversation.sessions[0].turns) >= 10, bench.questions[0].category_name
    (True, 'de')

"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from benchmarks.cached_embeddings import CachedEmbeddings
from benchmarks.loaders import BenchConversation, BenchQuestion
from benchmarks.own_memories import run_own_memories
from benchmarks.runner import DEFAULT_KS
from benchmarks.suite_cases import SPEAKERS, SPLITS, fill
from langchain_ripplemem.schemas import Conversation

__all__ = ["DEFAULT_SUITE", "LANGUAGES", "MultilingualCase", "load_multilingual_cases",
           "multilingual_conversations", "run_multilingual"]

DEFAULT_SUITE = Path(__file__).parent / "data" / "multilingual_cases.json"
#: The suite's languages (ISO 639-1), its reporting categories in this order.
LANGUAGES: tuple[str, ...] = ("de", "fr", "es", "pl", "he", "zh")
MIN_PER_LANGUAGE = 5
#: When every case's conversation took place: one evening's chat.
SESSION_TIME = "2026-05-04T18:00:00+00:00"


class CaseTurn(BaseModel):
    """One turn of a case: evidence (with a ``key``) or a distractor; ``{A}``/``{B}`` are the case's speakers."""

    model_config = ConfigDict(frozen=True)

    key: str | None = None
    speaker: Literal["{A}", "{B}"]
    text: str = Field(min_length=1)


class MultilingualCase(BaseModel):
    """A question in its conversation's language, the case's turns and its two speakers."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(pattern=r"^[a-z]{2}-\d\d$")
    language: Literal["de", "fr", "es", "pl", "he", "zh"]
    split: Literal["tune", "heldout"]
    speakers: tuple[str, str]
    question: str = Field(min_length=1)
    turns: tuple[CaseTurn, ...] = Field(min_length=2)

    @model_validator(mode="after")
    def _evidence(self) -> MultilingualCase:
        keys = [t.key for t in self.turns if t.key is not None]
        if not keys or len(set(keys)) != len(keys):
            raise ValueError(f"case {self.id}: needs evidence turns, each with its own key, got {keys}")
        if not self.id.startswith(self.language):
            raise ValueError(f"case {self.id}: its id must start with its language {self.language!r}")
        return self


def load_multilingual_cases(path: str | Path | None = None, split: str = "all") -> list[MultilingualCase]:
    """The suite's cases (default: the shipped file), optionally one split, with its small talk checked.

    Raises:
        ValueError: naming the file and what is wrong, or a bad ``split``.
    """
    if split not in (*SPLITS, "all"):
        raise ValueError(f"split must be one of {(*SPLITS, 'all')}, got {split!r}")
    file = Path(path) if path is not None else DEFAULT_SUITE
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
        cases = [MultilingualCase.model_validate(c) for c in raw["cases"]]
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValidationError) as exc:
        raise ValueError(f"cannot read the multilingual suite {file}: {exc}") from exc
    problems = [f"{lang}: {n} cases, needs {MIN_PER_LANGUAGE}" for lang in LANGUAGES
                if (n := sum(c.language == lang for c in cases)) < MIN_PER_LANGUAGE]
    problems += [f"{lang}: no small talk" for lang in LANGUAGES if len(raw.get("small_talk", {}).get(lang, [])) < 8]
    if problems:
        raise ValueError(f"{file} breaks the suite's rules: " + "; ".join(problems))
    _SMALL_TALK[file] = {lang: [CaseTurn.model_validate(t) for t in turns] for lang, turns in raw["small_talk"].items()}
    return [c for c in cases if split in ("all", c.split)]


_SMALL_TALK: dict[Path, dict[str, list[CaseTurn]]] = {}


def _conversation(case: MultilingualCase, small_talk: list[CaseTurn]) -> BenchConversation:
    """The case's own turns spread evenly through its language's small talk, in one session."""
    names = dict(zip(SPEAKERS, case.speakers, strict=True))
    slots = len(case.turns) + 1
    ordered: list[tuple[str | None, CaseTurn]] = []
    mine = iter(case.turns)
    for i, turn in enumerate(small_talk):
        ordered.append((None, turn))
        if (i + 1) in {round((j + 1) * len(small_talk) / slots) for j in range(len(case.turns))}:
            ordered.append(("case", next(mine)))
    ordered.extend(("case", t) for t in mine)
    turns, evidence = [], []
    for n, (_, turn) in enumerate(ordered, 1):
        tid = f"D1:{n}"
        if turn.key is not None:
            evidence.append(tid)
        turns.append({"id": tid, "speaker": names[turn.speaker], "text": fill(turn.text, names)})
    conversation = Conversation.model_validate({"id": case.id, "sessions": [
        {"id": "D1", "time": SESSION_TIME, "turns": turns}]})
    question = BenchQuestion(id=case.id, question=case.question, answer=None,
                             category=LANGUAGES.index(case.language) + 1, category_name=case.language,
                             evidence=evidence, extra={"speakers": list(case.speakers)})
    return BenchConversation(conversation, [question], dataset="multilingual", split=case.split)


def multilingual_conversations(cases: Sequence[MultilingualCase], path: str | Path | None = None
                               ) -> list[BenchConversation]:
    """One conversation per case, with the small talk of the suite file the cases came from."""
    file = Path(path) if path is not None else DEFAULT_SUITE
    if file not in _SMALL_TALK:
        load_multilingual_cases(file)
    return [_conversation(c, _SMALL_TALK[file][c.language]) for c in cases]


def run_multilingual(cases: Sequence[MultilingualCase], systems: Sequence[str], ks: Sequence[int] = DEFAULT_KS, *,
                     progress: bool = True, embeddings: CachedEmbeddings | None = None,
                     suite_path: str | Path | None = None, split: str = "all") -> dict[str, Any]:
    """Benchmark ``systems`` on the cases, each its own memory, and return the results dict.

    Raises:
        ValueError: on no cases, or the runner's own argument errors.
    """
    conversations = multilingual_conversations(cases, suite_path)
    results = run_own_memories("multilingual", conversations, systems, ks, default_suite=DEFAULT_SUITE,
                               suite_path=suite_path, split=split, progress=progress, embeddings=embeddings,
                               haystack="none: each case is its own conversation (the language's small talk "
                                        "and the case's turns)")
    results["cases"] = [{"id": c.id, "kind": c.language, "split": c.split, "question": c.question,
                         "evidence": b.questions[0].evidence,
                         "answers": [_short(t.text) for t in c.turns if t.key is not None]}
                        for c, b in zip(cases, conversations, strict=True)]
    return results


def _short(text: str, most: int = 40) -> str:
    return text if len(text) <= most else text[: most - 1] + "\u2026"
