"""Pure steps of RippleMemory's write path: gather a batch, number it, see what changed meanwhile.

The write path does its slow work (embedding, LLM supersession) before it takes
the namespace's writer lock, against a :class:`Snapshot` of the view. Under the
lock, :meth:`Snapshot.written_since` tells which units another writer stored in
between, so only that part is redone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from langchain_ripplemem.errors import InvalidNamespaceError
from langchain_ripplemem.extraction.base import ExtractionResult
from langchain_ripplemem.index import NamespaceView
from langchain_ripplemem.schemas import IngestReport, MemoryUnit, Namespace


def collect_units(ns: Namespace, results: list[ExtractionResult], report: IngestReport) -> dict[str, MemoryUnit]:
    """Units of every window that did not fail, first occurrence per id; failures and usage go to ``report``.

    Raises:
        InvalidNamespaceError: an extractor returned a unit of another namespace.
    """
    units: dict[str, MemoryUnit] = {}
    for result in results:
        report.usage = report.usage.add(result.usage)
        report.warnings.extend(result.warnings)
        if result.failed is not None:
            report.failed_windows.append(result.failed)
            continue
        for unit in result.units:
            if unit.namespace != ns:
                raise InvalidNamespaceError(f"extractor returned unit {unit.id} for {unit.namespace}, expected {ns}")
            units.setdefault(unit.id, unit)
    report.units = len(units)
    report.unit_ids = list(units)
    return units


def numbered(view: NamespaceView, new: list[MemoryUnit], extra: dict[str, Any] | None = None) -> list[MemoryUnit]:
    """``new`` with ``metadata["seq"]`` after every stored unit's (and ``extra`` merged in).

    ``seq`` orders units on reload. After deletes the row count is below the
    largest seq, so numbering continues after the largest and never reuses one.
    """
    first = 1 + max((u.metadata.get("seq", -1) for u in view.units), default=-1)
    return [u.model_copy(update={"metadata": {**u.metadata, **(extra or {}), "seq": first + i}})
            for i, u in enumerate(new)]


@dataclass
class Snapshot:
    """A namespace view as the write path saw it before taking the writer lock."""

    view: NamespaceView
    size: int = field(init=False)

    def __post_init__(self) -> None:
        self.size = len(self.view)

    def written_since(self, view: NamespaceView) -> set[str]:
        """Ids in ``view`` (the current one) that the snapshot did not hold."""
        if view is self.view and len(view) == self.size:
            return set()  # views only grow in place; a delete or reload makes a new view
        before = set(self.view.ids[: self.size])
        return {uid for uid in view.ids if uid not in before}
