"""Erasing deleted units from Chroma's files, not only from its answers.

Chroma 1.5.9 (the pinned version) deletes a record from what it answers at once, but four
places keep the record's bytes (read in its Rust source, ``rust/log/src/sqlite_log.rs``,
``local_compaction_manager.rs``, ``rust/segment/src/local_hnsw.rs``, and in its hnswlib,
``hnswlib/hnswalg.h``):

* **The log.** Every write is a row of ``embeddings_queue`` in ``chroma.sqlite3``, with the
  record's whole metadata (here the unit's JSON, restatement and cues included) and its vector.
  After each write Chroma purges the rows below the sequence id that both segments persisted;
  the HNSW segment persists only once ``sync_threshold`` log records (200 here) were applied
  since its last persist, so a deleted unit's rows stayed for up to 200 more records, and past
  a close.
* **The HNSW index.** A delete only marks the element deleted: its vector stays in
  ``data_level0.bin``, and ``index_metadata.pickle`` keeps its id until the next persist.
* **The HNSW index's unused capacity.** A new index writes its whole capacity to
  ``data_level0.bin`` and ``length.bin`` from memory it never cleared: whatever the process's
  heap held then (seen here: the JSON and vector of the records being written) stays in the
  slots past the last element until elements fill them.
* **SQLite's free space.** Chroma does not set ``secure_delete``: deleted rows of
  ``embedding_metadata``, its indexes and the log stay in free pages and in the free space of
  pages still in use, until something rewrites them.

:func:`overwrite_vectors` and :func:`persist_index` handle the first two through Chroma's own
API, so they work on a Chroma server too: before a delete the records' vectors are overwritten
with a constant (hnswlib updates an element in place), and after it a delete of
``sync_threshold`` ids that no record has makes the index persist (the overwritten vectors and the
deletions reach its files) and the log be purged below it. For an embedded store,
:func:`clear_unused_capacity` zeroes the index files past the persisted elements, and
:func:`vacuum_store_file` removes what is left of the deleted records in the log, merges the
full-text index (stores written before documents were dropped have one), and runs ``VACUUM``,
which writes the database anew from its live rows.

``VACUUM`` runs in a separate Python process: Chroma links its own copy of SQLite, and two
copies of SQLite in one process do not see each other's POSIX locks (closing a file through one
drops the other's locks), which SQLite's documentation lists as a way to corrupt a database.
Across processes SQLite's locking holds as usual: Chroma's connections wait while it runs.

Example:
    >>> overwriting_vectors(3, 4).shape
    (3, 4)
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from langchain_ripplemem.errors import ErasureError

__all__ = ["PAD_ID_PREFIX", "SERVER_KEEPS", "clear_unused_capacity", "is_server_client", "overwrite_vectors",
           "overwriting_vectors", "persist_index", "sync_threshold", "vacuum_store_file"]

# Ids of the padding delete (:func:`persist_index`): no unit id looks like them (unit ids are hex digests).
PAD_ID_PREFIX = "ripplemem-erase-pad-"
# The sync threshold of Chroma's HNSW index when a collection's configuration does not say (Chroma's default).
_CHROMA_DEFAULT_SYNC_THRESHOLD = 1000
# Chroma's log operation code of a delete (``operation_to_code`` in rust/log/src/sqlite_log.rs).
_DELETE_CODE = 3
# hnswlib's header.bin: an int persistence version (1), then size_t offsetLevel0_, max_elements_,
# cur_element_count, size_data_per_element_ (HEADER_FIELDS in hnswlib/hnswalg.h).
_HEADER = struct.Struct("<iQQQQ")
_HEADER_VERSION = 1
# What a Chroma server keeps after a delete, and how its operator purges it.
SERVER_KEEPS = ("the Chroma server: the deleted records left its HNSW index and its log through its API, but its "
                "chroma.sqlite3 keeps their bytes in free pages until its operator runs `chroma vacuum --path DIR "
                "--force` on the server's directory, and the index files may keep heap bytes from when each "
                "collection's index was created (docs/lifecycle.md, Deletes)")

# Run as ``python -I -S -c _VACUUM_SCRIPT DATABASE COLLECTION_IDS_JSON`` with the deleted ids as a JSON
# list on stdin; prints what it did as JSON. Only the standard library: nothing of the caller's environment.
_VACUUM_SCRIPT = f"""
import json, os, sqlite3, sys
path, collections = sys.argv[1], json.loads(sys.argv[2])
ids = json.load(sys.stdin)
before = os.path.getsize(path)
db = sqlite3.connect(path, timeout=600, isolation_level=None)
db.execute("PRAGMA secure_delete=ON")
db.execute("BEGIN IMMEDIATE")
db.execute("CREATE TEMP TABLE gone (id TEXT PRIMARY KEY)")
db.executemany("INSERT OR IGNORE INTO gone VALUES (?)", [(i,) for i in ids])
# A deleted record's writes that the log still holds, each followed by its delete in the same
# collection: replaying the log without them ends in the same state (the record absent).
log_rows = db.execute(
    "DELETE FROM embeddings_queue WHERE operation != {_DELETE_CODE} AND id IN (SELECT id FROM gone) "
    "AND seq_id < (SELECT MAX(later.seq_id) FROM embeddings_queue AS later WHERE later.id = embeddings_queue.id "
    "AND later.topic = embeddings_queue.topic AND later.operation = {_DELETE_CODE})").rowcount
# Documents' terms stay in the full-text index's segments after a delete, until they are merged.
documents = db.execute("SELECT EXISTS (SELECT 1 FROM embedding_fulltext_search_data)").fetchone()[0]
if documents:
    db.execute("INSERT INTO embedding_fulltext_search (embedding_fulltext_search) VALUES ('optimize')")
db.execute("COMMIT")
db.execute("VACUUM")
wal = db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
if wal:
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
segments = [row[0] for row in db.execute(
    "SELECT id FROM segments WHERE scope = 'VECTOR' AND collection IN (SELECT value FROM json_each(?))",
    (json.dumps(collections),))]
db.close()
print(json.dumps({{"vector_segments": segments, "log_rows": log_rows, "fulltext_merged": bool(documents),
                  "wal": wal, "bytes_before": before, "bytes_after": os.path.getsize(path)}}))
"""


def is_server_client(client: Any) -> bool:
    """Whether ``client`` talks to a Chroma server (``HttpClient``), whose files only its operator reaches."""
    try:
        settings = client.get_settings()
    except Exception:  # noqa: BLE001 - not a chromadb client
        return False
    return "fastapi" in str(getattr(settings, "chroma_api_impl", "")).lower()


def overwriting_vectors(rows: int, dimension: int) -> np.ndarray:
    """``rows`` copies of the constant unit vector that replaces a deleted record's vector in Chroma's index."""
    return np.full((rows, dimension), 1.0 / np.sqrt(dimension), dtype=np.float32)


def overwrite_vectors(collection: Any, ids: Sequence[str], dimension: int) -> None:
    """Overwrite the vectors of ``ids`` in Chroma's HNSW index (an update in place) before they are deleted.

    A delete only marks an HNSW element deleted and keeps its vector; an update writes the
    new vector over the old one, and the next persist writes it to ``data_level0.bin``.
    """
    if ids:
        collection.update(ids=list(ids), embeddings=overwriting_vectors(len(ids), dimension))


def sync_threshold(collection: Any) -> int | None:
    """The collection's HNSW ``sync_threshold``; ``None`` when it has no HNSW index (a distributed Chroma's)."""
    hnsw = (getattr(collection, "configuration", None) or {}).get("hnsw")
    if not hnsw:
        return None
    return int(hnsw.get("sync_threshold") or _CHROMA_DEFAULT_SYNC_THRESHOLD)


def persist_index(collection: Any, at_least: int = 0) -> int:
    """Make Chroma persist the collection's HNSW index now, and so purge its log; returns the ids padded.

    Chroma persists the index once ``sync_threshold`` log records were applied since the last
    persist, counted by the call that applies them: one delete of that many ids no record
    has (nothing is deleted; each is a log record) makes this call's apply persist, then the
    log is purged below its last record. ``at_least`` raises the count (a threshold this
    process may have loaded before the collection's configuration was changed).
    """
    threshold = sync_threshold(collection)
    if threshold is None:
        return 0
    count = max(threshold, at_least)
    collection.delete(ids=[f"{PAD_ID_PREFIX}{i}" for i in range(count)])
    return count


def clear_unused_capacity(segment: Path) -> bool:
    """Zero an HNSW segment's ``data_level0.bin`` and ``length.bin`` past its persisted elements; whether it did.

    Those bytes are the never-cleared memory a new index wrote (see the module docs); a
    loaded index reads only the persisted elements, and an element added later writes its
    slot whole, so zeros there change nothing but what the files hold. Call it only while
    no write can persist the index (Chroma could be writing those slots). A segment without
    files, or whose header is not hnswlib's version 1, is left alone.
    """
    try:
        version, _, _, elements, element_size = _HEADER.unpack_from((segment / "header.bin").read_bytes())
    except (OSError, struct.error):
        return False
    if version != _HEADER_VERSION or element_size <= 0:
        return False
    changed = False
    for name, used in (("data_level0.bin", elements * element_size), ("length.bin", elements * 4)):
        path = segment / name
        try:
            with open(path, "r+b") as handle:
                handle.seek(used)
                tail = handle.read()
                if tail.strip(b"\0"):
                    handle.seek(used)
                    handle.write(bytes(len(tail)))
                    handle.flush()
                    os.fsync(handle.fileno())
                    changed = True
        except FileNotFoundError:
            continue
    return changed


def vacuum_store_file(database: Path, collection_ids: Sequence[str], deleted_ids: Sequence[str]) -> dict[str, Any]:
    """Rewrite Chroma's SQLite file so no byte of the deleted records remains; returns what was done.

    Runs in a separate Python process (see the module docs): removes the deleted records'
    writes the log still holds, merges the full-text index if it holds documents, then
    ``VACUUM`` (and a WAL checkpoint if the file is in WAL mode). Its cost grows with the
    file's size (``docs/lifecycle.md``, "Deletes"). The result names the vector segments
    of ``collection_ids`` (``vector_segments``: the directories of their HNSW indexes).

    Raises:
        ErasureError: the process failed (the message has its error output).
    """
    if not sys.executable:
        raise ErasureError(f"cannot rewrite {database}: no Python interpreter to run VACUUM in (sys.executable "
                           "is empty); the deleted units may remain in its free pages")
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _VACUUM_SCRIPT, str(database), json.dumps(list(collection_ids))],
        input=json.dumps(list(deleted_ids)), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ErasureError(f"VACUUM of {database} failed (exit {done.returncode}), so the deleted units may remain "
                           f"in its free pages until the next forget rewrites it: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]
