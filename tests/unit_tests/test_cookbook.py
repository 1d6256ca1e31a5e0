"""Every cookbook script runs offline and shows what its docstring promises.

The checks are on what a script computes (recalled memories, their turns, expansion
paths, tool results), never on a stand-in chat model's scripted reply.
"""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, ToolMessage

COOKBOOK = Path(__file__).resolve().parents[2] / "cookbook"
# Per script, patterns (re.MULTILINE) its output must match.
EXPECTED = {
    "01_retriever_rag_chain.py": [
        r"^plain top-4 \(memory\.search, dense\): \[(?!.*'S1:1')",
        r"turns=\['S1:1'\] \['expansion:structural'\] via S4:1 -> S3:1 -> S1:1$",
        r"^the model is given:\n(.+\n){0,5}\[\w{8}\] 2026-03-02 Maya: The allergist confirmed it: I'm allergic",
        r"^k per call: 2 documents with k=2$",
    ],
    "02_subgraph_agent_with_tools.py": [
        r"^tool remember: Remembered 1 memory in memories/maya",
        r"^  step recall: extract_cues$",
        # The second turn's recall finds what the remember tool wrote in the first.
        r"^    recalled [\d.]+ User: Maya is allergic to shellfish\.$",
        r"^    recalled [\d.]+ Sam: My cousin cooks at Harbor Grill, it's a seafood place\.$",
    ],
    "03_store_per_user_namespaces.py": [
        r"^get: \{'text': \"I'm allergic to shellfish\.\"",
        r"^search users/: [\d.]+ users/sam food: I love oysters at Harbor Grill\.$",
        r"^maya only: \['allergy', 'pet'\]$",
        r"^filter kind=pets: \['pet'\]$",
        r"^graph \(maya\): From your memories: Update: the allergist says shellfish is fine now\.$",
        r"^graph \(priya\): I don't know you yet\.$",
        r"^namespaces now: \[\('users', 'maya'\), \('users', 'priya'\), \('users', 'sam'\)\]$",
    ],
    "04_langsmith_tracing.py": [
        r"^LangSmith tracing: off",
        r"expand round 1 \[chain\]  metadata=\{'anchors': \[.+\]\} outputs=\{'expanded': \['\w{8}'",
        r"^retriever run 'RippleMemRetriever' -> children \['ripplemem_recall'\]$",
    ],
    "05_bring_your_own_models.py": [
        r"^LLM extraction: 3 turns -> 3 units",
        r"locations=\['Harbor Grill'\]",
        r"^cited: \[.*I\\'m allergic to shellfish",
        r"^recall llm calls: 3$",
    ],
    "06_other_languages.py": [
        r"'kühen', 'kuh'",
        r"^recall 'Wie viele Kühen hat Jürgen\?' -> Zoë: Jürgen hat jetzt drei Kühe",
        r"^lexical view '张伟搬到哪里去了？' -> Zoë: 张伟上个月搬到成都去了",
        r"^participants of 'Was hat Zoë über das Wetter gesagt\?': \['zoë'\]$",
    ],
    "07_bring_your_history.py": [
        r"^chatgpt export chatgpt_conversations\.json: 5 chats -> 3 conversations, 15 messages "
        r"\(1 chat without text, 1 malformed, skipped\); left out: 3 messages on other branches",
        r"^skipped chat \[3\] 'Quarterly numbers' .*create_time",
        # Every message with text is a memory; the edited question and the regenerated answer are not.
        r"^chat 'Moving to Porto' of 2024-05-24: 7 messages -> 7 memories$",
        r"^chat '京都旅行の計画' of 2025-03-15: 4 messages -> 4 memories$",
        r"^remembered: 15 memories of 3 chats, 2024-05-24 \.\. 2025-03-15$",
        r"^  2024-05-24 14:14  User: Which neighbourhoods near the river are quiet enough for a dog\?$",
        r"^recall 'Where am I moving with my dog\?':\n  User: I'm moving from Leeds to Porto",
    ],
    "08_walking_the_memory.py": [
        r"^calls: recall_memory\(\{'query': \"Can Maya fly to Lisbon for Priya's wedding on her current "
        r"passport\?\"\}\)$",
        r"^calls: explore_memory\(\{'memory_id': '\w{32}'\}\); explore_memory\(\{'memory_id': '\w{32}'\}\)$",
        # Exploring the passport's expiry (a link of the recalled memories) reaches how long renewals take.
        r"^  Memory \[\w{32}\] \| 2026-03-12 \| Maya: I finally tackled the junk drawer tonight\..*\n(  .*\n)*?"
        r"  structural \(\d+ links.*\n(  - .*\n)*?  - \[\w{32}\] \| 2026-03-30 \| Sam: Forty-one\. .*Renewals",
        r"^  memory 1 of 2 from 2026-03-28 to 2026-03-29 in memories/maya, oldest first \(page 1 of 2; page=2 for more",
        r"^  memory 2 of 2 from 2026-03-28 to 2026-03-29 in memories/maya, oldest first \(page 2 of 2, the last\):\n"
        r"  - \[\w{32}\] \| 2026-03-29 \| Maya: So much for staying in to prep\.",
    ],
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
    monkeypatch.setattr(sys, "argv", [str(COOKBOOK / script)])  # as `python cookbook/<script>` runs it
    runpy.run_path(str(COOKBOOK / script), run_name="__main__")
    out = capsys.readouterr().out
    for expected in EXPECTED[script]:
        assert re.search(expected, out, flags=re.MULTILINE), f"{script}: {expected!r} not in output:\n{out}"


@pytest.mark.slow
def test_retriever_example_reaches_the_allergy_through_the_graph(capsys):
    """Cookbook 01's claim: plain top-k misses the allergy; the retriever, with the same k, expands to it."""
    plain, docs = runpy.run_path(str(COOKBOOK / "01_retriever_rag_chain.py"))["main"]()
    assert len(plain) == len(docs) == 4
    assert "S1:1" not in plain
    by_turn = {tuple(d.metadata["turn_ids"]): d for d in docs}
    allergy = by_turn[("S1:1",)]
    assert "allergic to shellfish" in allergy.page_content
    assert allergy.metadata["found_by"] == ["expansion:structural"]  # no recall view found it
    # Each path runs from a memory the first hop found to the allergy, through Harbor Grill's shellfish (S3:1).
    first_hop = {d.id for d in docs if set(d.metadata["found_by"]) - {"expansion:structural"}}
    shellfish_place = by_turn[("S3:1",)].id
    for path in allergy.metadata["paths"]:
        assert path[-1] == allergy.id and path[-2] == shellfish_place
    assert any(path[0] in first_hop for path in allergy.metadata["paths"])


@pytest.mark.slow
def test_walking_example_recalls_then_explores_its_way_to_the_passport(capsys):
    """Cookbook 08's claim: a two-memory recall misses the passport's expiry and renewal time; walking reaches both.

    The stand-in model's calls are checked call by call, and every tool answer against the memory's own methods.
    """
    script = runpy.run_path(str(COOKBOOK / "08_walking_the_memory.py"))
    memory, messages = script["main"]()
    ns = script["NAMESPACE"]
    turn_of = {unit.id: unit.source.turn_ids[0] for unit in memory.list_units(ns)}
    by_turn = {turn: uid for uid, turn in turn_of.items()}
    steps = [[(call["name"], turn_of.get(call["args"].get("memory_id"), call["args"])) for call in m.tool_calls]
             for m in messages if isinstance(m, AIMessage) and m.tool_calls]
    assert steps == [[("recall_memory", {"query": script["QUESTION"]})],
                     [("explore_memory", "S3:8"), ("explore_memory", "S5:9")],  # the recalled memories
                     [("explore_memory", "S3:9"), ("explore_memory", "S2:1"), ("explore_memory", "S5:8")],
                     [("explore_memory", "S4:9")]]
    answers = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    recall_answer = answers.pop("recall").text
    assert by_turn["S2:1"] not in recall_answer and by_turn["S4:9"] not in recall_answer
    calls = {call["id"]: call["args"]["memory_id"] for m in messages if isinstance(m, AIMessage)
             for call in m.tool_calls if call["name"] == "explore_memory"}
    for call_id, answer in answers.items():
        assert answer.text == memory.explore(calls[call_id], namespace=ns).describe()
    recalled_links = {link.memory.id for uid in (by_turn["S3:8"], by_turn["S5:9"])
                      for link in memory.explore(uid, namespace=ns).links["structural"]}
    assert by_turn["S2:1"] in recalled_links  # one hop from the recall
    expiry_links = memory.explore(by_turn["S2:1"], namespace=ns).links["structural"]
    assert by_turn["S4:9"] in {link.memory.id for link in expiry_links}
