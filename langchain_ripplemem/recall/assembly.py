"""Assembly: merge evidence by id and rank it by rho (METHOD.md read phase, step 6).

``rho(m) = 1.25 a(q, m) + 1.0 pi(m) + 0.05 I_anchor(m)`` where ``a`` is the
query-memory cosine min-max normalised over the evidence set, ``pi`` the
provenance support (source weight x rank support ``1/(5 + rank)``, expansion
hits scaled by path strength), and ``I_anchor`` marks anchors. Weights come
from :class:`~langchain_ripplemem.config.RecallConfig`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.index import NamespaceView
from langchain_ripplemem.recall.controller import support
from langchain_ripplemem.schemas import Hit, RecalledMemory


def assemble_memories(
    evidence: dict[str, list[Hit]], anchors: set[str], view: NamespaceView,
    query_vector: np.ndarray, config: RecallConfig,
) -> list[RecalledMemory]:
    """The top ``config.top_k`` memories by rho, each with its merged provenance."""
    ids = [uid for uid in evidence if uid in view.pos]
    if not ids:
        return []
    cosines = view.matrix[[view.pos[uid] for uid in ids]] @ query_vector
    low, high = float(cosines.min()), float(cosines.max())
    span = high - low
    memories = []
    for uid, cos in zip(ids, cosines.tolist(), strict=True):
        alignment = (cos - low) / span if span > 1e-9 else 1.0
        is_anchor = uid in anchors
        rho = (config.alignment_weight * alignment + config.provenance_weight * support(evidence[uid], config)
               + config.anchor_bonus * is_anchor)
        memories.append(RecalledMemory(unit=view.units[view.pos[uid]], score=rho, alignment=cos,
                                       is_anchor=is_anchor, provenance=evidence[uid]))
    memories.sort(key=lambda m: (-m.score, m.unit.id))
    return memories[: config.top_k]


def format_evidence(memories: Sequence[RecalledMemory]) -> str:
    """Numbered memories for an answer prompt: ``[n] | date | restatement``."""
    lines = []
    for n, memory in enumerate(memories, start=1):
        when = memory.unit.time.start.date().isoformat() if memory.unit.time else "-"
        lines.append(f"[{n}] | {when} | {memory.unit.restatement}")
    return "\n".join(lines)


def parse_citations(text: str, memories: Sequence[RecalledMemory]) -> list[str]:
    """Unit ids of the ``[n]`` citations in an answer, in order of first mention."""
    cited = []
    for match in re.finditer(r"\[(\d+)\]", text):
        n = int(match.group(1))
        if 1 <= n <= len(memories):
            uid = memories[n - 1].unit.id
            if uid not in cited:
                cited.append(uid)
    return cited
