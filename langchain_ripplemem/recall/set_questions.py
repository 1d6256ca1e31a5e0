"""Questions that ask for a set, and the places their asker's own matches keep.

A set question ("Which cities has Maya visited?") is answered by all its members, and
members are often one-off remarks said sessions apart, amid unrelated talk. Dialogue
context lifts turns inside a topical stretch and so pushes such a remark down: for a
set question, the named speaker's own best matches by plain dense cosine keep places
in the top K (``assembly.keep_own``; docs/architecture.md, "The rule: recollection
adds to what plain top-k finds").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.recall.cue_bonus import row_speakers

__all__ = ["asks_for_a_set", "own_matches"]

# "how many", "name the / list the", what/which + a plural noun and a perfect or habitual verb,
# or who/what/where + a perfect one ("Where has Ana lived?").
_SET = re.compile(
    r"^\s*(?:how\s+many\b|(?:name|list)\b|(?:in\s+)?(?:what|which)\s+(?:kinds?\s+of\s+|types?\s+of\s+|sorts?\s+of\s+)?"
    r"(?:\w+\s+)?\w+s\s+(?:has|have|did|does|do)\b|(?:who|what|where)\s+(?:has|have)\b)",
    re.IGNORECASE)


# "How many weeks ago ...", "how many hours did I ...": a duration or a time difference, not a set.
_DURATION = re.compile(
    r"^\s*how\s+many\s+(?:more\s+|fewer\s+)?(?:seconds|minutes|hours|days|nights|weeks|weekends|months|years|decades)\b",
    re.IGNORECASE)


def asks_for_a_set(question: str) -> bool:
    """Whether ``question`` asks for several things a person did, had or said.

    Example:
        >>> [asks_for_a_set(q) for q in ("Which cities has Maya visited?", "How many times has Ana been ill?",
        ...  "What sports has Dave tried?", "What is Evan's favorite food?", "Where does Maya live?",
        ...  "How many weeks ago did Ana start running?", "Where has Ana lived?")]
        [True, True, True, False, False, False, True]
    """
    return _SET.search(question) is not None and _DURATION.search(question) is None


def own_matches(index: NamespaceIndex, vector: np.ndarray, speakers: Iterable[str], n: int,
                hidden: set[str]) -> list[tuple[str, float]]:
    """The named speakers' own ``n`` best memories by plain dense cosine, best first (ties by row).

    What a set question keeps places for (``assembly.keep_own``): the ``d``-th keeps rank
    ``floor(keep_own_spacing x d)`` or better, as first-hop matches keep theirs
    (:func:`~langchain_ripplemem.recall.assembly.first_hop_ranks`). The questions are
    recognised in English only; in other languages the rule stays off and recall is unchanged.
    """
    said, named = row_speakers(index), {speaker.lower() for speaker in speakers}
    rows = np.array([row for row, speaker in enumerate(said) if speaker in named], dtype=np.int64)
    if not len(rows):
        return []
    cosines = index.cosines(vector)[rows]
    # A stable sort, not row_arrays.top_indices: its partition may break a tie at the cut by a later row.
    best = np.argsort(-cosines, kind="stable")[: n + len(hidden)].tolist()
    hits = [(index.ids[int(rows[i])], float(cosines[i])) for i in best]
    return [(uid, score) for uid, score in hits if uid not in hidden][:n]
