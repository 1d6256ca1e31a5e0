"""The built wheel: every file of the package, its type marker and its licences ship, and nothing else.

A user installs a wheel, not this checkout: a data file left out of
``package-data`` (the tokenizer, the picture's assets, the sample conversation)
works in every test here and fails only after ``pip install``. The benchmark
harness, its suites' data and the tests stay in the repository.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from .test_cli_store_commands import ROOT

PACKAGE = "langchain_ripplemem"


def _tracked_files(*paths: str) -> set[str]:
    """The checkout's files git tracks (under ``paths`` when given), as they are on disk."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("the file list comes from git, and this is not a git checkout")
    run = subprocess.run(["git", "ls-files", *paths], cwd=ROOT, capture_output=True, text=True, check=True)
    return {line for line in run.stdout.splitlines() if line and (ROOT / line).is_file()}


@pytest.fixture(scope="module")
def wheel_names(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """The file names inside a wheel built from a copy of the checkout's tracked files (the checkout gets no build/)."""
    source = tmp_path_factory.mktemp("source")
    for name in _tracked_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    out = tmp_path_factory.mktemp("wheel")
    # pip fetches the build backend pyproject.toml asks for, as `pip install` does.
    run = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                          "-w", str(out), str(source)], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    (wheel,) = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_every_tracked_package_file_is_in_the_wheel(wheel_names: set[str]) -> None:
    missing = sorted(_tracked_files(PACKAGE) - wheel_names)
    assert not missing, f"in git but not in the wheel (add them to package-data): {missing}"


def test_the_wheel_holds_the_library_only(wheel_names: set[str]) -> None:
    # The benchmark harness (benchmarks/: its code, its suites' data, the scale and soak
    # measurements, the LoCoMo and LongMemEval readers) and the tests stay in the repository.
    tops = {n: n.split("/")[0] for n in wheel_names}
    outside = sorted(n for n, top in tops.items() if top != PACKAGE and not top.endswith(".dist-info"))
    assert not outside, f"the wheel holds files outside the library: {outside}"
    inside = {n.split("/")[0] for n in _tracked_files("benchmarks", "tests")}
    assert inside == {"benchmarks", "tests"}  # the checkout has both: the check above had something to leave out
    harness = sorted(n for n in wheel_names if {"bench", "benchmarks", "tests"} & set(n.split("/")[:-1])
                     or n.endswith("_cases.json") or "record_formats" in n)
    assert not harness, f"benchmark or test files in the wheel: {harness}"


def test_the_wheel_is_marked_typed(wheel_names: set[str]) -> None:
    # PEP 561: without the marker, mypy ignores the package's annotations in a user's project.
    assert f"{PACKAGE}/py.typed" in wheel_names


def test_the_wheel_carries_the_licences(wheel_names: set[str]) -> None:
    licences = {Path(name).name for name in wheel_names if ".dist-info/" in name}
    assert "LICENSE" in licences, "the package's MIT licence text must ship in the wheel's metadata"
    # The tokenizer files are Apache-2.0: their notice travels with them.
    assert f"{PACKAGE}/assets/minilm/NOTICE" in wheel_names


def test_field_defaults_are_keywords_so_type_checkers_see_them() -> None:
    # Pydantic models are dataclass transforms (PEP 681) to mypy and pyright, which take a field's
    # default only from ``Field(default=...)``: with ``Field(40, ...)`` a typed user's
    # ``AssemblyConfig(top_k=5)`` is an error naming every other field as missing.
    positional = []
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Field" and node.args:
                positional.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not positional, f"Field() with a positional default (write default=...): {positional}"
