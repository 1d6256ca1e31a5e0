"""Incremental BM25 whose scores are bit-identical to ``bm25s.BM25`` built over the same documents.

``bm25s`` precomputes one score per (document, term) and must be rebuilt from
scratch when a document arrives, because the collection size ``N`` and the mean
length ``l_avg`` change every precomputed score. This index keeps what does
not change, per term the rows and term frequencies that contain it and per row
its length, and computes a query's scores from the postings of the query's
terms only. A write appends postings; nothing is re-tokenised or re-indexed.

Scores follow ``bm25s`` 0.3's default ("lucene") operation by operation, in
the same floating-point types, so they are equal bit for bit (a property test
checks that against ``bm25s`` itself):

    idf(t)    = float32(log(1 + (N - df + 0.5) / (df + 0.5)))
    s(d, t)   = float32(idf(t) * tf / (k1 * ((1 - b) + b * len(d) / l_avg) + tf))
    score(d)  = sum over the query's terms, in query order and with repeats, in float32

Example:
    >>> index = BM25Index()
    >>> index.extend([["maya", "allergi"], ["sam", "oyster"], ["maya", "hike"]])
    >>> [round(float(s), 4) for s in index.scores(["maya", "hike"])]
    [0.188, 0.0, 0.5803]
    >>> index.extend([["hike", "portland"]])
    >>> int(index.scores(["portland"]).argmax()), len(index)
    (3, 4)

"""

from __future__ import annotations

import math
import threading
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["BM25Index", "BM25State", "top_k"]

K1, B = 1.5, 0.75  # bm25s.BM25() defaults
# bm25s adds a numpy float64 scalar to a float32 array: NumPy 2 keeps float64 (NEP 50),
# NumPy 1 computed in float32. The denominator is cast to what this NumPy does.
_SCALAR_PLUS_F32 = (np.float64(1.0) + np.ones(1, dtype=np.float32)).dtype
# Row scores an index keeps between calls, over all terms (about 12 bytes each), until it grows.
_TERM_ROWS_KEPT = 1_000_000
#: What :meth:`BM25Index.state` returns: per term its rows and term frequencies, each row's length, their sum.
BM25State = tuple[dict[str, "array[int]"], dict[str, "array[float]"], "array[int]", int]


class BM25Index:
    """Postings ``term -> (rows, term frequencies)`` and row lengths of a growing document list.

    Documents are token lists (an empty one should be given a placeholder token, as
    ``bm25s`` needs one). Rows are appended in order; :meth:`subset` makes the index of
    a subset of rows (a delete) without re-tokenising. Thread-safe: one lock guards
    appends and scoring, which only reads the postings of the query's terms.
    """

    def __init__(self) -> None:
        self._rows: dict[str, array[int]] = {}
        self._tfs: dict[str, array[float]] = {}
        self._lengths: array[int] = array("q")
        self._total = 0
        self._lock = threading.Lock()
        # Each term's (rows, scores) at the current row count: a recall scores the same few terms
        # several times (its query, then expansion targets made of the query's words).
        self._term_cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._term_cache_rows = self._term_cache_size = 0

    def __len__(self) -> int:
        return len(self._lengths)

    def extend(self, documents: Iterable[Sequence[str]]) -> None:
        """Append documents (token lists) as the next rows."""
        with self._lock:
            row = len(self._lengths)
            for tokens in documents:
                for term, tf in Counter(tokens).items():
                    rows = self._rows.get(term)
                    if rows is None:
                        rows = self._rows[term] = array("q")
                        self._tfs[term] = array("f")
                    rows.append(row)
                    self._tfs[term].append(tf)
                self._lengths.append(len(tokens))
                self._total += len(tokens)
                row += 1

    def scores(self, query: Sequence[str], upto: int | None = None) -> np.ndarray:
        """``float32`` BM25 score of every row for the query's tokens (0 for rows without any).

        ``upto``: score as the index of its first ``upto`` rows only (``N``, ``l_avg`` and each
        term's ``df`` of those rows): a reader's view of a namespace that writers grew since.

        Example:
            >>> index = BM25Index()
            >>> index.extend([["maya", "hike"], ["sam", "oyster"]])
            >>> before = index.scores(["maya"])
            >>> index.extend([["maya", "portland"]])
            >>> bool((index.scores(["maya"], upto=2) == before).all()), len(index.scores(["maya"]))
            (True, 3)
        """
        with self._lock:
            held = len(self._lengths)
            n = held if upto is None else min(upto, held)
            out = np.zeros(n, dtype=np.float32)
            if n == 0:
                return out
            lengths = np.frombuffer(self._lengths, dtype=np.int64)
            total = self._total if n == held else int(lengths[:n].sum())
            l_avg = np.float64(total) / n  # == np.mean(lengths), as bm25s computes it
            if self._term_cache_rows != n:
                self._term_cache, self._term_cache_rows, self._term_cache_size = {}, n, 0
            contributions = self._term_cache
            for term in query:
                if term not in self._rows:
                    continue
                if term not in contributions:
                    if self._term_cache_size + len(self._rows[term]) > _TERM_ROWS_KEPT:
                        contributions.clear()
                        self._term_cache_size = 0
                    contributions[term] = self._term_scores(term, n, lengths, l_avg)
                    self._term_cache_size += len(self._rows[term])
                rows, values = contributions[term]
                out[rows] += values  # rows are distinct within a term, as in bm25s's np.add.at
            return out

    def _term_scores(self, term: str, n: int, lengths: np.ndarray, l_avg: np.float64) -> tuple[np.ndarray, np.ndarray]:
        rows = np.frombuffer(self._rows[term], dtype=np.int64)
        tf = np.frombuffer(self._tfs[term], dtype=np.float32)
        if n < len(self._lengths):  # rows only grow, in order: the first n rows' postings are a prefix
            cut = int(np.searchsorted(rows, n))
            rows, tf = rows[:cut], tf[:cut]
        df = len(rows)
        idf = np.float32(math.log(1 + (n - df + 0.5) / (df + 0.5)))
        norm = (K1 * ((1 - B) + B * lengths[rows] / l_avg)).astype(_SCALAR_PLUS_F32)
        values = (idf * (tf / (norm + tf))).astype(np.float32)
        return rows.copy(), values

    def lengths(self) -> np.ndarray:
        """Each row's number of terms (a copy: rows appended later do not change it)."""
        with self._lock:
            return np.frombuffer(self._lengths, dtype=np.int64).copy()

    def rows_of(self, term: str) -> np.ndarray:
        """The rows whose document holds ``term``, increasing (empty if none)."""
        with self._lock:
            rows = self._rows.get(term)
            return np.frombuffer(rows, dtype=np.int64).copy() if rows is not None else np.zeros(0, dtype=np.int64)

    def state(self) -> BM25State:
        """The postings, row lengths and total length, as plain containers (a snapshot pickles them)."""
        with self._lock:
            return dict(self._rows), dict(self._tfs), self._lengths, self._total

    @classmethod
    def from_state(cls, state: BM25State) -> BM25Index:
        """The index :meth:`state` described (its term cache starts empty)."""
        index = cls()
        index._rows, index._tfs, index._lengths, index._total = state
        return index

    def subset(self, keep: Sequence[int]) -> BM25Index:
        """The index of rows ``keep`` (increasing), renumbered ``0..len(keep)-1``: a delete, no re-tokenising."""
        keep_rows = np.asarray(keep, dtype=np.int64)
        out = BM25Index()
        with self._lock:
            renumber = np.full(len(self._lengths), -1, dtype=np.int64)
            renumber[keep_rows] = np.arange(len(keep_rows))
            for term, rows in self._rows.items():
                new_rows = renumber[np.frombuffer(rows, dtype=np.int64)]
                kept = new_rows >= 0
                if kept.any():
                    out._rows[term] = array("q", new_rows[kept].tobytes())
                    out._tfs[term] = array("f", np.frombuffer(self._tfs[term], dtype=np.float32)[kept].tobytes())
            lengths = np.frombuffer(self._lengths, dtype=np.int64)[keep_rows]
        out._lengths = array("q", lengths.tobytes())
        out._total = int(lengths.sum())
        return out


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, scores)`` of the ``k`` best positive scores, best first; equal scores: the earlier row first.

    A query's terms are usually in a few rows, so most scores are 0, and ``bm25s``'s
    selection (``np.argpartition(scores, -k)``) is slow on an array of mostly equal
    values: 6.3 ms against 0.3 ms over 50,000 rows of which 5 % score. Only rows that
    score are selected here (rows scoring 0 share no term with the query). Where no
    two of the selected scores are equal this is ``bm25s.BM25.retrieve``'s answer; its
    order among equal scores is arbitrary, this one is row order.

    Example:
        >>> rows, values = top_k(np.array([0.0, 2.0, 0.5, 2.0, 0.0], dtype=np.float32), 2)
        >>> rows.tolist(), values.tolist()
        ([1, 3], [2.0, 2.0])
    """
    rows = np.flatnonzero(scores > 0)
    if k <= 0:
        rows = rows[:0]
    elif len(rows) > k:
        values = scores[rows]
        kth = values[np.argpartition(-values, k - 1)[:k]].min()  # fast on equal values, unlike the other side
        above = rows[values > kth]
        rows = np.concatenate([above, rows[values == kth][: k - len(above)]])
    values = scores[rows]
    order = np.lexsort((rows, -values))
    return rows[order], values[order]
