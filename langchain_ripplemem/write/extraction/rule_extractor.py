"""The offline default extractor: one memory unit per turn, cues found by rules.

No model, no network, thousands of turns per second. Each non-empty turn
becomes a unit whose restatement is ``"<Speaker>: <original text>"`` (plus
``" [<Speaker> shared an image: <caption>]"`` for shared images). The
original wording is kept on purpose: BM25 and the embedding model both match
the words people later ask about, and the speaker's name in front makes the
unit readable without the dialogue ("I" is the named speaker).

Cues, all canonicalised through :mod:`langchain_ripplemem.text.names`:

* participants: the speaker; capitalised names in the text that are not at a
  sentence start, not inside quotes (titles) and not known non-names (days,
  months, places, languages, greetings); names at a sentence start only when
  the session already knows them (a speaker, or a name seen mid-sentence
  elsewhere in the session); nicknames that are a prefix of exactly one
  speaker's name ("Mel" -> "Melanie"); and, in a two-speaker session, the
  addressee when the turn says "you"/"your". In German, which capitalises every
  noun, a capitalised word after an article, a possessive, a quantifier or a
  number is a noun ("das Wetter", "Mein Bruder", "drei Kühe"), not a name.
* locations: a small city/country table, capitalised phrases ending in a
  place word ("Harbor Grill", "Central Park"), streets named the way their
  language does ("Rue Mercière", "Hauptstraße"), and capitalised phrases after
  in/at/near/around/visit (also with "the"), or after "to"/"from" following a
  movement verb.
* other named things (:mod:`~.entity_types`): a pet's name ("our cat Pixel") or a
  thing's (after a determiner or a vehicle verb: "bought a Renault") is neither a
  participant nor a place; it stays an identifying cue and is recorded as
  ``metadata["entities"]`` (``{"Pixel": "animal", "Renault": "organization"}``).
  Capitalised means capitalised in any script ("Zoë", "Łódź").
* time: the first phrase :func:`~.timeparse.ground_time` grounds against the
  turn's (else the session's) timestamp; otherwise that whole day; ``None``
  when there is no timestamp.
* identifying cues (:mod:`~langchain_ripplemem.text.identifying`): names
  other than the session's speakers and topic words, plus "weekend" when the
  grounded time falls on one ("yesterday" said on a Monday).
* kind: "preference" (love, hate, prefer, favourite, enjoy, "I like"), else
  "plan" (will, going to, plan to, next week, ...), else "event".

Turns longer than :data:`MAX_TURN_CHARS` (900) are split at sentence
boundaries into chunks of at most that many characters (a single longer
sentence is cut at the last space before the limit); each chunk becomes its
own unit with the same turn id, and the image caption goes with the first
chunk. 900 characters of English prose or dialogue are 200 to 230 tokens, so a
chunk fits the default encoder's 256-token window and all of it is embedded;
text denser in tokens (numbers, code) may still be cut at the window's end.
The work is linear in the turn's length.

Example:
    >>> from datetime import datetime
    >>> from langchain_ripplemem.schemas import Session, Turn
    >>> from langchain_ripplemem.write.extraction.extractor import Window
    >>> s = Session(id="S1", time=datetime(2023, 5, 8, 13, 56), turns=[
    ...     Turn(id="D1:1", speaker="Maya", text="My friend Sam took me to Harbor Grill yesterday.")])
    >>> w = Window(conversation_id="c1", index=0, items=((s, s.turns[0]),))
    >>> unit = RuleBasedExtractor().extract(w, ("demo",)).units[0]
    >>> unit.restatement
    'Maya: My friend Sam took me to Harbor Grill yesterday.'
    >>> unit.participants, unit.locations, str(unit.time.start.date())
    (['Maya', 'Sam'], ['Harbor Grill'], '2023-05-07')

"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import NamedTuple

from langchain_ripplemem.config import ExtractionConfig
from langchain_ripplemem.schemas import (
    MemoryUnit,
    Namespace,
    Provenance,
    Session,
    TimeInterval,
    Turn,
    Usage,
    aware,
)
from langchain_ripplemem.text.entity_types import UPPER, entity_type
from langchain_ripplemem.text.identifying import identifying_cues
from langchain_ripplemem.text.language import detect_language
from langchain_ripplemem.text.lexical import STOPWORDS
from langchain_ripplemem.text.names import (
    BUILTIN_NAME_ALIASES,
    KNOWN_PLACES,
    PLACE_WORDS,
    Aliases,
    canonical_location,
    canonical_name,
)
from langchain_ripplemem.text.time.timeparse import day_interval, ground_time
from langchain_ripplemem.write.extraction.extractor import ExtractionResult, Window
from langchain_ripplemem.write.extraction.windows import split_text

__all__ = ["MAX_TURN_CHARS", "RuleBasedExtractor"]

#: Longer turns are split at sentences into chunks of at most this many characters: 900 characters of
#: English are 200 to 230 MiniLM tokens, so a chunk fits the default encoder's 256-token window and all of it
#: is embedded (4000 were ~900 tokens, three quarters unseen; docs/benchmarks.md, "Long turns").
MAX_TURN_CHARS = 900

_NON_NAMES = frozenset("""
i i'm i've i'll i'd hey hi hello wow yeah yes no oh ok okay thanks thank congrats omg lol haha
sorry please well so but and or the a an my your our their his her its this that these those
what when where why how who which there here it's that's let's just also anyway great good
nice cool awesome amazing sure absolutely definitely totally really
monday tuesday wednesday thursday friday saturday sunday january february march april may june
july august september october november december today tomorrow yesterday tonight
mon tue tues wed thu thur thurs fri sat sun jan feb mar apr jun jul aug sep sept oct nov dec
english spanish french italian german chinese japanese korean indian mexican american british
canadian irish greek thai african asian european latin christian jewish muslim catholic
christmas easter halloween thanksgiving valentine's valentine year pride lgbtq lgbt
god internet tv mr mrs ms dr happy birthday dear love xoxo bye goodnight morning
even ever lot lots much now still yet us um uh hmm gonna wanna yep nope sure hey hi hello wow thanks thank
""".split()) | STOPWORDS
# Words that start place names but are never a name on their own ("New" of "Happy New Year").
_NOT_ALONE = _NON_NAMES | {"new", "north", "south", "east", "west", "san", "los", "las", "st"}
# German capitalises every noun, so there a capitalised word is a name only without a determiner: after
# an article, a possessive, a demonstrative, a quantifier or a number ("das Wetter", "Mein Bruder",
# "unseren Eltern", "drei Kühe", "letzten Frühling") it is a noun. Only in German text: "am", "die",
# "den" are English words too ("I am Sam").
_CAPITALISES_NOUNS = frozenset({"german"})
_GERMAN_DETERMINERS = frozenset(f"{stem}{ending}" for stems, endings in (
    ("der die das den dem des im am zum zur vom beim ins ans aufs ein kein mein dein sein ihr unser euer", ("",)),
    ("ein kein mein dein sein ihr unser eur dies jen jed manch welch solch letzt nächst vorig", ("e", "en", "em",
                                                                                              "er", "es")),
    ("zwei drei vier fünf sechs sieben acht neun zehn elf zwölf zwanzig hundert viele wenige einige mehrere "
     "alle beide", ("",)),
) for stem in stems.split() for ending in endings)
_STRONG_PREP = frozenset({"in", "at", "near", "around", "visit", "visited", "visiting",
                          "outside", "inside", "across", "through"})
_MOVE = re.compile(r"\b(?:go|goes|going|gone|went|move[ds]?|moving|travel\w*|trip|flew|fly|"
                   r"flying|drove|drive|driving|came|come|coming|head(?:ed|ing)?|back|"
                   r"vacation|holiday|return\w*|arrived?|relocat\w*)(?: back)? (?:to|from)$")
# A word may hold inner dots ("D.C") but never ends on one, so "Mel. Good" is two phrases.
_WORD = rf"[{UPPER}](?:[\w'\u2019&-]|\.(?=\w))*"  # capitalised in any script: "Mercière", "Łódź"
_PHRASE = re.compile(rf"{_WORD}(?: (?:of (?:the )?)?{_WORD})*")
_QUOTED = re.compile(r"\"[^\"\n]{1,120}\"|\u201c[^\u201d\n]{1,120}\u201d")
_SENTENCE_BREAK = set(".!?:;\"\u201c\u201d(\n")
# The next three run on lower-cased text: case-insensitive alternations are slow.
_YOU = re.compile(r"\b(?:you|your|yours|yourself)\b")
_PREFERENCE = re.compile(r"\b(?:love[sd]?|loving|hate[sd]?|prefer(?:s|red)?|favou?rite|"
                         r"enjoy\w*|(?:i|we|you|they) (?:really |also |don't |do not )?like)\b")
_PLAN = re.compile(r"\b(?:will|going to|gonna|plan(?:s|ning|ned)?|intend\w*|next (?:week|month|"
                   r"year|weekend)|tomorrow|hoping to|can't wait)\b|['\u2019]ll\b")


@dataclass
class _SessionContext:
    """What a turn's cues may refer to: speakers and names seen in its session."""

    speakers: list[str]
    aliases: Aliases
    known: dict[str, str] = field(default_factory=dict)  # lower-cased name -> canonical
    turn_index: dict[str, int] = field(default_factory=dict)
    candidates: dict[str, list[_Candidate]] = field(default_factory=dict)  # by turn id
    kinds: dict[str, str] = field(default_factory=dict)  # lower-cased pet or thing name -> its type


class RuleBasedExtractor:
    """Offline extractor: one unit per turn (or per chunk of a huge turn), cues by rules.

    Deterministic: a turn gives the same units whatever window presents it,
    so overlapping windows yield identical ids that downstream dedupes.

    Args:
        config: the extraction settings (none of them change what this extractor does today).
        max_turn_chars: the longest chunk of a turn (default :data:`MAX_TURN_CHARS`).
        aliases: extra name aliases applied in every session.
        addressee: in a two-speaker session, add the other speaker as a
            participant when the turn says "you"/"your" (default True).

    Example:
        >>> RuleBasedExtractor(max_turn_chars=500).max_turn_chars
        500

    """

    _CACHE_SIZE = 256

    # The same units every time (write/extraction/known_turns.py): re-adding a conversation dedupes by id.
    deterministic = True

    def __init__(self, config: ExtractionConfig | None = None, *, max_turn_chars: int | None = None,
                 aliases: dict[str, str] | None = None, addressee: bool = True) -> None:
        limit = max_turn_chars if max_turn_chars is not None else MAX_TURN_CHARS
        if limit < 1:
            raise ValueError(f"max_turn_chars must be >= 1, got {limit!r}")
        self.max_turn_chars = limit
        self._aliases = dict(aliases or {})
        self.addressee = addressee
        # Session contexts are reused by the next (overlapping) window of the same session.
        self._contexts: OrderedDict[tuple[object, ...], _SessionContext] = OrderedDict()
        self._lock = threading.Lock()

    def extract(self, window: Window, namespace: Namespace) -> ExtractionResult:
        """Turn every non-empty turn of ``window`` into units (see the module docs)."""
        started = time.perf_counter()
        units: dict[str, MemoryUnit] = {}
        warnings: list[str] = []
        # By id(session) only while the window holds its sessions (so no other object can have that id).
        contexts: dict[int, _SessionContext] = {}
        for session, turn in window.items:
            if not turn.text.strip() and not (turn.image_caption or "").strip():
                warnings.append(
                    f"conversation {window.conversation_id!r}, session {session.id!r}, turn "
                    f"{turn.id!r}: no text and no image caption; skipped")
                continue
            context = contexts.get(id(session))
            if context is None:
                context = contexts[id(session)] = self._context(window.conversation_id, session)
            for unit in self._turn_units(window.conversation_id, session, turn, context,
                                         namespace):
                units.setdefault(unit.id, unit)
        usage = Usage(seconds={"extract": time.perf_counter() - started})
        return ExtractionResult(units=list(units.values()), warnings=warnings, usage=usage)

    async def aextract(self, window: Window, namespace: Namespace) -> ExtractionResult:
        """Same as :meth:`extract` (pure CPU work, nothing to await)."""
        return self.extract(window, namespace)

    # ----------------------------------------------------------------- per turn

    def _turn_units(self, conversation_id: str, session: Session, turn: Turn,
                    context: _SessionContext, namespace: Namespace) -> list[MemoryUnit]:
        speaker = canonical_name(turn.speaker)
        reference = aware(turn.time) if turn.time is not None else session.time
        source = Provenance(conversation_id=conversation_id, session_id=session.id,
                            turn_ids=[turn.id])
        chunks = split_text(turn.text.strip(), self.max_turn_chars) if turn.text.strip() else [""]
        caption = (turn.image_caption or "").strip()
        units = []
        for i, chunk in enumerate(chunks):
            parts = [f"{speaker}: {chunk}" if speaker and chunk else chunk]
            if caption and i == 0:
                parts.append(f"[{speaker or 'Someone'} shared an image: {caption}]")
            restatement = " ".join(p for p in parts if p)
            participants, locations, things = self._cues(chunk, speaker, context, turn.id,
                                                         whole=len(chunks) == 1)
            # Identifying cues leave out every speaker of the session: they are in every turn.
            cues = identifying_cues(f"{chunk} {caption}" if caption and i == 0 else chunk,
                                    speakers=[*context.speakers, speaker],
                                    extra=[*(p for p in participants if p != speaker), *locations, *things])
            metadata: dict[str, object] = {"extractor": "rules", "speaker": speaker,
                                           "turn_index": context.turn_index.get(turn.id, -1)}
            if things:  # named, but neither a participant nor a place: a pet, a brand, a product
                metadata["entities"] = things
            interval = None
            if reference is not None:
                metadata["session_time"] = reference.isoformat()
                grounded = ground_time(chunk, reference)
                if grounded:
                    metadata["time_phrase"], interval = grounded[0]
                    if _on_weekend(interval) and "weekend" not in cues.topics:
                        cues.topics.append("weekend")  # "yesterday" said on a Monday: a weekend memory
                else:
                    interval = day_interval(reference)
            if len(chunks) > 1:
                metadata.update(chunk=i, chunks=len(chunks))
            units.append(MemoryUnit.create(
                namespace=namespace, restatement=restatement, source=source,
                participants=participants, locations=locations, time=interval,
                cues=cues.names, topics=cues.topics,
                kind=_kind(chunk.lower()), metadata=metadata))
        return units

    def _cues(self, text: str, speaker: str, context: _SessionContext, turn_id: str,
              whole: bool) -> tuple[list[str], list[str], dict[str, str]]:
        """People, places, and the other named things with their types (``{"Pixel": "animal"}``)."""
        people: list[str] = [speaker] if speaker else []
        places: list[str] = []
        things: dict[str, str] = {}
        candidates = context.candidates.get(turn_id) if whole else None
        if candidates is None:
            candidates = _candidates(text)
        for name, kind in _classify(candidates, context.known, context.kinds):
            if kind == "location":
                place = canonical_location(name)
                if place not in places:
                    places.append(place)
            elif kind == "person":
                person = context.known.get(name.lower()) or context.aliases.resolve(name)
                if person not in people:
                    people.append(person)
            else:
                things.setdefault(name, kind)
        if self.addressee and len(context.speakers) == 2 and speaker in context.speakers \
                and _YOU.search(text.lower()):
            other = context.speakers[1 - context.speakers.index(speaker)]
            if other not in people:
                people.append(other)
        return people, places, things

    # ----------------------------------------------------------------- per session

    def _context(self, conversation_id: str, session: Session) -> _SessionContext:
        # Keyed by what the context is made of (each turn's id, speaker and text), never by id(session):
        # Python gives a freed session's id to the next object, and a session may be edited in place, so
        # an edited message found the old text's context and its unit kept the old text's names as cues.
        key = (conversation_id, session.id, tuple((t.id, t.speaker, t.text) for t in session.turns))
        with self._lock:
            context = self._contexts.get(key)
            if context is not None:
                self._contexts.move_to_end(key)
                return context
        speakers = list(dict.fromkeys(canonical_name(t.speaker) for t in session.turns
                                      if t.speaker.strip()))
        known = {s.lower(): s for s in speakers}
        for s in speakers:  # first names of full-name speakers
            known.setdefault(s.split(" ")[0].lower(), s)
        known.update(_nicknames(speakers, known))
        # Names used mid-sentence anywhere in the session become known, so the same
        # name at the start of a sentence ("Sam recommended ...") is recognised too.
        candidates = {t.id: _candidates(t.text.strip()) for t in session.turns}
        typed = [(name, kind) for found in candidates.values() for name, kind in _classify(found, known)]
        seen = [name for name, kind in typed if kind == "person"]
        kinds = {name.lower(): kind for name, kind in typed if kind not in ("person", "location")}
        aliases = Aliases(self._aliases)
        aliases.learn(speakers + seen)
        for name in seen:
            known.setdefault(name.lower(), aliases.resolve(name))
        context = _SessionContext(speakers=speakers, aliases=aliases, known=known,
                                  candidates=candidates, kinds=kinds,
                                  turn_index={t.id: i for i, t in enumerate(session.turns)})
        with self._lock:  # one extractor may serve several threads
            self._contexts[key] = context
            if len(self._contexts) > self._CACHE_SIZE:
                self._contexts.popitem(last=False)
        return context


class _Candidate(NamedTuple):
    """A capitalised phrase and the facts about it that do not depend on the session."""

    phrase: str
    lower: str
    place: bool  # in the place table or ends in a place word: a place whatever the session
    after_prep: bool  # follows in/at/near/... or a movement verb + to/from
    at_start: bool  # first word of a sentence (any capitalised word could be)
    odd: bool  # has an acronym or more than three words: not taken as a person
    kind: str | None = None  # what the words around it say it is (entity_types.entity_type), if anything


def _candidates(text: str) -> list[_Candidate]:
    """Capitalised phrases of ``text`` that may be names or places (one regex pass)."""
    if not text:
        return []
    masked = _QUOTED.sub(lambda m: " " * len(m.group(0)), text)  # titles in quotes
    found: list[_Candidate] = []
    german: list[bool] = []  # whether the text is German: asked once, and only of a text with a determiner

    def noun(lower: str, before: str) -> bool:
        """A German determiner, or the noun after one."""
        if lower not in _GERMAN_DETERMINERS and before not in _GERMAN_DETERMINERS:
            return False
        if not german:
            german.append(detect_language(text, ascii_too=True) in _CAPITALISES_NOUNS)
        return german[0]

    for match in _PHRASE.finditer(masked):
        # Non-name words ("Hey", "I", "Last", "Friday") split a phrase into runs, and so do a German
        # determiner and the noun after it ("Mein Bruder Jürgen": "Jürgen").
        runs: list[list[tuple[int, str]]] = [[]]
        position = match.start()
        before = masked[max(0, position - 24):position].rsplit(None, 1)[-1:] or [""]
        previous = before[0].casefold()
        for word in match.group(0).rstrip(".-&").split(" "):
            lower = word.lower().rstrip(".")
            if (word not in ("of", "the") and lower in _NON_NAMES) or noun(lower.casefold(), previous):
                runs.append([])
            else:
                runs[-1].append((position, word))
            position += len(word) + 1
            previous = lower.casefold()
        for run in runs:
            while run and run[-1][1] in ("of", "the"):
                run.pop()
            if run:
                found.append(_candidate(masked, run[0][0], [w for _, w in run]))
    return [c for c in found if c.phrase and c.lower not in _NOT_ALONE]


def _candidate(masked: str, start: int, words: list[str]) -> _Candidate:
    stripped = re.sub(r"['\u2019]s?$", "", words[-1])
    possessive, words[-1] = stripped != words[-1], stripped
    phrase = " ".join(w for w in words if w)
    lower = phrase.lower()
    end = start  # masked[:end] is masked[:start].rstrip(), without copying a long prefix
    while end > 0 and masked[end - 1].isspace():
        end -= 1
    prev = masked[max(0, end - 24) : end].lower()
    last_word = prev.rsplit(" ", 1)[-1] if prev else ""
    return _Candidate(
        phrase=phrase, lower=lower,
        place=lower in KNOWN_PLACES or (len(words) > 1 and words[-1].lower() in PLACE_WORDS),
        after_prep=not possessive and (last_word in _STRONG_PREP or bool(_MOVE.search(prev))),
        at_start=end == 0 or masked[end - 1] in _SENTENCE_BREAK,
        odd=len(words) > 3 or any(len(w) > 1 and w.rstrip("s").isupper() for w in words),
        kind=None if lower in BUILTIN_NAME_ALIASES else entity_type(phrase, masked[max(0, start - 40) : start]),
    )


def _classify(candidates: list[_Candidate], known: dict[str, str],
              kinds: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """``(phrase, type)`` for the candidates that are people, places or other named things in this session.

    ``type`` is ``"person"``, ``"location"``, or what :func:`~.entity_types.entity_type` says
    (``"animal"``, ``"organization"``): a street is a place even when the session knows the word,
    a known name stays a person, then a pet's or a thing's name is neither; ``kinds`` (the
    session's pets and things) types them at a sentence's start too ("Pixel has started ...").
    """
    out = []
    for c in candidates:
        if c.place or (c.kind == "location" and c.lower not in known):
            out.append((c.phrase, "location"))
        elif c.lower in known:
            out.append((c.phrase, "person"))
        elif c.kind is not None:
            out.append((c.phrase, c.kind))
        elif kinds and c.lower in kinds:
            out.append((c.phrase, kinds[c.lower]))
        elif c.odd:
            continue
        elif c.after_prep and not c.at_start:
            out.append((c.phrase, "location"))
        elif not c.at_start or " " in c.phrase:
            out.append((c.phrase, "person"))
    return out


def _nicknames(speakers: list[str], known: dict[str, str]) -> dict[str, str]:
    """Prefixes (3+ letters) of exactly one speaker's first name: "Mel" -> "Melanie"."""
    owners: dict[str, set[str]] = {}
    for speaker in speakers:
        first = speaker.split(" ")[0].lower()
        for end in range(3, len(first)):
            owners.setdefault(first[:end], set()).add(speaker)
    return {prefix: next(iter(who)) for prefix, who in owners.items()
            if len(who) == 1 and prefix not in known and prefix not in _NON_NAMES}


def _on_weekend(interval: TimeInterval) -> bool:
    """True when a grounded interval lies within one Saturday-Sunday weekend."""
    days = (interval.end.date() - interval.start.date()).days
    return days <= 1 and interval.start.weekday() >= 5 and interval.end.weekday() >= 5


def _kind(lower: str) -> str:
    if _PREFERENCE.search(lower):
        return "preference"
    if _PLAN.search(lower):
        return "plan"
    return "event"
