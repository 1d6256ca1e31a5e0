"""The recall controller ``Pi_rec(q, c_q, C) -> (d, A, g, s)``: heuristic (offline) and LLM.

Both answer two questions each round: *is the evidence enough?* (``decide``)
and, if not, *what is missing and where to look?* (``plan``: anchors and a
missing-support target).

The heuristic controller reads coverage off the evidence. A query term or cue
that no recalled memory mentions is uncovered: *missing support* when some other
memory holds it, a word of the question when none does (the target aims only at
the first; either keeps the evidence from counting as sufficient). Anchors are the
best-supported memories, preferring those that touch the query's cues and sit
in the graph; the target combines the query, the missing terms, and the cue
values the anchors share with the query (their participants, places and time),
so expansion looks for what the anchors' neighbourhood adds, not for more of
what is already there. With :data:`TARGET_CUES` the target also
carries the anchors' rarest identifying cues (a restaurant's name, a pet's, a
topic word few memories use): the structural channel then scores a candidate by
how many of those rare cues it shares, weighted by rarity.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np

from langchain_ripplemem.config import ControllerConfig, RecallConfig
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.index.sessions import per_index, speakers
from langchain_ripplemem.llm.calls import StructuredOutcome, acall_structured, call_structured, resolve_chat_model
from langchain_ripplemem.recall.bridging import BRIDGE_FLOOR, KEY_BUDGET, EventTime, bridge_potentials, mentioned_time
from langchain_ripplemem.recall.evidence import AnyHit, supports
from langchain_ripplemem.recall.recall_prompts import CONTROLLER_PROMPT, ControllerPlan
from langchain_ripplemem.recall.state import HeuristicWork, Plan
from langchain_ripplemem.render.plain_text import memory_line
from langchain_ripplemem.schemas import ExpansionTarget, MemoryUnit, QueryCues, TimeInterval, counted
from langchain_ripplemem.text.lexical import content_words, lexical_token_set, stem
from langchain_ripplemem.text.time.relative_time import concurrent_times, relative_times, shift

# A name at least this rare says what the missing support is about (a speaker's name says nothing).
_TARGET_MIN_RARITY = 0.5

#: The target carries this many of each anchor's rarest identifying names, and the structural channel
#: scores candidates by rarity-weighted overlap with them; 0 under ``research.paper_rules`` (the paper's
#: s_str against the target's participants, places and time). Tuned with the bridging rules of issue 13 on
#: the linked suite's tune split and LoCoMo's tuning conversations (docs/benchmarks.md, "Linked recall").
TARGET_CUES = 3
#: An anchor candidate's support is multiplied by 1 + this x its bridge potential (the rarity of its rarest
#: name other memories hold), and the controller does not stop while a likely anchor has such a name: the
#: linked suite 82.1 % -> 92.9 % (0: 83.9 %; docs/benchmarks.md, "Linked-evidence suite"); 0 under
#: ``research.paper_rules`` (anchors by support alone).
ANCHOR_BRIDGE_WEIGHT = 0.3


def target_cues(config: RecallConfig) -> int:
    """How many rare names of each anchor the target carries (:data:`TARGET_CUES`; 0: the paper's target)."""
    return 0 if config.research.paper_rules else TARGET_CUES


def anchor_bridge_weight(config: RecallConfig) -> float:
    """How much a rare name to bridge over lifts an anchor (:data:`ANCHOR_BRIDGE_WEIGHT`; 0: the paper's anchors)."""
    return 0.0 if config.research.paper_rules else ANCHOR_BRIDGE_WEIGHT


def cue_values(index: NamespaceIndex) -> list[frozenset[str]]:
    """Per row, its unit's participants and places, lower-cased (what a query's cues are compared with).

    Kept with the namespace index (:func:`~langchain_ripplemem.index.sessions.per_index`): each
    round's anchor candidates ask it of every memory in the evidence. Rows with the
    same values share one set.
    """
    return per_index(index, "cue_values", lambda v, n: _rows_cue_values(v, 0, n),
                    lambda v, known, before, n: known + _rows_cue_values(v, before, n))


def _lower_cues(unit: MemoryUnit) -> frozenset[str]:
    return frozenset(v.lower() for v in (*unit.participants, *unit.locations))


def _rows_cue_values(index: NamespaceIndex, start: int, stop: int) -> list[frozenset[str]]:
    shared: dict[frozenset[str], frozenset[str]] = {}
    return [shared.setdefault(values, values) for values in map(_lower_cues, index.units[start:stop])]


@dataclass
class ControllerInput:
    """What a controller sees in one round."""

    query: str
    cues: QueryCues
    evidence: Mapping[str, Sequence[AnyHit]]
    index: NamespaceIndex
    round: int
    config: RecallConfig
    with_edges: Collection[str]  # the evidence memories with an edge (the others cannot anchor)
    # Each evidence memory's provenance support under ``config`` (evidence.supports); None: summed when asked.
    support: Mapping[str, float] | None = None

    def supports(self) -> Mapping[str, float]:
        """Every evidence memory's provenance support: as given, else summed over its hits once."""
        if self.support is None or len(self.support) != len(self.evidence):
            self.support = supports(self.evidence, self.config)
        return self.support


def budget_stop(round_number: int, last_added: int, controller: ControllerConfig) -> Plan | None:
    """The stop a budget decides without the controller: rounds spent, or a round that added nothing."""
    if round_number >= controller.max_rounds:
        return Plan(should_continue=False, reason=f"round budget spent ({controller.max_rounds})")
    if round_number > 0 and last_added == 0:
        return Plan(should_continue=False, reason="expansion added nothing")
    return None


class HeuristicController:
    """Offline controller: coverage-based sufficiency and missing-support targets.

    The evidence is sufficient only when every query term and cue is covered and the
    best first-hop cosine reaches ``RecallConfig.controller.sufficiency_similarity``.
    """

    def missing_terms(self, inp: ControllerInput) -> list[str]:
        """Query content words that no memory in the evidence mentions and some other memory does."""
        return self.uncovered_terms(inp)[0]

    def uncovered_terms(self, inp: ControllerInput) -> tuple[list[str], list[str]]:
        """Query content words no evidence memory mentions: ``(missing, unheld)``.

        *Missing* support is a word some other memory holds: expansion can look for
        it. An *unheld* word is one no memory holds at all ("accept" in "Should Maya
        accept Sam's pick?"): a word of the question, which the target does not aim
        at. Either keeps the evidence from counting as sufficient.
        """
        cue_words = {w for value in inp.cues.participants for w in value.split()}
        index = inp.index
        # A query word's postings against the evidence rows: no memory's text is tokenised again.
        words = [w for w in content_words(inp.query) if w not in cue_words]
        if not words:
            return [], []
        postings = [index.term_rows(stem(w)) for w in words]
        held = np.zeros(max([len(index), *(int(p.max()) + 1 for p in postings if len(p))]), dtype=bool)
        held[[index.pos[uid] for uid in inp.evidence if uid in index.pos]] = True
        uncovered = [(w, bool(len(rows))) for w, rows in zip(words, postings, strict=True) if not held[rows].any()]
        return [w for w, somewhere in uncovered if somewhere], [w for w, somewhere in uncovered if not somewhere]

    def bridge_anchors(self, inp: ControllerInput, in_graph: list[str]) -> list[str]:
        """After a round, expand from what the last round bridged to (a chain: name, then topic).

        The candidates are memories the last round reached over structural edges,
        ranked as expansion ranked them (path strength, lifted by target overlap);
        memories already expanded from are skipped.
        """
        hits = [h for hits in inp.evidence.values() for h in hits if h.source == "expansion"]
        used = {h.anchor for h in hits}
        last = max((h.round for h in hits), default=0)
        best: dict[str, float] = {}
        floor, sup = BRIDGE_FLOOR, inp.supports()
        for uid in in_graph:
            for h in inp.evidence[uid]:
                if h.source == "expansion" and h.channel == "structural" and h.round == last and uid not in used \
                        and h.anchor is not None and h.anchor in inp.evidence:
                    # What the memory inherits from the anchor that reached it (as assembly lifts it).
                    score = sup[h.anchor] * (h.edge_weight or 0.0) \
                        * (floor + (1.0 - floor) * h.score)
                    best[uid] = max(best.get(uid, 0.0), score)
        return sorted(best, key=lambda uid: (-best[uid], uid))[: inp.config.controller.max_anchors]

    def target_keys(self, inp: ControllerInput, anchors: list[str]) -> list[str]:
        """The identifying cues the missing support should share: the query's, then the anchors' rarest.

        Each anchor contributes its :func:`target_cues` rarest *names* (a person, place or
        thing) that another memory also has, with rarity at least 0.5 (a speaker's
        name identifies nothing), in anchor order. Topic words of the anchors stay
        out: a memory reached over a topic edge shares them by construction, so they
        would say nothing about it; a name says what the missing support is about.
        """
        index = inp.index
        keys = index.known_keys(inp.query, speakers(index))
        for anchor in anchors:
            row = index.pos.get(anchor)
            if row is None:
                continue
            # Only cues some other memory shares can bridge: a cue of one memory alone is left out.
            ranked = sorted(((index.rarity(k), k) for k in index.keys[row] if k not in keys and index.is_name(k)
                             and len(index.postings["cues"].get(k, ())) > 1), key=lambda t: -t[0])
            keys += [k for w, k in ranked[: target_cues(inp.config)] if w >= _TARGET_MIN_RARITY]
        return keys

    def candidates(self, inp: ControllerInput) -> list[tuple[str, float, float]]:
        """Evidence with edges as ``(id, anchor score, bridge potential)``, best anchor first.

        The anchor score is provenance support, plus 0.05 when the memory shares a
        participant or place with the query, times ``1 + ANCHOR_BRIDGE_WEIGHT x
        potential``: a memory naming a rare thing other memories also hold
        (:func:`~langchain_ripplemem.recall.bridging.bridge_potential`) is where the
        missing support is likeliest to hang ("I booked Harbor Grill" for "Sam's
        dinner pick"), even when the first hop ranks it below memories that only
        repeat the question's words.

        Only the first ``max_anchors`` are used, and only they are exact: a potential
        is at most 1, so the potential of a memory whose score could not reach them
        even times ``1 + ANCHOR_BRIDGE_WEIGHT`` is not computed (0).
        """
        cfg, weight = inp.config, anchor_bridge_weight(inp.config)
        query_cues = set(inp.cues.participants) | set(inp.cues.locations)
        base: dict[str, float] = {}
        index, connected = inp.index, inp.with_edges
        values = cue_values(index) if query_cues else []
        sup = inp.supports()
        for uid in inp.evidence:
            if uid not in connected:
                continue
            score = sup[uid]
            if query_cues and (row := index.pos.get(uid)) is not None and not query_cues.isdisjoint(
                    values[row] if row < len(values) else _lower_cues(index.units[row])):
                score += 0.05
            base[uid] = score
        # Best first, ties by id: by id, then (stably) by score, keys read in C rather than built per memory.
        order = sorted(sorted(base), key=base.__getitem__, reverse=True)
        if not weight:
            return [(uid, base[uid], 0.0) for uid in order]
        bar = base[order[cfg.controller.max_anchors - 1]] if len(order) >= cfg.controller.max_anchors else 0.0
        known = set(inp.index.known_keys(inp.query, speakers(inp.index)))
        potentials = bridge_potentials(inp.index, KEY_BUDGET)
        ranked = []
        for uid in order:
            likely = base[uid] * (1.0 + weight) >= bar
            potential = potentials(uid, known) if likely else 0.0
            ranked.append((uid, base[uid] * (1.0 + weight * potential), potential))
        return sorted(sorted(ranked), key=itemgetter(1), reverse=True)

    def event_time(self, inp: ControllerInput) -> EventTime | None:
        """A time the query names relative to an event, grounded from the evidence.

        "the weekend before her second interview at Lumen Labs", "while Maya is away in
        Lisbon": the event's memory is the recalled memory whose own words name a time
        (:func:`~.bridging.mentioned_time`) and that shares the most names (a place, an
        organisation: "Lisbon"), then the most words, with the text after the phrase
        (speakers' names left out: half the memories hold them), then the best
        supported; the time is that memory's, moved (:func:`~.relative_time.shift`).
        For "while", :attr:`EventTime.about` holds the people the query's main clause
        names. ``None`` when the query has its own time, no such phrase, or no such memory.
        """
        if inp.cues.time is not None:
            return None
        index, sup = inp.index, inp.supports()
        people = speakers(index)
        left_out = set().union(*(lexical_token_set(name) for name in people))
        for rel in [*relative_times(inp.query), *concurrent_times(inp.query)]:
            text = inp.query[rel.end:]
            words = lexical_token_set(text) - left_out
            names = {key for key in index.known_keys(text, people) if index.is_name(key)}
            best: tuple[tuple[int, int, float], str, TimeInterval] | None = None
            for uid in inp.evidence:
                row = index.pos.get(uid)
                if row is None or (when := mentioned_time(unit := index.units[row])) is None:
                    continue
                shared = (len(names.intersection(index.keys[row])), len(words & lexical_token_set(unit.restatement)))
                if any(shared) and (best is None or (*shared, sup[uid]) > best[0]):
                    best = ((*shared, sup[uid]), uid, when)
            if best is not None and (moved := shift(best[2], rel)) is not None:
                overlapping = rel.period == "while"
                head = lexical_token_set(inp.query[: rel.start]) if overlapping else frozenset()
                about = frozenset(p for p in inp.cues.participants if lexical_token_set(p) & head)
                return EventTime(best[1], moved, overlapping=overlapping, about=about)
        return None

    def decide(self, inp: ControllerInput) -> Plan:
        """Stop when every query term is covered by a strong first hop and no likely anchor has an unexplored bridge.

        What it computes on the way (missing terms, ranked candidates, the event time)
        rides along in the plan (``Plan["heuristic"]``), so :meth:`plan` of the same
        round does not compute it again.
        """
        work = HeuristicWork(round=inp.round, evidence=len(inp.evidence))
        if inp.round == 0 and inp.config.bridging.weight:
            work.event = self.event_time(inp)
            if work.event is not None:
                return Plan(should_continue=True, heuristic=work, reason="the question's time is relative to an "
                            "event a recalled memory dates: look in that time")
        missing, unheld = self.uncovered_terms(inp)
        work.missing = missing
        top_semantic = max((h.score for hits in inp.evidence.values() for h in hits
                            if h.source == "semantic"), default=0.0)
        # With a query word uncovered, the evidence is not sufficient whatever the bridges: none is ranked.
        if anchor_bridge_weight(inp.config) and not missing and not unheld:
            work.candidates = self.candidates(inp)
        bridges = [(p, uid) for uid, _, p in (work.candidates or [])[: inp.config.controller.max_anchors]
                   if p >= _TARGET_MIN_RARITY]
        if not missing and not unheld and top_semantic >= inp.config.controller.sufficiency_similarity \
                and not bridges:
            return Plan(should_continue=False, reason="evidence covers every query term and cue "
                        f"(best semantic match {top_semantic:.2f})")
        if missing:
            why = f"missing support for: {', '.join(missing)}"
        elif unheld:
            why = f"no memory says {', '.join(unheld)}: more support from around the best matches"
        elif bridges:
            why = "a recalled memory names something other memories also hold (what else is known about it?)"
        else:
            why = f"weak first hop (best semantic match {top_semantic:.2f})"
        return Plan(should_continue=True, reason=why, heuristic=work)

    def plan(self, inp: ControllerInput, decision: Plan) -> Plan:
        """Anchors: the best candidates (:meth:`candidates`); target: query + missing + anchor cues."""
        cfg = inp.config
        work = decision.get("heuristic")
        if work is None or (work.round, work.evidence) != (inp.round, len(inp.evidence)):
            work = HeuristicWork(round=inp.round, evidence=len(inp.evidence))  # decided elsewhere: compute here
            work.event = self.event_time(inp) if inp.round == 0 and cfg.bridging.weight else None
        event = work.event
        if inp.round > 0 and cfg.bridging.weight:  # a chain: on from what the last round bridged to
            anchors = self.bridge_anchors(inp, [uid for uid in inp.evidence if uid in inp.with_edges])
        else:
            if work.candidates is None:
                work.candidates = self.candidates(inp)
            anchors = [uid for uid, _, _ in work.candidates[: cfg.controller.max_anchors]]
            if event is not None:  # expand from the event's memory too; the query's time is now known
                anchors = [event.memory, *(a for a in anchors if a != event.memory)][: cfg.controller.max_anchors]
        units = [u for u in (inp.index.unit(a) for a in anchors) if u is not None]
        missing = work.missing if work.missing is not None else self.missing_terms(inp)
        participants = list(dict.fromkeys([*inp.cues.participants,
                                           *(p.lower() for u in units for p in u.participants)]))
        locations = list(dict.fromkeys([*inp.cues.locations,
                                        *(loc.lower() for u in units for loc in u.locations)]))
        time = inp.cues.time or (event.time if event else next((u.time for u in units if u.time is not None), None))
        cues = self.target_keys(inp, anchors) if target_cues(cfg) else []
        role = f"missing: {', '.join(missing)}" if missing else "more support"
        about = f" about {', '.join(participants[:3])}" if participants else ""
        target = ExpansionTarget(
            restatement=f"{inp.query} ({role}{about})",
            keywords=missing,
            participants=participants,
            locations=locations,
            time=time,
            cues=cues,
            restates_query=True,
        )
        reason = decision.get("reason", "") if anchors else \
            f"{decision.get('reason', '')}; no recalled memory has edges to expand from"
        plan = Plan(should_continue=bool(anchors), reason=reason, anchors=anchors, target=target)
        if event is not None:
            plan["event_time"] = event
        return plan


_CONTROLLER_FAILURES = {  # StructuredOutcome.failure -> the start of the stop reason
    "invalid_output": "controller output invalid after retries",
    "unreachable": "controller model unreachable",
    "misconfigured": "controller model refuses these settings",
    "rejected": "controller request refused",
}


class LLMController:
    """A chat model decides (continue?, anchors, target, stop reason) with structured output.

    Anchors must be ids in the current evidence: invalid ids are dropped. Where the
    model's answer cannot be used (output still invalid after the retries, a refused
    request, a stop that gives no reason, or no valid anchor), the heuristic controller decides or plans that round
    and the result's warnings say so: a chat model is an upgrade, and one that fails
    must not leave recall with less than the offline controller finds. An unreachable
    model is handled by the recall graph, which stops asking it.

    Args:
        model: a chat model or ``"provider:model"`` string.
        max_retries: extra attempts after invalid output.
    """

    def __init__(self, model: Any, max_retries: int = 2) -> None:
        self._spec = model
        self._model: Any = None
        self.max_retries = max_retries
        self.fallback = HeuristicController()

    @property
    def model(self) -> Any:
        """The chat model, created on first use."""
        if self._model is None:
            self._model = resolve_chat_model(self._spec)
        return self._model

    def messages(self, inp: ControllerInput) -> Any:
        """The controller prompt for this round (memory text quoted as data)."""
        # The best supported first, and only so many: the paper's controller reads a first hop of 20,
        # and a small model's context must hold the prompt.
        support = inp.supports()
        shown = sorted(inp.evidence, key=lambda uid: -support[uid])[: inp.config.controller.llm_evidence]
        lines = [memory_line(uid, unit) for uid in shown if (unit := inp.index.unit(uid)) is not None]
        return CONTROLLER_PROMPT.invoke({
            "query": inp.query, "evidence": "\n".join(lines), "round": inp.round + 1,
            "max_rounds": inp.config.controller.max_rounds, "max_anchors": inp.config.controller.max_anchors,
        })

    def decide(self, inp: ControllerInput) -> Plan:
        """One LLM call per round."""
        return self._to_plan(call_structured(self.model, ControllerPlan, self.messages(inp), retries=self.max_retries),
                             inp)

    async def adecide(self, inp: ControllerInput) -> Plan:
        """Async :meth:`decide` (a heuristic stand-in decides off the event loop, as the recall's nodes do)."""
        outcome = await acall_structured(self.model, ControllerPlan, self.messages(inp), retries=self.max_retries)
        return await asyncio.to_thread(self._to_plan, outcome, inp)

    def _to_plan(self, outcome: StructuredOutcome, inp: ControllerInput) -> Plan:
        parsed: ControllerPlan | None = outcome.value
        if parsed is None:
            why = _CONTROLLER_FAILURES.get(outcome.failure or "", "controller failed")
            reason = f"{why} ({counted(len(outcome.errors), 'call')}): {outcome.errors[-1]}"
            if outcome.unreachable:  # the recall's other LLM steps would fail alike: the graph stops asking
                return Plan(should_continue=False, usage=outcome.usage, reason=reason, model_down=outcome.errors[-1])
            return self._fell_back(self.fallback.decide(inp), reason, "decided", outcome.usage)
        if not parsed.should_continue and not parsed.stop_reason.strip():
            # A stop that does not say why the evidence suffices is no decision (a small model's default answer).
            return self._fell_back(self.fallback.decide(inp), "controller stopped without a stop reason", "decided",
                                   outcome.usage)
        reason = parsed.stop_reason or ("missing: " + parsed.target_restatement)
        return Plan(should_continue=parsed.should_continue, reason=reason, llm_plan=parsed, usage=outcome.usage)

    @staticmethod
    def _fell_back(plan: Plan, reason: str, did: str, usage: Any = None) -> Plan:
        """The heuristic controller's ``plan``, saying in its reason and a warning why it stood in."""
        plan["reason"] = f"{reason}; the heuristic controller {did}: {plan.get('reason', '')}"
        plan["warning"] = f"controller: {reason}; the heuristic controller {did} this round"
        if usage is not None:
            plan["usage"] = usage
        return plan

    def plan(self, inp: ControllerInput, decision: Plan) -> Plan:
        """Validate the anchors of the plan made in :meth:`decide` (the heuristic plans a round it decided)."""
        if "llm_plan" not in decision:
            return self.fallback.plan(inp, decision)
        parsed: ControllerPlan = decision["llm_plan"]
        anchors = [a for a in dict.fromkeys(parsed.anchors) if a in inp.evidence][: inp.config.controller.max_anchors]
        if not anchors:
            return self._fell_back(self.fallback.plan(inp, decision),
                                   f"controller named no valid anchor (got {parsed.anchors!r})", "planned")
        target = ExpansionTarget(
            restatement=parsed.target_restatement or inp.query,
            keywords=parsed.target_keywords,
            participants=[p.lower() for p in parsed.target_participants],
            locations=[p.lower() for p in parsed.target_locations],
            time=inp.cues.time,
        )
        return Plan(should_continue=True, reason=decision.get("reason", ""), anchors=anchors, target=target)
