"""Print the package's internal import graph as layers, and fail on an import circle or a rule break.

Every import counts: at module level, under ``TYPE_CHECKING`` (a type-only import is
still a dependency of the code that uses the type) and inside functions (a call-time
dependency is a dependency). Strongly connected components of more than one module are
circles. Layer 0 imports nothing of the package; layer n imports only layers below n.

The same holds between folders. :data:`FOLDER_ORDER` lists the package's folders and root
modules (each root module a node of its own) bottom to top; a module imports only modules
of its own node or of a node below it. Nodes on one line sit side by side and never import
each other (``write`` and ``recall``: what both need lives below them). Inside a folder, its
sub-folders and modules import each other without a circle.

More rules, each a failure:

- an import inside a function is allowed only of a module in ``LAZY``: one whose import
  is heavy (a third-party library a command may never need), named there with the reason;
- no module imports another module's private name (``from x import _y``, or ``x._y`` on an
  imported module): a cache or state another module needs is registered or passed, not reached;
- the benchmark harness (``benchmarks/``, beside the package, not in its wheel) imports the package,
  never the other way: no module of the package imports ``benchmarks``, not even inside a function;
- no module name is used twice: ``cues.py`` in two folders, or ``linking/linking.py``, would be
  two things under one name (a folder's name counts as a module name).

    python scripts/import_layers.py              # layers, folders, then circles and rule breaks (exit 1 if any)
    python scripts/import_layers.py --circles    # circles and rule breaks only
    python scripts/import_layers.py --markdown   # the folder table of docs/architecture.md
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

import networkx as nx

PACKAGE = "langchain_ripplemem"
HARNESS = "benchmarks"

# The package's folders and root modules, bottom to top (one line a layer; a line of two sits side by side).
# A module imports only its own node and nodes below it. "__init__" is the package's public face.
FOLDER_ORDER: list[tuple[str, ...]] = [
    ("_runtime",),
    ("errors",), ("timestamps",), ("config",), ("schemas",), ("presets",), ("cache_bounds",), ("embeddings",),
    ("text",),
    ("conversations",),
    ("llm",),
    ("storage",),
    ("edges",),
    ("index",),
    ("render",),
    ("write", "recall"),
    ("retrievers",),
    ("memory_lifecycle",),
    ("memory",),
    ("store_items",),
    ("store_sweeper",),
    ("store_plan",),
    ("stores", "tools"),
    ("server",),
    ("cli",),
    ("__init__",),
]

# Modules imported inside functions on purpose: importing them is heavy, and a caller may never need them.
LAZY = {
    "langchain_ripplemem.memory": "chromadb and onnxruntime: `ripplemem --help` needs neither",
    "langchain_ripplemem.embeddings": "onnxruntime and the tokenizer, loaded only when an encoder is built",
    "langchain_ripplemem.storage.sqlite": "opened only by commands that reach a store",
    "langchain_ripplemem.storage.postgres": "psycopg ([postgres] extra), only for a deployment on PostgreSQL",
    "langchain_ripplemem.server.mcp": "the optional mcp SDK ([mcp] extra)",
    "langchain_ripplemem.server.ui_page": "starlette and uvicorn ([ui] extra), only under `ripplemem ui`",
    "langchain_ripplemem.render.html_page": "only `--html` draws a picture",
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
        out.extend(f"import of the harness: {name} -> {target}" for target in _harness_imports(tree, package))
    return sorted(set(out))


def _harness_imports(tree: ast.AST, package: str) -> list[str]:
    """Modules of the benchmark harness a module imports, anywhere in it."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name == HARNESS or a.name.startswith(HARNESS + ".")]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module == HARNESS or node.module.startswith(HARNESS + "."):
                found.append(node.module)
    return found


def folder_of(name: str, depth: int = 1) -> str:
    """The node of module ``name`` at ``depth``: its folder or root module (``__init__`` for the package itself)."""
    parts = name.split(".")[1:]
    return ".".join(parts[:depth]) if parts else "__init__"


def folder_breaks(graph: nx.DiGraph) -> list[str]:
    """Imports that run up or sideways between folders, folders not in the order, circles of sub-folders."""
    rank = {node: n for n, line in enumerate(FOLDER_ORDER) for node in line}
    out = [f"not in FOLDER_ORDER: {node}" for node in sorted({folder_of(m) for m in graph} - set(rank))]
    inner: dict[str, nx.DiGraph] = {}
    for name, target in graph.edges:
        low, high = folder_of(name), folder_of(target)
        if low == high:
            sub, other = folder_of(name, 2), folder_of(target, 2)
            if sub != other:
                inner.setdefault(low, nx.DiGraph()).add_edge(sub, other)
            continue
        if low not in rank or high not in rank or rank[low] > rank[high]:
            continue
        where = "side by side with" if rank[low] == rank[high] else "above"
        out.append(f"{'sideways' if rank[low] == rank[high] else 'upward'} import: {name} -> {target} "
                   f"({high} sits {where} {low})")
    for folder, sub in sorted(inner.items()):
        out.extend(f"circle of folders in {folder}: {' <-> '.join(sorted(c))}"
                   for c in nx.strongly_connected_components(sub) if len(c) > 1)
    return sorted(out)


def reused_names(root: Path) -> list[str]:
    """Module names (a file's or a folder's) used for two different modules of the package."""
    seen: dict[str, list[str]] = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        name = module_name(path, root)
        if name != PACKAGE and path.stem != "__main__":
            seen.setdefault(name.rpartition(".")[2], []).append(name.removeprefix(PACKAGE + "."))
    return [f"name used twice: {base} ({', '.join(names)})" for base, names in sorted(seen.items()) if len(names) > 1]


def _grouped(names: list[str]) -> list[str]:
    """``["a", "b.c", "b.d", "b"]`` -> ``["a", "b/ (c, d)"]``: a sub-folder's modules in brackets."""
    subs = {n.partition(".")[0] for n in names if "." in n}
    out = [n for n in names if "." not in n and n not in subs]
    for sub in sorted(subs):
        out.append(f"{sub}/ ({', '.join(n.partition('.')[2] for n in names if n.startswith(sub + '.'))})")
    return sorted(out)


def folder_table(graph: nx.DiGraph) -> list[str]:
    """:data:`FOLDER_ORDER` as a Markdown table: each folder or root module, its modules, what it imports."""
    rank = {node: n for n, line in enumerate(FOLDER_ORDER) for node in line}
    lines = ["| layer | folder or module | its modules | imports from |", "|---|---|---|---|"]
    for n, line in enumerate(FOLDER_ORDER):
        for node in line:
            members = sorted(m for m in graph if folder_of(m) == node)
            inside = _grouped(sorted(m.removeprefix(f"{PACKAGE}.{node}.") for m in members
                                     if m.startswith(f"{PACKAGE}.{node}.")))
            shown = "__init__.py" if node == "__init__" else f"{node}/" if inside else f"{node}.py"
            below = sorted({folder_of(t) for m in members for t in graph.successors(m)} - {node},
                           key=lambda f: (rank.get(f, -1), f))
            lines.append(f"| {n} | `{shown}` | {', '.join(inside)} | {', '.join(below)} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(Path(__file__).resolve().parents[1]))
    parser.add_argument("--circles", action="store_true", help="only report circles and rule breaks")
    parser.add_argument("--markdown", action="store_true", help="print the folder table (docs/architecture.md)")
    args = parser.parse_args()
    graph = import_graph(Path(args.root))
    if args.markdown:
        print("\n".join(folder_table(graph)))
        return 0
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
        print("folders, bottom to top: " + " < ".join(" = ".join(line) for line in FOLDER_ORDER))
    for circle in circles:
        print(f"circle of {len(circle)}: {' <-> '.join(m.removeprefix(PACKAGE + '.') for m in circle)}")
    breaks = rule_breaks(Path(args.root)) + folder_breaks(graph) + reused_names(Path(args.root))
    for line in breaks:
        print(line.replace(PACKAGE + ".", ""))
    if not circles:
        print("no import circle")
    return 1 if circles or breaks else 0


if __name__ == "__main__":
    sys.exit(main())
