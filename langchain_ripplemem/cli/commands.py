"""The ``ripplemem`` command: demo, ingest, recall, list, stats, forget, check, mcp, export, import, ui.

Namespaces on the command line are written with ``/`` between labels
(``--namespace users/maya`` is ``("users", "maya")``), the rule of
:func:`~langchain_ripplemem.schemas.validate_namespace` everywhere.

Each subcommand is one ``add_<name>(subparsers)`` function (its options, then
``set_defaults(func=...)``); :data:`SUBCOMMANDS` lists them. Every expected
failure (a :class:`~langchain_ripplemem.errors.RippleMemError`, bad input, a
missing file or store) prints one ``error: ...`` line and exits 2; a closed
output pipe (``| head``) ends quietly. Read commands never create a store.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_ripplemem.cli.demo import run_demo
from langchain_ripplemem.cli.export_commands import add_export, add_import
from langchain_ripplemem.cli.importing import IngestProgress, add_format_option, read_ingest_file
from langchain_ripplemem.cli.support import (
    EXPECTED_ERRORS,
    CommandError,
    MemoryFactory,
    add_full_option,
    add_json_option,
    add_llm_option,
    add_store_options,
    chat_model_option,
    check_persist,
    default_memory,
    emit,
    emit_json,
    has_store,
    namespace_counts,
    open_store,
    require_namespace,
    warn,
)
from langchain_ripplemem.cli.ui_command import add_ui
from langchain_ripplemem.errors import DuplicateSessionWarning, FailedWindowsWarning
from langchain_ripplemem.presets import PRESETS, preset
from langchain_ripplemem.render.plain_text import (
    counted,
    format_forget,
    format_namespace_counts,
    format_recall,
    format_stats,
    format_units,
    trace_ids,
)
from langchain_ripplemem.schemas import format_namespace

if TYPE_CHECKING:
    pass

EXIT_ERROR, EXIT_DECLINED, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 2, 1, 130, 141  # 141 = 128 + SIGPIPE, as a shell shows
EXIT_NOTHING_STORED = 1  # `ingest`: every extraction window that ran failed (like `check`'s 1: it ran, and says no)
EXIT_CHATS_SKIPPED = 1  # `ingest` of an export: malformed chats were skipped, the rest was stored

DESCRIPTION = "RippleMem long-term memory from the command line: store conversations, recollect, inspect, forget."
EPILOG = """\
namespaces: labels separated by '/': --namespace users/maya is ("users", "maya"), as in Python.
exit status: 0 done; 1 `check` found problems, `forget` was declined, or `ingest` stored nothing because
its extraction windows failed (e.g. --llm answered with invalid output) or skipped malformed chats of an
export (the rest is stored); 2 error (bad input, no store, store in use by another process);
130 interrupted (ingesting the file again resumes); 141 output closed early (e.g. `| head`).
`ripplemem COMMAND --help` describes a command; docs/cli.md describes them all."""


# -- commands ----------------------------------------------------------------------
def cmd_ingest(args: argparse.Namespace) -> int:
    """Ingest a conversation file, or a ChatGPT or Claude export, into a persistent store."""
    conversations, export = read_ingest_file(args)
    llm = chat_model_option(args)
    if not has_store(args.persist) and not any(turn.has_content for conv in conversations for _, turn in conv.turns()):
        # Nothing to write, and opening the store would create it for nothing. (A store that exists
        # takes the usual path: opening it creates nothing, and the extractor warns of each turn.)
        for conv in conversations:
            for session, turn in conv.turns():
                warn(f"warning: conversation {conv.id!r}, session {session.id!r}, turn {turn.id!r}: "
                     "no text and no image caption; skipped")
        emit(f"{counted(len(conversations), 'conversation')} -> 0 units: no turn has text or an image caption, "
             f"nothing was stored [{args.persist}, namespace {format_namespace(args.namespace)}]")
        return EXIT_CHATS_SKIPPED if export is not None and export.skipped else 0
    started = time.perf_counter()
    units = new = replaced = semantic = structural = failed = 0
    with open_store(args, create=True, llm=llm) as memory, warnings.catch_warnings(), \
            IngestProgress(conversations, chats=export is not None, quiet=args.quiet) as progress:
        for reported in (FailedWindowsWarning, DuplicateSessionWarning):  # report.warnings says them, line by line
            warnings.simplefilter("ignore", reported)
        for conv in conversations:
            progress.begin(conv)
            report = memory.add_conversation(conv, namespace=args.namespace,
                                             on_embedded=None if args.quiet else progress.on_embedded)
            progress.done()
            units, new, replaced = units + report.units, new + report.new_units, replaced + len(report.replaced)
            semantic += report.edges.get("semantic", 0)
            structural += report.edges.get("structural", 0)
            failed += len(report.failed_windows)
            for warning in report.warnings:
                warn(f"warning: {warning}")
    edited = f", {replaced} replaced (edited turns)" if replaced else ""
    emit(f"{counted(len(conversations), 'conversation')} -> {counted(units, 'unit')} ({new} new{edited}), "
         f"edges: {semantic} semantic + {structural} structural, {counted(failed, 'failed window')}, "
         f"{time.perf_counter() - started:.1f}s "
         f"[{args.persist}, namespace {format_namespace(args.namespace)}]")
    if failed and not units:
        warn(f"error: nothing was stored: {counted(failed, 'extraction window')} failed (the warnings above say why); "
             "ingesting the file again retries them")
        return EXIT_NOTHING_STORED
    if export is not None and export.skipped:
        warn(f"warning: {counted(len(export.skipped), 'malformed chat')} skipped (named above); the rest is stored")
        return EXIT_CHATS_SKIPPED
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    """Recollect memories for a question and print them with the trace."""
    with open_store(args) as memory:
        require_namespace(memory, args, strict=False)
        result = memory.recall(args.question, namespace=args.namespace, k=args.k, config=preset(args.preset)[1],
                               asker=args.asker, as_of=args.as_of)
        units = {} if args.json else {u.id: u for u in memory.get(trace_ids(result), namespace=args.namespace)}
        if args.html:
            from langchain_ripplemem.render.html_page import write_recall_html

            warn(f"wrote {write_recall_html(result, args.html, memory)}")
    if args.json:
        emit_json(result.model_dump(mode="json"))
    else:
        emit(format_recall(result, units=units, full=args.full))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """List the namespaces of a store, or a page of one namespace's units."""
    if args.limit < 1 or args.offset < 0:
        raise CommandError(f"--limit must be at least 1 and --offset at least 0, got {args.limit} and {args.offset}")
    with open_store(args) as memory:
        if not args.namespace_given:
            counts = namespace_counts(memory)
            if args.json:
                emit_json([{"namespace": list(ns), "units": n, "suppressed": hidden}
                           for ns, (n, hidden) in counts.items()])
            else:
                emit(format_namespace_counts(counts, args.persist))
            return 0
        require_namespace(memory, args, strict=False)
        units = memory.list_units(args.namespace, include_suppressed=True)
    page = units[args.offset:args.offset + args.limit]
    if args.json:
        emit_json({"namespace": list(args.namespace), "total": len(units), "offset": args.offset,
                   "units": [u.model_dump(mode="json") for u in page]})
    else:
        emit(format_units(page, offset=args.offset, total=len(units), full=args.full))
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    """What one namespace, or every namespace of a store, holds."""
    with open_store(args) as memory:
        if args.namespace_given:
            require_namespace(memory, args, strict=False)
        chosen = [args.namespace] if args.namespace_given else sorted(memory.namespaces())
        stats = [memory.stats(ns) for ns in chosen]
    if args.json:
        dumped = [s.model_dump(mode="json") for s in stats]
        emit_json(dumped[0] if args.namespace_given else {"store": args.persist, "namespaces": dumped})
        return 0
    if not args.namespace_given:
        units, edges = sum(s.units for s in stats), sum(sum(s.edges.values()) for s in stats)
        emit(f"store {args.persist}: {counted(len(stats), 'namespace')}, {counted(units, 'unit')}, "
             f"{counted(edges, 'edge')}")
    for item in stats:
        emit(format_stats(item))
    return 0


def confirm(action: str, *, assume_yes: bool) -> bool:
    """``--yes``, or a yes to "about to ``action``" from a terminal; otherwise an error (never a silent yes)."""
    if assume_yes:
        return True
    if not sys.stdin.isatty():
        raise CommandError(f"refusing to {action} without confirmation: stdin is not a terminal, pass --yes")
    warn(f"About to {action}. This cannot be undone.")
    sys.stderr.write("Continue? [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in {"y", "yes"}


def cmd_forget(args: argparse.Namespace) -> int:
    """Delete units by id, a conversation's units, or a whole namespace (and every edge touching them).

    Prints what was deleted and the files rewritten so nothing of the units remains in them
    (``ForgetReport``; ``--json``: the report itself).
    """
    chosen = [bool(args.ids), args.conversation is not None, args.all]
    if sum(chosen) != 1:
        raise CommandError("say what to forget: unit ids, --conversation ID, or --all (exactly one of them)")
    if args.all and not args.namespace_given:
        raise CommandError("--all forgets a whole namespace: name it with --namespace")
    ns, where = args.namespace, f"namespace {format_namespace(args.namespace)!r} of {args.persist!r}"
    with open_store(args) as memory:
        require_namespace(memory, args)
        if args.all:
            count = len(memory.list_units(ns, include_suppressed=True))
            if not confirm(f"forget all {counted(count, 'unit')} of {where}", assume_yes=args.yes):
                warn("nothing forgotten")
                return EXIT_DECLINED
            report = memory.delete_namespace(ns)
        elif args.conversation is not None:
            report = memory.delete_conversation(args.conversation, namespace=ns)
            if not report.units:
                known = ", ".join(memory.stats(ns).conversations)
                raise CommandError(f"{where} holds no units of conversation {args.conversation!r} "
                                   f"(its conversations: {known})")
        else:
            found = {u.id for u in memory.get(args.ids, namespace=ns)}
            missing = [i for i in dict.fromkeys(args.ids) if i not in found]
            if missing:  # all or nothing: a typo must not leave half the list deleted
                raise CommandError(f"{where} holds no unit {', '.join(missing)}; nothing forgotten "
                                   f"(`ripplemem list --namespace NS` shows unit ids)")
            report = memory.delete(args.ids, namespace=ns)
    if args.json:
        emit_json(report.model_dump(mode="json"))
    else:
        emit(format_forget(report, args.persist))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Check that units (Chroma), indexes and edges (SQLite) of a persistent store agree."""
    from langchain_ripplemem.cli.integrity import check_store

    with open_store(args) as memory:
        report = check_store(memory, relink=args.relink)
    if args.json:
        emit_json(report.model_dump(mode="json"))
    else:
        emit(report.summary())
    return 0 if report.ok else 1


def cmd_demo(args: argparse.Namespace) -> int:
    """Run the offline demo."""
    run_demo(k=args.k, out=emit, html_dir=args.html)
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve the memory as a Model Context Protocol server (stdio, or streamable HTTP with --http)."""
    try:
        from langchain_ripplemem.server.mcp import open_memory, serve
    except ImportError as err:
        raise CommandError(str(err)) from None
    recall_config = preset(args.preset)[1]
    memory = open_memory(persist=args.persist, chroma_host=args.chroma_host, chroma_port=args.chroma_port,
                         edges_path=args.edges_path, llm=args.llm, recall_config=recall_config)
    try:
        serve(memory, namespace=args.namespace, http=args.http, port=args.port, recall_config=recall_config)
    finally:
        memory.close()
    return 0


# -- parser ------------------------------------------------------------------------
Subparsers = Any  # argparse's _SubParsersAction (private type)


def add_demo(sub: Subparsers) -> None:
    """The ``demo`` subcommand."""
    demo = sub.add_parser("demo", help="offline demo: plain top-k vs recollection on a sample conversation")
    demo.add_argument("-k", "--k", type=int, default=10, help="memories returned per system (default: %(default)s)")
    demo.add_argument("--html", metavar="DIR", default=None,
                      help="also write a picture of each recollection to DIR (one HTML page per question)")
    demo.set_defaults(func=cmd_demo)


def add_ingest(sub: Subparsers) -> None:
    """The ``ingest`` subcommand."""
    ingest = sub.add_parser("ingest", help="ingest a conversation file or a ChatGPT/Claude export (creates the "
                            "store if needed)",
                            description="Ingest a JSON/JSONL conversation file, or the history of a ChatGPT or "
                            "Claude data export, one conversation per chat (creates the store if needed). "
                            "Ingesting again adds only what is new, and resumes an interrupted ingest. "
                            "Exit status 1 when nothing was stored because extraction windows failed (with "
                            "--llm: the model's output stayed invalid after the retries), or when malformed "
                            "chats of an export were skipped (named on stderr; the rest is stored); windows "
                            "that failed beside stored ones are warnings, and ingesting the file again retries them.")
    ingest.add_argument("file", help="conversations: a .json file (one or a list) or .jsonl (one per line); or "
                        "an export's conversations.json, or the .zip it came in")
    add_format_option(ingest)
    add_store_options(ingest)
    ingest.add_argument("--quiet", action="store_true", help="no progress bar")
    add_llm_option(ingest, "extraction")
    ingest.set_defaults(func=cmd_ingest)


def add_recall(sub: Subparsers) -> None:
    """The ``recall`` subcommand."""
    recall = sub.add_parser("recall", help="recollect memories for a question")
    recall.add_argument("question")
    add_store_options(recall)
    recall.add_argument("-k", "--k", type=int, default=None, help="memories returned (default: the preset's, 30)")
    recall.add_argument("--asker", default=None, help="the speaker asking (e.g. user): the question's I and my "
                        "are that speaker, whose own memories rank higher")
    recall.add_argument("--as-of", metavar="TIME", default=None, help="answer as of this date or ISO time: later "
                        "memories are hidden, and only what was superseded by then counts as superseded")
    add_json_option(recall, "the whole RecallResult")
    add_full_option(recall)
    recall.add_argument("--html", metavar="FILE", default=None,
                        help="also write a picture of the recollection: one self-contained HTML page")
    recall.add_argument("--preset", default="recommended", choices=sorted(PRESETS),
                        help="recall settings (default: %(default)s, RecallConfig(), the best measured offline; "
                        "paper: the method of docs/concepts.md exactly)")
    recall.set_defaults(func=cmd_recall)


def add_list(sub: Subparsers) -> None:
    """The ``list`` subcommand."""
    listing = sub.add_parser("list", help="namespaces of a store with unit counts, or the units of one namespace")
    add_store_options(listing, namespace_help="list this namespace's units, e.g. users/maya "
                      "(default: list the namespaces)")
    listing.add_argument("--limit", type=int, default=50, help="units per page (default: %(default)s)")
    listing.add_argument("--offset", type=int, default=0, help="units to skip (default: %(default)s)")
    add_json_option(listing, "the namespaces or units")
    add_full_option(listing)
    listing.set_defaults(func=cmd_list)


def add_stats(sub: Subparsers) -> None:
    """The ``stats`` subcommand."""
    stats = sub.add_parser("stats", help="what a namespace or the whole store holds")
    add_store_options(stats, namespace_help="only this namespace, e.g. users/maya (default: every namespace)")
    add_json_option(stats, "the NamespaceStats")
    stats.set_defaults(func=cmd_stats)


def add_forget(sub: Subparsers) -> None:
    """The ``forget`` subcommand."""
    forget = sub.add_parser("forget", help="delete units, a conversation or a whole namespace (with their edges)",
                            description="Delete units by id, every unit of one conversation, or (--all) a whole "
                            "namespace, with every edge touching them. Unknown ids delete nothing.")
    forget.add_argument("ids", nargs="*", metavar="UNIT_ID",
                        help="ids of units to forget (`ripplemem list` shows them)")
    forget.add_argument("--conversation", metavar="ID", help="forget every unit from this conversation")
    forget.add_argument("--all", action="store_true", help="forget the whole namespace (needs --namespace and a "
                        "confirmation: --yes, or an answer when stdin is a terminal)")
    forget.add_argument("--yes", action="store_true", help="confirm --all without asking")
    add_json_option(forget, "the ForgetReport (units, edges, files rewritten)")
    add_store_options(forget)
    forget.set_defaults(func=cmd_forget)


def add_check(sub: Subparsers) -> None:
    """The ``check`` subcommand."""
    check = sub.add_parser("check", help="integrity check of a persistent store")
    add_store_options(check, namespace=False)
    check.add_argument("--relink", action="store_true",
                       help="first link units an interrupted ingest left unlinked (writes to the store)")
    add_json_option(check, "the IntegrityReport")
    check.set_defaults(func=cmd_check)


def add_mcp(sub: Subparsers) -> None:
    """The ``mcp`` subcommand."""
    mcp = sub.add_parser("mcp", help="serve the memory to MCP clients (Claude Desktop, Cursor, LangGraph agents)")
    add_store_options(mcp, namespace_help="the server's namespace, e.g. users/maya: calls reach it and namespaces "
                      "under it only (default: %(default)s)")
    mcp.add_argument("--http", action="store_true", help="serve streamable HTTP on 127.0.0.1 instead of stdio")
    mcp.add_argument("--port", type=int, default=8000, help="port of --http (default: %(default)s)")
    mcp.add_argument("--chroma-host", default=None,
                     help="keep units in this Chroma server instead of embedded Chroma in --persist")
    mcp.add_argument("--chroma-port", type=int, default=8000, help="port of --chroma-host (default: %(default)s)")
    mcp.add_argument("--edges-path", default=None,
                     help="edge file with --chroma-host (default: ripplemem_edges.sqlite3 inside --persist)")
    add_llm_option(mcp, "extraction and the recall controller")
    mcp.add_argument("--preset", default="recommended", choices=sorted(PRESETS),
                     help="recall settings (default: %(default)s)")
    mcp.set_defaults(func=cmd_mcp)


SUBCOMMANDS: tuple[Callable[[Subparsers], None], ...] = (
    add_demo, add_ingest, add_recall, add_list, add_stats, add_forget, add_check, add_mcp, add_export, add_import,
    add_ui)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``ripplemem``."""
    parser = argparse.ArgumentParser(prog="ripplemem", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush into a closed pipe says nothing."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (captured output)
        pass


def main(argv: Sequence[str] | None = None, *, memory_factory: MemoryFactory | None = None) -> int:
    """Entry point of the ``ripplemem`` command; returns the exit status.

    Args:
        argv: the arguments (default ``sys.argv[1:]``).
        memory_factory: opens the memory of a ``--persist`` directory (tests pass fast embeddings here).
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
        args.memory_factory = memory_factory or default_memory
        if getattr(args, "persist", None):
            args.persist = str(Path(args.persist))
            check_persist(args.persist)
        status = int(args.func(args))
        sys.stdout.flush()  # a closed pipe shows here, inside the handlers, not at interpreter exit
        return status
    except SystemExit:  # argparse's --help and usage errors: the same quiet end if stdout is a closed pipe
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_stdout()
        raise
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as Unix tools do
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        warn("interrupted")
        return EXIT_INTERRUPTED
    except EXPECTED_ERRORS as err:
        warn(f"error: {err}")
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


__all__ = ["SUBCOMMANDS", "CommandError", "add_store_options", "build_parser", "has_store", "main"]
