"""The LangGraph deployment's long-term store: a RippleMemStore over the served memory.

LangGraph Server (``langgraph dev``, a deployment) gives every graph it serves one
store, ``runtime.store`` in nodes, which clients reach through the server's
``/store`` endpoints. ``langgraph.json`` names this factory as that store::

    "store": {"path": "langchain_ripplemem.server.served_store.served_store",
              "ttl": {"default_ttl": 1440, "refresh_on_read": true, "sweep_interval_minutes": 60}}

(langgraph-api 0.16 reads ``store.path``: a file as ``./file.py:name``, a module as
``package.module.name``, dots only, for it splits the last dot off; it calls what it finds
and enters the async context manager that returns). The store is
:class:`~langchain_ripplemem.stores.RippleMemStore` over the memory the served graphs
use (:mod:`~langchain_ripplemem.server.served_memory`: a directory, or a Chroma server
and PostgreSQL), so an agent that remembers through ``runtime.store`` and the
``recall``/``ingest``/``agent`` graphs remember in one place. ``store.ttl``, which the
CLI hands the server as ``$LANGGRAPH_STORE``, is the store's ``TTLConfig``; the server
runs no sweeper for a custom store, so this factory runs one (one per process) when
``sweep_interval_minutes`` is set. ``store.index`` is for LangGraph's built-in store
and is ignored: the memory embeds with its own model.

Example:
    >>> import asyncio
    >>> from langchain_ripplemem import RippleMem
    >>> from langchain_ripplemem.server.served_memory import set_memory
    >>> set_memory(RippleMem())  # what get_memory() serves (tests, custom setups)
    >>> async def main():
    ...     async with served_store() as store:
    ...         await store.aput(("users", "maya"), "diet", {"text": "Maya is vegetarian."})
    ...         return (await store.aget(("users", "maya"), "diet")).value
    >>> asyncio.run(main())
    {'text': 'Maya is vegetarian.'}
    >>> set_memory(None)

"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from langgraph.store.base import TTLConfig

from langchain_ripplemem.server.served_memory import get_memory
from langchain_ripplemem.stores import RippleMemStore

__all__ = ["STORE_CONFIG_ENV", "served_store", "store_ttl"]

#: Where LangGraph's CLI passes ``langgraph.json``'s ``store`` section to the server, as JSON.
STORE_CONFIG_ENV = "LANGGRAPH_STORE"

_sweeping_lock = threading.Lock()
_sweeping: list[RippleMemStore] = []  # the one store of this process whose sweeper runs


def store_ttl(environ: Mapping[str, str]) -> TTLConfig | None:
    """The ``ttl`` of ``langgraph.json``'s ``store`` section, as the CLI passed it in ``environ``.

    Raises:
        ValueError: naming ``$LANGGRAPH_STORE`` when it is not a JSON object.

    Example:
        >>> store_ttl({"LANGGRAPH_STORE": '{"path": "x:y", "ttl": {"default_ttl": 60}}'})
        {'default_ttl': 60}
        >>> store_ttl({}) is None
        True
    """
    raw = environ.get(STORE_CONFIG_ENV)
    if not raw:
        return None
    try:
        section: Any = json.loads(raw)
    except json.JSONDecodeError as err:
        raise ValueError(f"${STORE_CONFIG_ENV} must be a JSON object (langgraph.json's store section): {err}") from None
    if not isinstance(section, dict):
        raise ValueError(f"${STORE_CONFIG_ENV} must be a JSON object (langgraph.json's store section), got {raw!r}")
    return section.get("ttl")  # type: ignore[no-any-return]


@asynccontextmanager
async def served_store() -> AsyncIterator[RippleMemStore]:
    """A RippleMemStore over the served memory, its TTL settings from ``$LANGGRAPH_STORE``.

    The memory is created (or found) in a worker thread, never on the server's event loop,
    and stays open after the store's context ends: the served graphs share it.
    """
    store = RippleMemStore(await asyncio.to_thread(get_memory), ttl=store_ttl(os.environ))
    with _sweeping_lock:
        sweeps = not _sweeping and bool((store.ttl_config or {}).get("sweep_interval_minutes"))
        if sweeps:
            _sweeping.append(store)
            store.start_ttl_sweeper()
    try:
        yield store
    finally:
        if sweeps:
            await asyncio.to_thread(store.stop_ttl_sweeper)
            with _sweeping_lock:
                _sweeping.remove(store)
