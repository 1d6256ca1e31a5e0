"""Edge scores between memories, exactly as the paper defines them.

* semantic: ``s_sem(i, j) = cos(v_i, v_j)``
* structural (``WriteConfig.linking.structural_edges="paper"``): per cue type ``x`` in
  {P, L, T} a similarity ``u^x`` (Jaccard for participants and locations; 1 when
  time intervals intersect, else ``exp(-gap / tau)``), combined as
  ``sum_x beta_x I_x u^x / sum_x beta_x I_x`` (:data:`BETA_PARTICIPANTS`, :data:`BETA_LOCATIONS`,
  :data:`BETA_TIME`, ``tau`` :data:`TIME_DECAY_DAYS`: the paper's) where ``I_x = 1`` only when *both*
  sides have cue type ``x``. With no comparable cue type there is no structural
  score (``None``, not 0).
* cue overlap (``structural_edges="cues"``, the default): the identifying cues
  two units share, each weighted by its rarity ``w`` in the namespace
  (:func:`~langchain_ripplemem.text.identifying.rarity`), combined as
  ``1 - prod(1 - w)`` (:func:`cue_overlap`). One shared rare name scores near 1;
  shared speakers, common words and the same day score near 0.

Example:
    >>> from langchain_ripplemem.text.cue_scores import jaccard
    >>> jaccard(["Maya", "Sam"], ["maya"])
    0.5

"""

from __future__ import annotations

import math
from collections.abc import Iterable
from functools import lru_cache
from typing import Protocol

from langchain_ripplemem._runtime.text_caches import text_cache
from langchain_ripplemem.config import LinkingConfig
from langchain_ripplemem.schemas import TimeInterval

#: The paper's weights of shared participants, places and time in s_str, and tau of exp(-gap / tau) in days.
BETA_PARTICIPANTS = 0.5
BETA_LOCATIONS = 0.2
BETA_TIME = 0.3
TIME_DECAY_DAYS = 7.0


class HasCues(Protocol):
    """Anything with episodic cues: a MemoryUnit, an ExpansionTarget, QueryCues."""

    participants: list[str]
    locations: list[str]
    time: TimeInterval | None


# Cue sets kept for scoring: about 700 bytes each with the values they keep alive, 6 MB when full.
# The cache is the process's, outside any memory's CacheBounds. At 100,000, and filled by indexing
# too, it grew with every unit a process had seen (0.7 MB a LongMemEval haystack, towards 70 MB);
# recall asks again for a few hundred units' sets.
CUE_SET_CACHE_SIZE = 8192


def normalised_cues(values: Iterable[str]) -> frozenset[str]:
    """Case-insensitive set of canonical cue values (canonicalisation happens at write time), not cached.

    For values seen once, as when a unit is indexed: :func:`cue_set` keeps what it computes.
    """
    return frozenset(v.strip().lower() for v in values if v and v.strip())


def cue_set(values: Iterable[str]) -> frozenset[str]:
    """:func:`normalised_cues`, cached: recall and linking score the same units' cues over and over."""
    return _cue_set(tuple(values))


@text_cache
@lru_cache(maxsize=CUE_SET_CACHE_SIZE)
def _cue_set(values: tuple[str, ...]) -> frozenset[str]:
    return normalised_cues(values)


def cue_set_cache_size() -> int:
    """How many cue sets :func:`cue_set` holds now (``benchmarks/scale/haystack_rss.py`` records it)."""
    return _cue_set.cache_info().currsize


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """Jaccard overlap of two cue sets (0 when either is empty)."""
    sa, sb = cue_set(a), cue_set(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


def cue_overlap(weights: Iterable[float]) -> float:
    """``1 - prod(1 - w)`` over the rarities of the shared cues: 0 for none, near 1 for one rare cue.

    Example:
        >>> round(cue_overlap([0.9]), 2), round(cue_overlap([0.5, 0.5]), 2), cue_overlap([])
        (0.9, 0.75, 0.0)

    """
    missing = 1.0
    for w in weights:
        missing *= 1.0 - min(max(w, 0.0), 1.0)
    return 1.0 - missing


def time_similarity(a: TimeInterval, b: TimeInterval, tau_days: float = 7.0) -> float:
    """1 when the intervals intersect, else ``exp(-gap_days / tau_days)``."""
    if tau_days <= 0:
        raise ValueError(f"tau_days must be positive, got {tau_days}")
    return math.exp(-a.gap_days(b) / tau_days)


def structural_score(a: HasCues, b: HasCues, config: LinkingConfig) -> float | None:
    """``s_str(a, b)`` renormalised over the cue types both sides have; ``None`` if none.

    The betas and tau are the paper's (:data:`BETA_PARTICIPANTS`, ...); ``config``, the
    linking settings, changes none of them today.
    """
    total = weight = 0.0
    if a.participants and b.participants and BETA_PARTICIPANTS > 0:
        total += BETA_PARTICIPANTS * jaccard(a.participants, b.participants)
        weight += BETA_PARTICIPANTS
    if a.locations and b.locations and BETA_LOCATIONS > 0:
        total += BETA_LOCATIONS * jaccard(a.locations, b.locations)
        weight += BETA_LOCATIONS
    if a.time is not None and b.time is not None and BETA_TIME > 0:
        total += BETA_TIME * time_similarity(a.time, b.time, TIME_DECAY_DAYS)
        weight += BETA_TIME
    if weight == 0.0:
        return None
    return total / weight
