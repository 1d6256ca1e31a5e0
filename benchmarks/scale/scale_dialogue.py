"""Synthetic two-person dialogue and a fast fake embedding model for the scale benchmark.

Everything is seeded, so a namespace grown to 10k memories is the first 10k of
the one grown to 100k. Turns mix a Zipf-distributed vocabulary of made-up words
(so BM25 sees a realistic long tail), activities, places the rule-based
extractor knows, friends' names and relative times ("yesterday", "last
week"), so units carry participant, location and time cues as real chat does.
"""

from __future__ import annotations

import random
import zlib
from datetime import datetime, timedelta, timezone
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

SPEAKERS = [("Maya", "Sam"), ("Priya", "Jonas"), ("Ana", "Tomas"), ("Lena", "Omar"), ("Chloe", "Ravi"),
            ("Nora", "Felix"), ("Iris", "Mateo"), ("Zoe", "Kenji")]
FRIENDS = ["Ben", "Clara", "David", "Elena", "Hugo", "Julia", "Karl", "Lucia", "Marco", "Nina", "Oscar",
           "Paula", "Rosa", "Stefan", "Tara", "Viktor", "Wendy", "Yusuf"]
PLACES = ["Portland", "Seattle", "Denver", "Austin", "Boston", "Chicago", "Paris", "Berlin", "Lisbon",
          "Tokyo", "Toronto", "Vancouver", "Madrid", "Dublin", "Vienna", "Prague", "Kyoto", "Sydney"]
ACTIVITIES = ["hiking", "pottery", "chess", "sailing", "baking", "cycling", "yoga", "painting", "camping",
              "surfing", "running", "gardening", "climbing", "knitting", "fishing", "dancing", "skiing",
              "photography", "violin lessons", "board games", "a cooking class", "a book club", "the marathon"]
WHEN = ["yesterday", "last week", "last weekend", "two days ago", "this morning", "last month",
        "next Saturday", "tomorrow", "next week", ""]
TEMPLATES = [
    "I went {act} with {friend} in {place} {when}, it was {w1} and {w2}.",
    "{friend} told me about the {w1} {w2} near {place}, we should try {act} there.",
    "Honestly the {w1} was {w2}, I think {friend} liked the {w3} more.",
    "Did you ever finish the {w1} {w2}? I started {act} {when} because of it.",
    "My {w1} keeps asking about {place}, maybe we go {when} for some {act}.",
    "That sounds {w1}! I remember the {w2} {w3} from {place}.",
    "We had {w1} {w2} at {friend}'s place {when} and talked about {act} for hours.",
    "I am thinking about {act} again, the {w1} {w2} really helps with {w3}.",
    "Not much, just {w1} and {w2}, and some {act} {when}.",
    "How was {place}? {friend} said the {w1} there is {w2}.",
]
QUESTIONS = [
    "What did {a} do with {friend} in {place}?",
    "When did {a} go {act}?",
    "What does {a} think about {w1}?",
    "Who went {act} in {place}?",
    "What did {friend} say about {place}?",
    "Why did {a} start {act}?",
]


def _vocabulary(size: int = 4000, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ren", "tu", "sa", "vel", "no", "dri", "pa", "zen", "qui", "bo", "ter",
                 "fa", "lin", "mor", "ga", "shi", "ve"]
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))))
    return sorted(words)


VOCABULARY = _vocabulary()
# Zipf weights over the vocabulary: a few words everywhere, a long tail of rare ones.
_ZIPF = np.cumsum(1.0 / np.arange(1, len(VOCABULARY) + 1) ** 1.05)
_ZIPF /= _ZIPF[-1]


class Dialogue:
    """Sessions of one namespace's two speakers, generated in order from one seed."""

    def __init__(self, seed: int, turns_per_session: int = 20) -> None:
        self.rng = random.Random(seed)
        self.a, self.b = SPEAKERS[seed % len(SPEAKERS)]
        self.turns_per_session = turns_per_session
        self.when = datetime(2020, 1, 6, 19, 0, tzinfo=timezone.utc)
        self.session = 0

    def _word(self) -> str:
        return VOCABULARY[int(np.searchsorted(_ZIPF, self.rng.random()))]

    def _fill(self, template: str) -> str:
        return " ".join(template.format(
            act=self.rng.choice(ACTIVITIES), friend=self.rng.choice(FRIENDS), place=self.rng.choice(PLACES),
            when=self.rng.choice(WHEN), w1=self._word(), w2=self._word(), w3=self._word(),
            a=self.a).split())

    def next_session(self, most: int) -> dict[str, Any]:
        """The next session, of at most ``most`` turns, as conversation ``c<session number>``."""
        return self.conversation(f"c{self.session + 1}", turns=min(self.turns_per_session, most))

    def conversation(self, cid: str, sessions: int = 1, turns: int | None = None) -> dict[str, Any]:
        """The next ``sessions`` sessions as one conversation ``cid`` (JSON form)."""
        out = []
        for _ in range(sessions):
            self.session += 1
            self.when += timedelta(days=self.rng.randint(1, 3), minutes=self.rng.randint(0, 600))
            sid = f"S{self.session}"
            n = turns or self.turns_per_session
            out.append({"id": sid, "time": self.when.isoformat(), "turns": [
                {"id": f"{sid}:{t}", "speaker": (self.a, self.b)[t % 2], "text": self._fill(self.rng.choice(TEMPLATES))}
                for t in range(n)]})
        return {"id": cid, "sessions": out}

    def question(self) -> str:
        """A question in the style of the dialogue (about one of its speakers, places or activities)."""
        return self._fill(self.rng.choice(QUESTIONS))


class FastFakeEmbeddings(Embeddings):
    """Hashed bag of words, 384-d, deterministic and fast: only the memory's own cost is measured.

    Each lower-cased word has a fixed random unit vector (seeded by its CRC32); a
    text is the normalised sum, so texts sharing words are close.
    """

    dim = 384

    def __init__(self) -> None:
        self._table: dict[str, np.ndarray] = {}

    def _token(self, word: str) -> np.ndarray:
        vec = self._table.get(word)
        if vec is None:
            vec = np.random.default_rng(zlib.crc32(word.encode())).standard_normal(self.dim).astype(np.float32)
            vec = self._table[word] = vec / np.linalg.norm(vec)
        return vec

    def vector(self, text: str) -> np.ndarray:
        """The text's unit vector."""
        words = "".join(c if c.isalnum() else " " for c in text.lower()).split()
        v = np.sum([self._token(w) for w in words], axis=0) if words else self._token("")
        return (v / (np.linalg.norm(v) or 1.0)).astype(np.float32)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text."""
        return [self.vector(t).tolist() for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """The vector of ``text``."""
        return self.vector(text).tolist()
