"""The ``recall`` graph for LangGraph Server / ``langgraph dev``: recollection over a shared memory.

Input ``{"query": "..."}``; output ``{"result": RecallResult}``. Settings come
through the run context (``RecallContext``): ``{"namespace": ["users", "maya"],
"config": {"controller": {"max_rounds": 2}}, "reference_time": "2026-05-01T00:00:00Z"}``; what it
leaves out is the served memory's (its default namespace and recall settings). The recall filter,
``"since"``, ``"until"``, ``"speakers"``, ``"conversation_id"`` (``docs/filters.md``), goes in the
input next to the query (``{"query": "...", "since": "last week", "speakers": ["Maya"]}``, that run
only) or in the context; a field the input gives wins over the context's.

The memory lives in ``$RIPPLEMEM_PERSIST`` (default ``./.ripplemem``) and is
created on the first run, not at import: loading this module needs no model and
no API key. Recollection here is the offline default (rule-based cues, heuristic
controller); for an LLM controller build your own graph with
``build_recall_graph(memory.reader, llm="provider:model")``.
"""

from __future__ import annotations

from langchain_ripplemem.recall import build_recall_graph
from langchain_ripplemem.server.served_memory import ServedReader, get_memory, set_memory

# Compiling reads nothing from the memory: the first run creates it, in a worker thread.
graph = build_recall_graph(ServedReader())

__all__ = ["get_memory", "graph", "set_memory"]
