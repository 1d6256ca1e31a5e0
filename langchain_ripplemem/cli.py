"""The ``ripplemem`` command: ``demo``, ``ingest``, ``recall``, ``check``, ``mcp``, ``bench``.

Namespaces on the command line are written with ``/`` between labels
(``--namespace users/maya`` is ``("users", "maya")``).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_ripplemem.config import PRESETS, preset

DEFAULT_PERSIST = ".ripplemem"


def _namespace(text: str) -> tuple[str, ...]:
    from langchain_ripplemem.schemas import validate_namespace

    return validate_namespace(tuple(text.split("/")), argument="--namespace")


def _memory(persist: str | None) -> Any:
    from langchain_ripplemem.memory import RippleMemory

    return RippleMemory(persist_directory=persist)


def cmd_ingest(args: argparse.Namespace) -> int:
    """Ingest a JSON/JSONL conversation file into a persistent store."""
    from tqdm.auto import tqdm

    from langchain_ripplemem.adapters import load_conversations

    conversations = load_conversations(args.file)
    memory = _memory(args.persist)
    started = time.perf_counter()
    units = new = semantic = structural = failed = 0
    for conv in tqdm(conversations, desc="ingest", unit="conversation", disable=args.quiet):
        report = memory.add_conversation(conv, namespace=args.namespace, progress=not args.quiet)
        units, new = units + report.units, new + report.new_units
        semantic += report.edges.get("semantic", 0)
        structural += report.edges.get("structural", 0)
        failed += len(report.failed_windows)
        for warning in report.warnings:
            print(f"warning: {warning}", file=sys.stderr)
    print(f"{len(conversations)} conversations -> {units} units ({new} new), edges: {semantic} semantic "
          f"+ {structural} structural, {failed} failed windows, {time.perf_counter() - started:.1f}s "
          f"[{args.persist}, namespace {'/'.join(args.namespace)}]")
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    """Recollect memories for a question and print them with the trace."""
    from langchain_ripplemem.rendering import format_recall

    memory = _memory(args.persist)
    result = memory.recall(args.question, namespace=args.namespace, k=args.k, config=preset(args.preset)[1])
    if args.html:
        from langchain_ripplemem.recall_html import write_recall_html

        print(f"wrote {write_recall_html(result, args.html, memory)}", file=sys.stderr)
    if args.json:
        print(result.model_dump_json(indent=2))
    else:
        print(format_recall(result))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Check that units (Chroma), views and edges (SQLite) of a persistent store agree."""
    from langchain_ripplemem.integrity import check_store

    if not Path(args.persist).is_dir():
        raise ValueError(f"no store at {args.persist!r} (pass --persist DIR)")
    memory = _memory(args.persist)
    report = check_store(memory, relink=args.relink)
    print(report.model_dump_json(indent=2) if args.json else report.summary())
    return 0 if report.ok else 1


def cmd_demo(args: argparse.Namespace) -> int:
    """Run the offline demo."""
    from langchain_ripplemem.demo import run_demo

    run_demo(k=args.k, html_dir=args.html)
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve the memory as a Model Context Protocol server (stdio, or streamable HTTP with --http)."""
    try:
        from langchain_ripplemem.mcp_server import open_memory, serve
    except ImportError as err:
        raise ValueError(str(err)) from None
    recall_config = preset(args.preset)[1]
    memory = open_memory(persist=args.persist, chroma_host=args.chroma_host, chroma_port=args.chroma_port,
                         graph_path=args.graph_path, llm=args.llm, recall_config=recall_config)
    try:
        serve(memory, namespace=args.namespace, http=args.http, port=args.port, recall_config=recall_config)
    finally:
        memory.close()
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``ripplemem``."""
    parser = argparse.ArgumentParser(prog="ripplemem", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="offline demo: plain top-k vs recollection on a sample conversation")
    demo.add_argument("--k", type=int, default=10, help="memories returned per system (default 10)")
    demo.add_argument("--html", metavar="DIR", default=None,
                      help="also write a picture of each recollection to DIR (one HTML page per question)")
    demo.set_defaults(func=cmd_demo)

    ingest = sub.add_parser("ingest", help="ingest a JSON/JSONL conversation file")
    ingest.add_argument("file")
    ingest.add_argument("--persist", default=DEFAULT_PERSIST, help=f"store directory (default {DEFAULT_PERSIST})")
    ingest.add_argument("--namespace", type=_namespace, default=("default",))
    ingest.add_argument("--quiet", action="store_true", help="no progress bar")
    ingest.set_defaults(func=cmd_ingest)

    recall = sub.add_parser("recall", help="recollect memories for a question")
    recall.add_argument("question")
    recall.add_argument("--persist", default=DEFAULT_PERSIST)
    recall.add_argument("--namespace", type=_namespace, default=("default",))
    recall.add_argument("--k", type=int, default=None, help="memories returned (default 30)")
    recall.add_argument("--json", action="store_true", help="print the RecallResult as JSON")
    recall.add_argument("--html", metavar="FILE", default=None,
                        help="also write a picture of the recollection: one self-contained HTML page")
    recall.add_argument("--preset", default="locomo-tuned", choices=sorted(PRESETS),
                        help="recall settings (default locomo-tuned: the offline scoring of docs/architecture.md; "
                        "paper: METHOD.md exactly)")
    recall.set_defaults(func=cmd_recall)

    check = sub.add_parser("check", help="integrity check of a persistent store")
    check.add_argument("--persist", default=DEFAULT_PERSIST, help=f"store directory (default {DEFAULT_PERSIST})")
    check.add_argument("--relink", action="store_true",
                       help="first link units an interrupted ingest left unlinked (writes to the store)")
    check.add_argument("--json", action="store_true", help="print the IntegrityReport as JSON")
    check.set_defaults(func=cmd_check)

    mcp = sub.add_parser("mcp", help="serve the memory to MCP clients (Claude Desktop, Cursor, LangGraph agents)")
    mcp.add_argument("--persist", default=DEFAULT_PERSIST, help=f"store directory (default {DEFAULT_PERSIST})")
    mcp.add_argument("--namespace", type=_namespace, default=("default",),
                     help="the server's namespace: calls reach it and namespaces under it only (default 'default')")
    mcp.add_argument("--http", action="store_true", help="serve streamable HTTP on 127.0.0.1 instead of stdio")
    mcp.add_argument("--port", type=int, default=8000, help="port of --http (default 8000)")
    mcp.add_argument("--chroma-host", default=None,
                     help="keep units in this Chroma server instead of embedded Chroma in --persist")
    mcp.add_argument("--chroma-port", type=int, default=8000, help="port of --chroma-host (default 8000)")
    mcp.add_argument("--graph-path", default=None,
                     help="edge file with --chroma-host (default ripplemem_graph.sqlite3 inside --persist)")
    mcp.add_argument("--llm", default=None, metavar="PROVIDER:MODEL",
                     help="opt-in chat model for extraction and the recall controller (default: offline)")
    mcp.add_argument("--preset", default="locomo-tuned", choices=sorted(PRESETS), help="recall settings")
    mcp.set_defaults(func=cmd_mcp)

    sub.add_parser("bench", help="benchmarks: ripplemem bench {locomo,longmemeval,report} ...",
                   add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ripplemem`` command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "bench":
        from langchain_ripplemem.bench.cli import bench_main

        return bench_main(argv[1:])
    args = build_parser().parse_args(argv)
    if getattr(args, "persist", None):
        args.persist = str(Path(args.persist))
    try:
        return int(args.func(args))
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


__all__ = ["build_parser", "main"]
