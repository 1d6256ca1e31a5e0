"""What the tools of ``ripplemem mcp`` do to the memory, and what each answers (no MCP SDK here).

Each blocking tool body is a plain function of the memory and a namespace the server's
scope has resolved (:class:`~langchain_ripplemem.server.mcp.NamespaceScope`); the server
runs it in a worker thread. Each returns its tool's outcome, a pydantic model that is the
tool's structured content (:mod:`~langchain_ripplemem.server.mcp` words the text beside it).
A remember that fails stores nothing; a forget or correct names the ids it did not find.

Example:
    >>> from langchain_ripplemem import RippleMem
    >>> from langchain_ripplemem.conversations.messages import single_turn_conversation
    >>> memory = RippleMem()
    >>> said = single_turn_conversation("Maya is vegetarian.", speaker="user")
    >>> done = remember_conversation(memory, ("maya",), said)
    >>> done.new, known_and_unknown(memory, ("maya",), [*done.memory_ids, "nope"])[1]
    (1, ['nope'])
    >>> correct_memories(memory, ("maya",), done.memory_ids, "wrong", restore=False).changed == done.memory_ids
    True

"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from langchain_ripplemem.schemas import Conversation, Namespace, counted, format_namespace
from langchain_ripplemem.write.forget import ForgetReport

if TYPE_CHECKING:
    from langchain_ripplemem.memory import RippleMem

__all__ = ["Corrected", "Forgotten", "NamespaceList", "Remembered", "correct_memories", "forget_memories",
           "known_and_unknown", "remember_conversation", "unknown_ids_note"]


class Remembered(BaseModel):
    """What a remember call stored."""

    namespace: str
    conversation_id: str
    memory_ids: list[str] = Field(description="every memory of the input (new or already stored)")
    new: int = Field(description="memories stored by this call")
    links: dict[str, int] = Field(description="new links per type (semantic, structural)")
    superseded: list[str] = Field(default_factory=list, description="older memories these supersede")
    warnings: list[str] = Field(default_factory=list)


class Forgotten(BaseModel):
    """What a forget call deleted, and where it erased the memories from (``ForgetReport``)."""

    namespace: str
    deleted: int
    memory_ids: list[str] = Field(default_factory=list, description="the memories deleted")
    links: int = Field(default=0, description="links deleted with them")
    files: list[str] = Field(default_factory=list,
                             description="files rewritten so that nothing of the memories remains in them")
    kept: list[str] = Field(default_factory=list,
                            description="what a server backend may still keep, and how its operator purges it")
    unknown_ids: list[str] = Field(default_factory=list, description="ids not found in the namespace")

    @classmethod
    def of(cls, report: ForgetReport, unknown_ids: list[str] | None = None) -> Forgotten:
        """The tool's outcome of a memory's :class:`~langchain_ripplemem.write.forget.ForgetReport`."""
        return cls(namespace=format_namespace(report.namespace), deleted=report.units,
                   memory_ids=list(report.unit_ids), links=report.edges, files=list(report.files),
                   kept=list(report.kept), unknown_ids=unknown_ids or [])


class Corrected(BaseModel):
    """What a correct call changed."""

    namespace: str
    suppressed: bool = Field(description="true: hidden from recall; false: restored")
    changed: list[str]
    unknown_ids: list[str] = Field(default_factory=list, description="ids not found in the namespace")


class NamespaceList(BaseModel):
    """The namespaces a server reaches that hold memories."""

    namespaces: list[str]


def remember_conversation(memory: RippleMem, ns: Namespace, conv: Conversation) -> Remembered:
    """Ingest ``conv``; when any window fails, delete what this call stored and raise (all or nothing)."""
    before = {u.id for u in memory.list_units(ns, include_suppressed=True) if u.source.conversation_id == conv.id}
    report = memory.add_conversation(conv, namespace=ns)
    if report.failed_windows:
        memory.delete([uid for uid in report.unit_ids if uid not in before], namespace=ns)
        failures = "; ".join(f"turns {', '.join(w.turn_ids)}: {w.error}" for w in report.failed_windows)
        raise ValueError(f"nothing was stored: the extractor failed on {failures}")
    return Remembered(namespace=format_namespace(ns), conversation_id=conv.id, memory_ids=report.unit_ids,
                      new=report.new_units, links=report.edges, superseded=report.superseded,
                      warnings=report.warnings)


def known_and_unknown(memory: RippleMem, ns: Namespace, ids: list[str] | None) -> tuple[list[str], list[str]]:
    """``(known, unknown)`` ids of ``ns``; raises when ``ids`` names none."""
    ids = list(dict.fromkeys(i.strip() for i in ids or [] if i.strip()))
    if not ids:
        raise ValueError("memory_ids must name at least one memory id, as recall shows it in [brackets]")
    known = {u.id for u in memory.get(ids, namespace=ns)}
    return [i for i in ids if i in known], [i for i in ids if i not in known]


def unknown_ids_note(ids: list[str]) -> str:
    """The sentence a forget or correct adds for ids not in the namespace (empty when all were)."""
    return f" No memory with id {', '.join(ids)} in this namespace." if ids else ""


def forget_memories(memory: RippleMem, ns: Namespace, memory_ids: list[str] | None, conversation_id: str | None,
                    erase_namespace: bool, confirm: str | None) -> Forgotten:
    """Delete by ids, by conversation, or the whole namespace (then ``confirm`` must be its name).

    Raises:
        ValueError: not exactly one of ``memory_ids``, ``conversation_id``, ``erase_namespace``; an
            unconfirmed erase, saying how many memories it would delete.
    """
    chosen = [name for name, given in (("memory_ids", memory_ids is not None),
                                       ("conversation_id", conversation_id is not None),
                                       ("erase_namespace", erase_namespace)) if given]
    if len(chosen) != 1:
        raise ValueError("pass exactly one of memory_ids, conversation_id or erase_namespace=true, got "
                         f"{' and '.join(chosen) or 'none'}")
    name = format_namespace(ns)
    if erase_namespace:
        if confirm != name:
            units = memory.stats(ns).units
            raise ValueError(f"erasing namespace {name!r} deletes all {counted(units, 'memory', 'memories')} in it: "
                             f"call again with confirm={name!r}" + (f" (got confirm={confirm!r})" if confirm else ""))
        return Forgotten.of(memory.delete_namespace(ns))
    if conversation_id is not None:
        return Forgotten.of(memory.delete_conversation(conversation_id, namespace=ns))
    known, unknown = known_and_unknown(memory, ns, memory_ids)
    return Forgotten.of(memory.delete(known, namespace=ns) if known else ForgetReport(namespace=ns), unknown)


def correct_memories(memory: RippleMem, ns: Namespace, memory_ids: list[str] | None, reason: str,
                     restore: bool) -> Corrected:
    """Suppress the known ids with ``reason`` (the user's correction), or with ``restore`` recall them again.

    Raises:
        ValueError: no id given, or a blank ``reason`` for a suppression.
    """
    known, unknown = known_and_unknown(memory, ns, memory_ids)
    if not restore and not reason.strip():
        raise ValueError("reason must say why the memories are wrong (the user's correction)")
    if known:
        if restore:
            memory.unsuppress(known, namespace=ns)
        else:
            memory.suppress(known, namespace=ns, reason=reason.strip())
    return Corrected(namespace=format_namespace(ns), suppressed=not restore, changed=known, unknown_ids=unknown)
