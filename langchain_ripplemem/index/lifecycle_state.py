"""The lifecycle state of a namespace index: which units recall hides, which claim to supersede others.

Both are read from the units' lifecycle marks (:mod:`~langchain_ripplemem.index.marks`)
as units are added or their metadata is replaced, so recall never scans the units for them.

Example:
    >>> from langchain_ripplemem.index.marks import with_suppression
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance
    >>> unit = MemoryUnit.create(namespace=("maya",), restatement="Maya: I live in Paris.",
    ...                          source=Provenance(conversation_id="c", session_id="s"))
    >>> lifecycle = LifecycleState()
    >>> lifecycle.add(unit)
    >>> hidden = with_suppression([unit], "wrong city")[0]
    >>> lifecycle.replace(unit, hidden)
    >>> lifecycle.suppressed == {unit.id}, LifecycleState.from_state(lifecycle.state()).suppressed == {unit.id}
    (True, True)
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from langchain_ripplemem.index.marks import SUPERSEDED_BY, SUPERSEDES, SUPPRESSED
from langchain_ripplemem.schemas import MemoryUnit

__all__ = ["LifecycleState"]


class LifecycleState:
    """The suppressed ids, the supersession claims and the supersession marks of a namespace's units."""

    def __init__(self) -> None:
        self.suppressed: set[str] = set()  # ids a user correction hides from recall (lifecycle.py)
        # older id -> ids of units that claim to supersede it (an LLM's claims, lifecycle.py)
        self.claimed_by: defaultdict[str, list[str]] = defaultdict(list)
        # newer id -> ids of the units it supersedes (their "superseded_by" marks): recall's way back in time
        self.supersedes: defaultdict[str, list[str]] = defaultdict(list)

    def add(self, unit: MemoryUnit) -> None:
        """Note a new unit's marks."""
        if unit.metadata.get(SUPPRESSED):
            self.suppressed.add(unit.id)
        for old in unit.metadata.get(SUPERSEDES) or ():
            self.claimed_by[old].append(unit.id)
        if (newer := unit.metadata.get(SUPERSEDED_BY)) is not None:
            self.supersedes[newer].append(unit.id)

    def replace(self, old: MemoryUnit, unit: MemoryUnit) -> None:
        """Note the marks of ``unit``, which replaces ``old`` (the same id, new metadata)."""
        before, after = old.metadata.get(SUPERSEDES) or {}, unit.metadata.get(SUPERSEDES) or {}
        for gone in set(before) - set(after):
            self.claimed_by[gone].remove(unit.id)
        for added in set(after) - set(before):
            self.claimed_by[added].append(unit.id)
        was, now = old.metadata.get(SUPERSEDED_BY), unit.metadata.get(SUPERSEDED_BY)
        if was != now:
            if was is not None and unit.id in self.supersedes.get(was, ()):
                self.supersedes[was].remove(unit.id)
            if now is not None:
                self.supersedes[now].append(unit.id)
        if unit.metadata.get(SUPPRESSED):
            self.suppressed.add(unit.id)
        else:
            self.suppressed.discard(unit.id)

    def copy(self) -> LifecycleState:
        """An equal state that changes on alone (what a reader holds stays as it is)."""
        lifecycle = LifecycleState()
        lifecycle.suppressed = set(self.suppressed)
        lifecycle.claimed_by = defaultdict(list, {old: list(ids) for old, ids in self.claimed_by.items()})
        return lifecycle

    def state(self) -> dict[str, Any]:
        """The suppressed ids, the claims and the marks, as plain containers (a snapshot pickles them)."""
        return {"suppressed": self.suppressed, "claimed_by": dict(self.claimed_by),
                "supersedes": dict(self.supersedes)}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> LifecycleState:
        """The lifecycle state :meth:`state` described."""
        lifecycle = cls()
        lifecycle.suppressed = state["suppressed"]
        lifecycle.claimed_by = defaultdict(list, state["claimed_by"])
        lifecycle.supersedes = defaultdict(list, state["supersedes"])
        return lifecycle
