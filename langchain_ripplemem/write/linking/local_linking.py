"""Incremental, local linking of new units (the paper's write phase, step 3).

Each new unit gets two bounded candidate pools among the units inserted
before it: the :data:`SEMANTIC_POOL` nearest neighbours by cosine and the
:data:`CUE_POOL` best structural matches found through the cue indexes. It keeps
at most :data:`MAX_SEMANTIC_EDGES` edges with ``s_sem >= semantic_threshold`` and
at most :data:`MAX_STRUCTURAL_EDGES` structural edges. No all-to-all pass and no
LLM call per edge.

Structural edges are of one of two kinds (``WriteConfig.linking.structural_edges``):

* ``"paper"``: ``s_str >=`` :data:`STRUCTURAL_THRESHOLD` over participants, places and time;
* ``"cues"`` (default): the rarity-weighted overlap of identifying cues
  (:func:`~langchain_ripplemem.text.cue_scores.cue_overlap`) is at least
  :data:`CUE_THRESHOLD`. Rarity is taken among the rows up to and including the new
  unit, so linking a batch gives the edges inserting one unit at a time would.
  Only cues at least :data:`CUE_MIN_RARITY` rare feed the pool, each with at most its
  ``2 * CUE_POOL`` most recent earlier rows, so a pool stays bounded however
  large the namespace grows.
"""

from __future__ import annotations

import math
from bisect import bisect_left

import numpy as np

from langchain_ripplemem._runtime.blas import product
from langchain_ripplemem.config import LinkingConfig
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.schemas import Edge, MemoryUnit
from langchain_ripplemem.text.cue_scores import structural_score
from langchain_ripplemem.text.identifying import TOPIC_WEIGHT
from langchain_ripplemem.write.linking.candidates import PROJECTED_FROM, above, leading, projection, similarities

# Rows scored per new unit when building the semantic pool in blocks; bounds memory.
_BLOCK = 256
_NO_ROWS = np.zeros(0, dtype=np.int64)

#: The paper's pools and edge budgets per new unit: nearest neighbours and cue-index candidates considered,
#: semantic and structural edges kept, and the min s_str of a "paper" structural edge.
SEMANTIC_POOL = 20
CUE_POOL = 20
MAX_SEMANTIC_EDGES = 6
MAX_STRUCTURAL_EDGES = 6
STRUCTURAL_THRESHOLD = 0.60
#: The min rarity-weighted cue overlap of a "cues" structural edge, and the rarity under which a cue feeds no
#: candidate pool (a speaker's name, a word of every session): chosen with the cue edges of issue 13 on the
#: linked suite's tune split and the demo (docs/benchmarks.md, "Linked recall (issue 13)").
CUE_THRESHOLD = 0.6
CUE_MIN_RARITY = 0.3


__all__ = ["CUE_MIN_RARITY", "CUE_POOL", "CUE_THRESHOLD", "MAX_SEMANTIC_EDGES", "MAX_STRUCTURAL_EDGES", "SEMANTIC_POOL",
           "STRUCTURAL_THRESHOLD", "link_rows"]


def link_rows(index: NamespaceIndex, rows: list[int], config: LinkingConfig) -> list[Edge]:
    """Edges from each unit in ``rows`` to units at earlier rows of ``index``."""
    edges: list[Edge] = []
    matrix = index.matrix
    threshold = config.semantic_threshold if config.semantic_threshold is not None else 0.85
    for block_start in range(0, len(rows), _BLOCK):
        block = rows[block_start : block_start + _BLOCK]
        if config.structural_edges == "paper":  # its pool scores structure on the nearest, whatever their cosine
            upto = max(block) + 1
            sims = product(matrix[block], matrix[:upto].T)
            pools = [_nearest(sims[offset, :row], SEMANTIC_POOL) for offset, row in enumerate(block)]
        elif max(block) < PROJECTED_FROM:  # only edges count: the rows that may reach the threshold
            pools = above(matrix, block, threshold)
        else:  # the same edges from a bound on each cosine (write/linking/candidates.py)
            keep = min(SEMANTIC_POOL, MAX_SEMANTIC_EDGES)
            pools = leading(projection(index, matrix), matrix, block, threshold, keep)
        for row, pool in zip(block, pools, strict=True):
            edges.extend(_link_one(index, row, pool, threshold, config))
    return edges


def _nearest(sims: np.ndarray, k: int) -> np.ndarray:
    k = min(k, len(sims))
    return np.argpartition(-sims, k - 1)[:k] if k > 0 else _NO_ROWS


def _link_one(index: NamespaceIndex, row: int, nearest: np.ndarray, threshold: float,
              config: LinkingConfig) -> list[Edge]:
    """``row``'s edges; ``nearest``: earlier rows for its semantic pool (scored exactly here)."""
    if row == 0:
        return []
    unit = index.units[row]
    structural: dict[int, float] = {}
    by_cues = config.structural_edges == "cues"
    if CUE_POOL > 0:
        structural = _key_pool(index, row, config) if by_cues else _cue_pool(index, unit, row, config)
    sims = _semantic_pool(index, row, nearest if SEMANTIC_POOL > 0 else _NO_ROWS, threshold, config)
    rest = [j for j in structural if j not in sims]
    if rest:
        sims.update(zip(rest, similarities(index.matrix, rest, index.matrix[row]).tolist(), strict=True))
    sem_edges, str_edges = [], []
    for j, s_sem in sims.items():
        if s_sem >= threshold:
            sem_edges.append((s_sem, j))
        s_str = structural.get(j)
        if s_str is None and not by_cues:
            s_str = structural_score(unit, index.units[j], config)
        if s_str is not None and s_str >= (CUE_THRESHOLD if by_cues else STRUCTURAL_THRESHOLD):
            str_edges.append((s_str, s_sem, j))
    sem_edges.sort(key=lambda t: (-t[0], -t[1]))
    # Ties on s_str are the rule in dialogue (same speakers, same day): the unit
    # closest in time wins, i.e. the nearest earlier turn (rows are in insertion
    # order), then the semantically closer one. Structural edges then follow the
    # conversation's own order, which the semantic edges do not capture.
    # Cue edges: the stronger overlap first, then the semantically closer unit.
    str_edges.sort(key=(lambda t: (-round(t[0], 6), -t[1], -t[2])) if by_cues else
                   (lambda t: (-round(t[0], 6), -t[2], -t[1])))
    out = [
        Edge(src=unit.id, dst=index.ids[j], type="semantic", weight=round(s, 6))
        for s, j in sem_edges[:MAX_SEMANTIC_EDGES]
    ]
    out += [
        Edge(src=unit.id, dst=index.ids[j], type="structural", weight=round(s, 6))
        for s, _, j in str_edges[:MAX_STRUCTURAL_EDGES]
    ]
    return out


def _semantic_pool(index: NamespaceIndex, row: int, nearest: np.ndarray, threshold: float,
                   config: LinkingConfig) -> dict[int, float]:
    """Row -> exact cosine for ``row``'s semantic pool: its :data:`SEMANTIC_POOL` nearest earlier rows.

    Under ``"cues"``, ``nearest`` holds every row that may reach the threshold (a superset):
    of those, the :data:`SEMANTIC_POOL` closest over it are the pool's members that can make
    edges; the pool's rows under the threshold make none.
    """
    scores = similarities(index.matrix, nearest, index.matrix[row]) if len(nearest) else np.zeros(0, np.float32)
    if config.structural_edges == "cues":
        over = scores >= threshold
        nearest, scores = nearest[over], scores[over]
        if len(nearest) > SEMANTIC_POOL:  # the pool's order: closest first, then the later row
            keep = np.lexsort((-nearest, -scores))[:SEMANTIC_POOL]
            nearest, scores = nearest[keep], scores[keep]
    return dict(zip(nearest.tolist(), scores.tolist(), strict=True))


def _cue_pool(index: NamespaceIndex, unit: MemoryUnit, row: int, config: LinkingConfig) -> dict[int, float]:
    """The :data:`CUE_POOL` best structural matches among earlier rows sharing a cue.

    Posting lists are in insertion order; only their most recent entries before
    ``row`` are scored, so a participant who appears in every turn does not make
    the pool linear in the namespace size.
    """
    per_posting = 2 * CUE_POOL
    candidates: set[int] = set()
    for rows in index.posting_lists(unit):
        cut = bisect_left(rows, row)
        candidates.update(rows[max(0, cut - per_posting) : cut])
    scored = []
    for j in candidates:
        s = structural_score(unit, index.units[j], config)
        if s is not None:
            scored.append((s, j))
    scored.sort(key=lambda t: (-t[0], -t[1]))
    return {j: s for s, j in scored[:CUE_POOL]}


def _key_pool(index: NamespaceIndex, row: int, config: LinkingConfig) -> dict[int, float]:
    """Earlier rows sharing a rare identifying cue with ``row``, scored by rarity-weighted overlap.

    A cue held by ``df`` of the first ``row + 1`` rows weighs ``rarity(df, row + 1)``,
    times :data:`~.identifying.TOPIC_WEIGHT` unless some row up to ``row`` holds it as a name; cues under
    :data:`CUE_MIN_RARITY` are skipped (a speaker, a word of every session).
    """
    missing: dict[int, float] = {}
    per_posting = 2 * CUE_POOL
    for key in index.keys[row]:
        rows = index.postings["cues"].get(key)
        if not rows:
            continue
        cut = bisect_left(rows, row)
        weight = index.rarity(key, upto=row + 1, topic_weight=TOPIC_WEIGHT)
        if cut == 0 or weight < CUE_MIN_RARITY:
            continue
        log_miss = math.log1p(-min(weight, 1.0 - 1e-9))
        for j in rows[max(0, cut - per_posting) : cut]:
            missing[j] = missing.get(j, 0.0) + log_miss
    # The strongest overlap first, then the later row: (expm1(m), -j) ascending, compared natively.
    best = sorted([(math.expm1(m), -j) for j, m in missing.items()])[:CUE_POOL]
    return {-negated: -score for score, negated in best}
