"""Typed settings for the write path and the read path, with presets named by purpose.

``RecallConfig()`` is the recommended general-purpose setting: the best measured
with the offline default (MiniLM, rule-based units). ``WriteConfig()`` is the
paper's write settings (windows of 40 turns overlapping by 2) except that
structural edges join units by their rarity-weighted identifying cues
(``structural_edges="cues"``); :data:`PAPER_WRITE` is METHOD.md's write phase
exactly. Named presets (:data:`PRESETS`, :func:`preset`):

* ``"recommended"``: ``(WriteConfig(), RecallConfig())``, what ``RippleMemory()`` uses;
* ``"paper"``: METHOD.md exactly (:data:`PAPER_WRITE`, :data:`PAPER`: tri-view
  sizes 10/5/5, no dialogue context, no cue bonuses, no bridging), for
  reproducing the paper;
* ``"long-history"``: the recommended scoring for long histories of one user's
  chats with an assistant, recalled with ``asker="user"`` (:data:`LONG_HISTORY`:
  views 20/20/15, ``speaker_bonus`` 0.75, the first 5 memories from 5 sessions; chosen on
  LongMemEval-S);
* ``"paper-long-history"``: the paper's settings for long haystacks of
  user-assistant sessions (:data:`PAPER_LONG_HISTORY`: views 15/8/8, windows of
  10 turns without overlap).

Example:
    >>> from langchain_ripplemem.config import PAPER, RecallConfig, preset
    >>> PAPER.semantic_k, RecallConfig().semantic_k
    (10, 35)
    >>> preset("paper-long-history")[0].window_size
    10

"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class WriteConfig(BaseModel):
    """How conversations become linked memory units."""

    # A misspelt setting is an error naming it, never a default silently kept.
    model_config = ConfigDict(frozen=True, extra="forbid")

    window_size: int = Field(default=40, ge=1, description="turns per extraction window")
    window_overlap: int = Field(default=2, ge=0, description="turns shared by consecutive windows")
    semantic_threshold: float | None = Field(
        default=None, ge=-1.0, le=1.0,
        description="min cosine for a semantic edge; None = calibrated for the encoder "
        "(memory_graph/calibration.py), the paper's 0.85 for an unknown one",
    )
    structural_threshold: float = Field(default=0.60, ge=0.0, le=1.0, description="min s_str for a structural edge")
    max_semantic_edges: int = Field(default=6, ge=0, description="semantic edges kept per new unit")
    max_structural_edges: int = Field(default=6, ge=0, description="structural edges kept per new unit")
    semantic_pool: int = Field(default=20, ge=0, description="nearest neighbours considered per new unit")
    cue_pool: int = Field(default=20, ge=0, description="cue-index candidates considered per new unit")
    time_decay_days: float = Field(default=7.0, gt=0, description="tau of exp(-gap/tau)")
    beta_participants: float = Field(default=0.5, ge=0)
    beta_locations: float = Field(default=0.2, ge=0)
    beta_time: float = Field(default=0.3, ge=0)
    structural_edges: Literal["cues", "paper"] = Field(
        default="cues",
        description="what a structural edge measures: 'cues' = the rarity-weighted overlap of identifying "
        "cues (names, topic words; memory_graph/linking.py), so a shared rare name outweighs shared speakers and "
        "day; 'paper' = METHOD.md's s_str over participants, locations and time",
    )
    cue_threshold: float = Field(default=0.6, ge=0.0, le=1.0,
                                 description="min cue overlap for a 'cues' structural edge")
    topic_weight: float = Field(
        default=1.0, ge=0.0, le=1.0,
        description="a shared topic word counts this much of a shared name of the same rarity",
    )
    cue_min_rarity: float = Field(
        default=0.3, ge=0.0, le=1.0,
        description="identifying cues rarer than this feed a new unit's 'cues' candidate pool",
    )
    embed_batch_size: int = Field(default=64, ge=1)
    # 900 characters of English are 200 to 230 MiniLM tokens: a chunk fits the encoder's
    # 256-token window, so all of it is embedded (4000 were ~900 tokens, three quarters unseen).
    max_turn_chars: int = Field(
        default=900, ge=100, description="longer turns are split at sentences into chunks of at most this many "
        "characters, sized to fit the default encoder's 256-token window (extraction/rules.py)",
    )
    llm_max_retries: int = Field(default=2, ge=0, description="extra attempts after invalid LLM output")
    rules_for_uncovered_turns: bool = Field(
        default=True, description="LLM extraction: a turn with text that no extracted event cites becomes a rule-based "
        "unit (extraction/rules.py), so no turn vanishes; a warning names such turns either way",
    )
    supersession: bool = Field(
        default=True, description="mark older statements of a person's residence, job, relationship or favourite "
        "as superseded by later ones with another value (supersession/rules.py, docs/lifecycle.md)",
    )
    llm_supersession: bool = Field(
        default=False, description="also ask the memory's chat model (llm=) which older memories of the same people "
        "each ingest's new ones supersede (supersession/llm.py); needs supersession=True",
    )
    supersession_candidates: int = Field(default=5, ge=1, description="older memories shown to the model per new one")
    supersession_batch: int = Field(default=8, ge=1, description="new memories per supersession call")

    @model_validator(mode="after")
    def _overlap_below_size(self) -> WriteConfig:
        if self.window_overlap >= self.window_size:
            raise ValueError(
                f"window_overlap ({self.window_overlap}) must be smaller than "
                f"window_size ({self.window_size})"
            )
        if self.llm_supersession and not self.supersession:
            raise ValueError("llm_supersession=True needs supersession=True (it adds to the rule-based marks)")
        return self


class RecallConfig(BaseModel):
    """Budgets and weights of recollection (tri-view recall, controller, expansion, assembly).

    The defaults are the recommended settings for the offline default, tuned on the
    LoCoMo tuning conversations conv-26 .. conv-47 with ``scripts/tune_locomo.py``
    (conv-48 .. conv-50 held out; ``docs/benchmarks.md`` has the steps and what
    each gained):

    * dialogue context (``context_weight``, ``context_weight_2``): a turn is also
      scored by its session neighbours (the question it answers) and the turns two
      away (the same speaker going on);
    * cue bonuses: a speaker named in the query leaves the query text and rewards
      that speaker's own memories (``speaker_bonus``); a time in the query rewards
      memories near it (``time_bonus``);
    * larger first-hop views (35/45/30) fill the K = 30 budget (the paper's 10/5/5
      union holds about 17 units) with room for dialogue context to lift a unit no
      single view ranked in its top 30; a wider expansion channel (15) adds more per round;
    * the heuristic controller stops early only on a very strong first hop;
    * bridging (issue 13, tuned on the linked suite's tune split and the LoCoMo
      tuning split): the cue view also scores the query's identifying cues by
      rarity (``cue_key_weight``); anchors are weighed up by the rarest name they
      share with other memories (``anchor_bridge_weight``); the heuristic target
      carries the anchors' rarest shared names (``target_cues``); a memory reached
      over cue or time edges from an anchor inherits up to just below the anchor's rho
      (``bridge_weight``, ``bridge_floor``: what it keeps without target overlap); a
      second round expands from what the first bridged to (a name, then a topic
      word), with a 20-wide structural channel; a cue shared with a memory of more
      than 16 identifying cues (a long answer) bridges less (``bridge_key_budget``,
      chosen on LongMemEval-S dev: long assistant answers share some rare word with
      many memories by chance);
    * a flatter rank support (``rank_offset`` 8, the paper's 5), chosen on LoCoMo and
      LongMemEval-S dev with the integer encoder: a memory found by two views at middling
      ranks weighs more against one view's first place.

    :data:`PAPER` is METHOD.md's settings.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    semantic_k: int = Field(default=35, ge=0, description="first-hop semantic view size")
    lexical_k: int = Field(default=45, ge=0, description="first-hop lexical (BM25) view size")
    cue_k: int = Field(default=30, ge=0, description="first-hop cue view size")
    max_rounds: int = Field(default=2, ge=0, description="expansion rounds after the first hop (paper: R=1)")
    max_anchors: int = Field(default=3, ge=1)
    hops: int = Field(default=2, ge=1)
    per_channel: int = Field(default=15, ge=1, description="expanded units kept per channel per round")
    top_k: int = Field(default=30, ge=1, description="K: memories returned after assembly")
    distinct_sessions_first: int = Field(
        default=0, ge=0, description="the first n memories come from n different sessions where the 2n best hold that "
        "many (the rest follow in rho order; the best 2n stay the best 2n); 0 = rho order throughout",
    )
    expand_semantic: bool = True
    expand_structural: bool = True
    use_planning: bool = Field(default=True, description="score expansion against the controller's target")
    sufficiency_similarity: float = Field(
        default=0.8, description="heuristic controller: best first-hop cosine needed to stop early (>1 never stops)"
    )
    alignment: Literal["semantic", "hybrid"] = Field(
        default="hybrid", description="a(q,m): paper's normalised cosine, or its mean with normalised BM25"
    )
    context_weight: float = Field(
        default=0.5, ge=0.0, description="w of s + w * max(neighbour s): semantic, lexical and alignment scores "
        "also credit a unit's adjacent turns in its session (recall/smoothing.py); 0 = the paper's scoring",
    )
    context_weight_2: float = Field(
        default=0.3, ge=0.0, description="the same for the turns two away in the session (a speaker's next turn)",
    )
    context_mode: Literal["sum", "max"] = Field(
        default="sum", description="how dialogue context combines with a unit's own score: 'sum' adds the "
        "neighbours' credit, 'max' takes the larger of the two (a strong stand-alone remark is never ranked below "
        "a stretch of weaker turns that credit each other; recall/smoothing.py)",
    )
    # Off by default (issue 35): every setting measured (/work/runs/firsthop) that closes the set-question gap to
    # dense costs LoCoMo @10 (dense top-10 within 3d: 0.723 / @30 0.836, below the 0.73 / 0.84 floor; within 1.5d:
    # about 7 points, and 10 to 30 on the linked suites). The rule holds wherever keep_first_hop > 0.
    keep_first_hop: int = Field(
        default=0, ge=0, description="the first hop recollection only adds to: the memory ranked d-th (d <= this, "
        "from 1) by plain dense cosine of the question as asked (no context, bonuses or bridges) is returned at rank "
        "floor(keep_spacing x d) or better (recall/assembly.py keep_first_hop); 0 = the rho order alone",
    )
    keep_spacing: float = Field(default=3.0, ge=1.0, description="see keep_first_hop")
    keep_lexical: int = Field(
        default=0, ge=0, description="the same for plain BM25 (score > 0) of recall's lexical text (the query "
        "with the speakers it names moved to cues, and its keywords): rank d kept within "
        "floor(keep_lexical_spacing x d)",
    )
    keep_lexical_spacing: float = Field(
        default=3.0, ge=1.0, description="see keep_lexical; with both kept, 1/keep_spacing + 1/keep_lexical_spacing "
        "must be at most 1 (every rank's deadlines then fit)",
    )
    context_terms: int = Field(
        default=60, ge=0,
        description="a unit of more content terms (BM25 terms) than this takes proportionally less of "
        "its neighbours' context credit, min(1, context_terms / terms): a long answer carries its own context "
        "(recall/smoothing.py); 0 = every unit takes all of it",
    )
    speaker_bonus: float = Field(
        default=0.5, ge=0.0, description="added to rho when the memory's speaker is a person the query names; "
        "those names then leave the query text (recall/cues.py move_speakers)",
    )
    time_bonus: float = Field(
        default=0.5, ge=0.0, description="with a time in the query, rho += time_bonus * time similarity of the memory",
    )
    cue_key_weight: float = Field(
        default=1.0, ge=0.0,
        description="the cue view also scores a memory by this times the rarity-weighted overlap of "
        "its identifying cues with the query's (0 = the paper's cue view)",
    )
    topic_weight: float = Field(
        default=1.0, ge=0.0, le=1.0,
        description="in the cue view and the structural channel, a shared topic word counts "
        "this much of a shared name of the same rarity",
    )
    first_topic_weight: float = Field(
        default=0.0, ge=0.0, le=1.0,
        description="bridging from the first hop's anchors: a shared topic word weighs this much "
        "of a shared name when a cue edge is walked (later rounds use topic_weight)",
    )
    first_rare_topic_weight: float = Field(
        default=0.5, ge=0.0, le=1.0,
        description="bridging from the first hop's anchors: a topic word rare in English (outside the encoder "
        "vocabulary's first 12,000 whole words: 'peanut', 'kilim', not 'family', 'camping') weighs this much of a "
        "shared name of the same rarity; other topic words weigh first_topic_weight",
    )
    target_cues: int = Field(
        default=3, ge=0,
        description="heuristic controller: the target carries this many of the anchors' rarest identifying "
        "cues, and the structural channel scores candidates by rarity-weighted overlap with them (0 = the paper's "
        "s_str against the target's participants, places and time)",
    )
    anchor_bridge_weight: float = Field(
        default=0.3, ge=0.0,
        description="heuristic controller: an anchor candidate's support is multiplied by 1 + this x its "
        "bridge potential (the rarity of its rarest name that other memories hold, recall/bridging.py), and the "
        "controller does not stop while a likely anchor has such a name (0 = anchors by support only)",
    )
    bridge_weight: float = Field(
        default=1.2, ge=0.0,
        description="assembly: a memory reached over cue or time edges from an anchor scores at least "
        "rho(anchor) x min(0.999, bridge_weight x path strength x (bridge_floor + (1 - bridge_floor) x t)) "
        "with t the target overlap (recall/assembly.py); also turns on time bridges and event-relative times "
        "(recall/bridging.py); 0 = the paper's rho",
    )
    bridge_top: int = Field(
        default=0, ge=0, description="per expansion round, at most this many memories are lifted by bridged scores "
        "(the best gains); 0 = no limit",
    )
    bridge_within_session: bool = Field(
        default=False,
        description="assembly: also lift a memory bridged from an anchor of its own session (False: lift only "
        "across sessions, and within one only to the same speaker's next or previous turn, the rest of the anchor's "
        "message; elsewhere in a session dialogue context already scores the anchor's neighbours, and on LongMemEval "
        "the lifts within a session displaced the first hop's evidence)",
    )
    bridge_floor: float = Field(
        default=0.6, ge=0.0, le=1.0,
        description="what a bridged memory keeps of its inheritance when it shares none of the "
        "target's cues: the factor is bridge_floor + (1 - bridge_floor) x target overlap",
    )
    bridge_key_budget: int = Field(
        default=16, ge=0,
        description="a cue shared by memories with more identifying cues than this bridges less: its weight "
        "is multiplied by sqrt(budget / cues) at each such end (recall/bridging.py salience); 0 = no discount",
    )
    alignment_weight: float = 1.25
    provenance_weight: float = 1.0
    anchor_bonus: float = 0.05
    source_weights: dict[str, float] = Field(
        default_factory=lambda: {"semantic": 1.0, "lexical": 0.75, "cue": 0.9, "expansion": 0.85}
    )
    rank_offset: int = Field(
        default=8, ge=0, description="rank support is 1 / (rank_offset + rank), rank counted from 1 (the paper: 5; 8 "
        "weighs a view's first places less against agreement between views, chosen on LoCoMo and LongMemEval-S dev)",
    )
    llm_max_retries: int = Field(default=2, ge=0)
    superseded_weight: float = Field(
        default=0.5, ge=0.0, le=1.0,
        description="rho multiplier of a superseded memory (with as_of: superseded by then); 1 = no effect",
    )
    recency_half_life_days: float | None = Field(
        default=None, gt=0, description="when set, rho *= 0.5 ** (age_days / half_life), age from the namespace's "
        "latest statement (marks.stated_at, or as_of) to the memory's time end; None = no recency decay",
    )


    @model_validator(mode="after")
    def _kept_ranks_fit(self) -> RecallConfig:
        if self.keep_first_hop and self.keep_lexical and 1 / self.keep_spacing + 1 / self.keep_lexical_spacing > 1:
            raise ValueError(f"keep_spacing ({self.keep_spacing}) and keep_lexical_spacing "
                             f"({self.keep_lexical_spacing}): 1/keep_spacing + 1/keep_lexical_spacing "
                             "must be at most 1")
        return self

def context_weights(config: RecallConfig) -> tuple[float, float]:
    """``(w1, w2)``: the dialogue-context weights of the turns one and two away."""
    return config.context_weight, config.context_weight_2


#: METHOD.md exactly: the paper's tri-view sizes (10/5/5) and scoring, nothing added.
PAPER = RecallConfig(
    semantic_k=10, lexical_k=5, cue_k=5, max_rounds=1, per_channel=5, sufficiency_similarity=0.55,
    alignment="semantic", context_weight=0.0, context_weight_2=0.0, speaker_bonus=0.0, time_bonus=0.0,
    cue_key_weight=0.0, target_cues=0, bridge_weight=0.0, anchor_bridge_weight=0.0, rank_offset=5, keep_first_hop=0,
)
#: METHOD.md's write phase exactly: structural edges from s_str over participants, places and time.
PAPER_WRITE = WriteConfig(structural_edges="paper")
#: The paper's settings for long histories of user-assistant sessions (its LongMemEval setup).
PAPER_LONG_HISTORY = PAPER.model_copy(update={"semantic_k": 15, "lexical_k": 8, "cue_k": 8})
PAPER_LONG_HISTORY_WRITE = PAPER_WRITE.model_copy(update={"window_size": 10, "window_overlap": 0})

#: Long histories of user-assistant sessions, asked by the user (``recall(..., asker="user")``):
#: the recommended scoring with narrower first-hop views (20/20/15; long answers crowd wide
#: views) and 20 expanded memories per channel (15 costs LongMemEval dev 1.9 points at @30),
#: a larger speaker bonus (0.75: the asker's own turns hold what they said), and the
#: first 5 memories from different sessions where the best 10 allow (what a question needs is
#: often spread over several chats).
#: Chosen on the LongMemEval-S development split (``docs/benchmarks.md``).
LONG_HISTORY = RecallConfig(semantic_k=20, lexical_k=20, cue_k=15, per_channel=20, speaker_bonus=0.75,
                            distinct_sessions_first=5)

PRESETS: dict[str, tuple[WriteConfig, RecallConfig]] = {
    "recommended": (WriteConfig(), RecallConfig()),
    "long-history": (WriteConfig(), LONG_HISTORY),
    "paper": (PAPER_WRITE, PAPER),
    "paper-long-history": (PAPER_LONG_HISTORY_WRITE, PAPER_LONG_HISTORY),
}

# Names of earlier releases (presets were named after benchmarks), kept for old code.
LOCOMO_TUNED = RecallConfig()
LOCOMO, LONGMEMEVAL = PAPER, PAPER_LONG_HISTORY
LOCOMO_WRITE, LONGMEMEVAL_WRITE = WriteConfig(), PAPER_LONG_HISTORY_WRITE


def preset(name: str) -> tuple[WriteConfig, RecallConfig]:
    """Return the ``(WriteConfig, RecallConfig)`` pair called ``name``.

    Raises:
        ValueError: if ``name`` is not a known preset.

    """
    try:
        return PRESETS[name.lower()]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}") from None
