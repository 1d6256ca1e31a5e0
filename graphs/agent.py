"""The ``agent`` graph for LangGraph Server / ``langgraph dev``: a chat agent that remembers and recalls.

A messages-state agent with four tools, ``remember`` and ``recall_memory``, and
``explore_memory`` and ``memory_timeline`` to walk on from what a recall found,
over the memory shared with the ``recall`` and ``ingest`` graphs (see
``graphs/recall.py``). Each user's memories live in ``("memories", user_id)``.

Run context (``AgentContext``)::

    {"user_id": "maya", "model": "openai:gpt-4.1-mini"}

``model`` is a ``"provider:model"`` string (resolved inside the node, so
importing this module needs no API key) or, from Python, a chat model instance;
``$RIPPLEMEM_AGENT_MODEL`` is the fallback. With no model the agent answers
with a message explaining how to configure one instead of failing.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, SystemMessage
from langchain_core.runnables import RunnableLambda
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.runtime import get_runtime

from langchain_ripplemem.server.served_memory import get_memory
from langchain_ripplemem.tools import (
    create_explore_memory_tool,
    create_memory_timeline_tool,
    create_recall_tool,
    create_remember_tool,
)

SYSTEM_PROMPT = (
    "You are a helpful assistant with long-term memory. Before answering anything that may depend "
    "on earlier conversations, call recall_memory. When the user shares a durable fact, preference, "
    "plan or event, call remember with one self-contained statement. When a recalled memory points at "
    "something the recall did not cover, call explore_memory with its id to see what it links to; for what "
    "happened in a period, call memory_timeline. Answer from the memories and say so when memory has nothing "
    "relevant."
)
NO_MODEL = (
    "No chat model is configured for this agent, so I can't answer yet. Pass one in the run "
    "context, e.g. {{\"model\": \"openai:gpt-4.1-mini\"}} (with OPENAI_API_KEY set), or set "
    "RIPPLEMEM_AGENT_MODEL.{detail}"
)


@dataclass
class AgentContext:
    """Per-run settings: whose memory, which model, which system prompt."""

    user_id: str = "default"
    model: Any = None
    system_prompt: str = SYSTEM_PROMPT


# Tools get the memory lazily and fill "{user_id}" from the run context at call time.
TOOLS = [
    create_remember_tool(get_memory, namespace=("memories", "{user_id}")),
    create_recall_tool(get_memory, namespace=("memories", "{user_id}"), k=5),
    create_explore_memory_tool(get_memory, namespace=("memories", "{user_id}")),
    create_memory_timeline_tool(get_memory, namespace=("memories", "{user_id}")),
]


@functools.lru_cache(maxsize=8)
def _model_from_string(spec: str) -> Any:
    from langchain_ripplemem.llm.calls import resolve_chat_model

    return resolve_chat_model(spec, temperature=None)


def _prepare(state: MessagesState) -> tuple[Any, list[Any]] | AIMessage:
    """The bound model and its messages, or the explanatory reply when there is no model."""
    raw = get_runtime().context
    ctx = raw if isinstance(raw, AgentContext) else AgentContext(**dict(raw or {}))
    spec = ctx.model or os.environ.get("RIPPLEMEM_AGENT_MODEL")
    if not spec:
        return AIMessage(NO_MODEL.format(detail=""))
    try:
        model = _model_from_string(spec) if isinstance(spec, str) else spec
    except Exception as err:  # a missing provider package or API key: explain, don't crash the run
        return AIMessage(NO_MODEL.format(detail=f" Creating {spec!r} failed: {type(err).__name__}: {err}"))
    return model.bind_tools(TOOLS), [SystemMessage(ctx.system_prompt), *state["messages"]]


def agent(state: MessagesState) -> dict[str, Any]:
    """Call the model with the tools bound."""
    prepared = _prepare(state)
    if isinstance(prepared, AIMessage):
        return {"messages": [prepared]}
    bound, messages = prepared
    return {"messages": [bound.invoke(messages)]}


async def aagent(state: MessagesState) -> dict[str, Any]:
    """Async :func:`agent`."""
    prepared = _prepare(state)
    if isinstance(prepared, AIMessage):
        return {"messages": [prepared]}
    bound, messages = prepared
    return {"messages": [await bound.ainvoke(messages)]}


_builder = StateGraph(MessagesState, context_schema=AgentContext)
_builder.add_node("agent", RunnableLambda(agent, afunc=aagent, name="agent"))
_builder.add_node("tools", ToolNode(TOOLS))
_builder.add_edge(START, "agent")
_builder.add_conditional_edges("agent", tools_condition, ["tools", END])
_builder.add_edge("tools", "agent")
graph = _builder.compile(name="ripplemem_agent")
