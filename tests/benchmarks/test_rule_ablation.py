"""The rule ablation table (scripts/rule_ablation.py): questions gained and lost per suite and split."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ablation():
    spec = importlib.util.spec_from_file_location("rule_ablation", ROOT / "scripts" / "rule_ablation.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows(found: dict[str, int]) -> dict[str, dict[str, float]]:
    """``by_category`` rows of 10 questions each with ``found[category]`` of them found at @10."""
    return {category: {"n_evaluated": 10, "recall_all@10": n / 10} for category, n in found.items()}


def _results(dataset: str, systems: dict[str, dict[str, dict[str, int]]]) -> dict[str, object]:
    return {"dataset": dataset, "levels": ["turn"], "suite": {"path": f"benchmarks/data/{dataset}_cases.json"},
            "systems": {name: {"by_category": {}, "splits": {split: {"by_category": _rows(found)}
                                                             for split, found in splits.items()}}
                        for name, splits in systems.items()},
            "questions": {name: [{"_id": "q1", "_split": "tune", "recall_all@10": 1.0, "tokens": 3}]
                          for name in systems}}


def test_each_removal_is_counted_in_questions_per_split_with_its_largest_category_move(ablation, tmp_path):
    path = tmp_path / "linked.json"
    path.write_text(json.dumps(_results("linked", {
        "ripplemem": {"tune": {"overall": 8, "work": 4}, "heldout": {"overall": 6, "work": 3}},
        "abl_a": {"tune": {"overall": 5, "work": 1}, "heldout": {"overall": 6, "work": 3}},
        "abl_b": {"tune": {"overall": 9, "work": 4}, "heldout": {"overall": 6, "work": 3}},
        "dense": {"tune": {"overall": 1, "work": 1}, "heldout": {"overall": 1, "work": 1}}})))
    lines = ablation.table([path]).splitlines()
    assert lines[0].startswith("| rule removed | linked tune (8/10) | linked heldout (6/10) |")
    assert lines[2] == "| `abl_a` | -3 | +0 | -3 linked tune work | moves more than one |"
    assert lines[3] == "| `abl_b` | +1 | +0 | 0 | candidate to remove |"
    assert len(lines) == 4  # baselines are no rule
    removed = ablation.table([path], removed={"abl_b"}).splitlines()
    assert removed[3] == "| `abl_b` | +1 | +0 | 0 | removed |" and removed[2] == lines[2]


def test_slim_keeps_what_tells_which_questions_moved_and_the_table_is_unchanged(ablation, tmp_path):
    path = tmp_path / "sets.json"
    path.write_text(json.dumps(_results("sets", {"ripplemem": {"tune": {"overall": 8}},
                                                  "abl_a": {"tune": {"overall": 7}}})))
    before = ablation.table([path])
    ablation.slim(path)
    assert json.loads(path.read_text())["questions"]["abl_a"] == [{"_id": "q1", "_split": "tune",
                                                                  "recall_all@10": 1.0}]
    assert ablation.table([path]) == before


def test_the_table_goes_between_the_markers_of_the_page(ablation, tmp_path):
    page = tmp_path / "page.md"
    page.write_text(f"before\n{ablation.START}\nold\n{ablation.END}\nafter\n")
    ablation.write_doc(page, "| new |")
    assert page.read_text() == f"before\n{ablation.START}\n| new |\n{ablation.END}\nafter\n"
    (tmp_path / "bare.md").write_text("no markers")
    with pytest.raises(ValueError, match="no <!-- rule-ablation:start -->"):
        ablation.write_doc(tmp_path / "bare.md", "| new |")


def test_the_page_s_table_is_what_its_command_makes_of_the_committed_files(ablation):
    page = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    removed = re.search(r"--removed (\S+)", page.split(ablation.START)[0].rsplit("## Which rules", 1)[1])
    made = ablation.table(sorted((ROOT / "results" / "ablation").glob("*.json")),
                          removed=removed.group(1).split(",") if removed else ())
    assert f"{ablation.START}\n{made}\n{ablation.END}" in page
