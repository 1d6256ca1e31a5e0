"""How ``ripplemem ui`` reaches the memory without keeping an embedded store from its writers.

An embedded store (``--persist DIR`` alone) belongs to one process at a time
(:class:`~langchain_ripplemem.storage.locks.StoreLock`). The page therefore opens it
when a request comes and closes it once no request has come for ``idle`` seconds
(default :data:`IDLE_SECONDS`): a page left open holds nothing, and a writer that opens the
store for its writes (``ripplemem ingest``, a script) takes its turn between the
page's requests. A process that keeps the store open for its lifetime (``ripplemem
mcp``, a LangGraph server) holds it all the time: the page then answers that the
store is in use, naming the process. To look at a memory while such a process writes,
run both on a shared deployment (a Chroma server, with PostgreSQL or an edge file):
there no process owns the store, the page keeps one memory open and catches up with
the others' writes on every request, and only a forget takes a namespace's writer lock.

Example:
    >>> from langchain_ripplemem.memory import RippleMem
    >>> access = MemoryAccess(RippleMem, per_use=True, idle=0)
    >>> with access.use() as memory:
    ...     access.is_open
    True
    >>> access.is_open  # closed as the last use ended
    False
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langchain_ripplemem.memory import RippleMem

__all__ = ["IDLE_SECONDS", "MemoryAccess"]

# A page's first paint asks for the namespaces, one namespace's overview and its first timeline page in a
# burst: held for this long after a request, the store is opened once for the burst, not once a request.
IDLE_SECONDS = 1.0


class MemoryAccess:
    """The memory the page reads and forgets in, opened as the deployment allows.

    Args:
        open_memory: opens the memory (called again after each close when ``per_use``).
        per_use: open for requests and close when idle (an embedded store); otherwise keep it open.
        idle: seconds without a request after which a ``per_use`` memory is closed (0: at once).
    """

    def __init__(self, open_memory: Callable[[], RippleMem], *, per_use: bool, idle: float = IDLE_SECONDS) -> None:
        if idle < 0:
            raise ValueError(f"idle must be at least 0 seconds, got {idle}")
        self._open, self.per_use, self.idle = open_memory, per_use, idle
        self._memory: RippleMem | None = None
        self._users = 0
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self.opened = 0  # how many times the memory was opened (the benchmark reports it)

    @classmethod
    def held(cls, memory: RippleMem) -> MemoryAccess:
        """Serve ``memory`` as it is, kept open (a shared deployment, or a memory made in this process)."""
        return cls(lambda: memory, per_use=False)

    @property
    def is_open(self) -> bool:
        """Whether the memory is open now."""
        return self._memory is not None

    @contextmanager
    def use(self) -> Iterator[RippleMem]:
        """The memory for one request; a ``per_use`` memory is opened first if it is closed.

        Raises:
            StoreLockedError: another process holds the embedded store.
        """
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self._memory is None:
                self._memory = self._open()
                self.opened += 1
            self._users += 1
            memory = self._memory
        try:
            yield memory
        finally:
            with self._lock:
                self._users -= 1
                if self.per_use and not self._users:
                    if self.idle == 0:
                        self._close_locked()
                    else:
                        self._timer = threading.Timer(self.idle, self._close_if_idle)
                        self._timer.daemon = True
                        self._timer.start()

    def _close_if_idle(self) -> None:
        with self._lock:
            if not self._users:
                self._close_locked()

    def _close_locked(self) -> None:
        memory, self._memory = self._memory, None
        if memory is not None:
            memory.close()

    def close(self) -> None:
        """Close the memory (when the server stops)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._close_locked()
