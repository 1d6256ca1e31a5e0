"""``python -m benchmarks summary``: every suite's results in one table, and where the default loses to plain top-k."""

from __future__ import annotations

import json

import pytest

from benchmarks.cli import bench_main
from benchmarks.summary import summarise, summary_markdown


def _system(by_category: dict, p50: float, splits: dict | None = None) -> dict:
    return {"by_category": by_category, "splits": splits or {}, "query_ms_p50": p50}


def _group(n: int, **recall: float) -> dict:
    return {"n_evaluated": n, **{f"recall_all@{k.removeprefix('at')}": v for k, v in recall.items()}}


def test_a_loss_of_two_questions_in_one_category_is_listed_and_one_question_is_not():
    run = {"k": [10], "levels": ["turn"], "systems": {
        "ripplemem": _system({"a": _group(10, at10=0.5), "b": _group(10, at10=0.9), "overall": _group(20, at10=0.7)},
                             4.0),
        "dense": _system({"a": _group(10, at10=0.7), "b": _group(10, at10=1.0), "overall": _group(20, at10=0.85)},
                         1.0),
        "hybrid_rrf": _system({"a": _group(10, at10=0.5), "b": _group(10, at10=0.9),
                               "overall": _group(20, at10=0.7)}, 2.0)}}
    summary = summarise({"toy": run})
    lost = {(loss["category"], loss["baseline"]): loss["questions"] for loss in summary["losses"]}
    assert lost == {("a", "dense"): 2.0, ("overall", "dense"): 3.0}  # b: one question, within the rule
    ours = next(row for row in summary["rows"] if row["system"] == "ripplemem")
    assert ours["p50_vs_hybrid_rrf"] == 2.0 and ours["n"] == 20 and ours["recall_all@10"] == 0.7


def test_a_session_level_loss_to_the_session_documents_is_listed():
    def system(session_at5: float) -> dict:
        return _system({"multi": {"n_evaluated": 9, "n_session_evaluated": 10, "recall_all@10": 0.5,
                                  "session_recall_all@5": session_at5}}, 1.0)

    run = {"k": [5, 10], "levels": ["turn", "session"], "systems": {
        "ripplemem": system(0.6), "session_dense": system(0.8), "hybrid_rrf": system(0.7)}}
    losses = summarise({"lme": run})["losses"]
    # Two questions of ten below the session documents: listed; one below hybrid RRF: within the rule.
    assert [(loss["metric"], loss["baseline"], loss["questions"]) for loss in losses] == [
        ("session_recall_all@5", "session_dense", 2.0)]
    assert "| lme | all | multi | session_recall_all@5 | session_dense |" in summary_markdown(summarise({"lme": run}))


def test_each_split_gets_its_rows_and_session_levels_their_columns():
    tune = {"by_category": {"overall": {"n_evaluated": 3, "recall_all@5": 1.0, "session_recall_all@5": 1.0}}}
    run = {"k": [5], "levels": ["turn", "session"], "systems": {
        "ripplemem": _system({"overall": {"n_evaluated": 5, "recall_all@5": 0.8, "session_recall_all@5": 0.6}}, 1.0,
                             splits={"tune": tune, "heldout": tune})}}
    summary = summarise({"lme": run})
    assert [row["split"] for row in summary["rows"]] == ["all", "tune", "heldout"]
    assert summary["rows"][0]["session_recall_all@5"] == 0.6
    markdown = summary_markdown(summary)
    assert "| lme | tune | ripplemem | 3 | 100.0 | 100.0 | - |" in markdown and "Nowhere." in markdown


def test_files_made_under_different_runtimes_are_named_as_a_mix():
    def run(onnxruntime: str) -> dict:
        return {"k": [10], "runtime_versions": {"onnxruntime": onnxruntime, "numpy": "2.4.6"},
                "systems": {"dense": _system({"overall": _group(2, at10=1.0)}, 1.0)}}

    same = summary_markdown(summarise({"a": run("1.32.0"), "b": run("1.32.0")}))
    assert "Runtime of every file: onnxruntime 1.32.0, numpy 2.4.6." in same
    mixed = summary_markdown(summarise({"a": run("1.32.0"), "b": run("1.30.0")}))
    assert "different runtimes" in mixed and "`b`: onnxruntime 1.30.0, numpy 2.4.6" in mixed


@pytest.mark.slow
def test_the_command_summarises_a_real_run_and_refuses_a_file_that_is_not_results(tmp_path, capsys):
    results, out, md = tmp_path / "multilingual.json", tmp_path / "summary.json", tmp_path / "summary.md"
    assert bench_main(["multilingual", "--limit", "2", "--systems", "ripplemem,dense,hybrid_rrf", "--k", "5,10",
                       "--no-embedding-cache", "--no-progress", "--out", str(results)]) == 0
    assert bench_main(["summary", str(results), "--out", str(out), "--md", str(md)]) == 0
    summary = json.loads(out.read_text(encoding="utf-8"))
    run = json.loads(results.read_text(encoding="utf-8"))
    row = next(r for r in summary["rows"] if (r["split"], r["system"]) == ("all", "dense"))
    assert row["recall_all@10"] == run["systems"]["dense"]["by_category"]["overall"]["recall_all@10"]
    assert "| multilingual | all | hybrid_rrf |" in md.read_text(encoding="utf-8")
    bad = tmp_path / "notes.json"
    bad.write_text('{"rows": []}', encoding="utf-8")
    assert bench_main(["summary", str(bad)]) == 2
    assert "notes.json: not a benchmark results file" in capsys.readouterr().err
