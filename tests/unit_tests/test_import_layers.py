"""The package's imports run one way, inside functions and under TYPE_CHECKING too (scripts/import_layers.py)."""

import importlib.util
import sys
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def layers():
    spec = importlib.util.spec_from_file_location("import_layers", ROOT / "scripts" / "import_layers.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["import_layers"] = module
    spec.loader.exec_module(module)
    return module


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in {"__init__.py": "", **files}.items():
        path = root / "langchain_ripplemem" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_package_has_no_circle_and_breaks_no_rule(layers):
    graph = layers.import_graph(ROOT)
    assert [c for c in nx.strongly_connected_components(graph) if len(c) > 1] == []
    assert layers.rule_breaks(ROOT) == []
    assert layers.folder_breaks(graph) == []
    assert layers.reused_names(ROOT) == []


def test_an_import_inside_a_function_closes_a_circle(layers, tmp_path):
    root = _package(tmp_path, {"low.py": "def f():\n    from langchain_ripplemem import high\n",
                               "high.py": "from langchain_ripplemem import low\n"})
    circles = [c for c in nx.strongly_connected_components(layers.import_graph(root)) if len(c) > 1]
    assert circles == [{"langchain_ripplemem.low", "langchain_ripplemem.high"}]
    assert layers.rule_breaks(root) == [
        "import inside a function: langchain_ripplemem.low -> langchain_ripplemem.high (not in LAZY)"]


def test_a_type_checking_import_counts(layers, tmp_path):
    root = _package(tmp_path, {"low.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                         "    from langchain_ripplemem.high import H\n",
                               "high.py": "from langchain_ripplemem.low import f\n"})
    assert nx.has_path(layers.import_graph(root), "langchain_ripplemem.low", "langchain_ripplemem.high")
    assert not nx.is_directed_acyclic_graph(layers.import_graph(root))


def test_private_names_of_another_module_are_refused(layers, tmp_path):
    root = _package(tmp_path, {"a.py": "_cache = {}\n",
                               "b.py": "from langchain_ripplemem.a import _cache\n",
                               "c.py": "from langchain_ripplemem import a\n\ndef f():\n    return a._cache\n"})
    assert layers.rule_breaks(root) == [
        "private import: langchain_ripplemem.b imports _cache from langchain_ripplemem.a",
        "private import: langchain_ripplemem.c reads a._cache"]


def test_a_lazy_import_of_a_heavy_module_is_allowed(layers, tmp_path):
    root = _package(tmp_path, {"memory.py": "", "cli.py": "def f():\n    from langchain_ripplemem import memory\n"})
    assert "langchain_ripplemem.memory" in layers.LAZY
    assert layers.rule_breaks(root) == []


def test_the_package_never_imports_the_harness(layers, tmp_path):
    root = _package(tmp_path, {"low.py": "", "core.py": "from benchmarks.loaders import LOADERS\n",
                               "entry.py": "def f():\n    from benchmarks import cli\n"})
    assert layers.rule_breaks(root) == [
        "import of the harness: langchain_ripplemem.core -> benchmarks.loaders",
        "import of the harness: langchain_ripplemem.entry -> benchmarks"]


def test_an_import_up_or_sideways_between_folders_is_refused(layers, tmp_path):
    up, side = "from langchain_ripplemem.recall.nodes import f\n", "from langchain_ripplemem.recall.nodes import f\n"
    root = _package(tmp_path, {"index/__init__.py": "", "index/rows.py": up, "recall/__init__.py": "",
                               "recall/nodes.py": "def f(): pass\n", "write/__init__.py": "", "write/path.py": side,
                               "text/__init__.py": "", "text/lexical.py": "from langchain_ripplemem import schemas\n",
                               "schemas.py": ""})
    assert layers.folder_breaks(layers.import_graph(root)) == [
        "sideways import: langchain_ripplemem.write.path -> langchain_ripplemem.recall.nodes "
        "(recall sits side by side with write)",
        "upward import: langchain_ripplemem.index.rows -> langchain_ripplemem.recall.nodes (recall sits above index)"]


def test_a_folder_not_in_the_order_and_a_circle_of_sub_folders_are_refused(layers, tmp_path):
    root = _package(tmp_path, {"extras/__init__.py": "", "extras/a.py": "", "write/__init__.py": "",
                               "write/one/__init__.py": "",
                               "write/one/x.py": "from langchain_ripplemem.write.two.y import g\n",
                               "write/two/__init__.py": "", "write/two/y.py": "def g(): pass\n",
                               "write/two/z.py": "from langchain_ripplemem.write.one.x import g\n"})
    assert layers.folder_breaks(layers.import_graph(root)) == [
        "circle of folders in write: write.one <-> write.two", "not in FOLDER_ORDER: extras"]


def test_a_module_name_used_twice_is_refused(layers, tmp_path):
    root = _package(tmp_path, {"recall/__init__.py": "", "recall/cues.py": "", "text/__init__.py": "",
                               "text/cues.py": "", "write/__init__.py": "", "write/linking/__init__.py": "",
                               "write/linking/linking.py": "", "cli/__init__.py": "", "cli/__main__.py": ""})
    assert layers.reused_names(root) == ["name used twice: cues (recall.cues, text.cues)",
                                         "name used twice: linking (write.linking, write.linking.linking)"]


def test_the_folder_table_lists_every_folder_in_order(layers):
    rows = [line.split(" | ")[1].strip("`") for line in layers.folder_table(layers.import_graph(ROOT))[2:]]
    assert [row.rstrip("/").removesuffix(".py") for row in rows] == [n for line in layers.FOLDER_ORDER for n in line]


def test_the_architecture_page_shows_the_layers_the_code_has(layers):
    table = "\n".join(layers.folder_table(layers.import_graph(ROOT)))
    assert table in (ROOT / "docs" / "architecture.md").read_text()
