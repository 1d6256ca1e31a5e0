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
   not "go/come/fly back in April", a return whose own verb says when. A word of
   the predicate and a preposition may come between: "The party is on June 3rd",
   "The rent is due on July 1st", "It was open until May 2nd" (not a name, a
   pronoun or a noun phrase: "This is Maya on July 4th", "is a photo from June").
2. Else the nearest marker before the phrase in its clause, else the nearest
   after it in its clause. Clauses end at , ; : ( ) and at
   and/but/because/while/when/after/before/until/if, so in "I moved in April
   and will start in May" each month has its own verb; after/before/until right
   before the phrase are its preposition ("valid until June 3rd") and end nothing.
3. Else, unless the clause tells a habit ("usually", "always", "every", ...), a
   dated event in the simple present in its clause is future: the futurate
   present, "I move in February", "We fly out on Friday", "My passport expires on
   June 3rd", "I teach a workshop on June 3rd", "... and start in March" with its
   subject left out, even when an earlier clause is past ("I signed the lease and
   I move in February"). Only events count, as only events can be scheduled
   (:mod:`~langchain_ripplemem.text.time.tense_words` has the classes): after
   I/we/they/he/she any verb but a state's ("I love Paris in April" is no plan);
   after a noun, "you" or "it" a verb of a scheduled event (beginnings, endings,
   departures, appointments: "my flight leaves", "the lease runs until"), since
   an -s word after a noun is as often a plural; and a form of "be" with a state
   set for a day ("the rent is due", "the visa is valid until").
4. Else the markers of the whole sentence, as in 2.

Markers:

* future: will, won't, 'll, shall, gonna, wanna, might, should, can, would be; plan,
  hope, want, intend, expect, excited, about, scheduled, set, supposed, need,
  remember + "to"; would/'d like/love to; can't wait, looking forward, upcoming, soon,
  tomorrow, next <period>, this coming; and the present progressive: am/is/are
  (up to two words) + an -ing verb ("I'm moving", "Are you moving", "What is
  Maya doing"). A progressive with a time ahead is an arrangement.
* past: was, were, did, had (and their n't forms), have/has/'ve been, used to,
  ago, since, yesterday, last <period>, should/could/would/must/might have,
  was/were supposed/going/about/planning/scheduled/set to,
  remember/recall + an -ing form or "when" ("I remember buying boots on May 5th"),
  irregular past forms (went, met, flew, ...), and -ed forms that do
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

from langchain_ripplemem.text.time.tense_words import (
    AMBIGUOUS_PRESENT,
    DUE_STATES,
    HABITUAL,
    IRREGULAR_PAST,
    NOT_VERBS,
    SCHEDULED_EVENTS,
    STATES,
    alternation,
    third_person,
)

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
_IRREGULAR_PAST = alternation(IRREGULAR_PAST)
_MARKERS = re.compile(
    # Politeness, not time: "I was wondering if ..." says nothing about when.
    # A negated perfect says what has not happened yet ("we haven't picked a date yet"):
    # its participle is no past event.
    r"(?P<neutral>\b(?:was|were) (?:wondering|thinking|hoping)\b"
    r"|\b(?:haven't|hasn't|have not|has not)(?: (?:yet|even|really|actually|quite|fully))? [a-z]+\b)"
    rf"|(?P<past>\b(?:should|could|would|must|might)(?:n't)? have\b"
    rf"|\b(?:was|were)(?:n't)? (?:supposed|going|about|planning|scheduled|set) to\b"
    rf"|\b(?:was|were|did|had)(?:n't)?\b|(?:\b(?:have|has)|'ve|'s)(?:n't)? been\b|\bused to\b"
    rf"|\b(?:ago|since|yesterday|{_IRREGULAR_PAST})\b(?!')|\blast {_PERIOD}\b"
    # Remembering an event is of the past ("I remember buying boots on May 5th"); "remember to" is ahead.
    rf"|\b(?:remember|remembers|recall|recalls|recollect|recollects) (?:[a-z]+ing|when)\b)"
    rf"|(?P<progressive>{_BE_NOW}(?: not)?(?: [a-z']+){{0,2}}? (?!{_ING_NOUNS})[a-z]{{2,}}ing\b)"
    rf"|(?P<future>\b(?:will|won't|shall|gonna|wanna|might|should|can|upcoming|soon|tomorrow)\b"
    rf"|\bwould be\b"
    rf"|'ll\b|\b(?:can't|cannot) wait\b|\blook(?:ing)? forward\b|\bthis coming\b"
    rf"|\b(?:would|'d) (?:like|love) to\b|\bnext {_PERIOD}\b"
    rf"|\b(?:plan|plans|planning|hope|hopes|hoping|want|wants|wanting|intend|intends|intending|"
    rf"expect|expects|expecting|excited|about|scheduled|set|supposed|need|needs|remember|remembers) to\b)"
    rf"|(?P<ed>\b[a-z]{{2,}}ed\b)"
)
# An -ed word after these is an adjective or a passive, not a past verb.
_NOT_PAST_BEFORE_ED = frozenset(
    "am is are be been being get gets getting 'm 're a an the my your our his her their its this "
    "that very so really too more most quite feel feels feeling".split())
_ED_NOT_VERBS = frozenset(
    "indeed hundred sacred wicked naked proceed succeed exceed speed breed greed creed steed "
    "bleed tweed kindred beloved embed need feed seed weed deed heed reed shed sled bred sped".split())
_CLAUSE_BREAK = re.compile(r"[,;:()\u2013\u2014]|\b(?:and|but|because|cause|while|whereas|although|"
                           r"though|when|whenever|after|before|until|unless|if)\b")
# The futurate present (rule 3; the word classes are tense_words'). A verb in the simple present:
# after a pronoun that is only ever a subject (I, we, they, he, she) any verb but a state's ("I teach
# on Friday", not "I remember Friday"); after "you" or "it", which may be objects ("help you find"),
# and after a noun, a verb of a scheduled event ("you leave", "my passport expires"), not after a
# determiner ("the leaves", "two visits"); first in its clause with the subject left out ("and start
# in March"); or a form of "be" with a state set for a day, a few words before the phrase ("the rent
# is due on", "the visa is valid until", "the passport is due for renewal on").
_SCHEDULED_BASE = alternation(SCHEDULED_EVENTS)
_SCHEDULED_THIRD = alternation(tuple(third_person(verb) for verb in SCHEDULED_EVENTS))
_NOT_EVENT = alternation(STATES + NOT_VERBS + AMBIGUOUS_PRESENT)
_NOT_EVENT_THIRD = alternation(tuple(third_person(verb) for verb in STATES) + ("is", "was", "has", "does"))
# An -ly word is an adverb, not the verb ("I finally set up"), but for the few verbs in -ly.
_NOT_ADVERB = r"(?![a-z]+ly\b(?<!\bfly)(?<!apply)(?<!reply)(?<!rely))"
_BETWEEN = (r"(?: (?:also|still|only|finally|actually|just|then|now|officially|both|all|don't|do not|doesn't|"
            r"does not|[a-z]+ly))?")
_DETERMINER = (r"(?:the|a|an|my|your|our|his|her|their|its|this|that|these|those|some|many|few|several|"
               r"two|three|four|five|all|no|and|or|of|in|on|at|to|for|with)")
_PRESENT = re.compile(
    rf"\b(?:i|we|they){_BETWEEN} {_NOT_ADVERB}(?!(?:{_NOT_EVENT})\b)[a-z]+\b(?!')"
    rf"|\b(?:he|she){_BETWEEN} {_NOT_ADVERB}(?:(?:doesn't|does not) (?!(?:{_NOT_EVENT})\b)[a-z]+"
    rf"|(?!(?:{_NOT_EVENT_THIRD})\b)[a-z]+s)\b(?!')"
    rf"|\byou{_BETWEEN} (?:{_SCHEDULED_BASE})\b"
    rf"|\b(?!{_DETERMINER}\b)[a-z']+{_BETWEEN} (?:{_SCHEDULED_THIRD})\b")
_DUE = re.compile(rf"{_BE_NOW}{_BETWEEN} (?:{alternation(DUE_STATES)})(?: [a-z']+){{0,3}} $")
_CLAUSE_OPENING_VERB = re.compile(rf"\s*(?:then )?(?:{_SCHEDULED_BASE})\b")
# A habit has no one occurrence ahead: "I usually go skiing in February".
_HABITUAL = re.compile(rf"\b(?:{alternation(HABITUAL)})\b|\btends? to\b")
# A clause break that is the phrase's own preposition ("valid until June 3rd") ends no clause.
_PREPOSITION_BREAK = frozenset(("after", "before", "until"))
_SENTENCE_END = re.compile(r"[.!?\n]")
_REACH = 400
# "back in April" looks back, but "go/come/fly back in April" is a return (its verb's tense says when).
_NOT_A_RETURN = "".join(f"(?<!{verb} )" for verb in (
    "go", "goes", "going", "went", "come", "comes", "coming", "came", "head", "heads", "heading", "get", "gets",
    "getting", "got", "fly", "flies", "flying", "flew", "move", "moves", "moving", "moved", "be", "'ll be"))
# The phrase's own predicate: "is in April", "was in April", "back in April", and with a word of the
# predicate and a preposition between: "is on June 3rd", "is due on Friday", "was open until May 2nd".
# Not a possessive's "'s" ("Maya's party on June 3rd") nor a noun phrase ("is a photo from June").
_PREDICATE_WORD = (r"(?: (?P<word>(?!(?:a|an|the|my|your|our|his|her|their|its|this|that|me|us|him|them|you|it|"
                   r"what|who|where|when|how|why|be|been|being|got|not)\b)[a-z]+))?"
                   r"(?: (?:on|in|at|for|until|till|through|by))?")
_PREDICATE = re.compile(rf"(?:(?P<be>\b(?:(?<!\d )am|is|are|was|were)|'m|'re|'s)(?: (?:also|still|only|finally|"
                        rf"probably|actually|definitely|now|sometime|like))?|(?P<back>{_NOT_A_RETURN}\bback)) $")
_WORDY_PREDICATE = re.compile(rf"(?P<be>\b(?:(?<!\d )am|is|are|was|were)|'m|'re|\b(?:he|she|it|that|there)'s)"
                              rf"(?: (?:also|still|only|finally|probably|actually|definitely|now))?{_PREDICATE_WORD} $")


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
    predicate = _PREDICATE.search(sentence, 0, start) or _WORDY_PREDICATE.search(sentence, 0, start)
    if predicate and not (predicate.groupdict().get("word") and text[left + predicate.start("word")].isupper()):
        return "past" if predicate.groupdict().get("back") or predicate["be"] in ("was", "were") else "future"
    markers = _markers(sentence)
    clause_start = max((m.end() for m in _CLAUSE_BREAK.finditer(sentence, 0, start)
                        if m.group() not in _PREPOSITION_BREAK or sentence[m.end():start].strip()), default=0)
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
    """Rule 3: the clause tells a scheduled event in the simple present (its phrase left out), not a habit."""
    if _HABITUAL.search(sentence, clause_start, clause_end):
        return False
    return bool(_CLAUSE_OPENING_VERB.match(sentence, clause_start, start) or _DUE.search(sentence, clause_start, start)
                or _PRESENT.search(sentence, clause_start, start) or _PRESENT.search(sentence, end, clause_end))
