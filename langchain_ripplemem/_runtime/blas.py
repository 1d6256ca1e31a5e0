"""Matrix products on one BLAS thread: the package's products are small, and spare BLAS threads spin.

numpy's OpenBLAS splits any product past a small size (a 30 x 384 matrix times a
vector) over every core, and after each call its worker threads busy-wait for a
while before they sleep. The package's products (a query against a namespace's
vectors, a write's new vectors against the earlier ones) take milliseconds, so on
a busy server those spinning threads only take CPU from the request that is
working: with three writer processes on two cores, writes took twice as long
(``docs/scale.md``), and a product on one thread is as fast as on two even alone.
Servers get their parallelism from concurrent requests, not from one product.

:func:`one_thread` holds numpy's BLAS to one thread while any thread of the
process is inside it (counted, so overlapping callers restore the user's setting
only when the last one leaves); :func:`product` is ``a @ b`` inside it. Without
``threadpoolctl``, or when no BLAS library can be controlled, both are plain.

Example:
    >>> import numpy as np
    >>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> product(a, np.ones(3, dtype=np.float32)).tolist()
    [3.0, 12.0]
    >>> with one_thread():
    ...     (a @ a.T).shape
    (2, 2)

"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

__all__ = ["one_thread", "product"]

_lock = threading.Lock()
_depth = 0  # threads inside one_thread()
_limiter: Any = None  # threadpoolctl's limiter while _depth > 0 (it restores the user's setting)
_controller: Any = None  # found on first use: looking for BLAS libraries costs a few milliseconds


def _blas_controller() -> Any:
    global _controller
    if _controller is None:
        try:
            from threadpoolctl import ThreadpoolController

            _controller = ThreadpoolController().select(user_api="blas")
        except Exception:  # noqa: BLE001 - not installed, or libraries it cannot read: stay plain
            _controller = False
    return _controller


def _release_control(controller: Any) -> None:
    """Let the calling thread change OpenBLAS's process-wide pool (threadpoolctl 3.8 and later).

    From 3.8, only the first thread that sets an OpenBLAS limit may change it until that
    thread clears its claim; any other thread's change silently does nothing. Here the
    thread that sets the limit and the one that restores it (the last to leave) differ,
    so the claim is cleared around each change, under ``_lock``.
    """
    for library in controller.lib_controllers:
        clear = getattr(type(library), "clear_controlling_thread", None)  # absent before 3.8
        if clear is not None:
            clear(force=True)


@contextmanager
def one_thread() -> Iterator[None]:
    """Run numpy's BLAS on one thread inside the block (re-entrant, thread-safe)."""
    global _depth, _limiter
    with _lock:
        if _depth == 0:
            controller = _blas_controller()
            if controller:
                _release_control(controller)
                _limiter = controller.limit(limits=1)
                _release_control(controller)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _limiter is not None:
                _release_control(_controller)
                _limiter.restore_original_limits()
                _release_control(_controller)
                _limiter = None


def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` on one BLAS thread: the same values, but for the last bits of a matrix product with numpy < 2.4.5.

    Its OpenBLAS sums such a product in another order on one thread than on several (from numpy 2.4.5 on,
    the values are the same bit for bit); a matrix times a vector is the same in every version tested.
    """
    with one_thread():
        return np.asarray(a @ b)
