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
import threading
from collections.abc import Awaitable, Iterable
from concurrent.futures import Future
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from langgraph.store.base import BaseStore, IndexConfig, Op, Result, TTLConfig

from langchain_ripplemem._runtime.drivers import adrive, drive
from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.schemas import Namespace, validate_namespace
from langchain_ripplemem.store_items import (
    UNINDEXED_REASON,
    StoreEntry,
    TextVectors,
    check_ttl,
    entries,
    index_settings,
    item_text,
)
from langchain_ripplemem.store_plan import Plan, StoreCall, StorePlan, held_namespace, log_forgotten
from langchain_ripplemem.store_sweeper import TTLSweeper, ttl_config
from langchain_ripplemem.write.forget import ForgetReport

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

    from langchain_ripplemem.memory import RippleMem

__all__ = ["RippleMemStore", "item_text"]

class RippleMemStore(StorePlan, BaseStore):
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

    def _sweep(self) -> Plan:
        now, erased = datetime.now(timezone.utc), 0
        for ns in (yield StoreCall("namespaces")):
            units = yield StoreCall("list_units", (held_namespace(ns),), {"include_suppressed": True})
            expired = [e for e in entries(units).values() if e.expired(now)]
            if expired:
                unit_ids = [u for e in expired for u in e.unit_ids]
                log_forgotten((yield StoreCall("delete", (unit_ids,), {"namespace": held_namespace(ns)})))
                erased += len(expired)
        return erased

    # -- the two entry points: one plan, two drivers --------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` synchronously; results in the order of ``ops``."""
        return drive(self._plan(list(ops)), self._call)  # type: ignore[no-any-return]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` asynchronously: recall and ingest natively async, the rest in a thread."""
        return await adrive(self._plan(list(ops)), self._acall)  # type: ignore[no-any-return]

    def _call(self, call: StoreCall) -> Any:
        return getattr(self if call.on_store else self.memory, call.method)(*call.args, **call.kwargs)

    def _acall(self, call: StoreCall) -> Awaitable[Any]:
        native = None if call.on_store else getattr(self.memory, f"a{call.method}", None)
        return native(*call.args, **call.kwargs) if native is not None else \
            asyncio.to_thread(self._call, call)
