"""One process per embedded store: an inter-process lock on the persist directory.

Embedded Chroma (``PersistentClient``) is not process-safe: each process keeps
its own HNSW segment in memory and writes it back, so two writer processes can
silently lose or corrupt vectors (Chroma's own "system constraints"). RippleMem
adds per-process caches on top (the namespace indexes and edge caches are
loaded once and then only updated by this process's writes), so a second
process on the same directory also reads stale data: its recall misses the
other's units, its ``delete`` of them deletes nothing, its links ignore them.

Hence the rule: **a persist directory belongs to one process at a time.**
:class:`StoreLock` enforces it with an exclusive, non-blocking OS lock
(``fcntl.flock``; ``msvcrt.locking`` on Windows) on ``<dir>/ripplemem.lock``:

- the memory takes it before it opens Chroma and keeps it for its lifetime;
- a second process gets :class:`StoreLockedError` at once, naming the
  directory and the holder's pid, and pointing at Chroma server mode
  (``client=chromadb.HttpClient(...)``), which is the supported setup for
  several processes;
- the OS drops the lock when the holder exits, also on ``kill -9``: no stale
  lock files to clean up;
- within one process the lock is re-entrant (counted per directory), so several
  memories or threads of one process can share a store.

Writers of one namespace are serialised across processes too, whatever the
Chroma client: :func:`namespace_writer` is a blocking OS lock on a small file
per namespace beside the edge file (``<edge file>.writers/<hash>.lock``). A
memory holds it across each write (ingest commit with linking, delete,
suppression), so processes that share a Chroma server and an edge file never
interleave two writes of one namespace; writers of other namespaces do not
wait.

Example:
    >>> import tempfile
    >>> lock = StoreLock(tempfile.mkdtemp()).acquire()
    >>> lock.locked, lock_holder(lock.directory)["pid"] == os.getpid()
    (True, True)
    >>> lock.release()

"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_ripplemem.errors import RippleMemError

LOCK_FILENAME = "ripplemem.lock"
WRITERS_SUFFIX = ".writers"  # namespace writer locks live in <edge file>.writers/

try:  # POSIX
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)

except ImportError:  # pragma: no cover - Windows
    import msvcrt

    # Windows byte-range locks are mandatory: lock one byte far past the holder
    # info so that other processes can still read who holds the store.
    _WIN_OFFSET = 1 << 20

    def _try_lock(fd: int) -> bool:
        try:
            os.lseek(fd, _WIN_OFFSET, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, _WIN_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]


class StoreLockedError(RippleMemError, RuntimeError):
    """Another process holds the store: embedded stores take one process at a time."""

    def __init__(self, directory: str | Path, holder: dict[str, Any] | None = None) -> None:
        self.directory = str(directory)
        self.holder = holder or {}
        who = (f"process {self.holder['pid']} on {self.holder.get('host', '?')}"
               if "pid" in self.holder else "another process")
        super().__init__(
            f"the RippleMem store at {self.directory!r} is in use by {who}. An embedded "
            "(persist_directory) store can be opened by one process at a time. For several "
            "processes, run a Chroma server (`chroma run --path DIR`) and pass "
            "client=chromadb.HttpClient(host, port) and a shared edges_path; or stop the other "
            "process first."
        )


@dataclass
class _Held:
    fd: int
    count: int
    pid: int


_HELD: dict[str, _Held] = {}
_REGISTRY = threading.Lock()


class StoreLock:
    """Exclusive inter-process lock on a store directory (re-entrant within a process).

    Args:
        directory: the persist directory; created if missing. The lock file is
            ``directory / LOCK_FILENAME``.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        self.path = self.directory / LOCK_FILENAME
        self._key = ""
        self._acquired = False

    @property
    def locked(self) -> bool:
        """Whether this object currently holds (its share of) the lock."""
        return self._acquired

    def acquire(self) -> StoreLock:
        """Take the lock now or raise :class:`StoreLockedError` (never blocks).

        Re-entrant per process: a second ``StoreLock`` on the same directory in
        the same process shares the lock; the OS lock goes when the last one is released.
        """
        if self._acquired:
            return self
        self.directory.mkdir(parents=True, exist_ok=True)
        key = os.path.realpath(self.path)
        with _REGISTRY:
            held = _HELD.get(key)
            if held is not None and held.pid == os.getpid():
                held.count += 1
            else:
                # A forked child inherits the registry but not the right to the store.
                fd = os.open(key, os.O_RDWR | os.O_CREAT, 0o644)
                if not _try_lock(fd):
                    holder = _read_holder(fd)
                    os.close(fd)
                    raise StoreLockedError(self.directory, holder)
                _write_holder(fd)
                _HELD[key] = _Held(fd=fd, count=1, pid=os.getpid())
        self._key, self._acquired = key, True
        return self

    def release(self) -> None:
        """Give back this object's share; the OS lock is dropped with the last share."""
        if not self._acquired:
            return
        with _REGISTRY:
            held = _HELD.get(self._key)
            self._acquired = False
            if held is None or held.pid != os.getpid():
                return
            held.count -= 1
            if held.count == 0:
                del _HELD[self._key]
                try:
                    os.ftruncate(held.fd, 0)
                    _unlock(held.fd)
                finally:
                    os.close(held.fd)

    def __enter__(self) -> StoreLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"StoreLock({str(self.directory)!r}, locked={self._acquired})"


def embedded_store_directory(client: Any) -> Path | None:
    """The directory of an embedded persistent Chroma client, ``None`` for any other client.

    For a user-supplied ``chromadb.PersistentClient``, which needs the same
    one-process rule; ``HttpClient`` and ephemeral clients return ``None``.
    """
    try:
        settings = client.get_settings()
    except Exception:  # noqa: BLE001 - not a chromadb client, or a server that is down
        return None
    if not getattr(settings, "is_persistent", False):
        return None
    if "fastapi" in str(getattr(settings, "chroma_api_impl", "")).lower():
        return None  # an HTTP client configured as persistent talks to a server, not a directory
    directory = getattr(settings, "persist_directory", None)
    return Path(directory) if directory else None


def lock_holder(directory: str | Path) -> dict[str, Any] | None:
    """Who holds the store's lock (pid, host, since, argv), or ``None`` if nobody does."""
    path = Path(directory) / LOCK_FILENAME
    if not path.exists():
        return None
    key = os.path.realpath(path)
    with _REGISTRY:
        held = _HELD.get(key)
        if held is not None and held.pid == os.getpid():
            return _read_holder(held.fd)
    fd = os.open(key, os.O_RDWR)
    try:
        if _try_lock(fd):
            _unlock(fd)
            return None
        return _read_holder(fd) or {}
    finally:
        os.close(fd)


def _write_holder(fd: int) -> None:
    info = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time(),
            "argv": sys.argv[:3]}
    try:  # who holds it is for error messages only: never fail the lock over it
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, json.dumps(info).encode())
    except OSError:
        pass


def _read_holder(fd: int) -> dict[str, Any] | None:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        data = os.read(fd, 4096)
        info = json.loads(data.decode() or "null")
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


class WriterLockTimeoutError(RippleMemError, TimeoutError):
    """Another writer held a namespace's writer lock for longer than the caller would wait."""

    def __init__(self, path: str | Path, timeout: float, holder: dict[str, Any] | None = None) -> None:
        self.path = str(path)
        self.holder = holder or {}
        who = f"process {self.holder['pid']}" if "pid" in self.holder else "another writer"
        super().__init__(f"waited {timeout:g}s for the namespace writer lock {self.path!r}, held by {who}")


class _Writer:
    """One process's hold on one namespace writer lock (its threads wait on ``lock``)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.fd: int | None = None
        self.depth = 0


# Entries live while some thread holds or waits for them; keyed per pid, as a
# forked child holds none of its parent's locks.
_WRITERS: weakref.WeakValueDictionary[tuple[int, str], _Writer] = weakref.WeakValueDictionary()


def writer_lock_path(edge_file: str | Path, namespace_key: str) -> Path:
    """The lock file of one namespace's writers, beside the edge file."""
    digest = hashlib.sha256(namespace_key.encode()).hexdigest()[:32]
    edge_file = Path(edge_file)
    return edge_file.with_name(edge_file.name + WRITERS_SUFFIX) / f"{digest}.lock"


@contextmanager
def namespace_writer(edge_file: str | Path, namespace_key: str, *,
                     timeout: float | None = None) -> Iterator[None]:
    """Hold the writer lock of one namespace of an edge file; blocks while another writer has it.

    Re-entrant within a thread. Other threads of this process wait on a thread
    lock, other processes on the OS lock (``flock``), which the OS frees when its
    holder exits, also on ``kill -9``.

    Args:
        edge_file: the SQLite edge file the namespace's writers share.
        namespace_key: the namespace's key (``schemas.namespace_key``).
        timeout: seconds to wait at most; ``None`` waits as long as the other write takes.

    Raises:
        WriterLockTimeoutError: ``timeout`` passed while another writer held the lock.
    """
    path = writer_lock_path(edge_file, namespace_key)
    path.parent.mkdir(parents=True, exist_ok=True)
    key = (os.getpid(), os.path.realpath(path))
    with _REGISTRY:
        entry = _WRITERS.get(key)
        if entry is None:
            entry = _WRITERS[key] = _Writer()
    deadline = None if timeout is None else time.monotonic() + timeout
    if not entry.lock.acquire(timeout=-1 if deadline is None else max(0.0, timeout or 0.0)):
        raise WriterLockTimeoutError(path, timeout or 0.0)
    try:
        if entry.depth == 0:
            entry.fd = _lock_file(key[1], deadline, timeout)
        entry.depth += 1
        try:
            yield
        finally:
            entry.depth -= 1
            if entry.depth == 0 and entry.fd is not None:
                fd, entry.fd = entry.fd, None
                try:
                    _unlock(fd)
                finally:
                    os.close(fd)
    finally:
        entry.lock.release()


def _lock_file(path: str, deadline: float | None, timeout: float | None) -> int:
    """Open ``path`` and take its OS lock, polling with a short backoff until ``deadline``."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    delay = 0.001
    while not _try_lock(fd):
        if deadline is not None and time.monotonic() >= deadline:
            holder = _read_holder(fd)
            os.close(fd)
            raise WriterLockTimeoutError(path, timeout or 0.0, holder)
        time.sleep(delay)
        delay = min(2 * delay, 0.05)
    _write_holder(fd)
    return fd


__all__ = ["LOCK_FILENAME", "StoreLock", "StoreLockedError", "WriterLockTimeoutError", "embedded_store_directory",
           "lock_holder", "namespace_writer", "writer_lock_path"]
