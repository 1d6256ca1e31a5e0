"""Every pinned runtime dependency is imported by the package, and nothing a test alone uses is one.

A dependency the package never imports still costs every user its install (and its pins);
one the package imports but does not declare works here only by accident.
"""

from __future__ import annotations

import ast
import re
from importlib.metadata import packages_distributions

import pytest

from .test_cli_store_commands import ROOT

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")

PACKAGE = ROOT / "langchain_ripplemem"


def _name(requirement: str) -> str:
    """The normalised distribution name of a PEP 508 requirement."""
    return re.sub(r"[-_.]+", "-", re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0]).lower()


def _runtime_dependencies() -> set[str]:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return {_name(r) for r in tomllib.load(f)["project"]["dependencies"]}


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
