"""What a recollection looks like in LangSmith, and how to see the same tree offline.

Run: python cookbook/04_langsmith_tracing.py   (offline, a few seconds)

To send runs to LangSmith, set before running (nothing in the code changes):
    export LANGSMITH_TRACING=true
    export LANGSMITH_API_KEY=lsv2_...
    export LANGSMITH_PROJECT=ripplemem-demo        # optional

Each ``memory.recall`` (and each retriever or tool call, which nest it) shows:
* a ``ripplemem_recall`` run (the recall graph);
* one run per node, named after it: extract_cues, tri_view_recall,
  check_sufficiency, plan_expansion, expand, assemble (answer with an LLM);
* inside each, a ``"<node> round <r>"`` child run whose metadata carries
  ``ripplemem_node``, ``ripplemem_round``, ``ripplemem_namespace``,
  ``ripplemem_anchors``, ... and whose outputs list counts and unit ids (which
  views found what, which anchors were expanded, which memories expansion added).
  In LangSmith, filter on ``metadata.ripplemem_round = 1`` to see every expansion.

Offline, this script collects the same runs with LangChain's local run collector
(``collect_runs``) and prints the tree. The collector is also passed as a callback:
``collect_runs()`` alone registers a non-inherited handler, so the graph's node runs
would arrive as separate roots instead of nested under the recall run.
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.tracers.context import collect_runs

from langchain_ripplemem import PAPER_WRITE, RecallConfig, RippleMemory

NAMESPACE = ("users", "maya")
CHAT = {"id": "maya-and-sam", "sessions": [
    {"id": "S1", "time": "2026-03-02T19:00:00Z", "turns": [
        {"id": "S1:1", "speaker": "Maya", "text": "The allergist confirmed it: I'm allergic to shellfish."}]},
    {"id": "S2", "time": "2026-03-20T19:00:00Z", "turns": [
        {"id": "S2:1", "speaker": "Sam", "text": "My cousin cooks at Harbor Grill, the oysters are famous."}]},
    {"id": "S3", "time": "2026-04-20T19:00:00Z", "turns": [
        {"id": "S3:1", "speaker": "Sam", "text": "For Maya's birthday dinner, let's book Harbor Grill!"},
        {"id": "S3:2", "speaker": "Maya", "text": "Sounds fun, let me think about the dinner."}]},
]}


def print_tree(run: Any, depth: int = 0) -> None:
    """One line per run; ripplemem_* metadata and round outputs on the round runs."""
    meta = {k.removeprefix("ripplemem_"): v for k, v in (run.extra or {}).get("metadata", {}).items()
            if k.startswith("ripplemem_") and k not in ("ripplemem_node", "ripplemem_round")}
    detail = ""
    if " round " in run.name:
        shown = ("counts", "should_continue", "reason", "anchors", "target", "expanded", "count")
        outputs = {k: getattr(v, "restatement", v) for k, v in (run.outputs or {}).items() if k in shown}
        detail = f"  metadata={_short(meta)} outputs={_short(outputs)}"
    print(f"{'  ' * depth}{run.name} [{run.run_type}]{detail}")
    for child in run.child_runs:
        print_tree(child, depth + 1)


def _short(value: Any) -> Any:
    """Unit ids shortened to 8 characters for printing."""
    if isinstance(value, str) and len(value) == 32:
        return value[:8]
    if isinstance(value, dict):
        return {k: _short(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_short(v) for v in value]
    return value


def main() -> None:
    tracing = os.environ.get("LANGSMITH_TRACING", "").lower() == "true" and os.environ.get("LANGSMITH_API_KEY")
    print("LangSmith tracing:", "on (runs also go to LangSmith)" if tracing else "off (local collector only)")
    # A four-turn chat is too small for rare-cue edges: the paper's structural edges here.
    memory = RippleMemory(write_config=PAPER_WRITE)
    memory.add_conversation(CHAT, namespace=NAMESPACE)
    # A small first hop, so one expansion round runs.
    tight = RecallConfig(views={"semantic_k": 2, "lexical_k": 1, "cue_k": 1})

    with collect_runs() as collector:
        result = memory.recall("Should Maya accept Sam's birthday dinner pick?", namespace=NAMESPACE,
                               config=tight, callbacks=[collector])
    (root,) = [run for run in collector.traced_runs if run.name == "ripplemem_recall"]
    print_tree(root)
    print("\nrounds:", [(r.round, r.reason) for r in result.rounds])

    with collect_runs() as collector:
        memory.as_retriever(namespace=NAMESPACE, k=3, config=tight).invoke(
            "Should Maya accept Sam's birthday dinner pick?", config={"callbacks": [collector]})
    retriever_run = collector.traced_runs[0]
    print(f"\nretriever run {retriever_run.name!r} -> children {[c.name for c in retriever_run.child_runs]}")


if __name__ == "__main__":
    main()
