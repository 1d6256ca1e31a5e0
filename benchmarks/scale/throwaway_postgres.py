"""A throwaway PostgreSQL cluster: ``initdb`` + ``pg_ctl`` in a temporary directory.

The integration tests, ``edge_reads`` and ``soak --postgres local`` start one.

PostgreSQL refuses to run as root, so under root (CI) the cluster belongs to
the ``postgres`` system user and its commands run through ``runuser``; as any
other user they run directly. The server listens on a free port of 127.0.0.1
only, with ``trust`` authentication and ``fsync`` off (test data is
disposable), and is stopped with ``-m immediate`` at the end.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PostgresServer", "postgres_bindir", "start_postgres", "stop_postgres"]

STARTUP_TIMEOUT = 60  # hang guard for a slow machine, not a performance threshold
SERVICE_USER = "postgres"


@dataclass(frozen=True)
class PostgresServer:
    """A running cluster: where it listens, its directory and how to reach it."""

    host: str
    port: int
    directory: Path
    bindir: Path
    user: str | None  # the system user it runs as (None: the current user)

    @property
    def dsn(self) -> str:
        """A libpq connection string for the ``postgres`` database as the ``postgres`` role."""
        return f"postgresql://postgres@{self.host}:{self.port}/postgres"


def postgres_bindir() -> Path | None:
    """The newest ``/usr/lib/postgresql/<version>/bin`` with ``initdb``, else the one on PATH."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _run(cmd: list[str], user: str | None, timeout: float) -> subprocess.CompletedProcess[str]:
    full = ["runuser", "-u", user, "--", *cmd] if user else cmd
    return subprocess.run(full, capture_output=True, text=True, timeout=timeout, cwd="/")


def start_postgres(host: str = "127.0.0.1") -> PostgresServer:
    """Create and start a cluster; raise RuntimeError saying why when that is impossible."""
    bindir = postgres_bindir()
    if bindir is None:
        raise RuntimeError("PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    user = None
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            raise RuntimeError("running as root, and `runuser` is missing to start PostgreSQL as another user")
        try:
            account = pwd.getpwnam(SERVICE_USER)
        except KeyError:
            raise RuntimeError(f"running as root, and there is no {SERVICE_USER!r} user to run PostgreSQL") from None
        user = SERVICE_USER
    directory = Path(tempfile.mkdtemp(prefix="ripplemem-pg-"))
    if user is not None:
        os.chown(directory, account.pw_uid, account.pw_gid)
    data, log = directory / "data", directory / "server.log"
    init = _run([str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", "--no-sync",
                 "-E", "UTF8", "--locale=C"], user, STARTUP_TIMEOUT)
    if init.returncode != 0:
        shutil.rmtree(directory, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {(init.stderr or init.stdout)[-1500:]}")
    port = _free_port(host)
    options = f"-h {host} -p {port} -k {directory} -c fsync=off -c full_page_writes=off -c max_connections=200"
    started = _run([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w",
                    "-t", str(STARTUP_TIMEOUT), "start"], user, STARTUP_TIMEOUT + 10)
    server = PostgresServer(host=host, port=port, directory=directory, bindir=bindir, user=user)
    if started.returncode != 0:
        tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
        stop_postgres(server)
        raise RuntimeError(f"pg_ctl start failed: {(started.stderr or started.stdout)[-800:]}\n{tail}")
    return server


def stop_postgres(server: PostgresServer) -> None:
    """Stop the cluster (immediately: its data is thrown away) and remove its directory."""
    data = server.directory / "data"
    if (data / "postmaster.pid").exists():
        _run([str(server.bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"], server.user, 60)
    shutil.rmtree(server.directory, ignore_errors=True)
