"""RippleMemory: the facade that owns the unit index, the typed graph and both paths.

Example:
    >>> from langchain_ripplemem import RippleMemory
    >>> memory = RippleMemory()  # embedded, ephemeral, offline
    >>> report = memory.add_messages(  # doctest: +SKIP
    ...     [HumanMessage("I'm allergic to shellfish.")], namespace=("maya",))
    >>> memory.recall("What can't Maya eat?", namespace=("maya",)).units  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
import weakref
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_ripplemem.chroma import chroma_client
from langchain_ripplemem.config import RecallConfig, WriteConfig
from langchain_ripplemem.embeddings import embed_query, embed_texts
from langchain_ripplemem.errors import InvalidConversationError
from langchain_ripplemem.extraction.base import ExtractionResult, Extractor, Window
from langchain_ripplemem.extraction.windows import with_progress
from langchain_ripplemem.index import UnitIndex
from langchain_ripplemem.ingest import Snapshot, collect_units, numbered
from langchain_ripplemem.marks import SUPERSEDED_BY, is_suppressed, with_suppression
from langchain_ripplemem.memory_graph.linking import link_rows
from langchain_ripplemem.memory_graph.store import GRAPH_FILENAME, EdgeStore
from langchain_ripplemem.recall.visibility import coerce_as_of
from langchain_ripplemem.schemas import (
    Conversation,
    Edge,
    IngestReport,
    MemoryUnit,
    Namespace,
    NamespaceStats,
    RecallResult,
    validate_namespace,
)
from langchain_ripplemem.storage.locks import StoreLock, embedded_store_directory
from langchain_ripplemem.supersession.llm import llm_supersession
from langchain_ripplemem.supersession.rules import refresh_supersession

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

    from langchain_ripplemem.retrievers import RippleMemRetriever

DEFAULT_COLLECTION = "ripplemem_units"


class RippleMemory:
    """Long-term memory that recollects: write conversations, recall evidence sets.

    Args:
        embeddings: any LangChain ``Embeddings``; default the offline MiniLM ONNX model.
        persist_directory: keep units (Chroma) and edges (SQLite) on disk here;
            ``None`` keeps everything in memory for this process.
        client: a ``chromadb`` client (e.g. ``chromadb.HttpClient(...)``) to hold units
            instead; edges then go to ``graph_path`` (in memory when ``None``).
        collection_name: Chroma collection for units.
        graph_path: SQLite file for edges; defaults next to ``persist_directory``.
        extractor: an :class:`~langchain_ripplemem.extraction.base.Extractor`; default
            rule-based, or LLM-based when ``llm`` is given.
        llm: a chat model or ``"provider:model"`` string; opt-in upgrade for extraction,
            the recall controller and answers.
        write_config: windows, linking thresholds and caps.
        recall_config: recollection budgets and weights.
        namespace: default namespace for calls that do not pass one.
    """

    def __init__(
        self,
        embeddings: Embeddings | None = None,
        *,
        persist_directory: str | Path | None = None,
        client: Any = None,
        collection_name: str = DEFAULT_COLLECTION,
        graph_path: str | Path | None = None,
        extractor: Extractor | None = None,
        llm: BaseChatModel | str | None = None,
        write_config: WriteConfig | None = None,
        recall_config: RecallConfig | None = None,
        namespace: Namespace | str = ("default",),
    ) -> None:
        if client is not None and persist_directory is not None:
            raise ValueError("pass either client or persist_directory, not both")
        if embeddings is None:
            from langchain_ripplemem.embeddings import MiniLMOnnxEmbeddings

            embeddings = MiniLMOnnxEmbeddings()
        self.embeddings = embeddings
        self.write_config = write_config or WriteConfig()
        if self.write_config.semantic_threshold is None:
            from langchain_ripplemem.memory_graph.calibration import semantic_threshold_for

            self.write_config = self.write_config.model_copy(
                update={"semantic_threshold": semantic_threshold_for(embeddings)})
        self.recall_config = recall_config or RecallConfig()
        self.llm = llm
        self._superseder = llm_supersession(llm, self.write_config)  # opt-in: WriteConfig.llm_supersession
        self.default_namespace = validate_namespace(namespace)
        self.persist_directory = Path(persist_directory) if persist_directory is not None else None
        # An embedded store belongs to one process at a time: two writer processes
        # corrupt Chroma's segments (docs/architecture.md). Lock before opening it,
        # since opening can already write.
        self._store_lock: StoreLock | None = None
        lock_dir = self.persist_directory if client is None else embedded_store_directory(client)
        if lock_dir is not None:
            self._store_lock = StoreLock(lock_dir).acquire()
            weakref.finalize(self, self._store_lock.release)
        try:
            if client is None:
                client = chroma_client(self.persist_directory)
                if self.persist_directory is None:
                    # Embedded ephemeral clients share one in-process store: a unique
                    # collection keeps two ephemeral memories apart.
                    collection_name = f"{collection_name}-{uuid.uuid4().hex[:12]}"
            self.client = client
            collection = client.get_or_create_collection(
                collection_name, embedding_function=None, metadata={"hnsw:space": "cosine"}
            )
            self.index = UnitIndex(collection, embed_query=self.embed_query)
            if graph_path is None and self.persist_directory is not None:
                graph_path = self.persist_directory / GRAPH_FILENAME
            self.graph = EdgeStore(graph_path)
        except BaseException:
            if self._store_lock is not None:
                self._store_lock.release()
            raise
        self.extractor = extractor or self._default_extractor()
        self._write_lock = threading.RLock()
        self._resumed: set[Namespace] = set()
        self._versions: dict[Namespace, int] = {}  # last namespace version this object has seen
        self._recall_graph: Any = None

    def close(self) -> None:
        """Close the edge file and release the embedded store's process lock."""
        with self._write_lock:
            self.graph.close()
            if self._store_lock is not None:
                self._store_lock.release()
                self._store_lock = None

    def __enter__(self) -> RippleMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _default_extractor(self) -> Extractor:
        if self.llm is not None:
            from langchain_ripplemem.extraction.llm import LLMExtractor

            return LLMExtractor(self.llm, max_retries=self.write_config.llm_max_retries)
        from langchain_ripplemem.extraction.rules import RuleBasedExtractor

        return RuleBasedExtractor(config=self.write_config)

    def _ns(self, namespace: Namespace | str | None) -> Namespace:
        ns = self.default_namespace if namespace is None else validate_namespace(namespace)
        self._sync(ns)
        return ns

    def _sync(self, ns: Namespace) -> None:
        """Catch cached views of ``ns`` up with other writers' versions (logged in the edge file).

        Deleted units leave, new or rewritten ones are fetched by id; a drop or a log gap reloads all.
        """
        current = self.graph.version(ns)
        with self._write_lock:
            seen = self._versions.get(ns)
            if seen is not None and seen != current:
                changed = self.graph.changes(ns, seen, current) if seen < current else None
                if changed is None:
                    self.index.invalidate(ns)
                    self.graph.invalidate(ns)
                else:
                    self.index.catch_up(ns, changed.units, changed.removed)
                    self.graph.catch_up(ns, changed.edges, changed.removed)
                self._resumed.discard(ns)
            self._versions[ns] = current

    def _written(self, ns: Namespace) -> None:
        """Record this object's own write (and what it changed), so its own caches stay valid."""
        self._versions[ns] = self.graph.bump(ns, *self.index.take_written(ns))

    @contextmanager
    def _writing(self, ns: Namespace) -> Iterator[None]:
        """Serialise a write of ``ns`` with this object's threads and other processes on the edge file.

        The namespace's writer lock comes first, so waiting for another process blocks
        no lock of this object; then the caches catch up with every earlier write.
        """
        with self.graph.writer(ns), self._write_lock:
            self._sync(ns)
            yield

    # -- write path ---------------------------------------------------------------
    def add_conversation(
        self, conversation: Conversation | dict[str, Any], *, namespace: Namespace | str | None = None,
        progress: bool = False, unit_metadata: dict[str, Any] | None = None,
    ) -> IngestReport:
        """Extract, embed, index and link one conversation. Idempotent on re-ingest.

        Args:
            conversation: a :class:`Conversation` or its JSON form.
            namespace: whose memory this is (default: the memory's default namespace).
            progress: show a progress bar over windows.
            unit_metadata: JSON-serialisable fields merged into every new unit's metadata.

        Raises:
            InvalidConversationError: the conversation has no turns.
        """
        ns, conv, windows, report = self._prepare(conversation, namespace)
        started = time.perf_counter()
        results = [self.extractor.extract(w, ns) for w in with_progress(windows, progress, conv.id)]
        report.usage.seconds["extract"] = time.perf_counter() - started
        return self._commit(ns, results, report, unit_metadata)

    async def aadd_conversation(
        self, conversation: Conversation | dict[str, Any], *, namespace: Namespace | str | None = None,
        unit_metadata: dict[str, Any] | None = None,
    ) -> IngestReport:
        """Async :meth:`add_conversation` (extraction calls run concurrently)."""
        ns, _, windows, report = self._prepare(conversation, namespace)
        started = time.perf_counter()
        results = list(await asyncio.gather(*(self.extractor.aextract(w, ns) for w in windows)))
        report.usage.seconds["extract"] = time.perf_counter() - started
        return await asyncio.to_thread(self._commit, ns, results, report, unit_metadata)

    def add_messages(
        self, messages: Sequence[BaseMessage], *, namespace: Namespace | str | None = None,
        session_time: datetime | None = None, conversation_id: str | None = None,
    ) -> IngestReport:
        """Remember a list of LangChain messages as one session of a conversation."""
        from langchain_ripplemem.adapters import conversation_from_messages

        conv = conversation_from_messages(
            list(messages), conversation_id=conversation_id, session_time=session_time
        )
        return self.add_conversation(conv, namespace=namespace)

    def _prepare(
        self, conversation: Conversation | dict[str, Any], namespace: Namespace | str | None
    ) -> tuple[Namespace, Conversation, list[Window], IngestReport]:
        from langchain_ripplemem.extraction.windows import make_windows

        ns = self._ns(namespace)
        conv = conversation if isinstance(conversation, Conversation) else \
            Conversation.model_validate(conversation)
        n_turns = sum(len(s.turns) for s in conv.sessions)
        if n_turns == 0:
            raise InvalidConversationError(f"conversation {conv.id!r} has no turns")
        self._ensure_linked(ns)
        windows = make_windows(conv, self.write_config.window_size, self.write_config.window_overlap)
        return ns, conv, windows, IngestReport(namespace=ns, conversations=1, turns=n_turns)

    def _commit(self, ns: Namespace, results: list[ExtractionResult], report: IngestReport,
                unit_metadata: dict[str, Any] | None = None) -> IngestReport:
        """Write every valid window's units, then link them. Failed windows write nothing.

        Embedding and LLM supersession, the slow steps, run before the namespace's
        writer lock, against the view as it was then; under the lock, units another
        writer stored meanwhile leave the batch, or are asked about as candidates.
        """
        units = collect_units(ns, results, report)
        self._sync(ns)
        snapshot = Snapshot(self.index.view(ns))
        new = numbered(snapshot.view, [u for uid, u in units.items() if uid not in snapshot.view.pos], unit_metadata)
        timer = time.perf_counter()
        vectors = embed_texts(self.embeddings, [u.restatement for u in new], self.write_config.embed_batch_size)
        report.usage.seconds["embed"] = time.perf_counter() - timer
        if self._superseder is not None and new:  # before the write: a failed call leaves nothing half-done
            new = self._superseder.annotate(snapshot.view, new, vectors, report)
        with self._writing(ns):
            view = self.index.view(ns)
            if since := snapshot.written_since(view):
                keep = [i for i, u in enumerate(new) if u.id not in view.pos]
                new, vectors = numbered(view, [new[i] for i in keep]), vectors[keep]
                if self._superseder is not None and new:
                    new = self._superseder.annotate(view, new, vectors, report, among=since)
            report.new_units = len(new)
            if not new:
                return report
            start = len(view)
            timer = time.perf_counter()
            # Units first, edges second: a crash in between leaves units without a
            # "linked" mark, and the next open links them (see _ensure_linked).
            self.index.add(ns, new, vectors)
            report.usage.seconds["index"] = time.perf_counter() - timer
            timer = time.perf_counter()
            edges = self._link(ns, list(range(start, start + len(new))))
            report.usage.seconds["link"] = time.perf_counter() - timer
            if self.write_config.supersession:
                report.superseded = refresh_supersession(self.index, ns, new)
            self._written(ns)
        for edge in edges:
            report.edges[edge.type] = report.edges.get(edge.type, 0) + 1
        return report

    def _link(self, ns: Namespace, rows: list[int]) -> list[Edge]:
        view = self.index.view(ns)
        edges = link_rows(view, rows, self.write_config)
        self.graph.add_edges(ns, edges, linked=[view.ids[r] for r in rows])
        return edges

    def _ensure_linked(self, ns: Namespace) -> None:
        """Link units an interrupted ingest stored but did not link (crash recovery)."""
        if ns in self._resumed:
            return
        if self._unlinked(ns):  # the lock only when there is work: reads never wait for writers
            with self._writing(ns):
                missing = self._unlinked(ns)  # another writer may have linked them meanwhile
                if missing:
                    self._link(ns, missing)
                    self._written(ns)
        self._resumed.add(ns)

    def _unlinked(self, ns: Namespace) -> list[int]:
        view, linked = self.index.view(ns), self.graph.linked_ids(ns)
        return [i for i, uid in enumerate(view.ids) if uid not in linked]

    # -- reads ---------------------------------------------------------------------
    def get(self, ids: Iterable[str], *, namespace: Namespace | str | None = None) -> list[MemoryUnit]:
        """Units by id within ``namespace`` (ids of other namespaces are never returned)."""
        return self.index.get(self._ns(namespace), ids)

    def list_units(self, namespace: Namespace | str | None = None, *,
                   include_suppressed: bool = False) -> list[MemoryUnit]:
        """Every unit of a namespace, in insertion order; suppressed ones only for audit."""
        units = self.index.view(self._ns(namespace)).units
        return list(units) if include_suppressed else [u for u in units if not is_suppressed(u)]

    def edges(self, namespace: Namespace | str | None = None) -> list[Edge]:
        """Every edge of a namespace."""
        ns = self._ns(namespace)
        self._ensure_linked(ns)
        return self.graph.edges(ns)

    def namespaces(self) -> list[Namespace]:
        """Namespaces that hold units."""
        return self.index.namespaces()

    def recall(
        self, query: str, *, namespace: Namespace | str | None = None, k: int | None = None,
        config: RecallConfig | None = None, callbacks: Any = None, as_of: datetime | str | None = None,
    ) -> RecallResult:
        """Recollect the evidence set for ``query``: tri-view recall, controller, expansion.

        ``as_of`` answers as of that time: later memories are hidden and only supersessions
        before it down-weight a memory (see ``docs/lifecycle.md``).
        """
        graph, state, run_config, context = self._recall_call(query, namespace, k, config, callbacks, as_of)
        return graph.invoke(state, config=run_config, context=context)["result"]  # type: ignore[no-any-return]

    async def arecall(
        self, query: str, *, namespace: Namespace | str | None = None, k: int | None = None,
        config: RecallConfig | None = None, callbacks: Any = None, as_of: datetime | str | None = None,
    ) -> RecallResult:
        """Async :meth:`recall`."""
        graph, state, run_config, context = self._recall_call(query, namespace, k, config, callbacks, as_of)
        return (await graph.ainvoke(state, config=run_config, context=context))["result"]  # type: ignore[no-any-return]

    def _recall_call(
        self, query: str, namespace: Namespace | str | None, k: int | None,
        config: RecallConfig | None, callbacks: Any, as_of: datetime | str | None = None,
    ) -> tuple[Any, dict[str, Any], dict[str, Any], Any]:
        from langchain_ripplemem.recall import RecallContext, build_recall_graph

        if not isinstance(query, str) or not query.strip():
            raise ValueError(f"query must be a non-empty string, got {query!r}")
        cfg = config or self.recall_config
        if k is not None:
            if k < 1:
                raise ValueError(f"k must be at least 1, got {k}")
            cfg = cfg.model_copy(update={"top_k": k})
        ns = self._ns(namespace)
        self._ensure_linked(ns)
        if self._recall_graph is None:
            self._recall_graph = build_recall_graph(self, llm=self.llm)
        run_config: dict[str, Any] = {"run_name": "ripplemem_recall"}
        if callbacks is not None:
            run_config["callbacks"] = callbacks
        context = RecallContext(namespace=ns, config=cfg, as_of=coerce_as_of(as_of))
        return self._recall_graph, {"query": query}, run_config, context

    # -- lifecycle -----------------------------------------------------------------
    def delete(self, ids: Iterable[str], *, namespace: Namespace | str | None = None) -> int:
        """Delete units of ``namespace`` and every edge touching them; returns units deleted."""
        ns = self._ns(namespace)
        ids = list(ids)
        with self._writing(ns):
            gone = self.index.get(ns, ids) if self.write_config.supersession else []
            present = self.index.delete(ns, ids)
            self.graph.remove_units(ns, present)
            refresh_supersession(self.index, ns, gone)  # what they superseded is current again
            self._written(ns)
        return len(present)

    def delete_conversation(self, conversation_id: str, *, namespace: Namespace | str | None = None) -> int:
        """Delete every unit of ``namespace`` that came from ``conversation_id`` (and their edges).

        Returns:
            Units deleted (0 when the namespace holds nothing of that conversation).

        Raises:
            ValueError: naming ``conversation_id`` when it is not a non-empty string.
        """
        if not isinstance(conversation_id, str) or not conversation_id:
            raise ValueError(f"conversation_id must be a non-empty string, got {conversation_id!r}")
        ns = self._ns(namespace)
        ids = [u.id for u in self.index.view(ns).units if u.source.conversation_id == conversation_id]
        return self.delete(ids, namespace=ns) if ids else 0

    def stats(self, namespace: Namespace | str | None = None) -> NamespaceStats:
        """Counts of what a namespace holds: units, suppressed and superseded ones, conversations, edges."""
        ns = self._ns(namespace)
        self._ensure_linked(ns)
        units = self.index.view(ns).units
        times = [u.time for u in units if u.time is not None]
        return NamespaceStats(
            namespace=ns, units=len(units),
            suppressed=sum(1 for u in units if is_suppressed(u)),
            superseded=sum(1 for u in units if u.metadata.get(SUPERSEDED_BY)),
            conversations=list(dict.fromkeys(u.source.conversation_id for u in units)),
            sessions=len({(u.source.conversation_id, u.source.session_id) for u in units}),
            edges=self.graph.count(ns),
            first_time=min((t.start for t in times), default=None),
            last_time=max((t.end for t in times), default=None),
        )

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
        ns = self._ns(namespace)
        with self._writing(ns):
            changed = with_suppression(self.index.get(ns, dict.fromkeys(ids)), reason)
            self.index.replace(ns, changed)
            if self.write_config.supersession:
                # A suppressed statement neither supersedes nor is superseded.
                refresh_supersession(self.index, ns, changed)
            self._written(ns)
        return len(changed)

    def delete_namespace(self, namespace: Namespace | str) -> int:
        """Delete every unit and edge of exactly ``namespace`` (it must be given explicitly)."""
        ns = validate_namespace(namespace)
        with self._writing(ns):
            n = self.index.drop_namespace(ns)
            self.graph.drop_namespace(ns)
            self._resumed.discard(ns)
            self._written(ns)
        return n

    def as_retriever(self, **kwargs: Any) -> RippleMemRetriever:
        """A LangChain retriever over this memory (see ``RippleMemRetriever``)."""
        from langchain_ripplemem.retrievers import RippleMemRetriever

        return RippleMemRetriever(memory=self, **kwargs)

    def embed_query(self, text: str) -> np.ndarray:
        """The query's unit vector under this memory's embeddings."""
        return embed_query(self.embeddings, text)
