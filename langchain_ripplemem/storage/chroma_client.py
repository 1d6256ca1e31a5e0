"""Talking to Chroma: the embedded client (no telemetry), the unit collection's index settings, retried reads.

What :class:`~langchain_ripplemem.storage.chroma.ChromaUnitBackend` asks of Chroma before it
reads or writes a record:

* **The client.** An embedded one is ephemeral or persistent in a directory, never with
  telemetry (:func:`chroma_client`).
* **The unit collection's index.** Its HNSW build and sync threshold
  (:data:`UNIT_COLLECTION_METADATA`, :func:`tune_sync_threshold`).
* **Transient errors.** Reads are retried a few times on Chroma's
  ``InternalError`` only (:func:`read_retrying`): a Chroma 1.5.9 server now and then answers a read with
  one while another client deletes in the same collection ("Error finding id")
  or right after the collection was created ("Error creating hnsw segment reader").

Example:
    >>> read_retrying(lambda: "read", "a value")
    'read'
    >>> UNIT_COLLECTION_METADATA["hnsw:sync_threshold"] == HNSW_SYNC_THRESHOLD
    True

"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["HNSW_SYNC_THRESHOLD", "READ_ATTEMPTS", "READ_BACKOFF_SECONDS", "UNIT_COLLECTION_METADATA",
           "chroma_client", "read_retrying", "tune_sync_threshold"]

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


# Chroma indexes every vector in an HNSW graph, which the package never queries (recall
# searches its own matrix exactly). Its default build (ef 100, M 16) made an upsert of 20
# memories cost 12 ms at 1k and 33 ms at 30k; a sparse build keeps it near flat
# (11 -> 15 ms). A collection keeps the build it was created with.
# Chroma persists that index every ``sync_threshold`` records, and until it does, every write
# reads back the records written since the last persist. 200 instead of Chroma's 1,000 makes
# an upsert about a third cheaper at every size, for about the same bytes written
# (benchmarks/measurements/chroma_upsert.py, 20-record upserts of this package's record shapes: 1.06 -> 0.65
# ms CPU a record over the first 2k records, 1.25 -> 0.81 over the last 3k of 30k; 100 and
# 400 cost more). A collection created with another value gets this one when opened
# (Chroma lets it change; the build stays).
HNSW_SYNC_THRESHOLD = 200
UNIT_COLLECTION_METADATA = {"hnsw:space": "cosine", "hnsw:construction_ef": 8, "hnsw:M": 4,
                            "hnsw:sync_threshold": HNSW_SYNC_THRESHOLD}


def tune_sync_threshold(collection: Any) -> None:
    """Give ``collection``'s HNSW index :data:`HNSW_SYNC_THRESHOLD` (before its first write in this process).

    Collections without an HNSW index (a distributed Chroma's) are left as they are.
    """
    hnsw = (getattr(collection, "configuration", None) or {}).get("hnsw") or {}
    if hnsw and hnsw.get("sync_threshold") != HNSW_SYNC_THRESHOLD:
        collection.modify(configuration={"hnsw": {"sync_threshold": HNSW_SYNC_THRESHOLD}})

