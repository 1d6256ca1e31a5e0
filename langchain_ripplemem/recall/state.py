"""State, input/output schemas and run-time context of the recall graph.

Use the compiled graph standalone (``graph.invoke({"query": ...}, context=RecallContext(...))``)
or as a subgraph node: a parent state that has a ``query: str`` key and a
``result`` key receives the :class:`~langchain_ripplemem.schemas.RecallResult`
(and ``answer`` when an LLM answers).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypedDict

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.recall.visibility import coerce_as_of
from langchain_ripplemem.schemas import (
    ExpansionTarget,
    Hit,
    Namespace,
    QueryCues,
    RecallResult,
    RoundTrace,
    Usage,
    validate_namespace,
)


@dataclass
class RecallContext:
    """Per-run settings, read by nodes through ``runtime.context``.

    Attributes:
        namespace: whose memories to search.
        config: recollection budgets and weights.
        reference_time: "now" for relative query times ("last May"); default ``as_of``,
            else the latest memory time in the namespace.
        as_of: answer as of this time (datetime, date or ISO string): memories that start
            after it are hidden, and a superseded memory is down-weighted only when it was
            superseded by then (``docs/lifecycle.md``).
    """

    namespace: Namespace = ("default",)
    config: RecallConfig = field(default_factory=RecallConfig)
    reference_time: datetime | None = None
    as_of: datetime | None = None

    def __post_init__(self) -> None:
        # Contexts built from JSON (``langgraph dev``, a dict) carry lists and dicts.
        self.namespace = validate_namespace(self.namespace)
        if isinstance(self.config, dict):
            self.config = RecallConfig(**self.config)
        if isinstance(self.reference_time, str):
            self.reference_time = datetime.fromisoformat(self.reference_time)
        self.as_of = coerce_as_of(self.as_of)


class RecallInput(TypedDict):
    """What the graph needs: the question."""

    query: str


class RecallOutput(TypedDict, total=False):
    """What the graph returns."""

    result: RecallResult
    answer: str | None


class Plan(TypedDict, total=False):
    """The controller's decision for the next round."""

    should_continue: bool
    reason: str
    anchors: list[str]
    target: ExpansionTarget | None
    llm_plan: Any
    usage: Usage


class RecallState(TypedDict, total=False):
    """Everything that flows between nodes."""

    query: str
    cues: QueryCues
    query_vector: list[float]
    evidence: dict[str, list[Hit]]
    hidden: list[str]
    anchors: list[str]
    round: int
    last_added: int
    plan: Plan
    rounds: list[RoundTrace]
    usage: Usage
    result: RecallResult
    answer: str | None
