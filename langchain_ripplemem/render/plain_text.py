r"""Plain-text rendering of recall results, traces and store contents (CLI and demo).

Everything stored or asked is untrusted text, so every printer goes through
:func:`terminal_text` (or :func:`json_text` for ``--json``): control, format
and bidi characters (ANSI escapes, NUL, U+202E) are shown as escapes instead
of acting on the terminal. Long texts are cut to :data:`DISPLAY_CHARS` with a
note saying so, unless ``full=True``.

Labels in a recall's listing and trace (one scheme, never a bare turn id, which
repeats across conversations): listed memories are ``#1``, ``#2``, ... in listing
order; any other memory is ``conversation:turn`` (its first turn), with ``~2``,
``~3`` added when several memories of the output share that label; a memory
that is no longer in the store shows the first 8 characters of its id. When
every memory of the output comes from one conversation, the header names it
once and labels leave it out (``S3:2``).

Example:
    >>> terminal_text("ok\u202etxt.exe \x1b[31mred")
    'ok\\u202etxt.exe \\x1b[31mred'
    >>> clip("a" * 10, 4)
    ('aaaa… [+6 chars]', True)
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

from langchain_ripplemem.index import marks
from langchain_ripplemem.schemas import (
    MemoryUnit,
    NamespaceStats,
    RecalledMemory,
    RecallResult,
    RoundTrace,
    counted,
    format_namespace,
)

DISPLAY_CHARS = 240  # longest text shown in a listing line before it is cut
CUT_NOTE = "(long texts were cut: --full prints them whole, --json prints everything)"
# Categories that act on a terminal or hide text: controls, format (bidi, zero-width), separators, surrogates.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_JOINERS = frozenset({"\u200c", "\u200d"})  # ZWNJ/ZWJ shape scripts and emoji: harmless, kept
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _unsafe(ch: str) -> bool:
    return unicodedata.category(ch) in _UNSAFE_CATEGORIES and ch not in _JOINERS


def _escape(text: str, keep: str, escape: Any) -> str:
    if text.isprintable():  # fast path: nothing unsafe (isprintable is false for every unsafe character)
        return text
    return "".join(escape(ch) if ch not in keep and _unsafe(ch) else ch for ch in text)


def _python_escape(ch: str) -> str:
    code = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON spells characters beyond the BMP
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def terminal_text(text: str, *, multiline: bool = False) -> str:
    r"""``text`` with every control, format or bidi character written as a Python escape.

    Args:
        text: untrusted text (stored memories, queries, ids, error messages).
        multiline: keep line breaks and tabs (whole reports); else they are escaped too (one-line fields).

    Example:
        >>> terminal_text("a\nb\x00"), terminal_text("a\nb", multiline=True)
        ('a\\nb\\x00', 'a\nb')
    """
    return _escape(text, "\n\t" if multiline else "", _python_escape)


def json_text(data: Any) -> str:
    r"""``data`` as indented JSON whose strings spell unsafe characters as ``\uXXXX`` (same value, safe to print).

    Example:
        >>> json_text({"q": "x\u202ey"})
        '{\n  "q": "x\\u202ey"\n}'
    """
    # Raw line breaks in the dump are the indentation's own (json escapes those inside strings).
    return _escape(json.dumps(data, indent=2, ensure_ascii=False), "\n", _json_escape)


def clip(text: str, limit: int | None = DISPLAY_CHARS) -> tuple[str, bool]:
    """``text`` cut to ``limit`` characters with a note of what was left out (``limit=None``: whole).

    Returns:
        The text to show and whether it was cut.
    """
    if limit is None or len(text) <= limit:
        return text, False
    return f"{text[:limit]}… [+{len(text) - limit} chars]", True


class _Line:
    """One-line fields for a report: escaped, cut unless ``full``, remembering whether anything was cut."""

    def __init__(self, full: bool) -> None:
        self.limit, self.cut = (None if full else DISPLAY_CHARS), False

    def __call__(self, text: str) -> str:
        shown, cut = clip(text, self.limit)
        self.cut |= cut
        return terminal_text(shown)


def memory_line(label: str, unit: MemoryUnit, *, undated: str = "-") -> str:
    """One memory on one line for a model: ``label | days | text`` (prompts, tool results, the controller).

    Whitespace in the text is collapsed, so a memory never starts a line of its own.

    Example:
        >>> from langchain_ripplemem.schemas import Provenance
        >>> unit = MemoryUnit.create(namespace=("m",), restatement="Maya:  I love   sushi.",
        ...                          source=Provenance(conversation_id="c", session_id="s"))
        >>> memory_line("[1]", unit)
        '[1] | - | Maya: I love sushi.'

    """
    when = unit.time.day_span() if unit.time is not None else undated
    return f"{label} | {when} | {' '.join(unit.restatement.split())}"


def turns_label(unit: MemoryUnit, *, conversation: bool = True) -> str:
    """``conversation:turn,turn`` of a unit (every turn it came from; without the conversation if asked)."""
    turns = ",".join(unit.source.turn_ids) or unit.source.session_id
    return f"{unit.source.conversation_id}:{turns}" if conversation else turns


def _first_turn_label(unit: MemoryUnit, conversation: bool) -> str:
    turn = unit.source.turn_ids[0] if unit.source.turn_ids else unit.source.session_id
    return f"{unit.source.conversation_id}:{turn}" if conversation else turn


def _conversations(result: RecallResult, units: Mapping[str, MemoryUnit]) -> set[str]:
    shown = [m.unit for m in result.memories] + [units[i] for i in trace_ids(result) if i in units]
    return {u.source.conversation_id for u in shown}


def trace_ids(result: RecallResult) -> list[str]:
    """Every unit id a recall's trace mentions, in order of first mention."""
    def mentioned() -> Iterator[str]:
        for trace in result.rounds:
            for ids in trace.first_hop.values():
                yield from ids
            yield from trace.anchors
            yield from trace.expanded
            for path in trace.paths.values():
                yield from path
    return list(dict.fromkeys(mentioned()))


def recall_labels(result: RecallResult, units: Mapping[str, MemoryUnit] | None = None) -> dict[str, str]:
    """Unambiguous labels for the memories and trace ids of ``result`` (scheme in the module docstring).

    Args:
        result: the recall.
        units: the stored units of trace ids that are not listed memories (others fall back to a short id).
    """
    units = units or {}
    with_conversation = len(_conversations(result, units)) > 1
    labels = {m.unit.id: f"#{n}" for n, m in enumerate(result.memories, 1)}
    # Listed memories claim their conversation:turn too, so no other memory is shown with it bare.
    seen: dict[str, int] = {}
    for memory in result.memories:
        base = _first_turn_label(memory.unit, with_conversation)
        seen[base] = seen.get(base, 0) + 1
    for uid in trace_ids(result):
        if uid in labels:
            continue
        unit = units.get(uid)
        if unit is None:
            labels[uid] = uid[:8]
            continue
        base = _first_turn_label(unit, with_conversation)
        seen[base] = seen.get(base, 0) + 1
        labels[uid] = base if seen[base] == 1 else f"{base}~{seen[base]}"
    return {uid: terminal_text(label) for uid, label in labels.items()}


def describe_memory(memory: RecalledMemory, label: str, line: _Line | None = None, *,
                    conversation: bool = True) -> str:
    """``#n  score  [views]  conversation:turns  restatement`` on one line."""
    line = line or _Line(full=False)
    views = sorted({h.source if h.source != "expansion" else f"expand:{h.channel}" for h in memory.provenance})
    anchor = " anchor" if memory.is_anchor else ""
    turns = line(turns_label(memory.unit, conversation=conversation))
    again = f" (+{len(memory.repeats)} said again)" if memory.repeats else ""
    return (f"{label:>3}  {memory.score:5.2f}  [{'+'.join(views)}]{anchor}  {turns}{again}  "
            f"{line(memory.unit.restatement)}")


def describe_round(trace: RoundTrace, names: Mapping[str, str], line: _Line | None = None) -> list[str]:
    """Readable lines for one round of the trace; ``names`` labels unit ids (else their first 8 characters)."""
    line = line or _Line(full=False)

    def label(uid: str) -> str:
        return names.get(uid) or terminal_text(uid[:8])

    def labels(ids: Iterable[str]) -> str:
        return ", ".join(label(i) for i in ids)

    lines = [f"round {trace.round}:"]
    for view, ids in trace.first_hop.items():
        lines.append(f"  {terminal_text(view):>9} view: {labels(ids) or '-'}")
    if trace.anchors:
        lines.append(f"  anchors: {labels(trace.anchors)}")
    if trace.target is not None:
        cues = ", ".join(trace.target.names())
        lines.append(f"  target: {line(trace.target.restatement)}" + (f"  cues: {line(cues)}" if cues else ""))
    if trace.round > 0:
        lines.append(f"  expanded: {labels(trace.expanded) or 'nothing'}")
        for uid in trace.expanded:
            if trace.paths.get(uid):
                lines.append(f"    {label(uid)} via {' -> '.join(label(p) for p in trace.paths[uid])}")
    # A stop for a spent budget or nothing to expand from is no sufficiency: the line says which it was.
    lines.append(f"  {'sufficient' if trace.sufficient else 'not sufficient'}: {line(trace.reason) or '-'}")
    return lines


def format_recall(result: RecallResult, *, units: Mapping[str, MemoryUnit] | None = None,
                  full: bool = False) -> str:
    """The memories of a recall, best first, then a readable trace of each round.

    Args:
        result: the recall.
        units: stored units of trace ids beyond the listed memories, for their labels.
        full: print long texts whole instead of cutting them at :data:`DISPLAY_CHARS`.
    """
    line, units = _Line(full), units or {}
    names = recall_labels(result, units)
    conversations = _conversations(result, units)
    single = f", all from conversation {line(next(iter(conversations)))}" if len(conversations) == 1 else ""
    turns = "turns" if single else "conversation:turns"
    lines = [f"Q: {line(result.query)}",
             f"{counted(len(result.memories), 'memory', 'memories')}{single} (#  score  [found by]  {turns}  text):"]
    lines += [f"  {describe_memory(m, names[m.unit.id], line, conversation=not single)}" for m in result.memories]
    lines.append(f"trace (#n: memory n above; others by {turns[:-1]}, ~2 for a second memory of that turn):")
    for trace in result.rounds:
        lines += [f"  {text}" for text in describe_round(trace, names, line)]
    if result.answer is not None:
        lines.append(f"answer: {terminal_text(result.answer, multiline=True)}")
    if line.cut:
        lines.append(CUT_NOTE)
    return "\n".join(lines)


def format_namespace_counts(counts: Mapping[tuple[str, ...], tuple[int, int]], store: str) -> str:
    """One line per namespace: ``units  (suppressed)  namespace``."""
    if not counts:
        return f"store {terminal_text(store)} holds no memories"
    lines = [f"{counted(len(counts), 'namespace')} in {terminal_text(store)} (units  namespace):"]
    for ns, (units, suppressed) in counts.items():
        hidden = f"  ({suppressed} suppressed)" if suppressed else ""
        lines.append(f"  {units:>6}  {terminal_text(format_namespace(ns))}{hidden}")
    return "\n".join(lines)


def format_units(units: list[MemoryUnit], *, offset: int, total: int, full: bool = False) -> str:
    """A page of units (``id  conversation:turns  date  text``) with where it sits among ``total``."""
    line = _Line(full)
    lines = []
    for unit in units:
        date = unit.time.start.date().isoformat() if unit.time is not None else "-"
        flags = "".join(f" [{mark}]" for mark, on in (("suppressed", marks.is_suppressed(unit)),
                                                       ("superseded", unit.metadata.get(marks.SUPERSEDED_BY)))
                        if on)
        lines.append(f"  {terminal_text(unit.id)}  {line(turns_label(unit))}  {date}{flags}  "
                     f"{line(unit.restatement)}")
    if not total:
        return "no units"
    shown = f"units {offset + 1}-{offset + len(units)} of {total}" if units else f"no units past {offset} of {total}"
    more = f"; --offset {offset + len(units)} for more" if offset + len(units) < total else ""
    return "\n".join([f"{shown}{more} (id  conversation:turns  date  text):", *lines]
                     + ([CUT_NOTE] if line.cut else []))


def format_stats(stats: NamespaceStats) -> str:
    """What one namespace holds, one fact per line."""
    def day(value: Any) -> str:
        return value.date().isoformat() if value is not None else "-"

    conversations, _ = clip(", ".join(stats.conversations), DISPLAY_CHARS)
    edges = ", ".join(f"{n} {kind}" for kind, n in stats.edges.items()) or "0"
    return "\n".join([
        f"namespace {terminal_text(format_namespace(stats.namespace))}",
        f"  units:         {stats.units} ({stats.suppressed} suppressed, {stats.superseded} superseded)",
        f"  conversations: {len(stats.conversations)} ({terminal_text(conversations)})",
        f"  sessions:      {stats.sessions}",
        f"  edges:         {edges}",
        f"  time span:     {day(stats.first_time)} .. {day(stats.last_time)}",
    ])


class ForgetSummary(Protocol):
    """What :func:`format_forget` reads of a forget's report (a ``write.forget.ForgetReport``)."""

    # Read-only properties: a frozen model's fields (ForgetReport's) do not match settable protocol members.
    @property
    def files(self) -> tuple[str, ...]:
        """Files rewritten or removed so that none of the units' bytes remain in them."""
        ...

    @property
    def kept(self) -> tuple[str, ...]:
        """What may still hold the units, out of the package's reach, and how to purge it."""
        ...

    def summary(self) -> str:
        """One line: how many units and edges left which namespace."""
        ...


def format_forget(report: ForgetSummary, store: str) -> str:
    """What a forget deleted, the files it rewrote (relative to ``store`` when inside it), and what may remain."""
    def shown(path: str) -> str:
        try:
            return str(Path(path).relative_to(store))
        except ValueError:
            return path

    lines = [f"{report.summary()} of {store!r}"]
    if report.files:
        lines.append(f"erased from: {', '.join(shown(f) for f in report.files)}")
    lines += [f"kept: {kept}" for kept in report.kept]
    return "\n".join(lines)
