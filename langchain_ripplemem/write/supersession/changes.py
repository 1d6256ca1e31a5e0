"""Change statements: a newer statement that says something named before has changed.

Most updates are not said in a pattern a frame reads ("The Volvo is gone, I'm driving a
Skoda now", "Felix and I split up", "I switched therapists", "The team sync moved to
Wednesdays"). What they share is the shape: the statement says a state *ended or was
replaced* (:data:`CHANGE`: switched, sold, quit, gave up, moved, split up, no longer,
a *new* one, ... *now*), and it names the thing the older statement named (a rare
identifying cue of both, :attr:`~langchain_ripplemem.schemas.MemoryUnit.cues` and
``topics``: "Volvo", "Felix", "therapist", "team sync").

:func:`supersedes` holds when a change statement ``new`` and an earlier ``old`` share
such a cue and were said by the same person (or both speak of something shared, "our
sync", "the book club", with no "I" or "my"); a statement that only adds ("also", "a
second job": :data:`~langchain_ripplemem.write.supersession.frames.ADDITIVE`), asks, plans or
imagines changes nothing, and neither do two statements whose facts are of different
attributes ("my favourite film" and "my new favourite book").

Example:
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance
    >>> def unit(text):
    ...     return MemoryUnit.create(namespace=("ben",), restatement=text, participants=["Ben"],
    ...                              source=Provenance(conversation_id="c", session_id="s"))
    >>> is_change(unit("Ben: The Volvo is gone, I'm driving a Skoda now.")), is_change(unit("Ben: I drive a Volvo."))
    (True, False)
    >>> is_change(unit("Ben: I also bought a new bike.")), is_change(unit("Ben: I might sell the Volvo."))
    (False, False)

"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from langchain_ripplemem._runtime.text_caches import text_cache
from langchain_ripplemem.schemas import MemoryUnit
from langchain_ripplemem.text.identifying import cue_key
from langchain_ripplemem.write.supersession.frames import ADDITIVE, HEDGE, facts, first_person_text, sentences

__all__ = ["CHANGE", "NEAR", "NOW", "WINDOW", "is_change", "names_changed", "shared_keys", "speaker",
           "supersedes_by_change"]

#: What says a state ended or was replaced: verbs and phrases of an ending or a replacement...
CHANGE = re.compile(
    r"\b(?:switched|changed|swapped|traded|replaced|sold|gave up|given up|quit|dropped|stopped|retired|"
    r"broke up|split up|divorced|separated|called off|got rid of|moved|relocated|packed up|handed in|rescheduled|"
    r"(?:is|are|was) gone|went back|took over|took up|no longer|no more|anymore|any more|instead of|from now on)\b"
    r"|\bleft(?= (?:my|our|the|his|her|their|a|an)\b| (?-i:[A-Z]))", re.IGNORECASE)
#: ... and words that say which state is the present one, weaker: the thing must be named right beside them
#: ("my *new* trainer", "Bea is my trainer *now*", "*these days* my favourite place"). "now" counts after a
#: form of *be* or at the end of a clause ("... now, and", "now I know" is no state); "new" after "my" or "our" ("a new
#: recipe" is one more, not another).
NOW = re.compile(r"\b(?:these days|nowadays)\b"
                 r"|(?:(?<=\bis )|(?<=\bam )|(?<=\bare )|(?<='m )|(?<='s )|(?<='re ))now\b"
                 r"|\b(?<!for )(?<!until )(?<!by )(?<!just )(?<!right )now(?=\s*(?:[.,;:!)]|$)|\s+(?:and|but|so)\b)"
                 r"|(?:(?<=\bmy )|(?<=\bour ))new\b(?! (?-i:[A-Z]))", re.IGNORECASE)
#: How many words from a change word (:data:`CHANGE`; :data:`NOW`: :data:`NEAR`) the thing it changes may be
#: named ("the *Volvo* is gone", "*Felix* and I split up", "I *stopped* training with *Javier*").
WINDOW = 4
NEAR = 2
# A change that has not happened: negated ("I haven't quit"), planned ("I'll switch", "next month"), or told as
# the time of something else ("when I moved to Leeds, ...").
_NOT_YET = re.compile(r"(?:\b(?:not|never|will|going to|gonna|about to|when|since|after|before|until|once|while)|"
                      r"n't|'ll)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)
_FUTURE = re.compile(r"\b(?:soon|tomorrow|next (?:week|month|year|time)|will|'ll|going to|gonna)\b", re.IGNORECASE)
# A sentence about the one spoken to ("you can't volunteer there anymore") says nothing of the speaker.
_YOU = re.compile(r"\b(?:you|your|yours|yourself)\b|\byou'", re.IGNORECASE)
_SAYS_ENDED = frozenset({"anymore", "any more", "no longer", "no more"})
_WORD = re.compile(r"[\w'-]+")
_FIRST_SINGULAR = re.compile(r"\b(?:I|me|my|mine|myself)\b|\bI'(?:m|ve|d|ll)\b")
_FIRST_PERSON = re.compile(r"\b(?:I|me|my|mine|myself|we|us|our|ours)\b|\b(?:I|we)'", re.IGNORECASE)


def speaker(unit: MemoryUnit) -> str | None:
    """Who said it, lower-cased: the recorded speaker, else the sole participant."""
    said = unit.metadata.get("speaker")
    if isinstance(said, str) and said.strip():
        return said.strip().lower()
    people = {p.strip().lower() for p in unit.participants if p.strip()}
    return next(iter(people)) if len(people) == 1 else None


def is_change(unit: MemoryUnit) -> bool:
    """Whether the unit says that a state ended or was replaced (in a sentence that neither adds, asks nor plans)."""
    return bool(_changes(unit.restatement, tuple(unit.participants)))


def names_changed(unit: MemoryUnit, keys: Iterable[str]) -> bool:
    """Whether one of ``keys`` (cue keys) is named near a change word of ``unit`` (:data:`WINDOW`, :data:`NEAR`).

    The change word itself does not count as naming the thing ("changed" and an earlier "changing").
    """
    wanted = [tuple(key.split()) for key in keys]
    for words, at in _changes(unit.restatement, tuple(unit.participants)):
        spans = {i for first, last, _ in at for i in range(first, last + 1)}
        for i in range(len(words)):
            if i in spans or not any(words[i:i + len(key)] == key for key in wanted):
                continue
            if any(min(abs(i - first), abs(i - last)) <= reach for first, last, reach in at):
                return True
    return False


@text_cache
@lru_cache(maxsize=4096)
def _changes(restatement: str, participants: tuple[str, ...]
             ) -> tuple[tuple[tuple[str, ...], tuple[tuple[int, int, int], ...]], ...]:
    """Per change sentence: its words as cue keys, and each change word's first and last word and reach."""
    _, text = first_person_text(restatement, participants)
    out = []
    for sentence in sentences(text):
        if sentence.rstrip().endswith("?") or ADDITIVE.search(sentence) or _FUTURE.search(sentence) or \
                _YOU.search(sentence):
            continue
        spans = [(m.start(), m.end()) for m in _WORD.finditer(sentence)]
        at = []
        hits = sorted([(m, WINDOW) for m in CHANGE.finditer(sentence)] + [(m, NEAR) for m in NOW.finditer(sentence)],
                      key=lambda h: h[0].start())
        for hit, reach in hits:
            before = sentence[: hit.start()]
            if HEDGE.search(before):
                break
            if hit.group(0).lower() in _SAYS_ENDED or not _NOT_YET.search(before):
                words = [i for i, (start, end) in enumerate(spans) if start < hit.end() and end > hit.start()]
                if words:
                    at.append((words[0], words[-1], reach))
        if at:
            out.append((tuple(cue_key(sentence[a:b]) for a, b in spans), tuple(at)))
    return tuple(out)


def shared_keys(new: MemoryUnit, old: MemoryUnit) -> set[str]:
    """The identifying cue keys (names and topic words) both units have."""
    return (set(new.cues or ()) | set(new.topics or ())) & (set(old.cues or ()) | set(old.topics or ()))

def supersedes_by_change(new: MemoryUnit, old: MemoryUnit, rare: set[str]) -> bool:
    """Whether change statement ``new`` makes ``old`` (said before it) out of date.

    Args:
        new: the later unit; it must be a change statement (:func:`is_change`).
        old: the earlier unit.
        rare: the keys rare enough in the namespace to say two statements are about one thing.
    """
    if not is_change(new):
        return False
    stated = _stated_words(old.restatement, tuple(old.participants))
    keys = {key for key in shared_keys(new, old) & rare if all(word in stated for word in key.split())}
    if not names_changed(new, keys):
        return False
    who_new, who_old = speaker(new), speaker(old)
    if who_new is None or who_old is None:
        return False
    if who_new != who_old and (_FIRST_SINGULAR.search(_text(new)) or _FIRST_SINGULAR.search(_text(old))):
        return False  # one person's "my" is not the other's; "our sync", "the book club" are both's
    mine, theirs = {f.attribute for f in facts(new)}, {f.attribute for f in facts(old)}
    return not mine or not theirs or any(_same_thing(a, b) for a in mine for b in theirs)


def _same_thing(a: str, b: str) -> bool:
    """Whether two attributes may be one: equal, or of one kind naming a word in common ("schedule:physio")."""
    kind_a, _, what_a = a.partition(":")
    kind_b, _, what_b = b.partition(":")
    return a == b or (kind_a == kind_b and bool(set(what_a.split()) & set(what_b.split())))


@text_cache
@lru_cache(maxsize=4096)
def _stated_words(restatement: str, participants: tuple[str, ...]) -> frozenset[str]:
    """The words (as cue keys) of what a unit states of its speaker or of "us".

    Its sentences in the first person that neither ask nor speak to "you"; not their
    adverbs ("recently"), which say how, not what.
    """
    _, text = first_person_text(restatement, participants)
    return frozenset(cue_key(word) for sentence in sentences(text)
                     if not sentence.rstrip().endswith("?") and not _YOU.search(sentence)
                     and _FIRST_PERSON.search(sentence)
                     for word in _WORD.findall(sentence) if not word.lower().endswith("ly"))


def _text(unit: MemoryUnit) -> str:
    return first_person_text(unit.restatement, tuple(unit.participants))[1]
