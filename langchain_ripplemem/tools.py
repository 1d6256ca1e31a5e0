"""Agent tools: recall from, write to, correct and walk a RippleMem, sync and async.

All tools take a *namespace template*: labels may hold ``{placeholders}``
filled at call time from the run config's ``configurable`` (as LangMem does)
or, inside a LangGraph run, from the run's ``context``. One tool instance thus
serves every user. A bad call from the model (an empty query or statement) comes
back to it as the tool's answer; a missing placeholder value is a setup error and
raises.

Example:
    >>> from langchain_ripplemem import RippleMem
    >>> memory = RippleMem()
    >>> recall = create_recall_tool(memory, namespace=("memories", "{user_id}"))
    >>> remember = create_remember_tool(memory, namespace=("memories", "{user_id}"))
    >>> config = {"configurable": {"user_id": "maya"}}
    >>> remember.invoke({"content": "Maya is allergic to shellfish."}, config)  # doctest: +ELLIPSIS
    'Remembered 1 memory in memories/maya: ...'
    >>> print(recall.invoke({"query": "What can't Maya eat?"}, config))  # doctest: +ELLIPSIS
    1 memory:
    - [...] | ... | User: Maya is allergic to shellfish.

"""

from __future__ import annotations

import asyncio
import contextlib
import string
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Union

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, Field, ValidationError

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.conversations.messages import single_turn_conversation
from langchain_ripplemem.llm.failures import summarise_validation
from langchain_ripplemem.recall.browsing import MAX_LINKS, MAX_PAGE_SIZE
from langchain_ripplemem.recall.filters import recall_filter
from langchain_ripplemem.render.plain_text import memory_line
from langchain_ripplemem.schemas import (
    Conversation,
    IngestReport,
    Namespace,
    RecallResult,
    is_blank,
    validate_namespace,
)

if TYPE_CHECKING:
    from langchain_ripplemem.memory import RippleMem

__all__ = ["create_correct_tool", "create_explore_memory_tool", "create_memory_timeline_tool", "create_recall_tool",
           "create_remember_tool", "format_memories", "resolve_namespace"]

MemorySource = Union["RippleMem", Callable[[], "RippleMem"]]
DEFAULT_NAMESPACE = ("memories", "{user_id}")

RECALL_DESCRIPTION = (
    "Search long-term memory for what the user said in earlier conversations: facts, preferences, "
    "events, plans and the people, places and dates involved. Use it before answering anything that "
    "may depend on the past. Input: a natural-language question or topic. Returns the matching "
    "memories, each with its id, date and text; it also follows links to related memories the "
    "question does not mention, so read them all."
)
REMEMBER_DESCRIPTION = (
    "Save one durable fact, preference, plan or event about the user to long-term memory so it can "
    "be recalled in later conversations. Input: a self-contained statement with names instead of "
    "pronouns and absolute dates where known (e.g. 'Maya is allergic to shellfish.'). Returns the "
    "ids of the stored memories."
)

CORRECT_DESCRIPTION = (
    "Mark stored memories as wrong when the user corrects them or asks you to forget them. Input: the "
    "ids of those memories exactly as the recall tool shows them in [brackets], and the reason (the "
    "user's correction). They are kept for audit but never recalled again. To store the corrected "
    "fact, also use the remember tool."
)


class RecallArgs(BaseModel):
    """Arguments of the recall tool."""

    query: str = Field(description="what to look for, as a question or topic")
    since: str | None = Field(default=None, description="only memories from then on: an ISO date or a phrase "
                              "such as 'last week' (optional)")
    until: str | None = Field(default=None, description="only memories up to then, as since (optional)")
    speakers: list[str] | None = Field(default=None, description="only what these people said (optional)")
    conversation_id: str | None = Field(default=None, description="only memories of this conversation (optional)")


class RememberArgs(BaseModel):
    """Arguments of the remember tool."""

    content: str = Field(description="the statement to remember, self-contained")


class CorrectArgs(BaseModel):
    """Arguments of the correct tool."""

    ids: list[str] = Field(description="ids of the wrong memories, as the recall tool lists them")
    reason: str = Field(description="why they are wrong, e.g. the user's correction")


def resolve_namespace(template: tuple[str, ...], config: RunnableConfig | None = None) -> Namespace:
    """Fill a namespace template's ``{placeholders}``.

    Values come from ``config["configurable"]`` first, then from the LangGraph run's
    ``context`` (a dict or an object with that attribute) when called inside a graph.

    Raises:
        ValueError: naming the missing placeholder and how to pass it, or the
            namespace rule the filled namespace breaks.

    Example:
        >>> resolve_namespace(("memories", "{user_id}"), {"configurable": {"user_id": "maya"}})
        ('memories', 'maya')
    """
    configurable = dict((config or {}).get("configurable") or {})
    context = _run_context()
    labels = []
    for label in template:
        values = {}
        for _, name, _, _ in string.Formatter().parse(label):
            if name is None:
                continue
            value = configurable.get(name)
            if value is None and context is not None:
                value = context.get(name) if isinstance(context, Mapping) else getattr(context, name, None)
            if value is None:
                raise ValueError(
                    f"namespace template {template!r} needs {name!r}: pass "
                    f"config={{'configurable': {{'{name}': ...}}}} when invoking the tool or the "
                    f"graph (or run it in a LangGraph graph whose context has {name!r})")
            values[name] = str(value)
        labels.append(label.format(**values))
    return validate_namespace(tuple(labels))


def _run_context() -> Any:
    """The LangGraph run's context, or None outside a graph run."""
    try:
        from langgraph.runtime import get_runtime

        runtime = get_runtime()
    except (ImportError, RuntimeError, KeyError):
        return None
    return getattr(runtime, "context", None)


def format_memories(result: RecallResult) -> str:
    """A compact listing for a model: one ``- [id] | date | restatement`` line per memory."""
    if not result.memories:
        return f"No memories found for {result.query!r}."
    lines = [f"{len(result.memories)} {'memory' if len(result.memories) == 1 else 'memories'}:"]
    for recalled in result.memories:
        unit = recalled.unit
        line = "- " + memory_line(f"[{unit.id}]", unit, undated="undated")
        if unit.metadata.get("superseded_by"):  # a model should know the fact was updated
            line += f" (superseded from {unit.metadata['valid_until'][:10]} by [{unit.metadata['superseded_by']}])"
        lines.append(line)
    return "\n".join(lines)


def _check_template(namespace: Any) -> tuple[str, ...]:
    if isinstance(namespace, str):
        namespace = (namespace,)
    if not isinstance(namespace, (tuple, list)) or not namespace or \
            not all(isinstance(label, str) and label for label in namespace):
        raise ValueError(f"namespace must be a non-empty tuple of non-empty strings, got {namespace!r}")
    return tuple(namespace)


def _getter(memory: MemorySource) -> Callable[[], RippleMem]:
    """Accept a memory or a zero-argument factory (servers that build the memory on first use)."""
    if hasattr(memory, "recall") and hasattr(memory, "add_conversation"):
        return lambda: memory  # type: ignore[return-value]
    if callable(memory):
        return memory
    raise ValueError(f"memory must be a RippleMem or a function returning one, got {type(memory).__name__}")


def create_recall_tool(
    memory: MemorySource,
    *,
    namespace: tuple[str, ...] | str = DEFAULT_NAMESPACE,
    k: int = 5,
    name: str = "recall_memory",
    description: str = RECALL_DESCRIPTION,
    config: RecallConfig | None = None,
) -> StructuredTool:
    """A tool that recollects memories for a query and returns a compact listing.

    Args:
        memory: the ``RippleMem``, or a function returning it (called on first use).
        namespace: namespace template, e.g. ``("memories", "{user_id}")``.
        k: memories returned per call.
        name: the tool name the model sees.
        description: the tool description the model sees.
        config: recollection budgets; default the memory's.

    Raises:
        ValueError: naming ``k``, ``namespace`` or ``memory`` when unusable.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    template, get_memory, recall_config = _check_template(namespace), _getter(memory), config

    def prepare(query: str, run_config: RunnableConfig, filters: dict[str, Any]) -> tuple[RippleMem, dict[str, Any]]:
        if is_blank(query):
            raise ToolException("query must be a non-empty question or topic")
        try:  # a bad filter goes back to the model, named
            recall_filter(**filters)
        except ValueError as err:
            raise ToolException(str(err)) from None
        # The tool run's callbacks make the recall graph's node runs nest under the tool run.
        return get_memory(), {"namespace": resolve_namespace(template, run_config), "k": k,
                              "config": recall_config, "callbacks": run_config.get("callbacks"), **filters}

    def recall(query: str, config: RunnableConfig, **filters: Any) -> str:
        target, kwargs = prepare(query, config, filters)
        return format_memories(target.recall(query, **kwargs))

    async def arecall(query: str, config: RunnableConfig, **filters: Any) -> str:
        # The memory may be created, and storage read, on first use: never on the event loop.
        target, kwargs = await asyncio.to_thread(prepare, query, config, filters)
        return format_memories(await target.arecall(query, **kwargs))

    return StructuredTool.from_function(func=recall, coroutine=arecall, name=name, description=description,
                                        args_schema=RecallArgs, handle_tool_error=True)


def create_remember_tool(
    memory: MemorySource,
    *,
    namespace: tuple[str, ...] | str = DEFAULT_NAMESPACE,
    name: str = "remember",
    description: str = REMEMBER_DESCRIPTION,
    speaker: str = "user",
) -> StructuredTool:
    """A tool that writes a statement to memory and confirms with the new unit ids.

    The statement becomes a one-turn conversation (spoken by ``speaker``, timed now)
    that goes through the normal write path: extraction, embedding, linking to what
    the namespace already holds. The same statement remembered again the same day is
    the memory already stored (the reply says so); on a later day it is a new memory.

    Args:
        memory: the ``RippleMem``, or a function returning it (called on first use).
        namespace: namespace template, e.g. ``("memories", "{user_id}")``.
        name: the tool name the model sees.
        description: the tool description the model sees.
        speaker: who the statement is attributed to.

    Raises:
        ValueError: naming ``namespace``, ``speaker`` or ``memory`` when unusable.
    """
    if not isinstance(speaker, str) or not speaker.strip():
        raise ValueError(f"speaker must be a non-empty string, got {speaker!r}")
    template, get_memory = _check_template(namespace), _getter(memory)

    def prepare(content: str, run_config: RunnableConfig) -> tuple[RippleMem, Namespace, Conversation]:
        if is_blank(content):
            raise ToolException("content must be a non-empty statement")
        conv = single_turn_conversation(content.strip(), speaker=speaker)
        return get_memory(), resolve_namespace(template, run_config), conv

    def confirm(target: RippleMem, ns: Namespace, conv: Conversation, report: IngestReport) -> str:
        ids = report.unit_ids
        if not ids:
            return f"Nothing was stored: {'; '.join(w.error for w in report.failed_windows) or 'no memory found'}."
        noun = "memory" if len(ids) == 1 else "memories"
        if report.new_units == 0:
            return f"Already remembered in {'/'.join(ns)}: {', '.join(ids)}"
        return f"Remembered {len(ids)} {noun} in {'/'.join(ns)}: {', '.join(ids)}"

    def remember(content: str, config: RunnableConfig) -> str:
        target, ns, conv = prepare(content, config)
        return confirm(target, ns, conv, target.add_conversation(conv, namespace=ns))

    async def aremember(content: str, config: RunnableConfig) -> str:
        target, ns, conv = await asyncio.to_thread(prepare, content, config)
        return confirm(target, ns, conv, await target.aadd_conversation(conv, namespace=ns))

    return StructuredTool.from_function(func=remember, coroutine=aremember, name=name, description=description,
                                        args_schema=RememberArgs, handle_tool_error=True)


def create_correct_tool(
    memory: MemorySource,
    *,
    namespace: tuple[str, ...] | str = DEFAULT_NAMESPACE,
    name: str = "correct_memory",
    description: str = CORRECT_DESCRIPTION,
) -> StructuredTool:
    """A tool that suppresses wrong memories (``RippleMem.suppress``) on the user's word.

    Suppressed memories stay in the store for audit (``list_units(...,
    include_suppressed=True)``) but recall never returns them. Ids are looked up only
    in the caller's namespace, so a model cannot touch another user's memories.

    Args:
        memory: the ``RippleMem``, or a function returning it (called on first use).
        namespace: namespace template, e.g. ``("memories", "{user_id}")``.
        name: the tool name the model sees.
        description: the tool description the model sees.

    Raises:
        ValueError: naming ``namespace`` or ``memory`` when unusable.
    """
    template, get_memory = _check_template(namespace), _getter(memory)

    def prepare(ids: list[str], reason: str, run_config: RunnableConfig) -> tuple[
            RippleMem, Namespace, list[str], list[str]]:
        ids = list(dict.fromkeys(i.strip() for i in ids if i.strip()))
        if not ids:
            raise ToolException("ids must name at least one memory id from the recall tool")
        if not reason.strip():
            raise ToolException("reason must say why the memories are wrong")
        target, ns = get_memory(), resolve_namespace(template, run_config)
        known = {u.id for u in target.get(ids, namespace=ns)}
        return target, ns, [i for i in ids if i in known], [i for i in ids if i not in known]

    def confirm(ns: Namespace, found: list[str], unknown: list[str]) -> str:
        parts = [f"Suppressed {len(found)} {'memory' if len(found) == 1 else 'memories'} in "
                 f"{'/'.join(ns)}: {', '.join(found)}." if found else "Nothing was suppressed."]
        if unknown:
            parts.append(f"No memory with id {', '.join(unknown)} here.")
        return " ".join(parts)

    def correct(ids: list[str], reason: str, config: RunnableConfig) -> str:
        target, ns, found, unknown = prepare(ids, reason, config)
        target.suppress(found, namespace=ns, reason=reason)
        return confirm(ns, found, unknown)

    async def acorrect(ids: list[str], reason: str, config: RunnableConfig) -> str:
        target, ns, found, unknown = await asyncio.to_thread(prepare, ids, reason, config)
        await asyncio.to_thread(target.suppress, found, namespace=ns, reason=reason)
        return confirm(ns, found, unknown)

    return StructuredTool.from_function(func=correct, coroutine=acorrect, name=name, description=description,
                                        args_schema=CorrectArgs, handle_tool_error=True)


EXPLORE_DESCRIPTION = (
    "Look closer at one memory: where it came from (its conversation, session and turns, and what was said just "
    "before and after it) and the memories linked to it (sharing rare names, places or meaning), grouped by link "
    "type, strongest first. Use it when a recalled memory points at something the recall did not cover. Input: "
    "the memory's id exactly as recall_memory shows it in [brackets]."
)
TIMELINE_DESCRIPTION = (
    "List what happened in a window of time, oldest first: the memories dated from `since` to `until` (ISO dates "
    "such as '2026-03-01', datetimes, or phrases such as 'last week', 'yesterday' or 'March 2026'; leave one out "
    "for an open end), optionally only those a `person` said or took part in. A long window comes in pages: "
    "pass `page` for the next one."
)


class ExploreMemoryArgs(BaseModel):
    """Arguments of the explore_memory tool."""

    memory_id: str = Field(description="the memory's id, as recall_memory shows it in [brackets]")


class MemoryTimelineArgs(BaseModel):
    """Arguments of the memory_timeline tool."""

    since: str | None = Field(default=None, description="start: '2026-03-01', a datetime or 'last week'")
    until: str | None = Field(default=None, description="end, read the same way (a day means up to its end)")
    person: str | None = Field(default=None, description="only memories this person said or took part in")
    page: int = Field(default=1, description="which page of the window, from 1")
    page_size: int | None = Field(default=None, description=f"memories per page, 1 to {MAX_PAGE_SIZE}")


def _bad_arguments(tool: str) -> Callable[[ValidationError], str]:
    """The answer a model gets for a call whose arguments do not fit the tool, naming each bad one."""
    def answer(error: ValidationError) -> str:
        return f"{tool} was called with bad arguments: {summarise_validation(error)}"
    return answer


@contextlib.contextmanager
def _bad_values_answered() -> Iterator[None]:
    """A memory read's bad argument (``ValueError``) becomes the tool's answer instead of raising."""
    try:
        yield
    except ValueError as err:
        raise ToolException(str(err)) from None


def create_explore_memory_tool(
    memory: MemorySource,
    *,
    namespace: tuple[str, ...] | str = DEFAULT_NAMESPACE,
    limit: int = 5,
    name: str = "explore_memory",
    description: str = EXPLORE_DESCRIPTION,
) -> StructuredTool:
    """A tool that shows one memory, its source turns and its linked memories (``RippleMem.explore``).

    An unknown id (or one of another namespace) is answered with a sentence saying so.

    Args:
        memory: the ``RippleMem``, or a function returning it (called on first use).
        namespace: namespace template, e.g. ``("memories", "{user_id}")``.
        limit: linked memories shown per edge type, strongest first.
        name: the tool name the model sees.
        description: the tool description the model sees.

    Raises:
        ValueError: naming ``limit``, ``namespace`` or ``memory`` when unusable.

    Example:
        >>> from langchain_ripplemem import RippleMem
        >>> explore = create_explore_memory_tool(RippleMem(), namespace="maya")
        >>> explore.invoke({"memory_id": "0" * 32})
        "No memory with id '00000000000000000000000000000000' in maya."
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LINKS:
        raise ValueError(f"limit must be an integer from 1 to {MAX_LINKS}, got {limit!r}")
    template, get_memory = _check_template(namespace), _getter(memory)

    def prepare(run_config: RunnableConfig) -> tuple[RippleMem, Namespace]:
        return get_memory(), resolve_namespace(template, run_config)

    def explore_memory(memory_id: str, config: RunnableConfig) -> str:
        target, ns = prepare(config)
        with _bad_values_answered():
            return target.explore(memory_id, namespace=ns, limit=limit).describe()

    async def aexplore_memory(memory_id: str, config: RunnableConfig) -> str:
        target, ns = await asyncio.to_thread(prepare, config)
        with _bad_values_answered():
            return (await target.aexplore(memory_id, namespace=ns, limit=limit)).describe()

    return StructuredTool.from_function(func=explore_memory, coroutine=aexplore_memory, name=name,
                                        description=description, args_schema=ExploreMemoryArgs,
                                        handle_tool_error=True, handle_validation_error=_bad_arguments(name))


def create_memory_timeline_tool(
    memory: MemorySource,
    *,
    namespace: tuple[str, ...] | str = DEFAULT_NAMESPACE,
    page_size: int = 10,
    name: str = "memory_timeline",
    description: str = TIMELINE_DESCRIPTION,
) -> StructuredTool:
    """A tool that lists a time window's memories, oldest first, a page at a time (``RippleMem.timeline``).

    Time phrases ("last week") are relative to the call's time. A bad ``since``, ``until``,
    ``person`` or ``page`` is answered with what was wrong; a window with nothing in it, with
    a sentence saying so.

    Args:
        memory: the ``RippleMem``, or a function returning it (called on first use).
        namespace: namespace template, e.g. ``("memories", "{user_id}")``.
        page_size: memories per page when the call does not say.
        name: the tool name the model sees.
        description: the tool description the model sees.

    Raises:
        ValueError: naming ``page_size``, ``namespace`` or ``memory`` when unusable.

    Example:
        >>> from langchain_ripplemem import RippleMem
        >>> timeline = create_memory_timeline_tool(RippleMem(), namespace="maya")
        >>> timeline.invoke({"since": "2026-03-01", "until": "2026-03-07"})
        'No memories from 2026-03-01 to 2026-03-07 in maya.'
        >>> timeline.invoke({"since": "someday"})  # doctest: +ELLIPSIS
        "since must be an ISO date or datetime, ... or a time phrase such as 'last week', got 'someday'"
    """
    if isinstance(page_size, bool) or not isinstance(page_size, int) or not 1 <= page_size <= MAX_PAGE_SIZE:
        raise ValueError(f"page_size must be an integer from 1 to {MAX_PAGE_SIZE}, got {page_size!r}")
    template, get_memory, default_size = _check_template(namespace), _getter(memory), page_size

    def prepare(run_config: RunnableConfig, since: str | None, until: str | None, person: str | None,
                page: int, page_size: int | None) -> tuple[RippleMem, dict[str, Any]]:
        since, until, person = (None if value is None or is_blank(value) else value  # models send "" for unset
                                for value in (since, until, person))
        return get_memory(), {"since": since, "until": until, "person": person, "page": page,
                              "namespace": resolve_namespace(template, run_config),
                              "page_size": default_size if page_size is None else page_size}

    def memory_timeline(config: RunnableConfig, since: str | None = None, until: str | None = None,
                        person: str | None = None, page: int = 1, page_size: int | None = None) -> str:
        target, kwargs = prepare(config, since, until, person, page, page_size)
        with _bad_values_answered():
            return target.timeline(**kwargs).describe()

    async def amemory_timeline(config: RunnableConfig, since: str | None = None, until: str | None = None,
                               person: str | None = None, page: int = 1, page_size: int | None = None) -> str:
        target, kwargs = await asyncio.to_thread(prepare, config, since, until, person, page, page_size)
        with _bad_values_answered():
            return (await target.atimeline(**kwargs)).describe()

    return StructuredTool.from_function(func=memory_timeline, coroutine=amemory_timeline, name=name,
                                        description=description, args_schema=MemoryTimelineArgs,
                                        handle_tool_error=True, handle_validation_error=_bad_arguments(name))
