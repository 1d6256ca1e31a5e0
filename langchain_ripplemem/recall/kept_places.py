"""Kept places: the rule that recollection adds to what plain top-k finds, never takes away.

Dialogue context, speaker and time bonuses and bridges move memories up on what their
neighbours, speakers or anchors have; together they can push down a memory that
matches the question strongly on its own. A kept memory is given a deadline, a rank
it must be returned at or above, and :func:`keep_first_hop` fills every other place
in recollection's order (docs/architecture.md, "The rule: recollection adds to what
plain top-k finds"). What is kept: the question's plain dense and BM25 top matches
(:data:`KEEP_FIRST_HOP`, :data:`KEEP_LEXICAL`, both off) and a set question's speakers' own
matches (:mod:`~langchain_ripplemem.recall.set_questions`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.recall.evidence import FoundHit, recalled_memory
from langchain_ripplemem.schemas import HitSource, MemoryUnit, RecalledMemory

__all__ = ["KEEP_FIRST_HOP", "KEEP_LEXICAL", "KEEP_LEXICAL_SPACING", "KEEP_SPACING", "FirstHopRank", "KeptMatches",
           "check_spacings", "first_hop_ranks", "keep_first_hop", "plain_memory"]

#: The memory ranked d-th (d <= this) by plain dense cosine of the question as asked keeps rank
#: floor(KEEP_SPACING x d) or better; 0 = off. Off (issue 35): every setting measured that closes the
#: set-question gap to dense cost LoCoMo @10 (top 10 within 3d: 0.723, below the 0.73 floor; within 1.5d about
#: 7 points, and 10 to 30 on the linked suites; variants ``rm_d*``, docs/benchmarks.md, "Set questions").
KEEP_FIRST_HOP = 0
KEEP_SPACING = 3.0
#: The same for plain BM25 (score > 0) of recall's lexical text; off for the same measurements (``rm_k*``).
KEEP_LEXICAL = 0
KEEP_LEXICAL_SPACING = 3.0

#: A kept first-hop memory: (recall view, 0-based rank in it, its own score, the rank it must be returned at or above).
FirstHopRank = tuple[HitSource, int, float, int]

#: Further dense matches a question keeps: (how many, their spacing, the matches best first with their scores).
KeptMatches = tuple[int, float, Sequence[tuple[str, float]]]


def check_spacings(kept: Sequence[tuple[str, int, float]]) -> None:
    """Refuse kinds of kept places whose deadlines cannot all be met: ``(name, how many, spacing)`` each.

    The d-th of a kind with spacing s is due by rank floor(s x d), so at most D / s of its
    places are due by any rank D, and the earliest-deadline order meets them all exactly when
    the shares 1/s of the kinds that are on add up to at most 1.

    Example:
        >>> check_spacings([("own", 15, 2.0), ("dense", 10, 1.5)])
        Traceback (most recent call last):
        ...
        ValueError: 1/own (2.0) + 1/dense (1.5) must be at most 1: the kept places would not all fit
    """
    on = [(name, spacing) for name, n, spacing in kept if n]
    if sum(1 / spacing for _, spacing in on) > 1 + 1e-9:
        named = " + ".join(f"1/{name} ({spacing})" for name, spacing in on)
        raise ValueError(f"{named} must be at most 1: the kept places would not all fit")


def first_hop_ranks(index: NamespaceIndex, vector: np.ndarray, lexical_text: str,
                    hidden: set[str], kept: Sequence[KeptMatches] = ()) -> dict[str, FirstHopRank]:
    """The memories the first hop keeps: plain dense top :data:`KEEP_FIRST_HOP`, plain BM25 top :data:`KEEP_LEXICAL`.

    The rankings of ``RippleMem.search`` (``index.semantic``, ``index.lexical``; BM25
    scores above 0): the question's own match, before dialogue context, cue bonuses
    and bridges; and each of ``kept``, further dense matches the question keeps (a set
    question's named speakers' own matches,
    :func:`~langchain_ripplemem.recall.set_questions.own_matches`).
    The memory ranked ``d``-th (from 1) must come at rank ``floor(spacing x d)`` or
    better (the tightest of its deadlines).
    """
    out: dict[str, FirstHopRank] = {}
    extra = len(hidden)
    check_spacings([("KEEP_SPACING", KEEP_FIRST_HOP, KEEP_SPACING), ("KEEP_LEXICAL_SPACING", KEEP_LEXICAL,
                    KEEP_LEXICAL_SPACING), *((f"kept spacing {i}", n, sp) for i, (n, sp, _) in enumerate(kept))])
    ranked: list[tuple[HitSource, int, float, Sequence[tuple[str, float]]]] = [
        ("semantic", KEEP_FIRST_HOP, KEEP_SPACING,
         index.semantic(vector, KEEP_FIRST_HOP + extra) if KEEP_FIRST_HOP else []),
        ("lexical", KEEP_LEXICAL, KEEP_LEXICAL_SPACING,
         index.lexical(lexical_text, KEEP_LEXICAL + extra) if KEEP_LEXICAL else []),
        *(("semantic", n, spacing, hits) for n, spacing, hits in kept)]
    for source, m, spacing, hits in ranked:
        visible = [(uid, score) for uid, score in hits if uid not in hidden and (source == "semantic" or score > 0)]
        for rank, (uid, score) in enumerate(visible[:m]):
            deadline = int(spacing * (rank + 1) + 1e-9)
            if uid not in out or deadline < out[uid][3]:
                out[uid] = (source, rank, float(score), deadline)
    return out


def keep_first_hop(order: Sequence[str], protected: Mapping[str, FirstHopRank], k: int) -> list[str]:
    """The first ``k`` of ``order`` with every protected memory returned by its deadline.

    Recollection only adds to the first hop: a memory the question matches strongly
    on its own (:func:`first_hop_ranks`) is not pushed down by what context, speaker,
    time and bridges add to others. Each place goes to the next memory of ``order``
    unless a protected memory would then miss its deadline (earliest deadline first,
    which meets every deadline whenever at most ``D`` of them are ``D`` or less, for
    every ``D``: what the config's spacings ensure).

    Example:
        >>> keep_first_hop(["a", "b", "c", "d", "e"], {"e": ("semantic", 0, 0.9, 2), "d": ("lexical", 1, 3.0, 4)}, 5)
        ['a', 'e', 'b', 'd', 'c']
    """
    pending = sorted((deadline, uid) for uid, (_, _, _, deadline) in protected.items() if deadline <= k)
    out: list[str] = []
    placed: set[str] = set()
    rest = iter(order)
    while len(out) < k:
        pending = [item for item in pending if item[1] not in placed]
        position = len(out) + 1
        # Another memory may take this place only if every pending one still fits after it:
        # the j-th by deadline (0-based) could then come at position + 1 + j at the earliest.
        if any(deadline < position + 1 + j for j, (deadline, _) in enumerate(pending)):
            uid: str | None = pending[0][1]
        else:
            uid = next((u for u in rest if u not in placed), pending[0][1] if pending else None)
        if uid is None:
            break
        out.append(uid)
        placed.add(uid)
    return out


def plain_memory(index: NamespaceIndex, uid: str, rank: FirstHopRank, query_vector: np.ndarray,
                 repeats: Sequence[MemoryUnit] = ()) -> RecalledMemory:
    """A protected first-hop memory recollection did not gather: its own view's hit as provenance."""
    row = index.pos[uid]
    source, position, score, _ = rank
    cosine = float(index.matrix[row] @ query_vector)
    return recalled_memory(index.units[row], score if source == "semantic" else cosine, cosine, False,
                           [FoundHit(source, position, score)], repeats)
