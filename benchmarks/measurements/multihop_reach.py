"""What a bridge could reach: LoCoMo's multi-hop evidence against the linked suite's bridged turns.

For every multi-hop question of the LoCoMo tuning conversations (and every case of
the linked suite's tune split, for contrast) this runs the first hop alone
(``no_expansion``) and asks, of each evidence turn missing from its top 30: does it
share a *name* (person, place, thing) with one of the three best memories, the
anchors a bridge would start from? Does it share a rare topic word (rarity >= 0.5)?
Is it one cue edge away from an anchor, or two? If the missed multi-hop evidence
shares no name with the anchors, no name bridge can bring it in, and expansion,
structural edges and planning cannot gain on it whatever their weights.

    python -m benchmarks.measurements.multihop_reach ../shared/data/locomo/locomo10.json \
        --out results/multihop_reach.json
"""

from __future__ import annotations

from typing import Any

from benchmarks.cached_embeddings import CachedEmbeddings
from benchmarks.haystack import locomo_haystacks
from benchmarks.linked import linked_conversations
from benchmarks.linked_cases import load_linked_cases
from benchmarks.loaders import LOCOMO_TUNE, BenchConversation, load_locomo
from benchmarks.measurements.output import emit, locomo_parser
from benchmarks.results import run_metadata
from langchain_ripplemem.config import RecallConfig, WriteConfig
from langchain_ripplemem.memory import RippleMem

ANCHORS, K = 3, 30


def _reach(memory: RippleMem, bench: BenchConversation, questions: list[Any]) -> dict[str, int]:
    ns = (bench.id.replace("@", "-"),)
    memory.add_conversation(bench.conversation, namespace=ns)
    index, graph = memory.index.namespace_index(ns), memory.edge_cache.networkx(ns)
    by_turn = {t: u.id for u in index.units for t in u.source.turn_ids}
    counts = {"questions": 0, "missed": 0, "shares_name": 0, "shares_rare_topic": 0, "one_edge": 0,
              "two_edges": 0}
    first_hop = RecallConfig(controller={"max_rounds": 0}, assembly={"top_k": K})
    for question in questions:
        result = memory.recall(question.question, namespace=ns, config=first_hop)
        found = {t for m in result.memories for t in m.unit.source.turn_ids}
        anchors = [m.unit.id for m in result.memories[:ANCHORS]]
        counts["questions"] += 1
        near = {n for a in anchors if a in graph for n in graph.adj[a]}
        far = {n2 for n in near if n in graph for n2 in graph.adj[n]}
        for turn in question.evidence:
            if turn in found or turn not in by_turn:
                continue
            uid = by_turn[turn]
            counts["missed"] += 1
            keys = set(index.keys[index.pos[uid]])
            shared = keys & {k for a in anchors for k in index.keys[index.pos[a]]}
            named = index.name_counts.first_name
            counts["shares_name"] += any(k in named for k in shared)
            counts["shares_rare_topic"] += any(k not in named and index.rarity(k) >= 0.5 for k in shared)
            counts["one_edge"] += uid in near
            counts["two_edges"] += uid in far and uid not in near
    memory.delete_namespace(ns)
    return counts


def _total(parts: list[dict[str, int]]) -> dict[str, Any]:
    total: dict[str, float] = {key: sum(p[key] for p in parts) for key in parts[0]}  # counts, then shares
    for key in ("shares_name", "shares_rare_topic", "one_edge", "two_edges"):
        total[f"{key}_share"] = round(total[key] / total["missed"], 3) if total["missed"] else 0.0
    return total


def main() -> None:
    """Read the command line, measure, print the results and write them to ``--out``."""
    args = locomo_parser(__doc__).parse_args()
    embeddings = CachedEmbeddings(directory=args.cache)
    memory = RippleMem(embeddings, write_config=WriteConfig())
    locomo = [b for b in load_locomo(args.locomo) if b.id in LOCOMO_TUNE]
    multi_hop = [_reach(memory, b, [q for q in b.questions if q.category == 1 and q.evidence]) for b in locomo]
    suite = [_reach(memory, b, b.questions)
             for b in linked_conversations(load_linked_cases(split="tune"), locomo_haystacks(args.locomo))]
    embeddings.save()
    result = {"anchors": ANCHORS, "k": K, "locomo_multi_hop_tune": _total(multi_hop),
              "linked_suite_tune": _total(suite), **run_metadata(args.locomo)}
    emit(result, args.out)


if __name__ == "__main__":
    main()
