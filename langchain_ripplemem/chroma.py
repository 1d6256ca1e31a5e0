"""Chroma helpers: the embedded client, and reads retried on transient errors.

Reads are retried a few times on Chroma's ``InternalError`` only: a Chroma
1.5.9 server now and then answers a namespace load with one while another
client deletes in the same collection ("Error finding id") or right after the
collection was created ("Error creating hnsw segment reader").
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

# Transient Chroma read errors: attempts in all, and the first pause (doubled each time).
READ_ATTEMPTS = 4
READ_BACKOFF_SECONDS = 0.05
_sleep = time.sleep
_log = logging.getLogger(__name__)
T = TypeVar("T")


def chroma_client(persist_directory: str | Path | None) -> Any:
    """An embedded Chroma client: ephemeral, or persistent in ``persist_directory``; no telemetry."""
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    if persist_directory is None:
        return chromadb.EphemeralClient(settings=settings)
    Path(persist_directory).mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(persist_directory), settings=settings)


def read_retrying(read: Callable[[], T], what: str, *, attempts: int | None = None,
                  backoff: float | None = None) -> T:
    """``read()``, retried with a doubling pause when Chroma raises its transient ``InternalError``.

    Any other error propagates at once. When every attempt fails, an ``InternalError``
    saying what was read and how often propagates, chained to the last one.

    Args:
        read: the read, e.g. a ``collection.get`` call.
        what: what is read, for the error message.
        attempts: tries in all (at least 1); default ``READ_ATTEMPTS``.
        backoff: seconds before the second try; default ``READ_BACKOFF_SECONDS``.
    """
    from chromadb.errors import InternalError

    attempts = READ_ATTEMPTS if attempts is None else attempts
    backoff = READ_BACKOFF_SECONDS if backoff is None else backoff
    if attempts < 1:
        raise ValueError(f"attempts must be at least 1, got {attempts}")
    attempt = 1
    while True:
        try:
            return read()
        except InternalError as err:
            if attempt >= attempts:
                raise InternalError(f"reading {what} from Chroma failed {attempts} times with a transient "
                                    f"InternalError; the last: {err}") from err
            _log.warning("retrying a read of %s from Chroma after a transient InternalError (attempt %d of %d): %s",
                         what, attempt, attempts, err)
        _sleep(backoff * 2 ** (attempt - 1))
        attempt += 1
