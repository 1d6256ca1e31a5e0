"""Rule-based supersession: a newer statement of the same fact makes the older one out of date.

The rule (see ``docs/lifecycle.md``): :func:`facts` reads
``(subject, attribute, value)`` triples off a unit's restatement with a small
set of patterns (residence, employer, occupation, relationship status,
favourite <thing>), in the first person of the ``"Speaker: ..."`` restatement
or the third person of a named participant. Within a namespace, each unit is
superseded by the *earliest later* visible unit of the same subject and
attribute whose value differs; a unit with several facts is superseded only
when every one of them is. Marks (:mod:`langchain_ripplemem.index.marks`) are
recomputed for the touched ``(subject, attribute)`` groups whenever units
arrive, are deleted, suppressed or unsuppressed, so they always follow from the
units present: re-ingesting changes nothing, deleting or suppressing the newer
unit restores the older.

With ``WriteConfig(supersession={"llm": True})`` a chat model also names older units
a new one supersedes (:mod:`langchain_ripplemem.write.supersession.llm_supersession`). Its answer
is kept as a claim on the new unit (``"supersedes": {old id: attribute}``), and
the marks follow from the claims present in the same way: an older unit
without a rule-based successor is superseded by the earliest later visible unit
that claims it (marked ``"superseded_via": "llm"``).

Example:
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance
    >>> unit = MemoryUnit.create(namespace=("maya",), restatement="Maya: I just moved to Berlin.",
    ...                          participants=["Maya"], source=Provenance(conversation_id="c", session_id="s"))
    >>> facts(unit)
    [Fact(subject='maya', attribute='residence', value='berlin')]

"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from langchain_ripplemem._runtime.text_caches import text_cache
from langchain_ripplemem.index.marks import (
    MARKS,
    SUPERSEDED_ATTRIBUTE,
    SUPERSEDED_BY,
    SUPERSEDED_VIA,
    VALID_UNTIL,
    claims,
    is_suppressed,
    order_key,
    order_time,
)
from langchain_ripplemem.schemas import MemoryUnit, Namespace
from langchain_ripplemem.text.lexical import stem

if TYPE_CHECKING:
    from langchain_ripplemem.index.namespace_index import NamespaceIndex
    from langchain_ripplemem.index.unit_index import UnitIndex

__all__ = ["ATTRIBUTES", "GROUP_POOL", "Fact", "fact_keys", "facts", "refresh_supersession", "same_value"]

# Earlier units of one participant considered per group: supersession is a
# write-time check and must stay cheap however long a history grows.
GROUP_POOL = 400

ATTRIBUTES = ("residence", "employer", "occupation", "relationship", "favourite")

# -- fact patterns ---------------------------------------------------------------------
_NOW = r"(?:now |currently |still |actually )?"
_JUST = r"(?:just |recently |finally |now |actually |officially )?"
_WHO = r"(?P<who>[a-z][\w'-]*(?: [a-z][\w'-]*)?)"
_HAVE = r"(?: have|'ve)?"
_STATUS = r"(?P<value>single|married|engaged|divorced|separated|widowed)\b"
_TOPIC = r"(?P<topic>[a-z]+(?: [a-z]+)?)"
# (attribute, first-person form, third-person form, fixed value). Without a fixed
# value or a ``value`` group, the value is the rest of the clause after the match.
_SPECS: tuple[tuple[str, str, str, str | None], ...] = (
    ("residence", rf"(?:I|we) {_NOW}live in", rf"{_WHO} {_NOW}lives in", None),
    ("residence", rf"(?:I'm|I am|we're|we are) {_NOW}(?:living|based) in",
     rf"{_WHO} is {_NOW}(?:living|based) in", None),
    ("residence", rf"(?:I|we){_HAVE} {_JUST}(?:moved|relocated) to",
     rf"{_WHO}(?: has)? {_JUST}(?:moved|relocated) to", None),
    ("employer", rf"I {_NOW}work (?:at|for)", rf"{_WHO} {_NOW}works (?:at|for)", None),
    ("employer", rf"I{_HAVE} {_JUST}(?:started|got|took|landed|accepted) (?:a |the |my )?(?:new )?job (?:at|with)",
     rf"{_WHO}(?: has)? {_JUST}(?:started|got|took|landed|accepted) (?:a |the |his |her |their )?(?:new )?"
     r"job (?:at|with)", None),
    ("employer", rf"I{_HAVE} {_JUST}(?:quit|left|lost) my job",
     rf"{_WHO}(?: has)? {_JUST}(?:quit|left|lost) (?:his|her|their) job", "none"),
    ("occupation", rf"I {_NOW}work as", rf"{_WHO} {_NOW}works as", None),
    ("occupation", rf"(?:I'm|I am) {_NOW}working as", rf"{_WHO} is {_NOW}working as", None),
    ("relationship", rf"I{_HAVE} {_JUST}got (?P<value>married|engaged|divorced)",
     rf"{_WHO}(?: has)? {_JUST}got (?P<value>married|engaged|divorced)", None),
    ("relationship", rf"(?:I'm|I am) {_NOW}{_STATUS}", rf"{_WHO} is {_NOW}{_STATUS}", None),
    ("relationship", rf"(?:I|we){_HAVE} {_JUST}(?:broke|split) up", rf"{_WHO}(?: has)? {_JUST}(?:broke|split) up",
     "single"),
    ("favourite", rf"my (?:new |all-time )?favou?rite {_TOPIC} (?:is|are)",
     rf"{_WHO}'s (?:new |all-time )?favou?rite {_TOPIC} (?:is|are)", None),
)
_START = r"(?<![\w'])"
_FIRST = [(a, re.compile(_START + f, re.IGNORECASE), v) for a, f, _, v in _SPECS]
_THIRD = [(a, re.compile(_START + t, re.IGNORECASE), v) for a, _, t, v in _SPECS]
_SPEAKER = re.compile(r"^(?P<speaker>[^:\n]{1,60}):\s")
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
# A clause that only imagines, asks or conditions a fact states none.
_HEDGE = re.compile(r"\b(?:if|whether|unless|would|could|wish|hope|want|wanna|dream|imagine|pretend|"
                    r"maybe|might|planning|plan|thinking|considering)\b", re.IGNORECASE)
_VALUE_END = re.compile(
    r"[,;:()\"]|\s[-\u2013\u2014]\s|\s(?:with|and|but|because|since|for|so|now|anymore|last|this|next|ago|when|after|"
    r"before|until|from|where|which|who|as|at|by|on|to|yesterday|today|recently|though|too|right|"
    r"again|in \d|\d)\b", re.IGNORECASE)
_VALUE_LEAD = re.compile(r"^(?:(?:a|an|the|my|our|still|now|definitely|probably|actually|also|"
                         r"currently|officially|really)\s+)+", re.IGNORECASE)
_MAX_VALUE_WORDS = 4


@dataclass(frozen=True)
class Fact:
    """A current-state statement read off a restatement.

    Attributes:
        subject: the participant it is about, lower-cased.
        attribute: ``"residence"``, ``"employer"``, ``"occupation"``, ``"relationship"``
            or ``"favourite:<thing>"`` (stemmed, e.g. ``"favourite:book"``).
        value: the normalised value, e.g. ``"berlin"``.
    """

    subject: str
    attribute: str
    value: str


def facts(unit: MemoryUnit) -> list[Fact]:
    """The facts a unit states, in order (empty for most units)."""
    return list(_facts(unit.restatement, tuple(unit.participants)))


# Its working set is one write's groups; more would keep evicted namespaces' texts alive (cache_bounds.py).
@text_cache
@lru_cache(maxsize=4096)
def _facts(restatement: str, participants: tuple[str, ...]) -> tuple[Fact, ...]:
    text = restatement.replace("\u2019", "'")
    people = {p.strip().lower() for p in participants if p.strip()}
    speaker = None
    match = _SPEAKER.match(text)
    if match and match.group("speaker").strip().lower() in people:
        speaker, text = match.group("speaker").strip().lower(), text[match.end():]
    elif len(people) == 1:
        speaker = next(iter(people))
    found: list[Fact] = []
    for sentence in _SENTENCES.split(text):
        if not sentence.strip() or sentence.rstrip().endswith("?"):
            continue
        for first, patterns in ((True, _FIRST), (False, _THIRD)):
            for attribute, pattern, fixed in patterns:
                for hit in pattern.finditer(sentence):
                    if _HEDGE.search(sentence[: hit.start()]):
                        continue
                    subject = speaker if first else _participant(hit.group("who"), people)
                    value = _value(hit, sentence, fixed)
                    if subject and value:
                        found.append(Fact(subject, _attribute(attribute, hit), value))
    return tuple(found)


_ADVERBS = frozenset("now currently still actually just recently finally officially".split())


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
        return attribute
    topic = hit.group("topic").lower().replace("colour", "color")
    return "favourite:" + " ".join(stem(w) for w in topic.split())


def _value(hit: re.Match[str], sentence: str, fixed: str | None) -> str:
    if fixed is not None:
        return fixed
    if "value" in (hit.re.groupindex or {}):
        return hit.group("value").lower()
    tail = sentence[hit.end():]
    end = _VALUE_END.search(tail)
    tail = _VALUE_LEAD.sub("", (tail[: end.start()] if end else tail).strip().rstrip(".!'\""))
    return " ".join(tail.lower().split()[:_MAX_VALUE_WORDS])


def same_value(a: str, b: str) -> bool:
    """Values agree when one's words contain the other's ("new york" and "new york city")."""
    wa, wb = set(a.split()), set(b.split())
    return wa <= wb or wb <= wa


def fact_keys(units: Iterable[MemoryUnit]) -> set[tuple[str, str]]:
    """The ``(subject, attribute)`` groups these units take part in."""
    return {(f.subject, f.attribute) for unit in units for f in facts(unit)}


def refresh_supersession(index: UnitIndex, ns: Namespace, touched: Iterable[MemoryUnit]) -> list[str]:
    """Recompute the marks that units written, deleted, suppressed or unsuppressed can change.

    Those are the marks of every visible unit in the ``(subject, attribute)`` groups
    of ``touched``, of the units ``touched`` claim to supersede, and of touched
    units that other units claim.

    Returns:
        Ids of units whose marks changed and that are now superseded.
    """
    touched = list(touched)
    if not touched:
        return []
    keys = fact_keys(touched)
    namespace_index = index.namespace_index(ns)
    claimed = {old for unit in touched for old in claims(unit)} | \
        {unit.id for unit in touched if namespace_index.claimed_by.get(unit.id)}
    if not keys and not claimed:
        return []
    groups: dict[tuple[str, str], list[tuple[MemoryUnit, str]]] = {}

    def group(key: tuple[str, str]) -> list[tuple[MemoryUnit, str]]:
        if key not in groups:
            subject, attribute = key
            members: dict[str, tuple[MemoryUnit, str]] = {}
            for row in namespace_index.postings["participants"].get(subject, [])[-GROUP_POOL:]:
                unit = namespace_index.units[row]
                if is_suppressed(unit):
                    continue
                for fact in facts(unit):  # a unit's last value per group counts
                    if fact.subject == subject and fact.attribute == attribute:
                        members[unit.id] = (unit, fact.value)
            groups[key] = sorted(members.values(), key=lambda m: order_key(m[0]))
        return groups[key]

    def rule_successor(unit: MemoryUnit) -> tuple[MemoryUnit, str] | None:
        successors: list[tuple[MemoryUnit, str] | None] = []
        for key in sorted(fact_keys([unit])):
            members = group(key)
            at = next((i for i, (m, _) in enumerate(members) if m.id == unit.id), None)
            later = None if at is None else next(
                (m for m, v in members[at + 1:] if not same_value(v, members[at][1])), None)
            successors.append(None if later is None else (later, key[1]))
        if not successors or not all(successors):
            return None
        # Several facts: the unit is outdated once its last fact is.
        return max((s for s in successors if s), key=lambda s: order_key(s[0]))

    affected = {unit.id: unit for key in sorted(keys) for unit, _ in group(key)}
    for uid in sorted(claimed):
        unit = namespace_index.unit(uid)
        if unit is not None and not is_suppressed(unit):
            affected.setdefault(uid, unit)
    changed: list[MemoryUnit] = []
    for unit in affected.values():
        metadata = {k: v for k, v in unit.metadata.items() if k not in MARKS}
        rule = rule_successor(unit)  # a rule-based successor first; an LLM's claim where there is none
        mark = rule or _claimant(namespace_index, unit)
        if mark is not None:
            later, attribute = mark
            metadata.update({SUPERSEDED_BY: later.id, VALID_UNTIL: order_time(later).isoformat(),
                             SUPERSEDED_ATTRIBUTE: attribute})
            if rule is None:
                metadata[SUPERSEDED_VIA] = "llm"
        if metadata != unit.metadata:
            changed.append(unit.model_copy(update={"metadata": metadata}))
    index.replace(ns, changed)
    return [u.id for u in changed if SUPERSEDED_BY in u.metadata]


def _claimant(namespace_index: NamespaceIndex, unit: MemoryUnit) -> tuple[MemoryUnit, str] | None:
    """The earliest later visible unit that claims to supersede ``unit``, and the attribute it names."""
    key = order_key(unit)
    later = [c for c in (namespace_index.unit(i) for i in namespace_index.claimed_by.get(unit.id, ()))
             if c is not None and not is_suppressed(c) and order_key(c) > key]
    if not later:
        return None
    first = min(later, key=order_key)
    return first, claims(first).get(unit.id) or "update"
