from __future__ import annotations

import datetime
import hashlib
import json

import pytest

from benchmarks import runner
from benchmarks.answering import JUDGE_SYSTEM_PROMPT, parse_verdict
from benchmarks.cli import bench_main
from benchmarks.loaders import load_locomo, load_longmemeval
from benchmarks.report import plot, write_markdown
from benchmarks.runner import run_benchmark
from benchmarks.systems import SYSTEM_NAMES, Retrieved, make_system
from langchain_ripplemem.config import RecallConfig
from tests.benchmarks.fixtures.bench_fakes import (
    LOCOMO_TINY,
    LONGMEMEVAL_TINY,
    FakeMemory,
    ScriptedChatModel,
    locomo_adapter,
    longmemeval_adapter,
    unit,
)

LOCOMO_CATS = ["multi-hop", "temporal", "open-domain", "single-hop", "overall_1_4", "adversarial"]


@pytest.fixture
def locomo():
    return load_locomo(LOCOMO_TINY, adapter=locomo_adapter)


@pytest.fixture
def lme():
    return load_longmemeval(LONGMEMEVAL_TINY, adapter=longmemeval_adapter)


class Factory:
    """Counts memories; keeps them for inspection."""

    def __init__(self):
        self.made: list[FakeMemory] = []

    def __call__(self):
        self.made.append(FakeMemory())
        return self.made[-1]


def test_locomo_run_with_every_system_has_the_design_shape(locomo):
    factory = Factory()
    res = run_benchmark("locomo", locomo, list(SYSTEM_NAMES), [1, 2, 5], memory_factory=factory,
                        progress=False, dataset_path=str(LOCOMO_TINY))
    assert res["dataset"] == "locomo" and res["unit"] == "turn" and res["k"] == [1, 2, 5]
    assert set(res["systems"]) == set(SYSTEM_NAMES)
    assert len(factory.made) == 2 and all(m.closed for m in factory.made)
    for name, entry in res["systems"].items():
        assert list(entry["by_category"]) == LOCOMO_CATS, name
        overall = entry["by_category"]["overall_1_4"]
        assert overall["n"] == 9 and overall["n_evaluated"] == 8
        assert entry["by_category"]["adversarial"]["n"] == 2
        for k in (1, 2, 5):
            assert 0.0 <= overall[f"recall_all@{k}"] <= overall[f"recall_frac@{k}"] <= 1.0
            assert overall[f"units_mean@{k}"] <= k
        assert set(entry["splits"]) == {"tune", "heldout"}
        assert entry["splits"]["heldout"]["by_category"]["overall_1_4"]["n"] == 2
        assert entry["splits"]["tune"]["by_category"]["overall_1_4"]["n"] == 7
        assert entry["query_ms_p50"] >= 0 and entry["query_ms_p95"] >= entry["query_ms_p50"]
        assert entry["build_seconds"] == res["build"]["seconds_total"]
        assert entry["n_questions"] == 11
    assert res["systems"]["bm25"]["llm_calls"] == 0
    assert res["n_questions"] == 11 and res["n_questions_evaluated"] == 10
    assert res["build"]["llm_calls"] == 2 and res["build"]["tokens"] == 20
    sha = hashlib.sha256(LOCOMO_TINY.read_bytes()).hexdigest()
    assert res["dataset_file"] == {"path": str(LOCOMO_TINY), "sha256": sha}
    assert res["date"] and "package_version" in res and "git_commit" in res
    assert res["splits"]["heldout"] == ["conv-48", "conv-49", "conv-50"]
    assert [c["split"] for c in res["conversations"]] == ["tune", "heldout"]
    assert {(u["question_id"], tuple(u["unresolved"])) for u in res["unresolved_evidence"]} == {
        ("conv-26:q3", ("D",)), ("conv-26:q4", ("D7:4",))}
    assert res["n_unresolved_evidence"] == 2
    assert res["no_evidence_questions"] == ["conv-26:q5"]
    cfg = res["config"]["systems"]
    assert cfg["no_expansion"]["config"]["controller"]["max_rounds"] == 0
    assert cfg["no_structural"]["config"]["expansion"]["expand_structural"] is False
    assert cfg["no_planning"]["config"]["controller"]["use_planning"] is False
    context = {name: cfg[name]["config"]["context"] for name in ("no_context", "ripplemem")}
    assert context["no_context"]["weight"] == 0.0 < context["ripplemem"]["weight"]
    assert context["no_context"]["weight_2"] == 0.0 < context["ripplemem"]["weight_2"]
    assert cfg["no_cue_bonus"]["config"]["scoring"]["speaker_bonus"] == \
        cfg["no_cue_bonus"]["config"]["scoring"]["time_bonus"] == 0.0
    assert cfg["hybrid_rrf"] == {"kind": "rrf", "views": ["lexical", "semantic"], "rrf_k": 60,
                                 "depth": 100}
    assert res["answer"] is None
    json.dumps(res)  # JSON-ready


def test_recall_systems_call_recall_with_max_k_and_ablation_configs(locomo):
    factory = Factory()
    run_benchmark("locomo", locomo[:1], ["ripplemem", "no_expansion"], [3, 10],
                  memory_factory=factory, progress=False, limit=2,
                  recall_config=RecallConfig(views={"semantic_k": 7}))
    calls = factory.made[0].recall_calls
    assert len(calls) == 4  # 2 questions x 2 systems, one retrieval each at max k
    assert {c["k"] for c in calls} == {10}
    assert all(c["config"].assembly.top_k == 10 and c["config"].views.semantic_k == 7 for c in calls)
    rounds = RecallConfig().controller.max_rounds
    # Interleaved per question, in an order rotated per question: the second question runs no_expansion first.
    assert [c["config"].controller.max_rounds for c in calls] == [rounds, 0, 0, rounds]


def test_hybrid_rrf_uses_depth_100_lists():
    memory = FakeMemory()
    system = make_system("hybrid_rrf", memory)
    memory.units[("c",)] = [unit(("c",), "maya likes tea", ["D1:1"])]
    got = system.retrieve("maya tea", ("c",), 5)
    assert [u.restatement for u in got.units] == ["maya likes tea"]
    assert memory.index.calls == [("lexical", 100), ("semantic", 100)]
    with pytest.raises(ValueError, match="unknown system"):
        make_system("nope", memory)


class FixedSystem:
    """Returns the conversation's units in a fixed order, counting calls."""

    def __init__(self, name, memory, order):
        self.name, self.memory, self.order, self.ks = name, memory, order, []

    def retrieve(self, question, namespace, k):
        self.ks.append(k)
        by_turn = {u.source.turn_ids[0]: u for u in self.memory.units[namespace]
                   if len(u.source.turn_ids) == 1}
        return Retrieved(units=[by_turn[t] for t in self.order if t in by_turn][:k],
                         llm_calls=2, tokens=30)


def test_smaller_k_are_prefixes_of_one_retrieval(locomo):
    made = []

    def system_factory(name, memory, config):
        made.append(FixedSystem(name, memory, ["D2:2", "D1:1", "D1:3", "D2:1", "D2:3", "D1:2"]))
        return made[-1]

    res = run_benchmark("locomo", locomo[:1], ["fixed"], [1, 2, 4], memory_factory=FakeMemory,
                        progress=False, system_factory=system_factory, keep_questions=True)
    assert made[0].ks == [4] * 8
    rows = {r["_id"]: r for r in res["questions"]["fixed"]}
    q0 = rows["conv-26:q0"]  # evidence D1:1 at rank 2
    assert [q0[f"recall_all@{k}"] for k in (1, 2, 4)] == [0.0, 1.0, 1.0]
    q2 = rows["conv-26:q2"]  # evidence D2:1 (rank 4) + D1:3 (rank 3)
    assert [q2[f"recall_frac@{k}"] for k in (1, 2, 4)] == [0.0, 0.0, 1.0]
    q7 = rows["conv-26:q7"]  # D1:1 + D1:2 (rank 6, beyond k=4)
    assert (q7["recall_all@4"], q7["recall_frac@4"]) == (0.0, 0.5)
    assert rows["conv-26:q5"]["recall_all@4"] is None  # no evidence: not scored
    assert q0["units_mean@2"] == 2 and q0["context_tokens_mean@1"] > 0
    entry = res["systems"]["fixed"]
    assert entry["llm_calls"] == 2 and entry["tokens"] == 30
    single = entry["by_category"]["single-hop"]
    assert single["n"] == 3 and single["recall_all@1"] == pytest.approx(1 / 3)  # q4: D2:2 at 1


def test_longmemeval_questions_reach_recall_with_their_asker_and_day(lme):
    # LongMemEval's questions are the user's, asked on question_date: recollection gets both
    # (the day: evidence sessions can be stamped later on the question's own day); LoCoMo's neither.
    factory = Factory()
    run_benchmark("longmemeval", lme[:1], ["ripplemem", "bm25"], [3], memory_factory=factory, progress=False)
    (call,) = factory.made[0].recall_calls
    assert call["asker"] == "user" and call["as_of"] == datetime.date(2023, 6, 1)
    factory = Factory()
    run_benchmark("locomo", load_locomo(LOCOMO_TINY, adapter=locomo_adapter)[:1], ["ripplemem"], [3],
                  memory_factory=factory, progress=False, limit=1)
    assert set(factory.made[0].recall_calls[0]) == {"query", "k", "config"}


def test_longmemeval_run_reports_turn_and_session_levels(lme):
    res = run_benchmark("longmemeval", lme, ["bm25", "dense"], [1, 3], memory_factory=FakeMemory,
                        progress=False)
    assert res["levels"] == ["turn", "session"]
    cats = res["systems"]["bm25"]["by_category"]
    assert list(cats) == ["single-session-user", "multi-session", "overall", "abstention"]
    assert cats["overall"]["n"] == 2 and cats["abstention"]["n"] == 1
    assert cats["abstention"]["n_evaluated"] == 0 and cats["abstention"]["n_session_evaluated"] == 1
    assert cats["abstention"]["recall_all@3"] is None
    assert cats["abstention"]["session_recall_all@3"] is not None
    assert 0 <= cats["multi-session"]["session_recall_frac@3"] <= 1
    assert res["systems"]["bm25"]["splits"] == {} and res["splits"] == {}


def test_answer_part_scores_f1_bleu_and_judge(locomo):
    def reply(messages):
        if messages[0].content == JUDGE_SYSTEM_PROMPT:
            return "CORRECT" if "Gold answer: Lisbon" in messages[1].content else "WRONG"
        return "Lisbon"

    model = ScriptedChatModel(reply=reply)
    res = run_benchmark("locomo", locomo, ["bm25", "dense"], [2], memory_factory=FakeMemory,
                        progress=False, answer_model=model, answer_systems=["bm25"],
                        keep_questions=True)
    assert len(model.calls) == 2 * 11  # answer + judge, bm25 only
    rows = {r["_id"]: r for r in res["questions"]["bm25"]}
    assert rows["conv-26:q0"]["f1"] == 1.0 and rows["conv-26:q0"]["judge"] == 1.0
    assert rows["conv-26:q1"]["f1"] == 0.0 and rows["conv-26:q1"]["judge"] == 0.0
    assert rows["conv-26:q6"]["f1"] is None  # adversarial: judged only
    assert "No information" not in model.calls[0][1].content
    assert "Memories:" in model.calls[0][1].content
    single = res["systems"]["bm25"]["by_category"]["single-hop"]
    assert single["n_answered"] == 5 and single["judge"] == pytest.approx(1 / 5)
    assert "n_answered" not in res["systems"]["dense"]["by_category"]["single-hop"]
    answer = res["answer"]
    assert answer["model"] == answer["judge_model"] == "scripted-fake"
    assert answer["judge_prompt"]["system"] == JUDGE_SYSTEM_PROMPT
    assert answer["systems"] == ["bm25"] and answer["k"] == 2
    md = write_markdown_from(res)
    assert "### Answers (%)" in md and "scripted-fake" in md


def write_markdown_from(res):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmpdir:
        path = Path(tmpdir) / "r.json"
        path.write_text(json.dumps(res), encoding="utf-8")
        return write_markdown([path])


def test_parse_verdict():
    assert parse_verdict("correct") is True
    assert parse_verdict("WRONG. The answer was not CORRECT") is False
    assert parse_verdict("maybe") is None


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"dataset": "nope"}, "unknown dataset"),
        ({"systems": []}, "systems is empty"),
        ({"systems": ["bm25", "bm25"]}, "duplicates"),
        ({"ks": [0, 5]}, "ks must be positive"),
        ({"limit": 0}, "limit must be"),
        ({"answer_model": object(), "answer_systems": ["dense"]}, "not among systems"),
        ({"answer_model": object(), "answer_k": 6}, "answer_k must be"),
    ],
)
def test_run_benchmark_validates_arguments(locomo, kwargs, match):
    args = {"dataset": "locomo", "systems": ["bm25"], "ks": [5]} | kwargs
    with pytest.raises(ValueError, match=match):
        run_benchmark(args.pop("dataset"), locomo, memory_factory=FakeMemory, progress=False,
                      **args)


def test_report_tables_plot_and_cli(locomo, tmp_path):
    res = run_benchmark("locomo", locomo, ["ripplemem", "bm25", "hybrid_rrf"], [1, 5],
                        memory_factory=FakeMemory, progress=False)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(res), encoding="utf-8")
    md = write_markdown([path])
    for text in ("### recall_all@1 (%)", "### recall_frac@5 (%)", "multi-hop (n=1)",
                 "overall_1_4 (n=8/9)", "| hybrid_rrf |", "1.00x", "Held-out vs tune",
                 "Context size per question (overall_1_4)", "Build (shared by all systems)",
                 "`conv-26:q3`"):
        assert text in md, text
    pytest.importorskip("matplotlib")
    png = plot(res, tmp_path / "plots" / "r.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md_out = tmp_path / "docs" / "tables.md"
    assert bench_main(["report", str(path), "--md", str(md_out),
                       "--plot", str(tmp_path / "r2.png")]) == 0
    assert md_out.read_text(encoding="utf-8") == md
    assert (tmp_path / "r2.png").is_file()


def test_report_rejects_non_results(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text("[]", encoding="utf-8")
    with pytest.raises(ValueError, match="not a benchmark results file"):
        write_markdown([bad])
    assert bench_main(["report", str(bad)]) == 2


def test_cli_runs_locomo_end_to_end(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(runner, "default_memory_factory", lambda dataset: FakeMemory)
    out, png = tmp_path / "r.json", tmp_path / "r.png"
    code = bench_main(["locomo", str(LOCOMO_TINY), "--systems", "bm25,dense", "--k", "1,3", "--no-embedding-cache",
                       "--out", str(out), "--limit", "1", "--questions", "3", "--no-progress",
                       "--md", str(tmp_path / "t.md")]
                      + (["--plot", str(png)] if _has_matplotlib() else []))
    assert code == 0
    res = json.loads(out.read_text(encoding="utf-8"))
    assert res["n_questions"] == 3 and res["k"] == [1, 3] and list(res["systems"]) == [
        "bm25", "dense"]
    assert "### recall_all@3" in (tmp_path / "t.md").read_text(encoding="utf-8")
    assert bench_main(["locomo", str(LOCOMO_TINY), "--systems", "bm25,nope"]) == 2
    assert bench_main(["locomo", str(LOCOMO_TINY), "--k", "a,b"]) == 2
    assert "unknown systems" in capsys.readouterr().err


def _has_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def test_plot_without_matplotlib_says_how_to_install(monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"langchain-ripplemem\[bench\]"):
        plot({"dataset": "locomo", "k": [5], "systems": {}}, tmp_path / "x.png")


def test_ablation_factories_reject_non_ablations():
    from benchmarks.systems import ABLATIONS, ablation

    assert set(ABLATIONS) == {"no_expansion", "no_structural", "no_planning", "no_context", "no_cue_bonus"}
    for name in ("bm25", "ripplemem", "nope"):
        with pytest.raises(ValueError, match="not an ablation"):
            ablation(name)


def test_the_run_freezes_what_it_holds_before_building_and_unfreezes_at_its_end(locomo):
    # Latency is the package's: the collector's full passes must not walk the harness's dataset.
    import gc

    seen = []

    class Watching(FixedSystem):
        def retrieve(self, question, namespace, k):
            seen.append(gc.get_freeze_count())
            return super().retrieve(question, namespace, k)

    assert gc.get_freeze_count() == 0
    run_benchmark("locomo", locomo[:1], ["fixed"], [1], memory_factory=FakeMemory, progress=False,
                  system_factory=lambda name, memory, config: Watching(name, memory, ["D1:1"]))
    assert seen and min(seen) > 0  # every query ran with the dataset frozen
    assert gc.get_freeze_count() == 0  # and a caller's process is as it was


def test_a_variant_changes_named_constants_only_while_it_recalls():
    from benchmarks.systems import CONSTANT_VARIANTS, patched_constants
    from langchain_ripplemem.recall import assembly, bridging, controller, set_questions

    seen = []

    class Watching(FakeMemory):
        def recall(self, query, **kwargs):
            seen.append((bridging.BRIDGE_FLOOR, assembly.BRIDGE_FLOOR, controller.BRIDGE_FLOOR,
                         set_questions.KEEP_OWN))
            return super().recall(query, **kwargs)

    memory = Watching()
    memory.units[("c",)] = [unit(("c",), "maya likes tea", ["D1:1"])]
    for name in ("abl_bridging_floor", "abl_keep_own", "ripplemem"):
        make_system(name, memory).retrieve("maya tea", ("c",), 5)
    floor, own = bridging.BRIDGE_FLOOR, set_questions.KEEP_OWN
    # A module that imported the constant by name (assembly, controller) sees the variant's value too.
    assert seen == [(1.0, 1.0, 1.0, own), (floor, floor, floor, 0), (floor, floor, floor, own)]
    assert CONSTANT_VARIANTS["abl_keep_own"] == {"set_questions.KEEP_OWN": 0}
    with pytest.raises(ValueError, match="has no constant NOPE"), patched_constants({"bridging.NOPE": 1}):
        pass
    assert bridging.BRIDGE_FLOOR == floor
