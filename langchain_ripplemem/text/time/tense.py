"""Which way a bare time phrase points: the tense of the clause around it.

"in April" or "on Friday" names a different period depending on the verb that
governs it. Said on 14 February 2026, "I am moving to Berlin in April" means
April 2026 and "I moved to Berlin in April" April 2025. :func:`tense_at` reads
the sentence around a phrase and answers ``"future"``, ``"past"`` or ``None``
(no signal), so that :mod:`~langchain_ripplemem.text.time.timeparse` can pick
the next or the previous occurrence.

Rules, in order:

1. The phrase's own predicate: "is/are/'s/am in April" (a scheduled event: "My
   wedding is in March", "Her birthday's in June", "what the weather is like
   in April") is future; "was/were in April" and "back in April" are past, but
   not "go/come/fly back in April", a return whose own verb says when.
2. Else the nearest marker before the phrase in its clause, else the nearest
   after it in its clause. Clauses end at , ; : ( ) and at
   and/but/because/while/when/after/before/until/if, so in "I moved in April
   and will start in May" each month has its own verb.
3. Else a scheduled event in the simple present in its clause is future (the
   futurate present: "I move in February", "We fly out on Friday", "My flight
   leaves on Friday", "... and start in March" with its subject left out), even
   when an earlier clause is past ("I signed the lease and I move in February").
   Only verbs of events that are scheduled or arranged count (move, start,
   leave, fly, go, arrive, have, ...): a present of other verbs is a habit or a
   state more often than a plan.
4. Else the markers of the whole sentence, as in 2.

Markers:

* future: will, won't, 'll, shall, gonna, wanna, might, should, can, would be; plan,
  hope, want, intend, expect, excited, about, scheduled, set, supposed +
  "to"; would/'d like/love to; can't wait, looking forward, upcoming, soon,
  tomorrow, next <period>, this coming; and the present progressive: am/is/are
  (up to two words) + an -ing verb ("I'm moving", "Are you moving", "What is
  Maya doing"). A progressive with a time ahead is an arrangement.
* past: was, were, did, had (and their n't forms), have/has/'ve been, used to,
  ago, since, yesterday, last <period>, should/could/would/must/might have,
  was/were supposed/going/about/planning/scheduled/set to,
  common irregular past forms (went, met, flew, ...), and -ed forms that do
  not follow a form of be or get or a determiner (those are adjectives or
  passives: "I'm excited", "getting married", "a guided tour").

"I was wondering/thinking/hoping" is politeness and marks nothing, and neither
does a negated perfect ("They haven't picked a date yet, sometime in June": what
has not happened is no past event).
Negation keeps the tense ("I'm not moving in April" is future), and so does a
question ("Are you moving in April?" future, "Did you move in April?" past).

Example:
    >>> text = "I moved to Rome in May and I am moving to Berlin in April."
    >>> tense_at(text, text.index("in May"), text.index("in May") + 6)
    'past'
    >>> tense_at(text, text.index("in April"), text.index("in April") + 8)
    'future'
    >>> tense_at("Berlin in April.", 7, 15) is None
    True

"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["Tense", "tense_at"]

Tense = Literal["future", "past"]

_PERIOD = (r"(?:night|week|weekend|month|year|time|summer|winter|spring|fall|autumn|"
           r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|"
           r"april|may|june|july|august|september|october|november|december)")
_BE_NOW = r"(?:\b(?:(?<!\d )am|is|are)|'m|'re|\b(?:he|she|it|that|what|who|there|where|when|how)'s)"
# -ing words that are not a verb after "is" ("is something", "is my wedding"), or
# that speak of the present ("I'm feeling", "I'm wondering").
_ING_NOUNS = (r"(?:feeling|wondering|thing|nothing|something|anything|everything|morning|evening|wedding|building|"
              r"during|ceiling|clothing|sibling|darling|pudding|painting|meeting|ending|setting|"
              r"spring|string|king|ring|offspring|amazing|interesting|exciting|boring|relaxing|"
              r"inspiring|challenging|rewarding|stunning|annoying|surprising|fascinating|"
              r"overwhelming|refreshing|terrifying|frustrating|satisfying|encouraging|charming|"
              r"loving|caring|willing|outstanding|amusing|confusing|embarrassing|disappointing|"
              r"promising|thrilling|calming|soothing|welcoming|touching|heartwarming)\b")
_IRREGULAR_PAST = (r"went|came|got|took|made|saw|met|flew|drove|left|began|bought|brought|ran|gave|"
                   r"found|told|said|thought|felt|spent|wrote|won|ate|sat|became|held|kept|knew|"
                   r"heard|taught|sent|built|paid|sold|slept|swam|sang|stood|wore|grew|threw|drew|"
                   r"fell|forgot|caught|fought|lost|chose|rode|broke|woke|spoke|stole|froze")
_MARKERS = re.compile(
    # Politeness, not time: "I was wondering if ..." says nothing about when.
    # A negated perfect says what has not happened yet ("we haven't picked a date yet"):
    # its participle is no past event.
    r"(?P<neutral>\b(?:was|were) (?:wondering|thinking|hoping)\b"
    r"|\b(?:haven't|hasn't|have not|has not)(?: (?:yet|even|really|actually|quite|fully))? [a-z]+\b)"
    rf"|(?P<past>\b(?:should|could|would|must|might)(?:n't)? have\b"
    rf"|\b(?:was|were)(?:n't)? (?:supposed|going|about|planning|scheduled|set) to\b"
    rf"|\b(?:was|were|did|had)(?:n't)?\b|(?:\b(?:have|has)|'ve|'s)(?:n't)? been\b|\bused to\b"
    rf"|\b(?:ago|since|yesterday|{_IRREGULAR_PAST})\b(?!')|\blast {_PERIOD}\b)"
    rf"|(?P<progressive>{_BE_NOW}(?: not)?(?: [a-z']+){{0,2}}? (?!{_ING_NOUNS})[a-z]{{2,}}ing\b)"
    rf"|(?P<future>\b(?:will|won't|shall|gonna|wanna|might|should|can|upcoming|soon|tomorrow)\b"
    rf"|\bwould be\b"
    rf"|'ll\b|\b(?:can't|cannot) wait\b|\blook(?:ing)? forward\b|\bthis coming\b"
    rf"|\b(?:would|'d) (?:like|love) to\b|\bnext {_PERIOD}\b"
    rf"|\b(?:plan|plans|planning|hope|hopes|hoping|want|wants|wanting|intend|intends|intending|"
    rf"expect|expects|expecting|excited|about|scheduled|set|supposed) to\b)"
    rf"|(?P<ed>\b[a-z]{{3,}}ed\b)"
)
# An -ed word after these is an adjective or a passive, not a past verb.
_NOT_PAST_BEFORE_ED = frozenset(
    "am is are be been being get gets getting 'm 're a an the my your our his her their its this "
    "that very so really too more most quite feel feels feeling".split())
_ED_NOT_VERBS = frozenset(
    "indeed hundred sacred wicked naked proceed succeed exceed speed breed greed creed steed "
    "bleed tweed kindred beloved embed".split())
_CLAUSE_BREAK = re.compile(r"[,;:()\u2013\u2014]|\b(?:and|but|because|cause|while|whereas|although|"
                           r"though|when|whenever|after|before|until|unless|if)\b")
# The futurate present (rule 3): a verb of a scheduled or arranged event, in the simple present,
# after its subject ("I move", "she leaves", "my flight leaves") or first in its clause with the
# subject left out ("and start in March"). Not after a determiner: "the leaves", "two visits".
_SCHEDULED_BASE = ("move|start|begin|leave|fly|go|head|come|arrive|return|travel|graduate|finish|end|open|close|"
                   "launch|retire|turn|visit|have|depart|land|play|meet|get")
_SCHEDULED_THIRD = ("moves|starts|begins|leaves|flies|goes|heads|comes|arrives|returns|travels|graduates|finishes|"
                    "ends|opens|closes|launches|retires|turns|visits|has|departs|lands|plays|meets|gets")
_BETWEEN = r"(?: (?:also|still|only|finally|actually|just|then|now|officially|both|all|don't|do not|doesn't|does not))?"
_DETERMINER = (r"(?:the|a|an|my|your|our|his|her|their|its|this|that|these|those|some|many|few|several|"
               r"two|three|four|five|all|no|and|or|of|in|on|at|to|for|with)")
_PRESENT = re.compile(
    rf"\b(?:i|we|you|they){_BETWEEN} (?:{_SCHEDULED_BASE})\b"
    rf"|\b(?!{_DETERMINER}\b)[a-z']+{_BETWEEN} (?:{_SCHEDULED_THIRD})\b")
_CLAUSE_OPENING_VERB = re.compile(rf"\s*(?:then )?(?:{_SCHEDULED_BASE})\b")
_SENTENCE_END = re.compile(r"[.!?\n]")
_REACH = 400
# "back in April" looks back, but "go/come/fly back in April" is a return (its verb's tense says when).
_NOT_A_RETURN = "".join(f"(?<!{verb} )" for verb in (
    "go", "goes", "going", "went", "come", "comes", "coming", "came", "head", "heads", "heading", "get", "gets",
    "getting", "got", "fly", "flies", "flying", "flew", "move", "moves", "moving", "moved", "be", "'ll be"))
# The phrase's own predicate: "is in April", "was in April", "back in April".
_PREDICATE = re.compile(rf"(?:(?P<be>\b(?:(?<!\d )am|is|are|was|were)|'m|'re|'s)(?: (?:also|still|only|finally|"
                        rf"probably|actually|definitely|now|sometime|like))?|(?P<back>{_NOT_A_RETURN}\bback)) $")


def _markers(sentence: str) -> list[tuple[int, Tense]]:
    found: list[tuple[int, Tense]] = []
    for m in _MARKERS.finditer(sentence):
        kind = m.lastgroup
        if kind == "neutral":
            continue
        if kind == "ed":
            word = m.group(0)
            previous = sentence[: m.start()].rsplit(None, 1)[-1:] or [""]
            if word in _ED_NOT_VERBS or previous[0] in _NOT_PAST_BEFORE_ED:
                continue
        found.append((m.start(), "past" if kind in ("past", "ed") else "future"))
    return found


def tense_at(text: str, start: int, end: int, *, clause_only: bool = False) -> Tense | None:
    """The tense of the sentence governing ``text[start:end]`` (see the module docs).

    Args:
        text: the whole text (a turn or a query).
        start: where the time phrase starts in ``text``.
        end: where it ends.
        clause_only: read the phrase's own predicate and clause only, not the rest of the
            sentence ("Details came in: Denver, June 8th to 14th" says nothing about when
            the conference is).

    Returns:
        ``"future"``, ``"past"``, or ``None`` when the sentence gives no signal.

    Example:
        >>> q = "Are you moving in April?"
        >>> tense_at(q, q.index("in April"), len(q) - 1)
        'future'

    """
    # The sentence, but at most _REACH characters each side: a governing verb is near its
    # phrase, and the work per phrase stays bounded in a text without sentence breaks.
    low = max(0, start - _REACH)
    left = max((m.end() for m in _SENTENCE_END.finditer(text, low, start)), default=low)
    right_match = _SENTENCE_END.search(text, end, end + _REACH)
    right = right_match.start() if right_match else min(len(text), end + _REACH)
    # Lower-cased with plain apostrophes: same length, so positions carry over.
    sentence = text[left:right].lower().replace("\u2019", "'")
    start, end = start - left, end - left
    if predicate := _PREDICATE.search(sentence, 0, start):
        return "past" if predicate["back"] or predicate["be"] in ("was", "were") else "future"
    markers = _markers(sentence)
    clause_start = max((m.end() for m in _CLAUSE_BREAK.finditer(sentence, 0, start)), default=0)
    clause_match = _CLAUSE_BREAK.search(sentence, end)
    clause_end = clause_match.start() if clause_match else len(sentence)
    scopes = [(clause_start, clause_end)] if clause_only else [(clause_start, clause_end), (0, len(sentence))]
    for low, high in scopes:
        before = [tense for at, tense in markers if low <= at < start]
        if before:
            return before[-1]
        after = [tense for at, tense in markers if end <= at < high]
        if after:
            return after[0]
        if low == clause_start and _futurate_present(sentence, clause_start, clause_end, start, end):
            return "future"
    return None


def _futurate_present(sentence: str, clause_start: int, clause_end: int, start: int, end: int) -> bool:
    """Rule 3: the clause tells a scheduled event in the simple present (its phrase left out)."""
    return bool(_CLAUSE_OPENING_VERB.match(sentence, clause_start, start)
                or _PRESENT.search(sentence, clause_start, start) or _PRESENT.search(sentence, end, clause_end))
