"""Grouping the settings by stage (issue 37) and naming most of them as constants (issue 51) changed no value.

The flat values below are main's ``config.py`` before the grouping, written out by
hand, so a changed default or preset value fails here. A setting that became a named
constant beside its code is read back as recall and the write path read it
(:func:`effective`), under its grouped name of before; :func:`test_settings_a_user_holds`
counts what is left.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from langchain_ripplemem.config import RecallConfig, WriteConfig
from langchain_ripplemem.presets import (
    LONG_HISTORY,
    PAPER,
    PAPER_LONG_HISTORY,
    PAPER_LONG_HISTORY_WRITE,
    PAPER_WRITE,
    PRESETS,
    preset,
)
from langchain_ripplemem.recall import (
    assembly,
    bridging,
    controller,
    evidence,
    kept_places,
    set_questions,
    smoothing,
    views,
)
from langchain_ripplemem.text import cue_scores, identifying
from langchain_ripplemem.write.extraction import rule_extractor
from langchain_ripplemem.write.linking import local_linking

#: ``RecallConfig().model_dump()`` before the grouping, in its field order.
OLD_RECALL = {
    "semantic_k": 35, "lexical_k": 45, "cue_k": 30, "max_rounds": 2, "max_anchors": 3, "hops": 2, "per_channel": 15,
    "top_k": 30, "distinct_sessions_first": 0, "expand_semantic": True, "expand_structural": True,
    "use_planning": True, "sufficiency_similarity": 0.8, "alignment": "hybrid", "context_weight": 0.5,
    "context_weight_2": 0.3, "context_mode": "sum", "keep_first_hop": 0, "keep_spacing": 3.0, "keep_lexical": 0,
    "keep_lexical_spacing": 3.0, "context_terms": 60, "speaker_bonus": 0.5, "time_bonus": 0.5,
    "cue_key_weight": 1.0, "topic_weight": 1.0, "first_topic_weight": 0.0, "first_rare_topic_weight": 0.5,
    "target_cues": 3, "anchor_bridge_weight": 0.3, "bridge_weight": 1.2, "bridge_top": 0,
    "bridge_within_session": False, "bridge_floor": 0.6, "bridge_key_budget": 16, "alignment_weight": 1.25,
    "provenance_weight": 1.0, "anchor_bonus": 0.05,
    "source_weights": {"semantic": 1.0, "lexical": 0.75, "cue": 0.9, "expansion": 0.85}, "rank_offset": 8,
    "llm_max_retries": 2, "superseded_weight": 0.5, "recency_half_life_days": None,
}
#: Settings added after the grouping, with their defaults (``PAPER`` turns them off).
NEW_RECALL = {"assembly.keep_own": 15, "assembly.keep_own_spacing": 2.0, "assembly.keep_own_density": 0.7,
              "assembly.keep_own_neighbours": 5, "context.assistant_chats": False,
              "controller.llm_evidence": 30,
              "lifecycle.superseded_weight": 1.0, "lifecycle.asked_first": True}
NEW_IN_PAPER = {"assembly.keep_own": 0, "lifecycle.superseded_weight": 0.5,
                "lifecycle.asked_first": False}
#: ``WriteConfig().model_dump()`` before the grouping.
OLD_WRITE = {
    "window_size": 40, "window_overlap": 2, "semantic_threshold": None, "structural_threshold": 0.6,
    "max_semantic_edges": 6, "max_structural_edges": 6, "semantic_pool": 20, "cue_pool": 20, "time_decay_days": 7.0,
    "beta_participants": 0.5, "beta_locations": 0.2, "beta_time": 0.3, "structural_edges": "cues",
    "cue_threshold": 0.6, "topic_weight": 1.0, "cue_min_rarity": 0.3, "embed_batch_size": 64, "max_turn_chars": 900,
    "llm_max_retries": 2, "rules_for_uncovered_turns": True, "supersession": True, "llm_supersession": False,
    "supersession_candidates": 5, "supersession_batch": 8,
}
#: What each preset changed of the old defaults, before the grouping.
OLD_PAPER = {
    "semantic_k": 10, "lexical_k": 5, "cue_k": 5, "max_rounds": 1, "per_channel": 5, "sufficiency_similarity": 0.55,
    "alignment": "semantic", "context_weight": 0.0, "context_weight_2": 0.0, "speaker_bonus": 0.0, "time_bonus": 0.0,
    "cue_key_weight": 0.0, "target_cues": 0, "bridge_weight": 0.0, "anchor_bridge_weight": 0.0, "rank_offset": 5,
}
OLD_RECALL_PRESETS = {
    "PAPER": (PAPER, OLD_PAPER, NEW_IN_PAPER),
    "PAPER_LONG_HISTORY": (PAPER_LONG_HISTORY, {**OLD_PAPER, "semantic_k": 15, "lexical_k": 8, "cue_k": 8},
                           NEW_IN_PAPER),
    "LONG_HISTORY": (LONG_HISTORY, {"semantic_k": 20, "lexical_k": 20, "cue_k": 15, "per_channel": 20,
                                    "speaker_bonus": 0.75, "distinct_sessions_first": 5},
                     {"context.assistant_chats": True}),
}
OLD_WRITE_PRESETS = {
    "PAPER_WRITE": (PAPER_WRITE, {"structural_edges": "paper"}),
    "PAPER_LONG_HISTORY_WRITE": (PAPER_LONG_HISTORY_WRITE,
                                 {"structural_edges": "paper", "window_size": 10, "window_overlap": 0}),
}
#: Old rules removed by the rule ablation (issue 51.4: no suite moved by more than one question without them).
REMOVED = {"context_terms"}
#: Old defaults the rule ablation set back to the paper's value (issue 51.4), with that value.
PAPER_AGAIN = {"sufficiency_similarity": 0.55}
#: The old flat names whose grouped name is not ``<group>.<same name>``.
RENAMED = {
    "context_weight": "context.weight", "context_weight_2": "context.weight_2", "context_mode": "context.mode",
    "bridge_weight": "bridging.weight", "bridge_top": "bridging.top",
    "bridge_within_session": "bridging.within_session", "bridge_floor": "bridging.floor",
    "bridge_key_budget": "bridging.key_budget", "supersession": "supersession.enabled",
    "llm_supersession": "supersession.llm", "supersession_candidates": "supersession.candidates",
    "supersession_batch": "supersession.batch",
}


#: The values that became named constants (issue 51), under their grouped names, as recall reads them.
RECALL_CONSTANTS = {
    "views.cue_key_weight": views.cue_key_weight, "views.topic_weight": lambda c: identifying.TOPIC_WEIGHT,
    "controller.target_cues": controller.target_cues,
    "controller.anchor_bridge_weight": controller.anchor_bridge_weight,
    "context.mode": lambda c: smoothing.CONTEXT_MODE,
    "bridging.top": lambda c: assembly.BRIDGED_TOP, "bridging.within_session": lambda c: assembly.BRIDGE_WITHIN_SESSION,
    "bridging.floor": lambda c: bridging.BRIDGE_FLOOR, "bridging.key_budget": lambda c: bridging.KEY_BUDGET,
    "bridging.first_topic_weight": lambda c: bridging.FIRST_TOPIC_WEIGHT,
    "bridging.first_rare_topic_weight": lambda c: bridging.FIRST_RARE_TOPIC_WEIGHT,
    "scoring.alignment": assembly.alignment_mode, "scoring.alignment_weight": lambda c: assembly.ALIGNMENT_WEIGHT,
    "scoring.provenance_weight": lambda c: assembly.PROVENANCE_WEIGHT,
    "scoring.anchor_bonus": lambda c: assembly.ANCHOR_BONUS,
    "scoring.source_weights": lambda c: evidence.SOURCE_WEIGHTS,
    "scoring.rank_offset": evidence.rank_offset,
    "assembly.keep_first_hop": lambda c: kept_places.KEEP_FIRST_HOP,
    "assembly.keep_spacing": lambda c: kept_places.KEEP_SPACING,
    "assembly.keep_lexical": lambda c: kept_places.KEEP_LEXICAL,
    "assembly.keep_lexical_spacing": lambda c: kept_places.KEEP_LEXICAL_SPACING,
    "assembly.keep_own": lambda c: set_questions.keep_own(c.research.paper_rules),
    "assembly.keep_own_spacing": lambda c: set_questions.KEEP_OWN_SPACING,
    "assembly.keep_own_density": lambda c: set_questions.KEEP_OWN_DENSITY,
    "assembly.keep_own_neighbours": lambda c: set_questions.DENSITY_NEIGHBOURS,
}
#: ... and as the write path reads them.
WRITE_CONSTANTS = {
    "extraction.max_turn_chars": rule_extractor.MAX_TURN_CHARS,
    "linking.structural_threshold": local_linking.STRUCTURAL_THRESHOLD,
    "linking.max_semantic_edges": local_linking.MAX_SEMANTIC_EDGES,
    "linking.max_structural_edges": local_linking.MAX_STRUCTURAL_EDGES,
    "linking.semantic_pool": local_linking.SEMANTIC_POOL, "linking.cue_pool": local_linking.CUE_POOL,
    "linking.time_decay_days": cue_scores.TIME_DECAY_DAYS, "linking.beta_participants": cue_scores.BETA_PARTICIPANTS,
    "linking.beta_locations": cue_scores.BETA_LOCATIONS, "linking.beta_time": cue_scores.BETA_TIME,
    "linking.cue_threshold": local_linking.CUE_THRESHOLD, "linking.topic_weight": identifying.TOPIC_WEIGHT,
    "linking.cue_min_rarity": local_linking.CUE_MIN_RARITY,
}


def grouped(config: BaseModel) -> dict[str, Any]:
    """``{"group.setting": value}`` of a grouped config."""
    return {f"{group}.{name}": value for group, values in config.model_dump().items() for name, value in values.items()}


def effective(config: BaseModel) -> dict[str, Any]:
    """:func:`grouped`, with every value that became a named constant as the code reads it under ``config``."""
    if isinstance(config, WriteConfig):
        return {**grouped(config), **WRITE_CONSTANTS}
    assert isinstance(config, RecallConfig)
    values = {path: value for path, value in grouped(config).items() if not path.startswith("research.")}
    return {**values, **{path: read(config) for path, read in RECALL_CONSTANTS.items()}}


def regrouped(old: dict[str, Any], config: BaseModel) -> dict[str, Any]:
    """The old flat values under their grouped names (each old name is in exactly one group)."""
    homes: dict[str, list[str]] = {}
    for path in effective(config):
        homes.setdefault(path.split(".", 1)[1], []).append(path)
    out = {}
    for name, value in old.items():
        if name in REMOVED:
            continue
        value = PAPER_AGAIN.get(name, value)
        if name in RENAMED:
            out[RENAMED[name]] = value
        else:
            (path,) = homes[name]
            out[path] = value
    return out


def test_defaults_are_unchanged() -> None:
    assert effective(RecallConfig()) == {**regrouped(OLD_RECALL, RecallConfig()), **NEW_RECALL}
    assert effective(WriteConfig()) == regrouped(OLD_WRITE, WriteConfig())


@pytest.mark.parametrize("name", sorted(OLD_RECALL_PRESETS))
def test_recall_presets_are_unchanged(name: str) -> None:
    config, changed, new = OLD_RECALL_PRESETS[name]
    assert effective(config) == {**regrouped({**OLD_RECALL, **changed}, config), **NEW_RECALL, **new}


@pytest.mark.parametrize("name", sorted(OLD_WRITE_PRESETS))
def test_write_presets_are_unchanged(name: str) -> None:
    config, changed = OLD_WRITE_PRESETS[name]
    assert effective(config) == regrouped({**OLD_WRITE, **changed}, config)


def test_named_presets() -> None:
    assert sorted(PRESETS) == ["long-history", "paper", "paper-long-history", "recommended"]
    assert preset("paper") == (PAPER_WRITE, PAPER) and preset("long-history") == (WriteConfig(), LONG_HISTORY)


def test_replace_merges_per_group_and_validates() -> None:
    config = RecallConfig().replace(context={"weight": 0.0}, assembly={"top_k": 10})
    assert (config.context.weight, config.context.weight_2, config.assembly.top_k) == (0.0, 0.3, 10)
    assert config.views == RecallConfig().views
    assert RecallConfig().replace(context=PAPER.context).context == PAPER.context  # a whole group
    with pytest.raises(ValidationError, match="top_kk"):
        RecallConfig().replace(assembly={"top_kk": 3})
    with pytest.raises(ValidationError):
        RecallConfig().replace(assembly={"top_k": 0})
    with pytest.raises(ValidationError, match="window_overlap"):
        WriteConfig().replace(extraction={"window_size": 2})  # the default overlap of 2 no longer fits
    with pytest.raises(ValidationError, match="enabled=True"):
        WriteConfig().replace(supersession={"enabled": False, "llm": True})
    with pytest.raises(ValueError, match="unknown settings group"):
        RecallConfig().replace(contexts={"weight": 0.0})


def settings_in(config: BaseModel) -> list[str]:
    """Every setting of ``config``, counted recursively through its groups (``group.setting``)."""
    out: list[str] = []
    for name in type(config).model_fields:
        value = getattr(config, name)
        out += [f"{name}.{inner}" for inner in settings_in(value)] if isinstance(value, BaseModel) else [name]
    return out


def test_settings_a_user_holds() -> None:
    """At most 40 settings together (issue 51): the rest are named constants beside the code that reads them."""
    recall, write = settings_in(RecallConfig()), settings_in(WriteConfig())
    assert len(recall) + len(write) <= 40, (len(recall), len(write))
    assert settings_in(RecallConfig(research={"paper_rules": True})) == recall  # nothing hidden behind a switch
    # The research group holds one switch, the paper's rules; the presets that set it are the paper's.
    assert [s for s in recall if s.startswith("research.")] == ["research.paper_rules"]
    assert {name for name, (_, config) in PRESETS.items() if config.research.paper_rules} == {"paper",
                                                                                            "paper-long-history"}


def test_every_setting_is_in_the_documented_table() -> None:
    from pathlib import Path

    page = (Path(__file__).parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    table = page.split("## Settings", 1)[1].split("\n## ", 1)[0]
    rows = {line.split("`")[1].split(".", 1)[-1] if line.split("`")[1].startswith(("Write", "Recall")) else
            line.split("`")[1] for line in table.splitlines() if line.startswith("| `")}
    assert rows == {*settings_in(RecallConfig()), *settings_in(WriteConfig())}
