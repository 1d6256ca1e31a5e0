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

import os
import sys
import threading
from types import ModuleType
from typing import Any

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.recall import build_recall_graph

_SLOT = "ripplemem_graphs_shared"


def _shared() -> Any:
    # The server loads each graph file as its own module, so a module global would give
    # recall, ingest and agent three memories with three stale caches. One process-wide
    # slot (the same in all three files) holds the single shared memory.
    slot = sys.modules.setdefault(_SLOT, ModuleType(_SLOT))
    slot.__dict__.setdefault("lock", threading.Lock())
    return slot


def get_memory() -> Any:
    """The process-wide ``RippleMemory`` of the served graphs, created on first use."""
    shared = _shared()
    with shared.lock:
        if getattr(shared, "memory", None) is None:
            from langchain_ripplemem.memory import RippleMemory

            shared.memory = RippleMemory(persist_directory=os.environ.get("RIPPLEMEM_PERSIST", ".ripplemem"))
        return shared.memory


def set_memory(memory: Any) -> None:
    """Use ``memory`` for every served graph (tests, custom setups); ``None`` resets."""
    shared = _shared()
    with shared.lock:
        shared.memory = memory


class _LazyMemory:
    """Stands in for the memory at compile time; any attribute use creates the real one."""

    def __getattr__(self, name: str) -> Any:
        return getattr(get_memory(), name)


# An explicit config means compiling reads nothing from the memory.
graph = build_recall_graph(_LazyMemory(), config=RecallConfig())  # type: ignore[arg-type]
