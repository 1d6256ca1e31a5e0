"""``build_recall_graph``: recollection as a LangGraph ``StateGraph``.

``extract_cues -> tri_view_recall -> check_sufficiency -> (plan_expansion -> expand
-> check_sufficiency)* -> assemble [-> answer]``. The loop ends when the
controller says the evidence suffices, an expansion adds nothing, the plan has
no valid anchor, or ``RecallConfig.max_rounds`` is spent.

Example:
    >>> from langchain_ripplemem import RippleMemory
    >>> from langchain_ripplemem.recall import RecallContext, build_recall_graph
    >>> graph = build_recall_graph(RippleMemory())  # doctest: +SKIP
    >>> graph.invoke({"query": "..."}, context=RecallContext(namespace=("maya",)))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

# RunnableCallable is what LangGraph itself wraps node functions in: it inspects
# the function's signature once, where RunnableLambda does so on every call (about
# 4 ms per recall). Unlike a plain function it takes an async twin. trace=False as
# LangGraph does: the node's own run, named after the node, comes from Pregel.
from langgraph._internal._runnable import RunnableCallable
from langgraph.graph import END, START, StateGraph

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.recall.nodes import RecallNodes
from langchain_ripplemem.recall.state import RecallContext, RecallInput, RecallOutput, RecallState

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

    from langchain_ripplemem.memory import RippleMemory

NODE_NAMES = ("extract_cues", "tri_view_recall", "check_sufficiency", "plan_expansion", "expand",
              "assemble", "answer")


def _after_check(state: RecallState) -> str:
    return "plan_expansion" if state["plan"].get("should_continue") else "assemble"


def _after_plan(state: RecallState) -> str:
    return "expand" if state["plan"].get("anchors") else "assemble"


def build_recall_graph(
    memory: RippleMemory, *, llm: Any = None, config: RecallConfig | None = None
) -> CompiledStateGraph[RecallState, RecallContext, RecallInput, RecallOutput]:
    """Compile the recall graph over ``memory``.

    Args:
        memory: the RippleMemory whose index and graph the nodes read.
        llm: optional chat model (or ``"provider:model"``): LLM cue extraction, the LLM
            controller and an ``answer`` node. Without it: rule-based cues, the heuristic
            controller, no answer node.
        config: default settings, used when the run's context gives none.

    Returns:
        A compiled graph with input ``{"query"}`` and output ``{"result", "answer"}``;
        settings through ``context=RecallContext(namespace=..., config=...)``.
    """
    nodes = RecallNodes(memory, llm, config)
    builder = StateGraph(RecallState, context_schema=RecallContext,
                         input_schema=RecallInput, output_schema=RecallOutput)
    # Every node is a traced runnable named after itself: one run per node, and
    # nodes that may call an LLM get a real async entry.
    steps: list[tuple[str, Callable[..., Any], Callable[..., Any] | None]] = [
        ("extract_cues", nodes.extract_cues, nodes.aextract_cues),
        ("tri_view_recall", nodes.tri_view_recall, None),
        ("check_sufficiency", nodes.check_sufficiency, nodes.acheck_sufficiency),
        ("plan_expansion", nodes.plan_expansion, None),
        ("expand", nodes.expand, None),
        ("assemble", nodes.assemble, None),
    ]
    for name, func, afunc in steps:
        builder.add_node(name, RunnableCallable(func, afunc, name=name, trace=False))
    builder.add_edge(START, "extract_cues")
    builder.add_edge("extract_cues", "tri_view_recall")
    builder.add_edge("tri_view_recall", "check_sufficiency")
    builder.add_conditional_edges("check_sufficiency", _after_check, ["plan_expansion", "assemble"])
    builder.add_conditional_edges("plan_expansion", _after_plan, ["expand", "assemble"])
    builder.add_edge("expand", "check_sufficiency")
    if llm is not None:
        builder.add_node("answer", RunnableCallable(nodes.answer, nodes.aanswer, name="answer", trace=False))
        builder.add_edge("assemble", "answer")
        builder.add_edge("answer", END)
    else:
        builder.add_edge("assemble", END)
    return builder.compile(name="ripplemem_recall")
