"""Bounds on the per-namespace state one memory object keeps in memory, least recently used out first.

A memory object caches, per namespace it has served, a namespace index (matrix, BM25
and cue indexes, the units) and a NetworkX graph. With many users that grows
without end, so both caches hold at most :attr:`CacheBounds.max_namespaces`
namespaces and :attr:`CacheBounds.max_bytes` of resident memory, estimated
from what each holds (half for indexes, half for edges: an index and the edges of
the same namespace weigh about the same, ~5 KB per memory each with 384-d
vectors and ~7 edges per memory). Past a bound the least recently used
namespace leaves; its next use loads it again from storage. The namespace in
use is never evicted, even alone above the byte bound.

Example:
    >>> cache = LRUCache(max_items=2, max_bytes=100, size=len)
    >>> cache.put("a", "xx"); cache.put("b", "yy"); _ = cache.get("a"); cache.put("c", "zz")
    >>> sorted(cache.keys())  # "b" was the least recently used
    ['a', 'c']
    >>> cache.put("d", "x" * 500)  # over the byte bound: everything else leaves
    >>> sorted(cache.keys())
    ['d']

"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from langchain_ripplemem._runtime import heap, text_caches

__all__ = [
    "EDGES_BYTES_FIXED", "EDGES_BYTES_PER_EDGE", "EDGES_BYTES_PER_NODE", "RESIDENT_PER_BYTE", "INDEX_BYTES_FIXED",
    "INDEX_BYTES_PER_CHAR", "INDEX_BYTES_PER_UNIT", "WALK_BYTES_PER_EDGE", "WALK_BYTES_PER_NODE", "CacheBounds",
    "LRUCache", "clear_text_caches",
]

V = TypeVar("V")
_GIB = 1024**3
# What a cached namespace holds, measured with tracemalloc as the bytes freed when it leaves
# (tests/unit_tests/test_cache_bounds.py checks the estimates against that on real indexes and
# edges). An index: the vector matrix exactly, plus per memory its unit object, id, cue and
# BM25 postings and context caches (a base amount and an amount per character of its text),
# plus what an empty index holds. The edges: per node and per edge (NetworkX's adjacency dicts
# and the edge's types mapping), the edges counted as they are added.
INDEX_BYTES_FIXED = 30_000
INDEX_BYTES_PER_UNIT = 3_800
INDEX_BYTES_PER_CHAR = 2
EDGES_BYTES_FIXED = 2_000
EDGES_BYTES_PER_NODE = 220
EDGES_BYTES_PER_EDGE = 610
# The edges recall walks (edges/adjacency.py) hold each node's edges as one flat tuple:
# per node read, its slot; per edge entry (an edge is held by each end read), the neighbour's id,
# the weight and three tuple slots.
WALK_BYTES_PER_NODE = 40
WALK_BYTES_PER_EDGE = 165
# Resident memory per estimated byte. Python's allocator keeps the blocks of evicted namespaces in
# its arenas for reuse, so caches that churn hold more RSS than their live objects: RSS grew 1.27x
# to 1.34x the estimates as 2,000 namespaces x 50 memories passed through 64 MiB and 256 MiB bounds
# (docs/scale.md). max_bytes bounds resident memory, so the estimates are held to max_bytes / this.
RESIDENT_PER_BYTE = 1.4


@dataclass(frozen=True)
class CacheBounds:
    """How many namespaces, and how many bytes (estimated), a memory object keeps cached.

    Args:
        max_namespaces: namespaces whose index (and edges) stay loaded.
        max_bytes: estimated bytes of the loaded indexes and edges together.

    Raises:
        ValueError: naming ``max_namespaces`` or ``max_bytes`` when below 1.
    """

    max_namespaces: int = 1000
    max_bytes: int = 2 * _GIB

    def __post_init__(self) -> None:
        for name in ("max_namespaces", "max_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")

    @property
    def estimated_bytes(self) -> int:
        """The estimated bytes of indexes and edges that take :attr:`max_bytes` of resident memory."""
        return int(self.max_bytes / RESIDENT_PER_BYTE)

    @property
    def index_bytes(self) -> int:
        """The share of :attr:`estimated_bytes` for namespace indexes."""
        return self.estimated_bytes // 2

    @property
    def edge_bytes(self) -> int:
        """The share of :attr:`estimated_bytes` for edges."""
        return self.estimated_bytes - self.index_bytes


class LRUCache(Generic[V]):
    """Values by key, the least recently used evicted past ``max_items`` or ``max_bytes``.

    ``size(value)`` estimates a value's bytes; it is asked again whenever the value is
    used, since cached namespaces grow. Thread-safe.
    """

    def __init__(self, max_items: int, max_bytes: int, size: Callable[[V], int],
                 on_evict: Callable[[str, V], object] | None = None) -> None:
        self.max_items, self.max_bytes, self._size = max_items, max_bytes, size
        self._on_evict = on_evict  # told of each value evicted past a bound (not of pops)
        self._items: OrderedDict[str, V] = OrderedDict()
        self._bytes: dict[str, int] = {}
        self._total = 0  # sum of self._bytes
        self._lock = threading.RLock()

    def __len__(self) -> int:
        return len(self._items)

    def keys(self) -> list[str]:
        """The cached keys, least recently used first."""
        with self._lock:
            return list(self._items)

    @property
    def nbytes(self) -> int:
        """The estimated bytes of every cached value (as of its last use)."""
        return self._total

    def peek(self, key: str) -> V | None:
        """The value, without counting as a use."""
        return self._items.get(key)

    def get(self, key: str) -> V | None:
        """The value (now the most recently used), or ``None``."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
                self._resize(key, value)
                self._evict(keep=key)
            return value

    def put(self, key: str, value: V) -> None:
        """Cache ``value`` as the most recently used, evicting past the bounds."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            self._resize(key, value)
            self._evict(keep=key)

    def pop(self, key: str) -> V | None:
        """Forget ``key``; its value, if it was cached."""
        with self._lock:
            self._total -= self._bytes.pop(key, 0)
            return self._items.pop(key, None)

    def _resize(self, key: str, value: V) -> None:
        size = self._size(value)
        self._total += size - self._bytes.get(key, 0)
        self._bytes[key] = size

    def _evict(self, keep: str) -> None:
        while len(self._items) > 1 and (len(self._items) > self.max_items or self._total > self.max_bytes):
            oldest = next(iter(self._items))
            if oldest == keep:  # never the value in use
                self._items.move_to_end(oldest)
                oldest = next(iter(self._items))
                if oldest == keep:
                    return
            heap.freed(self._bytes.get(oldest, 0))  # resident memory falls only if freed pages go back
            value = self.pop(oldest)
            if self._on_evict is not None and value is not None:
                self._on_evict(oldest, value)


def clear_text_caches() -> None:
    """Empty the process-wide memo caches of text work: stems, languages, token sets, cue sets, stated facts.

    They belong to no namespace, so no :class:`CacheBounds` covers them. Bounded (50,000
    stems, 8,192 cue sets, 256 texts' token sets, 4,096 texts' facts), the stems and cue
    sets hold about 18 MB when full (``tests/unit_tests/test_cache_bounds.py``). A benchmark
    that builds hundreds of memories one after another clears them between memories, so
    every build starts alike.

    Example:
        >>> from langchain_ripplemem.text.lexical import stem
        >>> _ = stem("running"); clear_text_caches(); stem.cache_info().currsize
        0

    """
    text_caches.clear()  # each cache registered itself where it is defined (_runtime/text_caches.py)
