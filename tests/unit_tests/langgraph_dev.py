"""LangGraph's dev server, as far as blocking calls go: its BlockBuster rules and how it loads graphs.

``langgraph dev`` (langgraph-runtime-inmem 0.36, ``queue._enable_blockbuster``)
activates BlockBuster on its event loop and then lets a few call families
through (file reads and writes, ``os.stat``/``os.listdir``/``os.remove``,
``os.path.*``, ``threading.Lock.acquire``). Anything else that blocks on the
loop (``os.mkdir``, ``os.open``, ``time.sleep``, sockets, sqlite3) raises
``BlockingError`` and fails the run, unless the server runs with
``--allow-blocking``. The server loads each graph of ``langgraph.json`` from its
file path and runs it with ``astream``/``ainvoke`` on that loop.

:func:`running_dev_server` starts the real server (``langgraph dev``, from the
``server`` extra, which is no default: it downgrades grpcio/protobuf) on a free
loopback port; its tests skip when the CLI is not installed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from benchmarks.processes import stop_process_group

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


# Where the CLI is: $RIPPLEMEM_LANGGRAPH_CLI (e.g. a venv of its own, as it pins grpcio/protobuf), else PATH.
CLI_ENV = "RIPPLEMEM_LANGGRAPH_CLI"
_START_SECONDS = 120


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def running_dev_server(workdir: Path, env: dict[str, str], graphs: dict[str, str] | None = None) -> Iterator[str]:
    """``langgraph dev`` serving this checkout's ``langgraph.json`` graphs and store; yields its URL.

    It runs in ``workdir`` (its ``.langgraph_api`` state and log stay there) with a copy
    of the config whose paths are absolute, ``graphs`` (name: ``file.py:attribute``) served
    beside the checkout's, and ``env`` added to the environment.
    Skips the test when the CLI or its in-memory server is not installed.
    """
    cli = os.environ.get(CLI_ENV) or shutil.which("langgraph")
    if not cli:
        pytest.skip(f"langgraph dev is not installed (pip install -e '.[server]', or set ${CLI_ENV})")
    config = json.loads((ROOT / "langgraph.json").read_text())
    config["dependencies"] = [str(ROOT / d) for d in config["dependencies"]]
    config["graphs"] = {name: str(ROOT / spec) for name, spec in config["graphs"].items()}
    config["graphs"].update({name: str(spec) for name, spec in (graphs or {}).items()})
    (workdir / "langgraph.json").write_text(json.dumps(config))
    port, log_path = _free_port(), workdir / "server.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen(
            [cli, "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", str(port),
             "--config", str(workdir / "langgraph.json")],
            cwd=workdir, env={**os.environ, "LANGSMITH_TRACING": "false", **env}, stdout=log,
            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(server, url, log_path)
        yield url
    finally:
        stop_process_group(server, timeout=30)


def _wait_until_up(server: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
    deadline = time.monotonic() + _START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            output = log_path.read_text(errors="replace")
            if "langgraph-api" in output and "not installed" in output:
                pytest.skip("the langgraph CLI is installed without its in-memory server ('langgraph-cli[inmem]')")
            raise AssertionError(f"langgraph dev exited with {server.returncode}:\n{output[-4000:]}")
        try:
            with urllib.request.urlopen(f"{url}/ok", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"langgraph dev did not answer within {_START_SECONDS}s:\n"
                         f"{log_path.read_text(errors='replace')[-4000:]}")
