"""The units of a namespace index in row order, parsed from their stored JSON only when read.

An index restored from a snapshot (:mod:`langchain_ripplemem.index.snapshot`) holds
its units as the JSON Chroma stores; validating 100k of them into
:class:`~langchain_ripplemem.schemas.MemoryUnit` models took seconds, and a
recall reads a few hundred. :class:`UnitList` parses a row the first time it is
read and keeps the model.

Rows appended as models keep their JSON too, and a list keeps at most
``PARSED_KEPT`` parsed models (the last parsed or appended; older ones are parsed
again when read). A model brings about 14 objects the garbage collector tracks
(its lists, dicts, field sets and nested models), and each full collection walks
every tracked object of the process: a writer holding 50k models paid 0.6 s per
full collection (docs/scale.md, "Ingest"); JSON bytes are not tracked.

Example:
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance
    >>> unit = MemoryUnit.create(namespace=("maya",), restatement="Maya: hi",
    ...                          source=Provenance(conversation_id="c", session_id="s"))
    >>> blob, offsets = UnitList([unit]).json_rows()
    >>> lazy = UnitList.from_json(blob, offsets)
    >>> len(lazy), lazy.parsed, lazy[0] == unit, lazy.parsed
    (1, 0, True, 1)
    >>> many = UnitList([unit] * (PARSED_KEPT + 5))
    >>> many.parsed == PARSED_KEPT, many[0] == unit, many.parsed == PARSED_KEPT
    (True, True, True)

"""

from __future__ import annotations

import threading
import weakref
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import overload

import numpy as np

from langchain_ripplemem.index.pinned_rows import row_of
from langchain_ripplemem.schemas import MemoryUnit

__all__ = ["PARSED_KEPT", "UnitList", "UnitPrefix"]

# Parsed models a list keeps (the rest stay JSON until read; see the module docs).
PARSED_KEPT = 4096


class UnitList(Sequence[MemoryUnit]):
    """Units by row, held as JSON and parsed on read, at most ``PARSED_KEPT`` models kept.

    Thread-safe: a race parses a row twice, and either model is right.

    Args:
        units: the first rows, as models.
    """

    def __init__(self, units: Iterable[MemoryUnit] = ()) -> None:
        self._units: list[MemoryUnit | None] = []
        self._blob: bytes | memoryview = b""
        self._offsets = np.zeros(1, dtype=np.int64)
        self._json: list[bytes] = []  # rows past the blob's
        self._rewritten: dict[int, bytes] = {}  # rows of the blob rewritten since
        self._kept: deque[int] = deque()  # rows parsed or appended, oldest first
        self._holding = 0  # open holding() blocks: nothing parsed is let go
        self._lock = threading.Lock()
        self._prefixes: list[weakref.ref[UnitPrefix]] = []  # prefixes still read: a rewrite keeps their rows
        for unit in units:
            self.append(unit)

    @classmethod
    def from_json(cls, blob: bytes | memoryview, offsets: np.ndarray) -> UnitList:
        """Rows ``i`` = ``blob[offsets[i]:offsets[i + 1]]``, each a unit's JSON (parsed when read)."""
        out = cls()
        out._blob, out._offsets = blob, np.asarray(offsets, dtype=np.int64)
        out._units = [None] * (len(out._offsets) - 1)
        return out

    @property
    def parsed(self) -> int:
        """Rows held as models (parsed or given)."""
        return sum(u is not None for u in self._units)

    def __len__(self) -> int:
        return len(self._units)

    def json(self, i: int) -> bytes:
        """Row ``i``'s JSON as held (no model is parsed or kept)."""
        if not 0 <= i < len(self._units):
            raise IndexError("unit row out of range")
        return self._source(i)

    def _source(self, i: int) -> bytes:
        base = len(self._offsets) - 1
        if i >= base:
            return self._json[i - base]
        rewritten = self._rewritten.get(i)
        if rewritten is not None:
            return rewritten
        return bytes(self._blob[int(self._offsets[i]) : int(self._offsets[i + 1])])

    def _keep(self, i: int, unit: MemoryUnit) -> None:
        with self._lock:
            self._units[i] = unit
            self._kept.append(i)
            if not self._holding:
                self._trim()

    def _trim(self) -> None:
        while len(self._kept) > PARSED_KEPT:
            self._units[self._kept.popleft()] = None  # every row has its JSON: parsed again when read

    @contextmanager
    def holding(self) -> Iterator[None]:
        """Keep every row parsed or appended inside the block; past it, the last ``PARSED_KEPT`` again.

        For passes over every row that follow each other (an index loaded whole, then
        what recall derives from all its units): each row is parsed once, not once a pass.

        Example:
            >>> from langchain_ripplemem.schemas import Provenance
            >>> unit = MemoryUnit.create(namespace=("d",), restatement="Hi.", source=Provenance(
            ...     conversation_id="c", session_id="s"))
            >>> units = UnitList()
            >>> with units.holding():
            ...     for _ in range(PARSED_KEPT + 2):
            ...         units.append(unit)
            ...     held = units.parsed
            >>> held - PARSED_KEPT, units.parsed - PARSED_KEPT
            (2, 0)
        """
        with self._lock:
            self._holding += 1
        try:
            yield
        finally:
            with self._lock:
                self._holding -= 1
                if not self._holding:
                    self._trim()

    def _row(self, i: int) -> MemoryUnit:
        unit = self._units[i]
        if unit is None:
            unit = MemoryUnit.model_validate_json(self._source(i))
            self._keep(i, unit)
        return unit

    @overload
    def __getitem__(self, i: int) -> MemoryUnit: ...

    @overload
    def __getitem__(self, i: slice) -> list[MemoryUnit]: ...

    def __getitem__(self, i: int | slice) -> MemoryUnit | list[MemoryUnit]:
        if isinstance(i, slice):
            return [self._row(j) for j in range(*i.indices(len(self._units)))]
        return self._row(row_of(i, len(self._units)))

    def take(self, rows: Iterable[int]) -> list[MemoryUnit]:
        """The units of ``rows`` (non-negative), as ``[self[i] for i in rows]`` gives them, in one pass.

        Example:
            >>> from langchain_ripplemem.schemas import Provenance
            >>> units = UnitList([MemoryUnit.create(namespace=("d",), restatement=text, source=Provenance(
            ...     conversation_id="c", session_id="s", turn_ids=["1"])) for text in ("One.", "Two.")])
            >>> [unit.restatement for unit in units.take([1, 0])]
            ['Two.', 'One.']
        """
        units, parse = self._units, self._row
        return [unit if (unit := units[i]) is not None else parse(i) for i in rows]

    def __setitem__(self, i: int, unit: MemoryUnit) -> None:
        data, base = unit.model_dump_json().encode(), len(self._offsets) - 1
        with self._lock:
            # The row as it was goes to every prefix still read (UnitPrefix) before it changes.
            for prefix in self._live_prefixes():
                if i < len(prefix) and i not in prefix.before:
                    prefix.before[i] = self._source(i)
            if i >= base:
                self._json[i - base] = data
            else:
                self._rewritten[i] = data
        self._keep(i, unit)

    def _live_prefixes(self) -> list[UnitPrefix]:
        alive = [p for ref in self._prefixes if (p := ref()) is not None]
        if len(alive) < len(self._prefixes):
            self._prefixes = [weakref.ref(p) for p in alive]
        return alive

    def prefix(self, n: int) -> UnitPrefix:
        """The first ``n`` rows as they are now: rows rewritten later still read as now (:class:`UnitPrefix`)."""
        prefix = UnitPrefix(self, n)
        with self._lock:
            self._live_prefixes()
            self._prefixes.append(weakref.ref(prefix))
        return prefix

    def __iter__(self) -> Iterator[MemoryUnit]:
        return (self._row(i) for i in range(len(self._units)))

    def append(self, unit: MemoryUnit, data: bytes | None = None) -> None:
        """Add a row at the end; ``data``: its JSON when at hand (else it is serialised).

        The JSON goes first: a reader that sees the row can always parse it.
        """
        self._json.append(data if data is not None else unit.model_dump_json().encode())
        self._units.append(None)
        self._keep(len(self._units) - 1, unit)

    def json_rows(self) -> tuple[bytes, np.ndarray]:
        """``(blob, offsets)`` of every row's JSON, as held."""
        parts = [self._source(i) for i in range(len(self._units))]
        lengths = np.zeros(len(parts) + 1, dtype=np.int64)
        lengths[1:] = [len(part) for part in parts]
        return b"".join(parts), np.cumsum(lengths)


class UnitPrefix(Sequence[MemoryUnit]):
    """The first ``n`` rows of a :class:`UnitList` as they were when it was made (:meth:`UnitList.prefix`).

    Rows appended later are not in it; a row rewritten later (new metadata) reads as
    it was: the list hands the prefix the row's earlier JSON before it changes it.

    Example:
        >>> from langchain_ripplemem.schemas import Provenance
        >>> unit = MemoryUnit.create(namespace=("d",), restatement="Hi.", source=Provenance(
        ...     conversation_id="c", session_id="s"))
        >>> units = UnitList([unit])
        >>> prefix = units.prefix(1)
        >>> units[0] = unit.model_copy(update={"metadata": {"suppressed": {"reason": "wrong"}}})
        >>> units.append(unit)
        >>> len(prefix), prefix[0].metadata, len(units), units[0].metadata["suppressed"]["reason"]
        (1, {}, 2, 'wrong')
    """

    def __init__(self, units: UnitList, n: int) -> None:
        self._units, self._n = units, n
        self.before: dict[int, bytes] = {}  # row -> its JSON when the prefix was made (rows rewritten since)
        self._parsed: dict[int, MemoryUnit] = {}  # those rows, parsed

    def __len__(self) -> int:
        return self._n

    def _earlier(self, i: int) -> MemoryUnit:
        unit = self._parsed.get(i)
        if unit is None:
            unit = self._parsed[i] = MemoryUnit.model_validate_json(self.before[i])
        return unit

    def _row(self, i: int) -> MemoryUnit:
        unit = self._units._row(i)
        # Asked after the read: a rewrite hands the earlier row over before it changes the row.
        return self._earlier(i) if i in self.before else unit

    @overload
    def __getitem__(self, i: int) -> MemoryUnit: ...

    @overload
    def __getitem__(self, i: slice) -> list[MemoryUnit]: ...

    def __getitem__(self, i: int | slice) -> MemoryUnit | list[MemoryUnit]:
        if isinstance(i, slice):
            return self.take(range(*i.indices(self._n)))
        return self._row(row_of(i, self._n))

    def take(self, rows: Iterable[int]) -> list[MemoryUnit]:
        """The units of ``rows`` (non-negative, below ``len(self)``), as :meth:`UnitList.take` gives them."""
        rows = list(rows)
        units = self._units.take(rows)
        if self.before:  # asked after the reads, as in _row
            units = [self._earlier(i) if i in self.before else unit for i, unit in zip(rows, units, strict=True)]
        return units

    def __iter__(self) -> Iterator[MemoryUnit]:
        return (self._row(i) for i in range(self._n))

    def json(self, i: int) -> bytes:
        """Row ``i``'s JSON as it was when the prefix was made."""
        if not 0 <= i < self._n:
            raise IndexError("unit row out of range")
        data = self._units.json(i)
        return self.before.get(i, data)

    def holding(self) -> AbstractContextManager[None]:
        """:meth:`UnitList.holding` of the list."""
        return self._units.holding()
