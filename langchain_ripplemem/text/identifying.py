"""Identifying cues: the names and topic words that tell one memory from another.

docs/concepts.md's structural cues (participants, locations, time) saturate in a
two-person dialogue: every turn has the same two speakers and the session's
day. What links a birthday booking at "Harbor Grill" to the remark, seven weeks
earlier, that Harbor Grill serves oysters is the rare name they share. Each
unit therefore also carries *identifying cues*: keys for

* named things other than the speakers: people talked about, places,
  organisations, pets, products, titles (capitalised phrases, kept whole:
  ``"harbor grill"``);
* topic words: content words that are not generic chat vocabulary
  (``"passport"``, ``"kayak"``, ``"film"``), and month names.

A key is lower-case and Snowball-stemmed word by word, so "kayaks" and
"Kayak" meet. A shared name says more than a shared topic word
(:data:`TOPIC_WEIGHT` could scale topic words down), and
beyond that how much a shared key says is its *rarity* in the namespace (:func:`rarity`), which the write path
(:mod:`~langchain_ripplemem.write.linking.local_linking`) and the read path (the cue
view, expansion) compute from the namespace's cue postings. A speaker's name or
a word of every other turn is common and weighs almost nothing; a pet's name is
rare and weighs almost 1.

No model: ``docs/architecture.md`` says why (the PyPI re-uploads of spaCy's
pipelines could not be traced to their authors), and
``benchmarks/measurements/cue_quality.py`` measures precision and recall on a labelled sample.

Example:
    >>> identifying_cues("My cousin Dani got made head chef at Harbor Grill!", speakers=["Sam"])
    Cues(names=['dani', 'harbor grill'], topics=['cousin', 'head', 'chef', 'harbor', 'grill'])
    >>> cue_key("Kayaks")
    'kayak'

"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable
from importlib import resources
from typing import NamedTuple

from langchain_ripplemem.text.entity_types import UPPER
from langchain_ripplemem.text.lexical import STOPWORDS, stem

__all__ = ["COMMON_WORDS", "ENGLISH_TOPIC_WORDS", "GENERIC_WORDS", "MONTHS", "MONTH_KEYS", "TOPIC_WEIGHT", "Cues",
           "common_keys", "common_words", "cue_key", "entity_phrases", "identifying_cues", "lowercase_keys", "rarity",
           "sentence_initial_keys", "topic_words", "vocabulary_words"]

#: A shared topic word counts this much of a shared name of the same rarity, in write-time cue edges and
#: in the read path's cue view, target overlap and bridges from the second round on. 1: weighing topic
#: words down (0.5) for edges halved the edges and lost bridges on the demo; the read-time weights of the
#: first hop's bridges (recall/bridging.py) do it better (docs/benchmarks.md, "Linked recall (issue 13)").
TOPIC_WEIGHT = 1.0

# A weekday in the plural names a schedule ("lectures are Tuesdays", "Tuesdays free"), which two
# memories can share weeks apart; the singular dates one day, and stays generic.
_RECURRING_DAYS = frozenset("mondays tuesdays wednesdays thursdays fridays saturdays sundays weekends".split())
# "may" and "march" are also a verb and a modal: they stay generic.
MONTHS = frozenset("january february april june july august september october november december".split())

# Chat vocabulary too general to identify anything: frequent verbs, adjectives,
# adverbs, fillers and catch-all nouns. Rarity demotes the rest of the common words.
GENERIC_WORDS: frozenset[str] = frozenset("""
able about absolutely actually add added again ago ahead almost along already alright always amazing
another anyone anything anyway anywhere around ask asked asking away awesome awful back bad basically
beautiful become becomes best better big bit bring brings brought busy call called calling came can't
care cause certainly chance change check cool could couldn't course crazy cute day days dear deal
definitely did different does doing done down easy else end enjoy enjoyed enough especially even
ever every everyone everything exactly excited exciting fact fantastic far feel feeling feelings feels
felt few fine finally find first found forward free fun funny gave give given gives giving glad go goes
going gone good gosh got gotten great guess guy guys had half happen happened happens happy hard has
hate have having hear heard hello help helped helps here hey hi high hmm hold home honestly hope hoped
hopefully hopes hoping hours how huge idea important incredible instead interesting it's item keep keeps
kept kind kinda know known knows last late later least leave left less let let's life likely little
live lived lives long look looked looking looks lot lots love loved lovely loves loving made make makes
making man many matter maybe mean means meant might mind minute minutes moment month months more morning
most much must myself need needed needs never new next nice night nothing now number often old once one
ones open other others out over part pay people perfect person pick place plan planned plans point
pretty probably put quite rather read ready real really reason right said same saw say saying says
see seeing seem seemed seems seen set several share shared she'd should show showed shows side since
small some someone something sometimes soon sort sound sounds special start started starting starts
still stuff such super sure take taken takes taking talk talked talking tell telling tells terrible
than thank thanks that's thing things think thinking thought through time times today together told
tomorrow tonight too took totally tough tried tries true try trying turn turned two understand until
use used using usually very wait want wanted wants was watch way ways week weeks well went were what's
whole wish without wonder wonderful wondering work worked working works world worry worth wow yeah year
years yes yesterday yet you're yourself though although spent ugh worst decent whatever speaking full
stay stayed complete completely plus run runs win finish finished second three four five six seven
eight nine ten twenty hundred thousand dozen couple others else fancy news tragic monday tuesday
wednesday thursday friday saturday sunday weekday proud business handle noted
""".split()) | STOPWORDS

# Words are letters of any script ("Mercière", "Zoë", "Łódź": issue 36), with inner apostrophes and hyphens.
_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['\u2019-])*")
# Capitalised runs (with "of"/"the"/"&" inside): "Harbor Grill", "Bank of America", "Rue Mercière".
_PHRASE = re.compile(rf"[{UPPER}][\w'\u2019&-]*(?:\s+(?:(?:of|the|&|and)\s+)?[{UPPER}][\w'\u2019&-]*)*")
# What may come right before a sentence's first word: its end, a line break, or a
# markdown list or emphasis marker ("- Practice daily", "**Echinacea**:", "1. Yoga").
# (``text[:start]`` ends like ``(?:[.!?:;"\u201c\u201d(\n*#>|\u2022]|(?:^|\n)\s*[-\u2013\u2014])\s*$``:
# :func:`_at_sentence_start` reads it backwards from the word.)
_SENTENCE_END_CHARS = frozenset(".!?:;\"\u201c\u201d(\n*#>|\u2022")
_LIST_DASHES = frozenset("-\u2013\u2014")
_POSSESSIVE = re.compile(r"['\u2019]s?$")
# Capitalised words that start sentences or phrases but name nothing.
_NOT_NAMES = GENERIC_WORDS | frozenset("""
i i'm i've i'll i'd ok okay oh lol omg haha congrats congratulations sorry please yay ugh hmm wow
monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays
saturdays sundays mom dad mum grandma grandpa march may easter christmas halloween thanksgiving
tell ask let give send bring call text meet wish classic rip dr mr mrs ms
yep yup nope nah bye goodbye hiya howdy yo woah whoa oof ooh ooo oops ouch aww awww woohoo hooray hurray
yikes phew whew ahh aha ha hehe um uh eh meh mmm hmmm duh gee geez jeez welp cheers bravo argh eek alas shh
btw gotcha wanna gonna gotta perhaps unfortunately anytime
""".split()) | MONTHS


# Whole words counted as common English: the first entries of the encoder's vocabulary.
COMMON_WORDS = 6000
# Whole words whose topic keys count as ordinary English when bridging from the first hop.
ENGLISH_TOPIC_WORDS = 12000


@functools.cache
def vocabulary_words() -> tuple[str, ...]:
    """The encoder vocabulary's whole words (BERT uncased WordPiece), in its order: roughly by frequency in English."""
    text = resources.files("langchain_ripplemem").joinpath("assets/minilm/vocab.txt").read_text(encoding="utf-8")
    return tuple(w for w in text.split() if w.isalpha())


@functools.cache
def common_keys(count: int = ENGLISH_TOPIC_WORDS) -> frozenset[str]:
    """The cue keys of the vocabulary's first ``count`` whole words: "famili", "gift", "potteri", "camp".

    A topic key outside them is rare in English ("peanut", "kilim", "mussel"): shared
    by two memories of a chat, it says what both are about, where "family" may be chance.

    Example:
        >>> "famili" in common_keys(), "peanut" in common_keys(), "kilim" in common_keys()
        (True, False, False)
    """
    return frozenset(stem(w) for w in vocabulary_words()[:count])


@functools.cache
def common_words() -> frozenset[str]:
    """The ``COMMON_WORDS`` first whole words of the encoder's vocabulary (BERT uncased WordPiece).

    The vocabulary lists its words roughly by frequency in English Wikipedia and books
    ("the", "of", "and" first), so its first 6,000 are common words ("count",
    "perhaps") and the most common first names ("john", "sam"); "hazel" and "ingrid"
    come after them, and "rafa" is not in it.
    """
    return frozenset(vocabulary_words()[:COMMON_WORDS])


def cue_key(phrase: str) -> str:
    """The namespace key of a cue: lower-case words, possessive dropped, each word stemmed.

    Example:
        >>> cue_key("Luigi's"), cue_key("Lumen  Labs")
        ('luigi', 'lumen lab')

    """
    out = []
    for word in _WORD.findall(phrase.lower().replace("\u2019", "'")):
        word = _POSSESSIVE.sub("", word).strip("'-")
        if word:
            out.append(stem(word))
    return " ".join(out)


#: The cue keys of month names: time cues, which date what a memory plans or recalls.
MONTH_KEYS = frozenset(cue_key(month) for month in MONTHS)


def _at_sentence_start(text: str, match: re.Match[str]) -> bool:
    """Whether the word starts the text, a line, or a sentence: what comes before it, read backwards.

    Before it, after any spaces, a sentence's end, a line break or a markdown marker, or a
    list dash alone on its line. A regular expression over everything before the word
    scanned the whole text for each capitalised word: 25x slower on LongMemEval's long
    answers (6.5 against 0.26 s for ``sentence_initial_keys`` over 10 MB of its and
    LoCoMo's turns, with the same answers for every word).
    """
    i, newline = _skip_spaces(text, match.start() - 1)
    if newline:
        return True
    if i < 0:  # the text's start, or only spaces before the word
        return match.start() == 0
    if text[i] in _SENTENCE_END_CHARS:
        return True
    if text[i] not in _LIST_DASHES:
        return False
    i, newline = _skip_spaces(text, i - 1)
    return newline or i < 0


def _skip_spaces(text: str, i: int) -> tuple[int, bool]:
    """The index of the last non-space at or before ``i`` (-1: none), and whether a line break was passed."""
    while i >= 0 and text[i].isspace():
        if text[i] == "\n":
            return i, True
        i -= 1
    return i, False


def entity_phrases(text: str, speakers: Iterable[str] = ()) -> list[str]:
    """Capitalised phrases of ``text`` that name something other than a speaker.

    A single capitalised word at the start of a sentence is taken only when it is
    not a common word ("Biscuit threw up" is kept as a topic word instead, see
    :func:`topic_words`); phrases of two or more words are kept anywhere. A phrase
    of three or more words that starts a sentence with a common English word
    (:func:`common_words`) is kept without that word too: "Blame Coach Henley" may
    name Coach Henley.

    Example:
        >>> entity_phrases("Blame Coach Henley. We met Lou at Harbor Grill.")
        ['blame coach henley', 'coach henley', 'lou', 'harbor grill']
    """
    skip = {cue_key(s) for s in speakers if s} | {cue_key(s.split(" ")[0]) for s in speakers if s}
    found: list[str] = []
    for match in _PHRASE.finditer(text):
        raw = match.group(0).split()
        at_start = _at_sentence_start(text, match)
        if at_start and len(raw) > 2 and raw[1].lower() == "the":
            raw = raw[1:]  # "Cut the Lisbon trip short": a verb starts the sentence, the name follows "the"
        words = [w for w in raw if _POSSESSIVE.sub("", w).lower() not in _NOT_NAMES]
        while words and words[0].lower() in ("of", "the", "&", "and"):
            words.pop(0)
        while words and words[-1].lower() in ("of", "the", "&", "and"):
            words.pop()
        if not words:
            continue
        if len(words) == 1 and at_start and words[0] == raw[0]:
            continue  # "Biscuit threw up": maybe a name, maybe not; the topic pass keeps the word
        phrases = [words]
        if at_start and len(words) > 2 and words[0] == raw[0] and words[0].lower() in common_words() \
                and words[1] == raw[1]:
            phrases.append(words[1:])  # "Blame Coach Henley": maybe a verb before the name; both keys
        for phrase in phrases:
            key = cue_key(" ".join(phrase))
            if key and key not in skip and key not in found:
                found.append(key)
    return found


def topic_words(text: str, speakers: Iterable[str] = ()) -> list[str]:
    """Content words of ``text`` that are not generic chat vocabulary, as cue keys.

    Words with digits, words shorter than three letters and the speakers' names
    are left out; month names are kept (they date plans: "June 10th").
    """
    skip = {w for s in speakers if s for w in cue_key(s).split()}
    found: list[str] = []
    for raw in _WORD.findall(text):
        word = _POSSESSIVE.sub("", raw.lower().replace("\u2019", "'")).strip("'-")
        if len(word) < 3 or (word in GENERIC_WORDS and word not in MONTHS):
            continue
        key = word if word in _RECURRING_DAYS else stem(word)  # "Tuesdays": a schedule, not a date
        if key not in skip and key not in found and key not in GENERIC_WORDS:
            found.append(key)
    return found


def sentence_initial_keys(text: str) -> set[str]:
    """Cue keys of the single capitalised words that start a sentence: a name or a word, the namespace tells.

    "Rafa texted me" and "Cut the Lisbon trip short" look alike here; what the other
    memories do with the word decides (:meth:`~langchain_ripplemem.index.namespace_index.NamespaceIndex.is_name`:
    a name is never written in lower case).

    Chat interjections, contractions and common English words (:func:`common_words`) are
    left out: "Yep", "How'd" and "Count me in" start sentences; "Rafa" and "Ingrid" name someone.

    Example:
        >>> sorted(sentence_initial_keys("Rafa's couch is gone. Harbor Grill shut. How'd it go? Yep. Count. Ingrid!"))
        ['ingrid', 'rafa']
    """
    found = set()
    for match in _PHRASE.finditer(text):
        if not _at_sentence_start(text, match):
            continue
        if " " in match.group(0):  # a phrase: a name whole (entity_phrases), not word by word
            continue
        word = _POSSESSIVE.sub("", match.group(0).replace("\u2019", "'")).strip("'-")
        lower = word.lower()
        if len(word) >= 3 and "'" not in word and lower not in _NOT_NAMES and lower not in common_words():
            found.add(stem(lower))  # ("How'd": no name)
    return found


def lowercase_keys(text: str) -> set[str]:
    """Cue keys of the words ``text`` writes in lower case: there they are words, not names.

    Example:
        >>> sorted(lowercase_keys("Activities: more activities with Sam"))
        ['activ', 'more', 'with']
    """
    found = set()
    for word in _WORD.findall(text):
        if word[0].islower():
            if "'" in word or "\u2019" in word:  # most words have no apostrophe: no substitution to run
                word = _POSSESSIVE.sub("", word.replace("\u2019", "'"))
            found.add(stem(word.strip("'-")))
    return found


class Cues(NamedTuple):
    """A memory's identifying cue keys: names (people talked about, places, things) and topic words."""

    names: list[str]
    topics: list[str]


def identifying_cues(text: str, speakers: Iterable[str] = (), extra: Iterable[str] = ()) -> Cues:
    """Names (capitalised phrases, then ``extra``) and topic words of ``text``, as cue keys.

    Args:
        text: the memory's own words (a turn, or an LLM restatement).
        speakers: names that never count (the dialogue's speakers: they are in every turn).
        extra: further names or places to include (e.g. what an extractor found).
    """
    speakers = list(speakers)
    skip = {cue_key(s) for s in speakers if s}
    names = entity_phrases(text, speakers)
    for value in extra:
        words = value.split()
        while words and _POSSESSIVE.sub("", words[0]).lower() in _NOT_NAMES:
            words.pop(0)  # "Tell Dani": an extractor's phrase may start with a verb
        key = cue_key(" ".join(words))
        if key and key not in skip and key not in names:
            names.append(key)
    return Cues(names, [k for k in topic_words(text, speakers) if k not in names])


def rarity(df: int | float, n: int | float) -> float:
    """How much sharing a cue held by ``df`` of ``n`` units says, in ``[0, 1]``.

    ``log(n / df) / log(n)``: the cue's inverse document frequency over the largest
    one ``n`` units allow (a cue only one unit has), so 1 for a cue of one unit,
    falling to 0 for a cue every unit has. The scale is the namespace's own: a cue
    two of eleven memories share weighs what a cue two of 10,000 share weighs
    against their namespaces' rarest cues, ``1 - log 2 / log n`` (0.71 at 11, 0.92
    at 10,000). A namespace's first few units still tell little: two of four
    units sharing a cue weigh 0.5, under the default ``cue_threshold`` (0.6),
    which two of six reach. (Before issue 36 the denominator was
    ``log(max(n, 20))``: below 20 units no shared cue reached 0.6, so a memory of
    11 turns had no cue edge at all; from 20 units on the two agree.)

    Example:
        >>> round(rarity(2, 600), 2), round(rarity(300, 600), 2), round(rarity(2, 11), 2), round(rarity(2, 4), 2)
        (0.89, 0.11, 0.71, 0.5)

    """
    if df <= 0 or n <= 1 or df >= n:
        return 0.0
    return min(1.0, math.log(n / df) / math.log(n))
