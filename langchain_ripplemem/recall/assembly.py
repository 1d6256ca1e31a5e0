"""Assembly: merge evidence by id and rank it by rho (the paper's read phase, step 6).

``rho(m) = 1.25 a(q, m) + 1.0 pi(m) + 0.05 I_anchor(m)`` (:data:`ALIGNMENT_WEIGHT`,
:data:`PROVENANCE_WEIGHT`, :data:`ANCHOR_BONUS`) where ``a`` is the query-memory
alignment min-max normalised over the evidence set (:data:`ALIGNMENT`), ``pi`` the
provenance support (source weight x rank support ``1/(rank_offset + rank)``, expansion
hits scaled by path strength; :mod:`~langchain_ripplemem.recall.evidence`), and
``I_anchor`` marks anchors. With ``RecallConfig.bridging.weight`` a memory reached over
structural (cue) edges scores at least what it inherits from its anchor (:func:`bridged`):
path support, so bridged memories compete for the top K without query alignment. The cue
bonuses come from :class:`~langchain_ripplemem.config.ScoringConfig`, the budget from
:class:`~langchain_ripplemem.config.AssemblyConfig`. The memory lifecycle may
multiply rho per unit (superseded memories, optional recency decay: see
:mod:`langchain_ripplemem.lifecycle`); unmarked memories keep it unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from typing import TypeVar

import numpy as np

from langchain_ripplemem.config import BridgingConfig, ContextConfig, RecallConfig
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.index.sessions import per_index
from langchain_ripplemem.recall import kept_places, set_questions
from langchain_ripplemem.recall.bridging import BRIDGE_FLOOR
from langchain_ripplemem.recall.cue_bonus import cue_bonuses, speaker_of
from langchain_ripplemem.recall.evidence import AnyHit, recalled_memory, supports
from langchain_ripplemem.recall.kept_places import (
    FirstHopRank,
    KeptMatches,
    first_hop_ranks,
    keep_first_hop,
    plain_memory,
)
from langchain_ripplemem.recall.repeats import fold_repeats, repeat_key
from langchain_ripplemem.recall.set_questions import keep_own, own_matches
from langchain_ripplemem.recall.smoothing import context_weights, in_context
from langchain_ripplemem.recall.views import ViewQuery
from langchain_ripplemem.render.plain_text import memory_line
from langchain_ripplemem.schemas import MemoryUnit, RecalledMemory

T = TypeVar("T")

#: The most a memory inherits of its anchor's rho: a lifted memory ranks just below its anchor.
BELOW_ANCHOR = 0.999
#: rho's weights of alignment, provenance support and being an anchor: the paper's.
ALIGNMENT_WEIGHT = 1.25
PROVENANCE_WEIGHT = 1.0
ANCHOR_BONUS = 0.05
#: a(q, m): the mean of the min-max normalised cosine and BM25 score, for encoders (like MiniLM) whose cosine
#: alone ranks worse than BM25 (docs/benchmarks.md, "Tuning and held-out split"); the paper's cosine alone
#: ("semantic") under ``research.paper_rules``.
ALIGNMENT = "hybrid"
#: Per expansion round, at most this many memories are lifted by bridged scores (the best gains); 0 = no
#: limit: a cap of 2-3 lost 6-14 points on the linked suite for no LoCoMo gain (docs/benchmarks.md,
#: "Linked recall (issue 13)").
BRIDGED_TOP = 0
#: Whether a memory bridged from an anchor of its own session is lifted too (False: only across sessions,
#: and within one only to the same speaker's next or previous turn): in a session dialogue context already
#: scores the anchor's neighbours, and on LongMemEval-S dev the lifts within a session displaced the first
#: hop's evidence (docs/benchmarks.md, "LongMemEval").
BRIDGE_WITHIN_SESSION = False


def alignment_mode(config: RecallConfig) -> str:
    """How a(q, m) is computed: :data:`ALIGNMENT`, or the paper's ``"semantic"`` under ``research.paper_rules``."""
    return "semantic" if config.research.paper_rules else ALIGNMENT

#: Where a memory was said: (session id, lower-cased speaker, turn index in the session; -1 if unknown).
Place = tuple[str, str | None, int]


def _minmax(values: np.ndarray) -> np.ndarray:
    low, high = float(values.min()), float(values.max())
    return (values - low) / (high - low) if high - low > 1e-9 else np.ones_like(values)


def aligner(index: NamespaceIndex, query_vector: np.ndarray, query: str, mode: str,
            context: ContextConfig | None = None) -> Callable[[list[str]], tuple[np.ndarray, np.ndarray]]:
    """``ids -> (a(q, m) in [0, 1], raw cosine)``, normalised over the ids given.

    ``"semantic"`` is the paper's: the min-max normalised cosine. ``"hybrid"``
    averages it with the min-max normalised BM25 score of the same units, for
    encoders (like MiniLM) whose cosine alone ranks worse than BM25. With
    ``context`` weights both scores also credit the unit's session neighbours
    (:mod:`~langchain_ripplemem.recall.smoothing`). Whole-namespace scores (BM25, context) are
    computed once here, so one aligner serves several id sets.
    """
    contextual = in_context(index, index.cosines(query_vector), context) \
        if context is not None and any(context_weights(index, context)) else None
    lexical = None if mode != "hybrid" else index.lexical_scores(query) if context is None else \
        in_context(index, index.lexical_scores(query), context)

    def align(ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
        rows = [index.pos[uid] for uid in ids]
        cosines = index.matrix[rows] @ query_vector
        alignment = _minmax(cosines if contextual is None else contextual[rows])
        if lexical is not None:
            alignment = 0.5 * alignment + 0.5 * _minmax(lexical[rows])
        return alignment, cosines

    return align


def assemble_memories(
    evidence: Mapping[str, Sequence[AnyHit]], anchors: set[str], index: NamespaceIndex, query: ViewQuery,
    config: RecallConfig, *, weight: Callable[[MemoryUnit], float] | None = None,
    support: Mapping[str, float] | None = None, plain: np.ndarray | None = None,
    own_views: Sequence[np.ndarray] = (),
) -> list[RecalledMemory]:
    """The top ``config.assembly.top_k`` memories by rho, each with its merged provenance.

    Args:
        evidence: unit id -> every hit that found it.
        anchors: ids the controller expanded from (they get :data:`ANCHOR_BONUS`).
        index: the namespace's search structures.
        query: the query's cues and unit vector, and the ids never returned (suppressed, or
            later than ``as_of``). The cues' query text is the hybrid alignment's BM25 half;
            a memory whose speaker is a participant of the query gets ``scoring.speaker_bonus``;
            with a query time, every memory gets ``scoring.time_bonus`` times its time
            similarity to it; the lexical text (query and keywords) is what the BM25 first
            hop kept with :data:`~.kept_places.KEEP_LEXICAL` matches.
        config: scoring, dialogue context, bridging and assembly settings.
        weight: per-unit multiplier of rho (lifecycle: supersession, recency); ``None`` = 1.
        support: each evidence memory's provenance support under ``config``
            (:func:`~langchain_ripplemem.recall.evidence.supports`); ``None``: summed here.
        plain: the vector of the question as asked, for the dense first hop kept with
            :data:`~.kept_places.KEEP_FIRST_HOP` (:func:`keep_first_hop`); ``None``: the query's vector.
        own_views: what a set question's speakers' own matches are scored by
            (:func:`~langchain_ripplemem.recall.set_questions.own_views`: the question as
            asked, and what it asks for); empty for any other question (:func:`~.set_questions.keep_own`).
    """
    budget, scoring, hidden = config.assembly, config.scoring, query.hidden
    query_vector, cues = query.vector, query.cues
    ids = [uid for uid in evidence if uid in index.pos and not (hidden and uid in hidden)]
    n_own = keep_own(config.research.paper_rules)
    own = own_matches(index, own_views, cues.participants, n_own, hidden, set_questions.KEEP_OWN_DENSITY,
                      set_questions.DENSITY_NEIGHBOURS) if n_own and own_views else []
    kept: list[KeptMatches] = [(n_own, set_questions.KEEP_OWN_SPACING, own)] if own else []
    protected = first_hop_ranks(index, query_vector if plain is None else plain, query.lexical_text or cues.query,
                                hidden, kept) if kept_places.KEEP_FIRST_HOP or kept_places.KEEP_LEXICAL or kept else {}
    plain_vector = query_vector if plain is None else plain
    if not ids:
        order, repeats, dense = top_distinct(index, [], protected, budget.top_k, hidden or (), plain_vector)
        return [plain_memory(index, uid, protected.get(uid) or dense[uid], query_vector, repeats.get(uid, ()))
                for uid in order]
    alignments, cosines = aligner(index, query_vector, cues.query, alignment_mode(config), config.context)(ids)
    rows = np.fromiter((index.pos[uid] for uid in ids), dtype=np.int64, count=len(ids))
    units = index.units.take(rows.tolist())
    if support is None or len(support) != len(evidence):
        support = supports(evidence, config)
    # Every memory's rho at once, in float64 with the operations (and their order) of the formula.
    found = np.fromiter((support[uid] for uid in ids), dtype=np.float64, count=len(ids))
    anchored = np.fromiter((uid in anchors for uid in ids), dtype=np.float64, count=len(ids))
    rhos = (ALIGNMENT_WEIGHT * alignments.astype(np.float64) + PROVENANCE_WEIGHT * found
            + ANCHOR_BONUS * anchored)
    rhos += cue_bonuses(index, rows, cues, scoring)
    direct = dict(zip(ids, rhos.tolist(), strict=True))
    # Lifts only across sessions, unless BRIDGE_WITHIN_SESSION (or the memory continues its anchor's
    # message): where an id is (the evidence's read off the units at hand; an anchor is evidence).
    place: Callable[[str], Place | None] | None = None
    if not BRIDGE_WITHIN_SESSION:
        places, at = row_places(index), index.pos

        def place(uid: str) -> Place | None:
            row = at.get(uid)
            return None if row is None else places[row] if row < len(places) else _place(index.units[row])

    scores = bridged_scores(evidence, direct, config.bridging, place)
    factors = [weight(unit) for unit in units] if weight is not None else [1.0] * len(ids)
    # Multiplied only when it matters: unmarked memories keep their exact rho.
    scored = [(-(scores[uid] * factor if factor != 1.0 else scores[uid]), uid, unit, cos, uid in anchors)
              for uid, unit, cos, factor in zip(ids, units, cosines.tolist(), factors, strict=True)]
    scored.sort(key=lambda row: row[:2])
    if budget.distinct_sessions_first:
        scored = distinct_sessions_first(scored, budget.distinct_sessions_first, lambda row: session_of(row[2]))
    order, repeats, dense = top_distinct(index, [row[1] for row in scored], protected, budget.top_k, hidden or (),
                                         plain_vector)
    by_id = {row[1]: row for row in scored}
    # Only the kept K become result objects (validated; the rest never leave this function).
    return [recalled_memory(row[2], -row[0], row[3], row[4], evidence[uid], repeats.get(uid, ()))
            if (row := by_id.get(uid)) else
            plain_memory(index, uid, protected.get(uid) or dense[uid], query_vector, repeats.get(uid, ()))
            for uid in order]


def top_distinct(index: NamespaceIndex, ranked: list[str], protected: Mapping[str, FirstHopRank], k: int,
                 hidden: Collection[str], vector: np.ndarray) -> tuple[list[str], dict[str, list[MemoryUnit]],
                                                                 dict[str, FirstHopRank]]:
    """The top ``k`` of ``ranked`` with the kept first hop in place, one speaker's identical words once.

    A repeat (:mod:`~langchain_ripplemem.recall.repeats`) is folded into the best-ranked copy and its
    place goes to the next memory: the order is taken further until ``k`` distinct memories fill it,
    and when the evidence runs out first (all of it copies of a few sentences), the places the
    copies left go to the next distinct memories of the plain dense ranking of ``vector``, returned
    with their ranks. Without repeats the top ``k`` are :func:`~.kept_places.keep_first_hop`'s, as
    they always were.
    """
    n = k
    while True:
        order = keep_first_hop(ranked, protected, n) if protected else ranked[:n]
        kept, repeats, folded = fold_repeats(index, order, k, hidden)
        if len(kept) == k or not folded:
            return kept, repeats, {}
        if len(order) < n:  # the evidence ran out: the freed places to the question's plain dense matches
            taken = {repeat_key(index.units[index.pos[uid]]) for uid in kept}
            seen = set(order)
            dense = [(rank, uid, score) for rank, (uid, score) in enumerate(index.semantic(vector, len(index)))
                     if uid not in seen and uid not in hidden]
            more = fold_repeats(index, (uid for _, uid, _ in dense), min(folded, k - len(kept)), hidden, taken)
            ranks: dict[str, FirstHopRank] = {uid: ("semantic", rank, score, k) for rank, uid, score in dense
                                               if uid in more.kept}
            return [*kept, *more.kept], {**repeats, **more.repeats}, ranks
        n = 2 * n + k - len(kept)


def session_of(unit: MemoryUnit) -> tuple[str, str]:
    """Where ``unit`` was said: its (conversation id, session id), empty strings when unknown."""
    source = unit.source
    return (source.conversation_id or "", source.session_id or "") if source is not None else ("", "")


def distinct_sessions_first(ranked: list[T], n: int, session: Callable[[T], Hashable]) -> list[T]:
    """``ranked`` with its first ``n`` places given to the best of different sessions among the best ``2n``.

    A long history spreads what a question needs over several conversations; the
    first few memories an agent reads should not all come from one. Only the order
    within the best ``2n`` changes: what they are, and everything after, stays.

    Example:
        >>> distinct_sessions_first(["a1", "a2", "a3", "b1", "a4", "c1", "d1"], 2, lambda m: m[0])
        ['a1', 'b1', 'a2', 'a3', 'a4', 'c1', 'd1']
    """
    window, head, rest, seen = ranked[: 2 * n], list[T](), list[T](), set[Hashable]()
    for item in window:
        key = session(item)
        if len(head) < n and key not in seen:
            head.append(item)
            seen.add(key)
        else:
            rest.append(item)
    return head + rest + ranked[2 * n :]


def bridged_scores(evidence: Mapping[str, Sequence[AnyHit]], direct: dict[str, float],
                   config: BridgingConfig, place: Callable[[str], Place | None] | None = None) -> dict[str, float]:
    """``max(direct rho, bridged)`` per memory, round by round.

    A memory reached in round ``r`` inherits from its anchor's score *after* rounds
    before ``r``, so a chain (a name bridge, then a topic bridge from what it found)
    carries the first anchor's rank on, discounted at each hop. Per round, only the
    :data:`BRIDGED_TOP` memories that gain most are lifted (0: all): a bridge is a bet,
    and the first hop's own ranking keeps the other places. With ``place`` (id ->
    :data:`Place`), a hit lifts only where :func:`lifts_across` allows: from another
    session, or to the rest of the anchor's own message.
    """
    scores = dict(direct)
    # Only structural expansion hits lift (bridged); each round's, by memory, gathered in one pass.
    structural: dict[int, dict[str, list[AnyHit]]] = {}
    for uid, hits in evidence.items():
        for h in hits:
            if h.source == "expansion" and h.channel == "structural":
                structural.setdefault(h.round, {}).setdefault(uid, []).append(h)
    for r in sorted(structural):
        snapshot, lifted = dict(scores), {}
        for uid, hits in structural[r].items():
            if uid not in scores:
                continue
            if place is not None:  # where the memory is, read once for all its hits
                here = place(uid)
                hits = [h for h in hits if lifts_across(place(h.anchor or ""), here)]
            if (b := bridged(hits, snapshot, config)) > scores[uid]:
                lifted[uid] = b
        best = sorted(lifted, key=lambda uid: (-lifted[uid], uid))
        for uid in best[:BRIDGED_TOP] if BRIDGED_TOP else best:
            scores[uid] = lifted[uid]
    return scores


def _place(unit: MemoryUnit) -> Place:
    turn = unit.metadata.get("turn_index")
    return unit.source.session_id, speaker_of(unit), turn if isinstance(turn, int) else -1


def row_places(index: NamespaceIndex) -> list[Place]:
    """Per row of ``index``, where its unit was said (:data:`Place`), kept with the index as it grows.

    A unit's session, speaker and turn never change in place (the neighbours of
    :mod:`~langchain_ripplemem.recall.smoothing` are kept on the same terms).
    """
    return per_index(index, "row_places", lambda v, n: [_place(u) for u in v.units[:n]],
                    lambda v, known, before, n: known + [_place(u) for u in v.units[before:n]])


def lifts_across(anchor: Place | None, memory: Place | None) -> bool:
    """Whether a bridge from ``anchor`` to ``memory`` may lift it.

    Across sessions it may. Within one, dialogue context already scores an anchor's
    neighbours, and lifts there displace the first hop's evidence (LongMemEval's long
    sessions), except for one case: ``memory`` is the same speaker's next or previous
    turn, one message sent in two parts ("Proof:" and a photo, a thought finished on
    the next line), which only makes sense read with the anchor.

    Example:
        >>> lifts_across(("s1", "maya", 3), ("s2", "sam", 0)), lifts_across(("s1", "maya", 3), ("s1", "maya", 4))
        (True, True)
        >>> lifts_across(("s1", "maya", 3), ("s1", "sam", 4)), lifts_across(("s1", "maya", 3), ("s1", "maya", 5))
        (False, False)
    """
    if anchor is None or memory is None or anchor[0] != memory[0]:
        return True
    return anchor[1] is not None and anchor[1] == memory[1] and anchor[2] >= 0 and abs(anchor[2] - memory[2]) == 1


def bridged(hits: Sequence[AnyHit], direct: dict[str, float], config: BridgingConfig) -> float:
    """The score a memory inherits from the anchor it was reached from over cue (or time) edges.

    ``rho(anchor) x min(BELOW_ANCHOR, weight x strength x (f + (1 - f) x target overlap))``
    with ``weight`` the config's and ``f`` :data:`~.bridging.BRIDGE_FLOOR`, the best over the memory's structural
    expansion hits.
    Strength is the product over the path's edges of the rarity of the rarest cue
    each edge's ends share (:func:`~langchain_ripplemem.recall.bridging.bridge_strength`),
    so a memory that shares a rare name with a well-ranked anchor ranks near that
    anchor even when it shares no word with the query; sharing the target's cues
    (the query's and the anchors' rarest) lifts it further. It never ranks above its
    anchor: what it knows about the question, it knows through the anchor. 0 with
    ``weight = 0`` (the paper's rho).

    Example:
        >>> from langchain_ripplemem.config import BridgingConfig
        >>> from langchain_ripplemem.schemas import Hit
        >>> hit = Hit(source="expansion", rank=0, score=0.9, channel="structural", anchor="a", path=["a", "m"],
        ...           edge_weight=0.8)
        >>> round(bridged([hit], {"a": 2.0}, BridgingConfig(weight=0.75)), 3)  # 2 x 0.75 x 0.8 x (0.6 + 0.4 x 0.9)
        1.152
        >>> round(bridged([hit], {"a": 2.0}, BridgingConfig(weight=2.0)), 3)  # below its anchor
        1.998

    """
    if not config.weight:
        return 0.0
    floor = BRIDGE_FLOOR
    return max((direct[h.anchor] * min(BELOW_ANCHOR, config.weight * (h.edge_weight or 0.0)
                                       * (floor + (1.0 - floor) * h.score))
                for h in hits if h.source == "expansion" and h.channel == "structural" and h.anchor in direct),
               default=0.0)


def format_evidence(memories: Sequence[RecalledMemory]) -> str:
    """Numbered memories for the answer prompt, one line each: ``[n] | date | restatement``.

    ``n`` counts from 1 in rank order; the date is the start of the memory's time, ``-``
    without one. Whitespace is collapsed, so a memory's text never starts a line of its own.
    """
    return "\n".join(memory_line(f"[{n}]", memory.unit) for n, memory in enumerate(memories, start=1))


_CITATION = re.compile(r"\[\s*([0-9a-f]{32}|\d+(?:\s*,\s*\d+)*)\s*\]")


def parse_citations(text: str, memories: Sequence[RecalledMemory]) -> list[str]:
    """Unit ids an answer cites, in order of first mention.

    Reads what the answer prompt asks for, ``[n]`` for the n-th line of
    :func:`format_evidence` (also ``[2, 5]``), and a memory's full id in brackets.
    Numbers out of range and unknown ids are ignored.

    Example:
        >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance, RecalledMemory
        >>> units = [MemoryUnit.create(namespace=("demo",), restatement=text,
        ...                            source=Provenance(conversation_id="c", session_id="s", turn_ids=[t]))
        ...          for text, t in [("Maya is allergic to shellfish.", "1"), ("Sam picked Harbor Grill.", "2")]]
        >>> memories = [RecalledMemory(unit=u, score=1.0, alignment=1.0) for u in units]
        >>> print(format_evidence(memories))
        [1] | - | Maya is allergic to shellfish.
        [2] | - | Sam picked Harbor Grill.
        >>> parse_citations("Not Harbor Grill [2], she is allergic [1, 2] [7].", memories) == [
        ...     units[1].id, units[0].id]
        True

    """
    ids = {memory.unit.id for memory in memories}
    cited: list[str] = []
    for match in _CITATION.finditer(text):
        for ref in match.group(1).split(","):
            ref = ref.strip()
            uid = (ref if ref in ids else None) if len(ref) == 32 else (
                memories[int(ref) - 1].unit.id if 1 <= int(ref) <= len(memories) else None)
            if uid is not None and uid not in cited:
                cited.append(uid)
    return cited
