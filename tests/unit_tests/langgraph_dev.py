"""LangGraph's dev server, as far as blocking calls go: its BlockBuster rules and how it loads graphs.

``langgraph dev`` (langgraph-runtime-inmem 0.36, ``queue._enable_blockbuster``)
activates BlockBuster on its event loop and then lets a few call families
through (file reads and writes, ``os.stat``/``os.listdir``/``os.remove``,
``os.path.*``, ``threading.Lock.acquire``). Anything else that blocks on the
loop (``os.mkdir``, ``os.open``, ``time.sleep``, sockets, sqlite3) raises
``BlockingError`` and fails the run, unless the server runs with
``--allow-blocking``. The server loads each graph of ``langgraph.json`` from its
file path and runs it with ``astream``/``ainvoke`` on that loop.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

# What langgraph-runtime-inmem deactivates after creating its BlockBuster.
_ALLOWED = ("os.stat", "os.listdir", "os.remove", "io.BufferedReader.read", "io.BufferedWriter.write",
            "io.TextIOWrapper.read", "io.TextIOWrapper.write", "threading.Lock.acquire")


@contextmanager
def dev_server_blocking_rules() -> Iterator[Any]:
    """BlockBuster configured as ``langgraph dev`` configures it (without ``--allow-blocking``)."""
    from blockbuster import BlockBuster

    buster = BlockBuster(excluded_modules=[])
    allowed = [*_ALLOWED, *(name for name in buster.functions if name.startswith("os.path."))]
    for name in allowed:
        function = buster.functions.pop(name, None)
        if function is not None:
            function.deactivate()
    buster.activate()
    try:
        yield buster
    finally:
        buster.deactivate()


def load_served_graph(name: str) -> Any:
    """The compiled graph ``name`` of ``langgraph.json``, loaded from its file as the server does."""
    spec_text = json.loads((ROOT / "langgraph.json").read_text())["graphs"][name]
    path, attribute = spec_text.split(":")
    spec = importlib.util.spec_from_file_location(f"served_{name}", ROOT / path)
    assert spec is not None and spec.loader is not None
    module: ModuleType = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as the server registers it (dataclasses look their module up)
    spec.loader.exec_module(module)
    return getattr(module, attribute)
