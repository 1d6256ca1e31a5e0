"""Concurrency: threads sharing one memory; processes sharing one embedded store.

Supported: any number of threads on one ``RippleMem`` (writes are serialised
by the memory's lock, reads run alongside, and each recall reads one state of its
namespace from start to end, whatever is written meanwhile). Not supported: several processes on
one embedded ``persist_directory`` (Chroma's PersistentClient is not
process-safe and RippleMem's per-process views would go stale); that is
enforced by :mod:`langchain_ripplemem.storage.locks`, and several processes use a
Chroma server instead (tests/integration_tests/test_chroma_server.py).
"""

from __future__ import annotations

import asyncio
import math
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from langchain_ripplemem.cli.integrity import check_store
from langchain_ripplemem.config import LinkingConfig, RecallConfig
from langchain_ripplemem.conversations.messages import conversation_from_messages
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.storage.locks import (
    LOCK_FILENAME,
    StoreLock,
    StoreLockedError,
    embedded_store_directory,
    lock_holder,
)

from .conftest import BagOfWordsEmbeddings, RecallPause, recall_trace
from .test_crash_safety import many_turns

ROOT = Path(__file__).resolve().parents[2]


# -- threads -----------------------------------------------------------------------
@pytest.mark.parametrize("persistent", [False, True], ids=["ephemeral", "persistent"])
def test_writer_threads_and_a_reader_thread_lose_nothing(tmp_path, persistent):
    memory = RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path if persistent else None)
    # Four writers: two own a namespace each, two share one; three conversations each.
    plan = {
        "w0": [("t0",), ("t0",), ("t0",)],
        "w1": [("t1",), ("t1",), ("t1",)],
        "w2": [("shared",)] * 3,
        "w3": [("shared",)] * 3,
    }
    expected: dict[tuple[str, ...], set[str]] = {}
    errors: list[BaseException] = []
    recalls = []
    done = threading.Event()
    start = threading.Barrier(len(plan) + 1)
    guard = threading.Lock()

    def writer(name: str) -> None:
        try:
            start.wait()
            for i, ns in enumerate(plan[name]):
                report = memory.add_conversation(many_turns(f"{name}-{i}", 10), namespace=ns)
                with guard:
                    expected.setdefault(ns, set()).update(report.unit_ids)
        except BaseException as err:  # noqa: BLE001 - collected and asserted below
            errors.append(err)

    def reader() -> None:
        try:
            start.wait()
            while not done.is_set():
                for ns in (("t0",), ("t1",), ("shared",)):
                    result = memory.recall("hiking in Portland with Maya", namespace=ns, k=5)
                    ids = {m.unit.id for m in result.memories}
                    with guard:  # a recall only ever sees units of its own namespace
                        owned = {u for other, units in expected.items() if other != ns for u in units}
                    assert not ids & owned
                    recalls.append(len(ids))
                    memory.list_units(ns)
                    memory.edges(ns)
        except BaseException as err:  # noqa: BLE001
            errors.append(err)

    threads = [threading.Thread(target=writer, args=(name,)) for name in plan]
    reading = threading.Thread(target=reader)
    for t in [*threads, reading]:
        t.start()
    for t in threads:
        t.join(timeout=300)
    done.set()
    reading.join(timeout=300)
    assert not errors, errors
    assert recalls  # the reader really ran alongside
    assert {ns: len(ids) for ns, ids in expected.items()} == {("t0",): 30, ("t1",): 30, ("shared",): 60}
    for ns, ids in expected.items():
        assert {u.id for u in memory.list_units(ns)} == ids
    report = check_store(memory)
    assert report.ok, report.summary()
    if persistent:  # what reached disk is the same
        reopened = check_store(RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path))
        assert reopened.ok and {ns.namespace: ns.chroma_units for ns in reopened.namespaces} == {
            ("t0",): 30, ("t1",): 30, ("shared",): 60}


def test_deletes_alongside_writes_in_other_namespaces(bow):
    memory = RippleMem(bow)
    memory.add_conversation(many_turns("victim", 20), namespace=("victim",))
    victims = [u.id for u in memory.list_units(("victim",))]
    errors: list[BaseException] = []

    def write() -> None:
        try:
            for i in range(4):
                memory.add_conversation(many_turns(f"k{i}", 8), namespace=("keep",))
        except BaseException as err:  # noqa: BLE001
            errors.append(err)

    def delete() -> None:
        try:
            for uid in victims[::2]:
                memory.delete([uid], namespace=("victim",))
        except BaseException as err:  # noqa: BLE001
            errors.append(err)

    threads = [threading.Thread(target=write), threading.Thread(target=delete)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    assert {u.id for u in memory.list_units(("victim",))} == set(victims[1::2])
    assert len(memory.list_units(("keep",))) == 32
    report = check_store(memory)
    assert report.ok, report.summary()


def test_two_memories_on_one_store_leave_no_dangling_edges(tmp_path):
    a = RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path)
    b = RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path)
    a.add_conversation(many_turns("c1", 8), namespace=("n",))
    assert len(b.list_units(("n",))) == 8  # b has loaded the namespace
    a.delete([u.id for u in a.list_units(("n",))], namespace=("n",))
    b.add_conversation(many_turns("c2", 8), namespace=("n",))
    report = check_store(RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path))
    assert report.ok, report.summary()


# -- one recall, one state ------------------------------------------------------------
# A recall reads the namespace as the last whole write before it left it, to its end: writes that
# run meanwhile (adds, deletes, suppressions) change what later recalls find, never this one.
QUERY = "hiking in Portland with Maya"
SHARED = ("shared",)
WAIT = 120  # hang guard for threads and processes on a slow machine, not a performance threshold


#: Recollection that goes on past a strong first hop (the default stops there, at a cosine of 0.55), so a
#: recall of these word-count embeddings walks edges while others write.
WALKING = RecallConfig(controller={"sufficiency_similarity": 0.8})


def shared_memory(turns: int = 24, **kwargs: Any) -> tuple[RippleMem, RecallPause]:
    """A memory of ``turns`` turns about hikes, places and friends, on embeddings that can hold a recall still."""
    pause = RecallPause()
    memory = RippleMem(pause, **{"recall_config": WALKING, **kwargs})
    memory.add_conversation(many_turns("base", turns), namespace=SHARED)
    return memory, pause


def run_in_thread(write: Callable[[], object]) -> None:
    """Run ``write`` on another thread to its end (a writer beside the recall that waits here)."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            write()
        except BaseException as err:  # noqa: BLE001 - raised below
            errors.append(err)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(WAIT)
    assert not thread.is_alive() and not errors, errors


def matching(name: str) -> list[tuple[str, str]]:
    """Chat messages that answer :data:`QUERY` better than anything the memory holds."""
    return [("human", f"Maya and I went hiking in Portland again, trip {name}."),
            ("ai", f"Hiking in Portland with Maya, trip {name}: lovely.")]


def assert_changed_by_the_writes(memory: RippleMem, shown: list[str], gone: list[str]) -> None:
    """A recall after the writes sees them: the deleted and suppressed memories are gone, new ones come first."""
    after = memory.recall(QUERY, namespace=SHARED)
    ids = [m.unit.id for m in after.memories]
    assert not set(gone) & set(ids)
    assert ids[0] not in shown and any("trip" in m.unit.restatement for m in after.memories[:3])


def assert_one_state(result: Any, deleted_before: set[str], ever_added: set[str]) -> None:
    """What a recall under concurrent writes may return: memories written, not deleted before it, once each.

    Its evidence agrees with its memories: each returned memory was found, by a first-hop view or expansion.
    """
    ids = [m.unit.id for m in result.memories]
    assert len(ids) == len(set(ids))
    assert not set(ids) & deleted_before and set(ids) <= ever_added
    found = {uid for trace in result.rounds for uids in [*trace.first_hop.values(), trace.expanded] for uid in uids}
    assert all(math.isfinite(m.score) and m.provenance for m in result.memories) and set(ids) <= found


def test_a_recall_reads_one_state_while_writer_threads_add_delete_and_suppress():
    memory, pause = shared_memory()
    quiet = memory.recall(QUERY, namespace=SHARED)
    shown = [m.unit.id for m in quiet.memories]
    go, errors = threading.Event(), []

    def write(name: str) -> None:
        try:
            go.wait(WAIT)
            for i in range(3):
                memory.add_messages(matching(f"{name}-{i}"), namespace=SHARED)
        except BaseException as err:  # noqa: BLE001 - collected and asserted below
            errors.append(err)

    def delete_and_suppress() -> None:
        try:
            go.wait(WAIT)
            assert len(memory.delete(shown[:2], namespace=SHARED).unit_ids) == 2
            assert memory.suppress([shown[2]], namespace=SHARED, reason="wrong") == 1
        except BaseException as err:  # noqa: BLE001
            errors.append(err)

    writers = [threading.Thread(target=write, args=(f"w{i}",)) for i in range(2)]
    writers.append(threading.Thread(target=delete_and_suppress))
    for thread in writers:
        thread.start()

    def writes_run_to_their_end() -> None:  # inside the recall, once it has taken its state
        go.set()
        for thread in writers:
            thread.join(WAIT)
            assert not thread.is_alive()

    pause.arm(writes_run_to_their_end)
    during = memory.recall(QUERY, namespace=SHARED)
    assert not errors, errors
    assert recall_trace(during) == recall_trace(quiet)
    assert_changed_by_the_writes(memory, shown, shown[:3])


def test_a_pinned_index_answers_as_it_did_whatever_is_written_after_it():
    """Every read recall makes of an index, before and after writes that append, rewrite and claim."""
    memory, _ = shared_memory()
    live = memory.index.namespace_index(SHARED)
    view = memory.reader.namespace_index(SHARED)
    cues = memory.recall(QUERY, namespace=SHARED).cues
    vector = np.asarray(BagOfWordsEmbeddings().embed_query(QUERY), dtype=np.float32)
    keys = view.known_keys(QUERY + " Rafa Lisbon", ["maya"])

    def reads() -> dict[str, Any]:
        return {"n": len(view), "ids": list(view.ids), "units": [u.model_dump() for u in view.units],
                "suppressed": set(view.suppressed), "claims": dict(view.claimed_by),
                "semantic": view.semantic(vector, 10), "lexical": view.lexical(QUERY, 10),
                "bm25": view.lexical_scores(QUERY).tolist(), "terms": view.term_counts().tolist(),
                "hike": view.term_rows("hike").tolist(), "cue": view.cues(cues, 10, LinkingConfig(), vector),
                "keys": keys, "known": view.known_keys(QUERY + " Rafa Lisbon", ["maya"]),
                "rarity": [view.rarity(k) for k in keys], "names": [view.is_name(k) for k in keys],
                "overlap": view.key_overlap(keys).tolist(), "maya": list(view.postings["participants"]["maya"]),
                "pos": sorted(view.pos.items())}

    before = reads()
    first = live.units[0]
    memory.add_messages([("human", "Rafa and Maya went hiking in Lisbon with Maya's cousin Rafa."),
                         ("ai", "Rafa hiking in Lisbon sounds great.")], namespace=SHARED)
    memory.suppress([first.id], namespace=SHARED, reason="wrong")
    claim = live.units[-1].model_copy(update={"metadata": {**live.units[-1].metadata,
                                                          "supersedes": {first.id: "moved"}}})
    memory.index.replace(SHARED, [claim])
    assert len(live) > before["n"] and first.id in live.suppressed and live.claimed_by[first.id]
    assert reads() == before
    with pytest.raises(TypeError, match="never written"):
        view.add([first], np.zeros((1, BagOfWordsEmbeddings.dim), dtype=np.float32))


def test_a_recall_walks_the_edges_it_started_with_while_a_delete_removes_them():
    """The recall's walk reads the graph after the delete (nothing read before): the deleted edges still lead on.

    Its twin, the same memory with no recall before, gives the answer alone.
    """
    memory, pause = shared_memory(turns=60)
    twin, _ = shared_memory(turns=60)
    quiet = twin.recall(QUERY, namespace=SHARED)
    on_paths = sorted({uid for trace in quiet.rounds for path in trace.paths.values() for uid in path})
    assert on_paths  # expansion reached a memory over an edge
    pause.arm(lambda: run_in_thread(lambda: memory.delete(on_paths, namespace=SHARED)))
    during = memory.recall(QUERY, namespace=SHARED)
    assert recall_trace(during) == recall_trace(quiet)
    assert not {m.unit.id for m in memory.recall(QUERY, namespace=SHARED).memories} & set(on_paths)


def test_a_walk_graph_handed_out_before_a_delete_keeps_reading_its_edges():
    memory, _ = shared_memory()
    units = memory.list_units(SHARED)
    gone = units[0].id
    neighbours = {e.dst if e.src == gone else e.src for e in memory.edges(SHARED) if gone in (e.src, e.dst)}
    assert neighbours
    held = memory.reader.walkable_edges(SHARED)  # nothing read yet: every node is read after the delete
    memory.delete([gone], namespace=SHARED)
    assert all(gone in held.adj[node] for node in neighbours) and gone in held
    fresh = memory.reader.walkable_edges(SHARED)
    assert fresh is not held and gone not in fresh and not any(gone in fresh.adj[node] for node in neighbours
                                                                if node in fresh)


def test_a_recall_never_waits_for_a_write_under_way():
    """A write held still with its locks taken (storing its edges): a recall on another thread runs to its end."""
    memory, _ = shared_memory()
    quiet = memory.recall(QUERY, namespace=SHARED)
    store_edges, recalled = memory.edge_backend.add, []

    def recall_meanwhile(*args: Any, **kwargs: Any) -> Any:
        if not recalled:  # the first batch of edges: the write holds its writer lock, the memory's, the index's
            recalled.append(None)
            run_in_thread(lambda: recalled.append(memory.recall(QUERY, namespace=SHARED)))
        return store_edges(*args, **kwargs)

    memory.edge_backend.add = recall_meanwhile  # type: ignore[method-assign]
    memory.add_messages(matching("held"), namespace=SHARED)
    assert recall_trace(recalled[1]) == recall_trace(quiet)  # nor does it see the write half done


def test_reader_and_writer_threads_on_one_memory_each_recall_one_state():
    """The issue's load: two threads adding messages, two recalling, one deleting, 25 calls each."""
    memory, pause = shared_memory()
    base = [u.id for u in memory.list_units(SHARED)]
    ever, deleted, errors, results = set(base), set(), [], []
    guard, start = threading.Lock(), threading.Barrier(5)

    def write(name: str) -> None:
        start.wait(WAIT)
        for i in range(25):
            report = memory.add_messages(matching(f"{name}-{i}"), namespace=SHARED)
            with guard:
                ever.update(report.unit_ids)

    def delete() -> None:
        start.wait(WAIT)
        for uid in base[::2]:
            memory.delete([uid], namespace=SHARED)
            with guard:
                deleted.add(uid)

    def read() -> None:
        start.wait(WAIT)
        for _ in range(25):
            with guard:
                gone = set(deleted)
            results.append((memory.recall(QUERY, namespace=SHARED), gone))

    def run(target: Callable[..., None], *args: Any) -> None:
        try:
            target(*args)
        except BaseException as err:  # noqa: BLE001 - collected and asserted below
            errors.append(err)

    threads = [threading.Thread(target=run, args=(write, f"w{i}")) for i in range(2)]
    threads += [threading.Thread(target=run, args=(read,)) for _ in range(2)]
    threads.append(threading.Thread(target=run, args=(delete,)))
    # One recall held still while a write, a delete and a suppression run: fails without pinned indexes on every run.
    quiet = memory.recall(QUERY, namespace=SHARED)
    shown = [m.unit.id for m in quiet.memories]

    def one_of_each() -> None:
        ever.update(memory.add_messages(matching("held"), namespace=SHARED).unit_ids)
        memory.delete([shown[1]], namespace=SHARED)
        memory.suppress([shown[2]], namespace=SHARED, reason="wrong")
        for thread in threads:
            thread.start()

    pause.arm(one_of_each)
    held = memory.recall(QUERY, namespace=SHARED)
    for thread in threads:
        thread.join(WAIT)
    assert not errors, errors
    assert recall_trace(held) == recall_trace(quiet)
    assert len(results) == 50
    for result, gone in results:
        assert_one_state(result, gone | {shown[1]}, ever)


def test_asyncio_gather_of_writes_and_recalls_each_recall_one_state():
    memory, pause = shared_memory()
    quiet = memory.recall(QUERY, namespace=SHARED)
    shown = [m.unit.id for m in quiet.memories]
    reached, release = threading.Event(), threading.Event()

    def held_until_written() -> None:  # in the recall's worker thread: the event loop runs the writes
        reached.set()
        assert release.wait(WAIT)

    async def write() -> None:
        assert await asyncio.to_thread(reached.wait, WAIT)
        try:
            await asyncio.gather(*(memory.aadd_conversation(conversation_from_messages(matching(f"a{i}")),
                                                            namespace=SHARED) for i in range(4)))
            await asyncio.to_thread(memory.delete, shown[:2], namespace=SHARED)
            await asyncio.to_thread(memory.suppress, [shown[2]], namespace=SHARED, reason="wrong")
        finally:
            release.set()

    async def main() -> list[Any]:
        held, _ = await asyncio.gather(memory.arecall(QUERY, namespace=SHARED), write())
        assert recall_trace(held) == recall_trace(quiet)
        # The load: 20 ingests and 20 recalls at once.
        return await asyncio.gather(
            *(memory.aadd_conversation(many_turns(f"load{i}", 6), namespace=SHARED) for i in range(20)),
            *(memory.arecall(QUERY, namespace=SHARED) for _ in range(20)))

    pause.arm(held_until_written)
    gathered = asyncio.run(main())
    ever = {u.id for u in memory.list_units(SHARED, include_suppressed=True)} | set(shown)
    for result in gathered[20:]:
        assert_one_state(result, set(shown[:2]), ever)
    assert_changed_by_the_writes(memory, shown, shown[:3])


# -- processes: the lock -------------------------------------------------------------
HOLDER = r"""
import sys
from langchain_ripplemem.storage.locks import StoreLock
lock = StoreLock(sys.argv[1]).acquire()
print("locked", flush=True)
sys.stdin.readline()
lock.release()
print("released", flush=True)
sys.stdin.readline()
"""


def _spawn(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", script, *args], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _expect(proc: subprocess.Popen[str], line: str, timeout: float = 300.0) -> None:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout  # hang guard only
    # poll, not select: late in the suite the process holds more than 1,024 descriptors
    # (every embedded Chroma client keeps ~20 until exit) and select() refuses those.
    poller = select.poll()
    poller.register(proc.stdout, select.POLLIN | select.POLLHUP)
    while time.monotonic() < deadline:
        if poller.poll(1000):
            got = proc.stdout.readline()
            if got.strip() == line:
                return
            if not got:
                break
    proc.kill()  # before reading its stderr to the end: a child still waiting on stdin never closes it
    raise AssertionError(f"no {line!r} from child; stderr: {proc.stderr.read() if proc.stderr else ''}")


def _finish(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=60)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def test_second_process_gets_store_locked_error_until_the_holder_releases(tmp_path):
    proc = _spawn(HOLDER, str(tmp_path))
    try:
        _expect(proc, "locked")
        with pytest.raises(StoreLockedError) as info:
            StoreLock(tmp_path).acquire()
        message = str(info.value)
        assert str(tmp_path) in message and f"process {proc.pid}" in message
        assert "chromadb.HttpClient" in message and "chroma run" in message
        assert info.value.holder["pid"] == proc.pid
        assert lock_holder(tmp_path)["pid"] == proc.pid
        assert proc.stdin is not None
        proc.stdin.write("\n")
        proc.stdin.flush()
        _expect(proc, "released")
        assert lock_holder(tmp_path) is None
        with StoreLock(tmp_path) as lock:  # free again
            assert lock.locked and lock_holder(tmp_path)["pid"] == os.getpid()
    finally:
        _finish(proc)


def test_lock_of_a_killed_process_is_free_at_once(tmp_path):
    proc = _spawn(HOLDER, str(tmp_path))
    try:
        _expect(proc, "locked")
        with pytest.raises(StoreLockedError):
            StoreLock(tmp_path).acquire()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        _finish(proc)
    assert (tmp_path / LOCK_FILENAME).exists()  # the file stays; the OS lock went with the process
    lock = StoreLock(tmp_path).acquire()
    lock.release()


def test_lock_is_reentrant_within_a_process_and_counted(tmp_path):
    first, second = StoreLock(tmp_path).acquire(), StoreLock(tmp_path / ".." / tmp_path.name).acquire()
    assert first.locked and second.locked
    first.release()
    first.release()  # idempotent: does not give back the second's share
    proc = _spawn(HOLDER, str(tmp_path))
    try:  # still held by `second`: another process cannot take it
        assert proc.wait(timeout=60) == 1
        assert proc.stderr is not None and "StoreLockedError" in proc.stderr.read()
    finally:
        _finish(proc)
    second.release()
    proc = _spawn(HOLDER, str(tmp_path))
    try:
        _expect(proc, "locked")
    finally:
        _finish(proc)


@pytest.mark.filterwarnings("ignore:.*fork.*:DeprecationWarning")
def test_lock_in_a_forked_child_is_not_inherited(tmp_path):
    if not hasattr(os, "fork"):
        pytest.skip("needs os.fork")
    lock = StoreLock(tmp_path).acquire()
    try:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: the parent's registry entry must not count as ours
            try:
                StoreLock(tmp_path).acquire()
                code = 0
            except StoreLockedError:
                code = 7
            os.write(write, bytes([code]))
            os._exit(0)
        os.close(write)
        assert os.read(read, 1) == bytes([7])
        os.waitpid(pid, 0)
        os.close(read)
    finally:
        lock.release()


def test_embedded_store_directory_finds_persistent_clients_only(tmp_path, bow):
    persistent = RippleMem(bow, persist_directory=tmp_path)
    assert embedded_store_directory(persistent.unit_backend.client) == tmp_path
    assert embedded_store_directory(RippleMem(bow).unit_backend.client) is None
    assert embedded_store_directory(object()) is None


# -- processes: end to end -------------------------------------------------------------
OPENER = r"""
import sys
from langchain_ripplemem.memory import RippleMem
from tests.unit_tests.conftest import BagOfWordsEmbeddings, make_conversation
memory = RippleMem(BagOfWordsEmbeddings(), persist_directory=sys.argv[1])
memory.add_conversation(make_conversation(), namespace=("p",))
print("open", flush=True)
sys.stdin.readline()
"""


@pytest.mark.slow
def test_second_process_cannot_open_an_embedded_store_in_use(tmp_path):
    proc = _spawn(OPENER, str(tmp_path))
    try:
        _expect(proc, "open")
        try:
            RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path)
        except StoreLockedError as err:
            assert str(tmp_path) in str(err)
        else:
            raise AssertionError("a second process opened an embedded store that is in use")
    finally:
        _finish(proc)
