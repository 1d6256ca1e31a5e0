"""The units of a namespace view in row order, parsed from their stored JSON only when read.

A view restored from a snapshot (:mod:`langchain_ripplemem.view_snapshot`) holds
its units as the JSON Chroma stores; validating 100k of them into
:class:`~langchain_ripplemem.schemas.MemoryUnit` models took seconds, and a
recall reads a few hundred. :class:`UnitList` parses a row the first time it is
read and keeps the model.

Example:
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance
    >>> unit = MemoryUnit.create(namespace=("maya",), restatement="Maya: hi",
    ...                          source=Provenance(conversation_id="c", session_id="s"))
    >>> blob, offsets = UnitList([unit]).json_rows()
    >>> lazy = UnitList.from_json(blob, offsets)
    >>> len(lazy), lazy.parsed, lazy[0] == unit, lazy.parsed
    (1, 0, True, 1)

"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import overload

import numpy as np

from langchain_ripplemem.schemas import MemoryUnit

__all__ = ["UnitList"]


class UnitList(Sequence[MemoryUnit]):
    """Units by row: models, or JSON rows parsed on first read (thread-safe: a race parses twice, either wins).

    Args:
        units: the first rows, as models.
    """

    def __init__(self, units: Iterable[MemoryUnit] = ()) -> None:
        self._units: list[MemoryUnit | None] = list(units)
        self._blob: bytes | memoryview = b""
        self._offsets = np.zeros(1, dtype=np.int64)

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

    def _row(self, i: int) -> MemoryUnit:
        unit = self._units[i]
        if unit is None:
            start, stop = int(self._offsets[i]), int(self._offsets[i + 1])
            unit = self._units[i] = MemoryUnit.model_validate_json(bytes(self._blob[start:stop]))
        return unit

    @overload
    def __getitem__(self, i: int) -> MemoryUnit: ...

    @overload
    def __getitem__(self, i: slice) -> list[MemoryUnit]: ...

    def __getitem__(self, i: int | slice) -> MemoryUnit | list[MemoryUnit]:
        if isinstance(i, slice):
            return [self._row(j) for j in range(*i.indices(len(self._units)))]
        if i < 0:
            i += len(self._units)
        if not 0 <= i < len(self._units):
            raise IndexError("unit row out of range")
        return self._row(i)

    def __setitem__(self, i: int, unit: MemoryUnit) -> None:
        self._units[i] = unit

    def __iter__(self) -> Iterator[MemoryUnit]:
        return (self._row(i) for i in range(len(self._units)))

    def append(self, unit: MemoryUnit) -> None:
        """Add a row at the end."""
        self._units.append(unit)

    def json_rows(self) -> tuple[bytes, np.ndarray]:
        """``(blob, offsets)`` of every row's JSON: unparsed rows as they came, models serialised."""
        parts: list[bytes] = []
        lengths = np.zeros(len(self._units) + 1, dtype=np.int64)
        for i, unit in enumerate(self._units):
            if unit is None:
                part = bytes(self._blob[int(self._offsets[i]) : int(self._offsets[i + 1])])
            else:
                part = unit.model_dump_json().encode()
            parts.append(part)
            lengths[i + 1] = len(part)
        return b"".join(parts), np.cumsum(lengths)

