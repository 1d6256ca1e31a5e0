"""Print the package's internal import graph as layers, and fail on an import circle or a private import.

Every import counts: at module level, under ``TYPE_CHECKING`` (a type-only import is
still a dependency of the code that uses the type) and inside functions (a call-time
dependency is a dependency). Strongly connected components of more than one module are
circles. Layer 0 imports nothing of the package; layer n imports only layers below n.

Three more rules, each a failure:

- an import inside a function is allowed only of a module in ``LAZY``: one whose import
  is heavy (a third-party library a command may never need), named there with the reason;
- no module imports another module's private name (``from x import _y``, or ``x._y`` on an
  imported module): a cache or state another module needs is registered or passed, not reached;
- the benchmark harness sits on top: ``bench`` imports the package, the package reaches ``bench``
  only through a ``LAZY`` entry (``ripplemem bench`` calls ``bench.cli``).

    python scripts/import_layers.py              # layers, then circles and rule breaks (exit 1 if any)
    python scripts/import_layers.py --circles    # circles and rule breaks only
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

import networkx as nx

PACKAGE = "langchain_ripplemem"
HARNESS = f"{PACKAGE}.bench"

# Modules imported inside functions on purpose: importing them is heavy, and a caller may never need them.
LAZY = {
    "langchain_ripplemem.memory": "chromadb and onnxruntime: `ripplemem --help` and a bench report need neither",
    "langchain_ripplemem.embeddings": "onnxruntime and the tokenizer, loaded only when an encoder is built",
    "langchain_ripplemem.storage.sqlite": "opened only by commands that reach a store",
    "langchain_ripplemem.storage.postgres": "psycopg ([postgres] extra), only for a deployment on PostgreSQL",
    "langchain_ripplemem.server.mcp": "the optional mcp SDK ([mcp] extra)",
    "langchain_ripplemem.picture.html": "only `--html` draws a picture",
    "langchain_ripplemem.bench.cli": "the benchmark harness, only under `ripplemem bench`",
    "langchain_ripplemem.bench.report": "matplotlib ([bench] extra) for plots",
    "langchain_ripplemem.bench.runner": "the memory and its encoder, only for a run",
    "langchain_ripplemem.bench.cached_embeddings": "onnxruntime, only for a run",
    "langchain_ripplemem.llm.calls": "langchain's chat-model classes (~650 modules), only under `--llm`",
    "langchain_ripplemem.cli.integrity": "the index and numpy, only under `ripplemem check`",
}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _nodes(tree: ast.AST, call_time: bool = True) -> list[ast.AST]:
    """Import statements at module level (``if`` blocks included), and inside functions with ``call_time``."""
    if call_time:
        return list(ast.walk(tree))
    out: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(tree))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        out.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return out


def imports(path: Path, name: str, modules: set[str], call_time: bool = True) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _nodes(tree, call_time):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name and target.startswith(PACKAGE):
                found.add(target)
    return found


def import_graph(root: Path, call_time: bool = True) -> nx.DiGraph:
    files = {module_name(p, root): p for p in (root / PACKAGE).rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for name, path in files.items():
        for target in imports(path, name, set(files), call_time):
            # A package __init__ re-exporting its modules is not a dependency of theirs.
            if not name.startswith(target + "."):
                graph.add_edge(name, target)
    return graph


def _resolve(node: ast.ImportFrom, package: str) -> str:
    base = node.module or ""
    if node.level:
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*anchor, base] if base else anchor)
    return base


def rule_breaks(root: Path) -> list[str]:
    """Imports inside functions of modules not in ``LAZY``, and imports of another module's private names."""
    files = {module_name(p, root): p for p in (root / PACKAGE).rglob("*.py")}
    out: list[str] = []
    for name, path in sorted(files.items()):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        late = {id(n) for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                for n in ast.walk(n) if isinstance(n, (ast.Import, ast.ImportFrom))}
        bound: set[str] = set()  # local names of imported package modules
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = _resolve(node, package)
                if not base.startswith(PACKAGE):
                    continue
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
                for alias in node.names:
                    if alias.name.startswith("_"):
                        out.append(f"private import: {name} imports {alias.name} from {base}")
                    if f"{base}.{alias.name}" in files:
                        bound.add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith(PACKAGE)]
                bound.update(a.asname for a in node.names if a.asname and a.name.startswith(PACKAGE))
            else:
                continue
            if id(node) in late:
                for target in targets:
                    while target and target not in files:
                        target = target.rpartition(".")[0]
                    if target and target not in LAZY:
                        out.append(f"import inside a function: {name} -> {target} (not in LAZY)")
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                out.append(f"private import: {name} reads {node.value.id}.{node.attr}")
    graph = import_graph(root, call_time=False)
    out.extend(f"import of the harness: {name} -> {target}" for name, target in graph.edges
               if target.startswith(HARNESS) and not _in_harness(name))
    return sorted(set(out))


def _in_harness(name: str) -> bool:
    return name == HARNESS or name.startswith(HARNESS + ".")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(Path(__file__).resolve().parents[1]))
    parser.add_argument("--circles", action="store_true", help="only report circles and rule breaks")
    args = parser.parse_args()
    graph = import_graph(Path(args.root))
    circles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    if not args.circles:
        condensed = nx.condensation(graph)
        layer: dict[int, int] = {}
        for node in reversed(list(nx.topological_sort(condensed))):
            layer[node] = 1 + max((layer[s] for s in condensed.successors(node)), default=-1)
        by_layer: dict[int, list[str]] = {}
        for node, members in condensed.nodes(data="members"):
            by_layer.setdefault(layer[node], []).extend(m.removeprefix(PACKAGE + ".") for m in members)
        for n in sorted(by_layer):
            print(f"layer {n}: {', '.join(sorted(by_layer[n]))}")
    for circle in circles:
        print(f"circle of {len(circle)}: {' <-> '.join(m.removeprefix(PACKAGE + '.') for m in circle)}")
    breaks = rule_breaks(Path(args.root))
    for line in breaks:
        print(line.replace(PACKAGE + ".", ""))
    if not circles:
        print("no import circle")
    return 1 if circles or breaks else 0


if __name__ == "__main__":
    sys.exit(main())
