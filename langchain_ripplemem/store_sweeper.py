"""A store's TTL settings, and the background thread that erases its expired items.

:class:`TTLSweeper` calls a sweep function every interval on a daemon thread until
stopped, like LangGraph's ``PostgresStore.start_ttl_sweeper`` (whose ``Future``
it returns too). A failed sweep is logged and the next one runs on time.

Example:
    >>> import threading
    >>> swept = threading.Event()
    >>> sweeper = TTLSweeper(lambda: swept.set() or 0, seconds=0.01)
    >>> swept.wait(5), sweeper.stop(timeout=5), sweeper.future.done()
    (True, True, True)
    >>> ttl_config({"default_ttl": 60, "refresh_on_read": False})
    {'default_ttl': 60.0, 'refresh_on_read': False}

"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

from langgraph.store.base import TTLConfig

from langchain_ripplemem.store_items import check_ttl

__all__ = ["TTLSweeper", "ttl_config"]

_log = logging.getLogger(__name__)
_FLAGS = ("refresh_on_read", "omit_expired")
_MINUTES = ("default_ttl", "sweep_interval_minutes")


def ttl_config(ttl: object) -> TTLConfig | None:
    """A copy of a ``TTLConfig`` after checking it; ``ValueError`` naming ``ttl`` and the bad key otherwise."""
    if ttl is None:
        return None
    if not isinstance(ttl, Mapping):
        raise ValueError(f"ttl must be a TTLConfig dict ({', '.join(_FLAGS + _MINUTES)}), got {ttl!r}")
    unknown = sorted(set(ttl) - set(_FLAGS + _MINUTES))
    if unknown:
        raise ValueError(f"ttl: unknown keys {unknown}; a TTLConfig has {', '.join(_FLAGS + _MINUTES)}")
    out: dict[str, Any] = {}
    for key, value in ttl.items():
        if key in _FLAGS:
            if not isinstance(value, bool):
                raise ValueError(f"ttl[{key!r}] must be True or False, got {value!r}")
            out[key] = value
        else:
            out[key] = check_ttl(value, f"ttl[{key!r}]")
    return out  # type: ignore[return-value]


class TTLSweeper:
    """Run ``sweep`` every ``seconds`` on a daemon thread until :meth:`stop`; ``future`` is done when it ends."""

    def __init__(self, sweep: Callable[[], int], *, seconds: float) -> None:
        self.future: Future[None] = Future()
        self._stop = threading.Event()
        self._sweep, self._seconds = sweep, seconds
        self._thread = threading.Thread(target=self._run, name="ripplemem-ttl-sweeper", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        """Whether the thread still sweeps."""
        return self._thread.is_alive() and not self._stop.is_set()

    def stop(self, timeout: float | None = None) -> bool:
        """Ask the thread to end and wait up to ``timeout`` seconds; whether it has ended."""
        self._stop.set()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        try:
            while not self._stop.wait(self._seconds):
                try:
                    erased = self._sweep()
                    if erased:
                        _log.info("TTL sweep erased %d expired store items", erased)
                except Exception:  # the next sweep runs on time; this one is logged
                    _log.exception("TTL sweep failed")
        finally:
            self.future.set_result(None)
