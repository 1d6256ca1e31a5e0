"""Repeats: one speaker's identical restatements are one memory in a recall's result.

Said 200 times ("continue", "Thanks, bye!", a pasted note), the same words by the
same speaker are 200 units, all stored, each with its turn. A result of five
copies of one sentence tells an agent nothing the first did not, and takes four
places from other memories. So assembly keeps the best-ranked copy in its place,
folds the others into it (:attr:`~langchain_ripplemem.schemas.RecalledMemory.repeats`
lists where each was said, every copy in the namespace, found or not), and the
places they leave go to the next memories. Identical means the same speaker
(``metadata["speaker"]``; none, for a unit without one) and the same restatement
once whitespace and case are normalised.

Example:
    >>> import numpy as np
    >>> from langchain_ripplemem.index.namespace_index import NamespaceIndex
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance
    >>> said = [("Maya: Bye!", "1"), ("Sam: Bye!", "2"), ("Maya:  bye!", "3"), ("Maya: See you.", "4")]
    >>> units = [MemoryUnit.create(namespace=("n",), restatement=text, metadata={"speaker": text.split(":")[0]},
    ...                            source=Provenance(conversation_id="c", session_id="s", turn_ids=[turn]))
    ...          for text, turn in said]
    >>> view = NamespaceIndex(("n",), 2)
    >>> view.add(units, np.ones((4, 2), dtype=np.float32))
    >>> kept, repeats, folded = fold_repeats(view, [u.id for u in units], k=3, hidden=set())
    >>> [view.unit(uid).source.turn_ids for uid in kept], [u.source.turn_ids for u in repeats[units[0].id]], folded
    ([['1'], ['2'], ['4']], [['3']], 1)

"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import NamedTuple

from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.index.sessions import per_index
from langchain_ripplemem.recall.cue_bonus import speaker_of
from langchain_ripplemem.schemas import MemoryUnit

__all__ = ["Folded", "fold_repeats", "repeat_key", "repeat_rows"]


def repeat_key(unit: MemoryUnit) -> str:
    r"""What makes two units the same memory: the speaker and the restatement, whitespace and case normalised.

    Example:
        >>> from langchain_ripplemem.schemas import Provenance
        >>> unit = MemoryUnit.create(namespace=("n",), restatement="Maya:  Thanks,\nBYE!", metadata={"speaker": "Maya"},
        ...                          source=Provenance(conversation_id="c", session_id="s"))
        >>> repeat_key(unit)
        'maya\x00maya: thanks, bye!'
    """
    return f"{speaker_of(unit) or ''}\x00{' '.join(unit.restatement.casefold().split())}"


def _rows_by_key(index: NamespaceIndex, start: int, stop: int, known: dict[int, list[int]]) -> dict[int, list[int]]:
    """``known`` with rows ``start..stop-1`` added under the hash of their key (the rows of one hash, in order)."""
    out = dict(known)  # readers of the old value must not see it change: a grown entry is a new list
    for row in range(start, stop):
        key = hash(repeat_key(index.units[row]))
        out[key] = [*out.get(key, ()), row]
    return out


def repeat_rows(index: NamespaceIndex) -> dict[int, list[int]]:
    """The namespace's rows by the hash of their :func:`repeat_key`, built once per view and caught up as it grows."""
    return per_index(index, "repeat_rows", lambda view, n: _rows_by_key(view, 0, n, {}),
                    lambda view, known, before, n: _rows_by_key(view, before, n, known))


class Folded(NamedTuple):
    """The memories kept, each one's repeats, and how many ids were folded away."""

    kept: list[str]
    repeats: dict[str, list[MemoryUnit]]
    folded: int


def fold_repeats(index: NamespaceIndex, order: Iterable[str], k: int, hidden: Collection[str],
                 taken: set[str] | None = None) -> Folded:
    """The first ``k`` of ``order`` that repeat no earlier one, and for each, its repeats in the namespace.

    Args:
        index: the namespace's view.
        order: unit ids, best first (assembly's ranking; read only as far as ``k`` kept ones need).
        k: how many memories to keep.
        hidden: ids recall never returns (suppressed, or later than ``as_of``): no repeat either.
        taken: the keys of memories kept before (a continued fold); updated.

    Returns:
        The kept ids; per kept id the other units with its key, in the order stored; and how
        many of ``order`` were left out as repeats.
    """
    by_hash = repeat_rows(index)
    kept: list[str] = []
    repeats: dict[str, list[MemoryUnit]] = {}
    taken = set() if taken is None else taken
    folded = 0
    for uid in order:
        if len(kept) == k:
            break
        row = index.pos.get(uid)
        if row is None:
            continue
        key = repeat_key(index.units[row])
        if key in taken:
            folded += 1
            continue
        taken.add(key)
        kept.append(uid)
        same = by_hash.get(hash(key), [])
        if len(same) > 1:  # a hash shared by other words is checked against the key itself
            others = [index.units[r] for r in same if r != row and index.ids[r] not in hidden]
            if others := [other for other in others if repeat_key(other) == key]:
                repeats[uid] = others
    return Folded(kept, repeats, folded)
