"""Cue normalisation: one spelling per person and place, so Jaccard overlaps mean something.

Structural edges compare participant and location *sets*. "Maya", "maya's"
and "MAYA" must be one element, "NYC" and "New York" one place. This module
is pure string work, shared by the extractors (write path) and query cue
extraction (read path).

Example:
    >>> canonical_name("  maya's ")
    'Maya'
    >>> canonical_location("the nyc")
    'New York'

"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from langchain_ripplemem._runtime.text_caches import text_cache

__all__ = [
    "KNOWN_PLACES",
    "PLACE_WORDS",
    "Aliases",
    "canonical_location",
    "canonical_name",
    "normalise_cues",
    "refers_to",
]

# Lower-cased words that stay lower-case inside multi-word names and places.
_PARTICLES = frozenset({"of", "the", "de", "la", "le", "du", "da", "van", "von", "der", "den",
                        "and", "on", "upon", "del", "di", "al", "bin"})
_POSSESSIVE = re.compile(r"(?:['\u2019]s|(?<=s)['\u2019])$", re.IGNORECASE)
_EDGE_PUNCT = " \t\n\"'`\u2018\u2019\u201c\u201d.,;:!?()[]{}<>"

# A small gazetteer (lower-case): the rule extractor and query cue extraction use it.
KNOWN_PLACES: frozenset[str] = frozenset({p.lower() for p in """
New York|Los Angeles|San Francisco|Chicago|Boston|Seattle|Portland|Austin|Houston|Dallas|Miami|
Denver|Atlanta|Phoenix|Las Vegas|San Diego|Philadelphia|Nashville|New Orleans|Detroit|Orlando|
Hawaii|Alaska|California|Texas|Florida|Oregon|Washington|Colorado|Arizona|Nevada|Utah|Montana|
Vermont|Maine|Ohio|Michigan|Georgia|Virginia|Carolina|New Jersey|Massachusetts|Minnesota|
London|Paris|Berlin|Rome|Madrid|Barcelona|Lisbon|Amsterdam|Dublin|Edinburgh|Vienna|Prague|
Athens|Venice|Florence|Milan|Munich|Zurich|Geneva|Stockholm|Oslo|Copenhagen|Helsinki|Moscow|
Istanbul|Dubai|Cairo|Tokyo|Kyoto|Osaka|Seoul|Beijing|Shanghai|Hong Kong|Singapore|Bangkok|
Bali|Sydney|Melbourne|Toronto|Vancouver|Montreal|Mexico City|Rio|Buenos Aires|Lima|Havana|
Mumbai|Delhi|New Delhi|Bangalore|Cape Town|Nairobi|Jerusalem|Reykjavik|
United States|America|Canada|Mexico|Brazil|Argentina|Chile|Peru|Colombia|Cuba|Jamaica|
England|Scotland|Ireland|Wales|Britain|United Kingdom|France|Germany|Italy|Spain|Portugal|
Netherlands|Holland|Belgium|Switzerland|Austria|Sweden|Norway|Denmark|Finland|Iceland|Poland|
Greece|Turkey|Russia|Ukraine|Egypt|Morocco|Kenya|Nigeria|South Africa|Israel|India|China|Japan|
Korea|South Korea|Thailand|Vietnam|Indonesia|Philippines|Australia|New Zealand|Europe|Asia|
Africa|NYC|LA|SF|USA|UK|Yellowstone|Yosemite|Grand Canyon|Disneyland|Disney World
""".replace("\n", "").split("|")})
# Last words that make a capitalised phrase a place ("Harbor Grill", "Central Park").
PLACE_WORDS: frozenset[str] = frozenset("""
grill cafe café restaurant bar pub bistro diner bakery pizzeria park beach lake river mountain
mountains mount street st avenue ave road rd boulevard square plaza mall market museum gallery
theater theatre stadium arena center centre hospital clinic school college university academy
library church temple mosque hotel resort airport station zoo island islands valley canyon falls
forest bay harbor harbour hall gym studio club village city county coast trail garden gardens
shelter aquarium cathedral castle palace springs hills
""".split())
# Tiny built-in alias tables; users extend them through :class:`Aliases`.
BUILTIN_NAME_ALIASES: dict[str, str] = {
    "mom": "Mom", "mum": "Mom", "mommy": "Mom", "mother": "Mom", "mama": "Mom",
    "dad": "Dad", "daddy": "Dad", "father": "Dad", "papa": "Dad",
    "grandma": "Grandma", "granny": "Grandma", "grandmother": "Grandma",
    "grandpa": "Grandpa", "grandfather": "Grandpa",
}
BUILTIN_LOCATION_ALIASES: dict[str, str] = {
    "nyc": "New York", "new york city": "New York", "ny": "New York",
    "la": "Los Angeles", "l.a.": "Los Angeles", "sf": "San Francisco",
    "san fran": "San Francisco", "dc": "Washington, D.C.", "washington dc": "Washington, D.C.",
    "us": "United States", "u.s.": "United States", "usa": "United States",
    "u.s.a.": "United States", "america": "United States", "united states of america":
    "United States", "uk": "United Kingdom", "u.k.": "United Kingdom",
    "britain": "United Kingdom", "great britain": "United Kingdom", "uae":
    "United Arab Emirates", "holland": "Netherlands", "the netherlands": "Netherlands",
}


def _clean(value: str) -> str:
    """Collapse whitespace, drop surrounding punctuation and a trailing possessive."""
    text = " ".join(value.split()).strip(_EDGE_PUNCT)
    return _POSSESSIVE.sub("", text).strip(_EDGE_PUNCT)


def _case_word(word: str, *, first: bool, keep_acronyms: bool) -> str:
    """Title-case one word but leave deliberate mixed case ("McDonald", "iPhone") alone."""
    if "-" in word:
        return "-".join(_case_word(p, first=first, keep_acronyms=keep_acronyms) if p else p
                        for p in word.split("-"))
    lower = word.lower()
    if not first and lower in _PARTICLES:
        return lower
    if word.isupper() and keep_acronyms and len(word) <= 4:
        return word  # "USA", "NBA": an acronym is not a lower-cased word
    if word != lower and word != word.upper():
        return word  # already mixed case: the writer meant it
    if lower.startswith("mc") and len(lower) > 2:
        return "Mc" + lower[2:].capitalize()
    if len(lower) > 2 and lower[1] in "'\u2019" and lower[0] in "od":
        return lower[0].upper() + lower[1] + lower[2:].capitalize()  # O'Neil, D'Angelo
    return lower.capitalize()


def canonical_name(value: str) -> str:
    """Canonical spelling of a person's name.

    Strips whitespace, quotes and a possessive ("'s"), collapses inner
    whitespace and title-cases each word unless it already has deliberate
    mixed case. Returns ``""`` for blank input.

    Example:
        >>> canonical_name("sam  mcdonald's")
        'Sam McDonald'
        >>> canonical_name("DeShawn")
        'DeShawn'

    """
    text = _clean(value)
    words = text.split(" ")
    return " ".join(_case_word(w, first=i == 0, keep_acronyms=False)
                    for i, w in enumerate(words) if w)


def refers_to(asked: str, name: str) -> bool:
    """Whether a person someone asks for (a timeline's ``person``, a recall filter's speaker) is ``name``.

    The one way a person asked for is matched against a memory's speaker or participant:
    case-insensitive, on canonical spellings, and a first name is also a full name that
    starts with it ("maya" is "Maya Lindqvist"); a full name is only itself.

    Example:
        >>> refers_to("maya", "Maya Lindqvist"), refers_to("MAYA", "maya's"), refers_to("maya", "Mayan")
        (True, True, False)
        >>> refers_to("Maya Lindqvist", "Maya"), refers_to("", "Maya")
        (False, False)

    """
    asked_key, name_key = _person_key(asked), _person_key(name)
    return bool(asked_key) and (name_key == asked_key or name_key.startswith(asked_key + " "))


@text_cache
@lru_cache(maxsize=4096)
def _person_key(name: str) -> str:
    """How a person's name compares: canonical, case-folded (cached: a timeline compares every memory's names)."""
    return canonical_name(name).casefold()


def canonical_location(value: str) -> str:
    """Canonical spelling of a place: like names, plus acronyms and the built-in aliases.

    A leading "the" is dropped ("the Harbor Grill" -> "Harbor Grill"), short
    acronyms keep their case, and a tiny table maps "NYC" -> "New York",
    "USA" -> "United States" and the like.

    Example:
        >>> canonical_location("harbor grill")
        'Harbor Grill'
        >>> canonical_location("USA")
        'United States'

    """
    text = _clean(value)
    text = re.sub(r"^the\s+", "", text, flags=re.IGNORECASE)
    alias = BUILTIN_LOCATION_ALIASES.get(text.lower())
    if alias:
        return alias
    words = text.split(" ")
    return " ".join(_case_word(w, first=i == 0, keep_acronyms=True)
                    for i, w in enumerate(words) if w)


class Aliases:
    """A small alias -> canonical map for names (and places) of one conversation.

    Lookups are case-insensitive and go through :func:`canonical_name` first.
    Built in: family words ("mom" -> "Mom"). :meth:`learn` registers full
    names so that a first name alone resolves to the full name, but only while
    that first name is unambiguous within what was learnt.

    Example:
        >>> aliases = Aliases()
        >>> aliases.learn(["Sam Carter", "Maya"])
        >>> aliases.resolve("sam"), aliases.resolve("mum"), aliases.resolve("Priya")
        ('Sam Carter', 'Mom', 'Priya')

    """

    def __init__(self, mapping: Mapping[str, str] | None = None, *, builtin: bool = True) -> None:
        self._map: dict[str, str] = {}
        self._ambiguous: set[str] = set()
        if builtin:
            self._map.update(BUILTIN_NAME_ALIASES)
        for alias, canonical in (mapping or {}).items():
            self.add(alias, canonical)

    def add(self, alias: str, canonical: str) -> None:
        """Map ``alias`` to ``canonical`` (explicit entries always win)."""
        key = canonical_name(alias).lower()
        if key:
            self._map[key] = canonical_name(canonical)
            self._ambiguous.discard(key)

    def learn(self, names: Iterable[str]) -> None:
        """Register full names so their first name alone resolves to them."""
        for name in names:
            full = canonical_name(name)
            parts = full.split(" ")
            if len(parts) < 2:
                continue
            key = parts[0].lower()
            if key in self._ambiguous:
                continue
            known = self._map.get(key)
            if known is not None and known != full:
                # Two "Sam"s: a first name alone no longer says which one.
                del self._map[key]
                self._ambiguous.add(key)
            else:
                self._map[key] = full

    def resolve(self, name: str) -> str:
        """The canonical form of a person's name (itself when no alias applies)."""
        canonical = canonical_name(name)
        return self._map.get(canonical.lower(), canonical)

    def resolve_location(self, place: str) -> str:
        """The canonical form of a place (see :func:`canonical_location`)."""
        return canonical_location(place)

    def __contains__(self, alias: object) -> bool:
        return isinstance(alias, str) and canonical_name(alias).lower() in self._map

    def __len__(self) -> int:
        return len(self._map)


def normalise_cues(values: Iterable[str], *, location: bool = False,
                   aliases: Aliases | None = None) -> list[str]:
    """Canonicalise cue values, drop blanks and case-insensitive duplicates, keep order.

    Args:
        values: raw names (or places, with ``location=True``).
        location: use :func:`canonical_location` instead of :func:`canonical_name`.
        aliases: resolve names through this alias map first.

    Example:
        >>> normalise_cues(["maya", "Maya's", " sam ", ""])
        ['Maya', 'Sam']

    """
    out: list[str] = []
    seen: set[str] = set()
    for value in values:
        if location:
            canonical = aliases.resolve_location(value) if aliases else canonical_location(value)
        else:
            canonical = aliases.resolve(value) if aliases else canonical_name(value)
        key = canonical.casefold()
        if canonical and key not in seen:
            seen.add(key)
            out.append(canonical)
    return out
