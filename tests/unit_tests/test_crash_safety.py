"""Crash safety: SIGKILL a real ingesting process, then reopen, check, re-ingest.

The child process ingests conversations into a persist directory and prints a
progress line per step. Where it is killed is chosen by the parameter:

- ``embedding``: inside the (blocked) embedding call of a conversation, before
  any of its units reach Chroma;
- ``before_edges``: after the conversation's units are in Chroma, before its
  edges and "linked" marks are committed (the window crash recovery exists for);
- ``during_upsert``: right as a large Chroma upsert starts (lands inside it or
  just after, whatever the scheduler does);
- ``after_progress``: right after a conversation finished, wherever the next
  one has got to.

The child blocks on stdin at the deterministic kill points, so those kills
never depend on timing. Afterwards the store must open, be consistent once the
memory's crash recovery ran, and re-ingesting everything must add exactly the
missing units (no duplicates) and end consistent.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from queue import Empty, Queue

import pytest

from langchain_ripplemem.cli.integrity import check_store
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.schemas import Conversation

from .conftest import BagOfWordsEmbeddings

ROOT = Path(__file__).resolve().parents[2]
NS = ("crash",)

_NAMES = ["Maya", "Sam", "Priya"]
_TOPICS = ["hiking", "oysters", "birthday", "allergy", "concert", "garden", "chess", "sailing",
           "pottery", "marathon", "violin", "camping", "baking", "museum", "cycling", "yoga"]
_PLACES = ["Portland", "Seattle", "Boise", "Denver", "Austin", "Tucson"]


def many_turns(cid: str, n_turns: int, per_session: int = 8) -> Conversation:
    """A conversation of ``n_turns`` distinct turns over sessions a day apart."""
    sessions = []
    for s in range((n_turns + per_session - 1) // per_session):
        turns = []
        for t in range(s * per_session, min(n_turns, (s + 1) * per_session)):
            h = sum(map(ord, cid)) + 7 * t
            turns.append({
                "id": f"S{s}:{t}", "speaker": _NAMES[t % 3],
                "text": f"{_NAMES[(t + 1) % 3]} and I talked about {_TOPICS[h % 16]} and "
                        f"{_TOPICS[(h // 16 + 3) % 16]} in {_PLACES[h % 6]}, note {cid}-{t}.",
            })
        sessions.append({"id": f"S{s}", "time": f"2026-03-{1 + s % 28:02d}T19:00:00+00:00", "turns": turns})
    return Conversation.model_validate({"id": cid, "sessions": sessions})


def conversations(mode: str) -> list[Conversation]:
    if mode == "during_upsert":  # one small, then one large upsert to be killed in
        return [many_turns("c0", 16), many_turns("c1", 400)]
    return [many_turns(f"c{i}", 12) for i in range(6)]


# The child: ingest conversations(mode) and report progress; block on stdin at the kill point.
CHILD = r"""
import sys
import time
from langchain_ripplemem.memory import RippleMem
from tests.unit_tests.conftest import BagOfWordsEmbeddings
from tests.unit_tests.test_crash_safety import NS, conversations

directory, mode, at = sys.argv[1], sys.argv[2], int(sys.argv[3])
state = {"conv": -1}

def say(line):
    print(line, flush=True)

class BlockingEmbeddings(BagOfWordsEmbeddings):
    def embed_documents(self, texts):
        if mode == "after_progress":
            time.sleep(0.2)  # slow enough that the kill usually lands mid-ingest
        if mode == "embedding" and state["conv"] == at:
            say("blocked embedding")
            sys.stdin.readline()  # the parent kills us here
        return super().embed_documents(texts)

memory = RippleMem(BlockingEmbeddings(), persist_directory=directory)
add_edges = memory.edge_backend.add

def blocking_add_edges(*args, **kwargs):
    if mode == "before_edges" and state["conv"] == at:
        say("blocked before edges")
        sys.stdin.readline()
    return add_edges(*args, **kwargs)

memory.edge_backend.add = blocking_add_edges

class AnnouncingCollection:
    def __init__(self, inner):
        self._inner = inner
    def __getattr__(self, name):
        return getattr(self._inner, name)
    def upsert(self, **kwargs):
        if mode == "during_upsert" and state["conv"] == at:
            say("upserting")
        return self._inner.upsert(**kwargs)

memory.unit_backend.collection = AnnouncingCollection(memory.unit_backend.collection)
for i, conv in enumerate(conversations(mode)):
    state["conv"] = i
    memory.add_conversation(conv, namespace=NS)
    say(f"done {i}")
say("finished")
"""

# mode -> (conversation index at which the child blocks/announces, line to kill on)
KILL_POINTS = {
    "embedding": (3, "blocked embedding"),
    "before_edges": (2, "blocked before edges"),
    "during_upsert": (1, "upserting"),
    "after_progress": (-1, "done 2"),
}


def _read_until(proc: subprocess.Popen[str], marker: str, timeout: float = 120.0) -> list[str]:
    """Lines the child printed up to and including ``marker`` (a hang guard, not a threshold).

    A thread reads the lines: ``select`` on the pipe cannot see lines that a
    ``readline`` already pulled into Python's buffer (two lines written at once).
    """
    assert proc.stdout is not None
    lines: list[str] = []
    queue: Queue[str | None] = Queue()
    threading.Thread(target=lambda: [*map(queue.put, proc.stdout), queue.put(None)], daemon=True).start()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = queue.get(timeout=1.0)
        except Empty:
            continue
        if line is None:
            break
        lines.append(line.strip())
        if line.strip() == marker:
            return lines
    err = proc.stderr.read() if proc.poll() is not None and proc.stderr else ""
    raise AssertionError(f"child never printed {marker!r}; got {lines}; stderr: {err[-2000:]}")


def _edges(memory: RippleMem) -> list[tuple[str, str, str, float]]:
    return sorted((e.src, e.dst, e.type, e.weight) for e in memory.edges(NS))
def run_until_killed(argv: list[str], marker: str) -> list[str]:
    """Run ``python argv`` from the repository root, SIGKILL it once it prints ``marker``; the lines it printed.

    The child may block on its stdin at the kill point (the lines before are read by :func:`_read_until`).
    """
    proc = subprocess.Popen([sys.executable, *argv], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        lines = _read_until(proc, marker)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    assert proc.returncode == -signal.SIGKILL
    return lines


def _edges(memory: RippleMem) -> list[tuple[str, str, str, float]]:
    return sorted((e.src, e.dst, e.type, e.weight) for e in memory.edges(NS))


@pytest.mark.slow
@pytest.mark.parametrize("mode", list(KILL_POINTS))
def test_sigkill_mid_ingest_then_reopen_check_and_reingest(tmp_path, mode):
    at, marker = KILL_POINTS[mode]
    lines = run_until_killed(["-c", CHILD, str(tmp_path), mode, str(at)], marker)
    assert "finished" not in lines

    convs = conversations(mode)
    turns = sum(len(s.turns) for c in convs for s in c.sessions)
    memory = RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path)
    raw = check_store(memory)
    before = raw.namespace(NS)
    if mode != "after_progress":  # the kill really interrupted the ingest
        assert before.chroma_units < turns
    assert not before.dangling_edges and not before.cross_namespace_edges
    assert not before.duplicate_ids and not before.duplicate_units
    if mode == "before_edges":  # units of the blocked conversation are stored but not linked
        assert len(before.unlinked_units) == sum(len(s.turns) for s in convs[at].sessions)
    if mode == "embedding":  # nothing of the blocked conversation reached the store
        assert before.chroma_units == 12 * at and not before.unlinked_units

    recovered = check_store(memory, relink=True)
    assert recovered.ok, recovered.summary()
    assert recovered.relinked == len(before.unlinked_units)

    new = sum(memory.add_conversation(c, namespace=NS).new_units for c in convs)
    assert new == turns - before.chroma_units
    final = check_store(memory)
    assert final.ok, final.summary()
    units = memory.list_units(NS)
    assert len(units) == len({u.id for u in units}) == turns

    if mode != "during_upsert":  # same insertion order as an uninterrupted ingest: same graph
        clean = RippleMem(BagOfWordsEmbeddings())
        for c in convs:
            clean.add_conversation(c, namespace=NS)
        assert _edges(memory) == _edges(clean)
        assert [u.id for u in units] == [u.id for u in clean.list_units(NS)]

    if mode not in ("before_edges", "during_upsert"):
        return
    # A new process sees the same consistent store.
    script = ("import sys\nfrom langchain_ripplemem.memory import RippleMem\n"
              "from langchain_ripplemem.cli.integrity import check_store\n"
              "from tests.unit_tests.conftest import BagOfWordsEmbeddings\n"
              f"r = check_store(RippleMem(BagOfWordsEmbeddings(), persist_directory={str(tmp_path)!r}))\n"
              "print(r.namespace(('crash',)).chroma_units, r.ok)\n")
    getattr(memory, "close", lambda: None)()  # one process at a time on an embedded store
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-2:] == [str(turns), "True"]
