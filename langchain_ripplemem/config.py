"""Typed settings of the write path and the read path, grouped by the stage that reads them.

:class:`WriteConfig` holds the write stages (:class:`ExtractionConfig`,
:class:`LinkingConfig`, :class:`SupersessionConfig`); :class:`RecallConfig` the
recall stages (:class:`ViewsConfig`, :class:`ControllerConfig`,
:class:`ExpansionConfig`, :class:`ContextConfig`, :class:`BridgingConfig`,
:class:`ScoringConfig`, :class:`AssemblyConfig`, :class:`LifecycleConfig`, and
:class:`ResearchConfig`, the one switch for reproducing the paper), so each recall or
write module takes only its own part. They hold what a user would change (sizes, rounds,
weights of the rules a user may turn down, LLM use, batch sizes); the other weights and
budgets are named constants beside the code that reads them (``docs/configuration.md``). Every model is frozen and
rejects an unknown setting. ``RecallConfig()`` is the recommended general-purpose
setting; the named presets live in :mod:`langchain_ripplemem.presets`.

A group is given as a dict or a group model; :meth:`RecallConfig.replace`
changes some settings of some groups and keeps the rest:

Example:
    >>> from langchain_ripplemem.config import RecallConfig
    >>> config = RecallConfig(context={"weight": 0.0}, views={"semantic_k": 10})
    >>> config.context.weight, config.context.weight_2, config.views.semantic_k, config.views.lexical_k
    (0.0, 0.3, 10, 45)
    >>> config.replace(assembly={"top_k": 10}).assembly.top_k, config.assembly.top_k
    (10, 30)

"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Stage(BaseModel):
    """The settings of one stage: frozen, and a misspelt setting is an error naming it."""

    model_config = ConfigDict(frozen=True, extra="forbid")


_Settings = TypeVar("_Settings", bound="_Stages")


class _Stages(_Stage):
    """Settings made of stage groups, with :meth:`replace` for a partial change."""

    def replace(self: _Settings, **groups: Mapping[str, Any] | _Stage) -> _Settings:
        """A copy with some settings of some groups changed, validated.

        Each keyword names a group; a dict changes only the settings it names (the
        group's others are kept), a group model replaces the whole group. Use this, not
        ``model_copy(update=...)``: that would put the dict itself in the group's place
        (its other settings gone), keep a misspelt or flat name as a stray attribute,
        and validate nothing; here the result is validated like a constructed config.

        Args:
            **groups: group name -> the settings to change, or a whole group model.

        Returns:
            The changed copy (this config is frozen and unchanged).

        Raises:
            ValueError: on an unknown group or setting, or a value out of range
                (``pydantic.ValidationError``).

        Example:
            >>> from langchain_ripplemem.config import WriteConfig
            >>> WriteConfig().replace(extraction={"window_size": 10, "window_overlap": 0}).extraction.window_size
            10

        """
        fields = type(self).model_fields
        if unknown := sorted(set(groups) - set(fields)):
            raise ValueError(f"unknown settings group(s) {unknown}; choose from {sorted(fields)}")
        data: dict[str, Any] = {name: getattr(self, name) for name in fields}
        for name, change in groups.items():
            data[name] = change if isinstance(change, _Stage) else {**getattr(self, name).model_dump(), **change}
        return type(self).model_validate(data)


# --------------------------------------------------------------------------------------------- write stages


class ExtractionConfig(_Stage):
    """How a conversation is cut into windows and each window into memory units (``extraction/``)."""

    window_size: int = Field(default=40, ge=1, description="turns per extraction window")
    window_overlap: int = Field(default=2, ge=0, description="turns shared by consecutive windows")
    llm_max_retries: int = Field(default=2, ge=0, description="extra attempts after invalid LLM output (LLM "
                                 "extraction and LLM supersession)")
    rules_for_uncovered_turns: bool = Field(
        default=True, description="LLM extraction: a turn with text that no extracted event cites becomes a rule-based "
        "unit (write/extraction/rule_extractor.py), so no turn vanishes; a warning names such turns either way",
    )
    embed_batch_size: int = Field(default=64, ge=1, description="restatements embedded per encoder call")

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ExtractionConfig:
        if self.window_overlap >= self.window_size:
            raise ValueError(
                f"window_overlap ({self.window_overlap}) must be smaller than "
                f"window_size ({self.window_size})"
            )
        return self


class LinkingConfig(_Stage):
    """Which edges join a new unit to older ones (``write/linking/``)."""

    semantic_threshold: float | None = Field(
        default=None, ge=-1.0, le=1.0,
        description="min cosine for a semantic edge; None = calibrated for the encoder "
        "(edges/calibration.py), the paper's 0.85 for an unknown one",
    )
    structural_edges: Literal["cues", "paper"] = Field(
        default="cues",
        description="what a structural edge measures: 'cues' = the rarity-weighted overlap of identifying "
        "cues (names, topic words; write/linking/local_linking.py), so a shared rare name outweighs shared "
        "speakers and day; 'paper' = the paper's s_str over participants, locations and time",
    )


class SupersessionConfig(_Stage):
    """Which older statements newer ones supersede (``supersession/``, ``docs/lifecycle.md``)."""

    enabled: bool = Field(
        default=True, description="mark older statements of a person's residence, job, relationship or favourite "
        "as superseded by later ones with another value (write/supersession/statement_rules.py, docs/lifecycle.md)",
    )
    llm: bool = Field(
        default=False, description="also ask the memory's chat model (llm=) which older memories of the same people "
        "each ingest's new ones supersede (write/supersession/llm_supersession.py); needs enabled=True",
    )
    candidates: int = Field(default=5, ge=1, description="older memories shown to the model per new one")
    batch: int = Field(default=8, ge=1, description="new memories per supersession call")

    @model_validator(mode="after")
    def _llm_needs_rules(self) -> SupersessionConfig:
        if self.llm and not self.enabled:
            raise ValueError("supersession llm=True needs enabled=True (it adds to the rule-based marks)")
        return self


class WriteConfig(_Stages):
    """How conversations become linked memory units.

    The defaults are the paper's write settings (windows of 40 turns overlapping by
    2) except that structural edges join units by their rarity-weighted identifying
    cues (``linking.structural_edges="cues"``); ``presets.PAPER_WRITE`` is
    the paper's write phase exactly. The linking weights and pools are named constants
    beside the code that reads them (``text/cue_scores.py``, ``write/linking/local_linking.py``).
    """

    extraction: ExtractionConfig = Field(default_factory=ExtractionConfig)
    linking: LinkingConfig = Field(default_factory=LinkingConfig)
    supersession: SupersessionConfig = Field(default_factory=SupersessionConfig)


# --------------------------------------------------------------------------------------------- recall stages


class ViewsConfig(_Stage):
    """The first hop's tri-view: how many units each view ranks (``recall/views.py``)."""

    semantic_k: int = Field(default=35, ge=0, description="first-hop semantic view size")
    lexical_k: int = Field(default=45, ge=0, description="first-hop lexical (BM25) view size")
    cue_k: int = Field(default=30, ge=0, description="first-hop cue view size")


class ControllerConfig(_Stage):
    """When recollection stops and how many anchors it expands from (``recall/controller.py``)."""

    max_rounds: int = Field(default=2, ge=0, description="expansion rounds after the first hop (paper: R=1)")
    max_anchors: int = Field(default=3, ge=1, description="memories each round expands from")
    sufficiency_similarity: float = Field(
        default=0.55, description="heuristic controller: the best first-hop cosine at which recollection stops "
        "after the first hop, when every query term and cue is covered (> 1: never stops early). The paper's value: "
        "0.8 moved no suite by more than one question (docs/benchmarks.md, 'Which rules earn their place')",
    )
    use_planning: bool = Field(default=True, description="score expansion against the controller's target")
    llm_max_retries: int = Field(default=2, ge=0, description="extra attempts after invalid LLM output (LLM "
                                 "controller and query cues)")
    llm_evidence: int = Field(
        default=30, ge=1, description="LLM controller: the evidence memories its prompt shows, best supported "
        "first (the paper's first hop is 20; a small model's context must hold them)",
    )


class ExpansionConfig(_Stage):
    """The walk over the edges in each expansion round (``recall/expansion.py``)."""

    hops: int = Field(default=2, ge=1, description="edges walked from an anchor per round")
    per_channel: int = Field(default=15, ge=1, description="expanded units kept per channel per round")
    expand_semantic: bool = Field(default=True, description="walk semantic edges")
    expand_structural: bool = Field(default=True, description="walk structural (cue) edges")


class ContextConfig(_Stage):
    """Dialogue context: a turn also scored by its session neighbours (``recall/smoothing.py``)."""

    weight: float = Field(
        default=0.5, ge=0.0, description="w of s + w * max(neighbour s): semantic, lexical and alignment scores "
        "also credit a unit's adjacent turns in its session (recall/smoothing.py); 0 = the paper's scoring",
    )
    weight_2: float = Field(
        default=0.3, ge=0.0, description="the same for the turns two away in the session (a speaker's next turn)",
    )
    assistant_chats: bool = Field(
        default=False, description="whether dialogue context also applies in a user's chats with an assistant "
        "(a namespace where some turn is spoken by 'assistant', the speaker of AI messages): off, each turn there "
        "is scored on its own: a request states its own topic and the answers are long, so crediting neighbours "
        "lifts whole chats on a topic over the one remark that answers (recall/smoothing.py)",
    )

    @property
    def weights(self) -> tuple[float, float]:
        """``(weight, weight_2)``: the weights of the turns one and two away."""
        return self.weight, self.weight_2


class BridgingConfig(_Stage):
    """What a memory reached over cue or time edges inherits from its anchor (``recall/bridging.py``)."""

    weight: float = Field(
        default=1.2, ge=0.0,
        description="assembly: a memory reached over cue or time edges from an anchor scores at least "
        "rho(anchor) x min(0.999, weight x path strength x (floor + (1 - floor) x t)) "
        "with t the target overlap (recall/assembly.py); also turns on time bridges and event-relative times "
        "(recall/bridging.py); 0 = the paper's rho",
    )


class ScoringConfig(_Stage):
    """The cue bonuses of rho (``recall/cue_bonus.py``, ``recall/assembly.py``)."""

    speaker_bonus: float = Field(
        default=0.5, ge=0.0, description="added to rho when the memory's speaker is a person the query names; "
        "those names then leave the query text (recall/query_cues.py move_speakers)",
    )
    time_bonus: float = Field(
        default=0.5, ge=0.0, description="with a time in the query, rho += time_bonus * time similarity of the memory",
    )


class AssemblyConfig(_Stage):
    """How many memories are returned, in what order (``recall/assembly.py``)."""

    top_k: int = Field(default=30, ge=1, description="K: memories returned after assembly")
    distinct_sessions_first: int = Field(
        default=0, ge=0, description="the first n memories come from n different sessions where the 2n best hold that "
        "many (the rest follow in rho order; the best 2n stay the best 2n); 0 = rho order throughout",
    )


class LifecycleConfig(_Stage):
    """How superseded and old memories weigh in rho (``index/marks.py``, ``docs/lifecycle.md``)."""

    superseded_weight: float = Field(
        default=1.0, ge=0.0, le=1.0,
        description="rho multiplier of a superseded memory (with as_of: superseded by then); 1 = no effect (the "
        "default: asked_first orders the statements of a chain, and a lower score costs the past questions and any "
        "statement wrongly marked)",
    )
    recency_half_life_days: float | None = Field(
        default=None, gt=0, description="when set, rho *= 0.5 ** (age_days / half_life), age from the namespace's "
        "latest statement (marks.stated_at, or as_of) to the memory's time end; None = no recency decay",
    )
    asked_first: bool = Field(
        default=True, description="of statements that supersede one another, the one the question asks for (the "
        "current one; for a question about the past or a time, the one that held then) takes the best place any "
        "of them holds, brought in if recall missed it (recall/updates.py)",
    )


class ResearchConfig(_Stage):
    """For reproducing the paper, not for tuning: ``presets.PAPER`` sets it (``docs/configuration.md``)."""

    paper_rules: bool = Field(
        default=False, description="the paper's rules where RippleMem has its own, each a named constant beside "
        "the code that reads it: the cue view without identifying-cue overlap (recall/views.py), the controller's "
        "target of participants, places and time and anchors by support alone (recall/controller.py), alignment "
        "by cosine alone (recall/assembly.py), rank support 1 / (5 + rank) (recall/evidence.py), no kept places "
        "for a set question's own matches (recall/set_questions.py)",
    )


class RecallConfig(_Stages):
    """Budgets and weights of recollection, one group per recall stage.

    The defaults are the recommended settings for the offline default, tuned on the
    LoCoMo tuning conversations conv-26 .. conv-47 with ``scripts/tune_locomo.py``
    (conv-48 .. conv-50 held out; ``docs/benchmarks.md`` has the steps and what
    each gained):

    * dialogue context (``context.weight``, ``context.weight_2``): a turn is also
      scored by its session neighbours (the question it answers) and the turns two
      away (the same speaker going on);
    * cue bonuses: a speaker named in the query leaves the query text and rewards
      that speaker's own memories (``scoring.speaker_bonus``); a time in the query rewards
      memories near it (``scoring.time_bonus``);
    * larger first-hop views (35/45/30) fill the K = 30 budget (the paper's 10/5/5
      union holds about 17 units) with room for dialogue context to lift a unit no
      single view ranked in its top 30; a wider expansion channel (15) adds more per round;
    * the heuristic controller stops early only on a very strong first hop;
    * bridging (issue 13, tuned on the linked suite's tune split and the LoCoMo
      tuning split): the cue view also scores the query's identifying cues by
      rarity (``recall/views.py`` ``CUE_KEY_WEIGHT``); anchors are weighed up by the rarest name they
      share with other memories (``ANCHOR_BRIDGE_WEIGHT``); the heuristic target
      carries the anchors' rarest shared names (``TARGET_CUES``); a memory reached
      over cue or time edges from an anchor inherits up to just below the anchor's rho
      (``bridging.weight``, ``BRIDGE_FLOOR``: what it keeps without target overlap); a
      second round expands from what the first bridged to (a name, then a topic
      word), with a 20-wide structural channel; a cue shared with a memory of more
      than 16 identifying cues (a long answer) bridges less (``KEY_BUDGET``,
      chosen on LongMemEval-S dev: long assistant answers share some rare word with
      many memories by chance);
    * a flatter rank support (``recall/evidence.py`` ``RANK_OFFSET`` 8, the paper's 5), chosen on LoCoMo and
      LongMemEval-S dev with the integer encoder: a memory found by two views at middling
      ranks weighs more against one view's first place.

    ``presets.PAPER`` is the paper's settings. Weights and budgets a user has no reason to
    change are named constants beside the code that reads them, each with the measurement
    that chose it.
    """

    views: ViewsConfig = Field(default_factory=ViewsConfig)
    controller: ControllerConfig = Field(default_factory=ControllerConfig)
    expansion: ExpansionConfig = Field(default_factory=ExpansionConfig)
    context: ContextConfig = Field(default_factory=ContextConfig)
    bridging: BridgingConfig = Field(default_factory=BridgingConfig)
    scoring: ScoringConfig = Field(default_factory=ScoringConfig)
    assembly: AssemblyConfig = Field(default_factory=AssemblyConfig)
    lifecycle: LifecycleConfig = Field(default_factory=LifecycleConfig)
    research: ResearchConfig = Field(default_factory=ResearchConfig)
