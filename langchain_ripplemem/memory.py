"""RippleMem: the facade that owns the storage backends, the caches and both paths.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> from langchain_ripplemem import RippleMem
    >>> memory = RippleMem()  # embedded, ephemeral, offline
    >>> report = memory.add_messages([HumanMessage("I'm allergic to shellfish, so no shrimp for me."),
    ...                               AIMessage("Noted.")], namespace="users/maya")
    >>> report.new_units
    2
    >>> result = memory.recall("What can't Maya eat?", namespace="users/maya", k=1)
    >>> result.memories[0].unit.restatement
    "User: I'm allergic to shellfish, so no shrimp for me."

"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_ripplemem._runtime.collector import collector_paused
from langchain_ripplemem._runtime.drivers import async_twin
from langchain_ripplemem.cache_bounds import CacheBounds
from langchain_ripplemem.config import RecallConfig, WriteConfig
from langchain_ripplemem.conversations.messages import conversation_from_messages
from langchain_ripplemem.edges.calibration import semantic_threshold_for
from langchain_ripplemem.edges.edge_cache import EdgeCache
from langchain_ripplemem.embeddings import embed_query, embedding_dimension, embedding_model_name
from langchain_ripplemem.index.marks import is_suppressed
from langchain_ripplemem.index.snapshot import IndexSnapshots
from langchain_ripplemem.index.stats import namespace_stats
from langchain_ripplemem.index.sync import NamespaceSync
from langchain_ripplemem.index.unit_index import UnitIndex
from langchain_ripplemem.memory_lifecycle import MemoryLifecycle
from langchain_ripplemem.recall import build_recall_graph
from langchain_ripplemem.recall.browsing import MemoryNeighbourhood, TimelinePage, explore, timeline
from langchain_ripplemem.recall.derived import derive_all
from langchain_ripplemem.recall.reader import FunctionReader, MemoryReader
from langchain_ripplemem.recall.state import ResolvedContext
from langchain_ripplemem.retrievers import RippleMemRetriever
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
from langchain_ripplemem.storage.chroma import DEFAULT_COLLECTION
from langchain_ripplemem.storage.embedding_record import EmbeddingModelCheck
from langchain_ripplemem.storage.opening import check_storage_arguments, open_storage
from langchain_ripplemem.storage.protocols import EdgeLogBackend, UnitBackend
from langchain_ripplemem.write.extraction.extractor import Extractor, Window
from langchain_ripplemem.write.extraction.known_turns import KnownTurns
from langchain_ripplemem.write.extraction.llm_extractor import LLMExtractor
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor
from langchain_ripplemem.write.extraction.windows import with_progress
from langchain_ripplemem.write.supersession.llm_supersession import llm_supersession
from langchain_ripplemem.write.transaction import EmbedProgress, WritePath

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import MessageLikeRepresentation

    from langchain_ripplemem.retrievers import RippleMemRetriever

__all__ = ["RippleMem"]


class RippleMem(MemoryLifecycle):
    """Long-term memory that recollects: write conversations, recall evidence sets.

    Every method that reads or writes has an async twin (``aadd_conversation``, ``arecall``,
    ``aget``, ``asearch``, ``adelete``, ...). Recall reads the memory through :attr:`reader`.

    Args:
        embeddings: any LangChain ``Embeddings``; default the offline MiniLM ONNX model.
        persist_directory: keep units (Chroma) and edges (SQLite) on disk here;
            ``None`` keeps everything in memory for this process.
        client: a ``chromadb`` client (e.g. ``chromadb.HttpClient(...)``) to hold units
            instead; edges then go to ``edges_path`` (in memory when ``None``).
        collection_name: Chroma collection for units.
        edges_path: SQLite file for edges and the namespace log; default in ``persist_directory``.
        unit_backend: any :class:`~langchain_ripplemem.storage.protocols.UnitBackend`
            instead of Chroma (then neither ``client`` nor ``collection_name`` is used).
        edge_backend: any :class:`~langchain_ripplemem.storage.protocols.EdgeLogBackend` (edges and the
            namespace log in one backend, e.g. ``PostgresEdgeBackend``) instead of SQLite.
        extractor: an :class:`~langchain_ripplemem.write.extraction.extractor.Extractor`; default
            rule-based, or LLM-based when ``llm`` is given.
        llm: a chat model or ``"provider:model"`` string; opt-in upgrade for extraction,
            the recall controller and answers.
        write_config: windows, linking thresholds and caps.
        recall_config: recollection budgets and weights (default ``RecallConfig()``,
            the recommended settings; ``presets.PAPER`` is docs/concepts.md's).
        namespace: default namespace for calls that do not pass one: every method whose
            ``namespace`` is optional takes ``None`` (its default) as this namespace; those
            that need one (``delete_namespace``) refuse ``None``.
        cache_bounds: how many namespaces, and how many bytes, of indexes and edges stay
            in memory (least recently used out first; default ``CacheBounds()``).
        snapshot_directory: a local cache of indexes for fast cold opens (:mod:`~langchain_ripplemem.index.snapshot`;
            default ``ripplemem_index`` in ``persist_directory``, none without it; ``False``: none).

    Raises:
        ValueError: naming the arguments that cannot go together, or a ``persist_directory`` that is a file.

    A store of another embedding model fails the first add, recall or search, before anything is
    read or written (``EmbeddingModelMismatchError``, :mod:`~langchain_ripplemem.storage.embedding_record`).
    """

    def __init__(
        self,
        embeddings: Embeddings | None = None,
        *,
        persist_directory: str | Path | None = None,
        client: Any = None,
        collection_name: str = DEFAULT_COLLECTION,
        edges_path: str | Path | None = None,
        unit_backend: UnitBackend | None = None,
        edge_backend: EdgeLogBackend | None = None,
        extractor: Extractor | None = None,
        llm: BaseChatModel | str | None = None,
        write_config: WriteConfig | None = None,
        recall_config: RecallConfig | None = None,
        namespace: Namespace | str = ("default",),
        cache_bounds: CacheBounds | None = None,
        snapshot_directory: str | Path | Literal[False] | None = None,
    ) -> None:
        storage = {"persist_directory": persist_directory, "client": client, "edges_path": edges_path,
                   "unit_backend": unit_backend, "edge_backend": edge_backend}
        check_storage_arguments(**storage)  # before a model is loaded
        if embeddings is None:
            from langchain_ripplemem.embeddings import MiniLMOnnxEmbeddings

            embeddings = MiniLMOnnxEmbeddings()
        self.embeddings = embeddings
        self.write_config = cfg = write_config or WriteConfig()
        if cfg.linking.semantic_threshold is None:
            self.write_config = cfg.replace(linking={"semantic_threshold": semantic_threshold_for(embeddings)})
        self.recall_config, self.llm = recall_config or RecallConfig(), llm
        self.default_namespace = validate_namespace(namespace)
        self.persist_directory = Path(persist_directory) if persist_directory is not None else None
        self.unit_backend, self.edge_backend, self.namespace_log = open_storage(
            collection_name=collection_name, **storage)
        # Before the first embedding, write or search: the store's vectors must be this model's.
        self._check_model = EmbeddingModelCheck(
            self.unit_backend, embedding_model_name(embeddings), lambda: embedding_dimension(embeddings),
            "the store" + (f" in {self.persist_directory}" if self.persist_directory else ""))
        snapshots = IndexSnapshots.of_memory(snapshot_directory, self.persist_directory, self.namespace_log, embeddings,
                                            lambda ns: self._sync.versions.get(ns))
        self.index = UnitIndex(self.unit_backend, cache_bounds, snapshots, derive=derive_all)
        self.edge_cache = EdgeCache(self.edge_backend, cache_bounds)
        self.extractor = extractor or (LLMExtractor(llm, config=cfg.extraction) if llm is not None
                                       else RuleBasedExtractor(config=cfg.extraction))
        self._sync = NamespaceSync(self.namespace_log, self.index, self.edge_cache)
        self._write = WritePath(self.embeddings, self.write_config, self.index, self.edge_cache, self.edge_backend,
                                self._sync, llm_supersession(llm, self.write_config.supersession,
                                                             self.write_config.extraction.llm_max_retries))
        self._reader = FunctionReader(
            self, prepare=self._prepare_recall, embed_query=self._embed_query,
            namespace_index=lambda ns: self.index.pinned(validate_namespace(ns)),
            walkable_edges=lambda ns: self.edge_cache.walkable(validate_namespace(ns)))
        self._recall_graph: Any = None

    def close(self) -> None:
        """Save the indexes that changed since their snapshots, close the storage backends (and store lock)."""
        with self._sync.lock:
            if not self._sync.mark_closed():  # closed already: nothing to do
                return
            try:
                self.index.save_snapshots()
            finally:
                self.namespace_log.close()
                self.edge_backend.close()
                self.unit_backend.close()

    def __enter__(self) -> RippleMem:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ns(self, namespace: Namespace | str | None) -> Namespace:
        ns = self.default_namespace if namespace is None else validate_namespace(namespace)
        self._sync.catch_up(ns)
        return ns

    def _prepare_recall(self, namespace: Namespace | str) -> None:
        """Make a namespace current: catch up with other writers, link what a crash left unlinked."""
        ns = self._ns(validate_namespace(namespace))
        self._check_model()
        self._write.ensure_linked(ns)

    def _embed_query(self, text: str) -> np.ndarray:
        self._check_model()
        return embed_query(self.embeddings, text)

    @property
    def reader(self) -> MemoryReader:
        """What recall reads of this memory: pass it to :func:`~langchain_ripplemem.recall.graph.build_recall_graph`.

        A :class:`~langchain_ripplemem.recall.reader.MemoryReader`: each recall first catches its namespace
        up with other writers and links what a crash left unlinked, then reads its index and edges.
        """
        return self._reader

    # -- write path ---------------------------------------------------------------
    def add_conversation(
        self, conversation: Conversation | dict[str, Any], *, namespace: Namespace | str | None = None,
        progress: bool = False, unit_metadata: dict[str, Any] | None = None,
        on_embedded: EmbedProgress | None = None,
    ) -> IngestReport:
        """Extract, embed, index and link one conversation. Idempotent on re-ingest.

        Args:
            conversation: a :class:`Conversation` or a JSON object of its form (read as
                :func:`~langchain_ripplemem.conversations.files.conversation_from_json` reads it).
            namespace: whose memory this is (default: the memory's default namespace).
            progress: show a progress bar over windows.
            unit_metadata: JSON-serialisable fields merged into every new unit's metadata.
            on_embedded: called with ``(texts embedded, texts to embed)`` as embedding, the
                slow step on long conversations, advances (e.g. to move a progress bar).

        Raises:
            InvalidConversationError: the conversation has no turns, or a field is bad (the message
                names it: ``sessions[0].time``).
        """
        ns, conv, windows, report, known = self._prepare(conversation, namespace)
        started = time.perf_counter()
        results = [self.extractor.extract(w, ns) for w in with_progress(windows, progress, conv.id)]
        return self._write.commit(ns, results, report, unit_metadata, on_embedded, known=known,
                                  extract_seconds=time.perf_counter() - started)

    async def aadd_conversation(
        self, conversation: Conversation | dict[str, Any], *, namespace: Namespace | str | None = None,
        unit_metadata: dict[str, Any] | None = None, on_embedded: EmbedProgress | None = None,
    ) -> IngestReport:
        """Async :meth:`add_conversation`: extraction calls run concurrently, storage work in a thread."""
        ns, _, windows, report, known = await asyncio.to_thread(self._prepare, conversation, namespace)
        started = time.perf_counter()
        results = list(await asyncio.gather(*(self.extractor.aextract(w, ns) for w in windows)))
        return await asyncio.to_thread(self._write.commit, ns, results, report, unit_metadata, on_embedded,
                                       known=known, extract_seconds=time.perf_counter() - started)

    def add_messages(
        self, messages: Iterable[MessageLikeRepresentation], *, namespace: Namespace | str | None = None,
        session_time: datetime | None = None, conversation_id: str | None = None,
    ) -> IngestReport:
        """Remember chat messages as one session (``adapters.conversation_from_messages``: ids, errors).

        ``namespace=None`` is the memory's default namespace, as in :meth:`add_conversation`.
        """
        conv = conversation_from_messages(messages, conversation_id=conversation_id, session_time=session_time)
        return self.add_conversation(conv, namespace=namespace)

    async def aadd_messages(
        self, messages: Iterable[MessageLikeRepresentation], *, namespace: Namespace | str | None = None,
        session_time: datetime | None = None, conversation_id: str | None = None,
    ) -> IngestReport:
        """Async :meth:`add_messages`, through :meth:`aadd_conversation`."""
        conv = conversation_from_messages(messages, conversation_id=conversation_id, session_time=session_time)
        return await self.aadd_conversation(conv, namespace=namespace)

    def _prepare(
        self, conversation: Conversation | dict[str, Any], namespace: Namespace | str | None
    ) -> tuple[Namespace, Conversation, list[Window], IngestReport, KnownTurns]:
        ns = self._ns(namespace)
        self._check_model()
        return ns, *self._write.begin(ns, conversation, self.extractor)

    # -- reads ---------------------------------------------------------------------
    def get(self, ids: Iterable[str], *, namespace: Namespace | str | None = None) -> list[MemoryUnit]:
        """Units by id within ``namespace`` (ids of other namespaces are never returned)."""
        return self.index.get(self._ns(namespace), ids)

    def list_units(self, namespace: Namespace | str | None = None, *,
                   include_suppressed: bool = False) -> list[MemoryUnit]:
        """Every unit of a namespace, in insertion order; suppressed ones only for audit."""
        units = self.index.namespace_index(self._ns(namespace)).units
        return list(units) if include_suppressed else [u for u in units if not is_suppressed(u)]

    def edges(self, namespace: Namespace | str | None = None) -> list[Edge]:
        """Every edge of a namespace, as stored (reading links nothing: see :meth:`stats`)."""
        return self.edge_cache.edges(self._ns(namespace))

    def namespaces(self) -> list[Namespace]:
        """Namespaces that hold units."""
        self._sync.check_open()
        return self.index.namespaces()

    def search(self, query: str, *, namespace: Namespace | str | None = None, k: int = 10,
               view: Literal["semantic", "lexical"] = "semantic") -> list[tuple[MemoryUnit, float]]:
        """Plain top-k of one view, no recollection: dense cosine or BM25 (baselines, comparisons).

        Suppressed memories are left out, as in recall.

        Raises:
            ValueError: naming ``view`` or ``k`` when unusable.
        """
        if view not in ("semantic", "lexical"):
            raise ValueError(f"view must be 'semantic' or 'lexical', got {view!r}")
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        ns = self._ns(namespace)
        self._check_model()
        found = self.index.pinned(ns)
        return found.plain_top_k(self._embed_query(query) if view == "semantic" else query, k)

    def recall(
        self, query: str, *, namespace: Namespace | str | None = None, k: int | None = None,
        config: RecallConfig | None = None, callbacks: Any = None, as_of: datetime | str | None = None,
        answer: bool = False, asker: str | None = None, since: datetime | str | None = None,
        until: datetime | str | None = None, speakers: str | list[str] | None = None,
        conversation_id: str | None = None,
    ) -> RecallResult:
        """Recollect the evidence set for ``query``: tri-view recall, controller, expansion.

        Args:
            query: the question.
            namespace: whose memories (default: the memory's default namespace).
            k: memories returned (default ``config.assembly.top_k``).
            config: recall settings (default the memory's ``recall_config``).
            callbacks: LangChain callbacks for the run (LangSmith traces through them).
            as_of: answer as of that time: later memories are hidden and only
                supersessions before it down-weight a memory (``docs/lifecycle.md``).
            answer: also answer from the memories with the memory's chat model
                (``RecallResult.answer``); a failed or empty answer keeps the memories,
                leaves ``answer`` ``None`` and says why in ``RecallResult.warnings``.
            asker: the speaker asking (e.g. ``"user"``): the query's "I" and "my"
                mean that speaker, whose own memories then get ``scoring.speaker_bonus``.
            since: recall only memories of this time or later (``docs/filters.md``): an ISO date
                or datetime, or a phrase such as "last week" (relative to ``as_of``, else now).
                A memory outside the filter is never a candidate, an anchor or a step of an
                expansion; a filter that leaves nothing returns no memories and a warning.
            until: only memories of this time or earlier (a day: to its end), as ``since``.
            speakers: only memories said by this speaker or these speakers.
            conversation_id: only memories of this conversation.

        Raises:
            ValueError: naming ``query``, ``k``, ``answer``, ``asker`` or a filter argument when unusable.
        """
        filters = {"since": since, "until": until, "speakers": speakers, "conversation_id": conversation_id}
        graph, inputs, run, ctx = self._recall_call(query, namespace, k, config, callbacks, as_of, answer, asker,
                                                    filters)
        # Held off for the whole run, LangGraph's steps between nodes included, unless a chat model may be waited on.
        with collector_paused(when=self.llm is None):
            return graph.invoke(inputs, config=run, context=ctx)["result"]  # type: ignore[no-any-return]

    async def arecall(
        self, query: str, *, namespace: Namespace | str | None = None, k: int | None = None,
        config: RecallConfig | None = None, callbacks: Any = None, as_of: datetime | str | None = None,
        answer: bool = False, asker: str | None = None, since: datetime | str | None = None,
        until: datetime | str | None = None, speakers: str | list[str] | None = None,
        conversation_id: str | None = None,
    ) -> RecallResult:
        """Async :meth:`recall`."""
        filters = {"since": since, "until": until, "speakers": speakers, "conversation_id": conversation_id}
        graph, inputs, run, ctx = self._recall_call(query, namespace, k, config, callbacks, as_of, answer, asker,
                                                    filters)
        return (await graph.ainvoke(inputs, config=run, context=ctx))["result"]  # type: ignore[no-any-return]

    def _recall_call(
        self, query: str, namespace: Namespace | str | None, k: int | None, config: RecallConfig | None,
        callbacks: Any, as_of: datetime | str | None, answer: bool, asker: str | None = None,
        filters: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any], dict[str, Any], Any]:
        """Arguments of one graph run: no storage work here (the graph's first node prepares)."""
        ns = self.default_namespace if namespace is None else validate_namespace(namespace)
        context = ResolvedContext.of_call(ns, config or self.recall_config, k=k, as_of=as_of, asker=asker,
                                          **(filters or {}))
        if answer and self.llm is None:
            raise ValueError("answer=True needs a chat model: create the memory with llm=...")
        if self._recall_graph is None:
            self._recall_graph = build_recall_graph(self._reader, llm=self.llm)
        run_config: dict[str, Any] = {"run_name": "ripplemem_recall", "callbacks": callbacks}  # None keeps the caller's
        return self._recall_graph, {"query": query, "with_answer": answer}, run_config, context

    def explore(self, memory_id: str, *, namespace: Namespace | str | None = None,
                limit: int = 5) -> MemoryNeighbourhood:
        """One memory, its source turns and its linked memories by edge type (:func:`.recall.browsing.explore`)."""
        return explore(self.reader, memory_id, namespace=namespace, limit=limit)

    def timeline(self, since: Any = None, until: Any = None, *, person: str | None = None,
                 namespace: Namespace | str | None = None, page: int = 1, page_size: int = 20,
                 now: datetime | None = None) -> TimelinePage:
        """A page of a time window's memories, oldest first (:func:`.recall.browsing.timeline`)."""
        return timeline(self.reader, since, until, person=person, namespace=namespace, page=page,
                        page_size=page_size, now=now)

    # -- lifecycle: deletes, corrections, export and import are MemoryLifecycle's (memory_lifecycle.py) --
    def stats(self, namespace: Namespace | str | None = None) -> NamespaceStats:
        """Counts of what a namespace holds: units, suppressed and superseded ones, conversations, edges.

        A read: it writes nothing, so units an interrupted ingest stored but did not link
        stay unlinked (the next write or recall of the namespace links them).
        """
        ns = self._ns(namespace)
        return namespace_stats(ns, self.index.namespace_index(ns).units, self.edge_cache.count(ns))

    def as_retriever(self, **kwargs: Any) -> RippleMemRetriever:
        """A LangChain retriever over this memory (see ``RippleMemRetriever``)."""
        return RippleMemRetriever(memory=self, **kwargs)

    # Async twins: the sync method itself, run in a worker thread (storage and CPU work, nothing to await).
    aclose = async_twin(close)
    aget = async_twin(get)
    alist_units = async_twin(list_units)
    aedges = async_twin(edges)
    anamespaces = async_twin(namespaces)
    asearch = async_twin(search)
    astats = async_twin(stats)
    aexplore = async_twin(explore)
    atimeline = async_twin(timeline)

