"""The RippleMem data model: conversations in, memory units and recall traces out.

Pure pydantic, no I/O. Everything here is a public contract: the write path
produces these objects, the read path returns them, and the benchmark harness
maps them back to dialogue turns through :class:`Provenance`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import unicodedata
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from langchain_ripplemem.errors import InvalidNamespaceError
from langchain_ripplemem.timestamps import aware, parse_timestamp

Namespace = tuple[str, ...]
EdgeType = Literal["semantic", "structural"]
HitSource = Literal["semantic", "lexical", "cue", "expansion", "update"]

DAY_SECONDS = 86_400.0
#: The speaker of AI messages (``adapters``): a namespace with a turn of theirs is a user's chats with an assistant.
ASSISTANT_SPEAKER = "assistant"


def namespace_key(namespace: Namespace) -> str:
    """Serialise a namespace to one string that is unambiguous for any label."""
    try:
        return _cached_key(tuple(namespace))
    except TypeError:  # an unhashable label: not cached (nor a valid namespace: its checks say so)
        return _key(namespace)


def _key(namespace: Namespace) -> str:
    return json.dumps(list(namespace), ensure_ascii=False, separators=(",", ":"))


# Every read of the edge store and the namespace log asks for its namespace's key, and
# json.dumps with these options builds an encoder each call (about 4 us).
_cached_key = functools.lru_cache(maxsize=4096)(_key)


def namespace_from_key(key: str) -> Namespace:
    """Invert :func:`namespace_key`."""
    return tuple(json.loads(key))


class TimeInterval(BaseModel):
    """A closed, timezone-aware time interval; a time point has ``start == end``."""

    model_config = ConfigDict(frozen=True)

    start: datetime
    end: datetime

    @model_validator(mode="after")
    def _aware_and_ordered(self) -> TimeInterval:
        # One Python validator per interval rather than one per field: a cold open validates every unit's time.
        if self.start.tzinfo is None or self.end.tzinfo is None:
            object.__setattr__(self, "start", aware(self.start))  # frozen: set once, while validating
            object.__setattr__(self, "end", aware(self.end))
        if self.end < self.start:
            raise ValueError(f"time interval end {self.end} is before start {self.start}")
        return self

    @classmethod
    def point(cls, when: datetime) -> TimeInterval:
        """An interval of zero length at ``when``."""
        return cls(start=when, end=when)

    def day_span(self) -> str:
        """The days covered: ``'2026-03-02'``, or ``'2026-03-02..2026-03-05'`` across days."""
        start, end = self.start.date(), self.end.date()
        return start.isoformat() if start == end else f"{start.isoformat()}..{end.isoformat()}"

    def overlaps(self, other: TimeInterval) -> bool:
        """True when the two closed intervals share at least one instant."""
        return self.start <= other.end and other.start <= self.end

    def gap_days(self, other: TimeInterval) -> float:
        """Days between the intervals (0 when they overlap)."""
        if self.overlaps(other):
            return 0.0
        later, earlier = (other, self) if other.start > self.end else (self, other)
        return (later.start - earlier.end).total_seconds() / DAY_SECONDS


def _stated_time(value: Any) -> datetime | None:
    """A session's or turn's time by the one rule of every path (``timestamps.parse_timestamp``)."""
    return None if value is None else parse_timestamp(value)


class Turn(BaseModel):
    """One utterance. Extra fields (e.g. ``image_caption``) are kept.

    ``time`` is read as :class:`Session` reads its own. A ``text`` of ``None`` is no text, as a
    missing one is: such a turn (without an image caption) carries nothing to remember, and
    extraction skips it with a warning naming it.
    """

    model_config = ConfigDict(extra="allow")

    id: str = Field(min_length=1)
    speaker: str
    text: str = ""
    time: datetime | None = None
    image_caption: str | None = None

    _time = field_validator("time", mode="before")(_stated_time)

    @field_validator("text", mode="before")
    @classmethod
    def _no_text(cls, value: Any) -> Any:
        return "" if value is None else value

    @property
    def has_content(self) -> bool:
        """Whether the turn says anything: text or an image caption that is not blank."""
        return not (is_blank(self.text) and is_blank(self.image_caption or ""))


class Session(BaseModel):
    """A contiguous stretch of conversation with one timestamp.

    ``time`` is a datetime (naive is UTC) or a string in ISO 8601 (``"2023-05-08T13:56:00Z"``),
    LoCoMo's (``"1:56 pm on 8 May, 2023"``) or LongMemEval's (``"2023/05/20 (Sat) 02:21"``)
    form; a number is refused, as its unit and epoch are unstated.
    """

    model_config = ConfigDict(extra="allow")

    id: str = Field(min_length=1)
    time: datetime | None = None
    turns: list[Turn] = Field(default_factory=list)

    _time = field_validator("time", mode="before")(_stated_time)


class Conversation(BaseModel):
    """A multi-session conversation.

    JSON form: ``{"id", "sessions": [{"id", "time", "turns": [{"id", "speaker", "text"}]}]}``.
    """

    model_config = ConfigDict(extra="allow")

    id: str = Field(min_length=1)
    sessions: list[Session] = Field(default_factory=list)

    def turns(self) -> list[tuple[Session, Turn]]:
        """All turns in order, each with its session."""
        return [(session, turn) for session in self.sessions for turn in session.turns]


class Provenance(BaseModel):
    """Where a unit came from: conversation, session and turn ids."""

    conversation_id: str
    session_id: str
    turn_ids: list[str] = Field(default_factory=list)


class MemoryUnit(BaseModel):
    """A cue-rich episodic memory unit ``m = (r, v, P, L, T)``; ``v`` lives in the index."""

    id: str
    namespace: Namespace
    restatement: str = Field(min_length=1)
    participants: list[str] = Field(default_factory=list)
    locations: list[str] = Field(default_factory=list)
    time: TimeInterval | None = None
    cues: list[str] | None = Field(
        default=None,
        description="identifying names (text/identifying.py): keys of people other than the speakers, "
        "places, organisations and named things; None on units stored before cues existed (derived from the text)",
    )
    topics: list[str] | None = Field(
        default=None, description="identifying topic words (keys); None on units stored before cues existed",
    )
    kind: str = "event"
    source: Provenance
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    metadata: dict[str, Any] = Field(default_factory=dict)

    @staticmethod
    def make_id(namespace: Namespace, source: Provenance, restatement: str) -> str:
        """Stable id from namespace + provenance + text, so re-ingesting is idempotent."""
        payload = json.dumps(
            [list(namespace), source.conversation_id, source.session_id, source.turn_ids,
             restatement],
            ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]

    @classmethod
    def create(cls, *, namespace: Namespace, restatement: str, source: Provenance,
               **fields: Any) -> MemoryUnit:
        """Build a unit and derive its stable id."""
        uid = cls.make_id(namespace, source, restatement)
        return cls(id=uid, namespace=tuple(namespace), restatement=restatement,
                   source=source, **fields)


class Edge(BaseModel):
    """A typed, undirected edge between two memories (stored with ``src < dst``)."""

    src: str
    dst: str
    type: EdgeType
    weight: float


class Hit(BaseModel):
    """One way a memory was found: a recall view or an expansion path."""

    source: HitSource
    rank: int = Field(ge=0, description="0-based rank within the view or channel")
    score: float
    round: int = 0
    channel: EdgeType | None = None
    anchor: str | None = None
    path: list[str] = Field(default_factory=list, description="unit ids from anchor to memory")
    edge_weight: float | None = None


class QueryCues(BaseModel):
    """What recollection looks for: a semantic query, keywords and episodic cues."""

    query: str
    keywords: list[str] = Field(default_factory=list)
    participants: list[str] = Field(default_factory=list)
    locations: list[str] = Field(default_factory=list)
    time: TimeInterval | None = None


class ExpansionTarget(BaseModel):
    """The controller's missing-support target ``g``: what the next round should find."""

    restatement: str
    keywords: list[str] = Field(default_factory=list)
    participants: list[str] = Field(default_factory=list)
    locations: list[str] = Field(default_factory=list)
    time: TimeInterval | None = None
    cues: list[str] = Field(
        default_factory=list, description="identifying cue keys the missing support should share (the anchors' "
        "rare names and topic words, and the query's); the structural channel weighs them by rarity",
    )
    restates_query: bool = Field(
        default=False, description="the target is the query plus words (the heuristic controller's): expansion "
        "reuses the query's vector and weighs the added keywords lexically instead of embedding it again",
    )

    def names(self) -> list[str]:
        """Its participants, then its places, each once (case-insensitively), in order: for display.

        Example:
            >>> ExpansionTarget(restatement="q", participants=["Lumen Labs", "maya"],
            ...                 locations=["lumen labs", "Lisbon"]).names()
            ['Lumen Labs', 'maya', 'Lisbon']

        """
        first: dict[str, str] = {}
        for name in [*self.participants, *self.locations]:
            first.setdefault(name.casefold(), name)
        return list(first.values())


class Usage(BaseModel):
    """Cost accounting: LLM calls, tokens and seconds per stage."""

    llm_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    seconds: dict[str, float] = Field(default_factory=dict)

    def add(self, other: Usage) -> Usage:
        """Return the sum of two usages."""
        seconds = dict(self.seconds)
        for stage, value in other.seconds.items():
            seconds[stage] = seconds.get(stage, 0.0) + value
        return Usage(
            llm_calls=self.llm_calls + other.llm_calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            seconds=seconds,
        )


class FailedWindow(BaseModel):
    """A window the extractor could not turn into valid units; nothing of it was written."""

    conversation_id: str
    turn_ids: list[str]
    error: str
    attempts: int


class IngestReport(BaseModel):
    """What one ingest did."""

    namespace: Namespace
    conversations: int = 0
    turns: int = 0
    units: int = 0
    new_units: int = 0
    unit_ids: list[str] = Field(default_factory=list, description="ids of every unit of this ingest")
    superseded: list[str] = Field(default_factory=list,
                                  description="ids this ingest marked superseded (see lifecycle.py)")
    replaced: list[str] = Field(default_factory=list,
                                description="ids this ingest deleted, and erased from the store's files as a forget "
                                            "does: memories of turns whose text was edited since")
    edges: dict[str, int] = Field(default_factory=lambda: {"semantic": 0, "structural": 0})
    failed_windows: list[FailedWindow] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)

    def summary(self) -> str:
        """One line: units, edges, seconds."""
        total = sum(self.usage.seconds.values())
        return (
            f"{counted(self.turns, 'turn')} -> {counted(self.units, 'unit')} ({self.new_units} new), "
            f"edges: {self.edges.get('semantic', 0)} semantic + "
            f"{self.edges.get('structural', 0)} structural, "
            f"{counted(len(self.failed_windows), 'failed window')}, {total:.1f}s"
        )


class NamespaceStats(BaseModel):
    """What one namespace of a memory holds (``RippleMem.stats``)."""

    namespace: Namespace
    units: int = 0
    suppressed: int = Field(default=0, description="units hidden from recall by a user correction")
    superseded: int = Field(default=0, description="units a later statement supersedes")
    conversations: list[str] = Field(default_factory=list, description="conversation ids, first-seen order")
    sessions: int = 0
    edges: dict[str, int] = Field(default_factory=lambda: {"semantic": 0, "structural": 0})
    first_time: datetime | None = None
    last_time: datetime | None = None


class RecalledMemory(BaseModel):
    """A memory in a recall result, with its assembly score and every way it was found.

    ``repeats``: where the same speaker said the same words again (identical restatements,
    whitespace and case aside), in the order stored. A result lists such memories once
    (the best-ranked copy); their units stay stored. :attr:`sources` is every place it was said.
    """

    unit: MemoryUnit
    score: float
    alignment: float = 0.0
    is_anchor: bool = False
    provenance: list[Hit] = Field(default_factory=list)
    repeats: list[Provenance] = Field(default_factory=list)

    @property
    def sources(self) -> list[Provenance]:
        """Where this memory was said: its unit's source, then its repeats'."""
        return [self.unit.source, *self.repeats]


class RoundTrace(BaseModel):
    """What happened in one recollection round."""

    round: int
    first_hop: dict[str, list[str]] = Field(
        default_factory=dict, description="round 0 only: ids per view"
    )
    sufficient: bool = False
    reason: str = ""
    anchors: list[str] = Field(default_factory=list)
    target: ExpansionTarget | None = None
    expanded: list[str] = Field(default_factory=list)
    paths: dict[str, list[str]] = Field(default_factory=dict)
    channels: dict[str, EdgeType] = Field(
        default_factory=dict, description="the edge type each expanded memory's path runs along")
    usage: Usage = Field(default_factory=Usage)


class RecallResult(BaseModel):
    """Everything recollection returns: memories, one trace per round, usage, answer."""

    query: str
    namespace: Namespace
    cues: QueryCues | None = None
    memories: list[RecalledMemory] = Field(default_factory=list)
    rounds: list[RoundTrace] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    answer: str | None = None
    cited_ids: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list, description="fallbacks taken, e.g. a failed LLM call")

    @property
    def units(self) -> list[MemoryUnit]:
        """The recalled units, best first."""
        return [m.unit for m in self.memories]


def is_blank(text: str) -> bool:
    r"""Whether ``text`` shows nothing: only whitespace, control and format characters.

    Format characters (Unicode category Cf: zero-width space U+200B, the joiners U+200C
    and U+200D, word joiner U+2060, byte order mark U+FEFF, ...) draw nothing on their
    own, so a query or label of only them is as empty as one of spaces.

    Example:
        >>> is_blank(" \u200b\ufeff\t"), is_blank("tea\u200b")
        (True, False)
    """
    return all(ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf") for ch in text)


class ReservedNamespace(tuple[str, ...]):
    """A namespace under LangGraph's reserved root label ``"langgraph"``, held for a store's raw operations.

    LangGraph's ``BaseStore.put`` refuses that root to its users, but a store still
    executes a raw ``PutOp`` under it (LangGraph's own stores do): ``RippleMemStore``
    passes such a namespace to the memory as this type, which :func:`validate_namespace`
    lets through. Everywhere else the root stays refused.

    Example:
        >>> validate_namespace(ReservedNamespace(("langgraph", "runs")))
        ('langgraph', 'runs')
    """

    __slots__ = ()


def validate_namespace(namespace: object, *, argument: str = "namespace") -> Namespace:
    """Check the namespace rules and return the namespace as a tuple.

    A namespace is a non-empty tuple of string labels without ``"."`` (LangGraph's
    rule), ``"/"`` or control characters (tab, newline), each showing something (not
    blank: :func:`is_blank`), whose root label is not ``"langgraph"`` (unless it is a
    :class:`ReservedNamespace`, which is returned as it is). A
    string is the same namespace written with ``/`` between labels, everywhere
    (Python, CLI, MCP, served graphs): ``"users/maya"`` is ``("users", "maya")``.

    Raises:
        InvalidNamespaceError: naming the argument and the broken rule.

    Example:
        >>> validate_namespace("users/maya")
        ('users', 'maya')
        >>> validate_namespace(["users", "maya"])
        ('users', 'maya')

    """
    if isinstance(namespace, str):
        if not namespace.strip("/"):
            raise InvalidNamespaceError(f"{argument} must name at least one label, got {namespace!r}")
        if "//" in namespace or namespace.startswith("/") or namespace.endswith("/"):
            raise InvalidNamespaceError(
                f"{argument} {namespace!r} has an empty label: write labels separated by single '/' "
                "(e.g. 'users/maya')")
        namespace = tuple(namespace.split("/"))
    if not isinstance(namespace, (tuple, list)) or not namespace:
        raise InvalidNamespaceError(
            f"{argument} must be a non-empty tuple of strings or a 'label/label' string, got {namespace!r}")
    for label in namespace:
        if not isinstance(label, str) or not label:
            raise InvalidNamespaceError(
                f"{argument} labels must be non-empty strings, got {label!r} in {tuple(namespace)!r}"
            )
        if is_blank(label):
            raise InvalidNamespaceError(
                f"{argument} labels must show something, got the blank label {label!r} in {tuple(namespace)!r}")
        if any(unicodedata.category(ch) == "Cc" for ch in label):
            raise InvalidNamespaceError(
                f"{argument} labels cannot contain control characters (tab, newline, ...), got {label!r}")
        if "." in label:
            raise InvalidNamespaceError(
                f"{argument} labels cannot contain '.' (LangGraph's namespace rule), got {label!r}")
        if "/" in label:
            raise InvalidNamespaceError(
                f"{argument} labels cannot contain '/': it separates labels when a namespace is written "
                f"as a string, so {label!r} would read as {tuple(label.split('/'))!r}")
    if isinstance(namespace, ReservedNamespace):
        return namespace
    if namespace[0] == "langgraph":
        raise InvalidNamespaceError(
            f"{argument} root label cannot be 'langgraph' (reserved by LangGraph): {tuple(namespace)!r}")
    return tuple(namespace)


def format_namespace(namespace: Namespace) -> str:
    """The string form of a namespace, labels joined by ``/`` (the inverse of :func:`validate_namespace`)."""
    return "/".join(namespace)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """A count and its noun in the right number: every report's "1 unit", "2 units".

    Args:
        n: the count.
        noun: the singular.
        plural: the plural when it is not ``noun + "s"`` (``"memories"``).

    Example:
        >>> counted(1, "round"), counted(2, "round"), counted(0, "memory", "memories")
        ('1 round', '2 rounds', '0 memories')
    """
    return f"{n} {noun if n == 1 else plural or noun + 's'}"
