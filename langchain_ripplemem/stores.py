"""RippleMemStore: a LangGraph ``BaseStore`` whose items are RippleMem memories.

``put`` writes an item's text through the RippleMem write path (extraction,
embedding, linking), ``search`` with a ``query`` runs recollection, and every
other operation reads the units back. Use it wherever LangGraph expects a store:
``graph.compile(store=RippleMemStore(memory))``, then ``runtime.store`` or
``get_store()`` inside nodes, or as a LangGraph deployment's store
(:mod:`~langchain_ripplemem.server.served_store`).

The text rule: an item's memory text is ``value["text"]``, else
``value["content"]``, else every other top-level string value as ``"field: text"``
lines (``"speaker"`` and ``"time"`` excluded), else the value as JSON; with
``index=[paths]`` on ``put`` (or ``index={"fields": [...]}`` on the store) it is
the text at those JSON paths instead. The text is one turn spoken by
``value.get("speaker", "user")`` in a one-session conversation whose id is the
item key and whose time is ``value.get("time")`` (anything
:func:`~langchain_ripplemem.text.time.timeparse.parse_timestamp` reads) or now.

Example:
    >>> from langchain_ripplemem import RippleMem
    >>> store = RippleMemStore(RippleMem())
    >>> store.put(("users", "maya"), "allergy", {"text": "I'm allergic to shellfish."})
    >>> store.get(("users", "maya"), "allergy").value
    {'text': "I'm allergic to shellfish."}
    >>> [item.key for item in store.search(("users",), query="What can't Maya eat?", limit=3)]
    ['allergy']

"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Generator, Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)

from langchain_ripplemem._runtime.drivers import adrive, drive
from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.errors import ExtractionError, InvalidNamespaceError
from langchain_ripplemem.recall.filters import FILTER_NAMES, outside
from langchain_ripplemem.schemas import Namespace, ReservedNamespace, is_blank, validate_namespace
from langchain_ripplemem.store_items import (
    UNINDEXED_REASON,
    StoreEntry,
    TextVectors,
    check_ttl,
    entries,
    expires_after,
    index_settings,
    indexed_texts,
    item_conversation,
    item_text,
    memory_filter,
    passes,
    path_matches,
    split_filter,
)
from langchain_ripplemem.store_sweeper import TTLSweeper, ttl_config
from langchain_ripplemem.write.forget import ForgetReport

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from langchain_ripplemem.memory import RippleMem

__all__ = ["RippleMemStore", "item_text"]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Call:
    """A call the plan needs (of the memory, or with ``on_store`` of the store); the driver runs it sync or async."""

    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    on_store: bool = False


@dataclass
class _Batch:
    """What one batch has read: every entry of each namespace it opened, and the items to refresh."""

    now: datetime
    loaded: dict[Namespace, dict[str, StoreEntry]] = field(default_factory=dict)
    refresh: dict[Namespace, dict[str, StoreEntry]] = field(default_factory=dict)
    known: list[Namespace] | None = None

    def read(self, entry: StoreEntry, refresh_ttl: bool) -> None:
        """Note an item returned by a read; with ``refresh_ttl`` its time to live starts again."""
        if refresh_ttl and entry.ttl is not None:
            self.refresh.setdefault(entry.item.namespace, {})[entry.item.key] = entry


_Plan = Generator[_Call, Any, Any]


def _logged(forgotten: ForgetReport) -> None:
    """Log what a delete removed and erased: ``BaseStore`` operations return nothing to say it."""
    _log.info("%s; erased from: %s%s", forgotten.summary(), ", ".join(forgotten.files) or "nothing",
              "".join(f"; kept: {k}" for k in forgotten.kept))


def _held(ns: Namespace) -> Namespace:
    """The namespace as the memory holds it: LangGraph's reserved root only through a raw operation."""
    return ReservedNamespace(ns) if ns and ns[0] == "langgraph" else ns


class RippleMemStore(BaseStore):
    """LangGraph store over a :class:`RippleMem`: items are memories, search recollects.

    Args:
        memory: the ``RippleMem`` that holds the units.
        recall_config: recollection budgets for ``search(query=...)``; default the
            memory's. ``assembly.top_k`` and ``views.semantic_k`` grow to ``offset + limit`` so deep
            pages still fill.
        index: LangGraph's ``IndexConfig``: ``fields`` (JSON paths whose text is embedded, ``"$"``
            the whole value; default the text rule). ``embed`` and ``dims``, if given, must be the
            memory's embeddings and their dimension: the memory embeds.
        ttl: LangGraph's ``TTLConfig``: ``default_ttl`` (minutes, for ``put`` without ``ttl``),
            ``refresh_on_read`` (default ``True``), ``sweep_interval_minutes`` (for
            :meth:`start_ttl_sweeper`). Expired items are always omitted (``omit_expired`` is accepted).

    Semantics follow LangGraph's own stores: in one batch, reads see the state
    before the batch and writes apply afterwards, the last write per
    ``(namespace, key)`` winning. A re-``put`` replaces the key's units (and their
    edges); ``delete`` removes them. ``search`` without a query lists items in
    insertion order; with a query it runs recollection in each namespace under the
    prefix and ranks items by their best memory's recollection score. As in LangGraph's
    stores, ``filter`` chooses the items first (its ``since``, ``until``, ``speakers`` and
    ``conversation_id`` on the items' memories, ``docs/filters.md``) and the page is over all of them: items
    recollection did not return fill it after the ranked ones, nearest to the query
    first, then unindexed ones. A returned item's ``score`` is its similarity to the
    query: the best cosine between the query's embedding and its indexed texts'
    (the same number for the same text whatever else is stored; ``None`` when it is
    unindexed or without a query). The order is recollection's, so a later item can
    score higher than an earlier one.

    ``index=False`` keeps an item (``get``, listings, filters) but never recalls it.
    With a ``ttl`` an item expires that many minutes after its last write (or refreshing
    read); an expired item is never returned and is erased, as ``delete`` erases, by the
    next operation that reads its namespace or by :meth:`sweep_ttl`. Each item's value,
    timestamps, index and expiry are written into its units' metadata
    (``add_conversation(..., unit_metadata=...)``), so they survive restarts and ``get``
    returns the value exactly. User corrections go through :meth:`suppress` /
    :meth:`unsuppress` (not ``BaseStore`` operations): a suppressed item is absent
    from ``get`` and ``search`` but its memories stay for audit. A raw ``PutOp`` under
    LangGraph's reserved root ``"langgraph"`` is executed, as LangGraph's stores do
    (``put`` refuses it).

    A delete (``delete``, a ``put`` of ``None``, a re-``put``) erases the old units from the
    store's files as ``RippleMem.delete`` does. ``BaseStore`` returns nothing, so the
    :class:`~langchain_ripplemem.write.forget.ForgetReport` is logged (logger
    ``langchain_ripplemem.stores``, INFO); :meth:`forget` returns it.

    Raises:
        InvalidNamespaceError: for namespaces LangGraph rejects (a subclass of LangGraph's).
        ValueError: naming ``key``, ``value``, ``index``, ``ttl`` or ``filter`` when they are unusable.
    """

    supports_ttl: bool = True

    def __init__(self, memory: RippleMem, *, recall_config: RecallConfig | None = None,
                 index: IndexConfig | None = None, ttl: TTLConfig | None = None) -> None:
        self.memory = memory
        self.recall_config = recall_config
        self.ttl_config = ttl_config(ttl)
        self._fields, self._dims = index_settings(index, memory.embeddings)
        self._vectors = TextVectors()
        self._sweeper: TTLSweeper | None = None
        self._sweeper_lock = threading.Lock()

    @property
    def embeddings(self) -> Embeddings:
        """The memory's embeddings, which embed items and queries."""
        return self.memory.embeddings

    @property
    def index_config(self) -> IndexConfig:
        """LangGraph's ``IndexConfig`` of this store: ``dims``, ``embed`` (the memory's) and ``fields``."""
        if self._dims is None:
            from langchain_ripplemem.embeddings import embedding_dimension

            self._dims = embedding_dimension(self.memory.embeddings)
        return {"dims": self._dims, "embed": self.memory.embeddings, "fields": self._fields}

    # -- user corrections (beyond BaseStore) -------------------------------------------
    def suppress(self, namespace: tuple[str, ...], key: str, *, reason: str) -> int:
        """Hide an item from ``get``/``search`` but keep its memories for audit; returns units hidden.

        A user correction ("that's wrong, forget it"): the item's units stay in the
        memory, marked suppressed with ``reason`` (``RippleMem.suppress``), until
        :meth:`unsuppress`. A later ``put`` of the key replaces them as usual.

        Raises:
            ValueError: naming ``namespace``, ``key`` or ``reason`` when unusable.
        """
        ns, entry = self._item(namespace, key)
        if entry is None:
            return 0
        if not entry.indexed:  # the mark that keeps it out of recall gives way to the user's
            self.memory.unsuppress(entry.unit_ids, namespace=ns)
        return self.memory.suppress(entry.unit_ids, namespace=ns, reason=reason)

    def unsuppress(self, namespace: tuple[str, ...], key: str) -> int:
        """Undo :meth:`suppress`; returns units shown again (an unindexed item stays out of recall)."""
        ns, entry = self._item(namespace, key)
        if entry is None:
            return 0
        shown = self.memory.unsuppress(entry.unit_ids, namespace=ns)
        if not entry.indexed:
            self.memory.suppress(entry.unit_ids, namespace=ns, reason=UNINDEXED_REASON)
        return shown

    async def asuppress(self, namespace: tuple[str, ...], key: str, *, reason: str) -> int:
        """Async :meth:`suppress`."""
        return await asyncio.to_thread(self.suppress, namespace, key, reason=reason)

    async def aunsuppress(self, namespace: tuple[str, ...], key: str) -> int:
        """Async :meth:`unsuppress`."""
        return await asyncio.to_thread(self.unsuppress, namespace, key)

    # -- forgetting with a report (beyond BaseStore) -----------------------------------------
    def forget(self, namespace: tuple[str, ...], key: str) -> ForgetReport:
        """Delete an item, as ``delete`` does, and return what was removed and erased (``RippleMem.delete``).

        Raises:
            ValueError: naming ``namespace`` or ``key`` when unusable.
        """
        ns, entry = self._item(namespace, key)
        return self.memory.delete(entry.unit_ids, namespace=ns) if entry else ForgetReport(namespace=ns)

    async def aforget(self, namespace: tuple[str, ...], key: str) -> ForgetReport:
        """Async :meth:`forget`."""
        return await asyncio.to_thread(self.forget, namespace, key)

    def _item(self, namespace: tuple[str, ...], key: str) -> tuple[Namespace, StoreEntry | None]:
        if not isinstance(key, str) or not key:
            raise ValueError(f"key must be a non-empty string, got {key!r}")
        ns = validate_namespace(namespace)
        return ns, entries(self.memory.list_units(ns, include_suppressed=True)).get(key)

    # -- TTL upkeep ----------------------------------------------------------------------
    def sweep_ttl(self) -> int:
        """Erase every expired item of the memory now (as ``delete`` erases); returns items erased."""
        return drive(self._sweep(), self._call)  # type: ignore[no-any-return]

    async def asweep_ttl(self) -> int:
        """Async :meth:`sweep_ttl`."""
        return await adrive(self._sweep(), self._acall)  # type: ignore[no-any-return]

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> Future[None]:
        """Sweep every ``sweep_interval_minutes`` (default ``ttl_config``'s) on a thread; done once stopped.

        Without an interval nothing starts and the returned future is already done. Started
        twice, the running sweeper's future is returned.

        Raises:
            ValueError: naming ``sweep_interval_minutes`` when it is not a positive number.
        """
        minutes = check_ttl(sweep_interval_minutes, "sweep_interval_minutes") or \
            (self.ttl_config or {}).get("sweep_interval_minutes")
        with self._sweeper_lock:
            if self._sweeper is not None and self._sweeper.running:
                return self._sweeper.future
            if not minutes:
                idle: Future[None] = Future()
                idle.set_result(None)
                return idle
            self._sweeper = TTLSweeper(self.sweep_ttl, seconds=minutes * 60)
            return self._sweeper.future

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper (waiting up to ``timeout`` seconds); whether none runs any more."""
        with self._sweeper_lock:
            sweeper, self._sweeper = self._sweeper, None
        return sweeper is None or sweeper.stop(timeout)

    def _sweep(self) -> _Plan:
        now, erased = datetime.now(timezone.utc), 0
        for ns in (yield _Call("namespaces")):
            units = yield _Call("list_units", (_held(ns),), {"include_suppressed": True})
            expired = [e for e in entries(units).values() if e.expired(now)]
            if expired:
                _logged((yield _Call("delete", ([u for e in expired for u in e.unit_ids],), {"namespace": _held(ns)})))
                erased += len(expired)
        return erased

    # -- the two entry points: one plan, two drivers --------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` synchronously; results in the order of ``ops``."""
        return drive(self._plan(list(ops)), self._call)  # type: ignore[no-any-return]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` asynchronously: recall and ingest natively async, the rest in a thread."""
        return await adrive(self._plan(list(ops)), self._acall)  # type: ignore[no-any-return]

    def _call(self, call: _Call) -> Any:
        return getattr(self if call.on_store else self.memory, call.method)(*call.args, **call.kwargs)

    def _acall(self, call: _Call) -> Awaitable[Any]:
        native = None if call.on_store else getattr(self.memory, f"a{call.method}", None)
        return native(*call.args, **call.kwargs) if native is not None else \
            asyncio.to_thread(self._call, call)

    # -- the plan ---------------------------------------------------------------------
    def _plan(self, ops: list[Op]) -> _Plan:
        """Every operation's logic, yielding the calls it needs."""
        writes: dict[tuple[Namespace, str], PutOp] = {}
        for op in ops:
            self._validate(op)
            if isinstance(op, PutOp):
                writes[(tuple(op.namespace), op.key)] = op
        batch = _Batch(datetime.now(timezone.utc))
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                entry = (yield from self._live(tuple(op.namespace), batch)).get(op.key)
                if entry is not None and entry.visible:
                    batch.read(entry, op.refresh_ttl)
                    results.append(entry.item)
                else:
                    results.append(None)
            elif isinstance(op, SearchOp):
                results.append((yield from self._search(op, batch)))
            elif isinstance(op, ListNamespacesOp):
                results.append((yield from self._list_namespaces(op, batch)))
            else:
                results.append(None)
        yield from self._write(list(writes.values()), batch)
        return results

    def _validate(self, op: Op) -> None:
        if not isinstance(op, (GetOp, SearchOp, ListNamespacesOp, PutOp)):
            raise ValueError(f"ops: unknown operation type {type(op).__name__}")
        validate_op_namespace(op)
        if isinstance(op, PutOp):
            if not isinstance(op.key, str) or not op.key:
                raise ValueError(f"key must be a non-empty string, got {op.key!r}")
            if op.value is not None:
                if not op.namespace:
                    raise InvalidNamespaceError("Namespace cannot be empty.")
                validate_namespace(_held(tuple(op.namespace)))
                # Bad values are rejected before any write.
                item_conversation(op, self._fields, None, datetime.now(timezone.utc))

    def _namespace(self, ns: Namespace, batch: _Batch) -> Generator[_Call, Any, dict[str, StoreEntry]]:
        """Every entry of ``ns``, expired ones too (suppressed ones too: a re-put or delete replaces them)."""
        if ns not in batch.loaded:
            batch.loaded[ns] = entries((yield _Call("list_units", (_held(ns),), {"include_suppressed": True})))
        return batch.loaded[ns]

    def _live(self, ns: Namespace, batch: _Batch) -> Generator[_Call, Any, dict[str, StoreEntry]]:
        """The entries of ``ns`` that have not expired."""
        loaded = yield from self._namespace(ns, batch)
        return {key: e for key, e in loaded.items() if not e.expired(batch.now)}

    def _known(self, batch: _Batch) -> Generator[_Call, Any, list[Namespace]]:
        if batch.known is None:
            batch.known = yield _Call("namespaces")
        return batch.known

    def _search(self, op: SearchOp, batch: _Batch) -> Generator[_Call, Any, list[SearchItem]]:
        prefix, query = tuple(op.namespace_prefix), (op.query or "").strip()
        query = "" if is_blank(query) else query  # a query showing nothing lists, as no query does
        spaces = [ns for ns in (yield from self._known(batch)) if ns[: len(prefix)] == prefix]
        wanted = op.offset + op.limit
        ranked: list[tuple[float, StoreEntry]] = []
        rest: dict[Namespace, list[StoreEntry]] = {}  # filter first, as LangGraph's stores do
        unindexed: list[StoreEntry] = []
        # since, until, speakers, conversation_id: the items' memories answer them (unless a field of the value)
        scoped = {k: c for k, c in (op.filter or {}).items() if k in FILTER_NAMES}
        for ns in spaces:
            live = yield from self._live(ns, batch)
            matching = yield from self._matching(ns, live.values(), op.filter, scoped, batch)
            if not query:
                rest[ns] = matching
                continue
            unindexed.extend(e for e in matching if not e.indexed)
            owner = {uid: e for e in matching if e.indexed for uid in e.unit_ids}
            best: dict[str, float] = {}
            if owner:
                # Recall keeps to the filter's names no matching item holds in its value (docs/filters.md).
                kept = {k: c for k, c in scoped.items() if not any(k in e.item.value for e in matching)}
                result = yield _Call("recall", (query,), {"namespace": _held(ns), "config": self._search_config(op),
                                                          **kept})
                for memory in result.memories:
                    entry = owner.get(memory.unit.id)
                    if entry is not None and memory.score > best.get(entry.item.key, float("-inf")):
                        best[entry.item.key] = memory.score
            ranked.extend((score, live[key]) for key, score in best.items())
            rest[ns] = [e for e in matching if e.indexed and e.item.key not in best]
        ranked.sort(key=lambda pair: pair[0], reverse=True)
        found = [entry for _, entry in ranked]
        for ns, others in rest.items():
            if len(found) >= wanted:
                break
            if query and len(others) > 1:
                # Matching items recollection left out still fill the page, nearest to the query first.
                others = yield from self._by_similarity(query, ns, others, batch)
            found.extend(others)
        found.extend(unindexed[: max(0, wanted - len(found))])
        page = found[op.offset: wanted]
        scores = (yield _Call("_similarities", (query, [self._texts(e) for e in page]), on_store=True)) \
            if query and page else [None] * len(page)
        for entry in page:
            batch.read(entry, op.refresh_ttl)
        return [SearchItem(namespace=e.item.namespace, key=e.item.key, value=e.item.value,
                           created_at=e.item.created_at, updated_at=e.item.updated_at, score=s)
                for e, s in zip(page, scores, strict=True)]

    def _matching(self, ns: Namespace, live: Iterable[StoreEntry], conditions: dict[str, Any] | None,
                  scoped: dict[str, Any], batch: _Batch) -> Generator[_Call, Any, list[StoreEntry]]:
        """The visible entries meeting ``conditions``: on values, and for the recall filter's names on memories."""
        left_out: dict[frozenset[str], set[str]] = {}  # memory ids each set of names leaves out
        found = []
        for entry in live:
            by_value, by_memory = split_filter(conditions, entry.item)
            if not entry.visible or not passes(entry.item, by_value):
                continue
            if by_memory and by_memory not in left_out:
                left_out[by_memory] = yield _Call("_outside", (ns, {k: scoped[k] for k in by_memory}, batch.now),
                                                 on_store=True)
            if not by_memory or not left_out[by_memory].issuperset(entry.unit_ids):
                found.append(entry)
        return found

    def _outside(self, ns: Namespace, filters: dict[str, Any], now: datetime) -> set[str]:
        """The memory ids of ``ns`` outside a recall filter (time phrases grounded at ``now``).

        Raises:
            ValueError: naming ``filter`` and the name whose condition is no recall filter.
        """
        return outside(self.memory.reader.namespace_index(_held(ns)), memory_filter(filters, now))

    def _texts(self, entry: StoreEntry) -> list[str]:
        return indexed_texts(entry.item.value, entry.index, self._fields) if entry.indexed else []

    def _similarities(self, query: str, texts_per_item: list[list[str]]) -> list[float | None]:
        """Each item's best cosine between the query's embedding and its texts' (``None`` without texts)."""
        from langchain_ripplemem.embeddings import embed_texts

        query_vector = self.memory.reader.embed_query(query)
        vectors = self._vectors.of((t for texts in texts_per_item for t in texts),
                                   lambda texts: embed_texts(self.memory.embeddings, texts))
        return [max(float(vectors[t] @ query_vector) for t in texts) if texts else None
                for texts in texts_per_item]

    def _by_similarity(self, query: str, ns: Namespace, items: list[StoreEntry],
                       batch: _Batch) -> Generator[_Call, Any, list[StoreEntry]]:
        """``items`` ordered by their best memory's cosine to ``query``."""
        owner = {uid: e.item.key for e in batch.loaded[ns].values() for uid in e.unit_ids}
        hits = yield _Call("search", (query,), {"namespace": _held(ns), "k": max(len(owner), 1)})
        rank: dict[str, int] = {}
        for position, (unit, _) in enumerate(hits):
            rank.setdefault(owner.get(unit.id, ""), position)
        return sorted(items, key=lambda e: rank.get(e.item.key, len(rank)))

    def _search_config(self, op: SearchOp) -> RecallConfig:
        cfg = self.recall_config or self.memory.recall_config
        depth = max(op.offset + op.limit, 1)
        return cfg.replace(assembly={"top_k": max(cfg.assembly.top_k, depth)},
                           views={"semantic_k": max(cfg.views.semantic_k, depth)})

    def _list_namespaces(self, op: ListNamespacesOp, batch: _Batch) -> Generator[_Call, Any, list[Namespace]]:
        """The page of namespaces (or their ``max_depth`` prefixes) that hold an item not expired."""
        groups: dict[Namespace, list[Namespace]] = {}
        for ns in (yield from self._known(batch)):
            if all(path_matches(c, ns) for c in op.match_conditions or ()):
                groups.setdefault(ns[: op.max_depth] if op.max_depth is not None else ns, []).append(ns)
        listed: list[Namespace] = []
        for shown in sorted(groups):  # opened in order, only until the page is full
            if len(listed) >= op.offset + op.limit:
                break
            for ns in groups[shown]:
                if (yield from self._live(ns, batch)):
                    listed.append(shown)
                    break
        return listed[op.offset: op.offset + op.limit]

    def _write(self, puts: list[PutOp], batch: _Batch) -> Generator[_Call, Any, None]:
        by_ns: dict[Namespace, list[PutOp]] = {}
        for op in puts:
            by_ns.setdefault(tuple(op.namespace), []).append(op)
        for ns in dict.fromkeys([*by_ns, *batch.loaded, *batch.refresh]):
            ops = by_ns.get(ns, [])
            loaded = (yield from self._namespace(ns, batch)) if ops else batch.loaded.get(ns, {})
            written = {op.key for op in ops}
            # Replaced items, and expired ones: erased as delete erases.
            stale = [uid for key, e in loaded.items() if key in written or e.expired(batch.now) for uid in e.unit_ids]
            if stale:  # one delete per namespace: each delete makes the memory reload its index
                _logged((yield _Call("delete", (stale,), {"namespace": _held(ns)})))
            for op in ops:
                if op.value is None:
                    continue
                old = loaded.get(op.key)
                created = old.item.created_at if old is not None and not old.expired(batch.now) else None
                # Stamped when written: a TTL runs from the write, however long the batch before it took.
                conv, stamp = item_conversation(op, self._fields, created, datetime.now(timezone.utc))
                report = yield _Call("add_conversation", (conv,), {"namespace": _held(ns), "unit_metadata": stamp})
                if report.units == 0:
                    why = "; ".join(w.error for w in report.failed_windows) or "the extractor found nothing to keep"
                    raise ExtractionError(f"put {ns}/{op.key!r}: the value produced no memory units ({why})")
            fresh = {uid: {"store_expires_at": expires_after(e.ttl, datetime.now(timezone.utc))}
                     for key, e in batch.refresh.get(ns, {}).items() if key not in written for uid in e.unit_ids}
            if fresh:
                yield _Call("update_metadata", (fresh,), {"namespace": _held(ns)})
