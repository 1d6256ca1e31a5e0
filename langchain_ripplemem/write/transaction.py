"""RippleMem's write path: from extracted units to stored, linked memories.

:class:`WritePath` commits a batch: it gathers the windows' units, numbers the
new ones, embeds them, asks the optional LLM supersession, then, under the
namespace's writer lock, stores them, links them and logs the change. The slow
work (embedding, LLM supersession) runs before the lock, against a
:class:`Snapshot` of the namespace index; under the lock, :meth:`Snapshot.written_since`
tells which units another writer stored in between, so only that part is redone.

Units are stored before their edges: a crash in between leaves units without a
"linked" mark, and :meth:`WritePath.ensure_linked` (run by each memory object's
first write or recall of a namespace; never by reads such as ``stats``) links them with
the edges a clean run would have made.

Deletes go through :meth:`WritePath.forget` and :meth:`WritePath.forget_namespace` (and the
replacement of an edited turn's memories in :meth:`WritePath.commit`): the units leave under
the writer lock, and once the delete is logged every file that could keep their bytes is
rewritten (:mod:`~langchain_ripplemem.write.forget`).
"""

from __future__ import annotations

import time
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_ripplemem.config import WriteConfig
from langchain_ripplemem.conversations.checks import checked_conversation, repeated_sessions
from langchain_ripplemem.conversations.files import conversation_from_json
from langchain_ripplemem.edges.edge_cache import EdgeCache
from langchain_ripplemem.embeddings import embed_texts
from langchain_ripplemem.errors import (
    ErasureError,
    FailedWindowsWarning,
    InvalidConversationError,
    InvalidNamespaceError,
)
from langchain_ripplemem.index.marks import with_suppression
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.index.sessions import conversation_units
from langchain_ripplemem.index.sync import NamespaceSync
from langchain_ripplemem.index.unit_index import UnitIndex
from langchain_ripplemem.schemas import Conversation, Edge, IngestReport, MemoryUnit, Namespace
from langchain_ripplemem.storage.protocols import EdgeBackend, Purged
from langchain_ripplemem.write.extraction import known_turns
from langchain_ripplemem.write.extraction.extractor import ExtractionResult, Extractor, Window
from langchain_ripplemem.write.extraction.known_turns import KnownTurns
from langchain_ripplemem.write.extraction.windows import make_windows
from langchain_ripplemem.write.forget import ForgetReport, erase_files
from langchain_ripplemem.write.linking.local_linking import link_rows
from langchain_ripplemem.write.supersession.llm_supersession import LLMSupersession
from langchain_ripplemem.write.supersession.statement_rules import refresh_supersession

__all__ = ["PROGRESS_SLICE", "EmbedProgress", "Removed", "Snapshot", "WritePath", "collect_units", "embed_reporting",
           "numbered"]

#: ``(texts embedded so far, texts to embed)``, called as a write's embedding advances.
EmbedProgress = Callable[[int, int], None]
#: Texts per encoder call while someone listens to the progress: large enough that the
#: encoder still sorts a slice by length into well-packed passes (1 % more padding than
#: one call on a LongMemEval haystack, against 4 % at 64), small enough to report often.
PROGRESS_SLICE = 256


def embed_reporting(embeddings: Embeddings, texts: list[str], batch_size: int,
                    on_embedded: EmbedProgress | None = None) -> np.ndarray:
    """:func:`~langchain_ripplemem.embeddings.embed_texts`, telling ``on_embedded`` after each slice.

    Without a listener the texts go to the encoder in one call, as before.

    Example:
        >>> from langchain_core.embeddings import FakeEmbeddings
        >>> heard = []
        >>> embed_reporting(FakeEmbeddings(size=4), ["a"] * 300, 64, lambda *p: heard.append(p)).shape
        (300, 4)
        >>> heard
        [(0, 300), (256, 300), (300, 300)]

    """
    if on_embedded is None or not texts:
        return embed_texts(embeddings, texts, batch_size)
    on_embedded(0, len(texts))
    parts = []
    for start in range(0, len(texts), PROGRESS_SLICE):
        parts.append(embed_texts(embeddings, texts[start : start + PROGRESS_SLICE], batch_size))
        on_embedded(min(start + PROGRESS_SLICE, len(texts)), len(texts))
    return np.vstack(parts)


def collect_units(ns: Namespace, results: list[ExtractionResult], report: IngestReport,
                  extract_seconds: float | None = None) -> dict[str, MemoryUnit]:
    """Units of every window that did not fail, first occurrence per id; failures and usage go to ``report``.

    ``extract_seconds``, the extraction's wall time when the caller measured it, is the
    report's ``"extract"`` time; else the windows' own times are summed. (Windows may
    run concurrently, and adding their times to the wall time counted the wait twice.)
    Failed windows are also a :class:`~langchain_ripplemem.errors.FailedWindowsWarning`.

    Raises:
        InvalidNamespaceError: an extractor returned a unit of another namespace.
    """
    units: dict[str, MemoryUnit] = {}
    failed = []
    for result in results:
        report.usage = report.usage.add(result.usage)
        report.warnings.extend(result.warnings)
        if result.failed is not None:
            failed.append(result.failed)
            continue
        for unit in result.units:
            if unit.namespace != ns:
                raise InvalidNamespaceError(f"extractor returned unit {unit.id} for {unit.namespace}, expected {ns}")
            units.setdefault(unit.id, unit)
    if extract_seconds is not None:
        report.usage.seconds["extract"] = extract_seconds
    report.failed_windows.extend(failed)
    report.units = len(units)
    report.unit_ids = list(units)
    if failed:
        warnings.warn(FailedWindowsWarning(
            f"{len(failed)} of {len(results)} extraction windows of conversation {failed[0].conversation_id!r} "
            f"failed, and nothing of them was stored (IngestReport.failed_windows names them; ingesting the "
            f"conversation again retries them); the first: turns {', '.join(failed[0].turn_ids)}: "
            f"{failed[0].error}"), stacklevel=4)
    return units


def numbered(namespace_index: NamespaceIndex, new: list[MemoryUnit],
             extra: dict[str, Any] | None = None) -> list[MemoryUnit]:
    """``new`` with ``metadata["seq"]`` after every stored unit's (and ``extra`` merged in).

    ``seq`` orders units on reload. After deletes the row count is below the
    largest seq, so numbering continues after the largest and never reuses one.
    """
    first = 1 + namespace_index.max_seq  # kept up to date by the index: no scan of its units
    return [u.model_copy(update={"metadata": {**u.metadata, **(extra or {}), "seq": first + i}})
            for i, u in enumerate(new)]


class Removed(NamedTuple):
    """What :meth:`WritePath.remove` deleted: the ids that were present, and the edges touching them."""

    ids: list[str]
    edges: int


@dataclass
class Snapshot:
    """A namespace index as the write path saw it before taking the writer lock."""

    namespace_index: NamespaceIndex
    size: int = field(init=False)

    def __post_init__(self) -> None:
        self.size = len(self.namespace_index)

    def written_since(self, namespace_index: NamespaceIndex) -> set[str]:
        """Ids in ``namespace_index`` (the current one) that the snapshot did not hold."""
        if namespace_index is self.namespace_index and len(namespace_index) == self.size:
            return set()  # indexes only grow in place; a delete or reload makes a new index
        before = set(self.namespace_index.ids[: self.size])
        return {uid for uid in namespace_index.ids if uid not in before}


@dataclass
class WritePath:
    """The write side of one memory object: commit batches, link units, recover from crashes."""

    embeddings: Embeddings
    config: WriteConfig
    index: UnitIndex
    edge_cache: EdgeCache
    edge_backend: EdgeBackend
    sync: NamespaceSync
    superseder: LLMSupersession | None = None
    # The index each namespace's crash recovery last checked. Only an index loaded whole from
    # storage can hold units a crashed writer stored unlinked: what catch-up adds was logged
    # by its writer after linking, so a grown index needs no second look at every id.
    _checked: weakref.WeakValueDictionary[Namespace, NamespaceIndex] = field(
        default_factory=weakref.WeakValueDictionary, init=False, repr=False)

    def begin(self, ns: Namespace, conversation: Conversation | dict[str, Any], extractor: Extractor,
              ) -> tuple[Conversation, list[Window], IngestReport, KnownTurns]:
        """What a conversation's write starts from: the conversation, its windows to extract, a report, known turns.

        A JSON object is read as the CLI and MCP read one.
        The windows are those :func:`~langchain_ripplemem.write.extraction.known_turns.new_work` leaves:
        what the memories of this conversation's sessions (and only them) already hold is not extracted again.

        Raises:
            InvalidConversationError: the conversation has no turns, or a field is bad.
        """
        conv = conversation if isinstance(conversation, Conversation) else conversation_from_json(conversation)
        n_turns = sum(len(s.turns) for s in conv.sessions)
        if n_turns == 0:
            raise InvalidConversationError(f"conversation {conv.id!r} has no turns")
        if conv is conversation:  # a JSON object was checked as it was read
            checked_conversation(conv, f"conversation {conv.id!r}")
        repeats = repeated_sessions(conv, f"conversation {conv.id!r}")
        self.ensure_linked(ns)
        extraction = self.config.extraction
        windows = make_windows(conv, extraction.window_size, extraction.window_overlap)
        known_units = conversation_units(self.index.namespace_index(ns), conv.id,
                                         [session.id for session in conv.sessions])
        windows, known = known_turns.new_work(extractor, known_units, conv, windows)
        return conv, windows, IngestReport(namespace=ns, conversations=1, turns=n_turns, warnings=repeats), known

    def commit(self, ns: Namespace, results: list[ExtractionResult], report: IngestReport,
               unit_metadata: dict[str, Any] | None = None, on_embedded: EmbedProgress | None = None, *,
               known: KnownTurns | None = None, extract_seconds: float | None = None) -> IngestReport:
        """Write every valid window's units, then link them. Failed windows write nothing.

        Embedding and LLM supersession, the slow steps, run before the namespace's
        writer lock, against the index as it was then; under the lock, units another
        writer stored meanwhile leave the batch, or are asked about as candidates.
        ``on_embedded(done, total)`` hears of the embedding's progress (see :func:`embed_reporting`).
        With ``known``, units citing only turns memories already cite are dropped (``write/extraction/known_turns.py``).
        ``extract_seconds``: the extraction's wall time (see :func:`collect_units`).
        """
        units = collect_units(ns, results if known is None else known.kept(results), report, extract_seconds)
        self.sync.catch_up(ns)
        snapshot = Snapshot(self.index.namespace_index(ns))
        new = numbered(snapshot.namespace_index,
                       [u for uid, u in units.items() if uid not in snapshot.namespace_index.pos], unit_metadata)
        timer = time.perf_counter()
        vectors = embed_reporting(self.embeddings, [u.restatement for u in new],
                                  self.config.extraction.embed_batch_size, on_embedded)
        report.usage.seconds["embed"] = time.perf_counter() - timer
        if self.superseder is not None and new:  # before the write: a failed call leaves nothing half-done
            new = self.superseder.annotate(snapshot.namespace_index, new, vectors, report)
        with self.sync.writing(ns):
            namespace_index = self.index.namespace_index(ns)
            if since := snapshot.written_since(namespace_index):
                keep = [i for i, u in enumerate(new) if u.id not in namespace_index.pos]
                new, vectors = numbered(namespace_index, [new[i] for i in keep]), vectors[keep]
                if self.superseder is not None and new:
                    new = self.superseder.annotate(namespace_index, new, vectors, report, among=since)
            report.new_units = len(new)
            stale = known.replaced(units.values()) if known is not None else []  # edited turns' old memories
            edges: list[Edge] = []
            touched: list[str] = []
            if new:
                edges, touched = self._store(ns, len(namespace_index), new, vectors, report)
            if stale:  # after linking, which reads the rows just added
                report.replaced = self.remove(ns, stale).ids
            if new or stale:
                self.sync.written(ns, edges=touched)
        for edge in edges:
            report.edges[edge.type] = report.edges.get(edge.type, 0) + 1
        if report.replaced:  # the edited turns' old memories leave the files too, as any forget's
            try:
                self.erase(ns)
            except ErasureError as err:  # the ingest is done: say so rather than fail it
                report.warnings.append(f"the replaced memories are deleted but not erased from every file: {err}")
        return report

    def _store(self, ns: Namespace, start: int, new: list[MemoryUnit], vectors: np.ndarray,
               report: IngestReport) -> tuple[list[Edge], list[str]]:
        """Store and link new units (under the writer lock); the edges made and the ids linked."""
        timer = time.perf_counter()
        # Units first, edges second: a crash in between leaves units without a
        # "linked" mark, and the next open links them (see ensure_linked).
        self.index.add(ns, new, vectors)
        report.usage.seconds["index"] = time.perf_counter() - timer
        timer = time.perf_counter()
        edges, touched = self.link(ns, list(range(start, start + len(new))))
        report.usage.seconds["link"] = time.perf_counter() - timer
        if self.config.supersession.enabled:
            report.superseded = refresh_supersession(self.index, ns, new)
        return edges, touched

    def remove(self, ns: Namespace, ids: list[str]) -> Removed:
        """Delete units of ``ns`` and every edge touching them (under the writer lock); the ids present, edges."""
        gone = self.index.get(ns, ids) if self.config.supersession.enabled else []
        present = self.index.delete(ns, ids)
        self.edge_cache.removing(ns, present)  # recalls under way keep walking the edges they started with
        edges = self.edge_backend.remove_units(ns, present) if present else 0
        self.edge_cache.remove(ns, present)
        refresh_supersession(self.index, ns, gone)  # what they superseded is current again
        return Removed(present, edges)

    def forget(self, ns: Namespace, ids: list[str]) -> ForgetReport:
        """Delete units of ``ns`` with their edges, then erase them from every file of the store.

        The one way units leave a memory (a time-to-live's expiry too): under the writer
        lock the units, their edges and marks are deleted and the delete logged; then
        :meth:`erase` rewrites what could still hold their bytes.

        Raises:
            ErasureError: a file could not be rewritten (the units are deleted all the same).
        """
        started = time.perf_counter()
        with self.sync.writing(ns):
            removed = self.remove(ns, ids)
            self.sync.written(ns)
        purged = self.erase(ns) if removed.ids else Purged()
        return ForgetReport(namespace=ns, unit_ids=tuple(removed.ids), edges=removed.edges, files=purged.files,
                            kept=purged.kept, seconds=time.perf_counter() - started)

    def forget_namespace(self, ns: Namespace) -> ForgetReport:
        """Delete every unit, edge and mark of exactly ``ns``, then erase them from every file (see :meth:`forget`)."""
        started = time.perf_counter()
        with self.sync.writing(ns):
            ids = list(self.index.namespace_index(ns).ids)
            self.index.drop_namespace(ns)
            edges = self.edge_backend.drop(ns) or 0
            self.edge_cache.invalidate(ns)
            self.sync.resumed.discard(ns)
            self.sync.written(ns)
        purged = self.erase(ns) if ids or edges else Purged()
        return ForgetReport(namespace=ns, unit_ids=tuple(ids), edges=edges, namespace_dropped=True,
                            files=purged.files, kept=purged.kept, seconds=time.perf_counter() - started)

    def erase(self, ns: Namespace) -> Purged:
        """Rewrite every file that may hold units of ``ns`` deleted since the last erase (once the delete is logged)."""
        return erase_files(ns, (self.index.backend, self.edge_backend, self.sync.log), self.index.snapshots)

    def set_suppressed(self, ns: Namespace, ids: list[str], reason: str | None) -> int:
        """Suppress units of ``ns`` with ``reason``, or lift it with ``None``; returns units changed.

        Under the writer lock: the marks go to the unit backend and the index, supersession is refreshed.
        """
        with self.sync.writing(ns):
            changed = with_suppression(self.index.get(ns, dict.fromkeys(ids)), reason)
            self.index.replace(ns, changed)
            if self.config.supersession.enabled:
                # A suppressed statement neither supersedes nor is superseded.
                refresh_supersession(self.index, ns, changed)
            self.sync.written(ns)
        return len(changed)

    def set_metadata(self, ns: Namespace, fields_by_id: dict[str, dict[str, Any]]) -> int:
        """Merge ``fields_by_id[unit id]`` into those units' metadata (under the writer lock); returns units changed.

        Text and vectors stay; the marks and the index follow the new metadata (``UnitIndex.replace``).
        """
        with self.sync.writing(ns):
            changed = [u.model_copy(update={"metadata": {**u.metadata, **fields_by_id[u.id]}})
                       for u in self.index.get(ns, fields_by_id)]
            self.index.replace(ns, changed)
            self.sync.written(ns)
        return len(changed)

    def link(self, ns: Namespace, rows: list[int]) -> tuple[list[Edge], list[str]]:
        """Link the units at ``rows``; returns the edges and the linked ids, which every new edge touches.

        The log names only the linked ids as having gained edges: another process's
        cache then re-reads the edges of the new units, not every edge of each old
        unit they link to (hubs have hundreds).
        """
        namespace_index = self.index.namespace_index(ns)
        edges = link_rows(namespace_index, rows, self.config.linking)
        linked = [namespace_index.ids[r] for r in rows]
        self.edge_backend.add(ns, edges, linked=linked)
        self.edge_cache.add(ns, edges)
        return edges, linked

    def ensure_linked(self, ns: Namespace) -> None:
        """Link units an interrupted ingest stored but did not link (crash recovery)."""
        if ns in self.sync.resumed or self._checked.get(ns) is self.index.namespace_index(ns):
            return
        if self._unlinked(ns):  # the lock only when there is work: reads never wait for writers
            with self.sync.writing(ns):
                missing = self._unlinked(ns)  # another writer may have linked them meanwhile
                if missing:
                    _, touched = self.link(ns, missing)
                    self.sync.written(ns, edges=touched)
        self.sync.resumed.add(ns)
        self._checked[ns] = self.index.namespace_index(ns)

    def _unlinked(self, ns: Namespace) -> list[int]:
        namespace_index, linked = self.index.namespace_index(ns), self.edge_backend.linked_ids(ns)
        return [i for i, uid in enumerate(namespace_index.ids) if uid not in linked]
