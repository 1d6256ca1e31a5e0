"""Give freed heap memory back to the operating system, so resident memory follows the cache bounds.

CPython hands freed objects back to the C allocator, which keeps their pages for
reuse: after a namespace's index is loaded (Chroma's reply is several times the
index it becomes) or evicted from a cache, the process stays as large as it
was at its peak. On glibc (Linux), ``malloc_trim`` returns the free pages; a
10k-memory index's load left 96 MB that a trim gave back. Elsewhere (macOS,
Windows, musl) nothing happens.

Example:
    >>> released = freed(0)  # notes 0 bytes: far from the next trim
    >>> released
    False
    >>> isinstance(trim(), bool)
    True

"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import threading
from collections.abc import Callable

__all__ = ["TRIM_AFTER_BYTES", "freed", "trim"]

# Freed bytes (estimated) between two trims: a trim walks the heap, so not after every small eviction.
TRIM_AFTER_BYTES = 16 * 2**20

_lock = threading.Lock()
_pending = [0]  # bytes noted as freed since the last trim
_resolved: list[Callable[[int], int] | None] = []  # glibc's malloc_trim, or None; looked up on first use


def _malloc_trim() -> Callable[[int], int] | None:
    if not _resolved:
        function = None
        if sys.platform.startswith("linux"):
            try:
                function = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
                function.argtypes, function.restype = [ctypes.c_size_t], ctypes.c_int
            except (OSError, AttributeError):  # no libc to load, or not glibc (musl has no malloc_trim)
                function = None
        _resolved.append(function)
    return _resolved[0]


def trim() -> bool:
    """Return the allocator's free pages to the operating system now; whether this platform can."""
    function = _malloc_trim()
    if function is None:
        return False
    with _lock:
        _pending[0] = 0
    function(0)
    return True


def freed(nbytes: int) -> bool:
    """Note that about ``nbytes`` were just freed; trim once :data:`TRIM_AFTER_BYTES` have been. Whether it trimmed."""
    with _lock:
        _pending[0] += max(0, int(nbytes))
        due = _pending[0] >= TRIM_AFTER_BYTES
    return trim() if due else False
