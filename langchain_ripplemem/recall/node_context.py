"""What every node of the recall graph reads: the run's context, the namespace pinned for the run, the chat model.

:class:`NodeContext` is the base of :class:`~langchain_ripplemem.recall.nodes.RecallNodes`.
The first node pins the namespace (:meth:`NodeContext._pin`): its walkable edges, then its
index (:class:`~langchain_ripplemem.recall.state.PinnedNamespace`), which every later node
reads (:meth:`NodeContext._view`), so one recall reads one state of the namespace whatever
is written meanwhile. Each node adds the seconds it took to the run's usage (:func:`timed_usage`).
"""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Any

from langgraph.runtime import get_runtime

from langchain_ripplemem.edges.adjacency import lazy_adjacency, with_edges
from langchain_ripplemem.llm.calls import resolve_chat_model
from langchain_ripplemem.recall.reader import MemoryReader
from langchain_ripplemem.recall.state import PinnedNamespace, RecallContext, RecallState, ResolvedContext
from langchain_ripplemem.schemas import Usage

__all__ = ["NodeContext", "timed_usage"]


def timed_usage(usage: Usage | None, stage: str, started: float, extra: Usage | None = None) -> Usage:
    """``usage`` with the seconds since ``started`` added to ``stage`` (and ``extra``'s calls and tokens).

    Example:
        >>> import time
        >>> usage = timed_usage(None, "assemble", time.perf_counter())
        >>> list(usage.seconds), timed_usage(usage, "answer", time.perf_counter()) is usage
        (['assemble'], False)
    """
    usage = usage or Usage()
    # A new Usage each node (state values are never changed in place); a copy unless there is usage to add.
    usage = usage.add(extra) if extra is not None else usage.model_copy(update={"seconds": dict(usage.seconds)})
    usage.seconds[stage] = usage.seconds.get(stage, 0.0) + time.perf_counter() - started
    return usage


class NodeContext:
    """The reader, the chat model and the pinned namespace the recall graph's nodes share.

    Args:
        reader: the memory as recall reads it.
        llm: a chat model or ``"provider:model"`` string (created on first use), or ``None``.
    """

    def __init__(self, reader: MemoryReader, llm: Any = None) -> None:
        self.reader = reader
        self._llm_spec = llm
        self._llm: Any = None

    @property
    def llm(self) -> Any:
        """The chat model, created on first use inside a node."""
        if self._llm is None and self._llm_spec is not None:
            self._llm = resolve_chat_model(self._llm_spec)
        return self._llm

    def _ctx(self) -> ResolvedContext:
        """The run's context; what it leaves out comes from the reader (one effective config)."""
        raw = get_runtime().context
        if isinstance(raw, ResolvedContext):  # RippleMem.recall resolves it once for every node
            return raw
        ctx = raw if isinstance(raw, RecallContext) else RecallContext(**dict(raw or {}))
        return ctx.resolved(self.reader)

    # -- the namespace one recall reads -------------------------------------------------
    def _pin(self, ctx: ResolvedContext) -> PinnedNamespace:
        """The namespace as this recall reads it to its end: its pinned index, and the graph it walks.

        The graph first: a delete that runs between the two leaves the index without the
        units, or the graph still reading their edges (``EdgeCache.removing``).
        """
        graph = self.reader.walkable_edges(ctx.namespace)
        return PinnedNamespace(ctx.namespace, self.reader.namespace_index(ctx.namespace), graph)

    def _view(self, state: RecallState, ctx: ResolvedContext) -> PinnedNamespace:
        """What the first node pinned (pinned again in a run resumed from a checkpoint, which does not keep it)."""
        pinned = state.get("pinned")
        return pinned if isinstance(pinned, PinnedNamespace) and pinned.namespace == ctx.namespace else self._pin(ctx)

    def _with_edges(self, pinned: PinnedNamespace, nodes: Collection[str]) -> set[str]:
        """Those of ``nodes`` with an edge to a memory of the pinned index.

        The edge store answers for all edges: while the index is the namespace's newest
        whole write, every edge is between its memories. Once a write ran since, an
        edge may lead to a memory the index does not hold: the nodes' edges are read.
        """
        found = with_edges(pinned.graph, nodes)
        if not found or (not pinned.index.overtaken and self.reader.namespace_index(pinned.namespace) is pinned.index):
            return found
        lazy, held = lazy_adjacency(pinned.graph), pinned.index.pos
        if lazy is not None:
            lazy.read(found)
        return {node for node in found if node in pinned.graph and any(nbr in held for nbr in pinned.graph.adj[node])}
