"""The first-hop recall views, declared once: name, top-k setting and search.

``tri_view_recall`` runs every view of :data:`RECALL_VIEWS` and unites what they
find by unit id, each hit keeping its view's name (``Hit.source``), rank and
score. A view's name also keys its provenance weight in
:data:`~langchain_ripplemem.recall.evidence.SOURCE_WEIGHTS`. Adding a view is one entry here, its
top-k field in :class:`~langchain_ripplemem.config.ViewsConfig`, its weight there and its name in
``schemas.HitSource``.

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
from langchain_ripplemem.text.identifying import TOPIC_WEIGHT

__all__ = ["CUE_KEY_WEIGHT", "RECALL_VIEWS", "RecallView", "ViewQuery", "cue_key_weight"]

#: The cue view also scores a memory by this times the rarity-weighted overlap of its identifying cues
#: (names, topic words) with the query's; 0 under ``research.paper_rules`` (the paper's cue view). Chosen
#: with the bridging rules of issue 13 on the linked suite's tune split and LoCoMo's tuning conversations
#: (docs/benchmarks.md, "Bridging").
CUE_KEY_WEIGHT = 1.0


def cue_key_weight(config: RecallConfig) -> float:
    """The cue view's weight of identifying-cue overlap: :data:`CUE_KEY_WEIGHT`, 0 with the paper's rules."""
    return 0.0 if config.research.paper_rules else CUE_KEY_WEIGHT


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
    cues = query.cues
    key_weight = cue_key_weight(config)
    # With a key weight, the query's identifying cues (names, topic words) count by rarity.
    keys = index.known_keys(cues.query, speakers(index)) if key_weight else []
    if not (cues.participants or cues.locations or cues.time or keys):
        return []
    return visible_top(lambda n: index.cues(cues, n, linking, query.vector, keys=keys, key_weight=key_weight,
                                           topic_weight=TOPIC_WEIGHT), k, query.hidden)


RECALL_VIEWS: tuple[RecallView, ...] = (
    RecallView("semantic", "semantic_k", _semantic),
    RecallView("lexical", "lexical_k", _lexical),
    RecallView("cue", "cue_k", _cue),
)
