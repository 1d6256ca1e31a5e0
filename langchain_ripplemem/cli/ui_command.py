"""``ripplemem ui``: serve a local web page to look at a memory (:mod:`langchain_ripplemem.server.ui_page`).

An embedded store (``--persist DIR``) is opened while the page asks and closed when
it is idle, so an agent that opens the store for its writes can keep writing; a
shared deployment (``--chroma-host``, with ``--postgres-dsn`` or an edge file) is kept
open, as every process may write to it at once (``docs/ui.md``).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from langchain_ripplemem.cli.support import CommandError, add_store_options, require_store, warn
from langchain_ripplemem.errors import RippleMemError
from langchain_ripplemem.server.served_memory import POSTGRES_ENV, open_deployment
from langchain_ripplemem.server.ui_access import IDLE_SECONDS, MemoryAccess
from langchain_ripplemem.storage.locks import StoreLockedError

__all__ = ["add_ui", "cmd_ui"]

DEFAULT_PORT = 8765


def _store(args: argparse.Namespace) -> str:
    """What the page names as the store."""
    from langchain_ripplemem.storage.sqlite import EDGES_FILENAME

    if args.chroma_host is None:
        return args.persist + (" with PostgreSQL" if args.postgres_dsn else "")
    edges = "PostgreSQL" if args.postgres_dsn else args.edges_path or f"{args.persist}/{EDGES_FILENAME}"
    return f"Chroma server {args.chroma_host}:{args.chroma_port}, edges in {edges}"


def cmd_ui(args: argparse.Namespace) -> int:
    """Serve the page until interrupted."""
    try:
        from langchain_ripplemem.server.ui_page import serve
    except ImportError as err:
        raise CommandError(f'the page needs starlette and uvicorn ({err}): pip install "langchain-ripplemem[ui]"'
                           ) from None
    if args.idle < 0:
        raise CommandError(f"--idle must be at least 0 seconds, got {args.idle}")
    embedded = args.chroma_host is None
    if embedded:
        require_store(args.persist)
    opener: Any
    if embedded and not args.postgres_dsn:
        opener = lambda: args.memory_factory(args.persist)  # noqa: E731 - tests pass a faster memory here
    else:
        opener = lambda: open_deployment(persist=args.persist, chroma_host=args.chroma_host,  # noqa: E731
                                         chroma_port=args.chroma_port, edges_path=args.edges_path,
                                         postgres_dsn=args.postgres_dsn)
    access = MemoryAccess(opener, per_use=embedded, idle=args.idle)
    try:
        with access.use():  # a store that cannot open fails now, not on the page
            pass
    except StoreLockedError as err:
        warn(f"note: {err}\nThe page says so until that process lets the store go.")
    except (RippleMemError, OSError, ValueError) as err:
        raise CommandError(f"cannot open the store: {err}") from None
    try:
        serve(access, host=args.host, port=args.port, read_only=args.read_only, token=args.token, store=_store(args))
    finally:
        access.close()
    return 0


def add_ui(sub: Any) -> None:
    """The ``ui`` subcommand."""
    ui = sub.add_parser("ui", help="a local web page to look at a memory: timeline, links, recall, forget",
                        description="Serve a page on 127.0.0.1 to look at a store: its namespaces, one namespace's "
                        "memories on a timeline (filtered by person, place, conversation and text), one memory with "
                        "its links, a recall with its picture, and forgetting (not with --read-only). An embedded "
                        "store is opened only while the page asks, so a process that writes to it between requests "
                        "can keep writing; see docs/ui.md.")
    add_store_options(ui, namespace=False)
    ui.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (default: %(default)s)")
    ui.add_argument("--host", default="127.0.0.1",
                    help="address to bind (default: %(default)s); any other than loopback requires a token")
    ui.add_argument("--token", default=None,
                    help="require this token (default: none on loopback; made and printed for another --host)")
    ui.add_argument("--read-only", action="store_true", help="refuse to forget anything")
    ui.add_argument("--idle", type=float, default=IDLE_SECONDS, metavar="SECONDS",
                    help="close an embedded store after this long without a request (default: %(default)s)")
    ui.add_argument("--chroma-host", default=None,
                    help="units in this Chroma server instead of embedded Chroma in --persist")
    ui.add_argument("--chroma-port", type=int, default=8000, help="port of --chroma-host (default: %(default)s)")
    ui.add_argument("--edges-path", default=None,
                    help="edge file with --chroma-host (default: ripplemem_edges.sqlite3 inside --persist)")
    ui.add_argument("--postgres-dsn", default=os.environ.get(POSTGRES_ENV), metavar="DSN",
                    help=f"edges, the namespace log and the writers' turns in PostgreSQL (default: ${POSTGRES_ENV})")
    ui.set_defaults(func=cmd_ui)
