"""Every cookbook script runs offline and prints what its docstring promises."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

COOKBOOK = Path(__file__).resolve().parents[2] / "cookbook"
EXPECTED = {
    "01_retriever_rag_chain.py": ["['expansion:structural'] via", "allergic to shellfish", "chain answer: Maybe not"],
    "02_subgraph_agent_with_tools.py": ["tool remember: Remembered 1 memory in memories/maya",
                                        "step recall: extract_cues", "recalled", "agent: Careful"],
    "03_store_per_user_namespaces.py": ["get: {'text': \"I'm allergic to shellfish.\"", "users/sam food",
                                        "filter kind=pets: ['pet']", "graph (priya): I don't know you yet."],
    "04_langsmith_tracing.py": ["LangSmith tracing: off", "expand round 1 [chain]  metadata={'anchors':",
                                "retriever run 'RippleMemRetriever' -> children ['ripplemem_recall']"],
    "05_bring_your_own_models.py": ["LLM extraction: 3 turns -> 3 units", "locations=['Harbor Grill']",
                                    "answer: Probably not", "recall llm calls: 3"],
    "06_other_languages.py": ["'kühen', 'kuh'",
                              "recall 'Wie viele Kühen hat Jürgen?' -> Zoë: Jürgen hat jetzt drei Kühe",
                              "lexical view '张伟搬到哪里去了？' -> Zoë: 张伟上个月搬到成都去了",
                              "participants of 'Was hat Zoë über das Wetter gesagt?': ['zoë']"],
}


def test_every_script_is_covered_and_indexed():
    scripts = sorted(p.name for p in COOKBOOK.glob("*.py"))
    assert scripts == sorted(EXPECTED)
    readme = (COOKBOOK / "README.md").read_text()
    assert all(f"python cookbook/{name}" in readme for name in scripts)


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(EXPECTED))
def test_script_runs_offline(script, capsys, monkeypatch):
    monkeypatch.delenv("LANGSMITH_TRACING", raising=False)
    monkeypatch.delenv("LANGCHAIN_TRACING_V2", raising=False)
    runpy.run_path(str(COOKBOOK / script), run_name="__main__")
    out = capsys.readouterr().out
    for expected in EXPECTED[script]:
        assert expected in out, f"{script}: {expected!r} not in output:\n{out}"
