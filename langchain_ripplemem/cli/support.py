"""What every ``ripplemem`` subcommand shares: output, common options, opening a store.

Output goes through :func:`emit`/:func:`emit_json` (stdout) and :func:`warn`
(stderr); an expected failure is a :class:`CommandError`. Read commands open a
store with :func:`open_store`, which never creates one.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_ripplemem.errors import RippleMemError
from langchain_ripplemem.index import marks
from langchain_ripplemem.render.plain_text import json_text, terminal_text
from langchain_ripplemem.schemas import format_namespace, validate_namespace

if TYPE_CHECKING:
    from langchain_ripplemem.memory import RippleMem

# persist directory -> an open memory; called with llm= (a chat model) too when the command has --llm
MemoryFactory = Callable[..., "RippleMem"]

DEFAULT_PERSIST = ".ripplemem"
#: Encoder passes the command runs at once: two where the process may use two cores (docs/import.md, "Speed").
ENCODER_WORKERS = min(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
DEFAULT_NAMESPACE = "default"
CHROMA_FILENAME = "chroma.sqlite3"  # what chromadb.PersistentClient writes in its directory


class CommandError(Exception):
    """An expected failure of a command; printed as ``error: <message>`` with exit status 2."""


EXPECTED_ERRORS = (CommandError, RippleMemError, ValueError, OSError)


# -- output ------------------------------------------------------------------------
def emit(text: str) -> None:
    """Print a human-readable report (control and bidi characters escaped)."""
    print(terminal_text(text, multiline=True))


def emit_json(data: Any) -> None:
    """Print ``data`` as JSON (unsafe characters written as JSON escapes: the same value)."""
    print(json_text(data))


def warn(text: str) -> None:
    """Print a message to stderr (escaped like every other output)."""
    print(terminal_text(text, multiline=True), file=sys.stderr)


# -- shared options ----------------------------------------------------------------
def _namespace(text: str) -> tuple[str, ...]:
    try:
        return validate_namespace(text, argument="namespace")
    except ValueError as err:  # argparse shows only "invalid value" for a ValueError: give the reason
        raise argparse.ArgumentTypeError(str(err)) from None


class _NamespaceOption(argparse.Action):
    """Store the namespace and remember that it was given (some commands act on the store when it is not)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        namespace.namespace_given = True


def add_store_options(parser: argparse.ArgumentParser, *, namespace_help: str | None = None,
                      namespace: bool = True) -> None:
    """``--persist`` and (unless ``namespace=False``) ``--namespace``: the options every store command shares."""
    parser.add_argument("--persist", metavar="DIR", default=DEFAULT_PERSIST,
                        help="store directory (default: %(default)s)")
    if namespace:
        parser.add_argument("--namespace", metavar="NS", type=_namespace, default=DEFAULT_NAMESPACE,
                            action=_NamespaceOption,
                            help=namespace_help or "namespace, labels separated by '/', e.g. users/maya "
                            "(default: %(default)s)")
        parser.set_defaults(namespace_given=False)


def add_json_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--json``: print ``what`` as JSON instead of text."""
    parser.add_argument("--json", action="store_true", help=f"print {what} as JSON")


def add_full_option(parser: argparse.ArgumentParser) -> None:
    """``--full``: do not cut long texts."""
    parser.add_argument("--full", action="store_true",
                        help="print long texts whole (by default they are cut, with a note saying so)")


def add_llm_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--llm PROVIDER:MODEL``: the opt-in chat model for ``what`` (read with :func:`chat_model_option`)."""
    parser.add_argument("--llm", default=None, metavar="PROVIDER:MODEL",
                        help=f"opt-in chat model for {what} (default: offline); a local OpenAI-compatible server "
                        "(llama.cpp, vLLM, Ollama) is openai:MODEL with OPENAI_BASE_URL and OPENAI_API_KEY set")


def chat_model_option(args: argparse.Namespace) -> Any:
    """The chat model ``--llm`` names, made now: a bad value stops the command before it opens a store."""
    if args.llm is None:
        return None
    from langchain_ripplemem.llm.calls import resolve_chat_model

    try:
        return resolve_chat_model(args.llm)
    except Exception as err:  # noqa: BLE001 - whatever the provider raises, the --llm value is what was wrong
        raise CommandError(f"--llm {args.llm!r}: {err}") from None


# -- opening a store ---------------------------------------------------------------
def default_memory(persist: str, llm: Any = None) -> RippleMem:
    """The memory of a ``--persist`` directory with the default settings (tests pass faster ones).

    Its encoder runs :data:`ENCODER_WORKERS` forward passes at once: an ingest is the
    command's whole job, and the passes' vectors are one worker's, bit for bit.
    """
    from langchain_ripplemem.embeddings import MiniLMOnnxEmbeddings
    from langchain_ripplemem.memory import RippleMem

    return RippleMem(MiniLMOnnxEmbeddings(workers=ENCODER_WORKERS), persist_directory=persist, llm=llm)


def has_store(directory: str | Path) -> bool:
    """Whether ``directory`` holds a RippleMem store (Chroma's file or the edge file), so opening it creates nothing."""
    from langchain_ripplemem.storage.sqlite import EDGES_FILENAME

    return any((Path(directory) / name).is_file() for name in (CHROMA_FILENAME, EDGES_FILENAME))


def check_persist(persist: str) -> None:
    """An error when ``--persist`` names something that is not a directory (else Chroma's raw ``[Errno 17]``)."""
    path = Path(persist)
    if path.exists() and not path.is_dir():
        raise CommandError(f"--persist {persist}: it is a file, not a directory (a store is a directory; "
                           "`ripplemem ingest FILE --persist DIR` creates one)")


def require_store(persist: str) -> None:
    """An error when ``--persist`` holds no store (reads never create one)."""
    if not has_store(persist):
        what = "the directory does not exist" if not Path(persist).exists() else "nothing RippleMem wrote"
        raise CommandError(f"no store at {persist!r} ({what}): create one with "
                           f"`ripplemem ingest FILE --persist {persist}`, or pass --persist DIR")


def open_store(args: argparse.Namespace, *, create: bool = False, llm: Any = None) -> RippleMem:
    """The memory at ``--persist``, with the chat model ``llm`` if given; unless ``create``, an error if none is."""
    if not create:
        require_store(args.persist)
    return args.memory_factory(args.persist, **({} if llm is None else {"llm": llm}))  # type: ignore[no-any-return]


def namespace_counts(memory: RippleMem) -> dict[tuple[str, ...], tuple[int, int]]:
    """``{namespace: (units, suppressed units)}`` of every namespace that holds units."""
    counts = {}
    for ns in sorted(memory.namespaces()):
        units = memory.list_units(ns, include_suppressed=True)
        counts[ns] = (len(units), sum(1 for u in units if marks.is_suppressed(u)))
    return counts


def require_namespace(memory: RippleMem, args: argparse.Namespace, *, strict: bool = True) -> None:
    """An error (a note when not ``strict``) naming the store's namespaces when ``--namespace`` holds no units.

    Reads (``recall``, ``list``, ``stats``) are not strict: an empty namespace is no error, it answers
    with nothing in it (exit 0). ``forget`` is: there is nothing there to delete.
    """
    held = memory.namespaces()
    if args.namespace not in held:
        names = ", ".join(sorted(format_namespace(ns) for ns in held)) or "none"
        message = (f"namespace {format_namespace(args.namespace)!r} holds no memories in {args.persist!r} "
                   f"(its namespaces: {names})")
        if strict:
            raise CommandError(message)
        warn(f"note: {message}")
