"""One driver for the package's request/answer generators, sync and async.

Where sync and async code would otherwise be written twice, the logic is a
generator that yields each request it needs and receives the answer (an LLM
call in :mod:`~langchain_ripplemem.llm.calls`, a memory call in
:mod:`~langchain_ripplemem.stores`). :func:`drive` runs it with a sync
``call``, :func:`adrive` with an async one; the generator's return value is
the result.

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

from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeVar

__all__ = ["adrive", "drive"]

Q = TypeVar("Q")
R = TypeVar("R")


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
