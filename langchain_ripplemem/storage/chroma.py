"""Chroma behind the :class:`~langchain_ripplemem.storage.protocols.UnitBackend` seam.

The backend: its collections, the record format, the one-process lock of an embedded
store, paged reads. Opening a client, the unit collection's index settings and reads
retried on transient errors are :mod:`~langchain_ripplemem.storage.chroma_client`'s.

* **Record format.** One record per unit, keyed by its namespace
  (:mod:`~langchain_ripplemem.storage.chroma_records`); every read keeps to that key.
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
* **Transient errors.** Every read goes through
  :func:`~langchain_ripplemem.storage.chroma_client.read_retrying`.
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
import threading
import uuid
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from langchain_ripplemem.schemas import MemoryUnit, Namespace, namespace_from_key, namespace_key
from langchain_ripplemem.storage.chroma_client import (
    HNSW_SYNC_THRESHOLD,
    UNIT_COLLECTION_METADATA,
    chroma_client,
    read_retrying,
    tune_sync_threshold,
)
from langchain_ripplemem.storage.chroma_erase import (
    SERVER_KEEPS,
    clear_unused_capacity,
    is_server_client,
    overwrite_vectors,
    persist_index,
    vacuum_store_file,
)
from langchain_ripplemem.storage.chroma_records import (
    DIMENSION_KEY,
    MODEL_KEY,
    namespace_key_of,
    owned_positions,
    record_metadata,
    recorded_model,
    stored_record,
)
from langchain_ripplemem.storage.embedding_record import EmbeddingModel, mismatch
from langchain_ripplemem.storage.locks import StoreLock, embedded_store_directory
from langchain_ripplemem.storage.protocols import Purged, StoredRecord

__all__ = ["DEFAULT_COLLECTION", "ID_PAGE_SIZE", "PAGE_SIZE", "REGISTRY_FORMAT", "ChromaUnitBackend"]

DEFAULT_COLLECTION = "ripplemem_units"
# Records (or ids) per Chroma call: well under SQLite's 32,766 bound variables.
PAGE_SIZE = 5000
# Ids per call when listing a namespace's ids: each read filtered by namespace makes a pass over
# the collection, whatever it returns (0.15-0.2 s at 100k records), and a page of ids is small.
ID_PAGE_SIZE = 30_000
# The registry's format, in its collection metadata: 2 = exactly the namespaces that hold units.
REGISTRY_FORMAT = 2
T = TypeVar("T")


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
            tune_sync_threshold(self.collection)
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
        against 2 and 25 ms by id alone; ``benchmarks/measurements/chroma_reads.py``). Readers by id check
        each record's namespace themselves (:func:`~langchain_ripplemem.storage.chroma_records.owned_positions`).
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

    def _namespace_ids(self, key: str, what: str) -> list[str]:
        """Every id of namespace ``key``: a few filtered reads of ids alone."""
        return [uid for got in self._pages(what, [], {"ns": key}, page=ID_PAGE_SIZE) for uid in got["ids"]]

    def load(self, namespace: Namespace, ids: Sequence[str] | None = None) -> Iterator[
            tuple[list[MemoryUnit], np.ndarray]]:
        """Pages of ``(units, vectors)`` of the namespace (only ``ids`` when given).

        A whole namespace is read as its ids, then its records by id: pages of records
        filtered by namespace made a pass over the collection each (100k records: 11.7 s
        against 8.4, ``benchmarks/measurements/chroma_reads.py``). A record of another namespace is skipped.
        """
        key, what = namespace_key(namespace), f"namespace {list(namespace)}"
        for got in self._pages(what, ["embeddings", "metadatas"], ids=self._namespace_ids(key, what)
                               if ids is None else ids):
            own = owned_positions(got, key)
            if own:
                vectors = np.asarray(got["embeddings"], dtype=np.float32)
                yield ([MemoryUnit.model_validate_json(got["metadatas"][i]["unit"]) for i in own],
                       vectors if len(own) == len(vectors) else vectors[own])

    def records(self) -> Iterator[StoredRecord]:
        """Every record of the collection, readable or not, page by page."""
        for got in self._pages("every record", ["metadatas"]):
            for uid, meta in zip(got["ids"], got["metadatas"] or [None] * len(got["ids"]), strict=True):
                yield stored_record(uid, meta)

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
        recorded = recorded_model(self.collection.metadata)
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
            self._written_model = recorded_model(metadata)
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

    @_one_write_at_a_time
    def upsert(self, namespace: Namespace, units: Sequence[MemoryUnit], vectors: np.ndarray) -> None:
        """Write units and their vectors.

        No Chroma document: the restatement is in the unit's JSON, and Chroma keeps a
        full-text index of every document, which the package never searches (BM25 is its
        own). Writing it cost 0.24 ms CPU a record over a collection's first 2k records and
        0.33 over the last 3k of 30k, about a quarter of the upsert
        (``benchmarks/measurements/chroma_upsert.py --documents``, ``results/chroma_documents.json``).
        """
        key = namespace_key_of(namespace, units)
        if units:
            self._check_model(int(np.shape(vectors)[1]))
            self._register({key})
        for start in range(0, len(units), PAGE_SIZE):
            chunk = units[start : start + PAGE_SIZE]
            self.collection.upsert(
                ids=[u.id for u in chunk],
                embeddings=np.asarray(vectors[start : start + PAGE_SIZE], dtype=np.float32),
                metadatas=[record_metadata(key, u) for u in chunk])

    @_one_write_at_a_time
    def update(self, namespace: Namespace, units: Sequence[MemoryUnit]) -> None:
        """Rewrite stored units' metadata (ids, text and vectors stay)."""
        key = namespace_key_of(namespace, units)
        for start in range(0, len(units), PAGE_SIZE):
            chunk = units[start : start + PAGE_SIZE]
            self.collection.update(ids=[u.id for u in chunk], metadatas=[record_metadata(key, u) for u in chunk])

    @_one_write_at_a_time
    def delete(self, namespace: Namespace, ids: Sequence[str]) -> None:
        """Remove these units of this namespace only (an id of another namespace is left alone).

        The records are read by id and their namespace checked here: a delete by ids with
        a namespace filter made Chroma pass over the collection for each id (:meth:`_pages`).
        """
        key = namespace_key(namespace)
        deleted: list[str] = []
        for got in self._pages(f"namespace {list(namespace)}", ["metadatas"], ids=list(ids)):
            own = [got["ids"][i] for i in owned_positions(got, key)]
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
