"""Facts a statement states about a person: ``(subject, attribute, value)`` read by patterns.

Each pattern (a *frame*) says which attribute a clause states and where its value is:
"I live in *X*", "my favourite *thing* is *X*", a phone number, an e-mail address, a
diet. A first-person form is read after the ``"Speaker: "`` prefix of rule-based units,
a third-person form for a named participant ("Maya lives in Lisbon"). Two statements of
the same subject and attribute with different values make the older one out of date
(:mod:`~langchain_ripplemem.write.supersession.statement_rules`).

A clause that only imagines or plans a fact (*if*, *would*, *planning*, ...), a question,
a past habit ("used to live in") and an *additional* value ("I *also* work at ...", "a
*second* phone") state no fact: an added job or phone leaves the first one standing.

Example:
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance
    >>> def unit(text):
    ...     return MemoryUnit.create(namespace=("maya",), restatement=text, participants=["Maya"],
    ...                              source=Provenance(conversation_id="c", session_id="s"))
    >>> facts(unit("Maya: I just moved to Berlin."))
    [Fact(subject='maya', attribute='residence', value='berlin')]
    >>> facts(unit("Maya: My mobile is 0612 448 190, call me anytime."))
    [Fact(subject='maya', attribute='phone', value='0612448190')]
    >>> facts(unit("Maya: I got a second phone for work, that number is 0470 556 201."))
    []

"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from langchain_ripplemem._runtime.text_caches import text_cache
from langchain_ripplemem.schemas import MemoryUnit
from langchain_ripplemem.text.lexical import stem

__all__ = ["ADDITIVE", "ATTRIBUTES", "HEDGE", "SEVERAL", "SHARED", "Fact", "facts", "first_person_text", "same_value",
           "sentences"]

ATTRIBUTES = ("residence", "employer", "occupation", "relationship", "partner", "favourite", "diet", "phone", "email",
              "vehicle", "instrument", "schedule")
#: Attributes people often hold several values of at once: a new value supersedes only in a statement that says
#: it changed (:func:`~langchain_ripplemem.write.supersession.changes.is_change`: "I switched to the viola").
SEVERAL = frozenset({"instrument"})

# -- what makes a clause state no fact ----------------------------------------------------
# A clause that only imagines, asks or conditions a fact states none.
HEDGE = re.compile(r"\b(?:if|whether|unless|would|could|wish|hop(?:e|ing) to|wants? to|wanted to|wanna|dream|"
                   r"imagine|pretend|maybe|might|planning (?:to|on)|plans? to|thinking (?:of|about)|considering)\b",
                   re.IGNORECASE)
# An added value ("also", "a second phone", "another dog") leaves the earlier one standing.
ADDITIVE = re.compile(r"\b(?:also|as well|another|second(?!-hand)|third|extra|additional|in addition|"
                      r"on the side|both)\b", re.IGNORECASE)

# -- frames --------------------------------------------------------------------------------
_NOW = r"(?:now |currently |still |actually |finally )?"
_JUST = r"(?:just |recently |finally |now |actually |officially )?"
_WHO = r"(?P<who>[a-z][\w'-]*(?: [a-z][\w'-]*)?)"
_HAVE = r"(?: have|'ve)?"
_STATUS = r"(?P<value>single|married|engaged|divorced|separated|widowed)\b"
_TOPIC = r"(?P<topic>[a-z]+(?: [a-z]+)?)"
_HOME = r"(?:flat|apartment|house|home|loft|studio|condo|place|cottage|bungalow)"
_PARTNER = r"(?:boyfriend|girlfriend|partner|husband|wife|fianc[eé]e?|spouse)"
_DIETS = (r"(?P<value>vegan|vegetarian|pescatarian|pescetarian|flexitarian|keto|paleo|carnivore|"
          r"gluten[- ]free|dairy[- ]free|lactose[- ]free|sugar[- ]free|teetotal|halal|kosher)\b")
_NAME = r"(?P<value>[A-Z][\w'-]+(?: [A-Z][\w'-]+)?)"  # a proper name (matched case-sensitively)
_INSTRUMENTS = (r"(?P<value>piano|keyboards?|organ|synth|guitar|bass guitar|bass|double bass|violin|viola|cello|"
                r"harp|flute|piccolo|clarinet|oboe|bassoon|saxophone|sax|trumpet|trombone|tuba|french horn|horn|"
                r"drums|percussion|ukulele|banjo|mandolin|accordion|harmonica|recorder|sitar|bagpipes)\b")
_FOODS = {"meat": "meat-eater", "fish": "pescatarian", "chicken": "meat-eater", "dairy": "dairy", "eggs": "eggs"}
# (attribute, first-person form, third-person form or None, fixed value or None). Without a fixed
# value or a ``value`` group, the value is the rest of the clause after the match.
_SPECS: tuple[tuple[str, str, str | None, str | None], ...] = (
    ("residence", rf"(?:I|we) {_NOW}live in", rf"{_WHO} {_NOW}lives in", None),
    ("residence", rf"(?:I'm|I am|we're|we are) {_NOW}(?:living|based|settled) in",
     rf"{_WHO} is {_NOW}(?:living|based|settled) in", None),
    ("residence-to", rf"(?:I|we){_HAVE} {_JUST}(?:moved|relocated) to",
     rf"{_WHO}(?: has)? {_JUST}(?:moved|relocated) to", None),
    # "we moved into a house in Antwerp", "I rent a flat in Ghent", "our apartment in Porto", "home is a loft in X"
    ("residence", rf"(?:I|we){_HAVE} {_JUST}moved into (?:[\w'-]+ ){{0,4}}?in", None, None),
    ("residence", rf"(?:I|we) (?:rent|own|share) (?:[\w'-]+ ){{0,3}}?{_HOME} in", None, None),
    ("residence", rf"(?:I|we){_HAVE} {_JUST}(?:bought|rented|found|got) (?:a|an|the|our|my) (?:[\w'-]+ ){{0,2}}?"
     rf"{_HOME} in", None, None),
    ("residence", rf"(?:I'm|I am|we're|we are) {_NOW}in (?:a|an|the|my|our) (?:[\w'-]+ ){{0,2}}?{_HOME} in", None,
     None),
    ("residence", rf"(?:my|our) (?:new )?(?:{_HOME}|address) (?:is )?in", None, None),
    ("residence", r"\bhome (?:for (?:me|us) )?is (?:[\w'-]+ ){0,4}?in", None, None),
    ("employer", rf"I {_NOW}work (?:at|for)", rf"{_WHO} {_NOW}works (?:at|for)", None),
    ("employer", rf"(?:I'm|I am) {_NOW}(?:working|employed) (?:at|for|by)",
     rf"{_WHO} is {_NOW}(?:working|employed) (?:at|for|by)", None),
    ("employer", r"my (?:new )?(?:job|employer|workplace) is (?:at |with )?", None, None),
    ("employer", rf"I(?:'ve| have)? {_JUST}(?:got |been |was )?hired (?:by|at)",
     rf"{_WHO}(?: has| was)? {_JUST}(?:got |been )?hired (?:by|at)", None),
    ("employer", rf"I{_HAVE} {_JUST}(?:started|got|took|landed|accepted) (?:a |the |my )?(?:new )?job (?:at|with)",
     rf"{_WHO}(?: has)? {_JUST}(?:started|got|took|landed|accepted) (?:a |the |his |her |their )?(?:new )?"
     r"job (?:at|with)", None),
    ("employer+", rf"I{_HAVE} {_JUST}(?:accepted|took|got) (?:a |an |the |their )?(?:job |position |role )?offer "
     r"(?:from|at) ", None, None),
    ("employer+", r"I(?:'ve| have) been (?:working )?(?:at|with) (?=\S+(?: \S+){0,2} for (?:[\w-]+ ){0,2}"
     r"(?:years?|months?|ages|a while)\b)", None, None),
    ("employer+", rf"I{_HAVE} {_JUST}(?:started|joined) (?:working )?(?:at |for )?", None, None),
    ("employer", rf"I{_HAVE} {_JUST}(?:quit|left|lost) my job",
     rf"{_WHO}(?: has)? {_JUST}(?:quit|left|lost) (?:his|her|their) job", "none"),
    ("occupation", rf"I {_NOW}work as", rf"{_WHO} {_NOW}works as", None),
    ("occupation", rf"(?:I'm|I am) {_NOW}working as", rf"{_WHO} is {_NOW}working as", None),
    ("relationship", rf"I{_HAVE} {_JUST}got (?P<value>married|engaged|divorced)",
     rf"{_WHO}(?: has)? {_JUST}got (?P<value>married|engaged|divorced)", None),
    ("relationship", rf"(?:I'm|I am) {_NOW}{_STATUS}", rf"{_WHO} is {_NOW}{_STATUS}", None),
    ("relationship", rf"(?:I|we){_HAVE} {_JUST}(?:broke|split) up", rf"{_WHO}(?: has)? {_JUST}(?:broke|split) up",
     "single"),
    ("partner", rf"(?:I|we){_HAVE} {_JUST}(?:broke|split) up", rf"{_WHO}(?: has)? {_JUST}(?:broke|split) up", "none"),
    ("partner", r"(?:I'm|I am) (?:now )?(?:single|divorced|widowed)\b", None, "none"),
    ("partner", rf"(?:I'm|I am|I've been|I have been|I've started|I started) {_NOW}(?:dating|seeing|going out with|"
     r"together with|engaged to|married to) (?:someone |a guy |a girl |a woman |a man )?(?:called |named )?", None,
     None),
    ("partner", rf"my {_NOW}(?:new )?{_PARTNER},? (?:is )?(?:now )?(?:called |named )?", None, None),
    ("favourite", rf"my (?:new |all-time )?favou?rite {_TOPIC} (?:(?:to|in|of|at|on|for) [a-z]+(?: [a-z]+)? )?"
     r"(?:these days |now |lately |at the moment )?(?:is|are)",
     rf"{_WHO}'s (?:new |all-time )?favou?rite {_TOPIC} (?:is|are)", None),
    ("diet", rf"\b(?:I'm|I am|I've been|I have been|I've gone|I have gone|I went|I've become|I became|"
     rf"so|now|back to being) (?:a |an |fully |strictly |mostly |completely |totally |now |still )*{_DIETS}", None,
     None),
    ("diet", r"\b(?:I'm|I am|I've been|me) (?:now )?on (?:a |the )?(?:strict )?(?P<value>[\w-]+(?: [\w-]+)?) diet",
     None, None),
    ("diet", r"\bI (?:can )?eat (?:pretty much |almost |just about )?(?:everything|anything)\b", None, "none"),
    ("diet", r"\b(?:I'm|I am|I've been|I have been|I've started|I started|I'm back to|I went back to) "
     r"(?:eating|having) (?P<value>meat|fish|chicken|dairy|eggs)\b(?= again| now| these days)", None, None),
    ("diet-not", r"\bI (?:don't|do not|no longer|never) eat (?P<value>meat|fish|dairy|eggs)\b", None, None),
    ("vehicle", rf"(?:I|we) {_NOW}drive (?:a |an |the |my |our )?", rf"{_WHO} {_NOW}drives (?:a |an |the |his |her )?",
     None),
    ("vehicle", rf"(?:I'm|I am|we're|we are) {_NOW}driving (?:a |an |the |my |our )?", None, None),
    ("vehicle", r"my (?:new )?car is (?:a |an |the )?", None, None),
    ("instrument", rf"(?:I|we) {_NOW}play (?:the )?{_INSTRUMENTS}", rf"{_WHO} {_NOW}plays (?:the )?{_INSTRUMENTS}",
     None),
    ("instrument", rf"(?:I'm|I am) {_NOW}(?:on|playing|learning) (?:the )?{_INSTRUMENTS}", None, None),
    ("instrument", rf"(?:switched|changed|moved|gone|went) (?:over )?to (?:the )?{_INSTRUMENTS}", None, None),
)
# Frames whose value is a proper name: matched with its case, so "my partner is great" states no partner.
_PROPER = ("partner",)
# Where one moves to is a home when it is named ("Berlin", "the Bay Area") or is a home ("a bigger flat in Leeds").
_PLACE = re.compile(rf"(?:(?:the|a|an|our|my) )?(?:(?-i:[A-Z])|(?:[\w'-]+ ){{0,2}}{_HOME}\b)", re.IGNORECASE)
# The value of a frame that ends in the inverse form: "Pho is my favourite dish" (value first).
_INVERSE = re.compile(r"(?P<value>[A-Z][\w'-]*(?: [\w'-]+){0,3}?) (?:is|has become|became) my (?:new )?"
                      rf"(?:all-time )?favou?rite {_TOPIC}\b")
_PHONE = re.compile(r"(?<![\w+])\+?\d[\d ()-]{5,}\d(?![\w])")
_PHONE_WORDS = re.compile(r"\b(?:number|phone|mobile|cell|landline|call|reach|text|whatsapp)\b", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_EMAIL_WORDS = re.compile(r"\b(?:e-?mail|address|inbox|reach|write|contact|use|I|me|my)\b", re.IGNORECASE)
# Contact details of a kind of their own: a work number is not the personal one, a landline not the mobile.
_QUALIFIER = re.compile(r"\b(?P<q>work|office|business|landline|home phone|house phone)\b", re.IGNORECASE)
# Someone else's details: "her number", "Sam's email".
_THEIRS = re.compile(r"\b(?:his|her|their|your)\b|\w's (?:new )?(?:number|phone|mobile|e-?mail)", re.IGNORECASE)

# "I used to live in ...": a past habit; "When the rain started we moved to the terrace": the time of something else.
_PAST_HABIT = re.compile(r"\bused to\s*$", re.IGNORECASE)
_BACKGROUND = re.compile(r"\b(?:when|whenever|while|after|before|until|once)\s+(?:[\w'-]+\s+){0,4}$", re.IGNORECASE)
#: The subject of a fact everyone shares: when "our" meeting or "the" book club takes place.
SHARED = "*"
_EVENT = r"(?P<topic>(?:[a-z]+ ){0,2}?[a-z]+)"
_DET = r"(?:(?:my|our|the) |^\s*|(?<=now on ))"  # "the book club ...", "Choir rehearsal ...", "From now on choir ..."
_SCHEDULE = [re.compile(r"(?<![\w'])" + p, re.IGNORECASE) for p in (
    rf"{_DET}{_EVENT} (?:is|are|meets?|starts?|runs?|takes place) (?:now |still )?(?:on |at |every |each |"
    r"from )?(?=\S)",
    rf"(?:my|our|the) {_EVENT} (?:has been |have been |was |were |got |is |are )?(?:moved|changed|rescheduled|shifted|"
    r"pushed back|brought forward) (?:from [^,.;]+? )?to ",
    rf"(?:we|they|I)(?: have|'ve)? (?:moved|changed|rescheduled|shifted) (?:the|our|my) {_EVENT} to ",
    rf"(?:my|our|the) {_EVENT} rescheduled (?:me|us|it|them) to ",
    rf"(?:my|our|the) [a-z]+ (?:moved|changed|rescheduled|shifted) (?:the|our|my) {_EVENT} to ")]
_TIMEISH = re.compile(r"\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|weekdays?|weekends?|mornings?|"
                      r"afternoons?|evenings?|nights?|noon|midday|midnight|\d{1,2}(?::\d\d)?|daily|weekly|monthly|"
                      r"every|each|first|last)\b", re.IGNORECASE)
_TIME_END = re.compile(r"[,;!]|\.(?:\s|$)|\s(?:and|but|because|so|since|though|which)\s", re.IGNORECASE)
_TIME_LEAD = re.compile(r"^(?:(?:the|every|each|on|at|from|usually|now|still)\s+)+", re.IGNORECASE)
_GENERIC = frozenset("weekly usual regular next daily monthly new old".split())
_START = r"(?<![\w'])"
_FIRST = [(a, re.compile(_START + f, re.IGNORECASE), v) for a, f, _, v in _SPECS]
_THIRD = [(a, re.compile(_START + t, re.IGNORECASE), v) for a, _, t, v in _SPECS if t is not None]
_SPEAKER = re.compile(r"^(?P<speaker>[^:\n]{1,60}):\s")
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_VALUE_END = re.compile(
    r"[,;:()\"]|\s[-\u2013\u2014]\s|\s(?:with|and|but|because|since|for|so|now|anymore|last|this|next|ago|when|after|"
    r"before|until|from|where|which|who|as|at|by|on|to|yesterday|today|recently|though|too|right|instead|these|"
    r"nowadays|lately|again|is|are|was|were|has|have|had|in \d|\d)\b", re.IGNORECASE)
_VALUE_LEAD = re.compile(r"^(?:(?:a|an|the|my|our|still|now|definitely|probably|actually|also|"
                         r"currently|officially|really|someone|called|named)\s+)+", re.IGNORECASE)
_MAX_VALUE_WORDS = 4
_ADVERBS = frozenset("now currently still actually just recently finally officially".split())
# Words of one kind of favourite ("my favourite spot", "my favourite place").
_TOPIC_SYNONYMS = {"spot": "place", "hangout": "place", "colour": "color", "movie": "film", "song": "track"}


@dataclass(frozen=True)
class Fact:
    """A current-state statement read off a restatement.

    Attributes:
        subject: the participant it is about, lower-cased.
        attribute: one of :data:`ATTRIBUTES`, ``"favourite:<thing>"`` (stemmed, e.g.
            ``"favourite:book"``), ``"phone:work"`` or ``"email:work"``.
        value: the normalised value, e.g. ``"berlin"``.
    """

    subject: str
    attribute: str
    value: str


def facts(unit: MemoryUnit) -> list[Fact]:
    """The facts a unit states, in order (empty for most units)."""
    return list(_facts(unit.restatement, tuple(unit.participants)))


def first_person_text(restatement: str, participants: tuple[str, ...]) -> tuple[str | None, str]:
    """``(speaker, text)``: the lower-cased speaker a first person refers to, and the text after its prefix."""
    text = restatement.replace("\u2019", "'")
    people = {p.strip().lower() for p in participants if p.strip()}
    match = _SPEAKER.match(text)
    if match and match.group("speaker").strip().lower() in people:
        return match.group("speaker").strip().lower(), text[match.end():]
    return (next(iter(people)) if len(people) == 1 else None), text


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (after ``.``, ``!``, ``?`` and at line breaks)."""
    return [s for s in _SENTENCES.split(text) if s.strip()]


# Its working set is one write's groups; more would keep evicted namespaces' texts alive (cache_bounds.py).
@text_cache
@lru_cache(maxsize=4096)
def _facts(restatement: str, participants: tuple[str, ...]) -> tuple[Fact, ...]:
    speaker, text = first_person_text(restatement, participants)
    people = {p.strip().lower() for p in participants if p.strip()}
    found: list[Fact] = []
    for sentence in sentences(text):
        if sentence.rstrip().endswith("?") or ADDITIVE.search(sentence):
            continue
        for first, patterns in ((True, _FIRST), (False, _THIRD)):
            for attribute, pattern, fixed in patterns:
                for hit in pattern.finditer(sentence):
                    before = sentence[: hit.start()]
                    if HEDGE.search(before) or _PAST_HABIT.search(before) or _BACKGROUND.search(before):
                        continue
                    subject = speaker if first else _participant(hit.group("who"), people)
                    value = _value(hit, sentence, fixed, attribute)
                    if attribute == "residence-to" and not _PLACE.match(sentence[hit.end():].lstrip()):
                        continue  # "we moved to the terrace": no home
                    if subject and value:
                        found.append(Fact(subject, _attribute(attribute, hit), value))
        if speaker is not None:
            found += _inverse(sentence, speaker) + _contacts(sentence, speaker)
        found += _schedules(sentence)
    return tuple(found)


def _schedules(sentence: str) -> list[Fact]:
    """When something recurring or booked takes place ("Our team sync is every Monday at 9"): everyone's fact."""
    out = []
    for pattern in _SCHEDULE:
        for hit in pattern.finditer(sentence):
            if HEDGE.search(sentence[: hit.start()]) or _BACKGROUND.search(sentence[: hit.start()]):
                continue
            tail = sentence[hit.end():]
            end = _TIME_END.search(tail)
            value = " ".join(tail[: end.start() if end else None].lower().split()[:6]).rstrip(".!")
            words = [w for w in hit.group("topic").lower().split() if w not in _GENERIC]
            if words and _TIMEISH.match(_TIME_LEAD.sub("", value)):
                out.append(Fact(SHARED, "schedule:" + " ".join(stem(w) for w in words), value))
    return out


def _inverse(sentence: str, speaker: str) -> list[Fact]:
    """``"Pho is my favourite dish"``: the value before the frame."""
    out = []
    for hit in _INVERSE.finditer(sentence):
        if not HEDGE.search(sentence[: hit.start()]):
            out.append(Fact(speaker, _attribute("favourite", hit), _clean(hit.group("value"))))
    return out


def _contacts(sentence: str, speaker: str) -> list[Fact]:
    """A phone number or an e-mail address the speaker gives as their own."""
    if _THEIRS.search(sentence):
        return []
    qualifier = _QUALIFIER.search(sentence)
    kind = "" if qualifier is None else ":" + ("work" if qualifier.group("q").lower() in (
        "work", "office", "business") else "landline")
    out = [Fact(speaker, "email" + kind, m.group(0).lower().rstrip(".")) for m in _EMAIL.finditer(sentence)
           if _EMAIL_WORDS.search(_EMAIL.sub(" ", sentence))]
    if _PHONE_WORDS.search(_EMAIL.sub(" ", sentence)):
        for m in _PHONE.finditer(_EMAIL.sub(" ", sentence)):
            digits = re.sub(r"\D", "", m.group(0))
            if len(digits) >= 7:
                out.append(Fact(speaker, "phone" + kind, digits))
    return out


def _participant(who: str, people: set[str]) -> str | None:
    """The named participant a third-person subject refers to ("Maya", "Maya Lopez", "friend Maya")."""
    names = who.lower().split()
    if names[-1] in _ADVERBS:  # "Maya now lives in": the optional second word took the adverb
        names = names[:-1]
    if " ".join(names) in people:
        return " ".join(names)
    return names[-1] if names and names[-1] in people else None


def _attribute(attribute: str, hit: re.Match[str]) -> str:
    if attribute != "favourite":
        return attribute.partition("-")[0].rstrip("+")
    topic = " ".join(_TOPIC_SYNONYMS.get(w, w) for w in hit.group("topic").lower().split())
    return "favourite:" + " ".join(stem(w) for w in topic.split())


def _value(hit: re.Match[str], sentence: str, fixed: str | None, tag: str) -> str:
    """The value a frame's hit states; ``tag`` is the frame's attribute as :data:`_SPECS` writes it."""
    if fixed is not None:
        return fixed
    if "value" in (hit.re.groupindex or {}):
        value = hit.group("value").lower() if hit.group("value") else ""
        if not value or tag.endswith("-not"):
            return "no-" + value if value else ""
        return _FOODS.get(value, value.replace(" ", "-"))
    tail = sentence[hit.end():]
    end = _VALUE_END.search(tail)
    value = tail[: end.start()] if end else tail
    if tag in _PROPER or tag.endswith("+"):  # a name is asked for, written as one
        name = re.match(_NAME, value.strip())
        return name.group("value").lower() if name else ""
    return _clean(value)


def _clean(value: str) -> str:
    value = _VALUE_LEAD.sub("", value.strip().rstrip(".!'\""))
    return " ".join(value.lower().split()[:_MAX_VALUE_WORDS])


def same_value(a: str, b: str) -> bool:
    """Values agree when one's words contain the other's ("new york" and "new york city")."""
    wa, wb = set(a.split()), set(b.split())
    return wa <= wb or wb <= wa
