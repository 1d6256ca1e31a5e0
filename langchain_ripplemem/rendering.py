"""Plain-text rendering of recall results and their round traces (CLI and demo)."""

from __future__ import annotations

from langchain_ripplemem.schemas import RecalledMemory, RecallResult, RoundTrace


def _short(uid: str) -> str:
    return uid[:8]


def describe_memory(memory: RecalledMemory) -> str:
    """``score  [views]  turn ids  restatement`` on one line."""
    views = sorted({h.source if h.source != "expansion" else f"expand:{h.channel}" for h in memory.provenance})
    turns = ",".join(memory.unit.source.turn_ids)
    anchor = " *anchor*" if memory.is_anchor else ""
    return f"{memory.score:5.2f}  [{'+'.join(views)}]{anchor}  ({turns})  {memory.unit.restatement}"


def describe_round(trace: RoundTrace, names: dict[str, str]) -> list[str]:
    """Readable lines for one round of the trace."""
    def label(uid: str) -> str:
        return names.get(uid, _short(uid))

    lines = [f"round {trace.round}:"]
    if trace.first_hop:
        for view, ids in trace.first_hop.items():
            lines.append(f"  {view:>9} view: {', '.join(label(i) for i in ids) or '-'}")
    if trace.anchors:
        lines.append(f"  anchors: {', '.join(label(i) for i in trace.anchors)}")
    if trace.target is not None:
        cues = ", ".join([*trace.target.participants, *trace.target.locations])
        lines.append(f"  target: {trace.target.restatement!r}" + (f" cues: {cues}" if cues else ""))
    if trace.round > 0:
        lines.append(f"  expanded: {', '.join(label(i) for i in trace.expanded) or 'nothing'}")
        for uid in trace.expanded:
            path = trace.paths.get(uid, [])
            if path:
                lines.append(f"    {label(uid)} via {' -> '.join(label(p) for p in path)}")
    lines.append(f"  sufficient: {trace.sufficient} ({trace.reason})")
    return lines


def format_recall(result: RecallResult) -> str:
    """The memories of a recall, best first, then a readable trace of each round."""
    names = {m.unit.id: ",".join(m.unit.source.turn_ids) or _short(m.unit.id) for m in result.memories}
    lines = [f"Q: {result.query}", f"{len(result.memories)} memories (score [found by] (turns) text):"]
    lines += [f"  {describe_memory(m)}" for m in result.memories]
    lines.append("trace:")
    for trace in result.rounds:
        lines += [f"  {line}" for line in describe_round(trace, names)]
    if result.answer is not None:
        lines.append(f"answer: {result.answer}")
    return "\n".join(lines)
