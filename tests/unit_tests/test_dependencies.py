"""The declared dependencies: ranges the package is tested at, imported by it, opt-in paths in extras.

A dependency the package never imports still costs every user its install; one the package
imports but does not declare works here only by accident; an exact pin makes the package
uninstallable beside any other version of it (the exact versions behind the committed results
live in constraints/bench.txt instead, which `make bench-env` installs).
"""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
import textwrap
from importlib.metadata import packages_distributions, version
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from .test_cli_store_commands import ROOT

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")

PACKAGE = ROOT / "langchain_ripplemem"
# Calendar versions: the first number is a year, not a promise about the API, so no major to stop below.
CALENDAR_VERSIONED = {"regex", "stop-words"}
# What only the extras install (init_chat_model's `langchain` is the user's own choice).
OPT_IN_MODULES = ("langchain", "langchain_openai", "mcp", "psycopg", "psycopg_pool", "matplotlib", "llama_cpp",
                  "starlette", "uvicorn")


def _name(requirement: str) -> str:
    """The normalised distribution name of a PEP 508 requirement."""
    return re.sub(r"[-_.]+", "-", re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]).lower()


def _project() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)["project"]


def _runtime_dependencies() -> set[str]:
    return {_name(r) for r in _project()["dependencies"]}


def _bounds(requirement: Requirement) -> tuple[Version | None, Version | None]:
    """The ``>=`` floor and the ``<`` ceiling of a requirement (None where it has none)."""
    floor = ceiling = None
    for spec in requirement.specifier:
        if spec.operator == ">=":
            floor = Version(spec.version)
        elif spec.operator == "<":
            ceiling = Version(spec.version)
    return floor, ceiling


def _imported_top_level_modules() -> set[str]:
    """Top-level modules the package imports anywhere: module level, inside functions or for type checking."""
    found: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found


def _distributions_by_imported_module() -> dict[str, set[str]]:
    """Each imported third-party module and the installed distributions that provide it.

    A namespace package has several (``langgraph`` comes from langgraph, langgraph-checkpoint, ...).
    """
    by_module = packages_distributions()
    return {m: {_name(d) for d in by_module[m]} for m in _imported_top_level_modules()
            if m in by_module and m != "langchain_ripplemem"}


def test_every_runtime_dependency_is_imported_by_the_package() -> None:
    imported = set().union(*_distributions_by_imported_module().values())
    unused = sorted(_runtime_dependencies() - imported)
    assert not unused, f"pinned in [project.dependencies] but never imported by the package: {unused}"


def test_every_third_party_import_of_the_package_is_a_declared_dependency() -> None:
    with (ROOT / "pyproject.toml").open("rb") as f:
        project = tomllib.load(f)["project"]
    declared = _runtime_dependencies() | {_name(r) for extra in project["optional-dependencies"].values()
                                          for r in extra}
    undeclared = sorted(m for m, dists in _distributions_by_imported_module().items() if not dists & declared)
    assert not undeclared, f"imported by the package but declared nowhere (runtime or an extra): {undeclared}"


def test_every_runtime_dependency_is_a_range_from_a_floor_to_below_the_next_major() -> None:
    # The floor is what CI's lowest-direct run tests; the ceiling no higher than the next major above the
    # version the committed results were made with (constraints/bench.txt), the newest one known to work.
    pins = _bench_runtime().pinned_versions()
    wrong = []
    for line in _project()["dependencies"]:
        requirement = Requirement(line)
        floor, ceiling = _bounds(requirement)
        others = sorted(s.operator for s in requirement.specifier if s.operator not in (">=", "<"))
        if floor is None or others:
            wrong.append(f"{line}: needs a >= floor and no {others or 'other operator'}")
        elif _name(line) in CALENDAR_VERSIONED:
            continue
        elif ceiling is None or not floor < ceiling <= Version(str(Version(pins[_name(line)]).major + 1)):
            wrong.append(f"{line}: needs a < ceiling above the floor, at most the major after {pins[_name(line)]}")
    assert not wrong, wrong


def test_no_extra_pins_an_exact_version() -> None:
    # an extra's exact pin conflicts like a runtime one: with any other version of it the user has
    pinned = [line for extra in _project()["optional-dependencies"].values() for line in extra
              if _name(line) != "langchain-ripplemem" and _bounds(Requirement(line))[0] is None]
    assert not pinned, f"extras without a >= floor (exact versions go to constraints/bench.txt): {pinned}"


def test_langchain_openai_is_an_extra_not_a_runtime_dependency() -> None:
    project = _project()
    assert "langchain-openai" not in _runtime_dependencies()
    assert {_name(r) for r in project["optional-dependencies"]["openai"]} == {"langchain-openai"}


def test_the_package_and_its_clis_import_without_the_opt_in_packages() -> None:
    # A plain `pip install langchain-ripplemem` has none of them: a module-level import would break every user,
    # and the one that names a chat model by string is told which extra to install.
    script = textwrap.dedent(f"""
        import sys
        for name in {OPT_IN_MODULES!r}:
            sys.modules[name] = None  # import fails as if not installed
        import langchain_ripplemem, langchain_ripplemem.memory, langchain_ripplemem.cli.commands
        import benchmarks.cli
        from langchain_ripplemem.llm.calls import resolve_chat_model
        try:
            resolve_chat_model("openai:gpt-4.1-mini")
        except ImportError as err:
            print(err)
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert 'pip install "langchain-ripplemem[openai]"' in run.stdout, run.stdout


def _bench_runtime() -> ModuleType:
    """scripts/bench_runtime.py, which reads the constraints for `make bench-runtime`."""
    spec = importlib.util.spec_from_file_location("bench_runtime", ROOT / "scripts" / "bench_runtime.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bench_constraints_pin_every_direct_dependency_inside_its_range() -> None:
    pins = _bench_runtime().pinned_versions()
    project = _project()
    wanted = [Requirement(line) for line in project["dependencies"] + [
        line for extra in ("openai", "bench", "local-llm") for line in project["optional-dependencies"][extra]]
        if _name(line) != "langchain-ripplemem"]
    missing = sorted(_name(str(r)) for r in wanted if _name(str(r)) not in pins)
    outside = sorted(f"{r} (pinned {pins[_name(str(r))]})" for r in wanted
                     if _name(str(r)) in pins and not r.specifier.contains(pins[_name(str(r))], prereleases=True))
    assert not missing and not outside, f"constraints/bench.txt: missing {missing}; outside the range {outside}"


def test_the_runtime_check_names_each_version_that_differs(tmp_path: Path) -> None:
    check = _bench_runtime()
    constraints = tmp_path / "bench.txt"
    constraints.write_text(f"# a comment\npytest=={pytest.__version__}\nPyStemmer==0.0.1  # never released\n"
                           "not-a-distribution-here==1.0\n", encoding="utf-8")
    assert check.differences(check.pinned_versions(constraints)) == [
        "not-a-distribution-here not installed (the committed results: 1.0)",
        f"pystemmer {version('PyStemmer')} (the committed results: 0.0.1)"]
    constraints.write_text("numpy>=1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not name==version"):
        check.pinned_versions(constraints)


def test_ci_runs_the_readmes_test_command_and_the_unit_tests_at_the_floor() -> None:
    readme, ci = (ROOT / "README.md").read_text(encoding="utf-8"), (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    command = 'pip install -e ".[test]" && python -m pytest'
    assert f"```bash\n{command}\n```" in readme
    assert f"\n{command}\n" in ci, "CI must run the README's test command verbatim"
    assert "--resolution lowest-direct" in ci and "-m pytest tests/unit_tests langchain_ripplemem" in ci
