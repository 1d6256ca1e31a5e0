"""An agent deployed beside the served graphs that remembers and recalls only through ``runtime.store``.

``remember`` (a sync node: the server runs it in a worker thread) puts the run's note in
``("memories", user_id)``; ``recall`` (an async node, on the server's event loop) searches
that namespace with the run's question. Served by ``test_served_store.py``.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict


class AgentState(TypedDict, total=False):
    user_id: str
    note: str
    question: str
    recalled: list[dict[str, Any]]


def remember(state: AgentState, runtime: Runtime) -> dict[str, Any]:
    if state.get("note"):
        runtime.store.put(("memories", state["user_id"]), "agent-note", {"text": state["note"], "kind": "agent"})
    return {}


async def recall(state: AgentState, runtime: Runtime) -> dict[str, Any]:
    hits = await runtime.store.asearch(("memories", state["user_id"]), query=state["question"], limit=3)
    return {"recalled": [{"key": h.key, "value": h.value, "score": h.score} for h in hits]}


builder = StateGraph(AgentState)
builder.add_node("remember", remember)
builder.add_node("recall", recall)
builder.add_edge(START, "remember")
builder.add_edge("remember", "recall")
builder.add_edge("recall", END)
graph = builder.compile(name="store_agent")
