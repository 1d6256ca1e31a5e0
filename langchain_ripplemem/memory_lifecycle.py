"""The lifecycle methods of :class:`~langchain_ripplemem.memory.RippleMem`: forgetting, correcting, moving memories.

``delete``, ``delete_conversation``, ``delete_namespace`` (erasing, ``docs/lifecycle.md``),
``suppress`` and ``unsuppress`` (user corrections), ``update_metadata``, and
``export_namespace`` / ``import_namespace`` (``docs/export.md``), each with its async twin.
They change or move memories already stored, each through the memory's write path
(:class:`~langchain_ripplemem.write.transaction.WritePath`); :class:`MemoryLifecycle` is
mixed into the facade, so they are ``RippleMem``'s methods.

Example:
    >>> from langchain_ripplemem import RippleMem
    >>> memory = RippleMem()
    >>> _ = memory.add_messages(["I moved to Porto.", "I have a beagle."], namespace="maya")
    >>> ids = [u.id for u in memory.list_units("maya")]
    >>> memory.suppress(ids[:1], namespace="maya", reason="wrong"), len(memory.list_units("maya"))
    (1, 1)
    >>> memory.delete_conversation("nothing", namespace="maya").units
    0

"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from langchain_ripplemem._runtime.drivers import async_twin
from langchain_ripplemem.index.marks import unit_metadata_fields, with_suppression
from langchain_ripplemem.index.sessions import conversation_units
from langchain_ripplemem.schemas import Namespace, validate_namespace
from langchain_ripplemem.storage.export_format import ExportContents
from langchain_ripplemem.write import namespace_transfer
from langchain_ripplemem.write.forget import ForgetReport
from langchain_ripplemem.write.namespace_transfer import ExportReport, ImportReport

if TYPE_CHECKING:
    from langchain_ripplemem.index.unit_index import UnitIndex
    from langchain_ripplemem.storage.embedding_record import EmbeddingModelCheck
    from langchain_ripplemem.write.transaction import WritePath

__all__ = ["MemoryLifecycle"]


class MemoryLifecycle:
    """``RippleMem``'s methods that change or move stored memories (a mixin of the facade).

    They read the memory's ``index``, its write path ``_write``, its embedding model check
    ``_check_model`` and ``_ns`` (a namespace validated and caught up with other writers).
    """

    index: UnitIndex
    _write: WritePath
    _check_model: EmbeddingModelCheck
    _ns: Callable[[Namespace | str | None], Namespace]

    def delete(self, ids: Iterable[str], *, namespace: Namespace | str | None = None) -> ForgetReport:
        """Delete units of ``namespace`` and every edge touching them, and erase them from the store's files.

        When it returns, no file of an embedded store holds the units' text, restatements,
        cues or vectors (``docs/lifecycle.md``, "Deletes"); ids of other namespaces and unknown
        ids are ignored. ``ids`` may be one id.

        Returns:
            What was deleted (``units``, ``unit_ids``, ``edges``), the files rewritten, and what
            a server backend may still keep (``kept``).

        Raises:
            ErasureError: a file could not be rewritten (the units are deleted all the same).
        """
        ns = self._ns(namespace)
        return self._write.forget(ns, [ids] if isinstance(ids, str) else list(ids))

    def delete_conversation(self, conversation_id: str, *,
                            namespace: Namespace | str | None = None) -> ForgetReport:
        """Delete every unit of ``namespace`` from ``conversation_id`` (and their edges), as :meth:`delete`.

        Raises:
            ValueError: naming ``conversation_id`` when it is not a non-empty string.
        """
        if not isinstance(conversation_id, str) or not conversation_id:
            raise ValueError(f"conversation_id must be a non-empty string, got {conversation_id!r}")
        ns = self._ns(namespace)
        ids = [u.id for u in conversation_units(self.index.namespace_index(ns), conversation_id)]
        return self.delete(ids, namespace=ns) if ids else ForgetReport(namespace=ns)

    def suppress(self, ids: Iterable[str], *, namespace: Namespace | str | None = None, reason: str) -> int:
        """Hide units from recall (a user correction) but keep them for audit; returns units changed.

        Persisted in each unit's metadata as ``{"suppressed": {"reason", "at"}}``; see
        :meth:`unsuppress` and ``list_units(..., include_suppressed=True)``.

        Raises:
            ValueError: naming ``ids`` or ``reason`` when unusable.
        """
        return self._set_suppressed(ids, namespace, reason)

    def unsuppress(self, ids: Iterable[str], *, namespace: Namespace | str | None = None) -> int:
        """Lift :meth:`suppress`; returns units changed."""
        return self._set_suppressed(ids, namespace, None)

    def _set_suppressed(self, ids: Iterable[str], namespace: Namespace | str | None, reason: str | None) -> int:
        ids = [ids] if isinstance(ids, str) else list(ids) if isinstance(ids, Iterable) else ids
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise ValueError(f"ids must be a list of unit id strings, got {ids!r}")
        with_suppression([], reason)  # a blank reason fails before anything is locked
        return self._write.set_suppressed(self._ns(namespace), ids, reason)

    def update_metadata(self, fields_by_id: Mapping[str, Mapping[str, Any]], *,
                        namespace: Namespace | str | None = None) -> int:
        """Merge JSON fields into units' metadata (a store item's expiry, for one); returns units changed.

        Ids not in ``namespace`` are skipped. The lifecycle marks (``suppressed``, supersession's)
        and ``seq`` are not set here: :meth:`suppress` and the write path own them.

        Raises:
            ValueError: naming ``fields_by_id`` when it is not ``{unit id: {field: JSON value}}``
                or sets a mark.
        """
        fields = unit_metadata_fields(fields_by_id)
        return self._write.set_metadata(self._ns(namespace), fields) if fields else 0

    def delete_namespace(self, namespace: Namespace | str) -> ForgetReport:
        """Delete every unit and edge of exactly ``namespace`` (it must be given explicitly), as :meth:`delete`.

        Child namespaces are not touched. The report has ``namespace_dropped=True``.
        """
        ns = validate_namespace(namespace)
        return self._write.forget_namespace(ns)

    def export_namespace(self, namespace: Namespace | str | None, path: str | Path, *,
                         vectors: bool = True) -> ExportReport:
        """Write a namespace's units, edges, marks and (unless ``vectors=False``) vectors to a JSONL file.

        The format and what each field holds: ``docs/export.md`` (:mod:`~langchain_ripplemem.write.namespace_transfer`).
        """
        ns = self._ns(namespace)
        self._check_model()
        return namespace_transfer.export_namespace(self._write, ns, path, vectors=vectors)

    def import_namespace(self, path: str | Path | ExportContents, namespace: Namespace | str | None = None, *,
                         other_model: Literal["refuse", "reembed"] = "refuse") -> ImportReport:
        """Store the memories of an export file (by default under the namespace they came from); again adds nothing.

        The whole file is checked before anything is written (``docs/export.md``); ``path`` may also be
        a file :func:`~langchain_ripplemem.storage.export_format.read_export` read.

        Raises:
            InvalidExportFileError: naming the line that is wrong (newer format, truncated, not JSON).
            EmbeddingModelMismatchError: naming both models, for a file of another embedding model
                unless ``other_model="reembed"``.
        """
        return namespace_transfer.import_namespace(self._write, path, namespace, other_model=other_model,
                                                   check_model=self._check_model)

    # Async twins: the sync method itself, run in a worker thread (storage and CPU work, nothing to await).
    adelete = async_twin(delete)
    adelete_conversation = async_twin(delete_conversation)
    asuppress = async_twin(suppress)
    aunsuppress = async_twin(unsuppress)
    adelete_namespace = async_twin(delete_namespace)
    aupdate_metadata = async_twin(update_metadata)
    aexport_namespace = async_twin(export_namespace)
    aimport_namespace = async_twin(import_namespace)
