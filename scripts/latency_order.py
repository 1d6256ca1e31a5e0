"""How much a system's latency depends on which system ran just before it.

On the first LoCoMo conversations, hybrid RRF is timed on alternate questions
right after BM25 and dense (the two searches it fuses, which leave its encoder
and index warm) and right after ``ripplemem``. The p50s differ: this is why
``ripplemem bench`` rotates the order of systems per question
(``langchain_ripplemem.bench.runner.rotated``). Not a test; timings move with the machine.

    python scripts/latency_order.py ../shared/data/locomo/locomo10.json --conversations 3
"""

from __future__ import annotations

import argparse
import statistics
import time

from langchain_ripplemem.bench.cached_embeddings import CachedEmbeddings, default_cache_dir
from langchain_ripplemem.bench.loaders import load_locomo
from langchain_ripplemem.bench.runner import FreshMemories
from langchain_ripplemem.bench.systems import make_system, retrieve_question
from langchain_ripplemem.config import RecallConfig

#: The two orders compared, alternating question by question; the timed system is the last of its part.
ORDERS = {"after bm25 + dense": (["bm25", "dense", "hybrid_rrf"], ["ripplemem"]),
          "after ripplemem": (["ripplemem", "hybrid_rrf"], ["bm25", "dense"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("locomo", help="path to locomo10.json")
    parser.add_argument("--conversations", type=int, default=3)
    parser.add_argument("--questions", type=int, default=80, help="per conversation")
    args = parser.parse_args()
    embeddings = CachedEmbeddings(directory=default_cache_dir())
    timed: dict[str, list[float]] = {name: [] for name in ORDERS}
    for conversation in load_locomo(args.locomo)[: args.conversations]:
        memory, namespace = FreshMemories("locomo", embeddings=embeddings)(), (conversation.id,)
        memory.add_conversation(conversation.conversation, namespace=namespace)
        systems = {name: make_system(name, memory, RecallConfig())
                   for name in ("ripplemem", "bm25", "dense", "hybrid_rrf")}
        questions = [q for q in conversation.questions if q.evidence][: args.questions]
        for system in systems.values():  # loading the views is not what is compared
            retrieve_question(system, questions[0], namespace, 30)
        for position, question in enumerate(questions):
            name = list(ORDERS)[position % 2]
            before, after = ORDERS[name]
            for system_name in before:
                start = time.perf_counter()
                retrieve_question(systems[system_name], question, namespace, 30)
                ms = (time.perf_counter() - start) * 1000.0
            timed[name].append(ms)  # the last of ``before`` is hybrid RRF
            for system_name in after:
                retrieve_question(systems[system_name], question, namespace, 30)
        memory.close()
    for name, values in timed.items():
        print(f"hybrid_rrf {name}: p50 {statistics.median(values):.2f} ms over {len(values)} questions")


if __name__ == "__main__":
    main()
