"""Real local services for the integration tests: a Chroma server (``chroma run``) and PostgreSQL.

The Chroma server is started once per session on a free port with telemetry off,
and is waited for (bounded) until its heartbeat answers; tests are skipped with the
reason, and the server log's tail, if it cannot start. It is terminated at the end.
PostgreSQL is a throwaway cluster of its own (``benchmarks/scale/throwaway_postgres.py``), skipped likewise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks.processes import free_port, stop_process_group
from benchmarks.scale.throwaway_postgres import PostgresServer, start_postgres, stop_postgres

STARTUP_TIMEOUT = 60.0  # hang guard for a slow machine, not a performance threshold


@dataclass(frozen=True)
class ChromaServer:
    """Where the test server listens, its data directory and its process."""

    host: str
    port: int
    path: Path
    process: subprocess.Popen[bytes]

    def client(self):  # noqa: ANN201 - chromadb.HttpClient
        import chromadb
        from chromadb.config import Settings

        return chromadb.HttpClient(host=self.host, port=self.port,
                                   settings=Settings(anonymized_telemetry=False))


def chroma_executable() -> str | None:
    """The ``chroma`` CLI next to this interpreter, else on PATH."""
    local = Path(sys.executable).with_name("chroma")
    return str(local) if local.exists() else shutil.which("chroma")


def start_chroma_server(path: Path, host: str = "127.0.0.1", port: int | None = None,
                        timeout: float = STARTUP_TIMEOUT) -> ChromaServer:
    """Start ``chroma run`` and wait for its heartbeat; raise RuntimeError (with the log) if it fails."""
    import chromadb

    exe = chroma_executable()
    if exe is None:
        raise RuntimeError("the `chroma` CLI (from the chromadb package) is not installed")
    port = port or free_port(host)
    path.mkdir(parents=True, exist_ok=True)
    log = path.parent / f"chroma-{port}.log"
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False", "CHROMA_TELEMETRY": "False"}
    with open(log, "wb") as out:
        proc = subprocess.Popen([exe, "run", "--path", str(path), "--host", host, "--port", str(port)],
                                stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    server = ChromaServer(host=host, port=port, path=path, process=proc)
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            chromadb.HttpClient(host=host, port=port).heartbeat()
            return server
        except Exception as err:  # noqa: BLE001 - not up yet
            last = err
            time.sleep(0.2)
    stop_chroma_server(server)
    tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
    raise RuntimeError(f"Chroma server did not answer on {host}:{port} (exit code {proc.poll()}, "
                       f"last error {last!r}); log tail:\n{tail}")


def stop_chroma_server(server: ChromaServer) -> None:
    stop_process_group(server.process)


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    """A running local Chroma server for the whole session (skips if it cannot start)."""
    try:
        import chromadb  # noqa: F401
    except ImportError:
        pytest.skip("chromadb is not installed")
    try:
        server = start_chroma_server(tmp_path_factory.mktemp("chroma") / "data")
    except (RuntimeError, OSError) as err:
        pytest.skip(f"cannot start a local Chroma server: {err}")
    try:
        yield server
    finally:
        stop_chroma_server(server)


@pytest.fixture
def collection_name() -> str:
    """A fresh collection per test: tests on one server never see each other's units."""
    return f"it-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A running throwaway PostgreSQL cluster for the whole session (skips, with the reason, if it cannot start)."""
    try:
        server = start_postgres()
    except (RuntimeError, OSError, subprocess.SubprocessError) as err:
        pytest.skip(f"cannot start a local PostgreSQL server: {err}")
    try:
        yield server
    finally:
        stop_postgres(server)
