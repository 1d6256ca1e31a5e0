"""Chroma behind the :class:`~langchain_ripplemem.storage.base.UnitBackend` seam.

Everything the package knows about Chroma lives here: the embedded client (no
telemetry), the collection, the record format, the one-process lock of an
embedded store, paged reads and their retries.

* **Record format.** One record per unit: the unit's vector and metadata
  ``{"ns": <namespace key>, "kind", "unit": <the MemoryUnit as JSON>}``, its
  creation time first (:func:`stored_json`); no document (records written with
  one load the same). Every read keeps to ``ns``: a namespace's ids are listed
  with a filter on it, and what is read by id is checked against it here (Chroma
  given both ids and a filter passes over the whole collection for each id).
  Every write checks that a unit belongs to the namespace it is written to.
* **Paged reads only.** Chroma answers one ``get`` with at most 32,766 records
  ("too many SQL variables" past that), so reads go ``PAGE_SIZE`` records (or
  ids) at a time, and ``ID_PAGE_SIZE`` ids when listing a namespace's ids.
* **Namespace registry.** A small second collection (``<name>__namespaces``)
  holds one record per namespace that holds a unit: a write registers its
  namespace, a delete that empties one and a drop remove it, so listing the
  namespaces is one paged read of the registry (2,000 namespaces took 19 s when
  each was asked whether it still held a unit). A store from before the
  registry gets it on open; one whose registry could list emptied namespaces
  (``REGISTRY_FORMAT`` missing) has it checked once.
* **Transient errors.** Reads are retried a few times on Chroma's
  ``InternalError`` only: a Chroma 1.5.9 server now and then answers a read with
  one while another client deletes in the same collection ("Error finding id")
  or right after the collection was created ("Error creating hnsw segment reader").
* **Embedding model.** The unit collection's metadata records the model that made
  its vectors (``embedding_model``, ``embedding_dimension``), written with the first
  write (:mod:`~langchain_ripplemem.storage.embedding_record`); a write of vectors of
  another width than recorded fails before Chroma sees it. An in-memory store made
  here records nothing (no other memory opens it).
* **One process per embedded store.** Embedded Chroma is not process-safe, so a
  persistent directory is locked (:class:`~langchain_ripplemem.storage.locks.StoreLock`)
  before Chroma opens it, and released by :meth:`ChromaUnitBackend.close`.
* **Deletes erase.** A delete overwrites the records' vectors first and makes Chroma persist
  its index and purge its log after; :meth:`ChromaUnitBackend.purge` then rewrites an embedded
  store's SQLite file (:mod:`~langchain_ripplemem.storage.chroma_erase`).

Example:
    >>> import numpy as np
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance
    >>> backend = ChromaUnitBackend()  # embedded, in memory
    >>> unit = MemoryUnit.create(namespace=("maya",), restatement="Maya: hi",
    ...                          source=Provenance(conversation_id="c", session_id="s"))
    >>> backend.upsert(("maya",), [unit], np.ones((1, 3), dtype=np.float32))
    >>> [[u.id for u in units] for units, _ in backend.load(("maya",))] == [[unit.id]]
    True
    >>> backend.namespaces(), list(backend.load(("sam",)))
    ([('maya',)], [])

"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from langchain_ripplemem.schemas import MemoryUnit, Namespace, namespace_from_key, namespace_key
from langchain_ripplemem.storage.base import Purged, StoredRecord
from langchain_ripplemem.storage.chroma_erase import (
    SERVER_KEEPS,
    clear_unused_capacity,
    is_server_client,
    overwrite_vectors,
    persist_index,
    vacuum_store_file,
)
from langchain_ripplemem.storage.embedding_record import EmbeddingModel, mismatch
from langchain_ripplemem.storage.locks import StoreLock, embedded_store_directory

__all__ = ["DEFAULT_COLLECTION", "HNSW_SYNC_THRESHOLD", "ID_PAGE_SIZE", "PAGE_SIZE", "ChromaUnitBackend",
           "chroma_client", "read_retrying", "stored_json"]

DEFAULT_COLLECTION = "ripplemem_units"
# Records (or ids) per Chroma call: well under SQLite's 32,766 bound variables.
PAGE_SIZE = 5000
# Ids per call when listing a namespace's ids: each read filtered by namespace makes a pass over
# the collection, whatever it returns (0.15-0.2 s at 100k records), and a page of ids is small.
ID_PAGE_SIZE = 30_000
# The registry's format, in its collection metadata: 2 = exactly the namespaces that hold units.
REGISTRY_FORMAT = 2
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


def stored_json(unit: MemoryUnit) -> str:
    """The unit as the JSON a record keeps: its creation time first, then the other fields.

    Chroma's SQLite indexes every string metadata value (by key and value). With the id
    (a hash) first, each new unit's JSON went to a random page of an index holding every
    unit's JSON (12k pages of 4 KB at 50k units), which the upsert reads and rewrites; time
    first appends new units near the index's end (the upsert's CPU: 3-5 % less at 1k and at
    50k units, docs/scale.md "Ingest"). Any key order parses to the same unit.

    Example:
        >>> from langchain_ripplemem.schemas import Provenance
        >>> unit = MemoryUnit.create(namespace=("maya",), restatement="Maya: hi",
        ...                          source=Provenance(conversation_id="c", session_id="s"))
        >>> text = stored_json(unit)
        >>> text.startswith('{"created_at":'), MemoryUnit.model_validate_json(text) == unit
        (True, True)
    """
    first = unit.model_dump_json(include={"created_at"})
    return f"{first[:-1]},{unit.model_dump_json(exclude={'created_at'})[1:]}"


# Chroma indexes every vector in an HNSW graph, which the package never queries (recall
# searches its own matrix exactly). Its default build (ef 100, M 16) made an upsert of 20
# memories cost 12 ms at 1k and 33 ms at 30k; a sparse build keeps it near flat
# (11 -> 15 ms). A collection keeps the build it was created with.
# Chroma persists that index every ``sync_threshold`` records, and until it does, every write
# reads back the records written since the last persist. 200 instead of Chroma's 1,000 makes
# an upsert about a third cheaper at every size, for about the same bytes written
# (bench/measurements/chroma_upsert.py, 20-record upserts of this package's record shapes: 1.06 -> 0.65
# ms CPU a record over the first 2k records, 1.25 -> 0.81 over the last 3k of 30k; 100 and
# 400 cost more). A collection created with another value gets this one when opened
# (Chroma lets it change; the build stays).
HNSW_SYNC_THRESHOLD = 200
UNIT_COLLECTION_METADATA = {"hnsw:space": "cosine", "hnsw:construction_ef": 8, "hnsw:M": 4,
                            "hnsw:sync_threshold": HNSW_SYNC_THRESHOLD}
# The unit collection's metadata keys recording its embedding model.
MODEL_KEY, DIMENSION_KEY = "embedding_model", "embedding_dimension"


def _recorded_model(metadata: dict[str, Any] | None) -> EmbeddingModel | None:
    name, dimension = (metadata or {}).get(MODEL_KEY), (metadata or {}).get(DIMENSION_KEY)
    return EmbeddingModel(name, dimension) if isinstance(name, str) and isinstance(dimension, int) else None


def _tune_sync_threshold(collection: Any) -> None:
    """Give ``collection``'s HNSW index :data:`HNSW_SYNC_THRESHOLD` (before its first write in this process).

    Collections without an HNSW index (a distributed Chroma's) are left as they are.
    """
    hnsw = (getattr(collection, "configuration", None) or {}).get("hnsw") or {}
    if hnsw and hnsw.get("sync_threshold") != HNSW_SYNC_THRESHOLD:
        collection.modify(configuration={"hnsw": {"sync_threshold": HNSW_SYNC_THRESHOLD}})


def _one_write_at_a_time(write: Callable[..., T]) -> Callable[..., T]:
    """Hold the backend's write lock around ``write``: :meth:`ChromaUnitBackend.purge` edits index files."""
    @functools.wraps(write)
    def holding(self: ChromaUnitBackend, *args: Any, **kwargs: Any) -> T:
        with self._writes:
            return write(self, *args, **kwargs)
    return holding


class ChromaUnitBackend:
    """Units and vectors in one Chroma collection, namespaced.

    Args:
        client: a ``chromadb`` client (``HttpClient``, ``PersistentClient``, ...);
            default: an embedded one, in ``persist_directory`` or in memory.
        persist_directory: where an embedded client keeps its files (only without ``client``).
        collection_name: the collection of units. An in-memory store made here gets a
            random suffix, since embedded ephemeral clients share one store per process.

    Raises:
        ValueError: both ``client`` and ``persist_directory`` are given.
        StoreLockedError: another process holds the embedded store.
    """

    def __init__(self, client: Any = None, *, persist_directory: str | Path | None = None,
                 collection_name: str = DEFAULT_COLLECTION) -> None:
        if client is not None and persist_directory is not None:
            raise ValueError("pass either client or persist_directory, not both")
        # An embedded store belongs to one process at a time: lock before opening it,
        # since opening can already write.
        lock_dir = Path(persist_directory) if client is None and persist_directory is not None else \
            embedded_store_directory(client) if client is not None else None
        self._lock: StoreLock | None = StoreLock(lock_dir).acquire() if lock_dir is not None else None
        self._directory = lock_dir  # an embedded store's files, which purge() rewrites
        self._server = lock_dir is None and is_server_client(client)
        self._erased: list[str] = []  # ids deleted since the last purge() began
        # Held by every write and by purge() throughout: purge() edits index files no write may persist to
        # meanwhile, and a purge waits for another thread's purge that took its deletes.
        self._writes = threading.RLock()
        self._last_purge = Purged()
        if self._lock is not None:
            weakref.finalize(self, self._lock.release)
        # A client made here is this backend's to close; an in-memory store made here is private
        # to it (random name), so closing also deletes its collections.
        self._owns_client = client is None
        self._private_collections: list[str] = []
        # The model whose vectors this backend writes (use_embedding_model), and the one its writes were checked
        # against (recorded, or this process's first write).
        self._model_name: str | None = None
        self._written_model: EmbeddingModel | None = None
        try:
            if client is None:
                client = chroma_client(persist_directory)
                if persist_directory is None:
                    collection_name = f"{collection_name}-{uuid.uuid4().hex[:12]}"
                    self._private_collections = [collection_name, f"{collection_name}__namespaces"]
            self.client = client
            self.collection = client.get_or_create_collection(
                collection_name, embedding_function=None, metadata=UNIT_COLLECTION_METADATA)
            _tune_sync_threshold(self.collection)
            self._registry = client.get_or_create_collection(
                f"{collection_name}__namespaces", embedding_function=None,
                metadata={"registry_format": REGISTRY_FORMAT})
            if (self._registry.metadata or {}).get("registry_format") != REGISTRY_FORMAT:
                self._check_registry()
            elif self._registry.count() == 0 and self.collection.count() > 0:
                self._register(self._scan_keys())  # a store from before the registry
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Release the embedded store's process lock and close a client made here.

        Embedded in-memory clients share one store per process, which keeps
        what any of them wrote until the last one closes: without this, every
        closed in-memory memory stayed resident (a benchmark building hundreds
        of them grew by megabytes per memory).
        """
        client = getattr(self, "client", None)  # unset when opening failed
        if client is not None and self._owns_client:
            self._owns_client = False
            for name in self._private_collections:
                with contextlib.suppress(Exception):  # already gone: nothing to free
                    client.delete_collection(name)
            close = getattr(client, "close", None)
            if callable(close):
                close()
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    # -- reads -----------------------------------------------------------------------
    @staticmethod
    def _get(collection: Any, what: str, **kwargs: Any) -> dict[str, Any]:
        """One ``collection.get(**kwargs)``, retried on transient errors."""
        return read_retrying(lambda: collection.get(**kwargs), what)  # type: ignore[no-any-return]

    def _pages(self, what: str, include: list[str], where: dict[str, Any] | None = None,
               ids: Sequence[str] | None = None, page: int = PAGE_SIZE) -> Iterator[dict[str, Any]]:
        """Chroma ``get`` results, ``page`` records at a time: those of ``where``, or of ``ids``.

        Never both: given ids and a filter, Chroma evaluates the filter over the whole
        collection for each id (at 100k records 10 ids took 0.77 s and 200 took 10.8 s,
        against 2 and 25 ms by id alone; ``bench/measurements/chroma_reads.py``). Readers by id check
        each record's namespace themselves (:meth:`_own`).
        """
        if ids is not None:
            for start in range(0, len(ids), page):
                yield self._get(self.collection, what, ids=list(ids[start : start + page]), include=include)
            return
        offset = 0
        while True:
            got = self._get(self.collection, what, where=where, limit=page, offset=offset, include=include)
            yield got
            if len(got["ids"]) < page:
                return
            offset += page

    @staticmethod
    def _own(got: dict[str, Any], key: str) -> list[int]:
        """Positions in a ``get`` result (metadatas included) of the records of namespace ``key``."""
        return [i for i, meta in enumerate(got["metadatas"] or ()) if (meta or {}).get("ns") == key]

    def _namespace_ids(self, key: str, what: str) -> list[str]:
        """Every id of namespace ``key``: a few filtered reads of ids alone."""
        return [uid for got in self._pages(what, [], {"ns": key}, page=ID_PAGE_SIZE) for uid in got["ids"]]

    def load(self, namespace: Namespace, ids: Sequence[str] | None = None) -> Iterator[
            tuple[list[MemoryUnit], np.ndarray]]:
        """Pages of ``(units, vectors)`` of the namespace (only ``ids`` when given).

        A whole namespace is read as its ids, then its records by id: pages of records
        filtered by namespace made a pass over the collection each (100k records: 11.7 s
        against 8.4, ``bench/measurements/chroma_reads.py``). A record of another namespace is skipped.
        """
        key, what = namespace_key(namespace), f"namespace {list(namespace)}"
        for got in self._pages(what, ["embeddings", "metadatas"], ids=self._namespace_ids(key, what)
                               if ids is None else ids):
            own = self._own(got, key)
            if own:
                vectors = np.asarray(got["embeddings"], dtype=np.float32)
                yield ([MemoryUnit.model_validate_json(got["metadatas"][i]["unit"]) for i in own],
                       vectors if len(own) == len(vectors) else vectors[own])

    def records(self) -> Iterator[StoredRecord]:
        """Every record of the collection, readable or not, page by page."""
        for got in self._pages("every record", ["metadatas"]):
            for uid, meta in zip(got["ids"], got["metadatas"] or [None] * len(got["ids"]), strict=True):
                key = (meta or {}).get("ns")
                if not isinstance(key, str):
                    yield StoredRecord(uid, None, None, "no namespace key")
                    continue
                try:
                    namespace_from_key(key)
                    yield StoredRecord(uid, key, MemoryUnit.model_validate_json((meta or {})["unit"]))
                except (KeyError, TypeError, ValueError) as err:
                    yield StoredRecord(uid, key, None, f"{type(err).__name__}: {err}")

    def namespaces(self) -> list[Namespace]:
        """Every namespace that holds a unit: one paged read of the registry."""
        return sorted(namespace_from_key(k) for k in self._registry_keys())

    def _registry_keys(self) -> list[str]:
        keys: list[str] = []
        offset = 0
        while True:
            got = self._get(self._registry, "the namespace list", limit=PAGE_SIZE, offset=offset, include=[])
            keys += got["ids"]
            if len(got["ids"]) < PAGE_SIZE:
                return keys
            offset += PAGE_SIZE

    def _holds_units(self, key: str) -> bool:
        return bool(self._get(self.collection, "the namespace list", where={"ns": key}, limit=1, include=[])["ids"])

    def _check_registry(self) -> None:
        """Bring a registry of an older release up to date: add unregistered namespaces, drop emptied ones."""
        keys = self._registry_keys()
        self._register(self._scan_keys() - set(keys) if self.collection.count() else set())
        if emptied := [k for k in keys if not self._holds_units(k)]:
            self._registry.delete(ids=emptied)
        self._registry.modify(metadata={"registry_format": REGISTRY_FORMAT})

    def _scan_keys(self) -> set[str]:
        return {m["ns"] for got in self._pages("every record", ["metadatas"])
                for m in got["metadatas"] or [] if isinstance((m or {}).get("ns"), str)}

    # -- the embedding model (storage/embedding_record.py) ---------------------------
    def embedding_model(self) -> EmbeddingModel | None:
        """The model recorded in the collection's metadata; for an older store, one stored vector's width."""
        recorded = _recorded_model(self.collection.metadata)
        if recorded is not None or not self.collection.count():
            return recorded
        got = self._get(self.collection, "a stored vector", limit=1, include=["embeddings"])
        return EmbeddingModel(None, len(got["embeddings"][0])) if len(got["ids"]) else None

    def use_embedding_model(self, name: str) -> None:
        """Vectors written from now on are ``name``'s: recorded with the first write if the store has no record."""
        self._model_name = name

    def _check_model(self, dimension: int) -> None:
        """Before a write of ``dimension``-wide vectors: check them against the record; record the model if none."""
        passed = EmbeddingModel(self._model_name, dimension)
        if self._written_model is None:
            # Read again: with a Chroma server, another client may have recorded a model since this one opened.
            metadata = self.collection.metadata if self._private_collections else self.client.get_collection(
                self.collection.name, embedding_function=None).metadata
            self._written_model = _recorded_model(metadata)
            if self._written_model is None:
                if self._model_name is not None and not self._private_collections:
                    kept = {k: v for k, v in (metadata or {}).items() if not k.startswith("hnsw:")}  # Chroma's own
                    self.collection.modify(metadata={**kept, MODEL_KEY: self._model_name, DIMENSION_KEY: dimension})
                self._written_model = passed
        known = self._written_model
        if known.dimension != dimension or (None not in (known.name, passed.name) and known.name != passed.name):
            raise mismatch(known, passed, f"the Chroma collection {self.collection.name!r}")

    # -- writes ----------------------------------------------------------------------
    def _register(self, keys: set[str]) -> None:
        # Every write asks, not once per process: another process may have unregistered a namespace
        # it emptied. Writes, deletes and drops of a namespace take turns (its writer lock), so the
        # answer holds until this write is done; reading it costs a twentieth of an upsert.
        if not keys:
            return
        there = set(self._get(self._registry, "the namespace list", ids=sorted(keys), include=[])["ids"])
        if new := sorted(keys - there):
            self._registry.upsert(ids=new, embeddings=np.ones((len(new), 1), dtype=np.float32),
                                  metadatas=[{"ns": k} for k in new])

    @staticmethod
    def _metadata(key: str, unit: MemoryUnit) -> dict[str, Any]:
        return {"ns": key, "kind": unit.kind, "unit": stored_json(unit)}

    def _check(self, namespace: Namespace, units: Sequence[MemoryUnit]) -> str:
        for unit in units:
            if unit.namespace != tuple(namespace):
                raise ValueError(f"unit {unit.id} belongs to {unit.namespace}, not {namespace}")
        return namespace_key(namespace)

    @_one_write_at_a_time
    def upsert(self, namespace: Namespace, units: Sequence[MemoryUnit], vectors: np.ndarray) -> None:
        """Write units and their vectors.

        No Chroma document: the restatement is in the unit's JSON, and Chroma keeps a
        full-text index of every document, which the package never searches (BM25 is its
        own). Writing it cost 0.24 ms CPU a record over a collection's first 2k records and
        0.33 over the last 3k of 30k, about a quarter of the upsert
        (``bench/measurements/chroma_upsert.py --documents``, ``results/chroma_documents.json``).
        """
        key = self._check(namespace, units)
        if units:
            self._check_model(int(np.shape(vectors)[1]))
            self._register({key})
        for start in range(0, len(units), PAGE_SIZE):
            chunk = units[start : start + PAGE_SIZE]
            self.collection.upsert(
                ids=[u.id for u in chunk],
                embeddings=np.asarray(vectors[start : start + PAGE_SIZE], dtype=np.float32),
                metadatas=[self._metadata(key, u) for u in chunk])

    @_one_write_at_a_time
    def update(self, namespace: Namespace, units: Sequence[MemoryUnit]) -> None:
        """Rewrite stored units' metadata (ids, text and vectors stay)."""
        key = self._check(namespace, units)
        for start in range(0, len(units), PAGE_SIZE):
            chunk = units[start : start + PAGE_SIZE]
            self.collection.update(ids=[u.id for u in chunk], metadatas=[self._metadata(key, u) for u in chunk])

    @_one_write_at_a_time
    def delete(self, namespace: Namespace, ids: Sequence[str]) -> None:
        """Remove these units of this namespace only (an id of another namespace is left alone).

        The records are read by id and their namespace checked here: a delete by ids with
        a namespace filter made Chroma pass over the collection for each id (:meth:`_pages`).
        """
        key = namespace_key(namespace)
        deleted: list[str] = []
        for got in self._pages(f"namespace {list(namespace)}", ["metadatas"], ids=list(ids)):
            own = [got["ids"][i] for i in self._own(got, key)]
            if own:
                self._delete_erasing(own)
                deleted += own
        self._persist_deletes(deleted)
        if ids and not self._holds_units(key):
            self._registry.delete(ids=[key])

    @_one_write_at_a_time
    def drop(self, namespace: Namespace) -> None:
        """Remove every unit of exactly this namespace, and its registry entry."""
        key = namespace_key(namespace)
        deleted: list[str] = []
        while True:  # page by page: one delete of a huge namespace would bind too many variables
            ids = self._get(self.collection, f"namespace {list(namespace)}", where={"ns": key}, limit=PAGE_SIZE,
                            include=[])["ids"]
            if not ids:
                break
            self._delete_erasing(ids)
            deleted += ids
        self._persist_deletes(deleted)
        self._registry.delete(ids=[key])

    # -- erasing (storage/chroma_erase.py) ---------------------------------------------
    def _keeps_files(self) -> bool:
        """Whether deleted records can linger in files: an embedded persistent store's, or a server's."""
        return self._directory is not None or self._server

    def _delete_erasing(self, ids: list[str]) -> None:
        """Delete records, their vectors overwritten first (a delete alone leaves them in the HNSW index)."""
        if self._keeps_files():
            dimension = self.embedding_model()
            if dimension is not None:
                overwrite_vectors(self.collection, ids, dimension.dimension)
        self.collection.delete(ids=ids)

    def _persist_deletes(self, deleted: list[str]) -> None:
        """After deletes: make Chroma persist its index and purge its log; note the ids for :meth:`purge`."""
        if deleted and self._keeps_files():
            persist_index(self.collection, HNSW_SYNC_THRESHOLD)
            self._erased += deleted  # under the write lock, as every delete

    def purge(self) -> Purged:
        """Rewrite an embedded store's files so the records deleted since the last purge leave no bytes.

        The deletes purged the index and the log through Chroma's API (a server's too); this
        runs ``VACUUM`` on the SQLite file and zeroes the index files' unused capacity
        (:mod:`~langchain_ripplemem.storage.chroma_erase`); for a server it says what the
        server keeps. With nothing deleted since the last purge began (another thread's purge
        took this thread's deletes, and this call waited for it to finish), the last purge's result.

        Raises:
            ErasureError: rewriting the file failed (the units are deleted; the next purge rewrites it).
        """
        with self._writes:
            erased, self._erased = self._erased, []
            if erased:
                try:
                    self._last_purge = self._purged(erased)
                except BaseException:
                    self._erased = erased + self._erased  # the next purge tries again
                    raise
            return self._last_purge

    def _purged(self, erased: list[str]) -> Purged:
        """An embedded store's SQLite file vacuumed and its index files' unused capacity zeroed; a server's note."""
        if self._directory is None:
            return Purged(kept=(SERVER_KEEPS,))
        database = self._directory / "chroma.sqlite3"
        done = vacuum_store_file(database, [str(self.collection.id), str(self._registry.id)], erased)
        segments = [self._directory / segment for segment in done["vector_segments"]]
        for segment in segments:  # under the write lock (purge): no write persists the index meanwhile
            clear_unused_capacity(segment)
        return Purged(files=(str(database), *(str(segment) for segment in segments)))
