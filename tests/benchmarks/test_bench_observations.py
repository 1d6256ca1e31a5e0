"""LoCoMo observations as memory units, through the normal write path."""

from __future__ import annotations

import json

import pytest

from benchmarks.cli import bench_main
from benchmarks.loaders import load_locomo
from benchmarks.metrics import turns_covered_at_k
from benchmarks.observations import (
    Observation,
    ObservationExtractor,
    load_locomo_observations,
    observation_memories,
)
from benchmarks.runner import FreshMemories, run_benchmark
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.presets import PAPER_WRITE
from tests.unit_tests.conftest import BagOfWordsEmbeddings

SAMPLE = {
    "sample_id": "conv-90",
    "conversation": {
        "speaker_a": "Ravi", "speaker_b": "Ines",
        "session_1_date_time": "9:15 am on 1 June, 2023",
        "session_1": [
            {"speaker": "Ravi", "dia_id": "D1:1", "text": "I adopted a grey cat yesterday."},
            {"speaker": "Ines", "dia_id": "D1:2", "text": "Congrats! What is her name?"},
            {"speaker": "Ravi", "dia_id": "D1:3", "text": "Pixel. She already sleeps on my keyboard."},
            {"speaker": "Ines", "dia_id": "D1:4", "text": "Ha, a true programmer's cat."},
        ],
        "session_2_date_time": "4:30 pm on 20 June, 2023",
        "session_2": [
            {"speaker": "Ines", "dia_id": "D2:1", "text": "I am moving to Porto in August."},
            {"speaker": "Ravi", "dia_id": "D2:2", "text": "Porto! You will love the tiles."},
        ],
    },
    "observation": {
        "session_1_observation": {
            "Ravi": [["Ravi adopted a grey cat named Pixel on 31 May 2023 with Ines cheering.", ["D1:1", "D1:3"]]],
            "Ines": [["Ines joked that Pixel is a programmer's cat.", "D1:4"],
                     ["Ines asked about something unknown.", "D9:9"]],
        },
        "session_2_observation": {
            "Ines": [["Ines is moving to Porto in August.", "D2:1"]],
            "Ravi": [],
        },
    },
    "qa": [
        {"question": "What is the name of Ravi's cat?", "answer": "Pixel", "evidence": ["D1:1", "D1:3"],
         "category": 1},
        {"question": "Where is Ines moving?", "answer": "Porto", "evidence": ["D2:1"], "category": 4},
    ],
}


@pytest.fixture
def locomo_file(tmp_path):
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([SAMPLE]), encoding="utf-8")
    return path


def test_load_resolves_evidence_and_keeps_what_it_cannot(locomo_file):
    loaded = load_locomo_observations(locomo_file)
    items = loaded.by_conversation["conv-90"]
    assert [o.turn_ids for o in items] == [("D1:1", "D1:3"), ("D1:4",), ("D2:1",)]
    assert [o.session_id for o in items] == ["session_1", "session_1", "session_2"]
    assert items[0].speaker == "Ravi"
    assert loaded.unresolved == ["D9:9"] and loaded.dropped == ["Ines asked about something unknown."]


def test_observation_units_go_through_the_write_path(locomo_file):
    conversation = load_locomo(locomo_file)[0].conversation
    extractor = ObservationExtractor(load_locomo_observations(locomo_file))
    # Five units are too few for rare-cue edges: the paper's structural edges here.
    memory = RippleMem(BagOfWordsEmbeddings(), extractor=extractor, write_config=PAPER_WRITE)
    report = memory.add_conversation(conversation, namespace=("obs",))
    units = memory.list_units(("obs",))
    by_turns = {tuple(u.source.turn_ids): u for u in units}
    # three observations, and raw-turn units for the turns none covers
    assert set(by_turns) == {("D1:1", "D1:3"), ("D1:4",), ("D2:1",), ("D1:2",), ("D2:2",)}
    assert report.new_units == len(units) == 5
    cat = by_turns[("D1:1", "D1:3")]
    assert cat.restatement.startswith("Ravi adopted a grey cat")
    assert cat.source.session_id == "session_1" and cat.metadata["extractor"] == "observations"
    # A grey cat called Pixel is a pet: a name the unit keeps, not a participant (issue 36).
    assert {"Ravi", "Ines"} <= set(cat.participants) and "Pixel" not in cat.participants
    assert cat.metadata["turn_index"] == 0 and cat.time is not None
    assert cat.time.start.date().isoformat() == "2023-05-31"
    assert by_turns[("D2:1",)].locations == ["Porto"]
    assert by_turns[("D1:2",)].metadata["extractor"] == "rules"
    assert by_turns[("D1:2",)].restatement.startswith("Ines: Congrats!")
    # a multi-turn unit covers every turn it came from
    assert turns_covered_at_k([cat], 1) == {"D1:1", "D1:3"}
    assert memory.edges(("obs",))  # linked as usual


def test_overlapping_windows_write_each_observation_once(locomo_file):
    conversation = load_locomo(locomo_file)[0].conversation
    extractor = ObservationExtractor(load_locomo_observations(locomo_file))
    from langchain_ripplemem.write.extraction.windows import make_windows

    ids = [u.id for w in make_windows(conversation, 3, 2) for u in extractor.extract(w, ("n",)).units]
    assert len(set(ids)) == 5 and len(ids) > 5  # windows repeat units with the same ids


def test_extractor_accepts_a_plain_mapping_and_reports_evidence_coverage(locomo_file):
    extractor = ObservationExtractor({"conv-90": [Observation("conv-90", "session_1", "Ravi", "Ravi has a cat.",
                                                              ("D1:3",))]})
    assert extractor.describe()["observations"] == 1 and extractor.describe()["turns_covered"] == 1
    assert extractor.evidence_coverage(load_locomo(locomo_file)) == 1 / 3  # of D1:1, D1:3, D2:1


def test_bench_on_observation_units_scores_turns(locomo_file):
    factory = observation_memories(locomo_file)
    assert isinstance(factory, FreshMemories)
    factory.embeddings = BagOfWordsEmbeddings()
    res = run_benchmark("locomo", load_locomo(locomo_file), ["ripplemem", "bm25"], [1, 5],
                        memory_factory=factory, progress=False)
    overall = res["systems"]["bm25"]["by_category"]["overall_1_4"]
    # The cat question's two evidence turns come back as one observation unit at rank 1.
    assert overall["n"] == 2 and overall["recall_all@1"] == 1.0
    assert res["conversations"][0]["units"] == 5


def test_cli_locomo_with_observation_units(locomo_file, tmp_path, monkeypatch):
    from benchmarks import observations

    def offline(path):
        factory = observation_memories(path)
        factory.embeddings = BagOfWordsEmbeddings()
        return factory

    monkeypatch.setattr(observations, "observation_memories", offline)
    out = tmp_path / "r.json"
    code = bench_main(["locomo", str(locomo_file), "--units", "observations", "--systems", "bm25,dense",
                       "--k", "1,5", "--out", str(out), "--no-progress", "--md", str(tmp_path / "t.md"),
                       "--no-embedding-cache"])
    assert code == 0
    res = json.loads(out.read_text(encoding="utf-8"))
    assert res["memory_units"]["kind"] == "observations" and res["memory_units"]["observations"] == 3
    assert res["memory_units"]["multi_turn_observations"] == 1
    assert res["memory_units"]["evidence_turns_covered"] == 1.0  # D1:1, D1:3 and D2:1 all have observations
    assert "cover 100.0 % of the questions' evidence turns" in (tmp_path / "t.md").read_text(encoding="utf-8")


def test_load_rejects_a_sample_without_observations(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{k: v for k, v in SAMPLE.items() if k != "observation"}]), encoding="utf-8")
    with pytest.raises(ValueError, match="sample 0 has no 'observation' object"):
        load_locomo_observations(path)
