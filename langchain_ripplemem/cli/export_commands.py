"""``ripplemem export`` and ``ripplemem import``: carry a namespace to a file and into another store.

Both open a local store (``--persist DIR``) or a deployment: units in a Chroma server
(``--chroma-host``, ``--chroma-port``, as ``ripplemem mcp``), edges and the namespace log in
PostgreSQL (``--postgres-dsn``, what the served graphs read from ``$RIPPLEMEM_POSTGRES_DSN``).
The file's format: ``docs/export.md``.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from langchain_ripplemem.cli.support import (
    CommandError,
    add_json_option,
    add_store_options,
    emit,
    emit_json,
    open_store,
    require_namespace,
)
from langchain_ripplemem.server.served_memory import (
    CHROMA_HOST_ENV,
    CHROMA_PORT_ENV,
    PERSIST_ENV,
    POSTGRES_ENV,
    open_served_memory,
)
from langchain_ripplemem.storage.export_format import read_export

if TYPE_CHECKING:
    from langchain_ripplemem.memory import RippleMem

__all__ = ["add_export", "add_import", "cmd_export", "cmd_import"]


def _deployment_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--chroma-host", default=None,
                        help="units in this Chroma server instead of embedded Chroma in --persist (edges then "
                        "in --persist, or in --postgres-dsn)")
    parser.add_argument("--chroma-port", type=int, default=8000, help="port of --chroma-host (default: %(default)s)")
    # No default from $RIPPLEMEM_POSTGRES_DSN: `ripplemem recall --persist DIR` would not read the edges put there.
    parser.add_argument("--postgres-dsn", default=None, metavar="DSN",
                        help=f"edges and the namespace log in this PostgreSQL database (the served graphs' "
                        f"${POSTGRES_ENV}; default: in --persist)")


def _open(args: argparse.Namespace, *, create: bool) -> RippleMem:
    """The memory the options name: a deployment, or the store at ``--persist``."""
    if not args.chroma_host and not args.postgres_dsn:
        return open_store(args, create=create)
    return open_served_memory({PERSIST_ENV: args.persist, CHROMA_HOST_ENV: args.chroma_host or "",
                               CHROMA_PORT_ENV: str(args.chroma_port), POSTGRES_ENV: args.postgres_dsn or ""})


def _where(args: argparse.Namespace) -> str:
    return f"chroma {args.chroma_host}:{args.chroma_port}" if args.chroma_host else args.persist


def cmd_export(args: argparse.Namespace) -> int:
    """Write one namespace to a JSONL file."""
    if not args.namespace_given:
        raise CommandError("say which namespace to export with --namespace NS (`ripplemem list` shows them)")
    with _open(args, create=False) as memory:
        require_namespace(memory, args)
        report = memory.export_namespace(args.namespace, args.file, vectors=not args.no_vectors)
    if args.json:
        emit_json(report.model_dump(mode="json"))
    else:
        emit(report.summary())
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Store the memories of an export file; the file is checked whole before the store is opened."""
    contents = read_export(args.file)
    with _open(args, create=True) as memory:
        report = memory.import_namespace(contents, args.namespace if args.namespace_given else None,
                                         other_model="reembed" if args.reembed else "refuse")
    if args.json:
        emit_json(report.model_dump(mode="json"))
    else:
        emit(f"{report.summary()} [{_where(args)}]")
    return 0


Subparsers = Any  # argparse's _SubParsersAction (private type)


def add_export(sub: Subparsers) -> None:
    """The ``export`` subcommand."""
    export = sub.add_parser("export", help="write one namespace's memories to a JSONL file (docs/export.md)",
                            description="Write one namespace's memories (units with their provenance, marks "
                            "and vectors, and their edges) to a versioned JSONL file that `ripplemem import` "
                            "reads into another store.")
    export.add_argument("file", help="the file to write (replaced if it exists)")
    add_store_options(export, namespace_help="the namespace to export, e.g. users/maya (required)")
    _deployment_options(export)
    export.add_argument("--no-vectors", action="store_true",
                        help="leave the vectors out (a smaller file; the import embeds the units again)")
    add_json_option(export, "the ExportReport")
    export.set_defaults(func=cmd_export)


def add_import(sub: Subparsers) -> None:
    """The ``import`` subcommand."""
    importing = sub.add_parser("import", help="store the memories of an export file (creates the store if needed)",
                               description="Store the memories of a `ripplemem export` file. The whole file is "
                               "checked first: a bad line is named and nothing is written. Importing a file again "
                               "adds nothing.")
    importing.add_argument("file", help="a file `ripplemem export` wrote")
    add_store_options(importing, namespace_help="store them under this namespace, e.g. users/maya "
                      "(default: the one they were exported from)")
    _deployment_options(importing)
    importing.add_argument("--reembed", action="store_true",
                           help="a file of another embedding model: embed its units again with this store's model "
                           "(default: refuse, naming both models)")
    add_json_option(importing, "the ImportReport")
    importing.set_defaults(func=cmd_import)
