"""The items of a :class:`~langchain_ripplemem.stores.RippleMemStore`: units grouped into items, and their stamps.

An item is held by the memory units its value produced; each unit carries the
item in its ``metadata`` (so every backend and every process sees the same):

* ``store_key``, ``store_value``, ``store_created_at``, ``store_updated_at``: the item;
* ``store_index``: how it was indexed, when not the store's default: ``False``
  (kept and listed, never recalled), or the JSON paths whose text is embedded;
  ``store_unindexed``: ``True`` when nothing of it is indexed (``index=False``, or its
  paths hold no text);
* ``store_ttl`` (minutes) and ``store_expires_at`` (ISO time): its time to live;
  a read that refreshes TTLs moves ``store_expires_at`` on.

The units of an unindexed item carry the suppression mark whose reason is
:data:`UNINDEXED_REASON`: recall and search never return them, ``get`` and listings
still return the item.

Example:
    >>> texts = indexed_texts({"title": "Trip", "notes": ["Lisbon", "Porto"]}, ["notes[*]"], None)
    >>> texts
    ['Lisbon', 'Porto']
    >>> indexed_texts({"text": "I moved to Porto."}, None, None)
    ['I moved to Porto.']
    >>> indexed_texts({"text": "x"}, False, None)
    []

"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

import numpy as np
from langchain_core.embeddings import Embeddings
from langgraph.store.base import Item, MatchCondition, PutOp, get_text_at_path, tokenize_path

from langchain_ripplemem.conversations.messages import single_turn_conversation
from langchain_ripplemem.index.marks import SUPPRESSED
from langchain_ripplemem.recall.filters import FILTER_NAMES, RecallFilter, recall_filter
from langchain_ripplemem.schemas import Conversation, MemoryUnit, Namespace
from langchain_ripplemem.text.time.timeparse import parse_timestamp

__all__ = ["UNINDEXED_REASON", "StoreEntry", "TextVectors", "check_index", "check_ttl", "entries", "expires_after",
           "index_settings", "indexed_texts", "item_conversation", "item_text", "memory_filter", "passes",
           "path_matches", "split_filter"]

#: The suppression reason that marks an unindexed item's units (kept, listed, never recalled).
UNINDEXED_REASON = "store item put with index=False: kept and listed, never recalled"
_RESERVED = ("speaker", "time")


def item_text(value: Mapping[str, Any]) -> str:
    """The memory text of a store value (see :mod:`~langchain_ripplemem.stores` for the rule)."""
    for name in ("text", "content"):
        if isinstance(value.get(name), str) and value[name].strip():
            return str(value[name])
    lines = [f"{k}: {v}" for k, v in value.items() if k not in _RESERVED and isinstance(v, str) and v.strip()]
    return "\n".join(lines) if lines else json.dumps(dict(value), sort_keys=True, ensure_ascii=False)


def indexed_texts(value: Mapping[str, Any], index: bool | list[str] | None, fields: list[str] | None) -> list[str]:
    """The texts embedded for an item: each path's text (LangGraph's path syntax), else the text rule.

    ``index`` is the put's (``None``: the store's ``fields``, and with neither the text rule's
    one text; ``False``: none). ``"$"`` is the whole value as JSON, as in LangGraph.
    """
    if index is False:
        return []
    paths = index if isinstance(index, list) else fields
    if paths is None:
        return [item_text(value)]
    texts: list[str] = []
    for path in paths:
        texts.extend(get_text_at_path(value, path if path == "$" else tokenize_path(path)))
    return [text for text in texts if text.strip()]


def check_index(index: object, argument: str = "index") -> Literal[False] | list[str] | None:
    """``None``, ``False`` or a list of JSON paths; ``ValueError`` naming ``argument`` otherwise."""
    if index is None or index is False:
        return None if index is None else False
    if isinstance(index, (list, tuple)) and all(isinstance(p, str) and p.strip() for p in index):
        for path in index:
            try:
                tokenize_path(path)
            except Exception as err:  # LangGraph's tokenizer raises what it finds: name the path
                raise ValueError(f"{argument}: bad JSON path {path!r}: {err}") from None
        return list(index)
    raise ValueError(f"{argument} must be None, False or a list of JSON paths like ['text', 'notes[*].body'], "
                     f"got {index!r}")


def check_ttl(ttl: object, argument: str = "ttl") -> float | None:
    """``None`` or a positive, finite number of minutes; ``ValueError`` naming ``argument`` otherwise."""
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not math.isfinite(ttl) or ttl <= 0:
        raise ValueError(f"{argument} must be None or a positive number of minutes, got {ttl!r}")
    return float(ttl)


def expires_after(ttl: float | None, now: datetime) -> str | None:
    """The ISO time ``ttl`` minutes after ``now`` (``None`` without a TTL)."""
    return None if ttl is None else (now + timedelta(minutes=ttl)).isoformat()


@dataclass
class StoreEntry:
    """One item of a namespace and the units that hold it."""

    item: Item
    unit_ids: list[str] = field(default_factory=list)
    visible: bool = False  # False when a user correction suppressed every unit of the item
    index: bool | list[str] | None = None
    indexed: bool = True  # False: kept and listed, never recalled (store_unindexed)
    ttl: float | None = None
    expires_at: datetime | None = None

    def expired(self, now: datetime) -> bool:
        """Whether the item's time to live ran out by ``now``."""
        return self.expires_at is not None and self.expires_at <= now


def entries(units: Iterable[MemoryUnit]) -> dict[str, StoreEntry]:
    """Group a namespace's units into items, in insertion order.

    Stamped units form the item of their key (the newest stamp wins if concurrent
    puts left two); any other unit (e.g. from ``add_conversation``) is an item of its
    own, keyed by its unit id, whose value describes the unit.
    """
    found: dict[str, StoreEntry] = {}
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
        entry = found.get(key)
        if entry is None or item.updated_at > entry.item.updated_at:
            expires = meta.get("store_expires_at")
            entry = found[key] = StoreEntry(
                item, entry.unit_ids if entry else [], entry.visible if entry else False,
                meta.get("store_index"), not meta.get("store_unindexed"), meta.get("store_ttl"),
                datetime.fromisoformat(expires) if isinstance(expires, str) else None)
        entry.unit_ids.append(unit.id)
        mark = meta.get(SUPPRESSED)
        entry.visible = entry.visible or not mark or mark.get("reason") == UNINDEXED_REASON
    return found


def passes(item: Item, conditions: Mapping[str, Any] | None) -> bool:
    """Whether ``item`` meets every condition of a search ``filter``.

    A key is a field of the value, else a dotted path into nested fields (as LangGraph's
    SQL stores read ``"user.access-level"``).

    Example:
        >>> item = Item(value={"user": {"access-level": "admin"}, "n": 3}, key="k", namespace=("a",),
        ...             created_at="2026-01-01T00:00:00+00:00", updated_at="2026-01-01T00:00:00+00:00")
        >>> passes(item, {"user.access-level": "admin", "n": {"$gt": 2}}), passes(item, {"user.n": 3})
        (True, False)
    """
    return all(_matches(_field(item.value, k), c) for k, c in (conditions or {}).items())


def memory_filter(conditions: Mapping[str, Any], now: datetime) -> RecallFilter:
    """The recall filter of a search ``filter``'s ``since``, ``until``, ``speakers`` and ``conversation_id``.

    Raises:
        ValueError: naming ``filter`` and the bad one.
    """
    try:
        return recall_filter(**{name: c for name, c in conditions.items() if name in FILTER_NAMES}, reference=now)
    except ValueError as err:
        raise ValueError(f"filter: {err}") from None


def split_filter(conditions: Mapping[str, Any] | None, item: Item) -> tuple[dict[str, Any], frozenset[str]]:
    """What LangGraph's rule judges on ``item``'s value, and the recall filter's names its memories answer.

    A name of the recall filter that is a field of the item's value keeps LangGraph's meaning
    (the field's value); otherwise the item's memories answer it (``docs/filters.md``).

    Example:
        >>> item = Item(value={"text": "hi", "conversation_id": "c1"}, key="k", namespace=("a",),
        ...             created_at="2026-01-01T00:00:00+00:00", updated_at="2026-01-01T00:00:00+00:00")
        >>> split_filter({"conversation_id": "c1", "since": "2026-01-01", "n": 1}, item)
        ({'conversation_id': 'c1', 'n': 1}, frozenset({'since'}))
    """
    conditions = conditions or {}
    by_value = {k: c for k, c in conditions.items() if k not in FILTER_NAMES or k in item.value}
    return by_value, frozenset(conditions.keys() - by_value.keys())


def _field(value: Mapping[str, Any], key: str) -> Any:
    if key in value or "." not in key:
        return value.get(key)
    found: Any = value
    for part in key.split("."):
        if not isinstance(found, Mapping):
            return None
        found = found.get(part)
    return found


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


def path_matches(condition: MatchCondition, namespace: Namespace) -> bool:
    """Whether ``namespace`` meets a ``list_namespaces`` prefix or suffix condition (``"*"`` any label)."""
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path):]
    return all(p == "*" or p == label for p, label in zip(path, part, strict=True))


class TextVectors:
    """Unit vectors of indexed texts, the last ``size`` kept: a page's scores embed only texts not seen lately.

    Example:
        >>> cache = TextVectors(size=2)
        >>> embed = lambda texts: np.eye(3)[: len(texts)]
        >>> sorted(cache.of(["a", "b"], embed)), len(cache.of(["b", "c"], embed)), sorted(cache._kept)
        (['a', 'b'], 2, ['b', 'c'])
    """

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._kept: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def of(self, texts: Iterable[str], embed: Callable[[list[str]], np.ndarray]) -> dict[str, np.ndarray]:
        """``{text: unit vector}`` for ``texts``; ``embed`` gets the ones not kept, in one call."""
        wanted = list(dict.fromkeys(texts))
        with self._lock:
            found = {t: self._kept[t] for t in wanted if t in self._kept}
            for text in found:
                self._kept.move_to_end(text)
        missing = [t for t in wanted if t not in found]
        if missing:
            found.update(zip(missing, embed(missing), strict=True))
            with self._lock:
                for text in missing:
                    self._kept[text] = found[text]
                while len(self._kept) > self.size:
                    self._kept.popitem(last=False)
        return found


def index_settings(index: object, embeddings: Embeddings) -> tuple[list[str] | None, int | None]:
    """A store's ``IndexConfig`` checked against the memory's ``embeddings``: its ``fields`` and ``dims``."""
    if index is None:
        return None, None
    if not isinstance(index, Mapping) or set(index) - {"dims", "embed", "fields"}:
        raise ValueError(f"index must be an IndexConfig dict with dims, embed and fields, got {index!r}")
    embed = index.get("embed")
    if embed is not None and embed is not embeddings and embed != embeddings:
        raise ValueError("index['embed'] must be the memory's embeddings (the memory embeds every item), "
                         f"got {embed!r}")
    fields = check_index(index.get("fields"), "index['fields']")
    if fields is False:
        raise ValueError("index['fields'] must be None or a list of JSON paths, got False")
    dims = index.get("dims")
    if dims is not None and (isinstance(dims, bool) or not isinstance(dims, int) or dims < 1):
        raise ValueError(f"index['dims'] must be a positive integer, got {dims!r}")
    return fields or None, dims


def item_conversation(op: PutOp, fields: list[str] | None, created_at: datetime | None,
                      now: datetime) -> tuple[Conversation, dict[str, Any]]:
    """The one-turn conversation that carries a put's item through the write path, and its units' stamp.

    ``fields`` are the store's default index paths. The value is checked first, so a bad one writes nothing.

    Raises:
        ValueError: naming ``value``, ``index``, ``ttl``, ``value["speaker"]`` or ``value["time"]``.
    """
    value = op.value
    if not isinstance(value, Mapping):
        raise ValueError(f"value must be a dict (mapping of field -> JSON value), got {type(value).__name__}")
    try:
        stored = json.loads(json.dumps(dict(value)))
    except (TypeError, ValueError) as err:
        raise ValueError(f"value must be JSON-serialisable: {err}") from None
    index, ttl = check_index(op.index), check_ttl(op.ttl)
    speaker = value.get("speaker", "user")
    if not isinstance(speaker, str) or not speaker.strip():
        raise ValueError(f'value["speaker"] must be a non-empty string, got {speaker!r}')
    try:
        when = parse_timestamp(value["time"]) if value.get("time") else now
    except ValueError as err:
        raise ValueError(f'value["time"]: {err}') from None
    created = (created_at or now).isoformat()
    stamp: dict[str, Any] = {"store_key": op.key, "store_value": stored, "store_created_at": created,
                             "store_updated_at": now.isoformat()}
    texts = indexed_texts(value, index, fields)
    if index is not None:
        stamp["store_index"] = index
    if not texts:  # kept, listed and filtered, never recalled
        stamp.update(store_unindexed=True, **{SUPPRESSED: {"reason": UNINDEXED_REASON, "at": now.isoformat()}})
    if ttl is not None:
        stamp.update(store_ttl=ttl, store_expires_at=expires_after(ttl, now))
    text = "\n".join(texts) if texts and (index is not None or fields is not None) else item_text(value)
    conv = single_turn_conversation(text, speaker=speaker, conversation_id=op.key, session_id="item",
                                    turn_id=f"{op.key}:0", time=when)
    return conv, stamp
