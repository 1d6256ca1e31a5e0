"""Precision and recall of identifying cues against a hand-labelled sample (issue 13, item 1).

The sample (``benchmarks/data/cue_sample.json``, 151 turns) labels the shipped sample
conversation by turn id and adds dialogue written for it. Both extractors run
over the same turns through the rule-based extractor:

* ``before``: the cues the offline extractor had before identifying cues
  (participants other than the speaker, and locations) -- names only;
* ``identifying``: ``MemoryUnit.cues`` (names) and ``MemoryUnit.topics``; a
  topic word that another unit holds as a name counts as a name, as in recall.

Cues are compared as keys (:func:`~langchain_ripplemem.text.identifying.cue_key`:
lower case, stemmed word by word), micro-averaged over turns, for names alone and
for names and topic words together.

    python -m benchmarks.measurements.cue_quality --out results/cue_quality.json
"""

from __future__ import annotations

import argparse
import json
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks.measurements.output import emit
from benchmarks.results import run_metadata
from langchain_ripplemem.cli.demo import load_sample
from langchain_ripplemem.schemas import Conversation, MemoryUnit
from langchain_ripplemem.text.identifying import cue_key
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor
from langchain_ripplemem.write.extraction.windows import make_windows

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "cue_sample.json"


def _units(conversation: Conversation) -> dict[str, MemoryUnit]:
    extractor = RuleBasedExtractor()
    units: dict[str, MemoryUnit] = {}
    for window in make_windows(conversation, 40, 2):
        for unit in extractor.extract(window, ("cue-quality",)).units:
            units.setdefault(unit.source.turn_ids[0], unit)
    return units


def _extra_conversation(turns: list[dict[str, Any]]) -> Conversation:
    return Conversation.model_validate({"id": "extra", "sessions": [{
        "id": "X", "time": datetime(2026, 1, 12, 18, tzinfo=timezone.utc).isoformat(),
        "turns": [{"id": f"X:{i + 1}", "speaker": t["speaker"], "text": t["text"]} for i, t in enumerate(turns)]}]})


def _score(pairs: list[tuple[set[str], set[str]]]) -> dict[str, float | int]:
    tp = sum(len(gold & got) for gold, got in pairs)
    fp = sum(len(got - gold) for gold, got in pairs)
    fn = sum(len(gold - got) for gold, got in pairs)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 3), "recall": round(recall, 3), "f1": round(f1, 3),
            "tp": tp, "fp": fp, "fn": fn}


def main() -> None:
    """Read the command line, measure, print the results and write them to ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sample", default=str(SAMPLE))
    parser.add_argument("--out", default=None, help="results JSON (default: stdout)")
    args = parser.parse_args()
    labels = json.loads(Path(args.sample).read_text("utf-8"))
    conversation, _ = load_sample()
    started = time.perf_counter()
    units = {**_units(conversation), **_units(_extra_conversation(labels["extra"]))}
    seconds = time.perf_counter() - started
    gold = {**labels["sample"], **{f"X:{i + 1}": t for i, t in enumerate(labels["extra"])}}
    # Recall counts a topic word as a name when any unit of the namespace holds it as one
    # (cue_names.NameCounts): "Leo did" opens a sentence, "with Leo" elsewhere names him.
    known = {key for unit in units.values() for key in unit.cues or ()}
    rows: dict[str, dict[str, list[tuple[set[str], set[str]]]]] = {
        "before": {"names": [], "all": []}, "identifying": {"names": [], "all": []}}
    for turn_id, label in gold.items():
        unit = units[turn_id]
        names = {cue_key(v.removeprefix("The ")) for v in label["names"]}
        every = names | {cue_key(v) for v in label["topics"]}
        speaker = unit.metadata.get("speaker")
        before = {cue_key(v) for v in [*unit.participants, *unit.locations] if v != speaker}
        before -= {cue_key(s) for s in labels["speakers"]["sample"] + labels["speakers"]["extra"]}
        mine_all = set(unit.cues or ()) | set(unit.topics or ())
        mine_names = set(unit.cues or ()) | (set(unit.topics or ()) & known)
        rows["before"]["names"].append((names, before))
        rows["before"]["all"].append((every, before))
        rows["identifying"]["names"].append((names, mine_names))
        rows["identifying"]["all"].append((every, mine_all))
    result = {
        "sample": "benchmarks/data/cue_sample.json", "turns": len(gold),
        "extract_seconds": round(seconds, 3),
        "extractors": {name: {part: _score(pairs) for part, pairs in parts.items()} for name, parts in rows.items()},
        **run_metadata(None),
    }
    emit(result, args.out)


if __name__ == "__main__":
    main()
