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
        reference_time: "now" for relative query times ("last May"); default the
            latest memory time in the namespace.
    """

    namespace: Namespace = ("default",)
    config: RecallConfig = field(default_factory=RecallConfig)
    reference_time: datetime | None = None

    @classmethod
    def coerce(cls, value: Any) -> RecallContext:
        """Accept a context object, a plain dict (e.g. from ``langgraph dev``) or ``None``."""
        if isinstance(value, cls):
            return value
        data = dict(value or {})
        if "namespace" in data:
            data["namespace"] = validate_namespace(data["namespace"])
        if isinstance(data.get("config"), dict):
            data["config"] = RecallConfig(**data["config"])
        return cls(**data)


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
    anchors: list[str]
    round: int
    last_added: int
    plan: Plan
    rounds: list[RoundTrace]
    usage: Usage
    result: RecallResult
    answer: str | None
