"""What recall may see and how the lifecycle weighs it: hidden units, ``as_of``, supersession, recency.

Suppressed units (and, with ``as_of``, units that start after it) are hidden
from every view, expansion path and the assembly. :func:`score_weight`
multiplies rho by ``RecallConfig.lifecycle.superseded_weight`` for superseded units (with
``as_of``: only those superseded by then) and, when
``lifecycle.recency_half_life_days`` is set, by ``0.5 ** (age_days / half_life)``.

Example:
    >>> coerce_as_of("2026-05-01").isoformat()
    '2026-05-01T00:00:00+00:00'
    >>> visible_top(lambda k: [("a", 0.9), ("b", 0.8), ("c", 0.7)][:k], 2, {"a"})
    [('b', 0.8), ('c', 0.7)]

"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, time, timezone
from typing import TYPE_CHECKING, Any

from langchain_ripplemem.index.marks import VALID_UNTIL, stated_at
from langchain_ripplemem.schemas import DAY_SECONDS, MemoryUnit, aware

if TYPE_CHECKING:
    from langchain_ripplemem.config import LifecycleConfig
    from langchain_ripplemem.index.namespace_index import NamespaceIndex

__all__ = ["coerce_as_of", "hidden_ids", "score_weight", "visible_top"]


def coerce_as_of(value: Any) -> datetime | None:
    """``as_of`` as an aware datetime: datetimes (naive = UTC), dates (end of day), ISO strings.

    Raises:
        ValueError: naming ``as_of`` when it is none of these.
    """
    if value is None or isinstance(value, datetime):
        return None if value is None else aware(value)
    if isinstance(value, date):
        return datetime.combine(value, time.max, tzinfo=timezone.utc)
    if isinstance(value, str):
        try:
            return aware(datetime.fromisoformat(value))
        except ValueError:
            pass
    raise ValueError(f"as_of must be a datetime, a date or an ISO 8601 string, got {value!r}")


def hidden_ids(index: NamespaceIndex, as_of: datetime | None = None) -> set[str]:
    """Units recall must not see: suppressed ones, and with ``as_of`` those stated after it (``marks.stated_at``)."""
    hidden = set(index.suppressed)
    if as_of is not None:
        hidden |= {u.id for u in index.units if stated_at(u) > as_of}
    return hidden


def visible_top(search: Callable[[int], list[tuple[str, float]]], k: int,
                hidden: set[str]) -> list[tuple[str, float]]:
    """The top ``k`` of a ranked search that are not hidden (fetches ``k + len(hidden)``)."""
    if not hidden:
        return search(k)
    return [(uid, s) for uid, s in search(k + len(hidden)) if uid not in hidden][:k]


def score_weight(config: LifecycleConfig, as_of: datetime | None,
                 reference: datetime | None) -> Callable[[MemoryUnit], float] | None:
    """The lifecycle multiplier of rho per unit, or ``None`` when it is 1 for every unit.

    Args:
        config: ``superseded_weight`` and ``recency_half_life_days``.
        as_of: answer as of this time: only supersessions before it count.
        reference: "now" for recency ages (needed only with a half-life).
    """
    half_life = config.recency_half_life_days
    factor = config.superseded_weight

    def weight(unit: MemoryUnit) -> float:
        w = 1.0
        until = unit.metadata.get(VALID_UNTIL)
        if until and factor != 1.0 and (as_of is None or datetime.fromisoformat(until) <= as_of):
            w *= factor
        if half_life is not None and unit.time is not None and reference is not None:
            age = max(0.0, (reference - unit.time.end).total_seconds() / DAY_SECONDS)
            w *= 0.5 ** (age / half_life)
        return w

    return weight
