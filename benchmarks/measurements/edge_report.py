"""Edges by type, and the share that crosses sessions, with the paper's structural edges and with cue edges.

Builds the write path's graph (rule-based units, MiniLM vectors, ``link_rows``) of
every LoCoMo conversation and of every linked-suite case (injected into its
haystack), once with ``structural_edges="paper"`` (docs/concepts.md's ``s_str``) and once
with ``"cues"`` (rarity-weighted identifying cues, the default), and counts edges
per type, the edges that join two sessions, and the mean degree.

    python -m benchmarks.measurements.edge_report ../shared/data/locomo/locomo10.json \
        --out results/edges.json
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks.cached_embeddings import CachedEmbeddings
from benchmarks.haystack import sample_haystacks
from benchmarks.linked import linked_conversations
from benchmarks.linked_cases import load_linked_cases
from benchmarks.loaders import load_locomo
from benchmarks.measurements.output import emit, locomo_parser
from benchmarks.results import run_metadata
from langchain_ripplemem.config import WriteConfig
from langchain_ripplemem.edges.calibration import semantic_threshold_for
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.schemas import Conversation, MemoryUnit
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor
from langchain_ripplemem.write.extraction.windows import make_windows
from langchain_ripplemem.write.linking.local_linking import link_rows

NS = ("edges",)


def _index(conversation: Conversation, embeddings: CachedEmbeddings, config: WriteConfig) -> NamespaceIndex:
    extractor = RuleBasedExtractor(config.extraction)
    units: dict[str, MemoryUnit] = {}
    for window in make_windows(conversation, config.extraction.window_size, config.extraction.window_overlap):
        for unit in extractor.extract(window, NS).units:
            units.setdefault(unit.id, unit)
    ordered: list[MemoryUnit] = list(units.values())
    index = NamespaceIndex(NS)
    index.add(ordered, np.asarray(embeddings.embed_documents([u.restatement for u in ordered]), dtype=np.float32))
    return index


def _count(conversations: list[Conversation], embeddings: CachedEmbeddings, config: WriteConfig) -> dict[str, Any]:
    counts: dict[str, float] = {"units": 0, "semantic": 0, "structural": 0, "semantic_cross_session": 0,
                                "structural_cross_session": 0}
    for conversation in conversations:
        index = _index(conversation, embeddings, config)
        session = {u.id: u.source.session_id for u in index.units}
        counts["units"] += len(index)
        for edge in link_rows(index, list(range(len(index))), config.linking):
            counts[edge.type] += 1
            counts[f"{edge.type}_cross_session"] += session[edge.src] != session[edge.dst]
    for kind in ("semantic", "structural"):
        crossing = counts[f"{kind}_cross_session"]
        counts[f"{kind}_cross_share"] = round(crossing / counts[kind], 3) if counts[kind] else 0.0
    counts["mean_degree"] = round(2 * (counts["semantic"] + counts["structural"]) / max(counts["units"], 1), 2)
    return counts


def main() -> None:
    """Read the command line, measure, print the results and write them to ``--out``."""
    args = locomo_parser(__doc__).parse_args()
    embeddings = CachedEmbeddings(directory=args.cache)
    threshold = semantic_threshold_for(embeddings)
    corpora = {
        "locomo": [b.conversation for b in load_locomo(args.locomo)],
        "linked_suite": [b.conversation for b in linked_conversations(load_linked_cases(), sample_haystacks())],
    }
    result: dict[str, Any] = {"semantic_threshold": threshold, "corpora": {}}
    for name, conversations in corpora.items():
        result["corpora"][name] = {"conversations": len(conversations)}
        for label, kind in (("before", "paper"), ("after", "cues")):
            config = WriteConfig().replace(linking={"semantic_threshold": threshold, "structural_edges": kind})
            result["corpora"][name][label] = _count(conversations, embeddings, config)
    embeddings.save()
    result.update(run_metadata(args.locomo))
    emit(result, args.out)


if __name__ == "__main__":
    main()
