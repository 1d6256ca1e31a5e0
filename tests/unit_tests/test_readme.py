"""The README: every code block runs (here, offline, or where ``RUN_ELSEWHERE`` says), its length, its table.

Also what the README promises of the docs it sends a reader to: no page cites a method file the repository
does not hold, docs/cli.md covers every command, and docs/concepts.md's numbers are the configs' own.
"""

from __future__ import annotations

import importlib
import json
import re
import shlex
from pathlib import Path

import pytest

from benchmarks.measurements.demo_table import TABLE_END, TABLE_START, demo_table, replace_table
from langchain_ripplemem.cli import main
from langchain_ripplemem.cli.commands import build_parser
from langchain_ripplemem.cli.demo import load_sample
from langchain_ripplemem.config import RecallConfig, WriteConfig
from langchain_ripplemem.presets import PAPER, PAPER_WRITE

from .conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.DOTALL | re.MULTILINE)
BLOCKS = [(lang, code) for lang, code in FENCE.findall(README)]

#: README blocks that cannot run inside a test (they install into the interpreter or run the whole suite),
#: each with where it runs. Every other block runs in this file.
RUN_ELSEWHERE = {
    "pip install -e . && ripplemem demo":
        ".ci/run, verbatim, in a fresh virtual environment; its `ripplemem demo` also runs here "
        "(test_the_readmes_ripplemem_commands_run)",
    'pip install -e ".[test]" && python -m pytest':
        ".ci/run, verbatim "
        "(test_dependencies.py::test_ci_runs_the_readmes_test_command_and_the_unit_tests_at_the_floor)",
}

MAX_WORDS, MAX_SENTENCE_WORDS = 1000, 29  # the bounds: at most 1,000 words, sentences under 30


def prose(markdown: str) -> str:
    """``markdown`` as read: no code blocks, comments or link targets (a link counts as its text)."""
    text = FENCE.sub("", markdown)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL)
    return re.sub(r"\]\([^)]*\)", "]", text)


def words(text: str) -> list[str]:
    """The words of ``text``: runs of non-space holding a letter or digit (not ``|---|`` or ``-``)."""
    return [w for w in text.split() if re.search(r"\w", w)]


def sentences(markdown: str) -> list[str]:
    """The sentences of the README's prose: each heading, list item and table row ends one too."""
    found = []
    for block in re.split(r"\n\s*\n|\n(?=\s*(?:[-*] |\d+\. |\||#))", prose(markdown)):
        found += [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z\"`(*])", " ".join(block.split())) if words(s)]
    return found


def test_the_readme_reads_in_one_sitting():
    assert len(words(prose(README))) <= MAX_WORDS
    longest = max(sentences(README), key=lambda s: len(words(s)))
    assert len(words(longest)) <= MAX_SENTENCE_WORDS, longest


def test_the_counts_see_what_a_reader_reads():
    text = "Intro one. Two words!\n\n```python\nnot counted at all\n```\n- [a link](docs/x.md) here\n<!-- no -->"
    assert words(prose(text)) == ["Intro", "one.", "Two", "words!", "[a", "link]", "here"]
    assert sentences(text) == ["Intro one.", "Two words!", "- [a link] here"]


def test_every_readme_block_runs_here_or_is_mapped_to_where_it_runs():
    assert BLOCKS, "the README has code blocks"
    for lang, code in BLOCKS:
        assert lang in ("python", "bash"), f"a README block in {lang or 'no language'}: say what runs it"
        if lang == "bash" and code.strip() in RUN_ELSEWHERE:
            assert f"\n{code.strip()}\n" in CI, f"{code.strip()!r} is not run verbatim by .ci/run"
    assert set(RUN_ELSEWHERE) <= {code.strip() for _, code in BLOCKS}, "RUN_ELSEWHERE names a block gone"


@pytest.mark.parametrize("code", [code for lang, code in BLOCKS if lang == "python"])
def test_every_python_block_runs_offline(code, capsys):
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    out = capsys.readouterr().out
    # the agent example: what recall_memory answered holds the three memories the question needs
    for said in ("allergic to shellfish", "Harbor Grill for my birthday", "oysters and lobster"):
        assert said in out


def test_the_readmes_ripplemem_commands_run(capsys):
    commands = [part.strip() for lang, code in BLOCKS if lang == "bash"
                for line in code.splitlines() for part in line.split("&&") if part.strip().startswith("ripplemem ")]
    assert commands == ["ripplemem demo"]
    for command in commands:
        assert main(shlex.split(command)[1:]) == 0
    assert "Evidence turns found:" in capsys.readouterr().out


def test_the_demo_table_is_the_committed_results_file():
    results = json.loads((ROOT / "results" / "demo.json").read_text(encoding="utf-8"))
    assert f"{TABLE_START}\n{demo_table(results)}\n{TABLE_END}" in README
    conversation, questions = load_sample()
    assert [(q["question"], q["evidence"]) for q in results["questions"]] == [
        (q["question"], len(q["evidence"])) for q in questions]
    numbers = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}
    claim = f"{numbers[len(questions)]} questions about a sample conversation of {numbers[len(conversation.sessions)]}"
    assert claim in README


def test_replace_table_rewrites_only_between_the_markers():
    text = f"before\n{TABLE_START}\nold\n{TABLE_END}\nafter"
    assert replace_table(text, "new") == f"before\n{TABLE_START}\nnew\n{TABLE_END}\nafter"
    with pytest.raises(ValueError, match="text: no table"):
        replace_table("no markers here", "new")


def test_no_file_cites_a_method_file_the_repository_does_not_hold():
    cited = "METHOD" + ".md"
    # What the repository holds: not what installs generate in the checkout (an editable install's egg-info
    # copies the README it was installed from).
    skip = {".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache",
            "build", "dist", "langchain_ripplemem.egg-info"}
    offenders = [str(path.relative_to(ROOT)) for path in ROOT.rglob("*")
                 if path.is_file() and not skip & set(path.relative_to(ROOT).parts)
                 and path.suffix in {".py", ".md", ".toml", ".txt", ".json", ".cfg", ".yml", ".yaml", ""}
                 and path.stat().st_size < 2_000_000
                 and cited in path.read_text(encoding="utf-8", errors="replace")]
    assert offenders == []


def test_docs_cli_has_a_section_for_every_command():
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices  # argparse keeps them only here
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert [name for name in commands if f"\n## {name}\n" not in page] == []


def test_the_hyper_parameters_in_docs_concepts_are_the_configs():
    page = (ROOT / "docs" / "concepts.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| \w+ \| (`[^|]+) \| ([^|]+) \| ([^|]+) \|$", page, flags=re.MULTILINE)
    checked = 0
    for names_cell, paper_cell, recommended_cell in rows:
        names = re.findall(r"`([\w.]+)`", names_cell.split("(")[0])
        if (module_path := re.match(r"`([\w/]+)\.py`", names_cell)) is not None:
            # A named constant (docs/configuration.md): the recommended column is its value in its module.
            module = importlib.import_module("langchain_ripplemem." + module_path.group(1).replace("/", "."))
            for name, value in zip(names, (v.strip() for v in recommended_cell.split(",")), strict=True):
                assert getattr(module, name) == float(value), (name, value)
                checked += 1
            continue
        group = names[0].split(".")[0]
        paths = [names[0]] + [f"{group}.{name}" for name in names[1:]]
        write_side = group in WriteConfig.model_fields
        for configs, cell in (((PAPER_WRITE, PAPER), paper_cell), ((WriteConfig(), RecallConfig()), recommended_cell)):
            config = configs[0] if write_side else configs[1]
            values = [v.strip() for v in cell.split(",")]
            for path, value in zip(paths, values, strict=False):
                if re.fullmatch(r"-?\d+(\.\d+)?", value):
                    actual = config
                    for part in path.split("."):
                        actual = getattr(actual, part)
                    assert actual == float(value), (path, value, actual)
                    checked += 1
    assert checked >= 30


#: Pages other branches write at the same time; the README links them already (issue 51: the lead merges them).
PAGES_BEING_WRITTEN: set[str] = set()
PAGES = ["README.md", "docs/concepts.md", "docs/configuration.md", "docs/deployment.md", "docs/cli.md",
         "docs/lifecycle.md", "docs/development.md"]


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of ``page``'s headings: lower case, punctuation but ``-`` and ``_`` dropped, spaces ``-``."""
    headings = re.findall(r"^#+ (.+)$", FENCE.sub("", page.read_text(encoding="utf-8")), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


@pytest.mark.parametrize("name", PAGES)
def test_every_link_of_the_readme_and_the_user_pages_leads_somewhere(name):
    page = ROOT / name
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", FENCE.sub("", page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if str(linked.relative_to(ROOT)) in PAGES_BEING_WRITTEN:
            continue
        if not linked.exists() or (anchor and linked.suffix == ".md" and anchor not in anchors(linked)):
            broken.append(target)
    assert broken == []
