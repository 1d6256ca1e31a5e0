"""``ripplemem demo``: plain top-k against recollection on a shipped sample conversation.

Fully offline: the MiniLM ONNX embeddings, the rule-based extractor and the
heuristic controller. For each sample question whose evidence is spread over
sessions weeks apart, it prints which evidence turns plain dense top-k finds,
which recollection finds, what recollection added, and the round trace.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from langchain_ripplemem.render.plain_text import describe_round
from langchain_ripplemem.schemas import Conversation, MemoryUnit, counted

NAMESPACE = ("demo", "maya")


def load_sample() -> tuple[Conversation, list[dict[str, Any]]]:
    """The sample conversation and its questions (with evidence turn ids)."""
    data = resources.files("langchain_ripplemem") / "data"
    conversation = Conversation.model_validate_json((data / "sample_conversation.json").read_text("utf-8"))
    questions = json.loads((data / "sample_questions.json").read_text("utf-8"))
    return conversation, questions


def _found(units: list[MemoryUnit], evidence: list[str]) -> list[str]:
    covered = {t for u in units for t in u.source.turn_ids}
    return [t for t in evidence if t in covered]


def run_demo(k: int = 10, out: Callable[[str], Any] = print, html_dir: str | Path | None = None) -> dict[str, Any]:
    """Run the demo, printing through ``out``; returns per-question evidence counts.

    With ``html_dir``, each recollection is also drawn as an HTML page there (``q1.html``, ...).
    """
    from langchain_ripplemem.memory import RippleMem

    started = time.perf_counter()
    conversation, questions = load_sample()
    memory = RippleMem()  # the recommended settings (RecallConfig()), offline
    report = memory.add_conversation(conversation, namespace=NAMESPACE)
    out(f"RippleMem offline demo: {counted(len(conversation.sessions), 'session')}, {report.summary()}")
    out("Plain top-k = dense MiniLM top-k over the same memory units; recollection = tri-view recall")
    out("+ controller + expansion over edges + assembly (recommended settings). "
        f"Both return {counted(k, 'memory', 'memories')}.\n")
    text = {u.id: u for u in memory.list_units(NAMESPACE)}
    summary: dict[str, Any] = {"questions": []}
    for item in questions:
        question, evidence = item["question"], item["evidence"]
        plain = [unit for unit, _ in memory.search(question, namespace=NAMESPACE, k=k)]
        plain_ids = [unit.id for unit in plain]
        result = memory.recall(question, namespace=NAMESPACE, k=k)
        if html_dir is not None:
            from langchain_ripplemem.render.html_page import write_recall_html

            page = write_recall_html(result, Path(html_dir) / f"q{len(summary['questions']) + 1}.html", memory)
            out(f"   picture: {page}")
        plain_found, recalled_found = _found(plain, evidence), _found(result.units, evidence)
        out(f"Q: {question}")
        out(f"   needs turns {', '.join(evidence)}" + (f"  ({item['why']})" if item.get("why") else ""))
        out(f"   plain top-{k}:   {len(plain_found)}/{len(evidence)} evidence turns {plain_found}")
        out(f"   recollection: {len(recalled_found)}/{len(evidence)} evidence turns {recalled_found}")
        for memory_item in result.memories:
            unit = memory_item.unit
            if unit.id in plain_ids:
                continue
            how = sorted({h.source if h.source != "expansion" else f"expansion via {h.channel} edge"
                          for h in memory_item.provenance})
            mark = "*" if set(unit.source.turn_ids) & set(evidence) else " "
            out(f"   {mark} added [{', '.join(how)}] ({','.join(unit.source.turn_ids)}) {unit.restatement}")
        names = {uid: ",".join(u.source.turn_ids) for uid, u in text.items()}
        for trace in result.rounds:
            for line in describe_round(trace, names):
                out(f"     {line}")
        out("")
        summary["questions"].append({"question": question, "evidence": len(evidence),
                                     "plain": len(plain_found), "recollection": len(recalled_found)})
    total = sum(q["evidence"] for q in summary["questions"])
    plain_total = sum(q["plain"] for q in summary["questions"])
    recalled_total = sum(q["recollection"] for q in summary["questions"])
    out(f"Evidence turns found: plain top-{k} {plain_total}/{total}, recollection {recalled_total}/{total} "
        f"({time.perf_counter() - started:.1f}s, offline; * marks evidence turns)")
    summary.update(total=total, plain=plain_total, recollection=recalled_total)
    return summary
