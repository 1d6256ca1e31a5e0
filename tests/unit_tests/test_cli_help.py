"""`ripplemem --help` and every subcommand's help (issue 12, item 12), and the repository's ignores (item 16)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from langchain_ripplemem.cli.commands import SUBCOMMANDS, build_parser, main
from langchain_ripplemem.cli.support import DEFAULT_PERSIST

from .test_cli_store_commands import ROOT

COMMANDS = ["demo", "ingest", "recall", "list", "stats", "forget", "check", "mcp", "export", "import", "ui"]
STORE_COMMANDS = ["ingest", "recall", "list", "stats", "forget", "check", "mcp", "export", "import", "ui"]


def _help(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--help"])
    assert exit_info.value.code == 0
    return " ".join(capsys.readouterr().out.split())  # argparse wraps to the terminal width


def test_top_level_help_lists_every_command_without_markup():
    run = subprocess.run([sys.executable, "-m", "langchain_ripplemem.cli", "--help"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and run.stderr == ""
    assert "``" not in run.stdout and ":func:" not in run.stdout  # no reStructuredText
    for command in COMMANDS:
        assert f"\n    {command} " in run.stdout
    assert "bench" not in run.stdout  # the benchmark harness is the repository's (python -m benchmarks)
    assert 'users/maya is ("users", "maya")' in run.stdout and "exit status:" in run.stdout


@pytest.mark.parametrize("command", STORE_COMMANDS)
def test_store_options_have_help_and_show_their_defaults(capsys, command):
    text = _help(capsys, command)
    assert f"--persist DIR store directory (default: {DEFAULT_PERSIST})" in text
    if command not in ("check", "ui"):  # both look at every namespace
        assert "--namespace NS" in text and "users/maya" in text
        assert "(default: default)" in text or "(default: list the namespaces)" in text \
            or "(default: every namespace)" in text or "(required)" in text \
            or "(default: the one they were exported from)" in text


def test_every_option_of_every_command_has_help():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert list(sub.choices) == COMMANDS
    assert len(SUBCOMMANDS) == len(COMMANDS)
    for name in COMMANDS:
        for action in sub.choices[name]._actions:
            if action.dest != "help" and action.option_strings:
                assert action.help, f"{name} {action.option_strings[0]} has no help"


def test_recall_help_names_the_display_options(capsys):
    text = _help(capsys, "recall")
    assert "--full print long texts whole" in text and "--json print the whole RecallResult as JSON" in text
    assert "(default: recommended" in text


def test_langgraph_dev_state_is_ignored():
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    run = subprocess.run(["git", "check-ignore", "-q", ".langgraph_api/.langgraph_ops.pckl"], cwd=ROOT,
                         timeout=60)
    assert run.returncode == 0, ".langgraph_api/ (left by `langgraph dev`) must be in .gitignore"
