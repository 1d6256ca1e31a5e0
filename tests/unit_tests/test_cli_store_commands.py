"""`ripplemem list`, `stats` and `forget` on a small store (issue 12, item 11).

The helpers at the top (fast bag-of-words memory factory, in-process ``cli``) serve the other
``test_cli_*`` modules too.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from langchain_ripplemem.cli import main
from langchain_ripplemem.memory import RippleMemory
from langchain_ripplemem.schemas import Conversation

from .conftest import BagOfWordsEmbeddings, make_conversation

ROOT = Path(__file__).resolve().parents[2]
MAYA, SAM = ("users", "maya"), ("users", "sam")


def bow_memory(persist: str) -> RippleMemory:
    """The CLI's memory factory for tests: the store at ``persist`` with fast bag-of-words embeddings."""
    return RippleMemory(BagOfWordsEmbeddings(), persist_directory=persist)


def cli(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    """Run ``ripplemem *argv`` in-process; returns exit status, stdout and stderr."""
    code = main([str(a) for a in argv], memory_factory=bow_memory)
    out, err = capsys.readouterr()
    return code, out, err


def write_conversations(path: Path, *conversations: Conversation) -> Path:
    path.write_text(json.dumps([c.model_dump(mode="json") for c in conversations]), encoding="utf-8")
    return path


def ingest(capsys: pytest.CaptureFixture[str], store: Path, namespace: str, *conversations: Conversation) -> None:
    file = write_conversations(store.parent / f"{namespace.replace('/', '-')}.json", *conversations)
    code, out, err = cli(capsys, "ingest", file, "--persist", store, "--namespace", namespace, "--quiet")
    assert code == 0, err
    assert f"namespace {namespace}" in out


@pytest.fixture
def store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """users/maya holds conversations c1 and c2 (same turn ids), users/sam holds c3."""
    directory = tmp_path / "store"
    ingest(capsys, directory, "users/maya", make_conversation("c1"), make_conversation("c2"))
    ingest(capsys, directory, "users/sam", make_conversation("c3"))
    return directory


def units_of(store: Path, namespace: tuple[str, ...]) -> list[Any]:
    with bow_memory(str(store)) as memory:
        return memory.list_units(namespace, include_suppressed=True)


# -- list ----------------------------------------------------------------------------
def test_list_shows_namespaces_with_unit_counts(store, capsys):
    maya, sam = len(units_of(store, MAYA)), len(units_of(store, SAM))
    code, out, _ = cli(capsys, "list", "--persist", store)
    assert code == 0
    assert out.splitlines()[0] == f"2 namespaces in {store} (units  namespace):"
    assert out.splitlines()[1:] == [f"  {maya:>6}  users/maya", f"  {sam:>6}  users/sam"]
    code, out, _ = cli(capsys, "list", "--persist", store, "--json")
    assert json.loads(out) == [{"namespace": list(MAYA), "units": maya, "suppressed": 0},
                               {"namespace": list(SAM), "units": sam, "suppressed": 0}]


def test_list_pages_through_the_units_of_a_namespace(store, capsys):
    expected = [u.id for u in units_of(store, MAYA)]
    seen: list[str] = []
    offset = 0
    while True:
        code, out, _ = cli(capsys, "list", "--persist", store, "--namespace", "users/maya",
                           "--limit", 4, "--offset", offset)
        assert code == 0
        header, *rows = out.splitlines()
        assert header.startswith(f"units {offset + 1}-{offset + len(rows)} of {len(expected)}")
        seen += [row.split()[0] for row in rows]
        if "for more" not in header:
            break
        offset += 4
        assert f"--offset {offset} for more" in header
    assert seen == expected  # every unit once, in insertion order
    code, out, _ = cli(capsys, "list", "--persist", store, "--namespace", "users/maya", "--limit", 2, "--json")
    data = json.loads(out)
    assert data["total"] == len(expected) and [u["id"] for u in data["units"]] == expected[:2]
    assert data["units"][0]["source"]["conversation_id"] == "c1"


def test_list_and_stats_of_an_unknown_namespace_name_the_existing_ones(store, capsys):
    for command in ("list", "stats"):  # an empty namespace is no error, as in recall: a note, then nothing in it
        code, out, err = cli(capsys, command, "--persist", store, "--namespace", "users/bob")
        assert code == 0 and out
        assert err.startswith("note: namespace 'users/bob' holds no memories")
        assert "users/maya, users/sam" in err


# -- stats ---------------------------------------------------------------------------
def test_stats_of_a_namespace_and_of_the_store(store, capsys):
    with bow_memory(str(store)) as memory:
        maya, sam = memory.stats(MAYA), memory.stats(SAM)
    code, out, _ = cli(capsys, "stats", "--persist", store, "--namespace", "users/maya", "--json")
    assert code == 0 and json.loads(out) == maya.model_dump(mode="json")
    code, out, _ = cli(capsys, "stats", "--persist", store, "--namespace", "users/maya")
    assert out.splitlines()[:4] == [
        "namespace users/maya",
        f"  units:         {maya.units} (0 suppressed, 0 superseded)",
        "  conversations: 2 (c1, c2)",
        "  sessions:      6",
    ]
    assert f"{maya.edges['semantic']} semantic, {maya.edges['structural']} structural" in out
    assert "time span:     2026-03-02 .." in out
    code, out, _ = cli(capsys, "stats", "--persist", store, "--json")
    assert json.loads(out) == {"store": str(store),
                               "namespaces": [maya.model_dump(mode="json"), sam.model_dump(mode="json")]}
    code, out, _ = cli(capsys, "stats", "--persist", store)
    assert out.startswith(f"store {store}: 2 namespaces, {maya.units + sam.units} units")
    assert "namespace users/maya" in out and "namespace users/sam" in out


# -- forget --------------------------------------------------------------------------
def test_forget_units_by_id_all_or_nothing(store, capsys):
    before, sam = units_of(store, MAYA), units_of(store, SAM)
    code, _, err = cli(capsys, "forget", before[0].id, "not-a-unit", "--persist", store, "--namespace", "users/maya")
    assert code == 2 and "holds no unit not-a-unit; nothing forgotten" in err
    code, _, err = cli(capsys, "forget", sam[0].id, "--persist", store, "--namespace", "users/maya")
    assert code == 2 and sam[0].id in err  # an id of another namespace is not one of this namespace
    assert [u.id for u in units_of(store, MAYA)] == [u.id for u in before]
    assert len(units_of(store, SAM)) == len(sam)
    with bow_memory(str(store)) as memory:
        edges = sum(1 for e in memory.edges(MAYA) if {e.src, e.dst} & {before[0].id, before[1].id})

    code, out, _ = cli(capsys, "forget", before[0].id, before[1].id, "--persist", store, "--namespace", "users/maya")
    assert code == 0 and out.startswith(f"forgot 2 units and {edges} edges from namespace 'users/maya' of '{store}'")
    assert [u.id for u in units_of(store, MAYA)] == [u.id for u in before[2:]]
    with bow_memory(str(store)) as memory:
        assert not {before[0].id, before[1].id} & {x for e in memory.edges(MAYA) for x in (e.src, e.dst)}


def test_forget_a_conversation(store, capsys):
    code, _, err = cli(capsys, "forget", "--conversation", "c9", "--persist", store, "--namespace", "users/maya")
    assert code == 2 and "no units of conversation 'c9' (its conversations: c1, c2)" in err
    c2 = [u.id for u in units_of(store, MAYA) if u.source.conversation_id == "c2"]
    code, out, _ = cli(capsys, "forget", "--conversation", "c1", "--persist", store, "--namespace", "users/maya")
    assert code == 0 and out.startswith(f"forgot {len(c2)} units")  # c1 and c2 hold the same turns
    assert [u.id for u in units_of(store, MAYA)] == c2
    assert units_of(store, SAM)


def test_forget_says_what_to_forget(store, capsys):
    before = units_of(store, MAYA)
    unit = before[0].id
    for argv in ([], [unit, "--all"], ["--conversation", "c1", "--all"]):
        code, _, err = cli(capsys, "forget", *argv, "--persist", store, "--namespace", "users/maya", "--yes")
        assert code == 2 and "exactly one of them" in err
    code, _, err = cli(capsys, "forget", "--all", "--yes", "--persist", store)  # the default namespace is not implied
    assert code == 2 and "name it with --namespace" in err
    assert len(units_of(store, MAYA)) == len(before)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_forget_a_namespace_needs_a_confirmation(store, capsys, monkeypatch):
    maya = len(units_of(store, MAYA))
    argv = ("forget", "--all", "--persist", store, "--namespace", "users/maya")
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))  # not a terminal: no prompt, no silent yes
    code, out, err = cli(capsys, *argv)
    assert code == 2 and out == ""
    assert err.strip() == (f"error: refusing to forget all {maya} units of namespace 'users/maya' of '{store}' "
                           "without confirmation: stdin is not a terminal, pass --yes")
    for answer in ("n\n", "\n", ""):  # no, Enter, end of input
        monkeypatch.setattr(sys, "stdin", _Terminal(answer))
        code, out, err = cli(capsys, *argv)
        assert code == 1 and "Continue? [y/N]" in err and "nothing forgotten" in err
    assert len(units_of(store, MAYA)) == maya

    monkeypatch.setattr(sys, "stdin", _Terminal("y\n"))
    code, out, err = cli(capsys, *argv)
    assert code == 0 and out.startswith(f"forgot {maya} units")
    assert f"About to forget all {maya} units of namespace 'users/maya'" in err
    assert units_of(store, MAYA) == [] and units_of(store, SAM)

    sam = len(units_of(store, SAM))
    code, out, _ = cli(capsys, "forget", "--all", "--yes", "--persist", store, "--namespace", "users/sam")
    assert code == 0 and out.startswith(f"forgot {sam} units")
    code, out, _ = cli(capsys, "list", "--persist", store)
    assert out.strip() == f"store {store} holds no memories"


def _run(*argv: Any, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "langchain_ripplemem.cli", *map(str, argv)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, **kwargs)


def test_forget_a_namespace_in_a_real_process(store):
    maya = len(units_of(store, MAYA))
    argv = ("forget", "--all", "--persist", store, "--namespace", "users/maya")
    refused = _run(*argv, stdin=subprocess.DEVNULL)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith("error: refusing to forget all") and "Traceback" not in refused.stderr
    assert len(units_of(store, MAYA)) == maya
    if os.name == "posix":  # a real terminal on stdin: the prompt is asked and answered
        import pty

        leader, follower = pty.openpty()
        try:
            os.write(leader, b"yes\n")
            answered = _run(*argv, stdin=follower)
        finally:
            os.close(leader)
            os.close(follower)
        assert answered.returncode == 0, answered.stderr
        assert "Continue? [y/N]" in answered.stderr and answered.stdout.startswith(f"forgot {maya} units")
        assert units_of(store, MAYA) == []


def test_recall_takes_k_as_dash_k_too(store, capsys):
    # `-k 3` is what people type (pytest, grep); it was "unrecognized arguments".
    code, short, err = cli(capsys, "recall", "Where did Maya go?", "--persist", store, "--namespace", "users/maya",
                           "-k", "1", "--json")
    assert code == 0, err
    code, long, err = cli(capsys, "recall", "Where did Maya go?", "--persist", store, "--namespace", "users/maya",
                          "--k", "1", "--json")
    assert code == 0, err
    assert len(json.loads(short)["memories"]) == 1 and json.loads(short)["memories"] == json.loads(long)["memories"]


def test_recall_as_of_hides_later_memories_and_names_a_bad_time(store, capsys):
    # make_conversation's sessions are on 2 March, 20 March and 20 April 2026.
    code, out, err = cli(capsys, "recall", "Harbor Grill dinner", "--persist", store, "--namespace", "users/maya",
                         "--as-of", "2026-03-10", "--json")
    assert code == 0, err
    times = [m["unit"]["time"]["start"] for m in json.loads(out)["memories"]]
    assert times and all(t < "2026-03-11" for t in times)
    code, _, err = cli(capsys, "recall", "dinner", "--persist", store, "--namespace", "users/maya", "--as-of", "soon")
    assert code != 0 and "as_of" in err and "'soon'" in err


def test_ingesting_a_corrected_file_replaces_the_edited_turns(store, capsys):
    corrected = make_conversation("c3")
    corrected.sessions[0].turns[0].text = "I found out I am allergic to peanuts, not shellfish."
    file = write_conversations(store.parent / "corrected.json", corrected)
    code, out, err = cli(capsys, "ingest", file, "--persist", store, "--namespace", "users/sam", "--quiet")
    assert code == 0, err
    assert "(1 new, 1 replaced (edited turns))" in out
    texts = [u.restatement for u in units_of(store, ("users", "sam"))]
    assert any("peanuts" in t for t in texts) and not any("shellfish, no shrimp" in t for t in texts)


def test_read_commands_link_nothing_an_interrupted_ingest_left_unlinked(tmp_path, capsys, monkeypatch):
    """`stats`, `list` and `check` only read: units a crash left unlinked stay so, and the edge file is unchanged.

    (`stats` used to link them: 2,000 units of a crashed ingest, written by a command that reads.)
    The next write links them, as the crash-safety promise says.
    """
    from langchain_ripplemem.storage.sqlite import GRAPH_FILENAME

    store = tmp_path / "store"
    crashing = bow_memory(str(store))
    monkeypatch.setattr(crashing._write, "link", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        crashing.add_conversation(make_conversation("c1"), namespace=MAYA)
    crashing.close()
    monkeypatch.undo()
    edge_file = (store / GRAPH_FILENAME).read_bytes()
    for argv in (["stats"], ["stats", "--namespace", "users/maya", "--json"], ["list"],
                 ["list", "--namespace", "users/maya"], ["check"]):
        code, _, err = cli(capsys, *argv, "--persist", store)
        assert code in (0, 1), (argv, err)  # check reports the unlinked units: status 1
        assert (store / GRAPH_FILENAME).read_bytes() == edge_file, argv
    code, out, _ = cli(capsys, "stats", "--persist", store, "--namespace", "users/maya", "--json")
    assert sum(json.loads(out)["edges"].values()) == 0
    with bow_memory(str(store)) as memory:
        assert memory.edge_backend.linked_ids(MAYA) == set()
        memory.add_conversation(make_conversation("c2"), namespace=MAYA)  # the next write links them
        assert memory.edge_backend.linked_ids(MAYA) == {u.id for u in memory.list_units(MAYA)}
