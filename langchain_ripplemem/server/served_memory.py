"""The one memory behind the served graphs (``graphs/`` for ``langgraph dev`` / LangGraph Server).

LangGraph Server loads each graph file as its own module, so a module global in
each file would give the recall, ingest and agent graphs three memories with three
stale caches. This package module is imported once per process, so its global is
shared by all three.

Where it lives comes from the environment: units and edges in the directory
``$RIPPLEMEM_PERSIST`` (default ``./.ripplemem``); with ``$RIPPLEMEM_CHROMA_HOST``
(and ``$RIPPLEMEM_CHROMA_PORT``, default 8000) units in that Chroma server; with
``$RIPPLEMEM_POSTGRES_DSN`` edges, the namespace log and the writers' turns in that
PostgreSQL database (``storage/postgres.py``, the ``[postgres]`` extra). A Chroma
server and PostgreSQL together are the shared deployment: every process and host that
serves them shares one memory. The deployment's store
(:mod:`~langchain_ripplemem.server.served_store`) is this memory too.

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
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import networkx as nx
    import numpy as np

    from langchain_ripplemem.config import RecallConfig, WriteConfig
    from langchain_ripplemem.index.namespace_index import NamespaceIndex
    from langchain_ripplemem.memory import RippleMem
    from langchain_ripplemem.schemas import Namespace

__all__ = ["CHROMA_HOST_ENV", "CHROMA_PORT_ENV", "DEFAULT_PERSIST", "PERSIST_ENV", "POSTGRES_ENV", "ServedReader",
           "get_memory", "open_deployment", "open_served_memory", "set_memory"]

PERSIST_ENV = "RIPPLEMEM_PERSIST"
DEFAULT_PERSIST = ".ripplemem"
CHROMA_HOST_ENV, CHROMA_PORT_ENV = "RIPPLEMEM_CHROMA_HOST", "RIPPLEMEM_CHROMA_PORT"
POSTGRES_ENV = "RIPPLEMEM_POSTGRES_DSN"

_lock = threading.Lock()
_memory: RippleMem | None = None


def get_memory() -> RippleMem:
    """The process-wide memory, where the environment says (:func:`open_served_memory`); call it off the event loop."""
    global _memory
    with _lock:
        if _memory is None:
            _memory = open_served_memory(dict(os.environ))
        return _memory


def open_served_memory(environ: dict[str, str]) -> RippleMem:
    """A memory where ``environ`` says: ``$RIPPLEMEM_PERSIST``, a Chroma server, PostgreSQL (see the module docs).

    Raises:
        ValueError: naming ``$RIPPLEMEM_CHROMA_PORT`` when it is not a port number.
    """
    host, port = environ.get(CHROMA_HOST_ENV) or None, environ.get(CHROMA_PORT_ENV) or "8000"
    if host and (not port.isdigit() or not 0 < int(port) < 65536):
        raise ValueError(f"${CHROMA_PORT_ENV} must be a port number (1-65535), got {port!r}")
    return open_deployment(persist=environ.get(PERSIST_ENV) or DEFAULT_PERSIST, chroma_host=host,
                           chroma_port=int(port) if host else 8000, postgres_dsn=environ.get(POSTGRES_ENV) or None)


def open_deployment(*, persist: str | Path, chroma_host: str | None = None, chroma_port: int = 8000,
                    edges_path: str | Path | None = None, postgres_dsn: str | None = None,
                    **memory_kwargs: Any) -> RippleMem:
    """A memory over a deployment: embedded in ``persist``, or units in a Chroma server, edges in PostgreSQL.

    Args:
        persist: the embedded store's directory; with ``chroma_host`` and no ``postgres_dsn``, where the
            edge file goes (``edges_path``, default ``ripplemem_edges.sqlite3`` in it).
        chroma_host: units in this Chroma server instead of embedded Chroma.
        chroma_port: its port.
        edges_path: the edge file with ``chroma_host`` (no ``postgres_dsn``).
        postgres_dsn: edges, the namespace log and the writers' turns in this PostgreSQL database.
        memory_kwargs: more :class:`~langchain_ripplemem.memory.RippleMem` arguments (``llm``, ``recall_config``).

    Raises:
        ValueError: naming ``chroma_port`` when it is not a port number.
    """
    from langchain_ripplemem.memory import RippleMem
    from langchain_ripplemem.storage.sqlite import EDGES_FILENAME

    if chroma_host and not 0 < chroma_port < 65536:
        raise ValueError(f"chroma_port must be a port number (1-65535), got {chroma_port}")
    edge_backend = None
    if postgres_dsn:
        from langchain_ripplemem.storage.postgres import PostgresEdgeBackend

        edge_backend = PostgresEdgeBackend(postgres_dsn)
    if not chroma_host:
        return RippleMem(persist_directory=Path(persist), edge_backend=edge_backend, **memory_kwargs)
    import chromadb
    from chromadb.config import Settings

    client = chromadb.HttpClient(host=chroma_host, port=chroma_port, settings=Settings(anonymized_telemetry=False))
    if edge_backend is not None:
        return RippleMem(client=client, edge_backend=edge_backend, **memory_kwargs)
    edges_file = Path(edges_path) if edges_path is not None else Path(persist) / EDGES_FILENAME
    edges_file.parent.mkdir(parents=True, exist_ok=True)
    return RippleMem(client=client, edges_path=edges_file, **memory_kwargs)


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
