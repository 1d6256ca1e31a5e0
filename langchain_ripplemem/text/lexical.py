"""Lexical tokenisation shared by the BM25 index, query cues and the controller.

Word tokens, stopwords removed, Snowball-stemmed (PyStemmer), so "allergies" and
"allergic" meet in the lexical view.

English is what it always was: a text with no letter outside ASCII is lower-cased,
split on ``[a-z0-9]+`` (an apostrophe inside a word kept: "don't"), a possessive
"'s" dropped, English stopwords removed and every word English-stemmed.

Any other text is NFKC-normalised (full-width letters, the ligature "ﬁ"), its
curly apostrophes made straight, and casefolded; words are runs of letters,
marks and digits of any script. Scripts written without spaces are cut by
script: Han characters into overlapping bigrams ("张伟住" -> "张伟", "伟住"; a
lone character stays), kana into its runs ("ミュンヘン"), Thai, Lao, Khmer and
Myanmar into runs. The text's language (:func:`~langchain_ripplemem.text.language.detect_language`)
picks the stopwords and the stemmer: English text ("Zoë moved to München") is
tokenised as English, with English stems only. In any other language each word
gives its casefolded surface form *and*, where it differs, its stem in that
language ("münchener" -> "münchener", "munchen"); Hebrew, with no Snowball
stemmer, gives the word without a one-letter prefix (ו ב ל ה מ ש כ) instead.

Why both forms: query and memory are stemmed by the language each is detected
in, and a three-word query's detection is unreliable. Were only stems kept, a
German memory stemmed as German and its query misread as Dutch would share
nothing; the surface forms always meet, whatever the detector says, and the
stems add the inflections when both sides agree on the language. A word said
exactly as the memory says it counts twice (surface and stem), which is the
exact match BM25 should prefer.

Example:
    >>> lexical_tokens("Maya's allergies are SERIOUS!")
    ['maya', 'allergi', 'serious']
    >>> lexical_tokens("München")
    ['münchen', 'munch']

"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import regex
import Stemmer

from langchain_ripplemem._runtime.text_caches import text_cache
from langchain_ripplemem.text.language import detect_language, stem_as, stopwords

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_UNICODE_WORD = regex.compile(r"[\p{L}\p{M}\p{N}]+(?:'[\p{L}\p{M}]+)?")
# Scripts written without spaces between words, each a group; the rest (group 5) is spaced words.
_NO_SPACE = regex.compile(r"(\p{Han}+)|([\p{Hiragana}\u30fc]+)|([\p{Katakana}\u30fc]+)"
                          r"|([\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}]+)|([^\p{Han}\p{Hiragana}\p{Katakana}\u30fc"
                          r"\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}]+)")
_HAS_NO_SPACE_SCRIPT = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}]")
_HAN = regex.compile(r"\p{Han}")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u02bc": "'", "\u2018": "'"})
# French and Italian elided articles and pronouns: "l'été" is "été", "dell'anno" is "anno".
_ELIDED = frozenset("l d j m n s t c qu jusqu lorsqu puisqu quoiqu dell nell sull all dall coll un quest".split())
_HEBREW_PREFIXES = frozenset("\u05d5\u05d1\u05dc\u05d4\u05de\u05e9\u05db")  # ו ב ל ה מ ש כ

STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have haven't
    having he he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll
    i'm i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor
    not of off on once only or other ought our ours ourselves out over own same shan't she she'd
    she'll she's should shouldn't so some such than that that's the their theirs them themselves
    then there there's these they they'd they'll they're they've this those through to too under
    until up very was wasn't we we'd we'll we're we've were weren't what what's when when's where
    where's which while who who's whom why why's with won't would wouldn't you you'd you'll
    you're you've your yours yourself yourselves also just really yeah yes oh ok okay so well
    like got get gets getting would will shall may might must s t d ll re ve m""".split()
)

_stemmer = Stemmer.Stemmer("english")


# About 250 bytes an entry, the process's (outside any CacheBounds): 50,000 keeps a namespace's
# vocabulary, 12 MB at most. 200,000 grew with every word a process had seen (towards 50 MB), and
# a miss costs 0.12 us of stemming against 0.05 for a hit.
@text_cache
@lru_cache(maxsize=50_000)
def stem(word: str) -> str:
    """English Snowball stem of one lower-case word (cached: a chat's vocabulary is small)."""
    return str(_stemmer.stemWord(word))


def written_without_spaces(text: str) -> bool:
    """Whether ``text`` has a character of a script written without spaces between words (Han, kana, Thai...).

    There a regular expression's word boundary is not where a word ends: "李娜最近" is one run of word characters.

    Example:
        >>> written_without_spaces("李娜"), written_without_spaces("Zoë")
        (True, False)
    """
    return _HAS_NO_SPACE_SCRIPT.search(text) is not None


def _split_unspaced(token: str) -> list[str]:
    """A token cut where its script writes no spaces: Han bigrams, kana and Thai-like runs, the rest whole."""
    out: list[str] = []
    for han, hiragana, katakana, thai, other in _NO_SPACE.findall(token):
        if han:
            out.extend([han] if len(han) == 1 else [han[i : i + 2] for i in range(len(han) - 1)])
        else:
            out.append(hiragana or katakana or thai or other)
    return out


@text_cache
@lru_cache(maxsize=4096)
def _analyse(text: str) -> tuple[str, tuple[str, ...]]:
    """The language of a non-ASCII ``text`` and its words (normalised, possessives and elisions dropped)."""
    folded = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES).casefold()
    language = detect_language(folded)
    out: list[str] = []
    for token in _UNICODE_WORD.findall(folded):
        if "'" in token:
            head, _, tail = token.partition("'")
            if language == "english":
                token = head if tail == "s" else token
            elif head in _ELIDED:
                token = tail
        if _HAS_NO_SPACE_SCRIPT.search(token):
            out.extend(_split_unspaced(token))
        else:
            out.append(token)
    return language, tuple(out)


def words(text: str) -> list[str]:
    """Word tokens (lower-case or casefolded) with possessives stripped, stopwords kept."""
    if not text.isascii():  # ASCII: the English path, as it always was
        return list(_analyse(text)[1])
    out = []
    for token in _WORD.findall(text.lower()):
        if token.endswith("'s"):
            token = token[:-2]
        out.append(token)
    return out


def _content(text: str) -> tuple[str, list[str]]:
    """The language of a non-ASCII ``text`` and its content words: no stopwords, no one-letter word but Han's."""
    language, found = _analyse(text)
    stop = STOPWORDS if language == "english" else stopwords(language)
    return language, [w for w in found if w not in stop and (len(w) > 1 or _HAN.match(w))]


def content_words(text: str) -> list[str]:
    """Content words (no stopwords, no 1-letter tokens), unstemmed, in order."""
    if text.isascii():
        return [w for w in words(text) if w not in STOPWORDS and len(w) > 1]
    return _content(text)[1]


def lexical_tokens(text: str) -> list[str]:
    """Stemmed content words: the BM25 vocabulary (outside English, each surface form and its stem)."""
    if text.isascii():
        return [stem(w) for w in words(text) if w not in STOPWORDS and len(w) > 1]
    language, found = _content(text)
    if language == "english":
        return [stem(w) for w in found]
    out = []
    for word in found:
        out.append(word)
        if language == "hebrew":
            base = word[1:] if len(word) >= 4 and word[0] in _HEBREW_PREFIXES else word
        else:
            base = stem_as(word, language)
        if base != word:
            out.append(base)
    return out


# Its working set is one recall's memories (a few hundred at most); with many namespaces a larger
# cache only keeps evicted namespaces' texts alive outside the cache bounds (cache_bounds.py).
@text_cache
@lru_cache(maxsize=256)
def lexical_token_set(text: str) -> frozenset[str]:
    """The set of :func:`lexical_tokens` (cached: recall asks it of the same memories each round)."""
    return frozenset(lexical_tokens(text))
