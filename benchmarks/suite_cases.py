"""What every injected suite shares: speakers, turns, token rules, split balance and loading.

A suite is a JSON file of hand-written cases (a question, its evidence turns,
distractor turns), each injected into a long two-person dialogue
(:mod:`~benchmarks.haystack`). ``{A}`` and ``{B}`` stand for the
haystack's two speakers; ``session`` is a turn's session counted from the
case's start session. The linked-evidence suite
(:mod:`~benchmarks.linked_cases`) and the set and fact suites
(:mod:`~benchmarks.set_fact_cases`) build on these pieces.

Example:
    >>> fill("{A} asked {B}", {"{A}": "Maya", "{B}": "Sam"})
    'Maya asked Sam'
    >>> sorted(question_tokens("Where does {A}'s sister live?"))
    ['live', 'sister']
    >>> heldout_share_problem("kind pets", 5, 2, Fraction(2, 5), "two fifths") is None
    True

"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from langchain_ripplemem.schemas import Conversation
from langchain_ripplemem.text.lexical import lexical_tokens

__all__ = [
    "SPEAKERS",
    "SPLITS",
    "InjectableCase",
    "SuiteTurn",
    "fill",
    "heldout_share_problem",
    "load_suite",
    "question_tokens",
]

SPLITS: tuple[str, ...] = ("tune", "heldout")
SPEAKERS: tuple[str, str] = ("{A}", "{B}")
PLACEHOLDER = re.compile(r"\{[AB]\}")
CaseT = TypeVar("CaseT", bound=BaseModel)


class SuiteTurn(BaseModel):
    """One turn to inject: evidence (with a ``key``) or a distractor."""

    model_config = ConfigDict(frozen=True)

    key: str | None = None
    session: int = Field(ge=0, le=12, description="session offset from the case's start session")
    speaker: Literal["{A}", "{B}"]
    text: str = Field(min_length=1)


class InjectableCase(Protocol):
    """What :func:`~benchmarks.haystack.inject` reads of a case."""

    @property
    def id(self) -> str: ...  # noqa: D102 - attributes of the protocol
    @property
    def split(self) -> str: ...  # noqa: D102
    @property
    def question(self) -> str: ...  # noqa: D102
    @property
    def evidence(self) -> Sequence[SuiteTurn]: ...  # noqa: D102
    @property
    def distractors(self) -> Sequence[SuiteTurn]: ...  # noqa: D102
    @property
    def category(self) -> str: ...  # noqa: D102
    @property
    def category_number(self) -> int: ...  # noqa: D102
    @property
    def gold_answer(self) -> str | None: ...  # noqa: D102

    def injected_extra(self, ids: Mapping[str, str], haystack: Conversation) -> dict[str, Any]:
        """Suite-specific fields of the injected question's ``extra`` (``ids``: key -> turn id)."""
        ...


def fill(text: str, speakers: Mapping[str, str]) -> str:
    """``text`` with ``{A}`` and ``{B}`` replaced by the speakers' names."""
    return PLACEHOLDER.sub(lambda m: speakers[m.group(0)], text)


def question_tokens(text: str) -> set[str]:
    """Lexical tokens of ``text`` without the speaker placeholders (they are in every turn)."""
    return set(lexical_tokens(PLACEHOLDER.sub(" ", text)))


def heldout_share_problem(group: str, n: int, heldout: int, share: Fraction, said: str) -> str | None:
    """A problem when ``heldout`` of ``n`` cases is not ``share`` of them rounded either way."""
    if math.floor(n * share) <= heldout <= math.ceil(n * share):
        return None
    return f"{group}: {heldout} of {n} cases held out, expected about {said}"


def load_suite(
    file: Path,
    model: type[CaseT],
    label: str,
    problems: Callable[[list[CaseT]], list[str]] | None,
    split: str = "all",
) -> list[CaseT]:
    """Read a suite file's cases as ``model``, refuse it if ``problems`` finds any, keep ``split``.

    Args:
        file: a suite JSON file (``{"cases": [...]}``).
        model: the suite's case model.
        label: the suite's name in error messages (``"linked suite"``).
        problems: the suite's rules over the whole file, before the split is taken
            (``None``: the cases are not checked).
        split: ``"tune"``, ``"heldout"`` or ``"all"``.

    Raises:
        ValueError: naming the file and what is wrong with it, or a bad ``split``.

    """
    if split not in (*SPLITS, "all"):
        raise ValueError(f"split must be one of {(*SPLITS, 'all')}, got {split!r}")
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read the {label} {file}: {exc}") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("cases"), list):
        raise ValueError(f"{file}: expected an object with a 'cases' list")
    try:
        cases = [model.model_validate(case) for case in raw["cases"]]
    except ValidationError as exc:
        raise ValueError(f"{file}: {exc}") from exc
    found = problems(cases) if problems is not None else []
    if found:
        raise ValueError(f"{file} breaks the suite's rules: " + "; ".join(found))
    return [case for case in cases if split in ("all", getattr(case, "split", None))]
