"""Questions that ask for a set, and the places their asker's own matches keep.

A set question ("Which cities has Maya visited?") is answered by all its members, and
members are often one-off remarks said sessions apart, amid unrelated talk. Dialogue
context lifts turns inside a topical stretch and so pushes such a remark down: for a
set question, the named speaker's own best matches keep places in the top K
(:data:`KEEP_OWN`; docs/architecture.md, "The rule: recollection adds to what
plain top-k finds").

Those matches are scored for what a member looks like, not for what a topic looks
like: by the question and by the kind of thing it asks for on its own ("sports" in
"What sports has Dave tried?", :func:`set_category`), since a member names an
instance ("bouldering") that shares few words or little meaning with the rest of the
question; and less for a memory the more it resembles the speaker's other memories
(:data:`KEEP_OWN_DENSITY`), since a one-off remark stands apart where a long
stretch of talk on one topic offers many near-copies of itself (the hubness
correction of cross-domain similarity local scaling, Conneau et al. 2018).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.recall.cue_bonus import row_speakers
from langchain_ripplemem.schemas import QueryCues

__all__ = ["DENSITY_NEIGHBOURS", "KEEP_OWN", "KEEP_OWN_DENSITY", "KEEP_OWN_SPACING", "asks_for_a_set", "keep_own",
           "own_matches", "own_views", "set_category"]

#: A set question keeps the d-th (d <= this) of the named speakers' own matches at rank floor(KEEP_OWN_SPACING
#: x d) or better; off under ``research.paper_rules``. 5 at spacing 2 took the set suite's tune split from
#: 3.3 to 10.0 % at @10 with LoCoMo unchanged (c68ff7e); 15 at spacing 2 reach rank 30, the top 10 unchanged
#: and ranks 11-30 holding ten more members (1e4b608; docs/benchmarks.md, "Fifteen own places, to rank 30").
KEEP_OWN = 15
KEEP_OWN_SPACING = 2.0
#: Own matches score their cosine less this times their mean cosine with their DENSITY_NEIGHBOURS nearest
#: memories of the same speakers (a one-off remark before one of many near-copies): 0.7, chosen on the
#: tuning splits of the set suite and LoCoMo (sets @10 10.0 -> 40.0 with the category view; variants
#: ``rm_own5s20_w*``; docs/benchmarks.md, "Own matches scored for what a member looks like").
KEEP_OWN_DENSITY = 0.7
#: A memory's density is its mean cosine with its this many nearest memories of the same speakers
#: (chosen with the tuning splits of the set suite and LoCoMo, variants ``rm_own_nb*``, 939e236).
DENSITY_NEIGHBOURS = 5
#: Only the best this many (by the question's views) are re-scored by density: a bounded cost per question.
DENSITY_CANDIDATES = 100

# "how many", "name the / list the", what/which + a plural noun (up to two words before it, hyphens and
# all: "What transgender-specific events has ...", "What kind of foods or recipes has ...") and an
# auxiliary, "what/which are|were ..." ("What are Dave's hobbies?", "What are the names of ..."), or
# who/what/where + a perfect ("Where has Ana lived?").
_SET = re.compile(
    r"^\s*(?:how\s+many\b|(?:name|list)\b|(?:in\s+)?(?:what|which)\s+(?:kinds?\s+of\s+|types?\s+of\s+|sorts?\s+of\s+)?"
    r"(?:[\w'+-]+\s+){0,2}(?P<plural>[\w-]+s)\s+(?:has|have|had|did|does|do|are|were)\b|(?:what|which)\s+(?:are|were)\b"
    r"|(?:who|what|where)\s+(?:has|have)\b)",
    re.IGNORECASE)


# "How many weeks ago ...", "how many hours did I ...": a duration or a time difference, not a set.
_DURATION = re.compile(
    r"^\s*how\s+many\s+(?:more\s+|fewer\s+)?(?:seconds|minutes|hours|days|nights|weeks|weekends|months|years|decades)\b",
    re.IGNORECASE)


def keep_own(paper_rules: bool) -> int:
    """How many of a set question's own matches keep places: :data:`KEEP_OWN`, none with the paper's rules."""
    return 0 if paper_rules else KEEP_OWN


def asks_for_a_set(question: str) -> bool:
    """Whether ``question`` asks for several things a person did, had or said.

    A capitalised word before the auxiliary is a name, not a plural ("What kind of dream
    did James have?").

    Example:
        >>> [asks_for_a_set(q) for q in ("Which cities has Maya visited?", "How many times has Ana been ill?",
        ...  "What sports has Dave tried?", "What is Evan's favorite food?", "Where does Maya live?",
        ...  "How many weeks ago did Ana start running?", "Where has Ana lived?")]
        [True, True, True, False, False, False, True]
        >>> [asks_for_a_set(q) for q in ("What are Dave's hobbies?", "What are the names of John's children?",
        ...  "What transgender-specific events has Caroline attended?", "What kind of dream did James have?",
        ...  "What kind of foods or recipes has Sam recommended to Evan?", "What is Dave's hobby?")]
        [True, True, True, False, True, False]
    """
    found = _SET.search(question)
    if found is None or _DURATION.search(question) is not None:
        return False
    plural = found.group("plural")
    return not (plural and plural[0].isupper())


# What a set question asks for: the plural noun after what/which (with one word before it), or after
# "how many" ("How many pets does Ana have?"; "how many times" counts events and names none).
_CATEGORY = re.compile(
    r"^\s*(?:(?:in\s+)?(?:what|which)|how\s+many)\s+(?:kinds?\s+of\s+|types?\s+of\s+|sorts?\s+of\s+)?"
    r"((?:\w+\s+)?\w+s)\s+(?:has|have|did|does|do)\b", re.IGNORECASE)


def set_category(question: str) -> str | None:
    """The kind of thing a set question asks for, or ``None`` (not a set question, or none named).

    Example:
        >>> [set_category(q) for q in ("What sports has Dave tried?", "Which outdoor activities has Ana done?",
        ...  "How many pets does Ana have?", "How many times has Ana been ill?", "What is Evan's job?")]
        ['sports', 'outdoor activities', 'pets', None, None]
    """
    if not asks_for_a_set(question):
        return None
    found = _CATEGORY.search(question)
    return None if found is None or found.group(1).lower() == "times" else found.group(1)


def own_views(question: str, cues: QueryCues, vector: np.ndarray,
              embed: Callable[[str], Sequence[float] | np.ndarray],
              asked: np.ndarray | None = None) -> list[np.ndarray]:
    """The vectors a set question's own matches are scored by; none for any other question.

    The question as asked, names and all (``vector``, the vector of ``cues.query``, when
    no name was moved out of it): only the named speakers' memories are ranked, so a
    name cannot pull in what others said about them, the reason the other views move it
    to cues, and the whole sentence is what the encoder reads best. And what the
    question asks for, on its own (:func:`set_category`). ``asked``: the question's own
    vector when the caller has it already (the kept first hop's), so it is not embedded twice.
    """
    if not cues.participants or not asks_for_a_set(cues.query):
        return []
    if question == cues.query:
        asked = vector
    views = [asked if asked is not None else np.asarray(embed(question), dtype=np.float32)]
    category = set_category(cues.query)
    return views if category is None else [*views, np.asarray(embed(category), dtype=np.float32)]


def own_matches(index: NamespaceIndex, vectors: Sequence[np.ndarray], speakers: Iterable[str], n: int,
                hidden: set[str], density: float = 0.0,
                neighbours: int = DENSITY_NEIGHBOURS) -> list[tuple[str, float]]:
    """The named speakers' own ``n`` best memories for a set question, best first (ties by row).

    What a set question keeps places for (:data:`KEEP_OWN`): the ``d``-th keeps rank
    ``floor(KEEP_OWN_SPACING x d)`` or better, as first-hop matches keep theirs
    (:func:`~langchain_ripplemem.recall.kept_places.first_hop_ranks`). A memory's score is
    its mean dense cosine with ``vectors`` (:func:`own_views`) less ``density`` times
    its mean cosine with its ``neighbours`` nearest memories of the same speakers (only
    the best :data:`DENSITY_CANDIDATES` are re-scored). The questions are recognised in English
    only; in other languages the rule stays off and recall is unchanged.
    """
    said, named = row_speakers(index), {speaker.lower() for speaker in speakers}
    # Hidden memories (suppressed, or later than as_of) are neither returned nor anyone's neighbours.
    rows = np.array([row for row, speaker in enumerate(said) if speaker in named and index.ids[row] not in hidden],
                    dtype=np.int64)
    if not len(rows) or not vectors:
        return []
    scores = np.mean([index.cosines(vector)[rows] for vector in vectors], axis=0)
    # A stable sort, not row_arrays.top_indices: its partition may break a tie at the cut by a later row.
    best = np.argsort(-scores, kind="stable")[: max(DENSITY_CANDIDATES if density else 0, n)]
    if density and len(rows) > 1:
        own = index.matrix[rows]
        near = own[best] @ own.T
        near[np.arange(len(best)), best] = -np.inf  # not itself
        neighbours = min(neighbours, len(rows) - 1)
        crowd = np.partition(near, -neighbours, axis=1)[:, -neighbours:].mean(axis=1)
        rescored = scores[best] - density * crowd
        scores[best] = rescored
        best = best[np.argsort(-rescored, kind="stable")]
    return [(index.ids[int(rows[i])], float(scores[i])) for i in best[:n].tolist()]
