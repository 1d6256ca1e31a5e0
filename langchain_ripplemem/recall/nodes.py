"""The recall graph's nodes. Each reads settings from ``runtime.context`` and data through a reader.

Nodes read the memory through :class:`~langchain_ripplemem.recall.reader.MemoryReader`
only. The first node, ``extract_cues``, runs :meth:`MemoryReader.prepare`, so
every way into recall (``RippleMem.recall``, the compiled graph, a parent
graph) catches up with other writers and recovers from crashes the same way;
then it pins the namespace's walkable edges and pinned index
(:class:`~langchain_ripplemem.recall.state.PinnedNamespace`), which every later node
reads: one recall reads one state of the namespace, whatever is written meanwhile.

Nodes that may call an LLM (``extract_cues``, ``check_sufficiency``,
``answer``) have a sync and an async entry that share their preparation and
finishing code; under ``ainvoke`` the async entry runs that storage and CPU
work in a worker thread, so the event loop never blocks (LangGraph's dev
server refuses blocking calls on it). The other nodes are sync, and LangGraph
runs them in a worker thread under ``ainvoke``.

What every node reads (the run's context, the pinned namespace, the chat model) is
:class:`~langchain_ripplemem.recall.node_context.NodeContext`'s; the ``answer`` node is
:class:`~langchain_ripplemem.recall.answer_node.AnswerNode`'s.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Sequence
from typing import Any

import networkx as nx
import numpy as np
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from langchain_ripplemem._runtime.tracing import round_run
from langchain_ripplemem.index.sessions import speakers
from langchain_ripplemem.llm.calls import StructuredOutcome, acall_structured, call_structured
from langchain_ripplemem.recall import kept_places
from langchain_ripplemem.recall.answer_node import AnswerNode
from langchain_ripplemem.recall.assembly import aligner, alignment_mode, assemble_memories
from langchain_ripplemem.recall.bridging import BRIDGE_FLOOR, round_strength, time_hits
from langchain_ripplemem.recall.controller import (
    ControllerInput,
    HeuristicController,
    LLMController,
    budget_stop,
    target_cues,
)
from langchain_ripplemem.recall.evidence import Evidence, FoundHit, supports
from langchain_ripplemem.recall.expansion import Unreachable, expand_channel
from langchain_ripplemem.recall.filters import empty_filter_warning, outside
from langchain_ripplemem.recall.node_context import NodeContext, timed_usage
from langchain_ripplemem.recall.query_cues import (
    cues_from_llm,
    move_speakers,
    reference_time,
    rule_based_cues,
    with_asker,
)
from langchain_ripplemem.recall.reader import MemoryReader
from langchain_ripplemem.recall.recall_prompts import QUERY_CUES_PROMPT, QueryCueOutput
from langchain_ripplemem.recall.set_questions import keep_own, own_views
from langchain_ripplemem.recall.smoothing import unknown_asker
from langchain_ripplemem.recall.state import PinnedNamespace, Plan, RecallState, ResolvedContext
from langchain_ripplemem.recall.updates import asked_time, order_updates
from langchain_ripplemem.recall.views import RECALL_VIEWS, ViewQuery
from langchain_ripplemem.recall.visibility import hidden_ids, score_weight
from langchain_ripplemem.recall.walks import shared_walks
from langchain_ripplemem.schemas import EdgeType, RecallResult, RoundTrace, Usage, is_blank
from langchain_ripplemem.text.cue_scores import structural_score
from langchain_ripplemem.text.identifying import TOPIC_WEIGHT


class RecallNodes(AnswerNode, NodeContext):
    """Node functions bound to one memory reader and (optionally) one chat model."""

    def __init__(self, reader: MemoryReader, llm: Any = None) -> None:
        super().__init__(reader, llm)
        self._fallback = HeuristicController()
        self.controller: Any = LLMController(llm) if llm is not None else self._fallback

    # -- extract_cues ----------------------------------------------------------------
    def _start(self, state: RecallState) -> tuple[ResolvedContext, PinnedNamespace, Any]:
        """Check the query, prepare the namespace (every recall's one preparation), pin it, build the cue prompt."""
        query = state.get("query")
        if not isinstance(query, str) or is_blank(query):  # zero-width characters alone are as empty as spaces
            raise ValueError(f"query must be a non-empty string, got {query!r}")
        ctx = self._ctx().with_input(state)  # the input's filter values win over the context's
        self.reader.prepare(ctx.namespace)
        pinned = self._pin(ctx)
        if self.llm is None:
            return ctx, pinned, None
        ref = ctx.reference_time or ctx.as_of or reference_time(pinned.index)
        return ctx, pinned, QUERY_CUES_PROMPT.invoke({"query": query, "reference": ref.date().isoformat()})

    def _cues_update(self, state: RecallState, ctx: ResolvedContext, pinned: PinnedNamespace, started: float,
                     outcome: StructuredOutcome | None = None) -> dict[str, Any]:
        query = state["query"]
        index = pinned.index
        parsed: QueryCueOutput | None = outcome.value if outcome is not None else None
        cues = rule_based_cues(query, index, ctx.reference_time or ctx.as_of)
        if parsed is not None:  # the LLM's cues add to the grounded ones
            cues = cues_from_llm(query, parsed, cues)
        warnings, down = [], None
        if outcome is not None and parsed is None:
            why = outcome.errors[-1] if outcome.errors else str(outcome.failure)
            warnings.append(f"query cues: the chat model failed ({why}); rule-based cues were used")
            down = why if outcome.unreachable else None
        names = speakers(index)
        if ctx.asker:
            cues, warnings = with_asker(cues, ctx.asker, names), [*warnings, *unknown_asker(ctx.asker, names)]
        if ctx.config.scoring.speaker_bonus:
            cues = move_speakers(cues, names)
        vector = self.reader.embed_query(cues.query)
        # Suppressed memories (and, with as_of, later ones) stay out of every view, walk and assembly;
        # so do those outside the call's filter: never a candidate, an anchor or a step of a walk.
        unseen = hidden_ids(index, ctx.as_of)
        if (scope := ctx.filter).active:
            unseen |= outside(index, scope)
            warnings += empty_filter_warning(index, unseen, scope)
        hidden = sorted(unseen)
        return {"pinned": pinned, "cues": cues, "query_vector": vector.tolist(), "evidence": {}, "hidden": hidden,
                "anchors": [],
                "answering": bool(state.get("with_answer")),
                "round": 0, "last_added": -1, "rounds": [], "warnings": warnings, "model_down": down,
                "usage": timed_usage(None, "extract_cues", started, outcome.usage if outcome else None)}

    def extract_cues(self, state: RecallState) -> dict[str, Any]:
        """Semantic query, keywords, participants, locations and time of the question."""
        started = time.perf_counter()
        ctx, pinned, messages = self._start(state)
        if messages is None:
            return self._cues_update(state, ctx, pinned, started)
        retries = ctx.config.controller.llm_max_retries
        outcome = call_structured(self.llm, QueryCueOutput, messages, retries=retries)
        return self._cues_update(state, ctx, pinned, started, outcome)

    async def aextract_cues(self, state: RecallState) -> dict[str, Any]:
        """Async :meth:`extract_cues`."""
        started = time.perf_counter()
        ctx, pinned, messages = await asyncio.to_thread(self._start, state)
        if messages is None:
            return await asyncio.to_thread(self._cues_update, state, ctx, pinned, started)
        retries = ctx.config.controller.llm_max_retries
        outcome = await acall_structured(self.llm, QueryCueOutput, messages, retries=retries)
        return await asyncio.to_thread(self._cues_update, state, ctx, pinned, started, outcome)

    # -- tri_view_recall -------------------------------------------------------------
    def tri_view_recall(self, state: RecallState, config: RunnableConfig) -> Command[str]:
        """Every first-hop view's top-k (``views.RECALL_VIEWS``), united by id with per-view rank and score."""
        ctx, started = self._ctx(), time.perf_counter()
        index = self._view(state, ctx).index
        query = ViewQuery(state["cues"], np.asarray(state["query_vector"], dtype=np.float32),
                          set(state.get("hidden") or ()))
        views = {v.name: v.search(index, query, v.k(ctx.config), ctx.config, self.reader.write_config.linking)
                 for v in RECALL_VIEWS}
        evidence: Evidence = {}
        for source, ranked in views.items():
            for rank, (uid, score) in enumerate(ranked):
                evidence.setdefault(uid, []).append(FoundHit(source, rank, float(score)))
        first_hop = {source: [uid for uid, _ in ranked] for source, ranked in views.items()}
        with round_run(config, "tri_view_recall", 0, namespace=list(ctx.namespace)) as out:
            out.update(first_hop=first_hop, counts={k: len(v) for k, v in first_hop.items()},
                       evidence=len(evidence))
        return self._evidence_step(ctx, {
            "evidence": evidence, "support": supports(evidence, ctx.config),
            "rounds": [RoundTrace(round=0, first_hop=first_hop)],
            "last_added": len(evidence), "usage": timed_usage(state.get("usage"), "tri_view_recall", started)})

    def _evidence_step(self, ctx: ResolvedContext, update: dict[str, Any]) -> Command[str]:
        """After new evidence: on to the controller, or straight to assembly when a budget ends the loop.

        The budget stops need no controller, so the round's trace records them here and
        the loop skips a ``check_sufficiency`` run that could only say stop. A spent budget
        stops the loop without judging the evidence: the round is not marked sufficient.
        """
        stop = budget_stop(update.get("round", 0), update["last_added"], ctx.config.controller)
        if stop is None:
            return Command(update=update, goto="check_sufficiency")
        rounds = update["rounds"]
        rounds[-1] = rounds[-1].model_copy(update={"sufficient": False, "reason": stop["reason"]})
        return Command(update={**update, "plan": stop}, goto="assemble")

    # -- check_sufficiency -------------------------------------------------------------
    def _controller_input(self, state: RecallState, ctx: ResolvedContext,
                          connected: Collection[str] | None = None) -> ControllerInput:
        pinned = self._view(state, ctx)
        if connected is None:
            connected = self._with_edges(pinned, state["evidence"])
        return ControllerInput(
            query=state["query"], cues=state["cues"], evidence=state["evidence"],
            index=pinned.index, round=state["round"], config=ctx.config,
            with_edges=set(connected),
            support=state.get("support"))

    def _decided(self, decision: Plan, inp: ControllerInput) -> Plan:
        """The decision, carrying which evidence has edges: its plan reads the same evidence next."""
        decision["with_edges"] = sorted(inp.with_edges)
        return decision

    def _controller(self, state: RecallState) -> Any:
        """The LLM controller, or the heuristic one once the chat model was found unreachable."""
        return self._fallback if state.get("model_down") else self.controller

    def _decision_update(self, state: RecallState, ctx: ResolvedContext, decision: Plan,
                         started: float, config: RunnableConfig) -> Command[str]:
        update: dict[str, Any] = {}
        if decision.get("warning") and not decision.get("model_down"):  # unreachable: its own warning below
            update["warnings"] = [*state.get("warnings", []), decision["warning"]]
        if decision.get("model_down") and not state.get("model_down"):
            # Unreachable now: decide this round, and plan it, with the heuristic controller.
            down = decision["model_down"]
            usage = decision.get("usage")
            inp = self._controller_input(state, ctx, decision.get("with_edges"))
            decision = self._decided(self._fallback.decide(inp), inp)
            decision["usage"] = usage or Usage()
            update = {"model_down": down, "warnings": [
                *state.get("warnings", []), f"controller: the chat model is unreachable ({down}); "
                "the heuristic controller decided, and no further chat model call was made"]}
        rounds = list(state["rounds"])
        rounds[-1] = rounds[-1].model_copy(update={
            "sufficient": not decision["should_continue"], "reason": decision.get("reason", "")})
        with round_run(config, "check_sufficiency", state["round"], evidence=len(state["evidence"])) as out:
            out.update(should_continue=decision["should_continue"], reason=decision.get("reason", ""))
        usage = timed_usage(state["usage"], "check_sufficiency", started, decision.get("usage"))
        return Command(update={**update, "plan": decision, "rounds": rounds, "usage": usage},
                       goto="plan_expansion" if decision["should_continue"] else "assemble")

    def check_sufficiency(self, state: RecallState, config: RunnableConfig) -> Command[str]:
        """Ask the controller whether the evidence suffices (budgets checked first)."""
        ctx, started = self._ctx(), time.perf_counter()
        decision = budget_stop(state["round"], state["last_added"], ctx.config.controller)
        if decision is None:
            inp = self._controller_input(state, ctx)
            decision = self._decided(self._controller(state).decide(inp), inp)
        return self._decision_update(state, ctx, decision, started, config)

    async def acheck_sufficiency(self, state: RecallState, config: RunnableConfig) -> Command[str]:
        """Async :meth:`check_sufficiency`."""
        ctx, started = self._ctx(), time.perf_counter()
        decision = budget_stop(state["round"], state["last_added"], ctx.config.controller)
        if decision is None:
            inp = await asyncio.to_thread(self._controller_input, state, ctx)
            adecide = getattr(self._controller(state), "adecide", None)
            decision = self._decided(await adecide(inp) if adecide else
                                     await asyncio.to_thread(self._fallback.decide, inp), inp)
        assert decision is not None
        return await asyncio.to_thread(self._decision_update, state, ctx, decision, started, config)

    # -- plan_expansion ----------------------------------------------------------------
    def plan_expansion(self, state: RecallState, config: RunnableConfig) -> Command[str]:
        """Anchors and the missing-support target for the next round."""
        ctx, started = self._ctx(), time.perf_counter()
        inp = self._controller_input(state, ctx, state["plan"].get("with_edges"))
        plan = self._controller(state).plan(inp, state["plan"])
        if not ctx.config.controller.use_planning:
            # Ablation: the same anchors, but search for the query itself (its cues, not the anchors' names).
            cues, index = state["cues"], self._view(state, ctx).index
            keys = index.known_keys(cues.query, speakers(index)) if target_cues(ctx.config) else []
            plan["target"] = None if plan.get("target") is None else plan["target"].model_copy(update={
                "restatement": state["query"], "keywords": cues.keywords, "restates_query": True,
                "participants": cues.participants, "locations": cues.locations, "time": cues.time,
                "cues": keys})
        update: dict[str, Any] = {}
        if plan.get("warning"):
            update["warnings"] = [*state.get("warnings", []), plan["warning"]]
        if (event := plan.get("event_time")) is not None:  # the query's own time, now grounded: assembly rewards it
            update["cues"] = state["cues"].model_copy(update={"time": event.time})
        rounds = list(state["rounds"])
        if not plan.get("anchors"):  # nothing to expand from: the loop stops, the evidence still short
            rounds[-1] = rounds[-1].model_copy(update={"sufficient": False, "reason": plan.get("reason", "")})
        else:
            rounds.append(RoundTrace(round=state["round"] + 1, anchors=plan["anchors"],
                                     target=plan.get("target"), reason=plan.get("reason", "")))
        with round_run(config, "plan_expansion", state["round"] + 1, evidence=len(state["evidence"])) as out:
            out.update(anchors=plan.get("anchors", []), target=plan.get("target"))
        return Command(update={**update, "plan": plan, "rounds": rounds,
                               "anchors": [*state["anchors"], *plan.get("anchors", [])],
                               "usage": timed_usage(state["usage"], "plan_expansion", started)},
                       goto="expand" if plan.get("anchors") else "assemble")

    # -- expand ----------------------------------------------------------------------
    def expand(self, state: RecallState, config: RunnableConfig) -> Command[str]:
        """Per-channel expansion within ``hops`` of the anchors, scored against the target."""
        ctx, started = self._ctx(), time.perf_counter()
        cfg, plan = ctx.config, state["plan"]
        target, anchors = plan.get("target"), plan["anchors"]
        if target is None:  # controllers always pair anchors with a target; routing needs anchors
            raise RuntimeError("expand: the plan has anchors but no missing-support target")
        pinned = self._view(state, ctx)
        index, graph = pinned.index, pinned.graph
        rows_now = len(index)  # the scores below cover these rows
        if state.get("hidden"):
            # Hidden memories are neither results nor bridges: no path runs through them.
            graph = nx.restricted_view(graph, state["hidden"], [])
        evidence = dict(state["evidence"])  # a memory's list is copied when it gains a hit: states never change
        if target.restates_query:
            # The heuristic target adds words, not meaning: keep the query's vector
            # (no second encoder call) and let BM25 weigh the added keywords.
            target_vec = np.asarray(state["query_vector"], dtype=np.float32)
            target_text = " ".join([state["cues"].query, *target.keywords])
        else:
            target_vec, target_text = self.reader.embed_query(target.restatement), target.restatement
        align = aligner(index, target_vec, target_text, alignment_mode(cfg))  # one BM25 pass for both channels

        def semantic_scores(ids: list[str]) -> list[float]:
            return align(ids)[0].tolist()  # type: ignore[no-any-return]

        overlap: list[np.ndarray] = []  # the target's cue overlap over the namespace, for both structural scorers

        def structural_scores(ids: list[str]) -> list[float | None]:
            if target_cues(cfg) and target.cues:  # rarity-weighted overlap with the target's cues
                if not overlap:
                    overlap.append(index.key_overlap(target.cues, topic_weight=TOPIC_WEIGHT))
                return overlap[0][[index.pos[i] for i in ids]].tolist()  # type: ignore[no-any-return]
            return [structural_score(target, index.units[index.pos[i]], self.reader.write_config.linking)
                    for i in ids]

        scorers: dict[str, Callable[[list[str]], Sequence[float | None]]] = {
            "semantic": semantic_scores, "structural": structural_scores}
        switches: tuple[tuple[EdgeType, bool], ...] = (("semantic", cfg.expansion.expand_semantic),
                                                       ("structural", cfg.expansion.expand_structural))
        channels = [c for c, on in switches if on]
        next_round, added, paths, kinds = state["round"] + 1, [], {}, {}
        # Asked per node a walk reaches, not built over every edge. With bridging, the
        # structural channel also ranks evidence it reaches: a first-hop memory that shares
        # the anchors' rare cues gains path support (recall/assembly.py).
        excluded = {"semantic": Unreachable(taken=set(evidence), rows=index.pos, limit=rows_now),
                    "structural": Unreachable(taken=set() if cfg.bridging.weight else set(evidence),
                                              rows=index.pos, limit=rows_now)}
        bridging = cfg.bridging
        strengths = {"semantic": None, "structural": round_strength(index, bridging, TOPIC_WEIGHT,
                                                                    state["round"])}
        hits = [hit for channel in channels
                for hit in expand_channel(graph, anchors, channel, scorers[channel], cfg.expansion,
                                          strength=strengths[channel], exclude=excluded[channel],
                                          tiebreak=semantic_scores,
                                          path_floor=BRIDGE_FLOOR if channel == "structural" and bridging.weight
                                          else None,
                                          walks=shared_walks(index, graph, channel, strengths[channel]))]
        if bridging.weight and cfg.expansion.expand_structural:  # time is a structural cue too: bridged at read time
            hits += time_hits(index, anchors, structural_scores, floor=BRIDGE_FLOOR, top_n=cfg.expansion.per_channel,
                              exclude=Unreachable(taken=set(state.get("hidden") or ()), rows=index.pos, limit=rows_now),
                              event=plan.get("event_time"))
        for hit in hits:
            if hit.unit_id not in evidence:
                added.append(hit.unit_id)
                paths[hit.unit_id], kinds[hit.unit_id] = hit.path, hit.channel
            evidence[hit.unit_id] = [*evidence.get(hit.unit_id, ()), FoundHit(
                "expansion", hit.rank, hit.score, next_round, hit.channel, hit.anchor, hit.path, hit.strength)]
        rounds = list(state["rounds"])
        rounds[-1] = rounds[-1].model_copy(update={"expanded": added, "paths": paths, "channels": kinds})
        with round_run(config, "expand", next_round, anchors=anchors) as out:
            out.update(expanded=added, count=len(added))
        known = state.get("support")
        known = known if known is not None and len(known) == len(state["evidence"]) else None
        found = supports(evidence, cfg, known, {hit.unit_id for hit in hits})
        return self._evidence_step(ctx, {"evidence": evidence, "support": found, "round": next_round,
                                         "last_added": len(added),
                                         "rounds": rounds, "usage": timed_usage(state["usage"], "expand", started)})

    # -- assemble (answer: recall/answer_node.py) ------------------------------------------
    def assemble(self, state: RecallState, config: RunnableConfig) -> dict[str, Any]:
        """rho-scored, deduplicated, budgeted evidence set: the RecallResult."""
        ctx, started = self._ctx(), time.perf_counter()
        index, cfg = self._view(state, ctx).index, ctx.config
        reference = (ctx.as_of or ctx.reference_time or reference_time(index)) \
            if cfg.lifecycle.recency_half_life_days is not None else None
        vector = np.asarray(state["query_vector"], dtype=np.float32)
        # The kept first hop (recall/kept_places.py): dense of the question as asked, BM25 of the lexical view's text.
        plain = None if not kept_places.KEEP_FIRST_HOP or state["query"] == state["cues"].query else \
            np.asarray(self.reader.embed_query(state["query"]), dtype=np.float32)
        # A set question's own matches: by the question as asked and by what it asks for ("sports").
        own = own_views(state["query"], state["cues"], vector, self.reader.embed_query, plain) \
            if keep_own(cfg.research.paper_rules) else []
        query = ViewQuery(state["cues"], vector, set(state.get("hidden") or ()))
        memories = assemble_memories(state["evidence"], set(state["anchors"]), index, query, cfg, plain=plain,
                                     own_views=own,
                                     support=state.get("support"), weight=score_weight(cfg.lifecycle, ctx.as_of,
                                                                                       reference))
        if cfg.lifecycle.asked_first:
            memories = order_updates(memories, index, asked_time(state["query"], state["cues"].time), query.hidden,
                                     vector, cfg.assembly.top_k)
        usage = timed_usage(state["usage"], "assemble", started)
        with round_run(config, "assemble", state["round"], evidence=len(state["evidence"])) as out:
            out.update(ids=[m.unit.id for m in memories], count=len(memories))
        result = RecallResult(query=state["query"], namespace=ctx.namespace, cues=state["cues"],
                              warnings=list(state.get("warnings") or ()),
                              memories=memories, rounds=state["rounds"], usage=usage)
        return {"result": result, "usage": usage}
