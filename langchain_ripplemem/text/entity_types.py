"""What kind of thing a capitalised name is, from the words around it: general rules, no list of names.

The rule-based extractor (:mod:`~langchain_ripplemem.write.extraction.rule_extractor`) sorts the
capitalised phrases of a turn into people (``participants``), places
(``locations``) and other named things. Three rules decide before the default
(a capitalised word mid-sentence is a person):

* **streets** are places: a phrase that starts with a street word of a language
  that puts it first ("Rue Mercière", "Via Roma", "Calle Mayor", "Ulica Długa")
  or ends in one (English "Elm Street" is :data:`~.cues.PLACE_WORDS`' job;
  German "Hauptstraße", "Berliner Strasse", Dutch "Prinsengracht" ends in a
  canal word);
* **animals**: a name right after an animal word ("our cat Pixel", "my dog, Rex")
  is a pet's;
* **things**: a name right after a determiner or a possessive ("a Renault",
  "the Renault", "my Kindle") names a thing, an organisation or a product, not
  a person (people are not "a Sam"); so does one after a vehicle verb or
  noun ("drive a ...", "bought a ..."). ("at the X" is left a thing: on LoCoMo it
  named a film, a car and a ward as often as a place.)

Every typed name stays an identifying cue (it links the memories that say it);
only people become participants and only places locations.

Example:
    >>> entity_type("Rue Mercière", "the Thai place on "), entity_type("Pixel", "our cat ")
    ('location', 'animal')
    >>> entity_type("Renault", "I finally bought a "), entity_type("Sam", "I met ")
    ('organization', None)

"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["ANIMAL_WORDS", "STREET_PREFIXES", "STREET_SUFFIXES", "UPPER", "entity_type"]


# Where upper-case letters are: the Basic Multilingual Plane, and the few cased scripts past it (Deseret to
# Old Hungarian, Warang Citi, Medefaidrin, Adlam). Reading only these keeps the import fast (~30 ms, not 0.5 s).
_CASED_BLOCKS = ((0, 0xFFFF), (0x10400, 0x10CFF), (0x118A0, 0x118BF), (0x16E40, 0x16E5F), (0x1E900, 0x1E95F))


def _class_of(predicate: Callable[[str], bool]) -> str:
    """A regex character class body (ranges) of every code point ``predicate`` holds for."""
    ranges: list[tuple[int, int]] = []
    for code in (c for start, stop in _CASED_BLOCKS for c in range(start, stop + 1)):
        if predicate(chr(code)):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


#: Upper- and title-case letters of every script, as a character class body: "É", "Ł", "Z".
#: Python's ``re`` has no ``\p{Lu}``; this is its set, built once from ``str.isupper``/``istitle``.
UPPER = _class_of(lambda c: c.isupper() or c.istitle())

# Street words that come before the name, lower-cased (French, Italian, Spanish, Portuguese,
# Catalan, Polish, Czech, Romanian, Dutch-Belgian, Turkish): "Rue Mercière", "Ulica Długa".
STREET_PREFIXES: frozenset[str] = frozenset("""
rue avenue boulevard bd chemin allée allee impasse quai place cours via viale vicolo piazza corso largo
calle avenida paseo plaza carrer rua travessa praça praca ulica aleja plac ulice náměstí namesti
strada bulevardul piața piata straat laan cadde sokak
""".split())
# Endings of one-word or last-word street names (German, Dutch, Scandinavian): "Hauptstraße".
STREET_SUFFIXES: tuple[str, ...] = ("straße", "strasse", "gasse", "allee", "platz", "weg", "damm", "ufer",
                                    "straat", "gracht", "plein", "gade", "gatan", "vej", "veien")
#: Words for animals a person may name: the name that follows is a pet's.
ANIMAL_WORDS: frozenset[str] = frozenset("""
cat cats kitten kitty dog dogs puppy pup pooch hamster rabbit bunny parrot budgie bird canary horse pony
tortoise turtle goldfish fish gerbil ferret lizard gecko snake iguana cockatiel mare stallion pig goat
""".split())
# A phrase starting with one of these names a person, whatever comes before it.
_PERSON_TITLES = frozenset("""
aunt auntie uncle cousin grandma grandpa granny nana nan gran coach dr doctor mr mrs ms miss sister brother
mom mum dad mama papa professor prof sir madam lady lord father mother saint st
""".split())
# A capitalised word after one of these is a thing (brand, product, organisation), not a person.
_DETERMINERS = frozenset("a an the my our his her their your this that these those new old used".split())
_VEHICLE_CONTEXT = re.compile(r"\b(?:drive[sn]?|drove|driving|bought|buy|buying|own|owns|lease[ds]?|rent(?:ed)?|"
                              r"car|truck|van|bike|motorbike|scooter|phone|laptop)\s+(?:an?\s+|the\s+|my\s+)?$")
_ANIMAL_BEFORE = re.compile(r"\b(?:" + "|".join(sorted(ANIMAL_WORDS, key=len, reverse=True))
                            + r"),?\s+(?:named\s+|called\s+)?$")


def entity_type(phrase: str, before: str) -> str | None:
    """``"location"``, ``"animal"`` or ``"organization"`` when a rule types ``phrase``; ``None``: the default decides.

    Args:
        phrase: a capitalised phrase of a turn ("Rue Mercière").
        before: the turn's text right before it (its last few words are read).
    """
    words = phrase.split()
    if not words:
        return None
    first, last = words[0].lower(), words[-1].lower()
    if first in _PERSON_TITLES:  # "my Aunt Rosa", "the Coach": a person, the default's call
        return None
    if (len(words) > 1 and first in STREET_PREFIXES) or (len(last) > 6 and last.endswith(STREET_SUFFIXES)) \
            or (len(words) > 1 and last in STREET_SUFFIXES):
        return "location"
    tail = before[-40:].lower()
    if _ANIMAL_BEFORE.search(tail):
        return "animal"
    previous = tail.rstrip().rsplit(" ", 1)[-1] if tail.strip() else ""
    if previous in _DETERMINERS or _VEHICLE_CONTEXT.search(tail):
        return "organization"
    return None
