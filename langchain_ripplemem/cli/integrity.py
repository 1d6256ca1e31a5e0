"""Integrity check of a store: stored units, the in-memory indexes and the stored edges must agree.

:func:`check_store` reads everything fresh through the storage seams (the unit
backend's records, a newly built index per namespace, the edge backend's rows)
and reports, per namespace:

- ``chroma_units``: records the unit backend holds for the namespace;
- ``index_units``: units in an index rebuilt from the unit backend (what a new process sees);
- ``live_index_units``, ``stale_index``: units in this memory's cached index, when
  loaded, and the ids where it differs from Chroma (missing, extra, or other
  metadata): this process holds a stale index;
- ``edges``: edge rows the edge backend holds;
- ``dangling_edges``: an end is no unit of any namespace;
- ``cross_namespace_edges``: an end is a unit of *another* namespace;
  (together: every edge with an end that is not a unit of its namespace);
- ``unlinked_units``: units without a ``linked`` mark (an interrupted ingest;
  the memory links them on the namespace's next write or recall, or run
  :func:`check_store` with ``relink=True``);
- ``orphan_linked_marks``: ``linked`` marks for units that do not exist;
- ``duplicate_ids``: an id listed twice by Chroma or by an index;
- ``duplicate_units``: one (provenance, restatement) stored under several ids
  (a non-idempotent re-ingest);
- ``namespace_mismatches``: a record whose ``ns`` key differs from its unit's
  namespace.

Store-wide: ``unreadable_records`` (no ``ns`` key or unit JSON that does not
validate).

Example:
    >>> import tempfile
    >>> from langchain_core.messages import HumanMessage
    >>> from langchain_ripplemem import RippleMem
    >>> memory = RippleMem(persist_directory=tempfile.mkdtemp())
    >>> _ = memory.add_messages([HumanMessage("Biscuit is our beagle.")], namespace="maya")
    >>> report = check_store(memory)
    >>> report.ok, report.summary().splitlines()[-1]
    (True, 'ok')

"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from langchain_ripplemem.index.unit_index import UnitIndex
from langchain_ripplemem.schemas import MemoryUnit, Namespace, counted, namespace_from_key, namespace_key

if TYPE_CHECKING:
    from langchain_ripplemem.memory import RippleMem

_EXAMPLES = 5  # ids kept per problem in a report


# The summary's problem names for a count of one ("1 dangling edge"); `problems` keeps the plural keys.
_SINGULAR = {"dangling edges": "dangling edge", "cross-namespace edges": "cross-namespace edge",
             "unlinked units": "unlinked unit", "linked marks for missing units": "linked mark for a missing unit",
             "duplicate ids": "duplicate id", "duplicate units": "duplicate unit",
             "namespace mismatches": "namespace mismatch"}

class EdgeRef(BaseModel):
    """The ends and type of one stored edge a report names."""

    src: str
    dst: str
    type: str


class NamespaceIntegrity(BaseModel):
    """What :func:`check_store` found for one namespace."""

    namespace: Namespace
    chroma_units: int = 0
    index_units: int = 0
    live_index_units: int | None = Field(
        default=None, description="units in the memory's cached index; None when not loaded")
    stale_index: list[str] = Field(
        default_factory=list,
        description="ids in Chroma xor the cached index, or whose cached unit differs from Chroma's")
    edges: int = 0
    dangling_edges: list[EdgeRef] = Field(default_factory=list)
    cross_namespace_edges: list[EdgeRef] = Field(default_factory=list)
    unlinked_units: list[str] = Field(default_factory=list)
    orphan_linked_marks: list[str] = Field(default_factory=list)
    duplicate_ids: list[str] = Field(default_factory=list)
    duplicate_units: list[list[str]] = Field(default_factory=list)
    namespace_mismatches: list[str] = Field(default_factory=list)

    @property
    def problems(self) -> dict[str, int]:
        """Problem name -> count, only the non-zero ones."""
        counts = {
            "index units differ from Chroma": abs(self.index_units - self.chroma_units),
            "stale cached index": len(self.stale_index),
            "dangling edges": len(self.dangling_edges),
            "cross-namespace edges": len(self.cross_namespace_edges),
            "unlinked units": len(self.unlinked_units),
            "linked marks for missing units": len(self.orphan_linked_marks),
            "duplicate ids": len(self.duplicate_ids),
            "duplicate units": len(self.duplicate_units),
            "namespace mismatches": len(self.namespace_mismatches),
        }
        return {k: v for k, v in counts.items() if v}

    @property
    def ok(self) -> bool:
        """No problem of any kind."""
        return not self.problems

    def summary(self) -> str:
        """One line, plus one indented line per problem with example ids."""
        line = (f"{'/'.join(self.namespace)}: {counted(self.chroma_units, 'unit')}, {counted(self.edges, 'edge')}"
                + ("" if self.ok else " - " + ", ".join(counted(n, _SINGULAR.get(k, k), k)
                                                        for k, n in self.problems.items())))
        details = []
        for name, rows in (("dangling", self.dangling_edges), ("cross-namespace", self.cross_namespace_edges)):
            if rows:
                details.append(f"  {name} edges: " + ", ".join(
                    f"{r.src}-{r.dst} ({r.type})" for r in rows[:_EXAMPLES]))
        for name, ids in (("unlinked units", self.unlinked_units),
                          ("linked marks for missing units", self.orphan_linked_marks),
                          ("duplicate ids", self.duplicate_ids),
                          ("namespace mismatches", self.namespace_mismatches),
                          ("stale cached index", self.stale_index)):
            if ids:
                details.append(f"  {name}: {', '.join(ids[:_EXAMPLES])}"
                               + (" ..." if len(ids) > _EXAMPLES else ""))
        if self.duplicate_units:
            details.append("  duplicate units: " + "; ".join(
                " = ".join(group) for group in self.duplicate_units[:_EXAMPLES]))
        if self.unlinked_units:
            details.append("  (unlinked units come from an interrupted ingest: the next write or recall "
                           "in the namespace links them, or run `ripplemem check --relink`)")
        return "\n".join([line, *details])


class IntegrityReport(BaseModel):
    """Result of :func:`check_store` over every namespace of a store."""

    namespaces: list[NamespaceIntegrity] = Field(default_factory=list)
    chroma_records: int = 0
    unreadable_records: list[str] = Field(
        default_factory=list, description="Chroma ids without a namespace key or a valid unit")
    relinked: int = Field(default=0, description="units linked by relink=True before checking")

    @property
    def ok(self) -> bool:
        """Every namespace is ok and every record is readable."""
        return not self.unreadable_records and all(ns.ok for ns in self.namespaces)

    def namespace(self, namespace: Namespace | str) -> NamespaceIntegrity:
        """The report of one namespace (an empty one if the store has none of it)."""
        ns = (namespace,) if isinstance(namespace, str) else tuple(namespace)
        for item in self.namespaces:
            if item.namespace == ns:
                return item
        return NamespaceIntegrity(namespace=ns)

    def summary(self) -> str:
        """Human-readable report; its last line is ``ok`` or the number of problems."""
        lines = [item.summary() for item in self.namespaces]
        if not self.namespaces:
            lines.append("(empty store)")
        if self.relinked:
            lines.append(f"relinked {counted(self.relinked, 'unit')} left unlinked by an interrupted ingest")
        if self.unreadable_records:
            lines.append(f"{len(self.unreadable_records)} unreadable Chroma records: "
                         + ", ".join(self.unreadable_records[:_EXAMPLES]))
        total = len(self.unreadable_records) + sum(sum(ns.problems.values()) for ns in self.namespaces)
        lines.append("ok" if self.ok else f"{total} problem{'' if total == 1 else 's'}")
        return "\n".join(lines)


def check_store(memory: RippleMem, *, relink: bool = False) -> IntegrityReport:
    """Check that stored units, per-namespace indexes and stored edges of ``memory`` agree.

    Everything is read through the memory's storage seams (its unit backend, edge
    backend and a fresh index per namespace), whatever the backends are.

    Read-only unless ``relink`` is true: then, first, every namespace gets the
    memory's own crash recovery (units an interrupted ingest stored but did not
    link are linked), exactly as its next write or recall would do.

    Args:
        memory: the memory whose store to check (any backends: embedded, server).
        relink: run crash recovery on every namespace before checking.
    """
    report = IntegrityReport()
    ids_of: dict[str, list[str]] = defaultdict(list)  # ns key -> stored ids (as listed)
    units_of: dict[str, list[MemoryUnit]] = defaultdict(list)
    owner: dict[str, set[str]] = defaultdict(set)  # unit id -> ns keys holding it
    for record in memory.unit_backend.records():
        report.chroma_records += 1
        if record.unit is None or record.namespace_key is None:
            report.unreadable_records.append(record.id)
            continue
        ids_of[record.namespace_key].append(record.id)
        units_of[record.namespace_key].append(record.unit)
        owner[record.id].add(record.namespace_key)

    keys = set(ids_of) | {namespace_key(ns) for ns in memory.edge_backend.namespaces()}
    if relink:
        before = {key: memory.edge_backend.linked_ids(namespace_from_key(key)) for key in ids_of}
        for key in sorted(ids_of):
            memory.reader.prepare(namespace_from_key(key))  # the memory's own crash recovery
        report.relinked = sum(
            len(memory.edge_backend.linked_ids(namespace_from_key(key)) - before[key]) for key in ids_of)

    fresh = UnitIndex(memory.unit_backend)  # indexes rebuilt from storage, as a new process would
    for key in sorted(keys):
        ns = namespace_from_key(key)
        item = NamespaceIntegrity(namespace=ns)
        stored_ids = ids_of.get(key, [])
        present = set(stored_ids)
        item.chroma_units = len(stored_ids)
        dup = [i for i, n in Counter(stored_ids).items() if n > 1]
        index = fresh.namespace_index(ns)
        item.index_units = len(index)
        dup += [i for i, n in Counter(index.ids).items() if n > 1 and i not in dup]
        item.duplicate_ids = sorted(dup)
        live = memory.index.cached(ns)
        stale: set[str] = set()
        if live is not None:
            item.live_index_units = len(live)
            stale = present ^ set(live.ids)
        by_content: dict[tuple[Any, ...], list[str]] = defaultdict(list)
        for uid, unit in zip(stored_ids, units_of.get(key, []), strict=True):
            if live is not None and uid in live.pos and live.unit(uid) != unit:
                stale.add(uid)  # e.g. metadata (suppression) changed by another writer
            if namespace_key(unit.namespace) != key or unit.id != uid:
                item.namespace_mismatches.append(uid)
            by_content[(unit.source.model_dump_json(), unit.restatement)].append(uid)
        item.duplicate_units = sorted(sorted(set(g)) for g in by_content.values() if len(set(g)) > 1)
        item.stale_index = sorted(stale)

        rows = sorted({(*sorted((e.src, e.dst)), e.type) for e in memory.edge_backend.edges(ns)})
        item.edges = len(rows)
        for src, dst, etype in rows:
            if src in present and dst in present:
                continue
            row = EdgeRef(src=src, dst=dst, type=etype)
            if any(owner.get(end, set()) - {key} for end in (src, dst)):
                item.cross_namespace_edges.append(row)
            else:
                item.dangling_edges.append(row)
        linked = memory.edge_backend.linked_ids(ns)
        item.unlinked_units = sorted(present - linked)
        item.orphan_linked_marks = sorted(linked - present)
        report.namespaces.append(item)
    return report


__all__ = ["EdgeRef", "IntegrityReport", "NamespaceIntegrity", "check_store"]
