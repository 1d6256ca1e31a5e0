"""A model reads each turn once: what the namespace already cites is not extracted again.

A chat is usually remembered by adding its whole history again after each
exchange. Rule-based units are made per turn, with ids that hash their text and
provenance, so the turns already stored make the same ids and are dropped. A chat
model words its restatements anew on every call, so re-extracting old turns would
pay for the calls and store each event again in other words. With an extractor
that calls a model, the write path therefore

* skips every window whose turns the namespace's memories of that conversation
  already cite (no call at all), and
* keeps, from the windows that run, only the units that cite a turn not cited
  yet: the old turns in such a window are context for the new ones.

A window that failed cited nothing, so adding the conversation again retries it.

Example:
    >>> from langchain_ripplemem.extraction.windows import make_windows
    >>> from langchain_ripplemem.schemas import Conversation, Session, Turn
    >>> conv = Conversation(id="c", sessions=[
    ...     Session(id="S1", turns=[Turn(id=f"t{i}", speaker="A", text="hi") for i in range(4)])])
    >>> windows = make_windows(conv, size=2)
    >>> [w.turn_ids for w in windows_with_new_turns(windows, {("S1", "t0"), ("S1", "t1"), ("S1", "t2")})]
    [['t2', 't3']]
"""

from __future__ import annotations

from collections.abc import Iterable

from langchain_ripplemem.extraction.base import ExtractionResult, Window
from langchain_ripplemem.schemas import MemoryUnit

__all__ = ["Cited", "calls_model", "cited_turns", "new_work", "windows_with_new_turns", "without_restatements"]

# (session id, turn id) of the turns of one conversation that memories cite.
Cited = set[tuple[str, str]]


def calls_model(extractor: object) -> bool:
    """Whether ``extractor`` may word a turn differently each time (unless ``deterministic = True``).

    The rule-based extractor says so; a model's, or a user's own extractor, may not.
    """
    return not getattr(extractor, "deterministic", False)


def cited_turns(units: Iterable[MemoryUnit], conversation_id: str) -> Cited:
    """The turns of ``conversation_id`` that ``units`` cite."""
    return {(unit.source.session_id, turn) for unit in units
            if unit.source.conversation_id == conversation_id for turn in unit.source.turn_ids}


def new_work(extractor: object, units: Iterable[MemoryUnit], conversation_id: str,
             windows: list[Window]) -> tuple[list[Window], Cited | None]:
    """The windows ``extractor`` must read, and the turns ``units`` cite (``None``: rule-based, ids dedupe)."""
    if not calls_model(extractor):
        return windows, None
    cited = cited_turns(units, conversation_id)
    return windows_with_new_turns(windows, cited), cited


def windows_with_new_turns(windows: list[Window], cited: Cited) -> list[Window]:
    """The windows holding at least one turn no memory cites."""
    return [w for w in windows if any((session.id, turn.id) not in cited for session, turn in w.items)]


def without_restatements(results: list[ExtractionResult], cited: Cited) -> list[ExtractionResult]:
    """``results`` without the units that cite only turns memories already cite."""
    def restates(unit: MemoryUnit) -> bool:
        turns = unit.source.turn_ids
        return bool(turns) and all((unit.source.session_id, turn) in cited for turn in turns)

    return [r if not any(restates(u) for u in r.units) else
            r.model_copy(update={"units": [u for u in r.units if not restates(u)]}) for r in results]
