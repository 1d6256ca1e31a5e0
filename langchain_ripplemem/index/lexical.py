"""Lexical tokenisation shared by the BM25 index, query cues and the controller.

Lower-cased word tokens, English stopwords removed, Snowball-stemmed (PyStemmer),
so "allergies" and "allergic" meet in the lexical view.

Example:
    >>> lexical_tokens("Maya's allergies are SERIOUS!")
    ['maya', 'allergi', 'serious']

"""

from __future__ import annotations

import re
from functools import lru_cache

import Stemmer

from langchain_ripplemem._runtime.text_caches import text_cache

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")

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
    """Snowball stem of one lower-case word (cached: a chat's vocabulary is small)."""
    return str(_stemmer.stemWord(word))


def words(text: str) -> list[str]:
    """Lower-case word tokens with possessives stripped, stopwords kept."""
    out = []
    for token in _WORD.findall(text.lower()):
        if token.endswith("'s"):
            token = token[:-2]
        out.append(token)
    return out


def content_words(text: str) -> list[str]:
    """Lower-case content words (no stopwords, no 1-letter tokens), unstemmed, in order."""
    return [w for w in words(text) if w not in STOPWORDS and len(w) > 1]


def lexical_tokens(text: str) -> list[str]:
    """Stemmed content words: the BM25 vocabulary."""
    return [stem(w) for w in content_words(text)]


# Its working set is one recall's memories (a few hundred at most); with many namespaces a larger
# cache only keeps evicted namespaces' texts alive outside the cache bounds (cache_bounds.py).
@text_cache
@lru_cache(maxsize=256)
def lexical_token_set(text: str) -> frozenset[str]:
    """The set of :func:`lexical_tokens` (cached: recall asks it of the same memories each round)."""
    return frozenset(lexical_tokens(text))
