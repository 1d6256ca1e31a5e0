"""What agreeing with the query's speaker and time cues adds to a memory's rho: one memory, or many rows at once.

Assembly scores every memory in the evidence (a hundred and more per recall);
:func:`cue_bonuses` reads each row's speaker and time from arrays kept with the
index instead of each unit's fields, with the same floating-point operations as
:func:`cue_bonus`, so the two agree exactly.

Example:
    >>> from datetime import datetime, timezone
    >>> import numpy as np
    >>> from langchain_ripplemem.config import ScoringConfig
    >>> from langchain_ripplemem.index.namespace_index import NamespaceIndex
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance, QueryCues, TimeInterval
    >>> def day(d):
    ...     start = datetime(2026, 3, d, tzinfo=timezone.utc)
    ...     return TimeInterval(start=start, end=start.replace(hour=23))
    >>> units = [MemoryUnit.create(namespace=("demo",), restatement=t, time=day(d), metadata={"speaker": s},
    ...                            source=Provenance(conversation_id="c", session_id="s", turn_ids=[t]))
    ...          for t, d, s in [("a", 2, "Maya"), ("b", 9, "Sam")]]
    >>> index = NamespaceIndex(("demo",))
    >>> index.add(units, np.eye(2, dtype=np.float32))
    >>> cues, config = QueryCues(query="q", participants=["maya"], time=day(2)), ScoringConfig()
    >>> bonuses = cue_bonuses(index, np.array([0, 1]), cues, config).tolist()
    >>> bonuses == [cue_bonus(u, cues, config) for u in units]
    True
"""

from __future__ import annotations

import math

import numpy as np

from langchain_ripplemem.config import ScoringConfig
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.index.sessions import per_index
from langchain_ripplemem.recall.bridging import epoch_micros, row_times
from langchain_ripplemem.schemas import DAY_SECONDS, MemoryUnit, QueryCues
from langchain_ripplemem.text.cue_scores import time_similarity

__all__ = ["cue_bonus", "cue_bonuses", "row_speakers", "speaker_of"]

# time_similarity's default decay, which cue_bonus uses.
_TAU_DAYS = 7.0


def cue_bonus(unit: MemoryUnit, cues: QueryCues, config: ScoringConfig) -> float:
    """What agreeing with the query's speaker and time cues adds to rho (0 with the paper's weights)."""
    bonus = 0.0
    if config.speaker_bonus and cues.participants and speaker_of(unit) in cues.participants:
        bonus += config.speaker_bonus
    if config.time_bonus and cues.time is not None and unit.time is not None:
        bonus += config.time_bonus * time_similarity(cues.time, unit.time)
    return bonus


def cue_bonuses(index: NamespaceIndex, rows: np.ndarray, cues: QueryCues, config: ScoringConfig) -> np.ndarray:
    """:func:`cue_bonus` of the units at ``rows`` of ``index`` (``float64``), bit for bit."""
    bonus = np.zeros(len(rows), dtype=np.float64)
    if config.speaker_bonus and cues.participants:
        said, participants = row_speakers(index), cues.participants
        speaks = np.fromiter((said[row] in participants for row in rows.tolist()), dtype=bool, count=len(rows))
        bonus[speaks] += config.speaker_bonus
    if config.time_bonus and cues.time is not None:
        times = row_times(index)
        timed = times.timed[rows]
        start, end = times.start[rows][timed], times.end[rows][timed]
        q_start, q_end = epoch_micros(cues.time.start), epoch_micros(cues.time.end)
        # TimeInterval.gap_days: 0 when the intervals share an instant, else later start - earlier end.
        apart = ~((q_start <= end) & (start <= q_end))
        gap = np.where(start > q_end, start - q_end, q_start - end)
        days = np.where(apart, gap / 10**6 / DAY_SECONDS, 0.0)  # timedelta.total_seconds(), then days
        similarity = np.fromiter((math.exp(-d / _TAU_DAYS) for d in days.tolist()), dtype=np.float64,
                                 count=len(days))
        bonus[timed] += config.time_bonus * similarity
    return bonus


def row_speakers(index: NamespaceIndex) -> list[str | None]:
    """Per row, its unit's lower-cased speaker (``None``: none recorded), kept with the index."""
    return per_index(index, "row_speakers", lambda v, n: _row_speakers(v, 0, n),
                    lambda v, known, before, n: known + _row_speakers(v, before, n))


def _row_speakers(index: NamespaceIndex, start: int, stop: int) -> list[str | None]:
    return [speaker_of(unit) for unit in index.units[start:stop]]


def speaker_of(unit: MemoryUnit) -> str | None:
    """The lower-cased speaker of a unit (rule-based units record it), else ``None``."""
    speaker = unit.metadata.get("speaker")
    return speaker.lower() if isinstance(speaker, str) and speaker else None
