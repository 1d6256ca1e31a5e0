"""Print the package's internal import graph as layers, and any import circle.

Imports at module level and under ``TYPE_CHECKING`` count (a type-only import
is still a dependency of the code that uses the type). Strongly connected
components of more than one module are circles. Layer 0 imports nothing of the
package; layer n imports only layers below n. Imports inside functions are
call-time dependencies; with ``--call-time`` they count too, and the script
names the function-level imports that close a loop.

    python scripts/import_layers.py              # layers, then circles (exit 1 if any)
    python scripts/import_layers.py --circles    # circles only
    python scripts/import_layers.py --call-time  # also count imports inside functions
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

import networkx as nx

PACKAGE = "langchain_ripplemem"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _nodes(tree: ast.AST, call_time: bool) -> list[ast.AST]:
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


def imports(path: Path, name: str, modules: set[str], call_time: bool = False) -> set[str]:
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


def import_graph(root: Path, call_time: bool = False) -> nx.DiGraph:
    files = {module_name(p, root): p for p in (root / PACKAGE).rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for name, path in files.items():
        for target in imports(path, name, set(files), call_time):
            # A package __init__ re-exporting its modules is not a dependency of theirs.
            if not name.startswith(target + "."):
                graph.add_edge(name, target)
    return graph


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(Path(__file__).resolve().parents[1]))
    parser.add_argument("--circles", action="store_true", help="only report circles")
    parser.add_argument("--call-time", action="store_true", help="also count imports inside functions")
    args = parser.parse_args()
    graph = import_graph(Path(args.root), args.call_time)
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
    if args.call_time:
        static = import_graph(Path(args.root))
        for a, b in sorted(set(graph.edges) - set(static.edges)):
            if nx.has_path(static, b, a):
                print(f"call-time import closing a loop: {a.removeprefix(PACKAGE + '.')} -> "
                      f"{b.removeprefix(PACKAGE + '.')}")
    if not circles:
        print("no import circle")
    return 1 if circles else 0


if __name__ == "__main__":
    sys.exit(main())
