"""Forgotten means gone from every file (issue 52, defect 2).

A unique sentence (a random token inside a dog's name and a place) is written through each
surface that deletes (``RippleMem.delete`` / ``delete_conversation`` / ``delete_namespace``,
``RippleMemStore.delete``, ``adelete``, a batch ``PutOp(value=None)``, ``ripplemem forget`` by id,
``--conversation`` and ``--all``, an edited turn replaced at ingest), forgotten, and then every
byte of every file under the store directory is read, raw (Chroma's SQLite file and HNSW
directories, the edge file with its ``-wal`` and ``-shm``, the view snapshots), before and after
the memory closes. The token (in the text, the restatement and the cue words, all lower-cased
forms included) and the unit's vector (float32, at any byte offset, within float rounding so a
re-normalised copy counts) must appear nowhere. The positive control: before the forget both
are found, so the scan reads the files that held them.
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langgraph.store.base import PutOp

from langchain_ripplemem.cli import main
from langchain_ripplemem.errors import ErasureError
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.storage import chroma
from langchain_ripplemem.storage.chroma_client import HNSW_SYNC_THRESHOLD
from langchain_ripplemem.stores import RippleMemStore

from .conftest import Secret, filler, secret_conversation

MAYA, SAM = ("users", "maya"), ("users", "sam")
def dense_memory(persist: str | Path) -> RippleMem:
    """A store with dense pseudo-random vectors (a bag of words is mostly zeros: any 8 floats would match)."""
    return RippleMem(DeterministicFakeEmbedding(size=48), persist_directory=persist)


def assert_erased(secret: Secret, directory: Path, memory: RippleMem | None = None) -> None:
    """Nothing of the secret on disk with the memory open; then (given the memory) closed, and again."""
    assert secret.traces(directory) == []
    if memory is not None:
        memory.close()  # saves the views that changed: the forgotten units must not come back with them
        assert secret.traces(directory) == []


@pytest.fixture
def secret() -> Secret:
    return Secret()


# -- RippleMem ----------------------------------------------------------------------
def test_delete_erases_a_unit_whose_vector_chroma_had_persisted(tmp_path, secret):
    memory = dense_memory(tmp_path)
    memory.add_conversation(secret_conversation(secret), namespace=MAYA)
    memory.add_conversation(filler("garden", HNSW_SYNC_THRESHOLD + 20), namespace=MAYA)  # past a persist
    ids = secret.remember_vectors(memory, MAYA)
    control = secret.traces(tmp_path)
    assert ("chroma.sqlite3", "text") in control and ("chroma.sqlite3", "vector") in control
    assert any(name.endswith("data_level0.bin") and what == "vector" for name, what in control)

    touching = sum(1 for e in memory.edges(MAYA) if {e.src, e.dst} & set(ids))
    report = memory.delete(ids, namespace=MAYA)
    assert_erased(secret, tmp_path)
    assert all(secret.token not in u.restatement.lower() for u, _ in memory.search("lighthouse", namespace=MAYA))
    assert_erased(secret, tmp_path, memory)
    assert report.unit_ids == tuple(ids) and report.units == len(ids) and report.edges == touching
    assert str(tmp_path / "chroma.sqlite3") in report.files and report.kept == ()


def test_a_forget_after_a_reopen_removes_the_saved_view(tmp_path, secret):
    memory = dense_memory(tmp_path)
    memory.add_conversation(secret_conversation(secret), namespace=MAYA)
    memory.add_conversation(filler("garden", 5), namespace=MAYA)
    memory.close()  # saves the view snapshot, which holds the units, their vectors and cues
    memory = dense_memory(tmp_path)
    ids = secret.remember_vectors(memory, MAYA)
    assert {name.split("/")[0] for name, _ in secret.traces(tmp_path)} >= {"chroma.sqlite3", "ripplemem_index"}

    report = memory.delete_conversation("dog", namespace=MAYA)
    assert_erased(secret, tmp_path, memory)
    assert set(report.unit_ids) >= set(ids)
    assert any("ripplemem_index" in f for f in report.files)
    reopened = dense_memory(tmp_path)
    assert [u.source.conversation_id for u in reopened.list_units(MAYA)] == ["garden"] * 5
    reopened.close()


def test_delete_namespace_erases_what_the_store_put(tmp_path, secret):
    """The issue's case: three items put, a namespace deleted, thirty more writes, a close."""
    memory = dense_memory(tmp_path)
    store = RippleMemStore(memory)
    store.put(MAYA, "dog", {"text": secret.text})
    store.put(MAYA, "tea", {"text": "I like green tea."})
    store.put(MAYA, "work", {"text": "I work at a bakery."})
    secret.remember_vectors(memory, MAYA)
    assert secret.traces(tmp_path)
    report = memory.delete_namespace(MAYA)
    assert_erased(secret, tmp_path)
    for i in range(30):
        store.put(SAM, f"note{i}", {"text": f"Sam's note number {i} about gardening."})
    assert store.search(MAYA) == [] and memory.recall("border collie", namespace=MAYA).memories == []
    assert_erased(secret, tmp_path, memory)
    assert report.namespace_dropped and report.units == 3


# -- RippleMemStore ----------------------------------------------------------------------
@pytest.mark.parametrize("how", ["delete", "adelete", "put None", "put again", "forget"])
def test_store_deletes_erase_the_item(tmp_path, secret, how):
    memory = dense_memory(tmp_path)
    store = RippleMemStore(memory)
    store.put(MAYA, "dog", {"text": secret.text})
    store.put(MAYA, "tea", {"text": "I like green tea."})
    secret.remember_vectors(memory, MAYA)
    assert secret.traces(tmp_path)
    if how == "delete":
        assert store.delete(MAYA, "dog") is None
    elif how == "adelete":
        asyncio.run(store.adelete(MAYA, "dog"))
    elif how == "put None":
        store.batch([PutOp(MAYA, "dog", None)])
    elif how == "put again":  # a new value replaces the old one, whose text is forgotten
        store.put(MAYA, "dog", {"text": "I have a cat now."})
    else:
        report = store.forget(MAYA, "dog")
        assert report.units == 1 and report.files
    assert_erased(secret, tmp_path)
    assert [item.key for item in store.search(MAYA)] == (["tea", "dog"] if how == "put again" else ["tea"])
    assert_erased(secret, tmp_path, memory)


# -- an edited message -----------------------------------------------------------------------
@pytest.mark.parametrize("edited_in_place", [False, True])
def test_an_edited_turn_replaced_at_ingest_is_erased(tmp_path, secret, edited_in_place):
    """The new memory holds only the new text's words, whether the message was edited in place or not.

    The extractor once found a session's names by the session object's id: the same object edited
    in place, or (about every other run) a new one given the freed first one's id, got the old
    text's names as the new memory's cues, so the forgotten token stayed in a live record.
    """
    memory = dense_memory(tmp_path)
    edited = secret_conversation(secret)
    memory.add_conversation(edited, namespace=MAYA)
    secret.remember_vectors(memory, MAYA)
    assert secret.traces(tmp_path)
    if not edited_in_place:
        del edited  # freed: the new conversation may be given its id
        edited = secret_conversation(secret)
    edited.sessions[0].turns[0].text = "My dog sleeps by the window every night."
    report = memory.add_conversation(edited, namespace=MAYA)
    assert_erased(secret, tmp_path, memory)
    assert report.replaced and report.new_units == 1


def test_forgets_and_writes_on_several_threads_all_finish_and_erase(tmp_path):
    """A forget's purge waits for writes and other purges, and never the other way round (no deadlock)."""
    memory = dense_memory(tmp_path)
    secrets = {("users", f"u{i}"): Secret() for i in range(3)}
    for ns, secret in secrets.items():
        memory.add_conversation(secret_conversation(secret), namespace=ns)
        secret.remember_vectors(memory, ns)
    errors: list[BaseException] = []

    def run(work):
        try:
            work()
        except BaseException as err:  # noqa: BLE001 - reported by the assertion below
            errors.append(err)

    work = [lambda ns=ns: memory.delete_conversation("dog", namespace=ns) for ns in secrets]
    work += [lambda i=i: memory.add_conversation(filler(f"more{i}", 30), namespace=SAM) for i in range(2)]
    threads = [threading.Thread(target=run, args=(w,), daemon=True) for w in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)  # a hang guard, not a time limit
    assert not any(thread.is_alive() for thread in threads) and errors == []
    for secret in secrets.values():
        assert_erased(secret, tmp_path)
    memory.close()
    assert all(secret.traces(tmp_path) == [] for secret in secrets.values())
    with dense_memory(tmp_path) as reopened:
        assert len(reopened.list_units(SAM)) == 60


# -- when a file cannot be rewritten ------------------------------------------------------
def test_a_failed_rewrite_is_reported_and_the_next_forget_erases(tmp_path, secret, monkeypatch):
    memory = dense_memory(tmp_path)
    memory.add_conversation(secret_conversation(secret), namespace=MAYA)
    memory.add_conversation(filler("garden", 3), namespace=SAM)
    ids = secret.remember_vectors(memory, MAYA)

    def failing(database, *args):
        raise ErasureError(f"VACUUM of {database} failed (exit 1): disk I/O error")

    monkeypatch.setattr(chroma, "vacuum_store_file", failing)
    edited = secret_conversation(secret)
    edited.sessions[0].turns[0].text = "My dog sleeps by the window every night."
    report = memory.add_conversation(edited, namespace=MAYA)  # an ingest that replaces does not fail for it
    assert set(report.replaced) == set(ids) and any("not erased from every file" in w for w in report.warnings)
    other = [u.id for u in memory.list_units(MAYA)]
    with pytest.raises(ErasureError, match="disk I/O error"):
        memory.delete(other, namespace=MAYA)
    assert memory.list_units(MAYA) == []  # deleted all the same

    monkeypatch.undo()
    memory.delete([memory.list_units(SAM)[0].id], namespace=SAM)  # any later forget rewrites the files
    assert_erased(secret, tmp_path, memory)


# -- the MCP server ---------------------------------------------------------------------------
async def test_the_mcp_forget_tool_erases_and_returns_the_report(tmp_path, secret):
    pytest.importorskip("mcp", reason="the MCP server needs the [mcp] extra (part of [test])")
    from mcp.shared.memory import create_connected_server_and_client_session

    from langchain_ripplemem.server.mcp import create_mcp_server

    memory = dense_memory(tmp_path)
    memory.add_conversation(secret_conversation(secret), namespace=MAYA)
    ids = secret.remember_vectors(memory, MAYA)
    assert secret.traces(tmp_path)
    server = create_mcp_server(memory, namespace="users/maya")
    async with create_connected_server_and_client_session(server._mcp_server) as session:
        result = await session.call_tool("forget", {"memory_ids": ids})
    assert_erased(secret, tmp_path, memory)
    done = result.structuredContent
    assert done["memory_ids"] == ids and done["deleted"] == len(ids) and done["kept"] == []
    assert str(tmp_path / "chroma.sqlite3") in done["files"]
    assert result.content[0].text.startswith(f"Deleted {len(ids)} memor") and "Erased from" in result.content[0].text


# -- the CLI -----------------------------------------------------------------------------------
def cli(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv], memory_factory=dense_memory)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("how", ["ids", "conversation", "all"])
def test_cli_forget_erases(tmp_path, capsys, secret, how):
    store = tmp_path / "store"
    with dense_memory(store) as memory:
        memory.add_conversation(secret_conversation(secret), namespace=MAYA)
        memory.add_conversation(filler("garden", 3), namespace=SAM)
        ids = secret.remember_vectors(memory, MAYA)
        gone = set(ids) if how == "ids" else {u.id for u in memory.list_units(MAYA)}
        edges = sum(1 for e in memory.edges(MAYA) if {e.src, e.dst} & gone)
    assert secret.traces(store)
    which = {"ids": ids, "conversation": ["--conversation", "dog"], "all": ["--all", "--yes"]}[how]
    code, out, err = cli(capsys, "forget", *which, "--persist", store, "--namespace", "users/maya")
    assert code == 0, err
    assert_erased(secret, store)
    summary, erased = out.splitlines()
    assert summary == (f"forgot {len(gone)} unit{'s' * (len(gone) != 1)} and {edges} edge{'s' * (edges != 1)} "
                       f"from namespace 'users/maya' of {str(store)!r}")
    assert {"chroma.sqlite3", "ripplemem_edges.sqlite3"} <= set(erased.removeprefix("erased from: ").split(", "))
