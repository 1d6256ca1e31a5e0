"""The recall controller ``Pi_rec(q, c_q, C) -> (d, A, g, s)``: heuristic (offline) and LLM.

Both answer two questions each round: *is the evidence enough?* (``decide``)
and, if not, *what is missing and where to look?* (``plan``: anchors and a
missing-support target).

The heuristic controller reads coverage off the evidence. A query term or cue
that no recalled memory mentions is missing support. Anchors are the
best-supported memories, preferring those that touch the query's cues and sit
in the graph; the target combines the query, the missing terms, and the cue
values the anchors share with the query (their participants, places and time),
so expansion looks for what the anchors' neighbourhood adds, not for more of
what is already there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langchain_ripplemem.chat_models import StructuredOutcome, acall_structured, call_structured, resolve_chat_model
from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.index import NamespaceView
from langchain_ripplemem.lexical import content_words, lexical_token_set, stem
from langchain_ripplemem.prompts.recall import CONTROLLER_PROMPT, ControllerPlan
from langchain_ripplemem.recall.state import Plan
from langchain_ripplemem.rendering import memory_line
from langchain_ripplemem.schemas import ExpansionTarget, Hit, QueryCues


def support(hits: list[Hit], config: RecallConfig) -> float:
    """Provenance support pi(m): source weight x rank support 1/(offset + rank), summed.

    Expansion hits are further scaled by their path strength (product of edge weights).
    """
    total = 0.0
    for hit in hits:
        weight = config.source_weights.get(hit.source, 0.0)
        strength = hit.edge_weight if hit.edge_weight is not None else 1.0
        total += weight * strength / (config.rank_offset + hit.rank + 1)
    return total


@dataclass
class ControllerInput:
    """What a controller sees in one round."""

    query: str
    cues: QueryCues
    evidence: dict[str, list[Hit]]
    view: NamespaceView
    round: int
    config: RecallConfig
    graph_degree: dict[str, int]


class HeuristicController:
    """Offline controller: coverage-based sufficiency and missing-support targets.

    The evidence is sufficient only when every query term and cue is covered and the
    best first-hop cosine reaches ``RecallConfig.sufficiency_similarity``.
    """

    def missing_terms(self, inp: ControllerInput) -> list[str]:
        """Query content words that no memory in the evidence mentions."""
        covered: set[str] = set()
        for uid in inp.evidence:
            unit = inp.view.unit(uid)
            if unit is not None:
                covered |= lexical_token_set(unit.restatement)
        cue_words = {w for value in inp.cues.participants for w in value.split()}
        return [w for w in content_words(inp.query)
                if w not in cue_words and stem(w) not in covered]

    def decide(self, inp: ControllerInput) -> Plan:
        """Stop when every query term and cue is covered by a strong first hop."""
        missing = self.missing_terms(inp)
        top_semantic = max((h.score for hits in inp.evidence.values() for h in hits
                            if h.source == "semantic"), default=0.0)
        if not missing and top_semantic >= inp.config.sufficiency_similarity:
            return Plan(should_continue=False, reason="evidence covers every query term and cue "
                        f"(best semantic match {top_semantic:.2f})")
        why = f"missing support for: {', '.join(missing)}" if missing else \
            f"weak first hop (best semantic match {top_semantic:.2f})"
        return Plan(should_continue=True, reason=why)

    def plan(self, inp: ControllerInput, decision: Plan) -> Plan:
        """Anchors: best-supported evidence in the graph; target: query + missing + anchor cues."""
        cfg = inp.config
        query_cues = set(inp.cues.participants) | set(inp.cues.locations)

        def rank_key(uid: str) -> tuple[float, str]:
            unit = inp.view.unit(uid)
            touches = bool(unit and query_cues & {v.lower() for v in unit.participants + unit.locations})
            return (-(support(inp.evidence[uid], cfg) + (0.05 if touches else 0.0)), uid)

        in_graph = [uid for uid in inp.evidence if inp.graph_degree.get(uid, 0) > 0]
        anchors = sorted(in_graph, key=rank_key)[: cfg.max_anchors]
        units = [u for u in (inp.view.unit(a) for a in anchors) if u is not None]
        missing = self.missing_terms(inp)
        participants = list(dict.fromkeys([*inp.cues.participants,
                                           *(p.lower() for u in units for p in u.participants)]))
        locations = list(dict.fromkeys([*inp.cues.locations,
                                        *(loc.lower() for u in units for loc in u.locations)]))
        time = inp.cues.time or next((u.time for u in units if u.time is not None), None)
        role = f"missing: {', '.join(missing)}" if missing else "more support"
        about = f" about {', '.join(participants[:3])}" if participants else ""
        target = ExpansionTarget(
            restatement=f"{inp.query} ({role}{about})",
            keywords=missing,
            participants=participants,
            locations=locations,
            time=time,
            restates_query=True,
        )
        reason = decision.get("reason", "") if anchors else \
            f"{decision.get('reason', '')}; no recalled memory has graph edges to expand from"
        return Plan(should_continue=bool(anchors), reason=reason,
                    anchors=anchors, target=target)


_CONTROLLER_FAILURES = {  # StructuredOutcome.failure -> the start of the stop reason
    "invalid_output": "controller output invalid after retries",
    "unreachable": "controller model unreachable",
    "misconfigured": "controller model refuses these settings",
    "rejected": "controller request refused",
}


class LLMController:
    """A chat model decides (continue?, anchors, target, stop reason) with structured output.

    Anchors must be ids in the current evidence: invalid ids are dropped and a plan
    whose anchors are all invalid stops with a recorded reason.

    Args:
        model: a chat model or ``"provider:model"`` string.
        max_retries: extra attempts after invalid output.
    """

    def __init__(self, model: Any, max_retries: int = 2) -> None:
        self._spec = model
        self._model: Any = None
        self.max_retries = max_retries

    @property
    def model(self) -> Any:
        """The chat model, created on first use."""
        if self._model is None:
            self._model = resolve_chat_model(self._spec)
        return self._model

    def messages(self, inp: ControllerInput) -> Any:
        """The controller prompt for this round (memory text quoted as data)."""
        lines = [memory_line(uid, unit) for uid in inp.evidence if (unit := inp.view.unit(uid)) is not None]
        return CONTROLLER_PROMPT.invoke({
            "query": inp.query, "evidence": "\n".join(lines), "round": inp.round + 1,
            "max_rounds": inp.config.max_rounds, "max_anchors": inp.config.max_anchors,
        })

    def decide(self, inp: ControllerInput) -> Plan:
        """One LLM call per round."""
        return self._to_plan(call_structured(self.model, ControllerPlan, self.messages(inp), retries=self.max_retries))

    async def adecide(self, inp: ControllerInput) -> Plan:
        """Async :meth:`decide`."""
        return self._to_plan(await acall_structured(self.model, ControllerPlan, self.messages(inp),
                                                    retries=self.max_retries))

    def _to_plan(self, outcome: StructuredOutcome) -> Plan:
        parsed: ControllerPlan | None = outcome.value
        if parsed is None:
            why = _CONTROLLER_FAILURES.get(outcome.failure or "", "controller failed")
            plan = Plan(should_continue=False, usage=outcome.usage,
                        reason=f"{why} ({len(outcome.errors)} calls): {outcome.errors[-1]}")
            if outcome.unreachable:  # the recall's other LLM steps would fail alike: they fall back now
                plan["model_down"] = outcome.errors[-1]
            return plan
        reason = parsed.stop_reason or ("missing: " + parsed.target_restatement)
        return Plan(should_continue=parsed.should_continue, reason=reason, llm_plan=parsed, usage=outcome.usage)

    def plan(self, inp: ControllerInput, decision: Plan) -> Plan:
        """Validate the anchors of the plan made in :meth:`decide`."""
        parsed: ControllerPlan = decision["llm_plan"]
        anchors = [a for a in dict.fromkeys(parsed.anchors) if a in inp.evidence][: inp.config.max_anchors]
        if not anchors:
            return Plan(should_continue=False, anchors=[], target=None,
                        reason=f"controller named no valid anchor (got {parsed.anchors!r})")
        target = ExpansionTarget(
            restatement=parsed.target_restatement or inp.query,
            keywords=parsed.target_keywords,
            participants=[p.lower() for p in parsed.target_participants],
            locations=[p.lower() for p in parsed.target_locations],
            time=inp.cues.time,
        )
        return Plan(should_continue=True, reason=decision.get("reason", ""), anchors=anchors, target=target)
