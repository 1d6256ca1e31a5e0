"""The one memory behind the served graphs (``graphs/`` for ``langgraph dev`` / LangGraph Server).

LangGraph Server loads each graph file as its own module, so a module global in
each file would give the recall, ingest and agent graphs three memories with three
stale caches. This package module is imported once per process, so its global is
shared by all three.

The memory is created on first use, never at import (loading a graph needs no
model and no API key), and never on the event loop: creating it opens files and
takes the store's lock, which LangGraph's dev server refuses on its loop
(``BlockingError``). The served graphs therefore reach it only from worker
threads: their nodes are sync functions (LangGraph runs those in a thread under
``ainvoke``), and the agent's tools move their work to a thread.

Example:
    >>> reader = ServedReader()  # compiling a graph over it creates nothing
    >>> set_memory(None)  # the next use creates the memory in $RIPPLEMEM_PERSIST

"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import networkx as nx
    import numpy as np

    from langchain_ripplemem.config import RecallConfig, WriteConfig
    from langchain_ripplemem.index.namespace_index import NamespaceIndex
    from langchain_ripplemem.memory import RippleMem
    from langchain_ripplemem.schemas import Namespace

__all__ = ["DEFAULT_PERSIST", "PERSIST_ENV", "ServedReader", "get_memory", "set_memory"]

PERSIST_ENV = "RIPPLEMEM_PERSIST"
DEFAULT_PERSIST = ".ripplemem"

_lock = threading.Lock()
_memory: RippleMem | None = None


def get_memory() -> RippleMem:
    """The process-wide memory, in ``$RIPPLEMEM_PERSIST`` (default ``./.ripplemem``); call it off the event loop."""
    global _memory
    with _lock:
        if _memory is None:
            from langchain_ripplemem.memory import RippleMem

            _memory = RippleMem(persist_directory=os.environ.get(PERSIST_ENV, DEFAULT_PERSIST))
        return _memory


def set_memory(memory: RippleMem | None) -> None:
    """Serve ``memory`` from every graph (tests, custom setups); ``None`` resets to lazy creation."""
    global _memory
    with _lock:
        _memory = memory


class ServedReader:
    """The served memory as a :class:`~langchain_ripplemem.recall.reader.MemoryReader`, created on first use."""

    @property
    def default_namespace(self) -> Namespace:
        """The served memory's default namespace."""
        return get_memory().default_namespace

    @property
    def recall_config(self) -> RecallConfig:
        """The served memory's recall settings."""
        return get_memory().recall_config

    @property
    def write_config(self) -> WriteConfig:
        """The served memory's write settings."""
        return get_memory().write_config

    def prepare(self, namespace: Namespace) -> None:
        """The served memory's reader's :meth:`~langchain_ripplemem.recall.reader.MemoryReader.prepare`."""
        get_memory().reader.prepare(namespace)

    def namespace_index(self, namespace: Namespace) -> NamespaceIndex:
        """The served memory's index of ``namespace``."""
        return get_memory().reader.namespace_index(namespace)

    def walkable_edges(self, namespace: Namespace) -> nx.Graph:
        """The served memory's edges of ``namespace``, as recall walks them."""
        return get_memory().reader.walkable_edges(namespace)

    def embed_query(self, text: str) -> np.ndarray:
        """The query's vector under the served memory's embeddings."""
        return get_memory().reader.embed_query(text)
