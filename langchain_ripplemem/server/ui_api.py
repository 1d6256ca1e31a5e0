"""The JSON answers of ``ripplemem ui``: what each route reads or forgets, and the errors it names.

Each route is a function of the memory and the request's arguments (query
parameters, or a POST's JSON body) that returns what the page shows, as plain JSON
values. A bad argument raises :class:`ApiError` with the HTTP status and a message
naming it (an unknown argument, a namespace that holds no memories, an offset that
is not a number, a memory id the namespace does not hold, a forget without its
confirmation); :mod:`langchain_ripplemem.server.ui_page` turns it into the response.

Example:
    >>> from langchain_ripplemem.memory import RippleMem
    >>> memory = RippleMem()
    >>> try:
    ...     timeline(memory, {"namespace": "users/maya", "offset": "ten"})
    ... except ApiError as err:
    ...     err.status, err.message
    (400, "offset must be a whole number, got 'ten'")
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date
from typing import TYPE_CHECKING, Any

from langchain_ripplemem.index.marks import SUPERSEDED_BY, is_suppressed
from langchain_ripplemem.render.html_page import bridge_units, render_recall_html
from langchain_ripplemem.schemas import MemoryUnit, Namespace, format_namespace, validate_namespace
from langchain_ripplemem.server.ui_timeline import (
    Filters,
    current_index,
    forget_person,
    memory_links,
    overview,
    timeline_page,
)
from langchain_ripplemem.write.forget import ForgetReport

if TYPE_CHECKING:
    from langchain_ripplemem.memory import RippleMem

__all__ = ["COUNTED", "FORGET_KINDS", "MAX_K", "ApiError", "forget", "memory_detail", "namespace_overview",
           "namespaces", "recall", "timeline", "unit_row"]

MAX_K = 100  # memories a recall from the page returns at most
# Namespaces counted whatever it costs (a count loads the namespace's index); past them, only those loaded already
# are: a store of thousands of namespaces lists them all without loading each.
COUNTED = 20
FORGET_KINDS = ("memory", "conversation", "person")


class ApiError(Exception):
    """A request the page's API refuses: its HTTP status and a message naming what was wrong."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def _arguments(given: Mapping[str, Any], route: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    """Refuse arguments the route does not take and missing required ones, naming them."""
    takes = (*required, *optional)
    unknown = [name for name in given if name not in takes]
    if unknown:
        raise ApiError(400, f"unknown argument {', '.join(map(repr, unknown))}: {route} takes {', '.join(takes)}")
    missing = [name for name in required if given.get(name) in (None, "")]
    if missing:
        raise ApiError(400, f"{route} needs {', '.join(missing)}")


def _text(given: Mapping[str, Any], name: str) -> str | None:
    value = given.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ApiError(400, f"{name} must be a string, got {value!r}")
    return value


def _whole(given: Mapping[str, Any], name: str, default: int) -> int:
    value = given.get(name)
    if value is None or value == "":
        return default
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    raise ApiError(400, f"{name} must be a whole number, got {value!r}")


def _namespace(memory: RippleMem, given: Mapping[str, Any]) -> Namespace:
    """The ``namespace`` argument, which must hold memories (404 naming the ones that do, otherwise)."""
    try:
        ns = validate_namespace(given["namespace"], argument="namespace")
    except ValueError as err:
        raise ApiError(400, str(err)) from None
    known = memory.namespaces()
    if ns not in known:
        names = ", ".join(sorted(map(format_namespace, known))[:20]) or "none"
        raise ApiError(404, f"namespace {format_namespace(ns)!r} holds no memories (namespaces: {names})")
    return ns


def unit_row(unit: MemoryUnit) -> dict[str, Any]:
    """What the timeline shows of a memory."""
    speaker = unit.metadata.get("speaker")
    return {"id": unit.id, "text": unit.restatement, "day": unit.time.day_span() if unit.time else None,
            "start": unit.time.start.isoformat() if unit.time else None,
            "speaker": speaker if isinstance(speaker, str) else None, "participants": unit.participants,
            "locations": unit.locations, "conversation": unit.source.conversation_id,
            "session": unit.source.session_id, "suppressed": is_suppressed(unit),
            "superseded": bool(unit.metadata.get(SUPERSEDED_BY))}


# -- the routes -------------------------------------------------------------------------
def namespaces(memory: RippleMem, given: Mapping[str, Any]) -> dict[str, Any]:
    """Every namespace with its number of memories: the first :data:`COUNTED`, and the others loaded already."""
    _arguments(given, "/api/namespaces", ())
    found = sorted(memory.namespaces())
    counts = [len(current_index(memory, ns)) if i < COUNTED else
              len(index) if (index := memory.index.cached(ns)) is not None else None for i, ns in enumerate(found)]
    return {"namespaces": [{"namespace": format_namespace(ns), "units": n}
                           for ns, n in zip(found, counts, strict=True)]}


def namespace_overview(memory: RippleMem, given: Mapping[str, Any]) -> dict[str, Any]:
    """One namespace's counts and its people, places and conversations."""
    _arguments(given, "/api/overview", ("namespace",))
    ns = _namespace(memory, given)
    return overview(current_index(memory, ns)).model_dump(mode="json")


def timeline(memory: RippleMem, given: Mapping[str, Any]) -> dict[str, Any]:
    """One page of a namespace's memories in time order, filtered."""
    _arguments(given, "/api/timeline", ("namespace",),
               ("person", "place", "conversation", "text", "offset", "limit", "order", "at"))
    offset, limit = _whole(given, "offset", 0), _whole(given, "limit", 50)
    at = _text(given, "at")
    try:
        day = date.fromisoformat(at) if at else None
    except ValueError:
        raise ApiError(400, f"at must be a date as YYYY-MM-DD, got {at!r}") from None
    ns = _namespace(memory, given)
    try:
        filters = Filters(person=_text(given, "person"), place=_text(given, "place"),
                          conversation=_text(given, "conversation"), text=_text(given, "text"))
        page = timeline_page(current_index(memory, ns), filters, offset=offset, limit=limit,
                             order=_text(given, "order") or "oldest", at=day)  # type: ignore[arg-type]
    except ValueError as err:
        raise ApiError(400, str(err)) from None
    out = page.model_dump(mode="json", exclude={"units"})
    out["units"] = [unit_row(u) for u in page.units]
    return out


def memory_detail(memory: RippleMem, given: Mapping[str, Any]) -> dict[str, Any]:
    """One memory whole, with its links by type, each linked memory with its text."""
    _arguments(given, "/api/memory", ("namespace", "id"))
    ns, uid = _namespace(memory, given), _text(given, "id") or ""
    links = memory_links(current_index(memory, ns), uid, memory.edge_backend.edges(ns, [uid]))
    if links is None:
        raise ApiError(404, f"namespace {format_namespace(ns)!r} holds no memory {uid!r}")
    by_type: dict[str, list[dict[str, Any]]] = {}
    for edge in sorted(links.edges, key=lambda e: -e.weight):
        other = edge.dst if edge.src == uid else edge.src
        by_type.setdefault(edge.type, []).append({"id": other, "weight": round(edge.weight, 4)})
    for kind, ids in (("session", [i for i in (links.previous, links.next) if i]), ("same turns", links.same_turns),
                      ("superseded by", [links.superseded_by] if links.superseded_by else []),
                      ("supersedes", links.supersedes)):
        if ids:
            by_type[kind] = [{"id": i, "role": "before" if i == links.previous else "after" if i == links.next
                              else None} if kind == "session" else {"id": i} for i in ids]
    linked = {u.id: u for u in memory.get({i["id"] for rows in by_type.values() for i in rows}, namespace=ns)}
    for rows in by_type.values():
        for row in rows:
            unit = linked.get(row["id"])
            row.update({"text": unit.restatement, "day": unit.time.day_span() if unit and unit.time else None}
                       if unit else {"text": None, "day": None})
    return {"unit": {**unit_row(links.unit), **links.unit.model_dump(mode="json")}, "links": by_type}


def recall(memory: RippleMem, given: Mapping[str, Any]) -> dict[str, Any]:
    """A recollection for a question: its memories, its rounds and the picture of it (one HTML page)."""
    _arguments(given, "/api/recall", ("namespace", "query"), ("k",))
    query, k = _text(given, "query") or "", _whole(given, "k", 10)
    if not 1 <= k <= MAX_K:
        raise ApiError(400, f"k must be from 1 to {MAX_K}, got {k}")
    ns = _namespace(memory, given)
    try:
        result = memory.recall(query, namespace=ns, k=k)
    except ValueError as err:
        raise ApiError(400, str(err)) from None
    rounds = [{"round": t.round, "sufficient": t.sufficient, "reason": t.reason, "anchors": t.anchors,
               "expanded": t.expanded, "first_hop": t.first_hop} for t in result.rounds]
    return {"query": result.query, "namespace": format_namespace(ns), "rounds": rounds,
            "memories": [{**unit_row(m.unit), "score": round(m.score, 4), "anchor": m.is_anchor,
                          "found_by": sorted({h.source for h in m.provenance})} for m in result.memories],
            "picture": render_recall_html(result, bridge_units(result, memory)),
            "seconds": round(sum(result.usage.seconds.values()), 3)}


def forget(memory: RippleMem, given: Mapping[str, Any]) -> dict[str, Any]:
    """Forget a memory, a conversation or a person's memories; ``confirm`` must repeat what is forgotten."""
    _arguments(given, "/api/forget", ("namespace", "what", "target", "confirm"))
    what, target, confirm = _text(given, "what"), _text(given, "target") or "", _text(given, "confirm")
    if what not in FORGET_KINDS:
        raise ApiError(400, f"what must be one of {', '.join(FORGET_KINDS)}, got {what!r}")
    if confirm != target:
        raise ApiError(400, f"confirm must repeat the {what} to forget ({target!r}), got {confirm!r}: "
                       "nothing forgotten")
    ns = _namespace(memory, given)
    where = f"namespace {format_namespace(ns)!r}"
    forgetters: dict[str, Callable[[], ForgetReport]] = {
        "memory": lambda: memory.delete([target], namespace=ns),
        "conversation": lambda: memory.delete_conversation(target, namespace=ns),
        "person": lambda: forget_person(memory, target, ns)}
    if what == "memory" and not memory.get([target], namespace=ns):
        raise ApiError(404, f"{where} holds no memory {target!r}: nothing forgotten")
    report = forgetters[what]()
    if not report.units:
        raise ApiError(404, f"{where} holds no memories of {what} {target!r}: nothing forgotten")
    return {**report.model_dump(mode="json"), "summary": report.summary()}
