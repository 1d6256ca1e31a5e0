"""Questions that ask for a set, and the places their asker's own matches keep.

A set question ("Which cities has Maya visited?") is answered by all its members, and
members are often one-off remarks said sessions apart, amid unrelated talk. Dialogue
context lifts turns inside a topical stretch and so pushes such a remark down: for a
set question, the named speaker's own best matches by plain dense cosine keep places
in the top K (``assembly.keep_own``; docs/architecture.md, "A first hop recollection
only adds to").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

from langchain_ripplemem.config import AssemblyConfig
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.recall.cue_bonus import row_speakers
from langchain_ripplemem.schemas import HitSource

__all__ = ["asks_for_a_set", "own_places"]

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


def own_places(index: NamespaceIndex, vector: np.ndarray, speakers: Iterable[str], config: AssemblyConfig,
               hidden: set[str]) -> dict[str, tuple[HitSource, int, float, int]]:
    """The places a set question keeps for its named speakers' own memories.

    The ``d``-th of their memories by plain dense cosine (``d`` from 1 to ``assembly.keep_own``)
    keeps rank ``floor(keep_own_spacing x d)`` or better, the way first-hop matches keep theirs
    (tests/unit_tests/test_first_hop_kept.py). The questions are recognised in English only; in
    other languages the rule stays off and recall is unchanged.
    """
    said, named = row_speakers(index), {speaker.lower() for speaker in speakers}
    cosines = index.cosines(vector)
    rows = [row for row in np.argsort(-cosines, kind="stable").tolist()
            if row < len(said) and said[row] in named and index.ids[row] not in hidden][: config.keep_own]
    return {index.ids[row]: ("semantic", d, float(cosines[row]), int(config.keep_own_spacing * (d + 1) + 1e-9))
            for d, row in enumerate(rows)}
