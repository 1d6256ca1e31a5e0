"""LoCoMo's observations as memory units: a recorded LLM extraction, written through the normal path.

LoCoMo ships, per session and speaker, short LLM-written restatements
("observations"), each tied to the dialogue turns it came from. The
:class:`ObservationExtractor` turns each observation into one unit (restatement
= its text, provenance = its turns, session and time from those turns,
participants and places found by the rule-based extractor's cue rules on the
text) and every turn that no observation covers into the rule-based
extractor's raw-turn unit. It is an ordinary
:class:`~langchain_ripplemem.write.extraction.extractor.Extractor`, so embedding,
linking and supersession run exactly as for any other units. Turn-level recall
maps a unit back to every turn of its provenance, so an observation drawn from
two turns covers both.

Example:
    >>> import json, pathlib, tempfile
    >>> record = {"sample_id": "conv-x", "qa": [], "conversation": {
    ...     "speaker_a": "Maya", "speaker_b": "Sam", "session_1_date_time": "10:00 am on 3 March, 2023",
    ...     "session_1": [{"speaker": "Maya", "dia_id": "D1:1", "text": "I took a pottery class."},
    ...                   {"speaker": "Sam", "dia_id": "D1:2", "text": "Where?"},
    ...                   {"speaker": "Maya", "dia_id": "D1:3", "text": "In Lisbon, with Priya."}]},
    ...     "observation": {"session_1_observation": {"Maya": [
    ...         ["Maya took a pottery class in Lisbon with Priya.", ["D1:1", "D1:3"]]]}}}
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "locomo.json"
    >>> _ = path.write_text(json.dumps([record]))
    >>> observations = load_locomo_observations(path)
    >>> from benchmarks.record_formats import conversation_from_locomo
    >>> from langchain_ripplemem.write.extraction.windows import make_windows
    >>> window = make_windows(conversation_from_locomo(record), size=40)[0]
    >>> units = ObservationExtractor(observations).extract(window, ("demo",)).units
    >>> [(u.restatement, u.source.turn_ids) for u in units]
    [('Maya took a pottery class in Lisbon with Priya.', ['D1:1', 'D1:3']), ('Sam: Where?', ['D1:2'])]
    >>> units[0].participants, units[0].locations
    (['Maya', 'Priya'], ['Lisbon'])

"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.loaders import BenchConversation, read_json
from benchmarks.metrics import normalise_evidence
from benchmarks.record_formats import conversation_from_locomo
from benchmarks.runner import PAPER_PRESETS, FreshMemories
from langchain_ripplemem.config import ExtractionConfig
from langchain_ripplemem.presets import preset
from langchain_ripplemem.schemas import MemoryUnit, Namespace, Provenance, Session, Turn, Usage
from langchain_ripplemem.write.extraction.extractor import ExtractionResult, Extractor, Window
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor

__all__ = ["Observation", "ObservationExtractor", "load_locomo_observations", "observation_memories"]


@dataclass(frozen=True)
class Observation:
    """One LoCoMo observation: who it is about, its text, and the turns it restates."""

    conversation_id: str
    session_id: str
    speaker: str
    text: str
    turn_ids: tuple[str, ...]


@dataclass
class Observations:
    """The observations of a file by conversation, with what could not be tied to a turn."""

    by_conversation: dict[str, list[Observation]] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)  # texts whose evidence names no turn
    unresolved: list[str] = field(default_factory=list)  # evidence ids that name no turn


def load_locomo_observations(path: str | Path) -> Observations:
    """Read every conversation's observations from a LoCoMo file, evidence ids resolved to turn ids.

    Raises:
        ValueError: if the file is not a LoCoMo list or a sample has no ``observation`` object.

    """
    records = read_json(path, "LoCoMo")
    if not isinstance(records, list):
        raise ValueError(f"{path}: expected a JSON list of LoCoMo samples")
    out = Observations()
    for index, record in enumerate(records):
        raw = record.get("observation") if isinstance(record, dict) else None
        if not isinstance(raw, dict):
            raise ValueError(f"{path}: sample {index} has no 'observation' object")
        conversation = conversation_from_locomo(record)
        session_of = {turn.id: session.id for session, turn in conversation.turns()}
        found = out.by_conversation.setdefault(conversation.id, [])
        for by_speaker in raw.values():
            for speaker, items in (by_speaker or {}).items():
                for text, evidence in items:
                    turn_ids, unresolved = normalise_evidence(evidence, session_of)
                    out.unresolved += unresolved
                    if not turn_ids or not str(text).strip():
                        out.dropped.append(str(text))
                        continue
                    found.append(Observation(conversation.id, session_of[turn_ids[0]], str(speaker),
                                             str(text).strip(), tuple(turn_ids)))
    return out


class ObservationExtractor:
    """Observations as units, plus raw-turn units for the turns no observation covers.

    An observation is written by the window holding its first turn (overlapping
    windows give it the same id, which the write path dedupes). Its cues come from
    the rule-based extractor run on the observation's text as a turn of its
    speaker, in a session of that session's observations and time.

    Args:
        observations: from :func:`load_locomo_observations` (or by conversation id).
        config: extraction settings of the rule-based extractor (default: ``ExtractionConfig()``).
        fallback: the extractor for uncovered turns (default: rule-based).

    """

    # Recorded: the same units every time (write/extraction/known_turns.py).
    deterministic = True

    def __init__(self, observations: Observations | Mapping[str, Sequence[Observation]], *,
                 config: ExtractionConfig | None = None, fallback: Extractor | None = None) -> None:
        loaded = observations if isinstance(observations, Observations) else \
            Observations({cid: list(items) for cid, items in observations.items()})
        self.observations = loaded
        self._covered = {cid: {t for o in items for t in o.turn_ids} for cid, items in loaded.by_conversation.items()}
        self._cues = RuleBasedExtractor(config=config, addressee=False)
        self.fallback = fallback or RuleBasedExtractor(config=config)
        self._sessions: dict[tuple[str, str], tuple[Session, dict[Observation, Turn]]] = {}

    def extract(self, window: Window, namespace: Namespace) -> ExtractionResult:
        """Units of the observations that start in ``window`` and of its uncovered turns."""
        started = time.perf_counter()
        cid = window.conversation_id
        covered = self._covered.get(cid, set())
        session_of = {turn.id: session for session, turn in window.items}
        units = [self._unit(o, session_of[o.turn_ids[0]], namespace)
                 for o in self.observations.by_conversation.get(cid, []) if o.turn_ids[0] in session_of]
        rest = tuple((session, turn) for session, turn in window.items if turn.id not in covered)
        raw = self.fallback.extract(window.model_copy(update={"items": rest}), namespace) if rest else None
        usage = Usage(seconds={"extract": time.perf_counter() - started})
        if raw is None:
            return ExtractionResult(units=units, usage=usage)
        return ExtractionResult(units=units + raw.units, failed=raw.failed, warnings=raw.warnings,
                                usage=usage.add(raw.usage))

    async def aextract(self, window: Window, namespace: Namespace) -> ExtractionResult:
        """Same as :meth:`extract` (pure CPU work)."""
        return self.extract(window, namespace)

    def describe(self) -> dict[str, Any]:
        """Counts for a results file: observations, turns they cover, multi-turn ones, dropped ones."""
        items = [o for group in self.observations.by_conversation.values() for o in group]
        return {
            "kind": "observations",
            "observations": len(items),
            "multi_turn_observations": sum(len(o.turn_ids) > 1 for o in items),
            "turns_covered": sum(len(turns) for turns in self._covered.values()),
            "dropped_observations": len(self.observations.dropped),
            "unresolved_evidence_ids": self.observations.unresolved,
            "raw_turn_units": "rule-based units of the turns no observation covers",
        }

    def evidence_coverage(self, conversations: Sequence[BenchConversation]) -> float | None:
        """Share of the questions' evidence turns that some observation covers (``None``: no evidence)."""
        evidence = [(bench.id, turn) for bench in conversations for q in bench.questions for turn in q.evidence]
        if not evidence:
            return None
        return sum(turn in self._covered.get(cid, set()) for cid, turn in evidence) / len(evidence)

    def _unit(self, observation: Observation, session: Session, namespace: Namespace) -> MemoryUnit:
        pseudo, turns = self._pseudo_session(observation.conversation_id, session)
        turn = turns[observation]
        # Context ordering (recall/smoothing.py) places the unit at its first turn.
        index = next(i for i, t in enumerate(session.turns) if t.id == observation.turn_ids[0])
        cue_units = self._cues.extract(
            Window(conversation_id=observation.conversation_id, index=0, items=((pseudo, turn),)), namespace).units
        first = cue_units[0]
        people = list(dict.fromkeys(p for u in cue_units for p in u.participants))
        places = list(dict.fromkeys(p for u in cue_units for p in u.locations))
        metadata = {**first.metadata, "extractor": "observations", "turn_index": index}
        metadata.pop("chunk", None)
        metadata.pop("chunks", None)
        source = Provenance(conversation_id=observation.conversation_id, session_id=observation.session_id,
                            turn_ids=list(observation.turn_ids))
        return MemoryUnit.create(namespace=namespace, restatement=observation.text, source=source,
                                 participants=people, locations=places, time=first.time, kind=first.kind,
                                 metadata=metadata)

    def _pseudo_session(self, cid: str, session: Session) -> tuple[Session, dict[Observation, Turn]]:
        """The session's observations as turns of their speakers, with the session's id and time.

        Built once per session and kept, so the rule extractor's per-session context is reused.
        """
        key = (cid, session.id)
        if key not in self._sessions:
            mine = [o for o in self.observations.by_conversation[cid] if o.session_id == session.id]
            turns = {o: Turn(id=f"obs{i}", speaker=o.speaker, text=o.text) for i, o in enumerate(mine)}
            self._sessions[key] = (Session(id=session.id, time=session.time, turns=list(turns.values())), turns)
        return self._sessions[key]


def observation_memories(path: str | Path) -> FreshMemories:
    """Fresh LoCoMo memories whose units come from the file's observations (see :class:`ObservationExtractor`)."""
    config = preset(PAPER_PRESETS["locomo"])[0].extraction  # the write settings FreshMemories("locomo") uses
    return FreshMemories("locomo", extractor=ObservationExtractor(load_locomo_observations(path), config=config))

