"""The shared deployment: a Chroma server for units, PostgreSQL for edges, the log and writer locks.

Writers run as separate processes in separate working directories, as on separate
hosts: they share nothing but the two servers.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from langchain_ripplemem.cli.integrity import check_store
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.schemas import Edge

from ..unit_tests.conftest import BagOfWordsEmbeddings, RecallPause, recall_trace
from ..unit_tests.test_concurrency import QUERY, SHARED, WAIT, assert_changed_by_the_writes
from ..unit_tests.test_crash_safety import many_turns

pytestmark = pytest.mark.integration
psycopg = pytest.importorskip("psycopg")
from langchain_ripplemem.storage.postgres import PostgresEdgeBackend  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def dsn(postgres_server) -> str:
    """A fresh database per test on the session's cluster."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return postgres_server.dsn.rsplit("/", 1)[0] + f"/{name}"


def test_edges_log_and_locks_keep_namespaces_apart(dsn):
    with PostgresEdgeBackend(dsn) as graph:
        a, b = ("users", "a"), ("users", "b")
        graph.add(a, [Edge(src="y", dst="x", type="semantic", weight=0.9),
                      Edge(src="x", dst="z", type="structural", weight=0.7)], linked=["x", "y"])
        graph.add(b, [Edge(src="x", dst="q", type="semantic", weight=0.5)], linked=["x"])
        assert sorted((e.src, e.dst, e.type) for e in graph.edges(a)) == [("x", "y", "semantic"),
                                                                          ("x", "z", "structural")]
        assert [(e.src, e.dst) for e in graph.edges(a, ["z"])] == [("x", "z")]
        assert graph.linked_ids(a) == {"x", "y"} and graph.namespaces() == [a, b]
        assert graph.with_edges(a, ["x", "y", "z", "q", "w"]) == {"x", "y", "z"}  # either end; not b's "q"
        assert graph.with_edges(b, ["q", "y", "q"]) == {"q"} and graph.with_edges(a, []) == set()
        assert graph.remove_units(a, ["x"]) == 2 and graph.edges(a) == [] and graph.linked_ids(a) == {"y"}
        assert len(graph.edges(b)) == 1  # the same id elsewhere is untouched
        graph.drop(b)
        assert graph.edges(b) == [] and graph.namespaces() == [a]
        # One batch naming an edge twice (either direction): the last weight wins, as with SQLite.
        graph.add(b, [Edge(src="p", dst="q", type="semantic", weight=0.5),
                      Edge(src="q", dst="p", type="semantic", weight=0.6)], linked=["p", "p"])
        assert [(e.src, e.dst, e.weight) for e in graph.edges(b)] == [("p", "q", 0.6)]
        assert graph.linked_ids(b) == {"p"}
        graph.drop(b)

        assert graph.version(a) == 0
        assert graph.record(a, ["u1"], edges=["u1"]) == 1 and graph.record(a, ["u2"], removed=["u0"]) == 2
        assert graph.changes(a, 0, 2) == ({"u1", "u2"}, {"u1"}, {"u0"})
        graph.record(a, None)  # a drop: caches reload
        assert graph.changes(a, 1, 3) is None and graph.version(a) == 3 and graph.version(b) == 0
        with graph.writer(a), graph.writer(a):  # re-entrant in one thread
            assert graph.version(a) == 3
    graph.close()  # a second close does nothing


def test_another_processs_write_reaches_a_cache_through_notify(dsn):
    with PostgresEdgeBackend(dsn) as reader, PostgresEdgeBackend(dsn) as writer:
        ns = ("users", "n")
        assert reader.version(ns) == 0  # known from now on: later reads wait for NOTIFY
        writer.record(ns, ["u1"])
        deadline = time.monotonic() + WAIT
        while reader.version(ns) == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert reader.version(ns) == 1


WRITER = """
import json, sys
sys.path.insert(0, {root!r})
import chromadb
from chromadb.config import Settings
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.storage.postgres import PostgresEdgeBackend
from tests.unit_tests.conftest import BagOfWordsEmbeddings
from tests.unit_tests.test_crash_safety import many_turns

graph = PostgresEdgeBackend({dsn!r})
client = chromadb.HttpClient(host={host!r}, port={port}, settings=Settings(anonymized_telemetry=False))
memory = RippleMem(BagOfWordsEmbeddings(), client=client, collection_name={collection!r},
                   edge_backend=graph)
for i in range({batches}):
    for ns in ({own!r}, ("shared",)):
        report = memory.add_conversation(many_turns({name!r} + f"-{{i}}", {turns}), namespace=ns)
        print(json.dumps([list(ns), report.unit_ids]), flush=True)
memory.close()
"""


def _writer(tmp_path, name, dsn, server, collection, batches, turns=6):
    cwd = tmp_path / name  # its own working directory, as on its own host
    cwd.mkdir()
    script = WRITER.format(root=str(ROOT), dsn=dsn, host=server.host, port=server.port, collection=collection,
                           batches=batches, own=("own", name), turns=turns, name=name)
    return subprocess.Popen([sys.executable, "-c", script], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _memory(dsn, server, collection):
    graph = PostgresEdgeBackend(dsn)
    return RippleMem(BagOfWordsEmbeddings(), client=server.client(), collection_name=collection,
                     edge_backend=graph)


def _committed(stdout: str) -> dict[tuple[str, ...], set[str]]:
    out: dict[tuple[str, ...], set[str]] = {}
    for line in stdout.splitlines():
        ns, ids = json.loads(line)
        out.setdefault(tuple(ns), set()).update(ids)
    return out


def test_writers_on_separate_hosts_lose_nothing_and_match_a_single_process_replay(
        tmp_path, dsn, chroma_server, collection_name):
    names = ["w1", "w2", "w3"]
    procs = [_writer(tmp_path, n, dsn, chroma_server, collection_name, batches=3) for n in names]
    outs = [p.communicate(timeout=WAIT * 3) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], [err[-2000:] for _, err in outs]
    expected: dict[tuple[str, ...], set[str]] = {}
    for out, _ in outs:
        for ns, ids in _committed(out).items():
            expected.setdefault(ns, set()).update(ids)

    memory = _memory(dsn, chroma_server, collection_name)
    for ns, ids in expected.items():
        assert {u.id for u in memory.list_units(ns, include_suppressed=True)} == ids  # no lost, no extra
    report = check_store(memory)
    assert report.ok, report.summary()  # no dangling or cross-namespace edges, nothing unlinked
    for name in names:
        got = memory.recall("What happened on turn 3?", namespace=("own", name), k=5)
        assert {m.unit.namespace for m in got.memories} == {("own", name)}

    # The same writes in one process, on an embedded store: the same edges per writer's namespace.
    replay = RippleMem(BagOfWordsEmbeddings())
    from ..unit_tests.test_crash_safety import many_turns

    for name in names:
        for i in range(3):
            replay.add_conversation(many_turns(f"{name}-{i}", 6), namespace=("own", name))
        assert memory.edges(("own", name)) == replay.edges(("own", name))
    memory.close()


def test_a_writer_killed_mid_batch_loses_nothing_committed_and_leaves_nothing_half_written(
        tmp_path, dsn, chroma_server, collection_name):
    proc = _writer(tmp_path, "doomed", dsn, chroma_server, collection_name, batches=200, turns=30)
    lines: list[str] = []
    assert proc.stdout is not None
    while len(lines) < 3:  # a few writes committed, the next one under way
        line = proc.stdout.readline()
        assert line, proc.stderr.read()[-2000:] if proc.stderr else "writer ended early"
        lines.append(line)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=WAIT)
    committed = _committed("".join(lines))

    memory = _memory(dsn, chroma_server, collection_name)
    for ns, ids in committed.items():
        assert ids <= {u.id for u in memory.list_units(ns, include_suppressed=True)}
    report = check_store(memory, relink=True)  # crash recovery links what the killed batch stored
    assert report.ok, report.summary()
    assert not any(item.dangling_edges or item.unlinked_units for item in report.namespaces)
    memory.close()


def test_more_writers_than_pooled_connections_take_turns(dsn):
    """Waiting writers once held every pooled connection, and the holder of the lock needed one to finish."""
    import threading

    done: list[int] = []
    with PostgresEdgeBackend(dsn, pool_size=2) as graph:
        def write(n: int) -> None:
            with graph.writer(("shared",)):
                graph.record(("shared",), None)  # a second connection while the lock's is held
                done.append(n)

        threads = [threading.Thread(target=write, args=(n,), daemon=True) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=WAIT)  # hang guard only
        assert sorted(done) == [0, 1, 2, 3]
        assert graph.version(("shared",)) == 4


OTHER_HOST = """
import json, sys
sys.path.insert(0, {root!r})
import chromadb
from chromadb.config import Settings
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.storage.postgres import PostgresEdgeBackend
from tests.unit_tests.conftest import BagOfWordsEmbeddings
from tests.unit_tests.test_concurrency import SHARED, matching

client = chromadb.HttpClient(host={host!r}, port={port}, settings=Settings(anonymized_telemetry=False))
memory = RippleMem(BagOfWordsEmbeddings(), client=client, collection_name={collection!r},
                      edge_backend=PostgresEdgeBackend({dsn!r}))
added = [uid for i in range(3) for uid in memory.add_messages(matching(f"host-{{i}}"), namespace=SHARED).unit_ids]
assert len(memory.delete({deleted!r}, namespace=SHARED).unit_ids) == {n_deleted}
assert memory.suppress({suppressed!r}, namespace=SHARED, reason="wrong") == 1
memory.close()
print(json.dumps(added), flush=True)
"""


def test_a_recall_reads_one_state_while_another_host_writes(tmp_path, dsn, chroma_server, collection_name):
    """Another host adds, deletes and suppresses while a recall runs; this host catches up meanwhile.

    The recall, held still once it took its state, returns what it returned alone; the
    next recall sees the other host's writes.
    """
    pause = RecallPause()
    memory = RippleMem(pause, client=chroma_server.client(), collection_name=collection_name,
                          edge_backend=PostgresEdgeBackend(dsn))
    memory.add_conversation(many_turns("base", 24), namespace=SHARED)
    quiet = memory.recall(QUERY, namespace=SHARED)
    shown = [m.unit.id for m in quiet.memories]
    script = OTHER_HOST.format(root=str(ROOT), host=chroma_server.host, port=chroma_server.port,
                               collection=collection_name, dsn=dsn, deleted=shown[:2], n_deleted=2,
                               suppressed=shown[2:3])

    def other_host_writes() -> None:  # inside the recall, once it has taken its state
        cwd = tmp_path / "other-host"  # its own working directory, as on its own host
        cwd.mkdir()
        done = subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True, text=True, timeout=WAIT)
        assert done.returncode == 0, done.stderr[-3000:]
        added = set(json.loads(done.stdout.splitlines()[-1]))
        # This host hears of the writes (LISTEN/NOTIFY) and its caches catch up while the recall is held.
        deadline = time.monotonic() + WAIT
        while not added <= {u.id for u in memory.list_units(SHARED)} and time.monotonic() < deadline:
            time.sleep(0.05)
        assert added <= {u.id for u in memory.list_units(SHARED)}
        assert not set(shown[:3]) & {u.id for u in memory.list_units(SHARED)}

    pause.arm(other_host_writes)
    during = memory.recall(QUERY, namespace=SHARED)
    assert recall_trace(during) == recall_trace(quiet)
    assert_changed_by_the_writes(memory, shown, shown[:3])
    memory.close()
