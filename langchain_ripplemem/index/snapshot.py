"""Namespace views saved to local files, so a new process maps them instead of reading every unit.

A cold open of a 100k-memory namespace spent its time reading every unit and
vector from Chroma, validating every unit's JSON and rebuilding the postings.
A snapshot is one file per namespace holding a
:class:`~langchain_ripplemem.index.namespace_index.NamespaceIndex` as of a namespace version:

* the vector matrix, memory-mapped on open;
* the units as their stored JSON, parsed when a recall reads them
  (:class:`~langchain_ripplemem.index.unit_list.UnitList`);
* the state of each part of the index (BM25 postings, cue postings and tables,
  lifecycle state) and what readers derived from the units (``index.derived``),
  pickled (:meth:`~langchain_ripplemem.index.namespace_index.NamespaceIndex.state`).

A snapshot is a rebuildable cache, never a source of truth. :meth:`ViewSnapshots.restore`
uses it only when it is whole (a CRC-32 over everything after the header), of
this format and build of the package (:func:`code_id`), of the namespace asked,
made with the same embedding model, and
the namespace log still holds every change since its version; the caller then
applies those changes (as a stale reader catches up). Otherwise the view is
loaded from the store of record. A snapshot is written to a temporary file and
renamed over the old one, so a crash while saving leaves the old one or none.
The file holds pickled state: it is read only from the memory's own snapshot
directory, which only the store's owner should be able to write (as the store).

Example:
    >>> import numpy as np, tempfile
    >>> from langchain_ripplemem.index.namespace_index import NamespaceState, NamespaceIndex
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance
    >>> view = NamespaceIndex(("maya",))
    >>> unit = MemoryUnit.create(namespace=("maya",), restatement="Maya: hi",
    ...                          source=Provenance(conversation_id="c", session_id="s"))
    >>> view.add([unit], np.ones((1, 4), dtype=np.float32))
    >>> path = Path(tempfile.mkdtemp()) / "maya.view"
    >>> write_snapshot(path, view, version=3, model="m")
    >>> restored, version = read_snapshot(path, ("maya",), "m")
    >>> version, restored.ids == view.ids, restored.units[0] == unit, read_snapshot(path, ("maya",), "other")
    (3, True, True, None)

"""

from __future__ import annotations

import functools
import gc
import hashlib
import json
import logging
import mmap
import os
import pickle
import struct
import uuid
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np

from langchain_ripplemem.index.namespace_index import NamespaceIndex, NamespaceState
from langchain_ripplemem.index.unit_list import UnitList
from langchain_ripplemem.schemas import Namespace, namespace_key
from langchain_ripplemem.storage.base import Changes, NamespaceLog

__all__ = ["SNAPSHOT_DIRNAME", "ViewSnapshots", "embeddings_id", "read_snapshot", "write_snapshot"]

SNAPSHOT_DIRNAME = "ripplemem_views"
# Bump when the file layout or the pickled view state changes: older snapshots are then ignored.
FORMAT = 3
_MAGIC = b"RIPPLEMEM-VIEW\x00\x01"
_ALIGN = 64  # the matrix starts on a 64-byte boundary
_log = logging.getLogger(__name__)


def embeddings_id(embeddings: Any) -> str:
    """Which embedding model made a view's vectors: its class and model name."""
    kind = type(embeddings)
    name = next((v for a in ("model_id", "model", "model_name") if isinstance(v := getattr(embeddings, a, None), str)),
                "")
    return f"{kind.__module__}.{kind.__qualname__}:{name}"


@functools.lru_cache(maxsize=1)
def code_id() -> str:
    """A hash of the package's source: what a view holds (postings, derived values) is computed by it.

    A snapshot saved by another build of the package is ignored (its view is loaded
    from the store once and saved again), so no code change can leave a snapshot
    holding structures the running code would compute differently.
    """
    root = Path(__file__).parents[1]  # the package, not just index/
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def write_snapshot(path: Path, index: NamespaceIndex, version: int, model: str) -> None:
    """Save ``index`` as of namespace ``version`` to ``path``, atomically (a temporary file, then a rename)."""
    state = index.state()
    blob, offsets = state.units.json_rows()
    n = len(state.matrix)
    sections = [("matrix", state.matrix.tobytes()), ("offsets", offsets.astype(np.int64).tobytes()), ("units", blob),
                ("state", pickle.dumps(state.parts, protocol=pickle.HIGHEST_PROTOCOL))]
    layout, at = {}, 0
    for name, data in sections:
        layout[name] = [at, len(data)]
        at += len(data) + (-len(data)) % _ALIGN
    crc = 0
    for _, data in sections:
        crc = zlib.crc32(data + b"\0" * ((-len(data)) % _ALIGN), crc)
    header = json.dumps({"format": FORMAT, "code": code_id(), "namespace": namespace_key(index.namespace),
                         "version": version, "model": model, "rows": n, "dim": int(state.matrix.shape[1]) if n else 0,
                         "sections": layout, "crc32": crc, "size": at}).encode()
    head = _MAGIC + struct.pack("<Q", len(header)) + header
    head += b"\0" * ((-len(head)) % _ALIGN)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(temporary, "wb") as out:
            out.write(head)
            for _, data in sections:
                out.write(data)
                out.write(b"\0" * ((-len(data)) % _ALIGN))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def read_snapshot(path: Path, namespace: Namespace, model: str) -> tuple[NamespaceIndex, int] | None:
    """``(view, version)`` from a snapshot file; ``None`` when it is missing, damaged or not this one's."""
    try:
        with open(path, "rb") as handle:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (FileNotFoundError, ValueError):  # ValueError: an empty file cannot be mapped
        return None
    try:
        return _parsed(mapped, namespace, model, path)
    except Exception as err:  # noqa: BLE001 - any damage means: load from the store of record
        _log.warning("ignoring the view snapshot %s: %s: %s", path, type(err).__name__, err)
        return None


def _parsed(mapped: mmap.mmap, namespace: Namespace, model: str, path: Path) -> tuple[NamespaceIndex, int] | None:
    if mapped[: len(_MAGIC)] != _MAGIC:
        raise ValueError("not a view snapshot")
    (length,) = struct.unpack_from("<Q", mapped, len(_MAGIC))
    start = len(_MAGIC) + 8
    header = json.loads(bytes(mapped[start : start + length]))
    body = start + length + (-(start + length)) % _ALIGN
    expected = {"format": FORMAT, "code": code_id(), "namespace": namespace_key(namespace), "model": model}
    if (found := {k: header.get(k) for k in expected}) != expected:
        _log.info("view snapshot %s is of %s, not %s: ignored", path, found, expected)
        return None
    whole = memoryview(mapped)
    if len(mapped) != body + header["size"] or zlib.crc32(whole[body:]) != header["crc32"]:
        raise ValueError("damaged (size or CRC-32 differs)")
    sections = {name: whole[body + at : body + at + size] for name, (at, size) in header["sections"].items()}
    n, dim = header["rows"], header["dim"]
    matrix = np.frombuffer(sections["matrix"], dtype=np.float32).reshape(n, dim)
    units = UnitList.from_json(sections["units"], np.frombuffer(sections["offsets"], dtype=np.int64))
    collecting = gc.isenabled()
    gc.disable()  # millions of new containers, none garbage: collections would double the load's time
    try:
        parts = pickle.loads(sections["state"])  # noqa: S301 - our own file, CRC-checked (see the module docs)
    finally:
        if collecting:
            gc.enable()
    return NamespaceIndex.from_state(namespace, NamespaceState(matrix, units, parts)), int(header["version"])


class ViewSnapshots:
    """The snapshot files of one memory's namespaces, in ``directory``.

    Args:
        directory: where the files go (one per namespace, named by a hash of its key).
        log: the namespace log (versions, and what each changed).
        model: :func:`embeddings_id` of the memory's embeddings.
        seen: the namespace version the memory's caches are at (``None``: never looked).
    """

    def __init__(self, directory: str | Path, log: NamespaceLog, model: str,
                 seen: Callable[[Namespace], int | None]) -> None:
        self.directory, self.log, self.model, self.seen = Path(directory), log, model, seen

    @classmethod
    def of_memory(cls, directory: str | Path | Literal[False] | None, persist_directory: Path | None,
                  log: NamespaceLog, embeddings: Any, seen: Callable[[Namespace], int | None]) -> ViewSnapshots | None:
        """A memory's snapshots: in ``directory``, else beside an embedded store; ``None`` when it keeps none."""
        if directory is None and persist_directory is not None:
            directory = persist_directory / SNAPSHOT_DIRNAME
        return cls(directory, log, embeddings_id(embeddings), seen) if directory else None

    def path(self, namespace: Namespace) -> Path:
        """The namespace's snapshot file."""
        return self.directory / f"{hashlib.sha256(namespace_key(namespace).encode()).hexdigest()[:32]}.view"

    def restore(self, namespace: Namespace) -> tuple[NamespaceIndex, Changes | None] | None:
        """The saved view and the changes made since it was saved (``None``: none), or ``None`` to load whole."""
        got = read_snapshot(self.path(namespace), namespace, self.model)
        if got is None:
            return None
        index, version = got
        current = self.log.version(namespace)
        changes = None if version >= current else self.log.changes(namespace, version, current)
        if version > current or (version < current and changes is None):
            return None  # the log was reset, or no longer reaches back to the snapshot
        index.snapshot_version = version
        return index, changes

    def save(self, index: NamespaceIndex) -> bool:
        """Save ``index`` if it changed since its snapshot; whether a file was written (failures are logged).

        Only a view as current as the namespace log is saved, and a file whose namespace
        changed while it was written is removed again: a view from before another writer's
        delete must not write the units it forgot back to disk (that writer removes the
        file after logging its delete, see :meth:`remove`).
        """
        version = self.seen(index.namespace)
        if version is None or version == index.snapshot_version or not len(index):
            return False
        if self.log.version(index.namespace) != version:
            return False
        path = self.path(index.namespace)
        try:
            write_snapshot(path, index, version, self.model)
        except Exception as err:  # noqa: BLE001 - a cache: the store of record is untouched
            _log.warning("could not save the view snapshot of %s: %s: %s", index.namespace, type(err).__name__, err)
            return False
        if self.log.version(index.namespace) != version:
            path.unlink(missing_ok=True)
            return False
        index.snapshot_version = version
        return True

    def remove(self, namespace: Namespace) -> Path | None:
        """Delete the namespace's snapshot (a drop, or a forget); the file removed, ``None`` if there was none."""
        path = self.path(namespace)
        try:
            path.unlink()
        except FileNotFoundError:
            return None
        return path
