"""The one memory behind the served graphs (``graphs/`` for ``langgraph dev`` / LangGraph Server).

LangGraph Server loads each graph file as its own module, so a module global in
each file would give the recall, ingest and agent graphs three memories with three
stale caches. This package module is imported once per process, so its global is
shared by all three. The memory is created on first use, never at import: loading
a graph needs no model and no API key.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_ripplemem.memory import RippleMemory

PERSIST_ENV = "RIPPLEMEM_PERSIST"
DEFAULT_PERSIST = ".ripplemem"

_lock = threading.Lock()
_memory: RippleMemory | None = None


def get_memory() -> RippleMemory:
    """The process-wide memory, in ``$RIPPLEMEM_PERSIST`` (default ``./.ripplemem``)."""
    global _memory
    with _lock:
        if _memory is None:
            from langchain_ripplemem.memory import RippleMemory

            _memory = RippleMemory(persist_directory=os.environ.get(PERSIST_ENV, DEFAULT_PERSIST))
        return _memory


def set_memory(memory: RippleMemory | None) -> None:
    """Serve ``memory`` from every graph (tests, custom setups); ``None`` resets to lazy creation."""
    global _memory
    with _lock:
        _memory = memory


class LazyMemory:
    """Stands in for the memory when a graph is compiled; any attribute use creates the real one."""

    def __getattr__(self, name: str) -> Any:
        return getattr(get_memory(), name)
