"""Rule-based supersession: a newer statement of the same fact makes the older one out of date.

The rule (see ``docs/lifecycle.md``): :func:`facts` reads
``(subject, attribute, value)`` triples off a unit's restatement with a small
set of patterns (residence, employer, occupation, relationship status,
favourite <thing>), in the first person of the ``"Speaker: ..."`` restatement
or the third person of a named participant. Within a namespace, each unit is
superseded by the *earliest later* visible unit of the same subject and
attribute whose value differs; a unit with several facts is superseded only
when every one of them is. Marks (:mod:`langchain_ripplemem.index.marks`) are
recomputed for the touched ``(subject, attribute)`` groups whenever units
arrive, are deleted, suppressed or unsuppressed, so they always follow from the
units present: re-ingesting changes nothing, deleting or suppressing the newer
unit restores the older.

With ``WriteConfig(supersession={"llm": True})`` a chat model also names older units
a new one supersedes (:mod:`langchain_ripplemem.write.supersession.llm_supersession`). Its answer
is kept as a claim on the new unit (``"supersedes": {old id: attribute}``), and
the marks follow from the claims present in the same way: an older unit
without a rule-based successor is superseded by the earliest later visible unit
that claims it (marked ``"superseded_via": "llm"``).

Example:
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance
    >>> unit = MemoryUnit.create(namespace=("maya",), restatement="Maya: I just moved to Berlin.",
    ...                          participants=["Maya"], source=Provenance(conversation_id="c", session_id="s"))
    >>> facts(unit)
    [Fact(subject='maya', attribute='residence', value='berlin')]

"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from langchain_ripplemem.index.cue_rows import unit_cues
from langchain_ripplemem.index.marks import (
    MARKS,
    SUPERSEDED_ATTRIBUTE,
    SUPERSEDED_BY,
    SUPERSEDED_VIA,
    VALID_UNTIL,
    claims,
    is_suppressed,
    order_key,
    order_time,
)
from langchain_ripplemem.schemas import MemoryUnit, Namespace
from langchain_ripplemem.write.supersession.changes import is_change, supersedes_by_change
from langchain_ripplemem.write.supersession.frames import ATTRIBUTES, SEVERAL, SHARED, Fact, facts, same_value

if TYPE_CHECKING:
    from langchain_ripplemem.index.namespace_index import NamespaceIndex
    from langchain_ripplemem.index.unit_index import UnitIndex

__all__ = ["ATTRIBUTES", "CHANGED", "FEW", "GROUP_POOL", "RARE_CUE", "Fact", "fact_keys", "facts",
           "refresh_supersession", "same_value"]

# Earlier units of one participant (or sharing one cue) considered per group: supersession is a
# write-time check and must stay cheap however long a history grows.
GROUP_POOL = 400
#: How rare (``NamespaceIndex.rarity``) a cue two statements share must be for a change statement to
#: supersede: the linking's default ``cue_threshold``, what makes a cue edge.
RARE_CUE = 0.6
#: ... or held by at most this many units: in a memory of a few units no key is rare, and yet a name said in
#: three of them names one thing.
FEW = 3
#: The ``superseded_attribute`` of a change statement's mark: ``"changed:<the rarest key they share>"``.
CHANGED = "changed:"

def fact_keys(units: Iterable[MemoryUnit]) -> set[tuple[str, str]]:
    """The ``(subject, attribute)`` groups these units take part in."""
    return {(f.subject, f.attribute) for unit in units for f in facts(unit)}


def refresh_supersession(index: UnitIndex, ns: Namespace, touched: Iterable[MemoryUnit]) -> list[str]:
    """Recompute the marks that units written, deleted, suppressed or unsuppressed can change.

    Those are the marks of every visible unit in the ``(subject, attribute)`` groups
    of ``touched``, of the units a touched change statement may supersede, of the
    units ``touched`` claim to supersede, and of the touched units themselves.

    Returns:
        Ids of units whose marks changed and that are now superseded.
    """
    touched = list(touched)
    if not touched:
        return []
    namespace_index = index.namespace_index(ns)
    groups = _Groups(namespace_index)
    changes = _Changes(namespace_index)
    claimed = {old for unit in touched for old in claims(unit)}
    affected: dict[str, MemoryUnit] = {unit.id: unit for key in sorted(fact_keys(touched))
                                       for unit, _ in groups.members(key)}
    for unit in touched:
        live = namespace_index.unit(unit.id)
        if live is not None and not is_suppressed(live):
            affected.setdefault(unit.id, live)
        for old in changes.earlier_sharing(unit):
            affected.setdefault(old.id, old)
    for uid in sorted(claimed):
        claimed_unit = namespace_index.unit(uid)
        if claimed_unit is not None and not is_suppressed(claimed_unit):
            affected.setdefault(uid, claimed_unit)
    changed: list[MemoryUnit] = []
    for unit in affected.values():
        metadata = {k: v for k, v in unit.metadata.items() if k not in MARKS}
        # The earliest later statement a rule finds; an LLM's claim where no rule finds one.
        found = [m for m in (groups.successor(unit), changes.successor(unit)) if m is not None]
        rule = min(found, key=lambda m: order_key(m[0])) if found else None
        mark = rule or _claimant(namespace_index, unit)
        if mark is not None:
            later, attribute = mark
            metadata.update({SUPERSEDED_BY: later.id, VALID_UNTIL: order_time(later).isoformat(),
                             SUPERSEDED_ATTRIBUTE: attribute})
            if rule is None:
                metadata[SUPERSEDED_VIA] = "llm"
            elif attribute.startswith(CHANGED):
                metadata[SUPERSEDED_VIA] = "change"
        if metadata != unit.metadata:
            changed.append(unit.model_copy(update={"metadata": metadata}))
    index.replace(ns, changed)
    return [u.id for u in changed if SUPERSEDED_BY in u.metadata]


class _Groups:
    """The units of each ``(subject, attribute)`` group of a namespace, in statement order (read once per refresh)."""

    def __init__(self, namespace_index: NamespaceIndex) -> None:
        self.index = namespace_index
        self.groups: dict[tuple[str, str], list[tuple[MemoryUnit, str]]] = {}

    def members(self, key: tuple[str, str]) -> list[tuple[MemoryUnit, str]]:
        """The group's visible units with their values (among the subject's last :data:`GROUP_POOL`)."""
        if key not in self.groups:
            subject, attribute = key
            members: dict[str, tuple[MemoryUnit, str]] = {}
            n = len(self.index)  # a shared fact's group: the namespace's last units, whoever said them
            rows = range(max(0, n - GROUP_POOL), n) if subject == SHARED else \
                self.index.postings["participants"].get(subject, [])[-GROUP_POOL:]
            for row in rows:
                unit = self.index.units[row]
                if is_suppressed(unit):
                    continue
                for fact in facts(unit):  # a unit's last value per group counts
                    if fact.subject == subject and fact.attribute == attribute:
                        members[unit.id] = (unit, fact.value)
            self.groups[key] = sorted(members.values(), key=lambda m: order_key(m[0]))
        return self.groups[key]

    def successor(self, unit: MemoryUnit) -> tuple[MemoryUnit, str] | None:
        """The unit that makes every fact of ``unit`` out of date last, and the attribute; ``None``: none does."""
        successors: list[tuple[MemoryUnit, str] | None] = []
        for key in sorted(fact_keys([unit])):
            members = self.members(key)
            at = next((i for i, (m, _) in enumerate(members) if m.id == unit.id), None)
            several = key[1] in SEVERAL  # a second instrument is another one, unless it is said to replace
            later = None if at is None else next(
                (m for m, v in members[at + 1:] if not same_value(v, members[at][1]) and (not several or is_change(m))),
                None)
            successors.append(None if later is None else (later, key[1]))
        if not successors or not all(successors):
            return None
        # Several facts: the unit is outdated once its last fact is.
        return max((s for s in successors if s), key=lambda s: order_key(s[0]))


class _Changes:
    """Change statements (:mod:`~langchain_ripplemem.write.supersession.changes`) and the earlier units they name."""

    def __init__(self, namespace_index: NamespaceIndex) -> None:
        self.index = namespace_index
        self.total = len(namespace_index)

    def _rare(self, keys: Iterable[str]) -> set[str]:
        """The keys few statements share: rare in the namespace, or in at most :data:`FEW` (a memory's first days)."""
        return {k for k in keys if len(self.index.postings["cues"].get(k, ())) <= FEW or
                self.index.rarity(k) >= RARE_CUE}

    def _sharing(self, unit: MemoryUnit) -> list[MemoryUnit]:
        """Visible units (the last :data:`GROUP_POOL` of each key) that share a rare cue key with ``unit``."""
        names, topics = unit_cues(unit)
        rows = sorted({r for key in self._rare([*names, *topics])
                       for r in self.index.postings["cues"].get(key, [])[-GROUP_POOL:]})
        units = (self.index.units[r] for r in rows)
        return [u for u in units if u.id != unit.id and not is_suppressed(u)]

    def _links(self, new: MemoryUnit, old: MemoryUnit) -> bool:
        shared = set(unit_cues(new).names + unit_cues(new).topics) & set(unit_cues(old).names + unit_cues(old).topics)
        return order_key(old) < order_key(new) and supersedes_by_change(new, old, self._rare(shared))

    def earlier_sharing(self, unit: MemoryUnit) -> list[MemoryUnit]:
        """Earlier units a change statement ``unit`` (written, deleted or hidden) may supersede."""
        if not is_change(unit):
            return []
        key = order_key(unit)
        return [old for old in self._sharing(unit) if order_key(old) < key]

    def successor(self, unit: MemoryUnit) -> tuple[MemoryUnit, str] | None:
        """The earliest later visible change statement that supersedes ``unit``, and ``"changed:<shared key>"``."""
        later = sorted((new for new in self._sharing(unit) if is_change(new) and self._links(new, unit)),
                       key=order_key)
        if not later:
            return None
        first = later[0]
        shared = sorted(self._rare(set(unit_cues(first).names + unit_cues(first).topics)
                                   & set(unit_cues(unit).names + unit_cues(unit).topics)),
                        key=lambda k: (-self.index.rarity(k), k))
        return first, CHANGED + (shared[0] if shared else "")


def _claimant(namespace_index: NamespaceIndex, unit: MemoryUnit) -> tuple[MemoryUnit, str] | None:
    """The earliest later visible unit that claims to supersede ``unit``, and the attribute it names."""
    key = order_key(unit)
    later = [c for c in (namespace_index.unit(i) for i in namespace_index.claimed_by.get(unit.id, ()))
             if c is not None and not is_suppressed(c) and order_key(c) > key]
    if not later:
        return None
    first = min(later, key=order_key)
    return first, claims(first).get(unit.id) or "update"
