"""Knowledge updates at recall: which of a chain of statements a question asks for comes first.

Statements that supersede one another (``superseded_by`` marks,
:mod:`~langchain_ripplemem.write.supersession`) form chains: "I live in Paris", then "I
moved to Berlin". Their scores say how well each matches the question, not which one
it asks for, and the older one often matches better ("Where does Maya *live*?"). So
after the assembly, each chain with a member among the recalled memories gets its
*asked-for* member at the best place any member of it holds (moved up, or brought in,
the list keeping its length):

* a question about the present, or about no time: the current statement (the last
  one visible; with ``as_of``, later ones are hidden, so the one current then);
* a question about the past: "before", "used to", "previously", "originally", ...
  (:data:`PAST`), or a past tense with no word of the present (:data:`NOW`): the
  statement the current one replaced ("at first", "originally": the first one);
* a question with a time ("in January"): the statement that held then.

Only a question about the present brings in a member recall did not find (it carries an
``update`` hit naming the member it was reached from): a newer statement may share no
word with the question ("Call me on 0687 220 315 from now on"), while a question about
the past is asked in the words of what it asks for.

Example:
    >>> asked_time("Where did Maya live before Berlin?", None), asked_time("Where does Maya live now?", None)
    ('past', 'now')
    >>> asked_time("What car did Tom drive?", None), asked_time("What car did Tom buy most recently?", None)
    ('past', 'now')

"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

import numpy as np

from langchain_ripplemem.index.marks import SUPERSEDED_BY, order_key, order_time
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.recall.evidence import FoundHit, recalled_memory
from langchain_ripplemem.schemas import MemoryUnit, RecalledMemory, TimeInterval

__all__ = ["FIRST", "NOW", "PAST", "Asked", "asked_time", "order_updates"]

#: Words of a question that asks about an earlier state.
PAST = re.compile(r"\b(?:before|previous(?:ly)?|used to|formerly|former|originally|initially|at first|"
                  r"(?<!how )old|earlier|"
                  r"prior|back then|in the past|no longer|anymore|any more)\b", re.IGNORECASE)
#: ... about the first state of all.
FIRST = re.compile(r"\b(?:originally|initially|at first|first)\b", re.IGNORECASE)
#: Words of a question that asks about the present, whatever its tense ("What lens did I buy most recently?").
NOW = re.compile(r"\b(?:now|currently|current|these days|nowadays|today|still|latest|most recent(?:ly)?|"
                 r"new|at the moment|right now|lately)\b", re.IGNORECASE)
_PAST_TENSE = re.compile(r"\b(?:did|was|were|had|used)\b", re.IGNORECASE)

#: What a question asks for: the current statement, an earlier one, or the one that held at a time.
Asked = Literal["now", "past", "first"] | datetime


def asked_time(question: str, time: TimeInterval | None) -> Asked:
    """Which statement of a chain ``question`` asks for (``time``: the question's own, grounded).

    A time in the question decides (its middle: the statement that held then); else
    words of the past or the first state; else a past tense without a word of the present.
    """
    if time is not None and not NOW.search(question):
        return time.start + (time.end - time.start) / 2
    if FIRST.search(question) and PAST.search(question):
        return "first"
    if PAST.search(question):
        return "past"
    if _PAST_TENSE.search(question) and not NOW.search(question):
        return "past"
    return "now"


def order_updates(memories: Sequence[RecalledMemory], index: NamespaceIndex, asked: Asked, hidden: set[str],
                  query_vector: np.ndarray, k: int) -> list[RecalledMemory]:
    """``memories`` with each chain's asked-for member at the chain's best place, at most ``k`` of them.

    Args:
        memories: the assembly's memories, best first.
        index: the namespace's view (marks and the reverse map ``supersedes``).
        asked: :func:`asked_time` of the question.
        hidden: ids recall must not return (suppressed; with ``as_of``, later statements).
        query_vector: the query's unit vector, the alignment of a memory brought in.
        k: how many memories to return.
    """
    if not index.supersedes and not any(m.unit.metadata.get(SUPERSEDED_BY) for m in memories):
        return list(memories)[:k]
    out = list(memories)
    done: set[str] = set()
    at = 0
    while at < len(out):
        member = out[at].unit
        chain = _chain(index, member, hidden)
        if member.id in done or len(chain) < 2:
            at += 1
            continue
        done.update(u.id for u in chain)
        wanted = _wanted(chain, asked)
        place = next((i for i, m in enumerate(out) if m.unit.id == wanted.id), None)
        # Brought in only for the present: a newer statement may share no word with the question. One about
        # the past is asked in the older statement's words, and a chain member found for them is what it asks.
        if wanted.id != member.id and (place is not None or asked == "now"):
            moved = out.pop(place) if place is not None else _brought(index, wanted, member, out[at], query_vector)
            # It takes the place, and the score there: the list stays in score order.
            out.insert(at, moved if moved.score >= out[at].score else moved.model_copy(update={"score": out[at].score}))
        at += 1
    return out[:k]


def _chain(index: NamespaceIndex, unit: MemoryUnit, hidden: set[str]) -> list[MemoryUnit]:
    """The visible statements linked to ``unit`` by ``superseded_by`` marks, in statement order."""
    seen: dict[str, MemoryUnit] = {unit.id: unit}
    todo = [unit]
    while todo:
        current = todo.pop()
        linked = [*index.supersedes.get(current.id, ()), current.metadata.get(SUPERSEDED_BY)]
        for uid in linked:
            if uid is None or uid in seen or uid in hidden:
                continue
            found = index.unit(uid)
            if found is not None:
                seen[uid] = found
                todo.append(found)
    return sorted(seen.values(), key=order_key)


def _wanted(chain: list[MemoryUnit], asked: Asked) -> MemoryUnit:
    """The member of a chain (statement order) the question asks for."""
    if asked == "now":
        return chain[-1]
    if asked == "first":
        return chain[0]
    if asked == "past":
        current = chain[-1]
        replaced = [u for u in chain if u.metadata.get(SUPERSEDED_BY) == current.id]
        return replaced[-1] if replaced else chain[-2]
    held = [u for u in chain if order_time(u) <= asked]
    return held[-1] if held else chain[0]


def _brought(index: NamespaceIndex, unit: MemoryUnit, source: MemoryUnit, displaced: RecalledMemory,
             query_vector: np.ndarray) -> RecalledMemory:
    """A chain member recall did not find, at the place (and score) of the member it was reached from."""
    cosine = float(index.matrix[index.pos[unit.id]] @ query_vector)
    return recalled_memory(unit, displaced.score, cosine, False,
                           [FoundHit("update", 0, 1.0, anchor=source.id, path=(source.id, unit.id))])
