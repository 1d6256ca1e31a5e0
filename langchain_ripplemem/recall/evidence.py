"""What a recall has found so far: per memory, each way it was found, as the recall's nodes pass it on.

A recall finds a memory through first-hop views and expansion channels, a hundred
and more times over, and returns only its top K. Between nodes each finding is a
plain slotted record, :class:`FoundHit` (what :class:`~langchain_ripplemem.schemas.Hit`
holds, without validation); only the provenance of the memories returned becomes
``Hit`` models, validated with their memory when the result is assembled
(:func:`recalled_memory`; one hit alone: :meth:`FoundHit.public`).

Example:
    >>> found = FoundHit(source="expansion", rank=0, score=0.5, round=1, channel="structural",
    ...                  anchor="a", path=("a", "m"), edge_weight=0.8)
    >>> hit = found.public()
    >>> hit.path, hit.edge_weight
    (['a', 'm'], 0.8)

"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.schemas import EdgeType, Hit, HitSource, MemoryUnit, RecalledMemory

__all__ = ["PAPER_RANK_OFFSET", "RANK_OFFSET", "SOURCE_WEIGHTS", "AnyHit", "Evidence", "FoundHit", "Supports",
           "rank_offset", "recalled_memory", "support", "supports"]

#: Provenance support weighs a hit by the view or channel that found it (the paper's weights).
SOURCE_WEIGHTS: dict[str, float] = {"semantic": 1.0, "lexical": 0.75, "cue": 0.9, "expansion": 0.85}
#: Rank support is 1 / (offset + rank), rank counted from 1: 8 weighs a view's first places less against
#: agreement between views, chosen on LoCoMo's tuning conversations and LongMemEval-S dev with the integer
#: encoder (docs/benchmarks.md, "Tuning and held-out split"; LongMemEval dev k=5 70.9 -> 72.7).
RANK_OFFSET = 8
#: The paper's offset, under ``research.paper_rules``.
PAPER_RANK_OFFSET = 5


@dataclass(slots=True)
class FoundHit:
    """One way a memory was found: the fields of :class:`~langchain_ripplemem.schemas.Hit`, unvalidated.

    Nodes build these from values they computed (a recall view's rank and score, an expansion
    channel's path), so there is nothing to validate until a hit leaves the recall.
    """

    source: HitSource
    rank: int
    score: float
    round: int = 0
    channel: EdgeType | None = None
    anchor: str | None = None
    path: Sequence[str] = ()
    edge_weight: float | None = None

    def public(self) -> Hit:
        """The result's model of this hit, validated from this record's fields as they are (no keyword dict)."""
        return _validate_hit(self, from_attributes=True)  # type: ignore[no-any-return]


_validate_hit = Hit.__pydantic_validator__.validate_python

# Hits as recall's functions read them: found in this recall, or given as models (tests, callers' own evidence).
AnyHit = FoundHit | Hit
# Unit id -> every way it was found, in the order found.
Evidence = dict[str, list[FoundHit]]
# Unit id -> its provenance support (:func:`support`) over every way it was found so far.
Supports = dict[str, float]


def rank_offset(config: RecallConfig) -> int:
    """The offset of rank support 1 / (offset + rank): :data:`RANK_OFFSET`; the paper's 5 with its rules."""
    return PAPER_RANK_OFFSET if config.research.paper_rules else RANK_OFFSET


def support(hits: Iterable[AnyHit], config: RecallConfig) -> float:
    """Provenance support pi(m): source weight x rank support 1/(offset + rank), summed.

    Source weights are :data:`SOURCE_WEIGHTS`, the offset :func:`rank_offset` (rank counted
    from 1). Expansion hits are further scaled by their path strength (product of edge weights).

    Example:
        >>> from langchain_ripplemem.config import RecallConfig
        >>> paper = RecallConfig(research={"paper_rules": True})
        >>> support([FoundHit("semantic", 0, 0.9), FoundHit("lexical", 2, 0.5)], paper)  # 1/6 + 0.75/8
        0.26041666666666663
    """
    weights, offset, total = SOURCE_WEIGHTS, rank_offset(config) + 1, 0.0
    for hit in hits:
        strength = hit.edge_weight
        total += weights.get(hit.source, 0.0) * (1.0 if strength is None else strength) / (offset + hit.rank)
    return total


def supports(evidence: Mapping[str, Sequence[AnyHit]], config: RecallConfig, known: Mapping[str, float] | None = None,
             changed: Iterable[str] | None = None) -> Supports:
    """Every memory's :func:`support`, reading ``known`` (this evidence before ``changed`` gained hits) if given.

    A recall's nodes pass the supports on with the evidence, so the controller and
    assembly read each memory's support instead of summing its hits again; a
    memory whose hits changed is summed again over all of them, in order, so the
    value is the one :func:`support` gives.

    Example:
        >>> from langchain_ripplemem.config import RecallConfig
        >>> config = RecallConfig(research={"paper_rules": True})
        >>> evidence = {"a": [FoundHit("semantic", 0, 0.9)], "b": [FoundHit("semantic", 2, 0.5)]}
        >>> known = supports(evidence, config)
        >>> known
        {'a': 0.16666666666666666, 'b': 0.125}
        >>> evidence["b"] = [*evidence["b"], FoundHit("expansion", 0, 0.4, 1, "semantic", "a", ("a", "b"), 0.6)]
        >>> supports(evidence, config, known, changed=["b"])
        {'a': 0.16666666666666666, 'b': 0.21000000000000002}
    """
    if known is None or changed is None:
        return {uid: support(hits, config) for uid, hits in evidence.items()}
    out = dict(known)
    for uid in changed:
        out[uid] = support(evidence[uid], config)
    return out


_validate_memory = RecalledMemory.__pydantic_validator__.validate_python


def recalled_memory(unit: MemoryUnit, score: float, alignment: float, is_anchor: bool,
                    hits: Sequence[AnyHit], repeats: Sequence[MemoryUnit] = ()) -> RecalledMemory:
    """A result's memory with ``hits`` as its provenance, validated in one call (the hits from their attributes).

    ``repeats`` are the units of the same speaker's identical restatements folded into it
    (:mod:`~langchain_ripplemem.recall.repeats`): their sources become :attr:`RecalledMemory.repeats`.

    Example:
        >>> from langchain_ripplemem.schemas import Provenance
        >>> unit = MemoryUnit.create(namespace=("demo",), restatement="Maya is allergic to shellfish.",
        ...                          source=Provenance(conversation_id="c", session_id="s", turn_ids=["1"]))
        >>> memory = recalled_memory(unit, 1.5, 0.9, False, [FoundHit("semantic", 0, 0.9)])
        >>> memory.score, memory.provenance == [FoundHit("semantic", 0, 0.9).public()]
        (1.5, True)
    """
    fields = {"unit": unit, "score": score, "alignment": alignment, "is_anchor": is_anchor, "provenance": hits,
              "repeats": [repeat.source for repeat in repeats]}
    return _validate_memory(fields, from_attributes=True)  # type: ignore[no-any-return]
