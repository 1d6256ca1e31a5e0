"""The first-hop recall views, declared once: name, top-k setting and search.

``tri_view_recall`` runs every view of :data:`RECALL_VIEWS` and unites what they
find by unit id, each hit keeping its view's name (``Hit.source``), rank and
score. A view's name also keys its provenance weight in
``RecallConfig.scoring.source_weights``. Adding a view is one entry here, its top-k
field in :class:`~langchain_ripplemem.config.ViewsConfig` and weight in
:class:`~langchain_ripplemem.config.ScoringConfig`, and its name in ``schemas.HitSource``.

With dialogue context weights (``RecallConfig.context``), the semantic and
lexical views score each unit together with its session neighbours
(:mod:`~langchain_ripplemem.recall.smoothing`).

Example:
    >>> [view.name for view in RECALL_VIEWS]
    ['semantic', 'lexical', 'cue']
    >>> from langchain_ripplemem.config import RecallConfig
    >>> [view.k(RecallConfig(views={"semantic_k": 7})) for view in RECALL_VIEWS][0]
    7

"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from langchain_ripplemem.config import LinkingConfig, RecallConfig, ViewsConfig
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.index.sessions import speakers
from langchain_ripplemem.recall.smoothing import context_weights, top_in_context
from langchain_ripplemem.recall.visibility import visible_top
from langchain_ripplemem.schemas import HitSource, QueryCues

__all__ = ["RECALL_VIEWS", "RecallView", "ViewQuery"]


@dataclass(frozen=True)
class ViewQuery:
    """What every view searches with: the query's cues and vector, and the ids it must not return."""

    cues: QueryCues
    vector: np.ndarray
    hidden: set[str] = field(default_factory=set)

    @property
    def lexical_text(self) -> str:
        """The text BM25 matches: the (semantic) query plus its keywords."""
        return " ".join([self.cues.query, *self.cues.keywords])


Search = Callable[[NamespaceIndex, ViewQuery, int, RecallConfig, LinkingConfig], list[tuple[str, float]]]


@dataclass(frozen=True)
class RecallView:
    """One first-hop view: its name (the hit source), the :class:`ViewsConfig` field of its top-k, its search."""

    name: HitSource
    k_field: str
    search: Search

    def k(self, config: RecallConfig) -> int:
        """The view's top-k under ``config``."""
        views: ViewsConfig = config.views
        return int(getattr(views, self.k_field))


def _semantic(index: NamespaceIndex, query: ViewQuery, k: int, config: RecallConfig,
              linking: LinkingConfig) -> list[tuple[str, float]]:
    if any(context_weights(index, config.context)):
        return top_in_context(index, index.cosines(query.vector), config.context, k, exclude=query.hidden)
    return visible_top(lambda n: index.semantic(query.vector, n), k, query.hidden)


def _lexical(index: NamespaceIndex, query: ViewQuery, k: int, config: RecallConfig,
             linking: LinkingConfig) -> list[tuple[str, float]]:
    if any(context_weights(index, config.context)):
        return top_in_context(index, index.lexical_scores(query.lexical_text), config.context, k, positive=True,
                              exclude=query.hidden)
    return visible_top(lambda n: index.lexical(query.lexical_text, n), k, query.hidden)


def _cue(index: NamespaceIndex, query: ViewQuery, k: int, config: RecallConfig,
         linking: LinkingConfig) -> list[tuple[str, float]]:
    cues, views = query.cues, config.views
    # With cue_key_weight, the query's identifying cues (names, topic words) count by rarity.
    keys = index.known_keys(cues.query, speakers(index)) if views.cue_key_weight else []
    if not (cues.participants or cues.locations or cues.time or keys):
        return []
    return visible_top(lambda n: index.cues(cues, n, linking, query.vector, keys=keys, key_weight=views.cue_key_weight,
                                           topic_weight=views.topic_weight), k, query.hidden)


RECALL_VIEWS: tuple[RecallView, ...] = (
    RecallView("semantic", "semantic_k", _semantic),
    RecallView("lexical", "lexical_k", _lexical),
    RecallView("cue", "cue_k", _cue),
)
