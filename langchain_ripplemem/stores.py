"""RippleMemStore: a LangGraph ``BaseStore`` whose items are RippleMem memories.

``put`` writes an item's text through the RippleMem write path (extraction,
embedding, linking), ``search`` with a ``query`` runs recollection, and every
other operation reads the units back. Use it wherever LangGraph expects a store:
``graph.compile(store=RippleMemStore(memory))``, then ``runtime.store`` or
``get_store()`` inside nodes.

The text rule: an item's memory text is ``value["text"]``, else
``value["content"]``, else every other top-level string value as ``"field: text"``
lines (``"speaker"`` and ``"time"`` excluded), else the value as JSON. The text is
one turn spoken by ``value.get("speaker", "user")`` in a one-session conversation
whose id is the item key and whose time is ``value.get("time")`` (anything
:func:`~langchain_ripplemem.extraction.timeparse.parse_timestamp` reads) or now.

Example:
    >>> from langchain_ripplemem import RippleMemory
    >>> store = RippleMemStore(RippleMemory())
    >>> store.put(("users", "maya"), "allergy", {"text": "I'm allergic to shellfish."})
    >>> store.get(("users", "maya"), "allergy").value
    {'text': "I'm allergic to shellfish."}
    >>> [item.key for item in store.search(("users",), query="What can't Maya eat?", limit=3)]
    ['allergy']

"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Generator, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)

from langchain_ripplemem._runtime.drivers import adrive, drive
from langchain_ripplemem.adapters import single_turn_conversation
from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.errors import ExtractionError, InvalidNamespaceError
from langchain_ripplemem.extraction.timeparse import parse_timestamp
from langchain_ripplemem.index.marks import is_suppressed
from langchain_ripplemem.schemas import Conversation, MemoryUnit, Namespace, is_blank, validate_namespace
from langchain_ripplemem.write.forget import ForgetReport

if TYPE_CHECKING:
    from langchain_ripplemem.memory import RippleMemory

__all__ = ["RippleMemStore", "item_text"]

_RESERVED = ("speaker", "time")
_log = logging.getLogger(__name__)


def item_text(value: Mapping[str, Any]) -> str:
    """The memory text of a store value (see the module docs for the rule)."""
    for name in ("text", "content"):
        if isinstance(value.get(name), str) and value[name].strip():
            return str(value[name])
    lines = [f"{k}: {v}" for k, v in value.items() if k not in _RESERVED and isinstance(v, str) and v.strip()]
    return "\n".join(lines) if lines else json.dumps(dict(value), sort_keys=True, ensure_ascii=False)


@dataclass
class _Entry:
    """One item of a namespace and the units that hold it."""

    item: Item
    unit_ids: list[str] = field(default_factory=list)
    visible: bool = False  # False when every unit of the item is suppressed


@dataclass(frozen=True)
class _Call:
    """A RippleMemory call the plan needs; the driver runs it sync or async."""

    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


_Plan = Generator[_Call, Any, list[Result]]


def _entries(units: Iterable[MemoryUnit]) -> dict[str, _Entry]:
    """Group a namespace's units into items, in insertion order.

    Stamped units form the item of their key (the newest stamp wins if concurrent
    puts left two); any other unit (e.g. from ``add_conversation``) is an item of its
    own, keyed by its unit id, whose value describes the unit.
    """
    entries: dict[str, _Entry] = {}
    for unit in units:
        meta = unit.metadata
        if "store_key" in meta:
            key, value = meta["store_key"], meta["store_value"]
            created, updated = meta["store_created_at"], meta["store_updated_at"]
        else:
            key, created = unit.id, unit.created_at
            value = {"content": unit.restatement, "kind": unit.kind,
                     "conversation_id": unit.source.conversation_id, "turn_ids": unit.source.turn_ids}
            updated = created
        item = Item(value=value, key=key, namespace=unit.namespace, created_at=created, updated_at=updated)
        entry = entries.setdefault(key, _Entry(item))
        if item.updated_at > entry.item.updated_at:
            entry.item = item
        entry.unit_ids.append(unit.id)
        entry.visible = entry.visible or not is_suppressed(unit)
    return entries


def _passes(item: Item, conditions: dict[str, Any] | None) -> bool:
    """Whether ``item`` meets every condition of a search ``filter``."""
    return all(_matches(item.value.get(k), c) for k, c in (conditions or {}).items())


def _matches(value: Any, condition: Any) -> bool:
    """Exact match on a value field; ``{"$gt": 3}``-style operators as LangGraph documents them."""
    if isinstance(condition, Mapping) and any(str(k).startswith("$") for k in condition):
        ops = {"$eq": lambda a, b: a == b, "$ne": lambda a, b: a != b, "$gt": lambda a, b: a > b,
               "$gte": lambda a, b: a >= b, "$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b}
        try:
            return all(ops[op](value, operand) for op, operand in condition.items())
        except KeyError as err:
            raise ValueError(f"filter: unknown operator {err.args[0]!r}; use one of {sorted(ops)}") from None
        except TypeError:
            return False
    if isinstance(condition, Mapping):
        return isinstance(value, Mapping) and all(_matches(value.get(k), c) for k, c in condition.items())
    return bool(value == condition)


def _path_matches(condition: MatchCondition, namespace: Namespace) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path):]
    return all(p == "*" or p == label for p, label in zip(path, part, strict=True))


def _storable(namespace: Namespace) -> bool:
    """Whether RippleMem can hold this namespace (LangGraph reserves the root "langgraph")."""
    return bool(namespace) and namespace[0] != "langgraph"


class RippleMemStore(BaseStore):
    """LangGraph store over a :class:`RippleMemory`: items are memories, search recollects.

    Args:
        memory: the ``RippleMemory`` that holds the units.
        recall_config: recollection budgets for ``search(query=...)``; default the
            memory's. ``assembly.top_k`` and ``views.semantic_k`` grow to ``offset + limit`` so deep
            pages still fill.

    Semantics follow LangGraph's own stores: in one batch, reads see the state
    before the batch and writes apply afterwards, the last write per
    ``(namespace, key)`` winning. A re-``put`` replaces the key's units (and their
    edges); ``delete`` removes them. ``search`` without a query lists items in
    insertion order; with a query it runs recollection in each namespace under the
    prefix and ranks items by their best memory's score. As in LangGraph's stores,
    ``filter`` chooses the items first and the page is over all of them: items
    recollection did not return fill it after the ranked ones, with score ``None``,
    nearest to the query first. ``index`` and TTLs are not supported: every item is
    indexed, nothing expires. Each item's value and timestamps are written into its
    units' metadata (``add_conversation(..., unit_metadata=...)``), so ``get``
    returns the value exactly. User corrections go through :meth:`suppress` /
    :meth:`unsuppress` (not ``BaseStore`` operations): a suppressed item is absent
    from ``get`` and ``search`` but its memories stay for audit.

    A delete (``delete``, a ``put`` of ``None``, a re-``put``) erases the old units from the
    store's files as ``RippleMemory.delete`` does. ``BaseStore`` returns nothing, so the
    :class:`~langchain_ripplemem.write.forget.ForgetReport` is logged (logger
    ``langchain_ripplemem.stores``, INFO); :meth:`forget` returns it.

    Raises:
        InvalidNamespaceError: for namespaces LangGraph rejects (a subclass of LangGraph's).
        ValueError: naming ``key``, ``value`` or ``filter`` when they are unusable.
    """

    def __init__(self, memory: RippleMemory, *, recall_config: RecallConfig | None = None) -> None:
        self.memory = memory
        self.recall_config = recall_config

    # -- user corrections (beyond BaseStore) -------------------------------------------
    def suppress(self, namespace: tuple[str, ...], key: str, *, reason: str) -> int:
        """Hide an item from ``get``/``search`` but keep its memories for audit; returns units hidden.

        A user correction ("that's wrong, forget it"): the item's units stay in the
        memory, marked suppressed with ``reason`` (``RippleMemory.suppress``), until
        :meth:`unsuppress`. A later ``put`` of the key replaces them as usual.

        Raises:
            ValueError: naming ``namespace``, ``key`` or ``reason`` when unusable.
        """
        ns, ids = self._item_units(namespace, key)
        return self.memory.suppress(ids, namespace=ns, reason=reason)

    def unsuppress(self, namespace: tuple[str, ...], key: str) -> int:
        """Undo :meth:`suppress`; returns units shown again."""
        ns, ids = self._item_units(namespace, key)
        return self.memory.unsuppress(ids, namespace=ns)

    async def asuppress(self, namespace: tuple[str, ...], key: str, *, reason: str) -> int:
        """Async :meth:`suppress`."""
        return await asyncio.to_thread(self.suppress, namespace, key, reason=reason)

    async def aunsuppress(self, namespace: tuple[str, ...], key: str) -> int:
        """Async :meth:`unsuppress`."""
        return await asyncio.to_thread(self.unsuppress, namespace, key)

    # -- forgetting with a report (beyond BaseStore) -----------------------------------------
    def forget(self, namespace: tuple[str, ...], key: str) -> ForgetReport:
        """Delete an item, as ``delete`` does, and return what was removed and erased (``RippleMemory.delete``).

        Raises:
            ValueError: naming ``namespace`` or ``key`` when unusable.
        """
        ns, ids = self._item_units(namespace, key)
        return self.memory.delete(ids, namespace=ns) if ids else ForgetReport(namespace=ns)

    async def aforget(self, namespace: tuple[str, ...], key: str) -> ForgetReport:
        """Async :meth:`forget`."""
        return await asyncio.to_thread(self.forget, namespace, key)

    def _item_units(self, namespace: tuple[str, ...], key: str) -> tuple[Namespace, list[str]]:
        if not isinstance(key, str) or not key:
            raise ValueError(f"key must be a non-empty string, got {key!r}")
        ns = validate_namespace(namespace)
        entry = _entries(self.memory.list_units(ns, include_suppressed=True)).get(key)
        return ns, list(entry.unit_ids) if entry else []

    # -- the two entry points: one plan, two drivers --------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` synchronously; results in the order of ``ops``."""
        return drive(self._plan(list(ops)), lambda call: getattr(self.memory, call.method)(*call.args, **call.kwargs))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` asynchronously: recall and ingest natively async, the rest in a thread."""
        def acall(call: _Call) -> Awaitable[Any]:
            native = getattr(self.memory, f"a{call.method}", None)
            return native(*call.args, **call.kwargs) if native is not None else \
                asyncio.to_thread(getattr(self.memory, call.method), *call.args, **call.kwargs)

        return await adrive(self._plan(list(ops)), acall)

    # -- the plan ---------------------------------------------------------------------
    def _plan(self, ops: list[Op]) -> _Plan:
        """Every operation's logic, yielding the memory calls it needs."""
        writes: dict[tuple[Namespace, str], PutOp] = {}
        for op in ops:
            self._validate(op)
            if isinstance(op, PutOp):
                writes[(tuple(op.namespace), op.key)] = op
        cache: dict[Namespace, dict[str, _Entry]] = {}
        known: list[Namespace] | None = None
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                entry = (yield from self._namespace(tuple(op.namespace), cache)).get(op.key)
                results.append(entry.item if entry and entry.visible else None)
            elif isinstance(op, SearchOp):
                if known is None:
                    known = yield _Call("namespaces")
                results.append((yield from self._search(op, known, cache)))
            elif isinstance(op, ListNamespacesOp):
                if known is None:
                    known = yield _Call("namespaces")
                results.append(_list_namespaces(op, known))
            else:
                results.append(None)
        yield from self._write(list(writes.values()), cache)
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
                if not _storable(tuple(op.namespace)):
                    raise InvalidNamespaceError(
                        f'Root label for namespace cannot be "langgraph". Got: {tuple(op.namespace)}')
                self._conversation(op.key, op.value, None)  # reject bad values before any write

    def _namespace(self, ns: Namespace, cache: dict[Namespace, dict[str, _Entry]]) -> Generator[
            _Call, Any, dict[str, _Entry]]:
        if ns not in cache and not _storable(ns):
            cache[ns] = {}
        elif ns not in cache:
            # Suppressed units too: a re-put or delete must replace them like any other.
            cache[ns] = _entries((yield _Call("list_units", (ns,), {"include_suppressed": True})))
        return cache[ns]

    def _search(self, op: SearchOp, known: list[Namespace],
                cache: dict[Namespace, dict[str, _Entry]]) -> Generator[_Call, Any, list[SearchItem]]:
        prefix, query = tuple(op.namespace_prefix), (op.query or "").strip()
        query = "" if is_blank(query) else query  # a query showing nothing lists, as no query does
        spaces = [ns for ns in known if ns[: len(prefix)] == prefix]
        wanted = op.offset + op.limit
        scored: list[tuple[float, Item]] = []
        unscored: dict[Namespace, list[Item]] = {}  # filter first, as LangGraph's stores do
        for ns in spaces:
            entries = yield from self._namespace(ns, cache)
            matching = [e for e in entries.values() if e.visible and _passes(e.item, op.filter)]
            if not query:
                unscored[ns] = [e.item for e in matching]
                continue
            owner = {uid: e for e in matching for uid in e.unit_ids}
            result = yield _Call("recall", (query,), {"namespace": ns, "config": self._search_config(op)})
            best: dict[str, float] = {}
            for memory in result.memories:
                entry = owner.get(memory.unit.id)
                if entry is not None and memory.score > best.get(entry.item.key, float("-inf")):
                    best[entry.item.key] = memory.score
            scored.extend((score, entries[key].item) for key, score in best.items())
            unscored[ns] = [e.item for e in matching if e.item.key not in best]
        scored.sort(key=lambda pair: pair[0], reverse=True)
        found: list[tuple[float | None, Item]] = [*scored]
        for ns, rest in unscored.items():
            if len(found) >= wanted:
                break
            if query and len(rest) > 1:
                # Matching items recollection left out still fill the page, as unindexed items do in
                # LangGraph's stores (score None), nearest to the query first.
                rest = yield from self._by_similarity(query, ns, rest, cache)
            found.extend((None, item) for item in rest)
        return [SearchItem(namespace=i.namespace, key=i.key, value=i.value, created_at=i.created_at,
                           updated_at=i.updated_at, score=s) for s, i in found[op.offset: wanted]]

    def _by_similarity(self, query: str, ns: Namespace, items: list[Item],
                       cache: dict[Namespace, dict[str, _Entry]]) -> Generator[_Call, Any, list[Item]]:
        """``items`` ordered by their best memory's cosine to ``query``."""
        owner = {uid: e.item.key for e in cache[ns].values() for uid in e.unit_ids}
        hits = yield _Call("search", (query,), {"namespace": ns, "k": max(len(owner), 1)})
        rank: dict[str, int] = {}
        for position, (unit, _) in enumerate(hits):
            rank.setdefault(owner.get(unit.id, ""), position)
        return sorted(items, key=lambda item: rank.get(item.key, len(rank)))

    def _search_config(self, op: SearchOp) -> RecallConfig:
        cfg = self.recall_config or self.memory.recall_config
        depth = max(op.offset + op.limit, 1)
        return cfg.replace(assembly={"top_k": max(cfg.assembly.top_k, depth)},
                           views={"semantic_k": max(cfg.views.semantic_k, depth)})

    def _write(self, puts: list[PutOp], cache: dict[Namespace, dict[str, _Entry]]) -> Generator[_Call, Any, None]:
        by_ns: dict[Namespace, list[PutOp]] = {}
        for op in puts:
            by_ns.setdefault(tuple(op.namespace), []).append(op)
        for ns, ops in by_ns.items():
            entries = yield from self._namespace(ns, cache)
            stale = [uid for op in ops if op.key in entries for uid in entries[op.key].unit_ids]
            if stale:  # one delete per namespace: each delete makes the memory reload its view
                forgotten = yield _Call("delete", (stale,), {"namespace": ns})
                _log.info("%s; erased from: %s%s", forgotten.summary(), ", ".join(forgotten.files) or "nothing",
                          "".join(f"; kept: {k}" for k in forgotten.kept))
            for op in ops:
                if op.value is None:
                    continue
                old = entries.get(op.key)
                conv, stamp = self._conversation(op.key, op.value, old.item.created_at if old else None)
                report = yield _Call("add_conversation", (conv,), {"namespace": ns, "unit_metadata": stamp})
                if report.units == 0:
                    why = "; ".join(w.error for w in report.failed_windows) or "the extractor found nothing to keep"
                    raise ExtractionError(f"put {ns}/{op.key!r}: the value produced no memory units ({why})")

    @staticmethod
    def _conversation(key: str, value: Any, created_at: datetime | None) -> tuple[Conversation, dict[str, Any]]:
        """The one-turn conversation that carries an item through the write path."""
        if not isinstance(value, Mapping):
            raise ValueError(f"value must be a dict (mapping of field -> JSON value), got {type(value).__name__}")
        try:
            stored = json.loads(json.dumps(dict(value)))
        except (TypeError, ValueError) as err:
            raise ValueError(f"value must be JSON-serialisable: {err}") from None
        speaker = value.get("speaker", "user")
        if not isinstance(speaker, str) or not speaker.strip():
            raise ValueError(f'value["speaker"] must be a non-empty string, got {speaker!r}')
        now = datetime.now(timezone.utc)
        try:
            when = parse_timestamp(value["time"]) if value.get("time") else now
        except ValueError as err:
            raise ValueError(f'value["time"]: {err}') from None
        stamp = {"store_key": key, "store_value": stored,
                 "store_created_at": (created_at or now).isoformat(), "store_updated_at": now.isoformat()}
        conv = single_turn_conversation(item_text(value), speaker=speaker, conversation_id=key, session_id="item",
                                        turn_id=f"{key}:0", time=when)
        return conv, stamp


def _list_namespaces(op: ListNamespacesOp, known: list[Namespace]) -> list[Namespace]:
    spaces = [ns for ns in known if all(_path_matches(c, ns) for c in op.match_conditions or ())]
    if op.max_depth is not None:
        spaces = sorted({ns[: op.max_depth] for ns in spaces})
    else:
        spaces = sorted(spaces)
    return spaces[op.offset: op.offset + op.limit]
