"""What a conversation's memories already hold: a model reads each turn once, an edit replaces.

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

A turn is known by its id and its text: every unit keeps a fingerprint of each
turn it cites (``metadata["turn_fingerprints"]``, one string). A turn that reads otherwise
now is an edited message: it is read again, and once this write holds its new
version the memories made of the old one are deleted (``IngestReport.replaced``;
suppressed ones stay, for audit, and memories written before fingerprints are
never replaced). A window that failed cited nothing, so adding the conversation
again retries it, and the old version of an edit stays until then.

Example:
    >>> from langchain_ripplemem.write.extraction.windows import make_windows
    >>> from langchain_ripplemem.schemas import Conversation, Session, Turn
    >>> conv = Conversation(id="c", sessions=[
    ...     Session(id="S1", turns=[Turn(id=f"t{i}", speaker="A", text="hi") for i in range(4)])])
    >>> known = KnownTurns.of([], conv)
    >>> known.cited = {_key("S1", f"t{i}", known.current[_key("S1", f"t{i}")]) for i in range(3)}
    >>> [w.turn_ids for w in known.new_windows(make_windows(conv, size=2))]
    [['t2', 't3']]
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

from langchain_ripplemem.index.marks import is_suppressed
from langchain_ripplemem.schemas import Conversation, MemoryUnit, Turn
from langchain_ripplemem.write.extraction.extractor import ExtractionResult, Window

__all__ = ["FINGERPRINTS", "KnownTurns", "calls_model", "fingerprint", "marks_of", "new_work"]

# Unit metadata: the fingerprints of the unit's turns (speaker and text when it was made),
# comma-separated in the order of its turn ids.
FINGERPRINTS = "turn_fingerprints"


def calls_model(extractor: object) -> bool:
    """Whether ``extractor`` may word a turn differently each time (unless ``deterministic = True``).

    The rule-based extractor says so; a model's, or a user's own extractor, may not.
    """
    return not getattr(extractor, "deterministic", False)


def fingerprint(turn: Turn) -> str:
    """A short hash of what a turn says and who says it."""
    return hashlib.sha256(f"{turn.speaker}\x1f{turn.text}".encode()).hexdigest()[:16]


def _key(session_id: str, turn_id: str, mark: str = "") -> str:
    # Plain strings, not tuples: a long ingest holds one per turn, and strings cost the
    # garbage collector nothing (tuples kept through an ingest made its full passes come
    # about a third more often on LongMemEval's haystacks).
    return f"{session_id}\x1f{turn_id}\x1f{mark}"


def marks_of(unit: MemoryUnit) -> dict[str, str]:
    """``{turn id: fingerprint}`` a unit keeps (``{}`` for units written before fingerprints)."""
    kept = unit.metadata.get(FINGERPRINTS)
    return dict(zip(unit.source.turn_ids, kept.split(","), strict=False)) if isinstance(kept, str) and kept else {}


@dataclass
class KnownTurns:
    """The turns of one conversation its memories cite, each with the text they cite.

    Attributes:
        cited: keys of (session, turn, fingerprint) (:func:`_key`); fingerprint ``""`` for
            memories written before fingerprints were kept (known whatever the text).
        current: the key of each (session, turn) of the conversation being added -> its fingerprint.
        stale: unit id -> keys of the turns edited since it was made.
        rewords: a model's extractor: units restating known turns are dropped.
    """

    cited: set[str]
    current: dict[str, str]
    stale: dict[str, list[str]] = field(default_factory=dict)
    rewords: bool = True

    @classmethod
    def of(cls, units: Iterable[MemoryUnit], conversation: Conversation, rewords: bool = True) -> KnownTurns:
        """What ``units`` cite of ``conversation``, its turns as they read now, and what their edits made stale.

        A unit is stale when a turn it cites reads differently now (an edited message);
        the turns it cites are then not known through it. Suppressed units stay (audit).
        """
        current = {_key(s.id, t.id): fingerprint(t) for s in conversation.sessions for t in s.turns}
        cited: set[str] = set()
        stale: dict[str, list[str]] = {}
        for unit in units:
            if unit.source.conversation_id != conversation.id:
                continue
            session, marks = unit.source.session_id, marks_of(unit)
            # A turn is edited when the unit marked it and it is in this add, reading otherwise.
            edited = [_key(session, t) for t, mark in marks.items() if current.get(_key(session, t), mark) != mark]
            if edited and not is_suppressed(unit):
                stale[unit.id] = edited
                continue
            cited.update(_key(session, t, marks.get(t, "")) for t in unit.source.turn_ids)
        return cls(cited, current, stale, rewords)

    def replaced(self, units: Iterable[MemoryUnit]) -> list[str]:
        """The stale units whose edited turns ``units`` (what this write holds) cite as they read now.

        A stale unit whose new version failed to extract stays until the next add.
        """
        now = {_key(u.source.session_id, t) for u in units for t in u.source.turn_ids}
        return [uid for uid, edited in self.stale.items() if all(turn in now for turn in edited)]

    def knows(self, session_id: str, turn_id: str) -> bool:
        """Whether a memory cites this turn as it reads now."""
        now = self.current.get(_key(session_id, turn_id), "")
        return _key(session_id, turn_id, now) in self.cited or _key(session_id, turn_id) in self.cited

    def new_windows(self, windows: list[Window]) -> list[Window]:
        """The windows holding at least one turn no memory cites as it reads now."""
        return [w for w in windows if not all(self.knows(session.id, turn.id) for session, turn in w.items)]

    def kept(self, results: list[ExtractionResult]) -> list[ExtractionResult]:
        """``results``, each unit stamped with its turns' fingerprints, without those citing only known turns.

        The fingerprints are one string, in the order of the unit's turn ids.
        """
        def stamped(unit: MemoryUnit) -> MemoryUnit:
            s = unit.source.session_id
            marks = ",".join(self.current.get(_key(s, t), "") for t in unit.source.turn_ids)
            return unit.model_copy(update={"metadata": {**unit.metadata, FINGERPRINTS: marks}})

        def restates(unit: MemoryUnit) -> bool:
            turns = unit.source.turn_ids
            return self.rewords and bool(turns) and all(self.knows(unit.source.session_id, turn) for turn in turns)

        return [r.model_copy(update={"units": [stamped(u) for u in r.units if not restates(u)]}) for r in results]


def new_work(extractor: object, units: Iterable[MemoryUnit], conversation: Conversation,
             windows: list[Window]) -> tuple[list[Window], KnownTurns]:
    """The windows ``extractor`` must read, and what ``units`` (the conversation's memories) cite.

    A deterministic extractor reads every window (its ids dedupe what it made before);
    what is known still stamps its units and names the memories of edited turns.
    """
    known = KnownTurns.of(units, conversation, rewords=calls_model(extractor))
    return (known.new_windows(windows) if known.rewords else windows), known
