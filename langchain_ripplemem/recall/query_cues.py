"""Query cue extraction: a semantic query, keywords and grounded episodic cues.

The rule-based version grounds names and places against the cue indexes of the
namespace itself: a word of the question is a participant only if some memory
has that participant, so "Should Maya accept Sam's pick?" gets ``[maya, sam]``
without a name list. Times come from the shared time grounder ("last May",
"in 2022", "yesterday"), relative to the latest memory time of the namespace.
Event-relative times such as "before the trip" cannot be grounded without an
LLM and stay empty.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from langchain_ripplemem.index.marks import stated_at
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.index.sessions import per_index
from langchain_ripplemem.recall.recall_prompts import QueryCueOutput
from langchain_ripplemem.schemas import QueryCues, TimeInterval
from langchain_ripplemem.text.lexical import content_words, words, written_without_spaces
from langchain_ripplemem.text.time.timeparse import ground_time, parse_timestamp

_MAX_NGRAM = 4


def reference_time(index: NamespaceIndex) -> datetime:
    """"Now" for relative query times: when the namespace's latest statement was made (else now).

    The time a statement was made, not the time it mentions: after "I'm moving to Berlin
    in April" said in February, "What happens in March?" means the coming March.
    """
    latest = per_index(index, "latest_statement", lambda v, n: _latest_statement(v, 0, n, None),
                      lambda v, known, before, n: _latest_statement(v, before, n, known))  # only a write's units
    return latest if latest is not None else datetime.now(timezone.utc)


def _latest_statement(index: NamespaceIndex, start: int, stop: int, known: datetime | None) -> datetime | None:
    """The latest statement time among rows ``start..stop-1`` and ``known``."""
    times = [stated_at(u) for u in index.units[start:stop]]
    return max([*times, known] if known is not None else times, default=None)


def _known(index: NamespaceIndex, field: str, query_words: list[str]) -> list[str]:
    """Cue values of the namespace that occur in the query as whole word n-grams.

    The query's words are NFKC-normalised and casefolded (:func:`~langchain_ripplemem.text.lexical.words`),
    the postings' values only lower-cased: a value outside ASCII ("Zoë", "Straße") is
    matched by its folded form and returned as the postings spell it.
    """
    postings = index.postings[field]
    folded = {fold(value): value for value in postings if isinstance(value, str) and not value.isascii()}
    found = []
    for n in range(_MAX_NGRAM, 0, -1):
        for i in range(len(query_words) - n + 1):
            gram = " ".join(query_words[i : i + n])
            value = gram if gram in postings else folded.get(gram)
            if value is not None and value not in found:
                found.append(value)
    return found


def fold(value: str) -> str:
    """A cue value as :func:`~langchain_ripplemem.text.lexical.words` writes it.

    NFKC, casefolded, words joined by spaces.

    Example:
        >>> fold("Rue  Mercière"), fold("Straße")
        ('rue mercière', 'strasse')
    """
    return " ".join(words(value)) if not value.isascii() else value


def rule_based_cues(query: str, index: NamespaceIndex, reference: datetime | None = None) -> QueryCues:
    """Cues from the query text and the namespace's own cue indexes (no LLM)."""
    query_words = words(query)
    time: TimeInterval | None = None
    grounded = ground_time(query, reference or reference_time(index))
    if grounded:
        time = grounded[0][1]
    return QueryCues(
        query=query,
        keywords=list(dict.fromkeys(content_words(query))),
        participants=_known(index, "participants", query_words),
        locations=_known(index, "locations", query_words),
        time=time,
    )


def move_speakers(cues: QueryCues, speakers: frozenset[str]) -> QueryCues:
    """Take the names of speakers out of the semantic query and keywords.

    A question about a speaker ("What activities does Melanie do?") is answered
    by what *she* said, and her own turns rarely contain her name; the other
    speaker's turns do ("Hey Melanie!"). So the name stays a participant cue
    (assembly rewards the speaker's own memories, ``RecallConfig.scoring.speaker_bonus``)
    and leaves the text the semantic and lexical views match. Names that are not
    speakers (people talked about) stay in the text.

    Example:
        >>> c = QueryCues(query="What does Melanie's son like?", keywords=["melanie", "son"],
        ...               participants=["melanie"])
        >>> moved = move_speakers(c, frozenset({"melanie", "caroline"}))
        >>> moved.query, moved.keywords, moved.participants
        ('What does son like?', ['son'], ['melanie'])

    """
    names = [p for p in cues.participants if p in speakers]
    if not names:
        return cues
    # A name in a script without spaces ("李娜最近在学做什么") has no word boundary around it.
    spaced = [re.escape(n) for n in names if not written_without_spaces(n)]
    unspaced = [re.escape(n) for n in names if written_without_spaces(n)]
    pattern = re.compile("|".join([*([r"\b(?:" + "|".join(spaced) + r")(?:['\u2019]s)?\b"] if spaced else []),
                                   *unspaced]), re.IGNORECASE)
    query = " ".join(pattern.sub(" ", cues.query).split())
    return cues.model_copy(update={
        "query": query or cues.query,
        "keywords": [k for k in cues.keywords if k.lower() not in names],
    })


_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself)\b|\bi['\u2019](?:m|ve|d|ll)\b", re.IGNORECASE)
# "What was the trail you recommended?": the answer is what the one asked said.
_YOU_SAID = re.compile(r"\byou\s+(?:\w+\s+)?(?:said|say|mentioned|recommended|suggested|told|wrote|gave|listed|"
                       r"provided|described|explained|named|shared|proposed|came up with)\b", re.IGNORECASE)


def with_asker(cues: QueryCues, asker: str, speakers: frozenset[str]) -> QueryCues:
    """Make the asker a participant cue when the query speaks in the first person.

    "What did I say about the boots?" asked by the user is a question about the
    user, as "What did Maya say?" is about Maya: the asker's own memories get
    the speaker bonus. Nothing changes when the asker is not a speaker of the
    namespace, the query has no first person, or it asks what the one asked said
    ("Can you remind me of the trail you recommended?").

    Example:
        >>> c = QueryCues(query="How often do I see Dr. Johnson?", keywords=["often", "see", "johnson"])
        >>> with_asker(c, "User", frozenset({"user", "assistant"})).participants
        ['user']
        >>> with_asker(c, "Maya", frozenset({"user", "assistant"})).participants
        []
        >>> you = QueryCues(query="Remind me of the trail you recommended?", keywords=["trail"])
        >>> with_asker(you, "user", frozenset({"user", "assistant"})).participants
        []

    """
    name = asker.strip().lower()
    if name not in speakers or name in cues.participants or not _FIRST_PERSON.search(cues.query) \
            or _YOU_SAID.search(cues.query):
        return cues
    return cues.model_copy(update={"participants": [*cues.participants, name]})


def cues_from_llm(query: str, output: QueryCueOutput, grounded: QueryCues | None = None) -> QueryCues:
    """Convert the LLM's cue output (times that do not parse are dropped, not guessed).

    With ``grounded`` (the rule-based cues of the same question), the LLM's cues add to
    them and take nothing away: its keywords, participants and places come first, the
    grounded ones follow, and its time stands where it gave one. A chat model is an
    upgrade: one that misses the question's names ("Maya") must not cost the speaker
    and place scoring they drive.

    Example:
        >>> out = QueryCueOutput(semantic_query="Maya's food restrictions", keywords=["allergy"],
        ...                      participants=[], locations=[], time_start=None, time_end=None)
        >>> known = QueryCues(query="Should Maya accept?", keywords=["accept"], participants=["maya"])
        >>> cues = cues_from_llm("Should Maya accept?", out, known)
        >>> cues.query, cues.keywords, cues.participants
        ("Maya's food restrictions", ['allergy', 'accept'], ['maya'])
    """
    time = None
    if output.time_start:
        try:
            start = parse_timestamp(output.time_start)
            end = parse_timestamp(output.time_end) if output.time_end else start
            time = TimeInterval(start=start, end=max(start, end))
        except ValueError:
            time = None
    known = grounded or QueryCues(query=query)

    def merged(llm_values: list[str], known_values: list[str], lower: bool = True) -> list[str]:
        values = (v.strip().lower() if lower else v.strip() for v in llm_values)
        return list(dict.fromkeys([*(v for v in values if v), *known_values]))

    return QueryCues(
        query=output.semantic_query.strip() or query,
        keywords=merged(output.keywords, known.keywords, lower=False),
        participants=merged(output.participants, known.participants),
        locations=merged(output.locations, known.locations),
        time=time or known.time,
    )
