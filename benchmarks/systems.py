"""The systems a benchmark compares, all reading the same memory.

A :class:`System` only has to return memory units for a question; the runner
maps units to turns through provenance. Factories build each system from a
memory object with the facade's API (``recall``, ``get``, ``search``), so full
RippleMem, its ablations and the baselines run on exactly the same units.

Example:
    >>> from langchain_ripplemem.config import RecallConfig
    >>> ablation_config("no_expansion", RecallConfig()).controller.max_rounds
    0
    >>> reciprocal_rank_fusion([["a", "b"], ["b", "c"]], k=60)[0][0]
    'b'

"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.presets import LONG_HISTORY
from langchain_ripplemem.recall.cue_bonus import speaker_of
from langchain_ripplemem.schemas import MemoryUnit, Namespace, RecalledMemory
from langchain_ripplemem.text.time.timeparse import parse_timestamp

ABLATIONS = ("no_expansion", "no_structural", "no_planning", "no_context", "no_cue_bonus")
RECALL_SYSTEMS = ("ripplemem", "ripplemem_paper", "ripplemem_long_history", *ABLATIONS)
BASELINES = ("bm25", "dense", "hybrid_rrf", "session_dense")
SYSTEM_NAMES: tuple[str, ...] = RECALL_SYSTEMS + BASELINES
# What the linked-evidence suite compares by default: recollection, the ablations that remove
# the graph's part (expansion, cue edges) and the controller's missing-support target, and the baselines.
LINKED_SYSTEMS: tuple[str, ...] = ("ripplemem", "no_expansion", "no_structural", "no_planning",
                                   "dense", "bm25", "hybrid_rrf")

# Ablations change one knob of the recall config each (the paper's ablations, docs/concepts.md); full systems none.
# Each is a partial change per settings group (RecallConfig.replace).
_ABLATIONS: dict[str, dict[str, dict[str, Any]]] = {
    "ripplemem": {},
    "ripplemem_paper": {},
    "ripplemem_long_history": {},
    "no_expansion": {"controller": {"max_rounds": 0}},
    "no_structural": {"expansion": {"expand_structural": False}},
    "no_planning": {"controller": {"use_planning": False}},
    "no_context": {"context": {"weight": 0.0, "weight_2": 0.0}},
    "no_cue_bonus": {"scoring": {"speaker_bonus": 0.0, "time_bonus": 0.0}},
}


#: Where each assembly rule a variant changes lives: a named constant of the recall modules.
_KEPT = {"keep_first_hop": "kept_places.KEEP_FIRST_HOP", "keep_spacing": "kept_places.KEEP_SPACING",
         "keep_lexical": "kept_places.KEEP_LEXICAL", "keep_lexical_spacing": "kept_places.KEEP_LEXICAL_SPACING",
         "keep_own": "set_questions.KEEP_OWN", "keep_own_spacing": "set_questions.KEEP_OWN_SPACING",
         "keep_own_density": "set_questions.KEEP_OWN_DENSITY",
         "keep_own_neighbours": "set_questions.DENSITY_NEIGHBOURS"}


def _variant(mode: str = "sum", **assembly: float) -> dict[str, Any]:
    """A variant's constants: dialogue context as ``mode`` ('max': max(own, neighbour share)), first hop kept.

    A kept first hop runs without a set question's own places (as it was measured): together their
    spacings would not all fit (``kept_places.check_spacings`` refuses them).
    """
    if "keep_first_hop" in assembly or "keep_lexical" in assembly:
        assembly = {"keep_own": 0, **assembly}
    return {**({"smoothing.CONTEXT_MODE": "max"} if mode == "max" else {}),
            **{_KEPT[name]: value for name, value in assembly.items()}}


# Variants of the default measured against it (issue 35: a first hop recollection only adds to): run by
# name (``--systems``), never by default. ``kNsM``: plain dense and BM25 top-N kept within rank M x d; ``max``:
# dialogue context as max(own, neighbour share) instead of the sum. Each changes named constants of the
# recall modules (``CONSTANT_VARIANTS``, module under ``langchain_ripplemem.recall``) or settings (``VARIANTS``).
CONSTANT_VARIANTS: dict[str, dict[str, Any]] = {
    "rm_max": {"smoothing.CONTEXT_MODE": "max"},
    "rm_d10s15": _variant(keep_first_hop=10, keep_spacing=1.5),
    "rm_max_d10s15": _variant("max", keep_first_hop=10, keep_spacing=1.5),
    "rm_max_d20s15": _variant("max", keep_first_hop=20, keep_spacing=1.5),
    "rm_max_d10s15_l5s3": _variant("max", keep_first_hop=10, keep_spacing=1.5, keep_lexical=5,
                                   keep_lexical_spacing=3.0),
    "rm_max_d10s2": _variant("max", keep_first_hop=10, keep_spacing=2.0),
    "rm_d20s15": _variant(keep_first_hop=20, keep_spacing=1.5),
    "rm_d10s2": _variant(keep_first_hop=10, keep_spacing=2.0),
    "rm_d10s25": _variant(keep_first_hop=10, keep_spacing=2.5),
    "rm_d10s3": _variant(keep_first_hop=10, keep_spacing=3.0),
    "rm_max_d10s25": _variant("max", keep_first_hop=10, keep_spacing=2.5),
    # A set question keeps its named speaker's own plain dense top N within rank M x d (recall/set_questions.py).
    **{f"rm_own{n}s{str(sp).replace('.', '')}": _variant(keep_own=n, keep_own_spacing=sp)
       for n, sp in ((5, 2.0), (5, 1.5), (10, 1.0), (10, 1.5), (10, 2.0), (3, 1.0), (7, 1.5))},
    # ... scored with density weight W (keep_own_density; 0: cosine alone), and N kept within M x d.
    **{f"rm_own{n}s{str(sp).replace('.', '')}_w{str(w).replace('.', '')}": _variant(
        keep_own=n, keep_own_spacing=sp, keep_own_density=w)
       for n, sp, w in ((5, 2.0, 0.0), (5, 2.0, 0.3), (5, 2.0, 0.7), (5, 2.0, 1.0), (8, 1.25, 0.5), (10, 1.5, 0.5),
                        (7, 1.5, 0.5), (15, 2.0, 0.7))},
    # ... with density over the N nearest own memories (keep_own_neighbours) and weight W.
    **{f"rm_own_nb{n}_w{str(w).replace('.', '')}": _variant(keep_own_neighbours=n, keep_own_density=w)
       for n, w in ((5, 0.7), (5, 1.0), (3, 0.7), (10, 1.0))},
    # Round one: both views kept at the same spacing.
    **{f"rm{'_max' if mode == 'max' else ''}_k{m}s{s}": _variant(
        mode, keep_first_hop=m, keep_spacing=float(s), keep_lexical=m, keep_lexical_spacing=float(s))
       for mode, m, s in (("sum", 3, 2), ("sum", 5, 2), ("sum", 5, 3), ("sum", 10, 3), ("max", 5, 3), ("max", 10, 3),
                          ("max", 5, 2))},
}
VARIANTS: dict[str, dict[str, dict[str, Any]]] = {
    **dict.fromkeys(CONSTANT_VARIANTS, {}),
    # Knowledge updates (recall/updates.py, issue 52): without the asked-for statement first; superseded memories
    # at half weight (the default until then), with it and without it.
    "rm_no_asked_first": {"lifecycle": {"asked_first": False}},
    "rm_superseded_half": {"lifecycle": {"superseded_weight": 0.5}},
    "rm_superseded_half_no_asked_first": {"lifecycle": {"superseded_weight": 0.5, "asked_first": False}},
}
# Issue 51.4: each rule beyond the paper's method removed on its own (``abl_<rule>``: what the paper does, or
# the rule off), to measure which earn their place on which suite (docs/benchmarks.md, "Which rules earn their
# place"; ``scripts/rule_ablation.py`` makes the table). Settings here, named constants in CONSTANT_VARIANTS.
RULE_ABLATIONS: dict[str, dict[str, dict[str, Any]]] = {
    "abl_views": {"views": {"semantic_k": 10, "lexical_k": 5, "cue_k": 5}},
    "abl_rounds1": {"controller": {"max_rounds": 1}},
    "abl_per_channel5": {"expansion": {"per_channel": 5}},
    "abl_context": {"context": {"weight": 0.0, "weight_2": 0.0}},
    "abl_context2": {"context": {"weight_2": 0.0}},
    "abl_assistant_chats": {"context": {"assistant_chats": True}},
    "abl_bridging": {"bridging": {"weight": 0.0}},
    "abl_speaker_bonus": {"scoring": {"speaker_bonus": 0.0}},
    "abl_time_bonus": {"scoring": {"time_bonus": 0.0}},
    "abl_asked_first": {"lifecycle": {"asked_first": False}},
    "abl_superseded_half": {"lifecycle": {"superseded_weight": 0.5}},
}
RULE_CONSTANTS: dict[str, dict[str, Any]] = {
    "abl_cue_key": {"views.CUE_KEY_WEIGHT": 0.0},
    "abl_target_cues": {"controller.TARGET_CUES": 0},
    "abl_anchor_bridge": {"controller.ANCHOR_BRIDGE_WEIGHT": 0.0},
    "abl_alignment": {"assembly.ALIGNMENT": "semantic"},
    "abl_rank_offset": {"evidence.RANK_OFFSET": 5},
    "abl_keep_own": {"set_questions.KEEP_OWN": 0},
    "abl_own_density": {"set_questions.KEEP_OWN_DENSITY": 0.0},
    "abl_bridging_floor": {"bridging.BRIDGE_FLOOR": 1.0},
    "abl_key_budget": {"bridging.KEY_BUDGET": 0},
    "abl_first_topic": {"bridging.FIRST_TOPIC_WEIGHT": 1.0, "bridging.FIRST_RARE_TOPIC_WEIGHT": 1.0},
    "abl_first_rare_topic": {"bridging.FIRST_RARE_TOPIC_WEIGHT": 0.0},
    "abl_within_session": {"assembly.BRIDGE_WITHIN_SESSION": True},
}
CONSTANT_VARIANTS.update(RULE_CONSTANTS)
VARIANTS.update(RULE_ABLATIONS)
VARIANTS.update(dict.fromkeys(RULE_CONSTANTS, {}))
_ABLATIONS.update(VARIANTS)


@contextmanager
def patched_constants(constants: Mapping[str, Any]) -> Iterator[None]:
    """Named constants of ``langchain_ripplemem.recall`` modules changed for the duration, then restored.

    ``constants``: ``"module.NAME"`` (the module under ``langchain_ripplemem.recall``) -> value. A module
    that imported the name keeps its own binding: it is changed too (every loaded module of the
    package that holds the same object under that name).
    """
    changed: list[tuple[Any, str, Any]] = []
    try:
        for qualified, value in constants.items():
            module_name, name = qualified.rsplit(".", 1)
            home = importlib.import_module(f"langchain_ripplemem.recall.{module_name}")
            if not hasattr(home, name):
                raise ValueError(f"langchain_ripplemem.recall.{module_name} has no constant {name}")
            original = getattr(home, name)
            for module in [m for key, m in list(sys.modules.items()) if key.startswith("langchain_ripplemem.")]:
                if getattr(module, name, _UNSET) is original:
                    changed.append((module, name, original))
                    setattr(module, name, value)
        yield
    finally:
        for module, name, original in reversed(changed):
            setattr(module, name, original)


_UNSET = object()
RRF_K = 60
RRF_DEPTH = 100


@dataclass
class Retrieved:
    """What a system returns for one question: units best first, plus its LLM cost."""

    units: list[MemoryUnit]
    llm_calls: int = 0
    tokens: int = 0


def covering_repeats(memory: RecalledMemory) -> MemoryUnit:
    """The memory's unit, its turns those of the identical restatements folded into it too.

    A recall lists one speaker's identical words once (:mod:`~langchain_ripplemem.recall.repeats`);
    the memory says what each copy said, so it covers each copy's turn.
    """
    if not memory.repeats:
        return memory.unit
    turns = list(dict.fromkeys([t for source in memory.sources for t in source.turn_ids]))
    return memory.unit.model_copy(update={"source": memory.unit.source.model_copy(update={"turn_ids": turns})})


@runtime_checkable
class System(Protocol):
    """Anything that retrieves memory units for a question inside a namespace."""

    name: str

    def retrieve(self, question: str, namespace: Namespace, k: int) -> Retrieved:
        """Return at most ``k`` units for ``question``, best first."""
        ...


def ablation_config(name: str, base: RecallConfig) -> RecallConfig:
    """The recall config of ``ripplemem`` or one of its ablations, derived from ``base``.

    Raises:
        ValueError: if ``name`` is not a recall-based system.

    """
    if name not in _ABLATIONS:
        raise ValueError(f"{name!r} is not a recall system; choose one of {list(_ABLATIONS)}")
    return base.replace(**_ABLATIONS[name])


@dataclass
class RecallSystem:
    """Full recollection (or an ablation) through ``memory.recall``."""

    name: str
    memory: Any
    config: RecallConfig
    # Named constants of the recall modules this system changes while it recalls (a variant's rule).
    constants: Mapping[str, Any] = field(default_factory=dict)

    def retrieve(self, question: str, namespace: Namespace, k: int, *, asker: str | None = None,
                 as_of: Any = None) -> Retrieved:
        """Run recollection and return its top-k units with the recall's LLM usage.

        ``asker`` and ``as_of`` are the question's own context (:func:`retrieve_question`).
        """
        # K of the assembly step must be at least the k we score, or the
        # larger prefixes could never be filled.
        config = self.config.replace(assembly={"top_k": max(k, 1)})
        context = {key: value for key, value in (("asker", asker), ("as_of", as_of)) if value is not None}
        with patched_constants(self.constants):
            result = self.memory.recall(question, namespace=namespace, k=k, config=config, **context)
        units = [covering_repeats(m) for m in result.memories][:k]
        usage = result.usage
        return Retrieved(
            units=units,
            llm_calls=usage.llm_calls,
            tokens=usage.input_tokens + usage.output_tokens,
        )

    def describe(self) -> dict[str, Any]:
        """JSON-ready description for the results file."""
        return {"kind": "recall", "config": self.config.model_dump(mode="json"),
                **({"constants": dict(self.constants)} if self.constants else {})}


@dataclass
class SearchSystem:
    """A single-view baseline: BM25 (``lexical``) or dense (``semantic``) top-k."""

    name: str
    memory: Any
    view: str

    def retrieve(self, question: str, namespace: Namespace, k: int) -> Retrieved:
        """Return the view's top-k units."""
        hits = _search(self.memory, self.view, namespace, question, k)
        return Retrieved(units=_get_units(self.memory, [uid for uid, _ in hits], namespace))

    def describe(self) -> dict[str, Any]:
        """JSON-ready description for the results file."""
        return {"kind": "search", "view": self.view}


@dataclass
class HybridRRFSystem:
    """BM25 + dense fused by reciprocal rank fusion over the top-``depth`` of each."""

    name: str
    memory: Any
    rrf_k: int = RRF_K
    depth: int = RRF_DEPTH
    views: tuple[str, ...] = field(default=("lexical", "semantic"))

    def retrieve(self, question: str, namespace: Namespace, k: int) -> Retrieved:
        """Fuse the views' ranked lists and return the top-k units."""
        depth = max(self.depth, k)
        lists = [
            [uid for uid, _ in _search(self.memory, view, namespace, question, depth)]
            for view in self.views
        ]
        fused = reciprocal_rank_fusion(lists, k=self.rrf_k)[:k]
        return Retrieved(units=_get_units(self.memory, [uid for uid, _ in fused], namespace))

    def describe(self) -> dict[str, Any]:
        """JSON-ready description for the results file."""
        return {"kind": "rrf", "views": list(self.views), "rrf_k": self.rrf_k, "depth": self.depth}


#: The speaker whose turns make a session's document, when a namespace has one by that name.
ASKER = "user"


def session_documents(units: Sequence[MemoryUnit]) -> dict[str, str]:
    """Each session's document, sessions in the order their first memory was written.

    The asker's turns where some memory's speaker is :data:`ASKER` (a user-assistant
    history: the user's words say what a chat was about, the assistant's long answers
    say much else), every turn otherwise (two people talking). A session none of whose
    memories is the asker's keeps all its turns rather than vanish.

    Example:
        >>> def unit(i, session, speaker):
        ...     return MemoryUnit(id=str(i), namespace=("n",), restatement=f"{speaker}: turn {i}", metadata={
        ...         "speaker": speaker}, source={"conversation_id": "c", "session_id": session, "turn_ids": [str(i)]})
        >>> session_documents([unit(1, "a", "user"), unit(2, "a", "assistant"), unit(3, "b", "user")])
        {'a': 'user: turn 1', 'b': 'user: turn 3'}
    """
    by_session: dict[str, list[MemoryUnit]] = {}
    for unit in units:
        if unit.source is not None and unit.source.session_id:
            by_session.setdefault(unit.source.session_id, []).append(unit)
    # Units keep the speaker as written ("User" in LongMemEval's records): compared lower-cased.
    own_ids = {unit.id for unit in units if speaker_of(unit) == ASKER}
    documents = {}
    for session, members in by_session.items():
        own = [u for u in members if u.id in own_ids] if own_ids else members
        documents[session] = "\n".join(u.restatement for u in (own or members))
    return documents


@dataclass
class SessionDocumentSystem:
    """Baseline ``session_dense``: sessions ranked as whole documents, each returned as its best turn.

    One vector per session, as MemPalace's raw mode ranks LongMemEval (issue 35): each
    session's :func:`session_documents` text, embedded once per namespace with the
    memory's own encoder. A question ranks the sessions by cosine; each stands in the
    ranked list as its turn the question matches best (plain dense), one memory per
    session. So the top k memories are the top k sessions and session recall_all@k is
    the session ranking's own; at the turn level it finds only each session's best turn.
    """

    name: str
    memory: Any
    _sessions: dict[Namespace, tuple[int, list[str], np.ndarray]] = field(default_factory=dict, repr=False)

    def retrieve(self, question: str, namespace: Namespace, k: int) -> Retrieved:
        """The best turn of each of the ``k`` sessions whose documents match ``question`` best."""
        units = self.memory.list_units(namespace)
        if not units:
            return Retrieved(units=[])
        sessions, matrix = self._session_vectors(namespace, units)
        query = np.asarray(self.memory.reader.embed_query(question), dtype=np.float32)
        ranked = [sessions[i] for i in np.argsort(-(matrix @ query), kind="stable")[:k]]
        best: dict[str, MemoryUnit] = {}
        for unit, _ in self.memory.search(question, namespace=namespace, k=len(units)):
            if unit.source is not None and unit.source.session_id not in best:
                best[unit.source.session_id] = unit
        return Retrieved(units=[best[s] for s in ranked if s in best])

    def describe(self) -> dict[str, Any]:
        """JSON-ready description for the results file."""
        return {"kind": "session_documents", "document": f"the {ASKER}'s turns of a session joined (every turn "
                "where no speaker is the user)", "returned": "each ranked session's best-matching turn"}

    def _session_vectors(self, namespace: Namespace, units: list[MemoryUnit]) -> tuple[list[str], np.ndarray]:
        """The namespace's session ids and unit-normalised document vectors, embedded once per namespace state."""
        known = self._sessions.get(namespace)
        if known is None or known[0] != len(units):
            documents = session_documents(units)
            vectors = np.asarray(self.memory.embeddings.embed_documents(list(documents.values())), dtype=np.float32)
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            known = (len(units), list(documents), vectors / np.where(norms == 0, 1.0, norms))
            self._sessions[namespace] = known
        return known[1], known[2]


def question_context(question: Any) -> dict[str, Any]:
    """What recollection may know about a benchmark question besides its text: who asks, and on which day.

    The day, not the minute: LongMemEval stamps some evidence sessions later on the
    question's own day than the question's time of day. Baselines use neither.

    Example:
        >>> from types import SimpleNamespace
        >>> question_context(SimpleNamespace(asker="user", question_date="2023/05/30 (Tue) 20:45"))
        {'asker': 'user', 'as_of': datetime.date(2023, 5, 30)}
        >>> question_context(SimpleNamespace(asker=None, question_date=None))
        {}
    """
    context: dict[str, Any] = {}
    if getattr(question, "asker", None):
        context["asker"] = question.asker
    if getattr(question, "question_date", None):
        context["as_of"] = parse_timestamp(question.question_date).date()
    return context


def retrieve_question(system: System, question: Any, namespace: Namespace, k: int) -> Retrieved:
    """``system.retrieve`` for a benchmark question, with its :func:`question_context` for recall systems."""
    context = question_context(question) if isinstance(system, RecallSystem) else {}
    return system.retrieve(question.question, namespace, k, **context)


def reciprocal_rank_fusion(lists: Sequence[Sequence[str]], k: int = RRF_K) -> list[tuple[str, float]]:
    """Fuse ranked id lists: ``score(id) = sum over lists of 1 / (k + rank)``, rank 1-based.

    Ties keep the order in which ids were first seen (first list first), so
    the fusion is deterministic.

    Raises:
        ValueError: if ``k`` is negative.

    """
    if k < 0:
        raise ValueError(f"RRF k must be >= 0, got {k}")
    scores: dict[str, float] = {}
    for ranked in lists:
        seen: set[str] = set()
        for rank, uid in enumerate(ranked, start=1):
            if uid in seen:  # a duplicate inside one list must not count twice
                continue
            seen.add(uid)
            scores[uid] = scores.get(uid, 0.0) + 1.0 / (k + rank)
    order = {uid: i for i, uid in enumerate(scores)}
    return sorted(scores.items(), key=lambda item: (-item[1], order[item[0]]))


def make_system(name: str, memory: Any, recall_config: RecallConfig | None = None) -> System:
    """Build the system called ``name`` on ``memory``.

    Args:
        name: one of :data:`SYSTEM_NAMES`.
        memory: a ``RippleMem`` (or anything with the same methods).
        recall_config: base config for the recall systems; defaults to the
            memory's ``recall_config`` attribute, else ``RecallConfig()``.

    Raises:
        ValueError: if ``name`` is unknown.

    """
    factory = SYSTEM_FACTORIES.get(name)
    if factory is None:
        raise ValueError(f"unknown system {name!r}; choose from {', '.join(SYSTEM_NAMES)}")
    return factory(memory, recall_config)


def ripplemem(memory: Any, recall_config: RecallConfig | None = None) -> RecallSystem:
    """Full RippleMem recollection."""
    return _recall("ripplemem", memory, recall_config)


def ripplemem_paper(memory: Any, recall_config: RecallConfig | None = None) -> RecallSystem:
    """Full RippleMem with the paper's settings (the memory's own dataset preset), not the tuned base."""
    return _recall("ripplemem_paper", memory, getattr(memory, "recall_config", None) or RecallConfig())


def ripplemem_long_history(memory: Any, recall_config: RecallConfig | None = None) -> RecallSystem:
    """Full RippleMem with the ``long-history`` preset (:data:`~langchain_ripplemem.presets.LONG_HISTORY`)."""
    return _recall("ripplemem_long_history", memory, LONG_HISTORY)


def ablation(name: str) -> Callable[[Any, RecallConfig | None], RecallSystem]:
    """The factory of ablation ``name``: ``ripplemem`` with one knob of ``_ABLATIONS`` changed."""
    if name not in ABLATIONS and name not in VARIANTS:
        raise ValueError(f"{name!r} is not an ablation; choose one of {ABLATIONS}")

    def factory(memory: Any, recall_config: RecallConfig | None = None) -> RecallSystem:
        return _recall(name, memory, recall_config)

    factory.__doc__ = f"Ablation {name}: {_ABLATIONS[name] or CONSTANT_VARIANTS.get(name)}"
    return factory


def bm25(memory: Any, recall_config: RecallConfig | None = None) -> SearchSystem:
    """Baseline: BM25 top-k over restatements (``search(view="lexical")``)."""
    return SearchSystem("bm25", memory, "lexical")


def dense(memory: Any, recall_config: RecallConfig | None = None) -> SearchSystem:
    """Baseline: dense top-k over restatement embeddings (``search(view="semantic")``)."""
    return SearchSystem("dense", memory, "semantic")


def hybrid_rrf(memory: Any, recall_config: RecallConfig | None = None) -> HybridRRFSystem:
    """Baseline: BM25 and dense top-100 fused with RRF (k=60)."""
    return HybridRRFSystem("hybrid_rrf", memory)


def session_dense(memory: Any, recall_config: RecallConfig | None = None) -> SessionDocumentSystem:
    """Baseline: whole sessions ranked by dense cosine, each returned as its best turn (MemPalace's raw mode)."""
    return SessionDocumentSystem("session_dense", memory)


SYSTEM_FACTORIES: dict[str, Callable[[Any, RecallConfig | None], System]] = {
    "ripplemem": ripplemem,
    "ripplemem_paper": ripplemem_paper,
    "ripplemem_long_history": ripplemem_long_history,
    **{name: ablation(name) for name in ABLATIONS},
    **{name: ablation(name) for name in VARIANTS},
    "bm25": bm25,
    "dense": dense,
    "hybrid_rrf": hybrid_rrf,
    "session_dense": session_dense,
}


def describe_system(system: System) -> dict[str, Any]:
    """JSON-ready description of a system (its config), for the results file."""
    describe = getattr(system, "describe", None)
    return describe() if callable(describe) else {"kind": type(system).__name__}


def _recall(name: str, memory: Any, recall_config: RecallConfig | None) -> RecallSystem:
    base = recall_config or getattr(memory, "recall_config", None) or RecallConfig()
    return RecallSystem(name, memory, ablation_config(name, base), dict(CONSTANT_VARIANTS.get(name, {})))


def _search(memory: Any, view: str, namespace: Namespace, query: str, k: int) -> list[Any]:
    """``(unit id, score)`` of the memory's plain top-k in one view (``RippleMem.search``)."""
    return [(unit.id, score) for unit, score in memory.search(query, namespace=namespace, k=k, view=view)]


def _get_units(memory: Any, ids: list[str], namespace: Namespace) -> list[MemoryUnit]:
    """Fetch units in rank order; ids the store no longer has are skipped."""
    if not ids:
        return []
    units = memory.get(ids, namespace=namespace)
    by_id = {unit.id: unit for unit in units}
    # ``get`` preserves order by contract; re-ordering by id keeps us right even
    # if an implementation does not.
    return [by_id[uid] for uid in ids if uid in by_id]
