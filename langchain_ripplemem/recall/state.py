"""State, input/output schemas and run-time context of the recall graph.

Use the compiled graph standalone (``graph.invoke({"query": ...}, context=RecallContext(...))``)
or as a subgraph node: a parent state that has a ``query: str`` key and a
``result`` key receives the :class:`~langchain_ripplemem.schemas.RecallResult`
(and ``answer`` when an LLM answers). The input also takes the recall's filter
(``since``, ``until``, ``speakers``, ``conversation_id``, ``docs/filters.md``) next to the
query; a value there wins over the same field of the context (:meth:`RecallContext.with_input`),
so a parent state's keys of those names are its recall's filter.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

from langgraph.channels import EphemeralValue, UntrackedValue

# typing's TypedDict has no JSON schema before Python 3.12 (pydantic refuses it): LangGraph Server would
# show the graph with no input form.
from typing_extensions import NotRequired, Self, TypedDict

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.recall.bridging import EventTime
from langchain_ripplemem.recall.evidence import Evidence, Supports
from langchain_ripplemem.recall.filters import FILTER_NAMES, RecallFilter, recall_filter
from langchain_ripplemem.recall.recall_prompts import ControllerPlan
from langchain_ripplemem.recall.visibility import coerce_as_of
from langchain_ripplemem.schemas import (
    ExpansionTarget,
    Namespace,
    QueryCues,
    RecallResult,
    RoundTrace,
    Usage,
    validate_namespace,
)

if TYPE_CHECKING:
    import networkx as nx

    from langchain_ripplemem.index.namespace_index import NamespaceIndex
    from langchain_ripplemem.recall.reader import MemoryReader


@dataclass
class RecallContext:
    """Per-run settings, read by nodes through ``runtime.context``.

    Attributes:
        namespace: whose memories to search; ``None``: the memory's default namespace.
        config: recollection budgets and weights; ``None``: the memory's ``recall_config``.
            From JSON, a dict of settings groups (``{"controller": {"max_rounds": 2}}``);
            what a group leaves out keeps its default.
        reference_time: "now" for relative query times ("last May"); default ``as_of``,
            else the latest memory time in the namespace.
        as_of: answer as of this time (datetime, date or ISO string): memories that start
            after it are hidden, and a superseded memory is down-weighted only when it was
            superseded by then (``docs/lifecycle.md``).
        asker: the speaker asking (e.g. ``"user"``): the query's first person ("I", "my")
            is this speaker, a participant cue like a name (``docs/architecture.md``).
        since, until, speakers, conversation_id: the recall's filter (``docs/filters.md``):
            memories outside it are never candidates. ``since`` and ``until`` take ISO dates or
            datetimes or time phrases ("last week"), grounded relative to ``reference_time``,
            else ``as_of``, else now; ``speakers`` a name or a list of names. The run's input may
            give them too, next to the query: a value there wins (:meth:`with_input`).
    """

    namespace: Namespace | None = None
    config: RecallConfig | None = None
    reference_time: datetime | None = None
    as_of: datetime | None = None
    asker: str | None = None
    since: datetime | str | None = None
    until: datetime | str | None = None
    speakers: list[str] | str | None = None
    conversation_id: str | None = None

    def __post_init__(self) -> None:
        # Contexts built from JSON (``langgraph dev``, a dict) carry lists, strings and dicts.
        if self.namespace is not None:
            self.namespace = validate_namespace(self.namespace)
        if isinstance(self.config, dict):
            self.config = RecallConfig(**self.config)
        if isinstance(self.reference_time, str):
            self.reference_time = datetime.fromisoformat(self.reference_time)
        self.as_of = coerce_as_of(self.as_of)
        if self.asker is not None and (not isinstance(self.asker, str) or not self.asker.strip()):
            raise ValueError(f"asker must be a non-empty speaker name or None, got {self.asker!r}")
        # Grounded once, here: a time phrase means the same instant in every node.
        found = recall_filter(self.since, self.until, self.speakers, self.conversation_id,
                              reference=self.reference_time or self.as_of)
        self.since, self.until = found.since, found.until
        self.speakers = None if found.speakers is None else list(found.speakers)

    @property
    def filter(self) -> RecallFilter:
        """The filter of this recall (:mod:`~langchain_ripplemem.recall.filters`)."""
        since, until = self.since, self.until
        assert not isinstance(since, str) and not isinstance(until, str)  # grounded in __post_init__
        return RecallFilter(since, until, None if self.speakers is None else tuple(self.speakers),
                            self.conversation_id)

    def with_input(self, run_input: Mapping[str, Any]) -> Self:
        """The context with the filter values of the run's input: a value the input gives wins over the context's.

        A filter belongs to one question, so a client may send it with the query
        (``{"query": ..., "since": "last week"}``); a field the input leaves out, or sets to
        ``None``, keeps the context's. The input's values are checked and grounded as the
        context's are (relative to ``reference_time``, else ``as_of``, else now).

        Raises:
            ValueError: naming the filter field (``since``, ``until``, ``speakers``,
                ``conversation_id``) whose value is unusable.

        Example:
            >>> ctx = RecallContext(since="2026-04-01", speakers="Sam")
            >>> given = ctx.with_input({"query": "Where did we eat?", "speakers": ["Maya"]})
            >>> given.since.isoformat(), given.speakers
            ('2026-04-01T00:00:00+00:00', ['maya'])
            >>> ctx.with_input({"query": "Where did we eat?"}) is ctx
            True
        """
        given = {name: run_input[name] for name in FILTER_NAMES if run_input.get(name) is not None}
        return dataclasses.replace(self, **given) if given else self  # replace() runs __post_init__: one check

    def resolved(self, reader: MemoryReader) -> ResolvedContext:
        """The context with the reader's defaults filled in: the one effective namespace and config."""
        return ResolvedContext(namespace=self.namespace or reader.default_namespace,
                               config=self.config or reader.recall_config,
                               reference_time=self.reference_time, as_of=self.as_of, asker=self.asker,
                               since=self.since, until=self.until, speakers=self.speakers,
                               conversation_id=self.conversation_id)


class ResolvedContext(RecallContext):
    """A :class:`RecallContext` whose namespace and config are set (what nodes read)."""

    namespace: Namespace
    config: RecallConfig

    @classmethod
    def of_call(cls, namespace: Namespace, config: RecallConfig, *, k: int | None = None, as_of: Any = None,
                asker: str | None = None, **filters: Any) -> ResolvedContext:
        """The context of one recall call: ``k`` (a positive integer) replaces ``config.assembly.top_k``.

        ``filters``: ``since``, ``until``, ``speakers``, ``conversation_id`` (:mod:`.filters`).

        Raises:
            ValueError: naming ``k``, ``as_of`` or a filter argument when unusable.
        """
        if k is not None:
            if isinstance(k, bool) or not isinstance(k, int) or k < 1:
                raise ValueError(f"k must be a positive integer, got {k!r}")
            config = config.replace(assembly={"top_k": k})
        return cls(namespace=namespace, config=config, as_of=coerce_as_of(as_of), asker=asker, **filters)


# Per-run values. A checkpointed thread keeps a plain channel's last value, and a run's input writes
# only the keys it passes: a run without ``with_answer`` would answer because an earlier run asked,
# and return an earlier run's answer. An ephemeral value lasts one step: ``extract_cues`` copies the
# input's into ``answering``, and ``answer`` is written at the last step, where the output reads it.
WithAnswer = Annotated[bool, EphemeralValue(bool)]
Answer = Annotated[str | None, EphemeralValue(str)]
# The input's filter values, for the same reason: a run without ``since`` must not keep an earlier run's.
# The first node reads them (RecallContext.with_input) into the hidden memories.
FilterTime = Annotated[datetime | str | None, EphemeralValue(object)]
FilterSpeakers = Annotated[list[str] | str | None, EphemeralValue(object)]
FilterConversation = Annotated[str | None, EphemeralValue(object)]


@dataclass(frozen=True, repr=False)
class PinnedNamespace:
    """What one recall reads from its first node to its last: the namespace's pinned index and walkable edges.

    Taken once, by the first node, after the namespace is prepared: the pinned index
    (:meth:`~langchain_ripplemem.index.namespace_index.NamespaceIndex.pinned`) is the
    namespace as the last whole write left it, and no write changes it while the recall
    runs; the walkable edges keeps the edges of units deleted meanwhile
    (``EdgeCache.removing``), and a walk steps only on the index's units.
    """

    namespace: Namespace
    index: NamespaceIndex
    graph: nx.Graph

    def __repr__(self) -> str:
        return f"PinnedNamespace({'/'.join(self.namespace)}, {len(self.index)} memories)"


# Held for one run and never checkpointed (an index is the process's memory, not state to save): a run
# resumed from a checkpoint, or a node run on its own, pins the namespace again.
# Typed Any: a schema of the state (``langgraph dev``) need not describe an index.
Pinned = Annotated[Any, UntrackedValue(object)]


class RecallInput(TypedDict):
    """What the graph needs: the question, whether to answer it (needs a chat model), and its filter.

    ``since``, ``until``, ``speakers``, ``conversation_id``: the recall's filter
    (``docs/filters.md``), as in :class:`RecallContext`; a value given here wins over the context's.
    """

    query: str
    with_answer: NotRequired[WithAnswer]
    since: NotRequired[FilterTime]
    until: NotRequired[FilterTime]
    speakers: NotRequired[FilterSpeakers]
    conversation_id: NotRequired[FilterConversation]


class RecallOutput(TypedDict, total=False):
    """What the graph returns."""

    result: RecallResult
    answer: Answer


@dataclass
class HeuristicWork:
    """What :meth:`HeuristicController.decide` computed in a round, for :meth:`HeuristicController.plan` to reuse.

    ``round`` and ``evidence`` (its size) say which round's evidence it was computed
    on; ``None`` fields were not computed.
    """

    round: int
    evidence: int
    missing: list[str] | None = None
    candidates: list[tuple[str, float, float]] | None = None
    event: EventTime | None = None


class Plan(TypedDict, total=False):
    """The controller's decision for the next round."""

    should_continue: bool
    reason: str
    anchors: list[str]
    target: ExpansionTarget | None
    llm_plan: ControllerPlan  # the LLM controller's parsed output
    usage: Usage
    model_down: str  # the chat model could not be reached: why
    warning: str  # the LLM controller failed (an error, or output it could not use): for the result's warnings
    # A time the query names relative to an event ("the weekend before her interview",
    # "while Maya is in Lisbon"), grounded from the event's memory.
    event_time: EventTime
    heuristic: HeuristicWork  # what the heuristic controller's decide computed, for its plan
    with_edges: list[str]  # the decided evidence's memories with an edge: the plan reads the same evidence


class RecallState(TypedDict, total=False):
    """Everything that flows between nodes."""

    query: str
    with_answer: WithAnswer  # this run's input only
    since: FilterTime  # this run's input only, as the three below: read by the first node
    until: FilterTime
    speakers: FilterSpeakers
    conversation_id: FilterConversation
    answering: bool  # this run answers (its input's with_answer, copied by the first node)
    cues: QueryCues
    query_vector: list[float]
    evidence: Evidence  # unit id -> each way it was found (recall/evidence.py)
    support: Supports  # unit id -> its provenance support over those hits, kept as they arrive
    hidden: list[str]
    anchors: list[str]
    round: int
    last_added: int
    plan: Plan
    rounds: list[RoundTrace]
    usage: Usage
    result: RecallResult
    answer: Answer
    model_down: str | None  # set once a chat model call found the model unreachable: no more LLM calls
    warnings: list[str]  # fallbacks taken, copied into the result
    pinned: Pinned  # the PinnedNamespace this run reads (never checkpointed)
