"""What a recall has found so far: per memory, each way it was found, as the recall's nodes pass it on.

A recall finds a memory through first-hop views and expansion channels, a hundred
and more times over, and returns only its top K. Between nodes each finding is a
plain slotted record, :class:`FoundHit` (what :class:`~langchain_ripplemem.schemas.Hit`
holds, without validation); only the provenance of the memories returned becomes
``Hit`` models (:meth:`FoundHit.public`), when the result is assembled.

Example:
    >>> found = FoundHit(source="expansion", rank=0, score=0.5, round=1, channel="structural",
    ...                  anchor="a", path=("a", "m"), edge_weight=0.8)
    >>> hit = found.public()
    >>> hit.path, hit.edge_weight
    (['a', 'm'], 0.8)

"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_ripplemem.schemas import EdgeType, Hit, HitSource

__all__ = ["AnyHit", "Evidence", "FoundHit", "public_hits"]


@dataclass(slots=True)
class FoundHit:
    """One way a memory was found: the fields of :class:`~langchain_ripplemem.schemas.Hit`, unvalidated.

    Nodes build these from values they computed (a view's rank and score, an expansion
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
        """The result's model of this hit."""
        return Hit(source=self.source, rank=self.rank, score=self.score, round=self.round, channel=self.channel,
                   anchor=self.anchor, path=list(self.path), edge_weight=self.edge_weight)


# Hits as recall's functions read them: found in this recall, or given as models (tests, callers' own evidence).
AnyHit = FoundHit | Hit
# Unit id -> every way it was found, in the order found.
Evidence = dict[str, list[FoundHit]]


def public_hits(hits: Sequence[AnyHit]) -> list[Hit]:
    """The result's provenance: each hit as a :class:`~langchain_ripplemem.schemas.Hit`."""
    return [h.public() if isinstance(h, FoundHit) else h for h in hits]
