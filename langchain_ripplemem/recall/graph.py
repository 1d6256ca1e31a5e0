"""``build_recall_graph``: recollection as a LangGraph ``StateGraph``.

``extract_cues -> tri_view_recall -> check_sufficiency -> (plan_expansion -> expand
-> check_sufficiency)* -> assemble [-> answer]``. The loop ends when the
controller says the evidence suffices or its plan has no anchor to expand from,
an expansion adds nothing, or ``RecallConfig.controller.max_rounds`` is spent. The last two need no
controller: the node that produced the evidence (``tri_view_recall`` or ``expand``)
routes straight to ``assemble`` and records the reason in the round's trace.
Routing nodes return a ``Command`` naming the next node. ``answer`` runs only
with a chat model and when the input asks for it (``{"with_answer": True}``).

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> from langchain_ripplemem import RippleMem
    >>> from langchain_ripplemem.recall import RecallContext, build_recall_graph
    >>> memory = RippleMem()
    >>> _ = memory.add_messages([HumanMessage("We adopted a beagle called Biscuit.")], namespace="maya")
    >>> graph = build_recall_graph(memory.reader)
    >>> out = graph.invoke({"query": "What is the dog called?"}, context=RecallContext(namespace=("maya",)))
    >>> out["result"].memories[0].unit.restatement
    'User: We adopted a beagle called Biscuit.'

"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableLambda
from langgraph.graph import END, START, StateGraph

from langchain_ripplemem._runtime.collector import paused
from langchain_ripplemem.recall.nodes import RecallNodes
from langchain_ripplemem.recall.reader import MemoryReader, missing_reader_members
from langchain_ripplemem.recall.state import RecallContext, RecallInput, RecallOutput, RecallState

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.types import Checkpointer

__all__ = ["NODE_NAMES", "build_recall_graph"]

NODE_NAMES = ("extract_cues", "tri_view_recall", "check_sufficiency", "plan_expansion", "expand",
              "assemble", "answer")


# Where each routing node may go: it returns a ``Command`` naming the next node (no
# conditional-edge function, whose run re-reads a copy of every state channel).
_DESTINATIONS = {
    "tri_view_recall": ("check_sufficiency", "assemble"),
    "check_sufficiency": ("plan_expansion", "assemble"),
    "plan_expansion": ("expand", "assemble"),
    "expand": ("check_sufficiency", "assemble"),
}


# Each run's thread pool sized once per process (ThreadPoolExecutor's default): left unset, LangGraph's
# pool asks the operating system for the CPU count on every invoke, a file read the size of a node's work.
_MAX_CONCURRENCY = min(32, (os.cpu_count() or 1) + 4)


def _after_assemble(state: RecallState) -> str:
    return "answer" if state.get("answering") else END


def build_recall_graph(
    reader: MemoryReader, *, llm: Any = None, checkpointer: Checkpointer = None
) -> CompiledStateGraph[RecallState, RecallContext, RecallInput, RecallOutput]:
    """Compile the recall graph over a memory.

    Args:
        reader: what recall reads: a memory's :attr:`~langchain_ripplemem.memory.RippleMem.reader`,
            or anything implementing :class:`~langchain_ripplemem.recall.reader.MemoryReader`.
        llm: optional chat model (or ``"provider:model"``): LLM cue extraction, the LLM
            controller and an ``answer`` node (run when the input has ``with_answer``).
            Without it: rule-based cues, the heuristic controller, no answer node.
        checkpointer: LangGraph's: ``None`` (a subgraph uses its parent's), a saver, or
            ``False`` (never checkpointed: inside a checkpointed agent, recall runs as one
            step). A saver's serializer must revive recall's state types:
            :func:`~langchain_ripplemem.recall.checkpointing.checkpoint_serde`.

    Returns:
        A compiled graph with input ``{"query", "with_answer"?}`` (and the recall's filter,
        ``"since"``, ``"until"``, ``"speakers"``, ``"conversation_id"``, all optional) and output
        ``{"result", "answer"}``. Settings come through
        ``context=RecallContext(namespace=..., config=...)``; what the context leaves
        out is the reader's (``default_namespace``, ``recall_config``). A filter field the
        input gives wins over the context's (:meth:`RecallContext.with_input`).

    Raises:
        TypeError: naming ``reader`` when it is no reader (a memory itself: pass ``memory.reader``).
    """
    if missing_reader_members(reader):  # isinstance() would read the properties: a served reader's build a memory
        hint = ": pass its .reader" if missing_reader_members(getattr(reader, "reader", None)) == [] else ""
        raise TypeError(f"reader must be a MemoryReader, got {type(reader).__name__}{hint}")
    nodes = RecallNodes(reader, llm)
    builder = StateGraph(RecallState, context_schema=RecallContext,
                         input_schema=RecallInput, output_schema=RecallOutput)
    # Plain functions: LangGraph runs them in a worker thread under ainvoke. Nodes that
    # call a chat model also get a native async entry (a RunnableLambda pairs the two).
    steps: list[tuple[str, Callable[..., Any], Callable[..., Any] | None]] = [
        ("extract_cues", nodes.extract_cues, nodes.aextract_cues if llm is not None else None),
        ("tri_view_recall", nodes.tri_view_recall, None),
        ("check_sufficiency", nodes.check_sufficiency, nodes.acheck_sufficiency if llm is not None else None),
        ("plan_expansion", nodes.plan_expansion, None),
        ("expand", nodes.expand, None),
        ("assemble", nodes.assemble, None),
    ]
    if llm is not None:
        steps.append(("answer", nodes.answer, nodes.aanswer))
    for name, func, afunc in steps:
        # Nodes that only compute run with the garbage collector held off (collector.py);
        # one that may wait on a chat model does not hold it.
        builder.add_node(name, paused(func) if afunc is None else RunnableLambda(func, afunc=afunc, name=name),
                         destinations=_DESTINATIONS.get(name))
    builder.add_edge(START, "extract_cues")
    builder.add_edge("extract_cues", "tri_view_recall")
    if llm is not None:
        builder.add_conditional_edges("assemble", _after_assemble, ["answer", END])
        builder.add_edge("answer", END)
    else:
        builder.add_edge("assemble", END)
    return builder.compile(checkpointer=checkpointer, name="ripplemem_recall").with_config(
        max_concurrency=_MAX_CONCURRENCY)
