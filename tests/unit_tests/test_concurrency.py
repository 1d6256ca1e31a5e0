"""Concurrency: threads sharing one memory; processes sharing one embedded store.

Supported: any number of threads on one ``RippleMem`` (writes are serialised
by the memory's lock, reads run alongside). Not supported: several processes on
one embedded ``persist_directory`` (Chroma's PersistentClient is not
process-safe and RippleMem's per-process views would go stale); that is
enforced by :mod:`langchain_ripplemem.storage.locks`, and several processes use a
Chroma server instead (tests/integration_tests/test_chroma_server.py).
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from langchain_ripplemem.cli.integrity import check_store
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.storage.locks import (
    LOCK_FILENAME,
    StoreLock,
    StoreLockedError,
    embedded_store_directory,
    lock_holder,
)

from .conftest import BagOfWordsEmbeddings
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


def _expect(proc: subprocess.Popen[str], line: str, timeout: float = 60.0) -> None:
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
