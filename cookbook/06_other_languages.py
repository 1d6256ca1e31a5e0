"""Memories in other languages: a multilingual ``Embeddings``, and the lexical and cue views of any script.

Run: python cookbook/06_other_languages.py   (offline, a few seconds)

The default embedding model (all-MiniLM-L6-v2) was trained on English: it places a
German, Polish or Chinese sentence poorly. For memories in other languages pass a
multilingual LangChain ``Embeddings``; for example (not run here: it downloads the model)::

    # pip install langchain-huggingface sentence-transformers
    from langchain_huggingface import HuggingFaceEmbeddings
    memory = RippleMem(embeddings=HuggingFaceEmbeddings(
        model_name="sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"))

A store keeps the model it was built with: open it again with the same one.

The lexical (BM25) and cue views need no model: words of every script are kept
(NFKC-normalised, casefolded), Chinese and Japanese are cut into character
bigrams and kana runs, and each text is stemmed in its own language ("Kühe" and
"Kühen" meet). Names are found by the rules of their language: German capitalises
every noun, so "das Wetter" is no participant, while "Zoë" is. Offline, this script
uses a stand-in for the multilingual model, a hashed character-trigram
``Embeddings``, which, like a real multilingual model and unlike MiniLM, sees the
letters of every script.
"""

from __future__ import annotations

import hashlib

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_ripplemem import RippleMem
from langchain_ripplemem.text.lexical import lexical_tokens

NAMESPACE = ("users", "zoe")
CHAT = {"id": "zoë-und-lukas", "sessions": [
    {"id": "S1", "time": "2026-05-04T18:00:00Z", "turns": [
        {"id": "S1:1", "speaker": "Zoë", "text": "Mein Bruder Jürgen ist letzten Frühling nach München gezogen."},
        {"id": "S1:2", "speaker": "Lukas", "text": "Mein Bruder wohnt immer noch in Hamburg bei unseren Eltern."},
        {"id": "S1:3", "speaker": "Zoë", "text": "Jürgen hat jetzt drei Kühe auf einer Alm im Allgäu."},
        {"id": "S1:4", "speaker": "Lukas", "text": "Das Wetter soll morgen wieder schlechter werden."}]},
    {"id": "S2", "time": "2026-05-11T18:00:00Z", "turns": [
        {"id": "S2:1", "speaker": "Zoë", "text": "张伟上个月搬到成都去了。"},
        {"id": "S2:2", "speaker": "Lukas", "text": "我姐姐一直住在北京。"}]},
]}


class MultilingualStandIn(Embeddings):
    """Offline stand-in for a multilingual model: hashed character trigrams, 256 dims, any script."""

    model_name = "multilingual-stand-in-trigrams-256"  # what the store records as its model

    def _vector(self, text: str) -> list[float]:
        v = np.zeros(256)
        padded = f"  {text.casefold()} "
        for i in range(len(padded) - 2):
            v[int(hashlib.md5(padded[i:i + 3].encode()).hexdigest(), 16) % 256] += 1.0
        return (v / (np.linalg.norm(v) or 1.0)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


def main() -> None:
    memory = RippleMem(embeddings=MultilingualStandIn())
    memory.add_conversation(CHAT, namespace=NAMESPACE)
    print("tokens of 'Wie viele Kühen hat Jürgen?':", lexical_tokens("Wie viele Kühen hat Jürgen?"))
    print("tokens of '张伟搬到哪里去了？':", lexical_tokens("张伟搬到哪里去了？"))
    result = memory.recall("Wie viele Kühen hat Jürgen?", namespace=NAMESPACE, k=1)
    print(f"recall 'Wie viele Kühen hat Jürgen?' -> {result.memories[0].unit.restatement}")
    unit, _ = memory.search("张伟搬到哪里去了？", namespace=NAMESPACE, k=1, view="lexical")[0]
    print(f"lexical view '张伟搬到哪里去了？' -> {unit.restatement}")
    cues = memory.recall("Was hat Zoë über das Wetter gesagt?", namespace=NAMESPACE).cues
    print("participants of 'Was hat Zoë über das Wetter gesagt?':", cues.participants if cues else [])


if __name__ == "__main__":
    main()
