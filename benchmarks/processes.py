"""Servers a benchmark (or a test) starts and stops: a free local port, and stopping a process group."""

from __future__ import annotations

import os
import signal
import socket
import subprocess

__all__ = ["free_port", "stop_process_group"]


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port on ``host`` that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


def stop_process_group(proc: subprocess.Popen[bytes], timeout: float = 15) -> None:
    """SIGTERM the process's group (started with ``start_new_session=True``), SIGKILL it after ``timeout`` s."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=timeout)
