"""What recall derives from every unit of a namespace, built in one go when an index is loaded whole.

Each value is kept with its index (:func:`~langchain_ripplemem.index.sessions.per_index`)
and otherwise built on its first use, in whichever recall needs it. Each reads
every unit, and an index keeps only ``unit_list.PARSED_KEPT`` units parsed: built
one by one, after a whole load, every value parsed the other units again (six
passes of about 20 us a unit). :func:`derive_all` runs while the load still
holds every unit parsed (:meth:`~langchain_ripplemem.index.unit_list.UnitList.holding`),
so each unit is parsed once.

Example:
    >>> from langchain_ripplemem.index.namespace_index import NamespaceIndex
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance
    >>> import numpy as np
    >>> index = NamespaceIndex(("maya",), 2)
    >>> index.add([MemoryUnit.create(namespace=("maya",), restatement="Maya: I like oysters.",
    ...           source=Provenance(conversation_id="c", session_id="s"), metadata={"speaker": "Maya"})],
    ...          np.ones((1, 2), dtype=np.float32))
    >>> derive_all(index)
    >>> sorted(index.derived)  # doctest: +NORMALIZE_WHITESPACE
    ['cue_values', 'latest_statement', 'neighbours', 'repeat_rows', 'row_places', 'row_speakers',
     'speakers', 'times']
    >>> speakers(index)  # kept: read, not built
    frozenset({'maya'})
"""

from __future__ import annotations

from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.index.sessions import neighbour_rows, speakers
from langchain_ripplemem.recall.assembly import row_places
from langchain_ripplemem.recall.bridging import row_times
from langchain_ripplemem.recall.controller import cue_values
from langchain_ripplemem.recall.cue_bonus import row_speakers
from langchain_ripplemem.recall.query_cues import reference_time
from langchain_ripplemem.recall.repeats import repeat_rows

__all__ = ["derive_all"]


def derive_all(index: NamespaceIndex) -> None:
    """Build (or catch up) every per-unit value recall keeps with ``index``, and its BM25 index."""
    index.term_counts()
    for derive in (neighbour_rows, speakers, cue_values, reference_time, row_times, row_speakers, row_places,
                   repeat_rows):
        derive(index)
