"""Which language a text is in, and that language's stemmer and stopwords: the lexical view's per-language parts.

:mod:`~langchain_ripplemem.text.lexical` asks this module only about text that has a
letter outside ASCII; everything else is English, as it always was. Detection is
``lingua-language-detector`` (its models ship in the wheel: no download),
restricted to the languages PyStemmer has a Snowball stemmer for plus Hebrew,
Chinese, Japanese, Korean and Thai, in its low-accuracy mode (trigrams only:
0.3 s to load once, against 9 s for the full models, and well under a
millisecond a turn), built on first use and cached per text. Stopwords come from
the ``stop-words`` package (BSD-3-Clause), cleaned of the stray quotes its
Hebrew list carries.

Low-accuracy detection is weak on short texts ("Zoë moved to München last
spring" comes out Norwegian), so a text of three or more words, at least 60 % of
them among the 10,000 first whole words of the shipped encoder's English
vocabulary, is English whatever the detector says: English with a foreign name
or a café in it. (Half is too few: "La casa de mi madre está en Sevilla" has
four such words of eight.) The
lexical view does not depend on detection being right: outside English it keeps
each word's surface form beside its stem (``lexical.lexical_tokens``).

Example:
    >>> detect_language("Zoë ist letzten Frühling nach München gezogen.")
    'german'
    >>> detect_language("I love that café, it's my favourite")
    'english'
    >>> stem_as("münchener", "german")
    'munch'
"""

from __future__ import annotations

import functools
import threading
from importlib import resources
from typing import Any

import regex
import Stemmer

from langchain_ripplemem._runtime.text_caches import text_cache

__all__ = ["SNOWBALL_LANGUAGES", "detect_language", "has_stemmer", "stem_as", "stopwords"]

#: lingua's name of a language -> the PyStemmer / stop-words name it is stemmed and filtered under.
_LINGUA_TO_SNOWBALL = {
    "ARABIC": "arabic", "ARMENIAN": "armenian", "BASQUE": "basque", "CATALAN": "catalan", "CZECH": "czech",
    "DANISH": "danish", "DUTCH": "dutch", "ENGLISH": "english", "ESPERANTO": "esperanto", "ESTONIAN": "estonian",
    "FINNISH": "finnish", "FRENCH": "french", "GERMAN": "german", "GREEK": "greek", "HINDI": "hindi",
    "HUNGARIAN": "hungarian", "INDONESIAN": "indonesian", "IRISH": "irish", "ITALIAN": "italian",
    "LITHUANIAN": "lithuanian", "BOKMAL": "norwegian", "NYNORSK": "norwegian", "PERSIAN": "persian",
    "POLISH": "polish", "PORTUGUESE": "portuguese", "ROMANIAN": "romanian", "RUSSIAN": "russian",
    "SERBIAN": "serbian", "SOTHO": "sesotho", "SPANISH": "spanish", "SWEDISH": "swedish", "TAMIL": "tamil",
    "TURKISH": "turkish",
    # no Snowball stemmer: detected for their stopwords, words kept as they are
    "HEBREW": "hebrew", "CHINESE": "chinese", "JAPANESE": "japanese", "KOREAN": "korean", "THAI": "thai",
}
#: The languages with a Snowball stemmer (PyStemmer's names).
SNOWBALL_LANGUAGES = frozenset(Stemmer.algorithms()) - {"porter", "dutch_porter"}

_ENGLISH_WORDS = 10_000
_WORDS = regex.compile(r"[\p{L}\p{M}]+")
_lock = threading.Lock()
_detector = None


def _build_detector() -> Any:
    """The lingua detector over the languages above, built once (its models load as they are first needed)."""
    global _detector
    with _lock:
        if _detector is None:
            from lingua import Language, LanguageDetectorBuilder  # 0.1 s of import only for non-ASCII text

            languages = [getattr(Language, name) for name in _LINGUA_TO_SNOWBALL]
            _detector = LanguageDetectorBuilder.from_languages(*languages).with_low_accuracy_mode().build()
    return _detector


@text_cache
@functools.lru_cache(maxsize=4096)
def detect_language(text: str, *, ascii_too: bool = False) -> str:
    """The language of ``text`` by its PyStemmer / stop-words name; ``"english"`` when unsure.

    Args:
        text: any text; one with no letter outside ASCII is English without running the detector.
        ascii_too: run the detector on ASCII text too, for a rule that must tell German from English
            in plain letters ("Das Wetter soll morgen schlechter werden."): slower, so only where needed.

    Example:
        >>> detect_language("Das Wetter soll morgen wieder schlechter werden."), detect_language(
        ...     "Das Wetter soll morgen wieder schlechter werden.", ascii_too=True)
        ('english', 'german')
    """
    words = _WORDS.findall(text.casefold())
    if not ascii_too and all(w.isascii() for w in words):
        return "english"
    english = _english_words()
    if len(words) >= 3 and 10 * sum(w in english for w in words) >= 6 * len(words):
        return "english"  # low-accuracy trigrams misread short English with a foreign name
    found = (_detector or _build_detector()).detect_language_of(text)
    return _LINGUA_TO_SNOWBALL.get(found.name, "english") if found is not None else "english"


@functools.cache
def _english_words() -> frozenset[str]:
    """The first whole words of the encoder's (BERT uncased) vocabulary: roughly English by frequency."""
    text = resources.files("langchain_ripplemem").joinpath("assets/minilm/vocab.txt").read_text(encoding="utf-8")
    return frozenset([w for w in text.split() if w.isalpha()][:_ENGLISH_WORDS])


def has_stemmer(language: str) -> bool:
    """Whether PyStemmer has a Snowball stemmer for ``language``."""
    return language in SNOWBALL_LANGUAGES


@functools.cache
def _stemmer(language: str) -> Stemmer.Stemmer:
    return Stemmer.Stemmer(language)


# A namespace's vocabulary in a few languages: as lexical.stem's cache, about 250 bytes an entry.
@text_cache
@functools.lru_cache(maxsize=50_000)
def stem_as(word: str, language: str) -> str:
    """The Snowball stem of a casefolded ``word`` in ``language``; the word itself where there is no stemmer.

    Raises:
        ValueError: ``language`` is empty.
    """
    if not language:
        raise ValueError("language must be a language name such as 'german', got ''")
    if language not in SNOWBALL_LANGUAGES:
        return word
    return str(_stemmer(language).stemWord(word))


@functools.cache
def stopwords(language: str) -> frozenset[str]:
    """The stop-words package's list for ``language`` (casefolded), empty where it has none.

    Chinese and Japanese are one list, as their words are: Han characters appear in both.
    """
    from stop_words import AVAILABLE_LANGUAGES, get_stop_words

    names = ("chinese", "japanese") if language in ("chinese", "japanese") else (language,)
    out: set[str] = set()
    for name in names:
        if name in AVAILABLE_LANGUAGES:
            for entry in get_stop_words(name, cache=True):
                out.update(w.casefold() for w in regex.findall(r"[\p{L}\p{M}\p{N}']+", entry))
    return frozenset(out)
