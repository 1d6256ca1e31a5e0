"""Shared fixtures and factories: a deterministic bag-of-words embedding, small conversations, memory units."""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langchain_ripplemem.config import WriteConfig
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.presets import PAPER_WRITE
from langchain_ripplemem.schemas import Conversation, MemoryUnit, Namespace, Provenance
from langchain_ripplemem.text.lexical import lexical_tokens

from .openai_server import ScriptedOpenAIServer


class BagOfWordsEmbeddings(Embeddings):
    """Hashed bag of stemmed content words: texts sharing words are close, others ~orthogonal."""

    dim = 512
    # The model's name a store records: subclasses that add behaviour, not other vectors, open one store.
    model_name = "bag-of-words-512"

    def _vec(self, text: str) -> list[float]:
        v = np.zeros(self.dim, dtype=np.float32)
        for tok in lexical_tokens(text):
            v[int(hashlib.md5(tok.encode()).hexdigest(), 16) % self.dim] += 1.0
        if not v.any():
            v[0] = 1.0
        return (v / np.linalg.norm(v)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


class WriteMeanwhile(BagOfWordsEmbeddings):
    """Embeddings that let another writer store a conversation while a batch is being embedded.

    The write path embeds before it takes the namespace's writer lock, so the other
    writer (on its own thread) must get through; a held lock fails the join.
    """

    def __init__(self, other: Any, conversation: Any, namespace: tuple[str, ...]) -> None:
        self.other, self.conversation, self.namespace = other, conversation, namespace

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if self.conversation is not None:
            conversation, self.conversation = self.conversation, None
            thread = threading.Thread(target=self.other.add_conversation, args=(conversation,),
                                      kwargs={"namespace": self.namespace})
            thread.start()
            thread.join(timeout=30)
            assert not thread.is_alive(), "the other writer was kept waiting"
        return super().embed_documents(texts)


class RecallPause(BagOfWordsEmbeddings):
    """Embeddings that hold one recall still while others write: a deterministic interleaving.

    A recall embeds its query in its first node, once it has taken the namespace it
    reads (``recall/nodes.py``); the first ``embed_query`` after :meth:`arm` runs
    ``during`` there (other threads or processes writing), and the recall goes on after it.
    """

    def __init__(self) -> None:
        self._during: Callable[[], object] | None = None

    def arm(self, during: Callable[[], object]) -> None:
        self._during = during

    def embed_query(self, text: str) -> list[float]:
        during, self._during = self._during, None
        if during is not None:
            during()
        return super().embed_query(text)


def recall_trace(result: Any) -> dict[str, Any]:
    """What a recall found, in order, with its scores and rounds: all of its result but the timings.

    And the units' ``created_at``: two memories that hold the same conversation compare equal.
    """
    return result.model_dump(exclude={"usage": True, "rounds": {"__all__": {"usage"}},
                                      "memories": {"__all__": {"unit": {"created_at"}}}})


@pytest.fixture(autouse=True)
def _private_vector_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """``python -m benchmarks`` caches vectors in the user's cache by default: never from a test."""
    monkeypatch.setenv("RIPPLEMEM_CACHE_DIR", str(tmp_path_factory.mktemp("vector-cache")))


@pytest.fixture
def bow() -> BagOfWordsEmbeddings:
    return BagOfWordsEmbeddings()


def make_conversation(cid: str = "c1") -> Conversation:
    """Maya, Sam and the seafood place, over three sessions weeks apart."""
    return Conversation.model_validate({"id": cid, "sessions": [
        {"id": "S1", "time": "2026-03-02T19:00:00+00:00", "turns": [
            {"id": "S1:1", "speaker": "Maya", "text": "I found out I am allergic to shellfish, no shrimp for me."},
            {"id": "S1:2", "speaker": "Sam", "text": "Oh no, that is rough. Good to know though."},
            {"id": "S1:3", "speaker": "Maya", "text": "My doctor gave me an epipen just in case."}]},
        {"id": "S2", "time": "2026-03-20T19:00:00+00:00", "turns": [
            {"id": "S2:1", "speaker": "Sam", "text": "My cousin cooks at Harbor Grill, the best oysters in Portland."},
            {"id": "S2:2", "speaker": "Maya", "text": "I went hiking near Portland last week with Priya."}]},
        {"id": "S3", "time": "2026-04-20T19:00:00+00:00", "turns": [
            {"id": "S3:1", "speaker": "Sam", "text": "For your birthday dinner let us book Harbor Grill!"},
            {"id": "S3:2", "speaker": "Maya", "text": "Sounds fun, I will think about the dinner."}]},
    ]})


def drawn_conversation(drawn: list[list[tuple[str, str]]]) -> Conversation:
    """A conversation of sessions of (speaker, text) turns, a day apart: ids ``S{s}:{t}``, from 0."""
    return Conversation.model_validate({"id": "c", "sessions": [
        {"id": f"S{s}", "time": f"2026-05-{s + 1:02d}T12:00:00+00:00",
         "turns": [{"id": f"S{s}:{t}", "speaker": sp, "text": text} for t, (sp, text) in enumerate(turns)]}
        for s, turns in enumerate(drawn)]})


ROOT = Path(__file__).resolve().parents[2]


def reopened_in_new_process(persist_directory: Path, lines: str) -> Any:
    """Run ``lines`` in a new Python process where ``m`` is the memory at ``persist_directory``.

    Returns what the last line they print parses to as JSON: what another process sees of the store.
    """
    script = ("import json\n"
              "from langchain_ripplemem.memory import RippleMem\n"
              "from tests.unit_tests.conftest import BagOfWordsEmbeddings\n"
              f"m = RippleMem(BagOfWordsEmbeddings(), persist_directory={str(persist_directory)!r})\n" + lines)
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def make_unit(text: str, *, namespace: Namespace = ("n",), conversation: str = "c", session: str = "s",
              turns: Sequence[str] = (), uid: str | None = None, **fields: Any) -> MemoryUnit:
    """A memory unit said in ``conversation``/``session`` at ``turns``; any other unit field by keyword.

    Its id is ``uid`` when given, else the stable id :meth:`MemoryUnit.create` derives.
    """
    source = Provenance(conversation_id=conversation, session_id=session, turn_ids=list(turns))
    if uid is None:
        return MemoryUnit.create(namespace=namespace, restatement=text, source=source, **fields)
    return MemoryUnit(id=uid, namespace=tuple(namespace), restatement=text, source=source, **fields)


@pytest.fixture
def conversation() -> Conversation:
    return make_conversation()


def filled_memory(namespace: tuple[str, ...], *, write_config: WriteConfig | None = PAPER_WRITE,
                  **memory_kwargs: Any) -> RippleMem:
    """A bag-of-words memory holding :func:`make_conversation` in ``namespace``.

    The paper's structural edges by default: seven units are too few for rare-cue edges
    (test_identifying_cues.py); ``write_config=None`` for the recommended ones.
    """
    memory = RippleMem(BagOfWordsEmbeddings(), write_config=write_config, **memory_kwargs)
    memory.add_conversation(make_conversation(), namespace=namespace)
    return memory


@pytest.fixture
def openai_server() -> Iterator[ScriptedOpenAIServer]:
    """A local OpenAI-compatible chat server answering from a script (see ``openai_server.py``)."""
    with ScriptedOpenAIServer() as server:
        yield server


# -- a secret to forget (test_forget_erases.py, integration_tests/test_forget_servers.py) -------------
# Floats of a vector that must match, consecutively, for the vector to count as found.
VECTOR_PREFIX = 8


class Secret:
    """A sentence no other text shares: its token is in the dog's name and the place, and nowhere else."""

    def __init__(self) -> None:
        rng = random.Random()
        self.token = "".join(rng.choice("bcdfghjkmnpqrtvwxz") for _ in range(10))
        self.text = (f"My border collie Zephyr{self.token.capitalize()} sleeps by the "
                     f"Quill{self.token} lighthouse every night.")
        self.vectors: list[np.ndarray] = []

    def remember_vectors(self, memory: RippleMem, namespace: tuple[str, ...]) -> list[str]:
        """The ids of the units holding the secret; their vectors are kept to look for on disk."""
        units = memory.list_units(namespace, include_suppressed=True)
        ids = [u.id for u in units if self.token in u.restatement.lower()]
        assert ids, "the secret was not stored"
        index = memory.reader.namespace_index(namespace)
        self.vectors = [np.array(index.vector(uid), dtype=np.float32) for uid in ids]
        return ids

    def traces(self, directory: Path) -> list[tuple[str, str]]:
        """``(file, what)`` for every file under ``directory`` that holds the token or a vector."""
        found = []
        for path in sorted(p for p in directory.rglob("*") if p.is_file()):
            data = path.read_bytes()
            name = str(path.relative_to(directory))
            if self.token.encode() in data.lower():
                found.append((name, "text"))
            if any(holds_vector(data, vector) for vector in self.vectors):
                found.append((name, "vector"))
        return found


def holds_vector(data: bytes, vector: np.ndarray) -> bool:
    """Whether ``data`` holds ``vector``'s first floats as float32, at any byte offset, within rounding."""
    head = vector[:VECTOR_PREFIX].astype(np.float32)
    for offset in range(4):
        usable = (len(data) - offset) // 4
        if usable < VECTOR_PREFIX:
            continue
        floats = np.frombuffer(data, dtype="<f4", count=usable, offset=offset)
        with np.errstate(invalid="ignore"):
            starts = np.flatnonzero(np.abs(floats[: usable - VECTOR_PREFIX + 1] - head[0]) < 1e-5)
        for start in starts:
            if np.allclose(floats[start : start + VECTOR_PREFIX], head, atol=1e-5):
                return True
    return False


def filler(conversation_id: str, turns: int) -> Conversation:
    """A conversation of ``turns`` plain turns (enough of them make Chroma persist its HNSW index)."""
    return Conversation.model_validate({"id": conversation_id, "sessions": [
        {"id": "S1", "time": "2026-03-02T19:00:00+00:00", "turns": [
            {"id": f"S1:{i}", "speaker": "Sam", "text": f"Note {i}: the garden needs water on day {i}."}
            for i in range(turns)]}]})


def secret_conversation(secret: Secret, conversation_id: str = "dog") -> Conversation:
    return Conversation.model_validate({"id": conversation_id, "sessions": [
        {"id": "S1", "time": "2026-03-01T19:00:00+00:00", "turns": [
            {"id": "S1:1", "speaker": "Maya", "text": secret.text},
            {"id": "S1:2", "speaker": "Sam", "text": "What a good dog, and what a view."}]}]})
