"""Forgetting: what a delete removed, and the files it rewrote so that nothing of the units remains.

Every delete of the package goes through
:meth:`~langchain_ripplemem.write.path.WritePath.forget` (``RippleMemory.delete``,
``delete_conversation``; ``delete_namespace`` through ``forget_namespace``) or, for an edited
turn's old memories, through the ingest that replaces them; each ends in :func:`erase_files`
once the delete is logged. Then no file of the store holds the forgotten units' text,
restatements, cues or vectors:

* the namespace's view snapshot (``ripplemem_views/``, which holds all of them) is removed;
  the next close saves the view again, without the units;
* every backend that can keep deleted bytes purges them
  (:class:`~langchain_ripplemem.storage.base.Purging`): Chroma rewrites its SQLite file
  (its index and log were purged by the delete itself,
  :mod:`~langchain_ripplemem.storage.chroma_erase`), the SQLite edge file truncates its
  write-ahead log; a server's files are out of reach, and the report says what they keep.

Example:
    >>> report = ForgetReport(namespace=("users", "maya"), unit_ids=("u1", "u2"), edges=3)
    >>> report.units, report.summary()
    (2, "forgot 2 units and 3 edges from namespace 'users/maya'")
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from langchain_ripplemem.schemas import Namespace, format_namespace
from langchain_ripplemem.storage.base import Purged, Purging

if TYPE_CHECKING:
    from langchain_ripplemem.index.snapshot import ViewSnapshots

__all__ = ["ForgetReport", "erase_files"]


class ForgetReport(BaseModel):
    """What a forget removed, and where it erased the units from (``docs/lifecycle.md``, "Deletes")."""

    model_config = ConfigDict(frozen=True)

    namespace: Namespace
    unit_ids: tuple[str, ...] = Field(default=(), description="the units deleted")
    edges: int = Field(default=0, description="edges deleted with them")
    namespace_dropped: bool = Field(default=False, description="the whole namespace was deleted")
    files: tuple[str, ...] = Field(
        default=(), description="files rewritten or removed so that none of the units' bytes remain in them")
    kept: tuple[str, ...] = Field(
        default=(), description="what may still hold them, out of the package's reach, and how to purge it")
    seconds: float = Field(default=0.0, description="how long the forget took, erasing included")

    @property
    def units(self) -> int:
        """How many units were deleted."""
        return len(self.unit_ids)

    def summary(self) -> str:
        """One line: how many units and edges left which namespace."""
        unit_word = "unit" if self.units == 1 else "units"
        edge_word = "edge" if self.edges == 1 else "edges"
        return (f"forgot {self.units} {unit_word} and {self.edges} {edge_word} from namespace "
                f"{format_namespace(self.namespace)!r}")


def erase_files(namespace: Namespace, backends: Iterable[object], snapshots: ViewSnapshots | None) -> Purged:
    """After a delete of ``namespace`` was logged: remove its view snapshot, then let each backend purge.

    Run after the namespace log records the delete: a view saved by another process before
    then is removed here, and one saved after it is not (the snapshot's save checks the
    log). Each backend object purges once, whatever roles it plays.

    Raises:
        ErasureError: a backend could not rewrite a file (the units are deleted all the same).
    """
    files: list[str] = []
    kept: list[str] = []
    if snapshots is not None and (removed := snapshots.remove(namespace)) is not None:
        files.append(str(removed))
    purged: set[int] = set()
    for backend in backends:
        if id(backend) in purged or not isinstance(backend, Purging):
            continue
        purged.add(id(backend))
        done = backend.purge()
        files += done.files
        kept += done.kept
    return Purged(tuple(dict.fromkeys(files)), tuple(dict.fromkeys(kept)))
