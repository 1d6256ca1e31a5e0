"""What one namespace holds, counted from its units and edge counts (``RippleMem.stats``).

Example:
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance
    >>> unit = MemoryUnit.create(namespace=("maya",), restatement="Maya: hi",
    ...                          source=Provenance(conversation_id="c", session_id="s"))
    >>> stats = namespace_stats(("maya",), [unit], {"semantic": 0, "structural": 0})
    >>> stats.units, stats.conversations, stats.sessions
    (1, ['c'], 1)

"""

from __future__ import annotations

from collections.abc import Iterable

from langchain_ripplemem.index.marks import SUPERSEDED_BY, is_suppressed
from langchain_ripplemem.schemas import MemoryUnit, Namespace, NamespaceStats

__all__ = ["namespace_stats"]


def namespace_stats(namespace: Namespace, units: Iterable[MemoryUnit], edges: dict[str, int]) -> NamespaceStats:
    """Counts of units, suppressed and superseded ones, conversations, sessions, edges, and the time span."""
    units = list(units)
    times = [u.time for u in units if u.time is not None]
    return NamespaceStats(
        namespace=namespace, units=len(units),
        suppressed=sum(1 for u in units if is_suppressed(u)),
        superseded=sum(1 for u in units if u.metadata.get(SUPERSEDED_BY)),
        conversations=list(dict.fromkeys(u.source.conversation_id for u in units)),
        sessions=len({(u.source.conversation_id, u.source.session_id) for u in units}),
        edges=edges,
        first_time=min((t.start for t in times), default=None),
        last_time=max((t.end for t in times), default=None),
    )
