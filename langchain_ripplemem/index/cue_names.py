"""Whether a namespace's cue key names something: how its memories write the word.

The extractor sees one memory at a time, and a capitalised word can be a name
("Biscuit threw up") or a word that starts a sentence ("Count me in"), or a word a
heading capitalises ("**Activities**:"). The namespace sees every memory:
:class:`NameCounts` keeps, per key, how many memories hold it as a name, write it
in lower case, or capitalise it only where a sentence starts, and
:meth:`NameCounts.is_name` decides from those counts (``docs/architecture.md``,
"Identifying cues").

Example:
    >>> counts = NameCounts()
    >>> counts.add(0, [], ["rafa", "landlord"], "Rafa texted me about the landlord.")
    >>> counts.is_name("rafa")  # one start proves nothing
    False
    >>> counts.add(1, [], ["rafa", "couch"], "Rafa's couch is gone.")
    >>> counts.is_name("rafa"), counts.is_name("landlord")
    (True, False)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_ripplemem.text.identifying import lowercase_keys, sentence_initial_keys

__all__ = ["NameCounts"]


@dataclass
class NameCounts:
    """Per cue key: the first row and the rows holding it as a name, writing it in lower case, starting with it."""

    first_name: dict[str, int] = field(default_factory=dict)
    name_rows: Counter[str] = field(default_factory=Counter)
    lower_rows: Counter[str] = field(default_factory=Counter)
    first_initial: dict[str, int] = field(default_factory=dict)
    initial_rows: Counter[str] = field(default_factory=Counter)

    def add(self, row: int, names: Sequence[str], topics: Sequence[str], text: str) -> None:
        """Count the memory at ``row``: its name keys, its topic keys and its text."""
        for name in names:
            self.first_name.setdefault(name, row)
            self.name_rows[name] += 1
        self.lower_rows.update(lowercase_keys(text).intersection(topics))
        for key in sentence_initial_keys(text).intersection(topics):
            self.first_initial.setdefault(key, row)
            self.initial_rows[key] += 1

    def copy(self) -> NameCounts:
        """An equal count that counts on alone (what a reader holds stays as it is)."""
        return NameCounts(dict(self.first_name), self.name_rows.copy(), self.lower_rows.copy(),
                          dict(self.first_initial), self.initial_rows.copy())

    def is_name(self, key: str, upto: int | None = None) -> bool:
        """Whether ``key`` names something among the first ``upto`` rows: no more memories write it in lower case.

        A word capitalised by its place ("**Activities**:", a Title Case heading)
        is extracted as a name in a few memories and written in lower case in the
        many others: it identifies nothing. A name ("Harbor Grill", "Biscuit") is
        capitalised wherever it is said, at a sentence's start too ("Rafa texted me"),
        where the extractor cannot tell it from a word: those rows count as a name's, and a
        word only ever written there is a name once two memories start with it.
        """
        first, initial = self.first_name.get(key), self.initial_rows[key]
        if first is None:  # only ever capitalised where a sentence starts: said so twice, never in lower case
            first = self.first_initial.get(key) if initial >= 2 and not self.lower_rows[key] else None
        if first is None or (upto is not None and first >= upto):
            return False
        return self.name_rows[key] + initial >= self.lower_rows[key]
