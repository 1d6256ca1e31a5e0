"""``ripplemem mcp``: the memory as a Model Context Protocol server (official ``mcp`` SDK, FastMCP).

Tools: ``remember``, ``recall``, ``forget``, ``correct``, ``list_namespaces``,
``stats``, and ``explore_memory`` and ``memory_timeline`` to walk the memory.
Every call works in the server's namespace (``--namespace``) or, when the call
passes ``namespace``, in a namespace *under* it, written in full with
``/`` between labels: a server started with ``--namespace users/maya`` serves
``users/maya`` and ``users/maya/work``, and answers any other namespace with an
error. So one client never reaches another client's namespace: give each user
(or agent) a server with its own ``--namespace``. Namespace rules are the
library's (:func:`~langchain_ripplemem.schemas.validate_namespace`).

Bad arguments come back as MCP tool errors (``isError``) whose text says what
was wrong; an argument a tool does not take is refused, naming it and the ones
the tool takes; a remember that fails stores nothing.

Example:
    >>> from langchain_ripplemem import RippleMem
    >>> server = create_mcp_server(RippleMem(), namespace="users/maya")
    >>> import asyncio
    >>> sorted(tool.name for tool in asyncio.run(server.list_tools()))
    ['correct', 'explore_memory', 'forget', 'list_namespaces', 'memory_timeline', 'recall', 'remember', 'stats']

    ``server.run("stdio")`` serves it (what ``ripplemem mcp`` does).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, Field

try:
    from mcp.server.fastmcp import FastMCP
    from mcp.types import CallToolResult, TextContent, ToolAnnotations
except ImportError as _missing:  # pragma: no cover - the extra is part of [test]
    raise ImportError('the MCP server needs the mcp package: pip install "langchain-ripplemem[mcp]"') from _missing

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.conversations.files import conversation_from_json
from langchain_ripplemem.conversations.messages import single_turn_conversation
from langchain_ripplemem.recall.browsing import MAX_LINKS, MAX_PAGE_SIZE, MemoryNeighbourhood, TimelinePage
from langchain_ripplemem.schemas import (
    Namespace,
    NamespaceStats,
    RecallResult,
    counted,
    format_namespace,
    is_blank,
    validate_namespace,
)
from langchain_ripplemem.server.arguments import strict_tool
from langchain_ripplemem.server.disconnects import quiet_client_disconnects
from langchain_ripplemem.server.mcp_tool_bodies import (
    Corrected,
    Forgotten,
    NamespaceList,
    Remembered,
    correct_memories,
    forget_memories,
    remember_conversation,
    unknown_ids_note,
)
from langchain_ripplemem.server.served_memory import open_deployment

if TYPE_CHECKING:
    from langchain_ripplemem.memory import RippleMem

__all__ = ["MAX_K", "NamespaceScope", "create_mcp_server", "describe_recall", "open_memory", "serve"]

MAX_K = 100

INSTRUCTIONS = (
    "Long-term memory of earlier conversations (RippleMem). Call `recall` before answering anything that may "
    "depend on the past; call `remember` to keep durable facts, preferences, plans and events; use `correct` "
    "when the user says a memory is wrong and `forget` only when asked to delete; `explore_memory` shows what a "
    "memory links to and `memory_timeline` what happened in a window of time. Memory ids are the "
    "32-character hex strings in [brackets] that recall shows. Every call works in this server's namespace "
    "{namespace!r}; pass `namespace` only to work in a namespace under it (e.g. '{namespace}/work')."
)
REMEMBER = (
    "Save to long-term memory so it can be recalled in later conversations. Pass EITHER `text`: one "
    "self-contained statement with names instead of pronouns and absolute dates where known (e.g. 'Maya is "
    "allergic to shellfish.'), stored as said now by `speaker`; OR `conversation`: a whole conversation as a "
    "JSON object {\"id\", \"sessions\": [{\"id\", \"time\" (ISO 8601), \"turns\": [{\"id\", \"speaker\", "
    "\"text\"}]}]}. Re-sending a conversation with the same id and turns stores nothing new. Returns the ids of "
    "the stored memories. If anything is wrong with the input, nothing is stored and the error says why."
)
RECALL = (
    "Search long-term memory for what was said in earlier conversations: facts, preferences, events, plans and "
    "the people, places and dates involved. Input: a natural-language question. Recollection also follows links "
    "between memories (shared people, places, times, meaning) to find evidence the question does not mention, "
    "so read every memory returned. Each line shows [memory id], date, text, score and how it was found. "
    "Structured content holds the full result: memories with provenance and scores, and the trace of each round."
)
FORGET = (
    "Permanently delete memories (only when the user asks to delete or forget something; to mark a memory as "
    "wrong, use `correct`). Pass exactly one of: `memory_ids` (ids from recall), `conversation_id` (every memory "
    "of that conversation), or `erase_namespace=true` to delete everything in the namespace, which also needs "
    "`confirm` set to the namespace's name. Returns how many memories were deleted."
)
CORRECT = (
    "Mark memories as wrong when the user corrects them: they stay stored for audit but are never recalled "
    "again. Pass `memory_ids` exactly as recall shows them and the `reason` (the user's correction); to store "
    "the right fact, also call `remember`. With `restore=true` the memories are recalled again (undo)."
)
LIST_NAMESPACES = "List the namespaces this server can reach (its own and those under it) that hold memories."
EXPLORE_MEMORY = (
    "Look closer at one memory: where it came from (conversation, session, turns, and the memories said just before "
    "and after it) and the memories linked to it, grouped by link type (semantic: similar meaning; structural: "
    "shared rare names, places or times), strongest first. Use it to follow a recalled memory to what the recall "
    "did not cover. An unknown id is answered, not an error. Structured content holds the memories in full."
)
MEMORY_TIMELINE = (
    "What happened in a window of time, oldest first: the memories dated from `since` to `until` (ISO dates such "
    "as '2026-03-01', datetimes, or phrases such as 'last week' or 'yesterday'; leave one out for an open end), "
    "optionally only those a `person` said or took part in. Paged: `page` (from 1) and `page_size`; the text says "
    "which page is next. An empty window is answered, not an error."
)
STATS = (
    "What a namespace holds: how many memories (and how many are suppressed or superseded), conversations, "
    "sessions, links, and the time span covered."
)

NamespaceArg = Annotated[str | None, Field(
    description="optional: a namespace under this server's, written in full with '/' between labels; "
    "default: the server's namespace")]
IdsArg = Annotated[list[str] | None, Field(description="memory ids exactly as recall shows them in [brackets]")]


class NamespaceScope:
    """The namespaces one server may touch: its own and those under it.

    Example:
        >>> scope = NamespaceScope("users/maya")
        >>> scope.resolve(None), scope.resolve("users/maya/work")
        (('users', 'maya'), ('users', 'maya', 'work'))
        >>> scope.resolve("users/sam")
        Traceback (most recent call last):
        ...
        ValueError: namespace 'users/sam' is outside this server's namespace 'users/maya': pass 'users/maya' \
or a namespace under it, such as 'users/maya/work'
    """

    def __init__(self, namespace: Namespace | str) -> None:
        self.root = validate_namespace(namespace, argument="--namespace")

    def contains(self, namespace: Namespace) -> bool:
        """True when ``namespace`` is the server's or lies under it."""
        return tuple(namespace[:len(self.root)]) == self.root

    def resolve(self, namespace: str | None) -> Namespace:
        """The namespace a call works in; ``None`` is the server's.

        Raises:
            ValueError: naming the namespace when it breaks the library's rules or lies outside the scope.
        """
        if namespace is None or namespace == "":
            return self.root
        ns = validate_namespace(namespace)
        if not self.contains(ns):
            root = format_namespace(self.root)
            raise ValueError(f"namespace {namespace!r} is outside this server's namespace {root!r}: pass "
                             f"{root!r} or a namespace under it, such as '{root}/work'")
        return ns



def describe_recall(result: RecallResult) -> str:
    """The text a model reads: one line per memory (id, date, text, score, how found), the trace, the warnings.

    A warning (a fallback taken: rule-based cues, the heuristic controller) says how far to trust the rest.
    """
    ns = format_namespace(result.namespace)
    warnings = [f"warning: {warning}" for warning in result.warnings]
    if not result.memories:
        return "\n".join([f"No memories found for {result.query!r} in {ns}.", *warnings])
    lines = [f"{counted(len(result.memories), 'memory', 'memories')} for {result.query!r} in {ns}, best first:"]
    for memory in result.memories:
        how = []
        for hit in memory.provenance:
            how.append(f"{hit.source} #{hit.rank + 1}" if hit.source != "expansion" else
                       f"linked by a {hit.channel} edge from [{hit.anchor}] in round {hit.round}")
        anchor = "; anchor" if memory.is_anchor else ""
        when = memory.unit.time.day_span() if memory.unit.time is not None else "undated"
        lines.append(f"- [{memory.unit.id}] {when} | {memory.unit.restatement} "
                     f"(score {memory.score:.2f}; {', '.join(dict.fromkeys(how)) or 'assembly'}{anchor})")
    for trace in result.rounds:
        views = ", ".join(f"{view} {len(ids)}" for view, ids in trace.first_hop.items())
        step = f"first hop ({views})" if trace.round == 0 else \
            f"expanded {len(trace.expanded)} from {counted(len(trace.anchors), 'anchor')}"
        verdict = "enough" if trace.sufficient else "stopped short" if trace is result.rounds[-1] else "go on"
        lines.append(f"round {trace.round}: {step}; {verdict}: {trace.reason}")
    return "\n".join([*lines, *warnings])


def _reply(text: str, outcome: BaseModel) -> CallToolResult:
    """A sentence for the model, and the outcome as structured content for programs."""
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structuredContent=outcome.model_dump(mode="json"))



def create_mcp_server(
    memory: RippleMem,
    *,
    namespace: Namespace | str = ("default",),
    recall_config: RecallConfig | None = None,
    name: str = "ripplemem",
    host: str = "127.0.0.1",
    port: int = 8000,
) -> FastMCP:
    """A FastMCP server whose tools read and write ``memory`` within ``namespace`` and below it.

    Args:
        memory: the memory to serve (shared by every session of the server).
        namespace: the server's namespace; calls may name namespaces under it, never others.
        recall_config: recollection settings of ``recall``; default the memory's.
        name: the server name clients show.
        host: interface of the streamable HTTP transport (loopback by default).
        port: port of the streamable HTTP transport.

    Raises:
        InvalidNamespaceError: naming ``--namespace`` when it breaks the namespace rules.
    """
    scope = NamespaceScope(namespace)

    async def run(call: Callable[..., Any], *args: Any) -> Any:
        """Run a blocking memory call in a worker thread (the SDK turns any error into a tool error)."""
        return await asyncio.to_thread(functools.partial(call, *args))

    async def remember(
        text: Annotated[str | None, Field(description="one self-contained statement to remember")] = None,
        conversation: Annotated[dict[str, Any] | None, Field(
            description="a whole conversation in RippleMem's JSON format (instead of text)")] = None,
        speaker: Annotated[str, Field(description="who said `text`")] = "user",
        namespace: NamespaceArg = None,
    ) -> Annotated[CallToolResult, Remembered]:
        ns = scope.resolve(namespace)
        if conversation is not None and text is None:
            conv = conversation_from_json(conversation)
        elif text is not None and conversation is None:
            if is_blank(text):
                raise ValueError("text must be a non-empty statement")
            if is_blank(speaker):
                raise ValueError("speaker must be a non-empty name")
            conv = single_turn_conversation(text.strip(), speaker=speaker.strip())
        else:
            raise ValueError("pass exactly one of text or conversation")
        done: Remembered = await run(remember_conversation, memory, ns, conv)
        old = len(done.memory_ids) - done.new
        return _reply(f"Remembered {counted(done.new, 'new memory', 'new memories')} in {done.namespace}"
                      + (f" ({old} already stored)" if old else "") + f": {', '.join(done.memory_ids)}", done)

    async def recall(
        query: Annotated[str, Field(description="what to look for, as a question or topic")],
        k: Annotated[int, Field(description=f"memories to return, 1 to {MAX_K}")] = 10,
        namespace: NamespaceArg = None,
        since: Annotated[str | None, Field(description="optional: only memories from then on, an ISO date or "
                                           "datetime or a phrase such as 'last week'")] = None,
        until: Annotated[str | None, Field(description="optional: only memories up to then, as since")] = None,
        speakers: Annotated[list[str] | None, Field(description="optional: only what these people said")] = None,
        conversation_id: Annotated[str | None, Field(description="optional: only this conversation")] = None,
    ) -> Annotated[CallToolResult, RecallResult]:
        if not 1 <= k <= MAX_K:
            raise ValueError(f"k must be between 1 and {MAX_K}, got {k}")
        ns = scope.resolve(namespace)
        result: RecallResult = await run(functools.partial(
            memory.recall, query, namespace=ns, k=k, config=recall_config, since=since, until=until,
            speakers=speakers, conversation_id=conversation_id))
        return CallToolResult(content=[TextContent(type="text", text=describe_recall(result))],
                              structuredContent=result.model_dump(mode="json"))

    async def explore_memory(
        memory_id: Annotated[str, Field(description="the memory's id, as recall shows it in [brackets]")],
        limit: Annotated[int, Field(description=f"linked memories shown per link type, 1 to {MAX_LINKS}")] = 5,
        namespace: NamespaceArg = None,
    ) -> Annotated[CallToolResult, MemoryNeighbourhood]:
        found: MemoryNeighbourhood = await run(functools.partial(
            memory.explore, memory_id, namespace=scope.resolve(namespace), limit=limit))
        return _reply(found.describe(), found)

    async def memory_timeline(
        since: Annotated[str | None, Field(description="start: '2026-03-01', a datetime or 'last week'")] = None,
        until: Annotated[str | None, Field(description="end, read the same way (a day means up to its end)")] = None,
        person: Annotated[str | None, Field(description="only memories this person said or took part in")] = None,
        page: Annotated[int, Field(description="which page, from 1")] = 1,
        page_size: Annotated[int, Field(description=f"memories per page, 1 to {MAX_PAGE_SIZE}")] = 20,
        namespace: NamespaceArg = None,
    ) -> Annotated[CallToolResult, TimelinePage]:
        since, until, person = (None if value is None or is_blank(value) else value for value in (since, until, person))
        found: TimelinePage = await run(functools.partial(
            memory.timeline, since, until, person=person, namespace=scope.resolve(namespace), page=page,
            page_size=page_size))
        return _reply(found.describe(), found)

    async def forget(
        memory_ids: IdsArg = None,
        conversation_id: Annotated[str | None, Field(description="delete every memory of this conversation")] = None,
        erase_namespace: Annotated[bool, Field(description="delete everything in the namespace")] = False,
        confirm: Annotated[str | None, Field(
            description="with erase_namespace: the namespace's name, to confirm")] = None,
        namespace: NamespaceArg = None,
    ) -> Annotated[CallToolResult, Forgotten]:
        done: Forgotten = await run(forget_memories, memory, scope.resolve(namespace), memory_ids, conversation_id,
                                    erase_namespace, confirm)
        erased = f" Erased from {counted(len(done.files), 'file')} of the store." if done.files else ""
        return _reply(f"Deleted {counted(done.deleted, 'memory', 'memories')} in {done.namespace}.{erased}"
                      + "".join(f" Still kept by {kept}." for kept in done.kept) + unknown_ids_note(done.unknown_ids),
                      done)

    async def correct(
        memory_ids: IdsArg = None,
        reason: Annotated[str, Field(description="why they are wrong, e.g. the user's correction")] = "",
        restore: Annotated[bool, Field(description="undo an earlier correction instead")] = False,
        namespace: NamespaceArg = None,
    ) -> Annotated[CallToolResult, Corrected]:
        done: Corrected = await run(correct_memories, memory, scope.resolve(namespace), memory_ids, reason, restore)
        verb = "Suppressed (never recalled again)" if done.suppressed else "Restored (recalled again)"
        return _reply(f"{verb}: {len(done.changed)} in {done.namespace}"
                      + (f": {', '.join(done.changed)}." if done.changed else ".") + unknown_ids_note(done.unknown_ids),
                      done)

    async def list_namespaces() -> NamespaceList:
        found = await run(memory.namespaces)
        return NamespaceList(namespaces=sorted(format_namespace(ns) for ns in found if scope.contains(ns)))

    async def stats(namespace: NamespaceArg = None) -> NamespaceStats:
        return await run(memory.stats, scope.resolve(namespace))  # type: ignore[no-any-return]

    tools: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
        (remember, REMEMBER, ToolAnnotations(title="Remember", readOnlyHint=False, destructiveHint=False,
                                             idempotentHint=False, openWorldHint=False)),
        (recall, RECALL, ToolAnnotations(title="Recall", readOnlyHint=True, openWorldHint=False)),
        (forget, FORGET, ToolAnnotations(title="Forget", readOnlyHint=False, destructiveHint=True,
                                         idempotentHint=True, openWorldHint=False)),
        (correct, CORRECT, ToolAnnotations(title="Correct", readOnlyHint=False, destructiveHint=False,
                                           idempotentHint=True, openWorldHint=False)),
        (list_namespaces, LIST_NAMESPACES, ToolAnnotations(title="List namespaces", readOnlyHint=True,
                                                           openWorldHint=False)),
        (stats, STATS, ToolAnnotations(title="Memory statistics", readOnlyHint=True, openWorldHint=False)),
        (explore_memory, EXPLORE_MEMORY, ToolAnnotations(title="Explore a memory", readOnlyHint=True,
                                                         openWorldHint=False)),
        (memory_timeline, MEMORY_TIMELINE, ToolAnnotations(title="Memory timeline", readOnlyHint=True,
                                                           openWorldHint=False)),
    ]
    root = format_namespace(scope.root)
    return FastMCP(name, instructions=INSTRUCTIONS.format(namespace=root), host=host, port=port,
                   log_level="WARNING", tools=[strict_tool(*tool) for tool in tools])


def open_memory(
    *,
    persist: str | Path,
    chroma_host: str | None = None,
    chroma_port: int = 8000,
    edges_path: str | Path | None = None,
    llm: str | None = None,
    recall_config: RecallConfig | None = None,
) -> RippleMem:
    """The memory a server serves: embedded Chroma in ``persist``, or a Chroma server with edges on disk.

    With ``chroma_host``, units live in that Chroma server and edges in ``edges_path``
    (default ``ripplemem_edges.sqlite3`` inside ``persist``), so several processes can share them.

    Raises:
        ValueError: naming ``chroma_port`` when it is not a port number.
    """
    return open_deployment(persist=persist, chroma_host=chroma_host, chroma_port=chroma_port, edges_path=edges_path,
                           llm=llm, recall_config=recall_config)


def serve(memory: RippleMem, *, namespace: Namespace | str, http: bool = False, port: int = 8000,
          recall_config: RecallConfig | None = None) -> None:
    """Serve ``memory`` over stdio (default) or streamable HTTP on 127.0.0.1:``port`` until stopped.

    Raises:
        ValueError: naming ``port`` when it is not a port number.
    """
    if not 0 < port < 65536:
        raise ValueError(f"port must be a port number (1-65535), got {port}")
    server = create_mcp_server(memory, namespace=namespace, recall_config=recall_config, port=port)
    if http:
        # stdout belongs to the protocol under stdio; this note goes to stderr either way.
        print(f"ripplemem mcp: serving {format_namespace(validate_namespace(namespace))} at "
              f"http://127.0.0.1:{port}{server.settings.streamable_http_path}", file=sys.stderr, flush=True)
    if http:
        quiet_client_disconnects()  # a client ending its session is no ERROR with a traceback
        server.run("streamable-http")
        return
    with _own_stdio():
        server.run("stdio")


@contextlib.contextmanager
def _own_stdio() -> Iterator[None]:
    """Let the SDK's stdio transport read and write duplicates of the process's stdin and stdout.

    The transport wraps ``sys.stdin.buffer``/``sys.stdout.buffer`` in text wrappers that
    close them when the session ends, which would leave the process without a stdout
    for whatever runs after the client leaves.
    """
    saved = sys.stdin, sys.stdout
    sys.stdout.flush()
    sys.stdin = io.TextIOWrapper(os.fdopen(os.dup(saved[0].fileno()), "rb"), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(os.fdopen(os.dup(saved[1].fileno()), "wb"), encoding="utf-8")
    try:
        yield
    finally:
        for stream in (sys.stdin, sys.stdout):
            with contextlib.suppress(OSError, ValueError):  # already closed by the transport
                stream.close()
        sys.stdin, sys.stdout = saved
