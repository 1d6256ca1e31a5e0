"""A picture of one recollection as a self-contained HTML page (inline SVG, no network).

The page shows the question; the kept memories as numbered nodes laid out by
session along a time axis (:mod:`langchain_ripplemem.render.layout`), ringed in the
colours of the views that found them; anchors with a dark outer ring; memories
found only by expansion ("bridged") as diamonds; the expansion paths as arrows
coloured by edge type, through grey *bridges* (memories a path ran through that
were not kept). Beside it, the controller's decision in each round. Hovering a
node shows its text; clicking it (or a table row, or ``page.html#m3``) shows its
text and why it was kept. CSS and script are inlined from ``assets/recall_html``.

Example:
    >>> from langchain_ripplemem.schemas import RecallResult
    >>> page = render_recall_html(RecallResult(query="Where is Bob moving?", namespace=("users", "bob")))
    >>> page.startswith("<!DOCTYPE html>") and "Where is Bob moving?" in page
    True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from html import escape
from importlib import resources
from pathlib import Path
from typing import Protocol

from langchain_ripplemem.render.layout import COLUMN_WIDTH, NODE_RADIUS, Column, Layout, Node, layout_recall
from langchain_ripplemem.schemas import Hit, MemoryUnit, Namespace, RecallResult, counted, format_namespace

__all__ = ["UnitSource", "bridge_units", "render_recall_html", "write_recall_html"]


class UnitSource(Protocol):
    """Where a picture reads the memories it shows but the result does not hold: a memory's ``get``."""

    def get(self, ids: Iterable[str], *, namespace: Namespace | str | None = None) -> list[MemoryUnit]:
        """Units by id within ``namespace``."""
        ...

WAY_NAMES = {"semantic": "semantic view", "lexical": "lexical view", "cue": "cue view",
             "semantic-edge": "semantic edge", "structural-edge": "structural edge", "untyped-edge": "edge"}
KIND_NAMES = {"memory": "", "dropped": " \u00b7 expanded, not kept", "bridge": " \u00b7 bridge on a path, not kept"}
CHARS_PER_COLUMN = (COLUMN_WIDTH - 10) // 6  # 10 px labels are at most ~6 px a character


def _asset(name: str) -> str:
    return (resources.files("langchain_ripplemem") / "assets" / "recall_html" / name).read_text("utf-8")


def _fit(text: str, chars: int = CHARS_PER_COLUMN) -> str:
    return text if len(text) <= chars else text[:chars - 1] + "\u2026"


def _when(unit: MemoryUnit | None) -> str:
    return unit.time.day_span() if unit is not None and unit.time is not None else "undated"


def _gap(days: float | None) -> str:
    if days is None:
        return ""
    return "same day" if days < 1 else f"+{round(days)} d"


def _ref(layout: Layout, uid: str) -> str:
    node = layout.nodes.get(uid)
    return uid[:8] if node is None else f"#{node.label}" if node.kept else node.label


def _kind(node: Node) -> str:
    return "memory" if node.kept else "dropped" if node.ways else "bridge"


# -- SVG ---------------------------------------------------------------------------------------
def _arc(way: str, index: int, count: int, radius: float) -> str:
    if count == 1:
        return f'<circle class="way" r="{radius}" style="stroke:var(--{way})"/>'
    start, end = 2 * math.pi * index / count - math.pi / 2, 2 * math.pi * (index + 1) / count - math.pi / 2
    x0, y0, x1, y1 = (radius * math.cos(start), radius * math.sin(start), radius * math.cos(end),
                      radius * math.sin(end))
    return (f'<path class="way" style="stroke:var(--{way})" '
            f'd="M{x0:.2f},{y0:.2f} A{radius},{radius} 0 0 1 {x1:.2f},{y1:.2f}"/>')


def _node_svg(node: Node) -> str:
    classes = ["node", _kind(node)] + ["anchor"] * node.anchor + ["bridged"] * node.bridged
    text = node.unit.restatement if node.unit is not None else "(text not loaded)"
    how = ", ".join(WAY_NAMES[w] for w in node.ways) or "an expansion path ran through it"
    how += "" if node.kept else "; not kept"
    title = f"{'#' if node.kept else ''}{node.label} \u00b7 {_when(node.unit)}\n{text}\nfound by: {how}"
    parts = [f'<g class="{" ".join(classes)}" data-id="{node.id}" data-label="{node.label}" tabindex="0" '
             f'transform="translate({node.x:.1f},{node.y:.1f})"><title>{escape(title)}</title>']
    r = NODE_RADIUS if node.ways else NODE_RADIUS - 3
    if node.anchor:
        parts.append(f'<circle class="anchor-ring" r="{r + 5}"/>')
    if node.bridged:  # found only by expansion: a diamond in its edge colour
        d = r + 3
        parts.append(f'<polygon class="core" points="0,{-d} {d},0 0,{d} {-d},0" '
                     f'style="stroke:var(--{node.ways[0]})"/>')
    else:
        parts.append(f'<circle class="core" r="{r}"/>')
        parts += [_arc(way, i, len(node.ways), r) for i, way in enumerate(node.ways)]
    parts.append(f'<text class="label">{escape(node.label)}</text></g>')
    return "".join(parts)


def _edge_svg(layout: Layout, index: int) -> str:
    link = layout.links[index]
    a, b = layout.nodes[link.src], layout.nodes[link.dst]
    dx, dy = b.x - a.x, b.y - a.y
    length = math.hypot(dx, dy) or 1.0
    if abs(dx) < 1:  # same session: bow out to the right so the arrow clears the nodes between
        bow = 0.45 * COLUMN_WIDTH + 0.08 * abs(dy)
        c1, c2 = (a.x + bow, a.y), (b.x + bow, b.y)
    else:
        nx, ny = -dy / length, dx / length
        c1 = c2 = (a.x + dx / 2 + nx * 0.18 * length, a.y + dy / 2 + ny * 0.18 * length)
    # end on the target's rim so the arrowhead stays visible
    ex, ey = b.x - c2[0], b.y - c2[1]
    norm = math.hypot(ex, ey) or 1.0
    end = (b.x - ex / norm * (NODE_RADIUS + 5), b.y - ey / norm * (NODE_RADIUS + 5))
    title = f"round {link.round}: {link.channel} edge {_ref(layout, link.src)} \u2192 {_ref(layout, link.dst)}"
    return (f'<path class="edge {link.channel}" data-src="{link.src}" data-dst="{link.dst}" '
            f'data-ends="{" ".join(link.ends)}" '
            f'data-channel="{link.channel}" data-round="{link.round}" marker-end="url(#arrow-{link.channel})" '
            f'd="M{a.x:.1f},{a.y:.1f} C{c1[0]:.1f},{c1[1]:.1f} {c2[0]:.1f},{c2[1]:.1f} {end[0]:.1f},{end[1]:.1f}">'
            f'<title>{escape(title)}</title></path>')


def _axis_svg(layout: Layout, column: Column) -> str:
    y, x, half = layout.axis_y, column.x, COLUMN_WIDTH / 2
    date = column.time.date().isoformat() if column.time is not None else "undated"
    parts = [f'<rect class="band{" odd" * (column.index % 2)}" x="{x - half:.1f}" y="0" width="{COLUMN_WIDTH}" '
             f'height="{y:.1f}"/>',
             f'<line class="axis" x1="{x:.1f}" y1="{y - 4:.1f}" x2="{x:.1f}" y2="{y + 4:.1f}"/>',
             f'<text class="session" x="{x:.1f}" y="{y + 20:.1f}" text-anchor="middle">{escape(_fit(column.label))}'
             f'<title>{escape(column.label)}</title></text>',
             f'<text class="date" x="{x:.1f}" y="{y + 34:.1f}" text-anchor="middle">{date}</text>']
    if column.gap_days is not None:
        parts.append(f'<text class="gap" x="{x - half:.1f}" y="{y - 7:.1f}" text-anchor="middle">'
                     f'{_gap(column.gap_days)}</text>')
    return "".join(parts)


def _svg(layout: Layout) -> str:
    markers = "".join(
        f'<marker id="arrow-{c}" viewBox="0 0 10 10" refX="8" refY="5" markerWidth="9" markerHeight="9" '
        f'markerUnits="userSpaceOnUse" '
        f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" style="fill:var(--{c}-edge)"/></marker>'
        for c in ("semantic", "structural", "untyped"))
    body = [f'<svg id="recall-graph" width="{layout.width:.0f}" height="{layout.height:.0f}" '
            f'viewBox="0 0 {layout.width:.0f} {layout.height:.0f}" role="img" '
            f'aria-label="memories by session along a time axis, with expansion paths"><defs>{markers}</defs>']
    body += [_axis_svg(layout, column) for column in layout.columns]
    body.append(f'<line class="axis" x1="{layout.columns[0].x - COLUMN_WIDTH / 2 if layout.columns else 0:.1f}" '
                f'y1="{layout.axis_y:.1f}" x2="{layout.width - 18:.1f}" y2="{layout.axis_y:.1f}"/>')
    body += [_edge_svg(layout, i) for i in range(len(layout.links))]
    body += [_node_svg(node) for node in layout.nodes.values()]
    body.append("</svg>")
    return "".join(body)


# -- side panel, details, table ----------------------------------------------------------------
def _chips(layout: Layout, ids: list[str]) -> str:
    return "".join(f'<span class="chip" data-id="{uid}">{escape(_ref(layout, uid))}</span>'
                   if uid in layout.nodes else f'<span class="chip" title="{uid}">{uid[:6]}</span>'
                   for uid in ids) or "none"


def _rounds_html(result: RecallResult, layout: Layout) -> str:
    kept = {m.unit.id for m in result.memories}
    parts = ["<h2>Controller, round by round</h2>"]
    for trace in result.rounds:
        lines = []
        if trace.round == 0:
            lines.append("<p><b>Round 0: first hop</b></p>")
            for view, ids in trace.first_hop.items():
                lines.append(f'<p><span class="sw {view}"></span> {view}: {counted(len(ids), "hit")}, '
                             f'{sum(1 for i in ids if i in kept)} kept</p>')
        else:
            lines.append(f"<p><b>Round {trace.round}: expansion</b></p>")
            lines.append(f"<p>anchors: {_chips(layout, trace.anchors)}</p>")
            if trace.target is not None:
                cues = ", ".join(trace.target.names())
                lines.append(f"<p>looking for: \u201c{escape(trace.target.restatement)}\u201d"
                             + (f" (cues: {escape(cues)})" if cues else "") + "</p>")
            lines.append(f"<p>added {len(trace.expanded)}: {_chips(layout, trace.expanded)}</p>")
        # The last round stopped the loop: sufficient, or a budget spent or nothing to expand from.
        verdict = "stop" if trace.sufficient else "stop, not sufficient" if trace is result.rounds[-1] else "expand"
        lines.append(f'<p class="decision">decision: <b>{verdict}</b> \u2014 {escape(trace.reason or "-")}</p>')
        parts.append(f'<div class="round" data-round="{trace.round}">{"".join(lines)}</div>')
    return "".join(parts)


def _why(hit: Hit, layout: Layout) -> str:
    if hit.source != "expansion":
        return f"{hit.source} view: rank {hit.rank + 1} (score {hit.score:.2f})"
    strength = f", path strength {hit.edge_weight:.2f}" if hit.edge_weight is not None else ""
    return (f"round {hit.round}: along a {hit.channel} edge {_path_words(layout, hit.path)}"
            f" (target match {hit.score:.2f}{strength})")


def _path_words(layout: Layout, path: list[str]) -> str:
    """``from #3 via b1`` for the path ``[anchor, bridge, memory]``."""
    via = [_ref(layout, uid) for uid in path[1:-1]]
    return f"from {_ref(layout, path[0]) if path else '?'}" + (f" via {', '.join(via)}" if via else "")


def _details_html(result: RecallResult, layout: Layout, node: Node) -> str:
    unit = node.unit
    facts = [f"id {node.id}", _when(unit)]
    if unit is not None:
        facts.append(f"{unit.source.conversation_id} / {unit.source.session_id} / turns "
                     f"{', '.join(unit.source.turn_ids) or '-'}")
        facts += [f"people: {', '.join(unit.participants)}"] * bool(unit.participants)
        facts += [f"places: {', '.join(unit.locations)}"] * bool(unit.locations)
    if node.memory is not None:
        m = node.memory
        head = (f"Kept at rank {node.rank} of {len(result.memories)}: assembly score {m.score:.2f} "
                f"(target alignment {m.alignment:.2f}{', anchor bonus' if m.is_anchor else ''}). Found by:")
        why = [_why(hit, layout) for hit in m.provenance]
    elif node.ways:
        head = "Found by expansion, but assembly did not keep it among the best memories:"
        why = [f"round {trace.round}: along a {trace.channels.get(node.id, 'untyped')} edge "
               + _path_words(layout, path) for trace in result.rounds if (path := trace.paths.get(node.id))]
    else:
        head = "Not kept: an expansion path ran through this memory:"
        why = [f"{_ref(layout, link.src)} \u2192 {_ref(layout, link.dst)} ({link.channel} edge, round {link.round})"
               for link in layout.links if node.id in (link.src, link.dst)]
    text = escape(unit.restatement) if unit is not None else "<i>text not loaded</i>"
    facts_line = escape(" \u00b7 ".join(facts))
    items = "".join(f"<li>{escape(w)}</li>" for w in why)
    return (f'<template data-for="{node.id}" data-label="{"m" if node.kept else ""}{node.label}">'
            f"<h2>{'#' if node.kept else ''}{escape(node.label)}{KIND_NAMES[_kind(node)]}</h2>"
            f'<p class="text">{text}</p>'
            f'<p class="facts">{facts_line}</p><p>{escape(head)}</p><ul>{items}</ul></template>')


def _table_html(result: RecallResult, layout: Layout) -> str:
    rows = []
    for rank, memory in enumerate(result.memories, start=1):
        node, unit = layout.nodes[memory.unit.id], memory.unit
        ways = "".join(f'<span class="sw {w}" title="{WAY_NAMES[w]}"></span>' for w in node.ways)
        marks = " \u2693" * memory.is_anchor + " \u25c7" * node.bridged
        rows.append(f'<tr data-id="{unit.id}"><td class="num">{rank}</td><td class="num">{memory.score:.2f}</td>'
                    f'<td class="ways">{ways}{marks}</td><td>{_when(unit)}</td>'
                    f"<td>{escape(unit.source.session_id)}</td><td>{escape(unit.restatement)}</td></tr>")
    return ('<table><thead><tr><th>#</th><th>score</th><th>found by</th><th>when</th><th>session</th>'
            f"<th>memory</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")


LEGEND = (
    '<div class="legend">' + "".join(f'<span><i class="sw {w}"></i>{n}</span>' for w, n in WAY_NAMES.items()
                                     if not w.endswith("-edge"))
    + "".join(f'<span><i class="sw line {w}"></i>{n}</span>' for w, n in WAY_NAMES.items()
               if w.endswith("-edge") and w != "untyped-edge")
    + '<span><i class="sw ring"></i>anchor</span><span><i class="sw diamond"></i>bridged (found by expansion)</span>'
    '<span><i class="sw diamond dropped"></i>e: expanded, not kept</span>'
    '<span><i class="sw bridge"></i>b: bridge on a path, not kept</span></div>'
)


def render_recall_html(result: RecallResult, units: Mapping[str, MemoryUnit] | None = None, *,
                       title: str | None = None) -> str:
    """One self-contained HTML page picturing ``result`` (see the module docs).

    Args:
        result: the recollection to draw.
        units: optional units by id for the bridges of its expansion paths, so they show their text
            and sit in their session (:func:`write_recall_html` loads them from the memory).
        title: the page title; default the question.
    """
    layout = layout_recall(result, units)
    seconds = sum(result.usage.seconds.values())
    expanded = sum(len(t.expanded) for t in result.rounds)
    meta = (f"{format_namespace(result.namespace)} \u00b7 {counted(len(result.memories), 'memory', 'memories')} "
            f"from {counted(len(layout.columns), 'session')} \u00b7 {counted(len(result.rounds), 'round')} \u00b7 "
            f"{expanded} added by expansion"
            + (f" \u00b7 {seconds:.2f} s" if seconds else ""))
    details = "".join(_details_html(result, layout, node) for node in layout.nodes.values())
    drawing = _svg(layout) if layout.nodes else "<p>No memories were recalled.</p>"
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title or result.query)}</title><style>{_asset('page.css')}</style></head><body>"
        f'<h1>RippleMem recollection</h1><p class="question">{escape(result.query)}</p>'
        f'<p class="meta">{escape(meta)}</p>{LEGEND}'
        f'<div class="layout"><div class="drawing">{drawing}</div><aside><section id="details" aria-live="polite">'
        "Hover a memory to read it; click it (or a row below) to see why it was kept.</section>"
        f'<section class="rounds">{_rounds_html(result, layout)}</section></aside></div>'
        f"{_table_html(result, layout)}{details}<script>{_asset('page.js')}</script></body></html>\n"
    )


def bridge_units(result: RecallResult, memory: UnitSource | None) -> dict[str, MemoryUnit]:
    """The units of the bridges on ``result``'s expansion paths, read from ``memory`` (none without it)."""
    if memory is None:
        return {}
    bridges = [uid for uid, node in layout_recall(result).nodes.items() if not node.kept]
    return {u.id: u for u in memory.get(bridges, namespace=result.namespace)} if bridges else {}


def write_recall_html(result: RecallResult, path: str | Path, memory: UnitSource | None = None) -> Path:
    """Write :func:`render_recall_html` of ``result`` to ``path``; with ``memory``, bridges show their text.

    Returns:
        The path written (parent directories are created).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_recall_html(result, bridge_units(result, memory)), encoding="utf-8")
    return path
