"""The ``recall`` graph for LangGraph Server / ``langgraph dev``: recollection over a shared memory.

Input ``{"query": "..."}``; output ``{"result": RecallResult}``. Settings come
through the run context (``RecallContext``): ``{"namespace": ["users", "maya"],
"config": {"max_rounds": 2}, "reference_time": "2026-05-01T00:00:00Z"}``.

The memory lives in ``$RIPPLEMEM_PERSIST`` (default ``./.ripplemem``) and is
created on the first run, not at import: loading this module needs no model and
no API key. Recollection here is the offline default (rule-based cues, heuristic
controller); for an LLM controller build your own graph with
``build_recall_graph(memory, llm="provider:model")``.
"""

from __future__ import annotations

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.recall import build_recall_graph
from langchain_ripplemem.served_memory import LazyMemory, get_memory, set_memory

# An explicit config means compiling reads nothing from the memory.
graph = build_recall_graph(LazyMemory(), config=RecallConfig())  # type: ignore[arg-type]

__all__ = ["get_memory", "graph", "set_memory"]
