"""One driver for the package's request/answer generators, sync and async; async twins of sync methods.

Where sync and async code would otherwise be written twice, the logic is a
generator that yields each request it needs and receives the answer (an LLM
call in :mod:`~langchain_ripplemem.llm.calls`, a memory call in
:mod:`~langchain_ripplemem.stores`). :func:`drive` runs it with a sync
``call``, :func:`adrive` with an async one; the generator's return value is
the result. A method with nothing to wait on but storage and CPU gets its async
twin from :func:`async_twin`: the sync method itself, run in a worker thread
(LangChain's own default for an async method not written natively).

Example:
    >>> def doubled(n):
    ...     total = 0
    ...     for i in range(n):
    ...         total += yield i  # ask for an answer about i
    ...     return total
    >>> drive(doubled(3), lambda i: 2 * i)
    6

"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any, Concatenate, ParamSpec, TypeVar

__all__ = ["adrive", "async_twin", "drive"]

Q = TypeVar("Q")
R = TypeVar("R")
S = TypeVar("S")
P = ParamSpec("P")


def drive(steps: Generator[Q, Any, R], call: Callable[[Q], Any]) -> R:
    """Answer each request of ``steps`` with ``call(request)`` until it returns; its return value."""
    try:
        request = next(steps)
        while True:
            request = steps.send(call(request))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def adrive(steps: Generator[Q, Any, R], call: Callable[[Q], Awaitable[Any]]) -> R:
    """Async :func:`drive`: each answer is ``await call(request)``."""
    try:
        request = next(steps)
        while True:
            request = steps.send(await call(request))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def async_twin(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], Coroutine[Any, Any, R]]:
    """The async twin of a sync method: the same method, run in a worker thread (one path for both).

    Context variables (callbacks, tracing) follow the call into the thread. The twin is named
    ``a<name>`` and takes the method's arguments.

    Example:
        >>> class Counter:
        ...     def add(self, n: int) -> int:
        ...         return n + 1
        ...     aadd = async_twin(add)
        >>> asyncio.run(Counter().aadd(1)), Counter.aadd.__name__
        (2, 'aadd')

    """
    @functools.wraps(method)
    async def twin(self: S, *args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(method, self, *args, **kwargs)

    owner = method.__qualname__.rpartition(".")[0]
    twin.__name__, twin.__qualname__ = f"a{method.__name__}", f"{owner}.a{method.__name__}".lstrip(".")
    twin.__doc__ = f"Async :meth:`{method.__name__}` (the same method, run in a worker thread)."
    return twin
