"""Checkpointing graphs that carry recall state: the types a checkpoint serializer must revive.

A checkpointer writes the recall graph's state after every node (the graph on its own,
or as a subgraph of a checkpointed agent, which checkpoints its subgraphs by default),
and the parent's ``result`` after the recall. LangGraph's serializer revives only the
types it is told are safe: by default it revives others with a warning per type
("Deserializing unregistered type ...: this will be blocked in a future version"); with
``LANGGRAPH_STRICT_MSGPACK=true``, or an explicit allowlist, it returns plain dicts in
their place, and a run resumed from such a checkpoint fails in the next node.
:func:`checkpoint_serde` is a serializer that revives every type recall keeps in state.

Example:
    >>> from langgraph.checkpoint.memory import InMemorySaver
    >>> from langchain_ripplemem import RippleMem, build_recall_graph
    >>> from langchain_ripplemem.recall.checkpointing import checkpoint_serde
    >>> memory = RippleMem()
    >>> graph = build_recall_graph(memory.reader, checkpointer=InMemorySaver(serde=checkpoint_serde()))

Inside an agent, give the agent's checkpointer this serializer (add your own state's
types with ``extra``), or build the recall graph with ``checkpointer=False``: it then
runs as one step of the agent and only its ``result`` is checkpointed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from langchain_ripplemem.recall.bridging import EventTime
from langchain_ripplemem.recall.evidence import FoundHit
from langchain_ripplemem.recall.recall_prompts import ControllerPlan
from langchain_ripplemem.recall.state import HeuristicWork
from langchain_ripplemem.schemas import (
    ExpansionTarget,
    Hit,
    MemoryUnit,
    Provenance,
    QueryCues,
    RecalledMemory,
    RecallResult,
    RoundTrace,
    TimeInterval,
    Usage,
)

if TYPE_CHECKING:
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

__all__ = ["checkpoint_serde", "checkpoint_types"]


def checkpoint_types() -> tuple[type, ...]:
    """Every class the recall graph keeps in its state, nested ones included."""
    return (QueryCues, TimeInterval, ExpansionTarget, RoundTrace, Usage, RecallResult, RecalledMemory,
            MemoryUnit, Provenance, Hit, FoundHit, HeuristicWork, EventTime, ControllerPlan)


def checkpoint_serde(extra: Iterable[type | tuple[str, ...]] = ()) -> JsonPlusSerializer:
    """LangGraph's checkpoint serializer, allowed to revive recall state (plus ``extra``, e.g. your state's classes).

    Besides these, it revives what LangGraph always does (messages, documents, dates);
    any other class comes back as a dict, as under ``LANGGRAPH_STRICT_MSGPACK``.

    Example:
        >>> from langchain_ripplemem.recall.checkpointing import checkpoint_serde
        >>> from langchain_ripplemem import RecallResult
        >>> serde = checkpoint_serde()
        >>> result = RecallResult(query="q", namespace=("maya",))
        >>> serde.loads_typed(serde.dumps_typed(result)) == result
        True
    """
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    return JsonPlusSerializer(allowed_msgpack_modules=[*checkpoint_types(), *extra])
