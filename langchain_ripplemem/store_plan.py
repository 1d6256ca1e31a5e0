"""The plan of a :class:`~langchain_ripplemem.stores.RippleMemStore` batch: every operation's logic, as calls.

``batch`` and ``abatch`` run one plan (:class:`StorePlan`), a generator that yields each
call it needs (:class:`StoreCall`: of the memory, or of the store) and receives its
result; :func:`~langchain_ripplemem._runtime.drivers.drive` runs the calls in this thread,
:func:`~langchain_ripplemem._runtime.drivers.adrive` natively async or in a worker thread.
So the sync and async stores share every line of their logic. In one batch, reads see
the state before it (:class:`BatchReads`) and writes apply afterwards, the last write per
``(namespace, key)`` winning.

Example:
    >>> from langchain_ripplemem import RippleMem
    >>> from langchain_ripplemem.stores import RippleMemStore
    >>> from langgraph.store.base import GetOp, PutOp
    >>> store = RippleMemStore(RippleMem())
    >>> plan = store._plan([GetOp(("maya",), "diet"), PutOp(("maya",), "diet", {"text": "I am vegetarian."})])
    >>> first = next(plan)  # the get reads the namespace first, before the put writes
    >>> first.method, first.kwargs
    ('list_units', {'include_suppressed': True})

"""

from __future__ import annotations

import logging
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from langgraph.store.base import GetOp, ListNamespacesOp, Op, PutOp, Result, SearchItem, SearchOp, validate_op_namespace

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.errors import ExtractionError, InvalidNamespaceError
from langchain_ripplemem.recall.filters import FILTER_NAMES, outside
from langchain_ripplemem.schemas import Namespace, ReservedNamespace, is_blank, validate_namespace
from langchain_ripplemem.store_items import (
    StoreEntry,
    TextVectors,
    entries,
    expires_after,
    indexed_texts,
    item_conversation,
    memory_filter,
    passes,
    path_matches,
    split_filter,
)
from langchain_ripplemem.write.forget import ForgetReport

if TYPE_CHECKING:
    from langchain_ripplemem.memory import RippleMem

__all__ = ["BatchReads", "Plan", "StoreCall", "StorePlan", "held_namespace", "log_forgotten"]

# The store's logger (docs: ``langchain_ripplemem.stores``, INFO), whichever module logs.
_log = logging.getLogger("langchain_ripplemem.stores")


@dataclass(frozen=True)
class StoreCall:
    """A call the plan needs (of the memory, or with ``on_store`` of the store); the driver runs it sync or async."""

    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    on_store: bool = False


@dataclass
class BatchReads:
    """What one batch has read: every entry of each namespace it opened, and the items to refresh."""

    now: datetime
    loaded: dict[Namespace, dict[str, StoreEntry]] = field(default_factory=dict)
    refresh: dict[Namespace, dict[str, StoreEntry]] = field(default_factory=dict)
    known: list[Namespace] | None = None

    def read(self, entry: StoreEntry, refresh_ttl: bool) -> None:
        """Note an item returned by a read; with ``refresh_ttl`` its time to live starts again."""
        if refresh_ttl and entry.ttl is not None:
            self.refresh.setdefault(entry.item.namespace, {})[entry.item.key] = entry


Plan = Generator[StoreCall, Any, Any]


def log_forgotten(forgotten: ForgetReport) -> None:
    """Log what a delete removed and erased: ``BaseStore`` operations return nothing to say it."""
    _log.info("%s; erased from: %s%s", forgotten.summary(), ", ".join(forgotten.files) or "nothing",
              "".join(f"; kept: {k}" for k in forgotten.kept))


def held_namespace(ns: Namespace) -> Namespace:
    """The namespace as the memory holds it: LangGraph's reserved root only through a raw operation."""
    return ReservedNamespace(ns) if ns and ns[0] == "langgraph" else ns


class StorePlan:
    """The plan of a batch, mixed into :class:`~langchain_ripplemem.stores.RippleMemStore`.

    It reads the store's ``memory``, ``recall_config``, index ``_fields`` and text ``_vectors``;
    calls marked ``on_store`` (``_outside``, ``_similarities``) are its own methods, run by the driver.
    """

    memory: RippleMem
    recall_config: RecallConfig | None
    _fields: list[str] | None
    _vectors: TextVectors

    def _plan(self, ops: list[Op]) -> Plan:
        """Every operation's logic, yielding the calls it needs."""
        writes: dict[tuple[Namespace, str], PutOp] = {}
        for op in ops:
            self._validate(op)
            if isinstance(op, PutOp):
                writes[(tuple(op.namespace), op.key)] = op
        batch = BatchReads(datetime.now(timezone.utc))
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
                validate_namespace(held_namespace(tuple(op.namespace)))
                # Bad values are rejected before any write.
                item_conversation(op, self._fields, None, datetime.now(timezone.utc))

    def _namespace(self, ns: Namespace, batch: BatchReads) -> Generator[StoreCall, Any, dict[str, StoreEntry]]:
        """Every entry of ``ns``, expired ones too (suppressed ones too: a re-put or delete replaces them)."""
        if ns not in batch.loaded:
            batch.loaded[ns] = entries((yield StoreCall("list_units", (held_namespace(ns),),
                                                        {"include_suppressed": True})))
        return batch.loaded[ns]

    def _live(self, ns: Namespace, batch: BatchReads) -> Generator[StoreCall, Any, dict[str, StoreEntry]]:
        """The entries of ``ns`` that have not expired."""
        loaded = yield from self._namespace(ns, batch)
        return {key: e for key, e in loaded.items() if not e.expired(batch.now)}

    def _known(self, batch: BatchReads) -> Generator[StoreCall, Any, list[Namespace]]:
        if batch.known is None:
            batch.known = yield StoreCall("namespaces")
        return batch.known

    def _search(self, op: SearchOp, batch: BatchReads) -> Generator[StoreCall, Any, list[SearchItem]]:
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
                result = yield StoreCall("recall", (query,), {"namespace": held_namespace(ns),
                                                              "config": self._search_config(op), **kept})
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
        scores = (yield StoreCall("_similarities", (query, [self._texts(e) for e in page]), on_store=True)) \
            if query and page else [None] * len(page)
        for entry in page:
            batch.read(entry, op.refresh_ttl)
        return [SearchItem(namespace=e.item.namespace, key=e.item.key, value=e.item.value,
                           created_at=e.item.created_at, updated_at=e.item.updated_at, score=s)
                for e, s in zip(page, scores, strict=True)]

    def _matching(self, ns: Namespace, live: Iterable[StoreEntry], conditions: dict[str, Any] | None,
                  scoped: dict[str, Any], batch: BatchReads) -> Generator[StoreCall, Any, list[StoreEntry]]:
        """The visible entries meeting ``conditions``: on values, and for the recall filter's names on memories."""
        left_out: dict[frozenset[str], set[str]] = {}  # memory ids each set of names leaves out
        found = []
        for entry in live:
            by_value, by_memory = split_filter(conditions, entry.item)
            if not entry.visible or not passes(entry.item, by_value):
                continue
            if by_memory and by_memory not in left_out:
                left_out[by_memory] = yield StoreCall("_outside", (ns, {k: scoped[k] for k in by_memory}, batch.now),
                                                 on_store=True)
            if not by_memory or not left_out[by_memory].issuperset(entry.unit_ids):
                found.append(entry)
        return found

    def _outside(self, ns: Namespace, filters: dict[str, Any], now: datetime) -> set[str]:
        """The memory ids of ``ns`` outside a recall filter (time phrases grounded at ``now``).

        Raises:
            ValueError: naming ``filter`` and the name whose condition is no recall filter.
        """
        return outside(self.memory.reader.namespace_index(held_namespace(ns)), memory_filter(filters, now))

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
                       batch: BatchReads) -> Generator[StoreCall, Any, list[StoreEntry]]:
        """``items`` ordered by their best memory's cosine to ``query``."""
        owner = {uid: e.item.key for e in batch.loaded[ns].values() for uid in e.unit_ids}
        hits = yield StoreCall("search", (query,), {"namespace": held_namespace(ns), "k": max(len(owner), 1)})
        rank: dict[str, int] = {}
        for position, (unit, _) in enumerate(hits):
            rank.setdefault(owner.get(unit.id, ""), position)
        return sorted(items, key=lambda e: rank.get(e.item.key, len(rank)))

    def _search_config(self, op: SearchOp) -> RecallConfig:
        cfg = self.recall_config or self.memory.recall_config
        depth = max(op.offset + op.limit, 1)
        return cfg.replace(assembly={"top_k": max(cfg.assembly.top_k, depth)},
                           views={"semantic_k": max(cfg.views.semantic_k, depth)})

    def _list_namespaces(self, op: ListNamespacesOp, batch: BatchReads) -> Generator[StoreCall, Any, list[Namespace]]:
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

    def _write(self, puts: list[PutOp], batch: BatchReads) -> Generator[StoreCall, Any, None]:
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
                log_forgotten((yield StoreCall("delete", (stale,), {"namespace": held_namespace(ns)})))
            for op in ops:
                if op.value is None:
                    continue
                old = loaded.get(op.key)
                created = old.item.created_at if old is not None and not old.expired(batch.now) else None
                # Stamped when written: a TTL runs from the write, however long the batch before it took.
                conv, stamp = item_conversation(op, self._fields, created, datetime.now(timezone.utc))
                report = yield StoreCall("add_conversation", (conv,),
                                         {"namespace": held_namespace(ns), "unit_metadata": stamp})
                if report.units == 0:
                    why = "; ".join(w.error for w in report.failed_windows) or "the extractor found nothing to keep"
                    raise ExtractionError(f"put {ns}/{op.key!r}: the value produced no memory units ({why})")
            fresh = {uid: {"store_expires_at": expires_after(e.ttl, datetime.now(timezone.utc))}
                     for key, e in batch.refresh.get(ns, {}).items() if key not in written for uid in e.unit_ids}
            if fresh:
                yield StoreCall("update_metadata", (fresh,), {"namespace": held_namespace(ns)})
