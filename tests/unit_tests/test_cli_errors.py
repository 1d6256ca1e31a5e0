"""Errors of the `ripplemem` command: one `error: ...` line and exit 2, no store created by a read,
a namespace error with its reason, a quiet end on a closed pipe (issue 12, items 10, 12 and 13)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from langchain_ripplemem.cli import main
from langchain_ripplemem.memory import RippleMemory

from .conftest import BagOfWordsEmbeddings, make_conversation
from .test_cli_store_commands import ROOT, cli, ingest

READ_COMMANDS = [["recall", "Where did Maya go hiking?"], ["check"], ["list"], ["stats"],
                 ["list", "--namespace", "users/maya"], ["forget", "--all", "--namespace", "users/maya", "--yes"]]


@pytest.mark.parametrize("command", READ_COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("exists", [False, True], ids=["missing", "empty-dir"])
def test_read_commands_say_there_is_no_store_and_create_nothing(tmp_path, capsys, command, exists):
    path = tmp_path / "mem"
    if exists:
        path.mkdir()
    code = main([*command, "--persist", str(path)])  # the default memory: a read must not open it at all
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith(f"error: no store at {str(path)!r}")
    assert f"ripplemem ingest FILE --persist {path}" in err
    assert path.exists() is exists and (not exists or list(path.iterdir()) == [])


HOLDER = r"""
import sys
from langchain_ripplemem.storage.locks import StoreLock
lock = StoreLock(sys.argv[1]).acquire()
print("locked", flush=True)
sys.stdin.readline()
"""


def test_a_store_in_use_is_an_error_line_not_a_traceback(tmp_path, capsys):
    store = tmp_path / "store"
    ingest(capsys, store, "users/maya", make_conversation())
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(store)], cwd=ROOT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        file = tmp_path / "users-maya.json"
        for argv in (["recall", "Where did Maya go hiking?", "--namespace", "users/maya"], ["ingest", file, "--quiet"],
                     ["stats"], ["check"]):
            code, out, err = cli(capsys, *argv, "--persist", store)
            assert code == 2 and out == ""
            assert err.startswith(f"error: the RippleMem store at {str(store)!r} is in use by process {holder.pid}")
            assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    finally:
        holder.communicate(input="\n", timeout=60)


def test_every_expected_error_is_one_line_with_exit_2(tmp_path, capsys):
    store = tmp_path / "store"
    ingest(capsys, store, "users/maya", make_conversation())
    bad = tmp_path / "bad.json"
    bad.write_text('{"id": "c1", "sessions": [{"id": "S1", "turns": [{"id": "t1", "text": "hi"}]}]}')
    cases: list[tuple[list[Any], str]] = [
        (["ingest", tmp_path / "missing.json"], "missing.json"),
        (["ingest", bad], "speaker"),
        (["recall", "   ", "--namespace", "users/maya"], "query must be a non-empty string"),
        (["recall", "hiking", "--namespace", "users/maya", "--k", "0"], "k must be"),
        (["list", "--namespace", "users/maya", "--limit", "0"], "--limit must be at least 1"),
    ]
    for argv, reason in cases:
        code, out, err = cli(capsys, *argv, "--persist", store)
        assert code == 2, (argv, err)
        assert err.startswith("error: ") and reason in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(("name", "content", "size"), [("empty.json", "", "0 bytes"), ("empty.jsonl", "", "0 bytes"),
                                                  ("blank.json", " \n\n", "only whitespace")])
def test_an_empty_file_is_named_empty_not_malformed(tmp_path, capsys, name, content, size):
    file = tmp_path / name
    file.write_text(content, encoding="utf-8")
    code, out, err = cli(capsys, "ingest", file, "--persist", tmp_path / "store")
    assert code == 2 and out == ""
    assert err.startswith(f"error: {file} is empty ({size}): a .json file holds one conversation object") and \
        "Expecting value" not in err
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("command", [["ingest", "chat.json"], ["mcp"], *READ_COMMANDS], ids=lambda c: " ".join(c[:2]))
def test_persist_naming_a_file_says_so(tmp_path, capsys, command):
    chat = tmp_path / "chat.json"
    chat.write_text(make_conversation().model_dump_json(), encoding="utf-8")
    file = tmp_path / "notes.txt"
    file.write_text("mine", encoding="utf-8")
    argv = [str(chat) if arg == "chat.json" else arg for arg in command]
    code, out, err = cli(capsys, *argv, "--persist", file)
    assert code == 2 and out == ""
    assert err == f"error: --persist {file}: it is a file, not a directory (a store is a directory; " \
        f"`ripplemem ingest FILE --persist DIR` creates one)\n"
    assert file.read_text(encoding="utf-8") == "mine"


def test_a_memory_whose_persist_directory_is_a_file_says_so(tmp_path):
    file = tmp_path / "notes.txt"
    file.write_text("mine", encoding="utf-8")
    with pytest.raises(ValueError, match=f"persist_directory {str(file)!r} is a file, not a directory"):
        RippleMemory(BagOfWordsEmbeddings(), persist_directory=file)
    assert file.read_text(encoding="utf-8") == "mine"


def test_namespace_errors_give_the_library_reason(tmp_path, capsys):
    for namespace, reason in (("bad.label", "labels cannot contain '.'"), ("users//maya", "has an empty label"),
                              ("langgraph/x", "langgraph")):
        with pytest.raises(SystemExit) as exit_info:
            main(["recall", "x", "--persist", str(tmp_path), "--namespace", namespace])
        err = capsys.readouterr().err
        assert exit_info.value.code == 2
        assert err.splitlines()[-1].startswith("ripplemem recall: error: argument --namespace: namespace ")
        assert reason in err and "_namespace" not in err and "invalid" not in err


def test_an_interrupt_ends_with_130_and_no_traceback(tmp_path, capsys):
    def interrupted(persist: str) -> Any:
        raise KeyboardInterrupt

    store = tmp_path / "store"
    ingest(capsys, store, "users/maya", make_conversation())
    assert main(["stats", "--persist", str(store)], memory_factory=interrupted) == 130
    assert capsys.readouterr().err == "interrupted\n"


# -- a closed output pipe (`ripplemem ... | head`) -----------------------------------------
RUN_WITH_BOW = """
import sys
from langchain_ripplemem.cli import main
from langchain_ripplemem.memory import RippleMemory
from langchain_ripplemem.memory import RippleMemory
from tests.unit_tests.conftest import BagOfWordsEmbeddings
sys.exit(main(memory_factory=lambda persist: RippleMemory(BagOfWordsEmbeddings(), persist_directory=persist)))
"""


def _into_closed_pipe(command: list[str], *argv: Any) -> subprocess.CompletedProcess[str]:
    """Run with stdout a pipe whose reader has gone (as when `head` has exited): every write fails."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        return subprocess.run([*command, *map(str, argv)], cwd=ROOT, stdout=writer, stderr=subprocess.PIPE,
                              text=True, timeout=300)
    finally:
        os.close(writer)


@pytest.mark.skipif(os.name != "posix", reason="SIGPIPE/EPIPE semantics are POSIX")
def test_a_closed_output_pipe_ends_quietly(tmp_path, capsys):
    store = tmp_path / "store"
    ingest(capsys, store, "users/maya", make_conversation())
    module = [sys.executable, "-m", "langchain_ripplemem.cli"]
    runs = {
        "recall": _into_closed_pipe([sys.executable, "-c", RUN_WITH_BOW], "recall", "Where did Maya go hiking?",
                                    "--persist", store, "--namespace", "users/maya"),
        "list": _into_closed_pipe(module, "list", "--persist", store, "--namespace", "users/maya"),
        "--help": _into_closed_pipe(module, "--help"),
    }
    for name, run in runs.items():
        assert run.stderr == "", (name, run.stderr)
        assert run.returncode == (0 if name == "--help" else 141), name  # 141: what a shell shows for SIGPIPE


def test_entry_point_runs_main():
    scripts = Path(sys.executable).parent
    entry = next((p for p in (scripts / "ripplemem", scripts / "ripplemem.exe") if p.exists()), None)
    if entry is None:
        pytest.skip("the ripplemem entry point is not installed in this environment")
    run = subprocess.run([str(entry), "recall", "x", "--namespace", "a.b"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 2 and "labels cannot contain '.'" in run.stderr
