"""The lexical rows of a namespace index: a BM25 index over the restatements, extended when it is used.

A write only appends units; their content words are tokenised the first time a
recall (or a delete) needs the BM25 index, so a writer that never recalls pays
nothing for it (:class:`~langchain_ripplemem.index.bm25.BM25Index`: bm25s's
scores, extended with the units a write added, never rebuilt).

Example:
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance
    >>> units = [MemoryUnit.create(namespace=("maya",), restatement=text,
    ...                            source=Provenance(conversation_id="c", session_id="s"))
    ...          for text in ("Maya hiked Forest Park.", "Sam cooks curry.")]
    >>> lexical = LexicalRows()
    >>> len(lexical), lexical.covering(units, units).rows_of("curri").tolist(), len(lexical)
    (0, [1], 2)
"""

from __future__ import annotations

import threading
from collections.abc import Sequence, Sized

from langchain_ripplemem.index.bm25 import BM25Index, BM25State
from langchain_ripplemem.schemas import MemoryUnit
from langchain_ripplemem.text.lexical import lexical_tokens

__all__ = ["LexicalRows"]


class LexicalRows:
    """A BM25 index covering the first ``len(self)`` rows of a namespace, extended on use.

    Args:
        bm25: the index to start from (default: an empty one).
    """

    def __init__(self, bm25: BM25Index | None = None) -> None:
        self._bm25 = bm25 if bm25 is not None else BM25Index()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """How many rows the BM25 index covers (0: never used)."""
        return len(self._bm25)

    def covering(self, units: Sequence[MemoryUnit], published: Sized) -> BM25Index:
        """The BM25 index, extended with the units published since its last use (only those are tokenised).

        Args:
            units: the namespace's units, row order.
            published: the namespace's ids: its length, read under the lock, is how many
                units are published (units are published before ids: ``units[:n]`` are all there).
        """
        index = self._bm25
        if len(index) < len(published):
            with self._lock:
                n = len(published)
                # A placeholder token for a unit without terms, as the bm25s index had.
                index.extend(lexical_tokens(u.restatement) or ["_"] for u in units[len(index) : n])
        return index

    def subset(self, rows: Sequence[int], units: Sequence[MemoryUnit], published: Sized) -> LexicalRows:
        """The lexical rows of ``rows`` only (a delete), carried over rather than re-tokenised."""
        return LexicalRows(self.covering(units, published).subset(rows))

    def state(self) -> BM25State | None:
        """The BM25 index's state; ``None`` when it was never used (a restore then tokenises on first use)."""
        with self._lock:
            return self._bm25.state() if len(self._bm25) else None

    @classmethod
    def from_state(cls, state: BM25State | None) -> LexicalRows:
        """The lexical rows :meth:`state` described."""
        return cls(BM25Index.from_state(state) if state is not None else None)
