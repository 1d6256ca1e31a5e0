"""Stopping a server a test started in its own session (``start_new_session=True``)."""

from __future__ import annotations

import os
import signal
import subprocess


def stop_process_group(proc: subprocess.Popen[bytes], timeout: float = 15) -> None:
    """SIGTERM the process's group (the server and anything it started), SIGKILL it after ``timeout`` s."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=timeout)
