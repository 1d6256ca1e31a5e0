"""Namespace writer locks: writers of one namespace that share an edge file never interleave.

Processes sharing a Chroma server and an edge file serialise their writes of a
namespace through ``locking.namespace_writer`` (the two-process ingest and
delete test against a real server is in tests/integration_tests). Here: the
lock itself, across threads and processes, and a memory's write waiting for it.
"""

from __future__ import annotations

import threading

import pytest

from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.schemas import namespace_key
from langchain_ripplemem.storage.locks import WRITERS_SUFFIX, WriterLockTimeoutError, namespace_writer, writer_lock_path
from langchain_ripplemem.write.extraction.rule_extractor import RuleBasedExtractor

from .conftest import BagOfWordsEmbeddings, WriteMeanwhile, make_conversation
from .test_concurrency import _expect, _finish, _spawn
from .test_crash_safety import many_turns

NS = ("users", "maya")
KEY = namespace_key(NS)
WRITER_HOLDER = r"""
import sys
from langchain_ripplemem.storage.locks import namespace_writer
with namespace_writer(sys.argv[1], sys.argv[2]):
    print("held", flush=True)
    sys.stdin.readline()
print("released", flush=True)
sys.stdin.readline()
"""


def test_lock_files_sit_beside_the_edge_file_one_per_namespace(tmp_path):
    edge = tmp_path / "edges.sqlite3"
    path = writer_lock_path(edge, KEY)
    assert path.parent == tmp_path / f"edges.sqlite3{WRITERS_SUFFIX}"
    assert writer_lock_path(edge, KEY) == path != writer_lock_path(edge, namespace_key(("users", "sam")))
    with namespace_writer(edge, KEY), namespace_writer(edge, KEY):  # re-entrant in a thread
        assert path.exists()


@pytest.mark.parametrize("ending", ["release", "kill -9"])
def test_another_process_waits_until_the_holder_lets_go_and_other_namespaces_do_not(tmp_path, ending):
    edge = tmp_path / "edges.sqlite3"
    proc = _spawn(WRITER_HOLDER, str(edge), KEY)
    try:
        _expect(proc, "held")
        with pytest.raises(WriterLockTimeoutError) as info:
            with namespace_writer(edge, KEY, timeout=0.2):
                pass
        assert f"held by process {proc.pid}" in str(info.value) and info.value.holder["pid"] == proc.pid
        assert str(writer_lock_path(edge, KEY)) in str(info.value)
        with namespace_writer(edge, namespace_key(("users", "sam")), timeout=0):
            pass  # another namespace's writers do not wait
        if ending == "release":
            assert proc.stdin is not None
            proc.stdin.write("\n")
            proc.stdin.flush()
            _expect(proc, "released")
        else:
            proc.kill()
            proc.wait(timeout=60)
        with namespace_writer(edge, KEY, timeout=0):
            pass
    finally:
        _finish(proc)


def test_threads_take_turns(tmp_path):
    edge = tmp_path / "edges.sqlite3"
    log: list[str] = []
    errors: list[BaseException] = []

    def attempt(timeout: float | None) -> None:
        try:
            with namespace_writer(edge, KEY, timeout=timeout):
                log.append("second")
        except WriterLockTimeoutError as err:
            errors.append(err)

    with namespace_writer(edge, KEY):
        impatient = threading.Thread(target=attempt, args=(0,))
        impatient.start()
        impatient.join()
        assert len(errors) == 1 and "held by another writer" in str(errors[0])
        waiter = threading.Thread(target=attempt, args=(None,))
        waiter.start()
        waiter.join(timeout=0.5)  # bounded wait: a broken lock would let it in here
        log.append("first")
    waiter.join()
    assert log == ["first", "second"]


class SignallingExtractor(RuleBasedExtractor):
    """Rule-based, and says when extraction ran (the write comes right after)."""

    def __init__(self) -> None:
        super().__init__()
        self.extracted = threading.Event()

    def extract(self, window, namespace):  # type: ignore[no-untyped-def]
        result = super().extract(window, namespace)
        self.extracted.set()
        return result


def test_a_memory_write_waits_for_another_process_writing_the_namespace(tmp_path):
    extractor = SignallingExtractor()
    memory = RippleMem(BagOfWordsEmbeddings(), persist_directory=tmp_path / "store", extractor=extractor)
    memory.add_conversation(many_turns("before", 4), namespace=NS)
    proc = _spawn(WRITER_HOLDER, memory.namespace_log.path, KEY)
    errors: list[BaseException] = []

    def ingest() -> None:
        try:
            memory.add_conversation(many_turns("during", 6), namespace=NS)
        except BaseException as err:  # noqa: BLE001 - asserted below
            errors.append(err)

    try:
        _expect(proc, "held")
        extractor.extracted.clear()
        writer = threading.Thread(target=ingest)
        writer.start()
        assert extractor.extracted.wait(timeout=60)
        writer.join(timeout=1.0)  # bounded wait: a broken lock would let it finish here
        assert writer.is_alive()
        assert len(memory.list_units(NS)) == 4  # reads do not wait, and see no half-written ingest
        memory.add_conversation(many_turns("other", 3), namespace=("users", "sam"))  # other namespaces write
        assert proc.stdin is not None
        proc.stdin.write("\n")
        proc.stdin.flush()
        writer.join(timeout=120)
        assert not writer.is_alive() and not errors, errors
        assert len(memory.list_units(NS)) == 10
    finally:
        _finish(proc)


def test_a_batch_stored_meanwhile_by_another_writer_is_not_written_twice(tmp_path):
    """The write path embeds before taking the lock; under it, ids stored meanwhile leave the batch."""
    bow = BagOfWordsEmbeddings()
    other = RippleMem(bow, extractor=RuleBasedExtractor(), persist_directory=tmp_path)
    conversation = make_conversation()
    memory = RippleMem(WriteMeanwhile(other, conversation, NS), extractor=RuleBasedExtractor(),
                       persist_directory=tmp_path)
    report = memory.add_conversation(conversation, namespace=NS)  # the same turns, stored while embedding
    assert report.units > 0 and report.new_units == 0
    units = memory.list_units(NS)
    assert len(units) == report.units == len({u.id for u in units})
    assert len({u.metadata["seq"] for u in units}) == len(units)
    assert memory.edges(NS) == other.edges(NS)
