"""Questions that weigh an option for a person, and the places what constrains that person keeps.

"Should Maya accept Sam's dinner pick for her birthday?" is answered by the option
(Sam booked Harbor Grill; its menu is whatever came off the boats) and by what
constrains Maya (her shellfish allergy, said weeks before). The constraint shares
neither words nor meaning with the question (plain dense ranks it last but one of
Maya's memories), but it is close to the option: the missing support is aimed by
the options found so far (METHOD.md's controller names it "food restrictions
related to Maya"; the heuristic one has no words for it, only vectors). Each of
recollection's best memories ranks the person's own memories on its own, and the
rankings are fused by reciprocal rank, since the centroid of the options resembles
none of them. A constraint is a one-off remark more often than a stretch of talk, so
the rankings are corrected for density as a set question's own matches are
(:func:`~langchain_ripplemem.recall.set_questions.own_matches`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.recall.set_questions import own_matches

__all__ = ["asks_for_a_decision", "constraint_matches"]

#: Reciprocal-rank fusion constant (Cormack et al. 2009): a memory's share of one option's ranking is 1/(K + rank).
RRF_K = 60
#: How deep each option's ranking of the person's memories is read.
RANKING_DEPTH = 20

# A modal that opens the question and a name or word after it (not "you", "we", "I", "it", "there", ...:
# "Should I ...?" names no one the memory knows, and "Can you ...?" is a request), "is it a good idea / ok /
# safe ...", or "what/which ... would/should ..." ("What would be a good present for Maya?").
_DECISION = re.compile(
    r"^\s*(?:(?:should|would|could|can|will|might)\s+(?!(?:you|we|i|it|there|this|that|they|he|she)\b)\w"
    r"|is\s+it\s+(?:a\s+good\s+idea|ok|okay|safe|wise|worth)\b"
    r"|(?:what|which)\s+(?:\w+\s+){0,3}?(?:would|should)\s)",
    re.IGNORECASE)


def asks_for_a_decision(question: str) -> bool:
    """Whether ``question`` weighs an option for someone ("should X ...", "would X like ...").

    English only, like :func:`~langchain_ripplemem.recall.set_questions.asks_for_a_set`.

    Example:
        >>> [asks_for_a_decision(q) for q in ("Should Maya accept Sam's dinner pick?",
        ...  "Would Melanie enjoy a trip to a national park?", "What would be a good present for Leo?",
        ...  "Can you remind me of the plan?", "Where does Maya live?", "Could Sam look after Biscuit?")]
        [True, True, True, False, False, True]
    """
    return _DECISION.search(question) is not None


def constraint_matches(index: NamespaceIndex, options: Sequence[str], person: str, n: int, hidden: set[str],
                       density: float = 0.0) -> list[tuple[str, float]]:
    """The ``n`` memories of ``person`` closest to the options found, best first, by fused rank.

    Each option (a memory id, recollection's best first) ranks ``person``'s own memories
    by dense cosine less ``density`` times their crowding
    (:func:`~langchain_ripplemem.recall.set_questions.own_matches`; the option itself
    left out), the top :data:`RANKING_DEPTH` of each ranking are fused by reciprocal
    rank, and the score of a memory is its fused share (ties by first appearance).
    """
    fused: dict[str, float] = {}
    for option in options:
        row = index.pos.get(option)
        if row is None:
            continue
        ranking = own_matches(index, [index.matrix[row]], [person], RANKING_DEPTH, hidden | {option}, density)
        for rank, (uid, _) in enumerate(ranking):
            fused[uid] = fused.get(uid, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(fused.items(), key=lambda item: -item[1])[:n]
