"""LLM-assisted supersession: a chat model names the older memories that new ones make out of date.

The rule-based facts of :mod:`langchain_ripplemem.write.supersession.statement_rules` catch "I moved to
Berlin" after "I live in Paris"; they miss "Maya took the Lisbon offer" after
"Maya works at Acme". With ``WriteConfig(supersession={"llm": True})`` and a chat
model (``RippleMem(llm=...)``), each ingest also asks the model, inside its
commit and before any new unit is written:

1. **Candidates.** For each new unit with participants: the
   ``WriteConfig.supersession.candidates`` most similar (cosine) earlier units that share a
   participant with it: stored ones (each participant's last
   ``rules.GROUP_POOL``) and earlier units of the same ingest. Suppressed
   units are never candidates. Units without a candidate are not asked about.
2. **Calls.** Up to ``supersession.batch`` new units per structured call
   (:mod:`langchain_ripplemem.write.supersession.supersession_prompt`), memory text quoted as data,
   labels instead of ids.
3. **Validation.** A returned pair counts only when its ``new`` label is a new
   unit of the batch and its ``old`` label one of *that* unit's candidates;
   others are dropped with a warning. Output that does not parse or validate
   is retried ``extraction.llm_max_retries`` times; a batch that still fails, or whose
   call fails (unreachable model, refused request: not retried, the chat
   model's own ``max_retries`` covers those), adds nothing (a warning says so)
   and only the rules apply to it. A model that refuses these settings (bad
   key, unknown model) raises :class:`~langchain_ripplemem.errors.ModelConfigurationError`
   before anything is written.
4. **Claims, not marks.** A pair becomes ``metadata["supersedes"][old_id] =
   attribute`` of the *new* unit, written with it. The marks on older units
   (``superseded_by``, ``valid_until``, ``superseded_attribute`` and
   ``superseded_via: "llm"``) are derived from the claims present by
   :func:`~langchain_ripplemem.write.supersession.statement_rules.refresh_supersession`, so deleting or
   suppressing the newer unit makes the older one current again, as with the rules.
"""

from __future__ import annotations

import time
from collections import defaultdict
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from langchain_ripplemem.errors import ModelConfigurationError
from langchain_ripplemem.index.marks import SUPERSEDES, is_suppressed, order_key
from langchain_ripplemem.llm.calls import call_structured, resolve_chat_model
from langchain_ripplemem.schemas import MemoryUnit, Usage
from langchain_ripplemem.text.cue_scores import cue_set
from langchain_ripplemem.write.supersession.statement_rules import GROUP_POOL
from langchain_ripplemem.write.supersession.supersession_prompt import (
    SUPERSESSION_PROMPT,
    SupersessionOutput,
    render_line,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from langchain_ripplemem.config import SupersessionConfig
    from langchain_ripplemem.index.namespace_index import NamespaceIndex
    from langchain_ripplemem.schemas import IngestReport

_MAX_ATTRIBUTE_CHARS = 40
# An answer's output bound at OpenAI-compatible servers: a pair is ~30 tokens of JSON, at most one per candidate.
_TOKENS_PER_PAIR, _TOKENS_BASE = 32, 256


def llm_supersession(llm: BaseChatModel | str | None, config: SupersessionConfig,
                     max_retries: int = 2) -> LLMSupersession | None:
    """The detector a memory uses: ``None`` unless ``config.llm`` is on.

    Raises:
        ValueError: ``config.llm`` is on but no chat model (``llm``) is given.
    """
    if not config.llm:
        return None
    if llm is None:
        raise ValueError('WriteConfig(supersession={"llm": True}) needs a chat model: pass llm= to RippleMem')
    return LLMSupersession(llm, config, max_retries)


class LLMSupersession:
    """Asks a chat model which candidate memories new units supersede.

    Args:
        model: a chat model, or a ``"provider:model"`` string resolved on first use.
        config: ``candidates`` and ``batch``.
        max_retries: extra attempts after invalid output (``WriteConfig.extraction.llm_max_retries``).
    """

    def __init__(self, model: BaseChatModel | str, config: SupersessionConfig, max_retries: int = 2) -> None:
        self._spec = model
        self.config, self.max_retries = config, max_retries

    @cached_property
    def model(self) -> BaseChatModel:
        """The chat model (a string spec is resolved on first use)."""
        return resolve_chat_model(self._spec)

    def annotate(self, index: NamespaceIndex, new: list[MemoryUnit], vectors: np.ndarray,
                 report: IngestReport, among: set[str] | None = None) -> list[MemoryUnit]:
        """``new`` with the model's claims added to ``metadata["supersedes"]``; usage and warnings go to ``report``.

        Args:
            index: the namespace as stored (the new units are not in it yet).
            new: units about to be written, with their ``seq``.
            vectors: their unit vectors, row ``i`` for ``new[i]``.
            report: the ingest's report.
            among: only these stored ids may be candidates, and the new units are not
                candidates for each other: a second pass over units another writer
                stored after the first pass (RippleMem's write path).
        """
        started = time.perf_counter()
        candidates = self._candidates(index, new, np.asarray(vectors, dtype=np.float32), among)
        asked = [i for i in range(len(new)) if candidates.get(i)]
        claims: dict[int, dict[str, str]] = defaultdict(dict)
        size = self.config.batch
        for start in range(0, len(asked), size):
            batch = asked[start:start + size]
            found, usage, warnings = self._ask(new, batch, candidates)
            report.usage = report.usage.add(usage)
            report.warnings.extend(warnings)
            for i, old_id, attribute in found:
                claims[i][old_id] = attribute
        report.usage.seconds["supersede"] = report.usage.seconds.get("supersede", 0.0) + \
            time.perf_counter() - started
        return [u.model_copy(update={"metadata": {**u.metadata, SUPERSEDES: {
            **(u.metadata.get(SUPERSEDES) or {}), **claims[i]}}}) if i in claims else u
            for i, u in enumerate(new)]

    def _candidates(self, index: NamespaceIndex, new: list[MemoryUnit], vectors: np.ndarray,
                    among: set[str] | None = None) -> dict[int, list[MemoryUnit]]:
        """Per new unit: the most similar earlier, visible units that share a participant."""
        keys = [order_key(u) for u in new]
        new_rows: dict[str, list[int]] = defaultdict(list)
        for i, unit in enumerate(new):
            for person in cue_set(unit.participants):
                new_rows[person].append(i)
        out: dict[int, list[MemoryUnit]] = {}
        for i, unit in enumerate(new):
            people = cue_set(unit.participants)
            if is_suppressed(unit) or not people:
                continue
            stored = sorted({r for p in people for r in index.postings["participants"].get(p, [])[-GROUP_POOL:]
                             if not is_suppressed(index.units[r]) and order_key(index.units[r]) < keys[i]
                             and (among is None or index.units[r].id in among)})
            fresh = [] if among is not None else sorted({j for p in people for j in new_rows[p]
                                                         if j != i and not is_suppressed(new[j]) and keys[j] < keys[i]})
            pool = [(float(s), index.units[r]) for r, s in zip(stored, _sims(index.matrix, stored, vectors[i]),
                                                               strict=True)]
            pool += [(float(s), new[j]) for j, s in zip(fresh, _sims(vectors, fresh, vectors[i]), strict=True)]
            pool.sort(key=lambda p: (-p[0], p[1].id))
            if pool:
                out[i] = [u for _, u in pool[: self.config.candidates]]
        return out

    def _ask(self, new: list[MemoryUnit], batch: list[int],
             candidates: dict[int, list[MemoryUnit]]) -> tuple[list[tuple[int, str, str]], Usage, list[str]]:
        """One structured call for ``batch``: the valid ``(new index, old id, attribute)`` claims."""
        labels: dict[str, str] = {}  # unit id -> label
        for unit in [new[i] for i in batch] + [c for i in batch for c in candidates[i]]:
            labels.setdefault(unit.id, f"M{len(labels) + 1}")
        lines = []
        for i in batch:
            lines.append("NEW " + render_line(labels[new[i].id], _day(new[i]), new[i].restatement))
            lines += ["    candidate " + render_line(labels[c.id], _day(c), c.restatement) for c in candidates[i]]
        messages = SUPERSESSION_PROMPT.format_messages(memories="\n".join(lines))
        bound = _TOKENS_BASE + _TOKENS_PER_PAIR * len(batch) * self.config.candidates
        outcome = call_structured(self.model, SupersessionOutput, messages, retries=self.max_retries,
                                  max_tokens=bound)
        parsed, usage, first = outcome.value, outcome.usage, new[batch[0]].id
        if outcome.failure == "misconfigured":  # raised before anything of the ingest is written
            raise ModelConfigurationError(f"LLM supersession: the chat model refuses requests with these settings "
                                          f"({outcome.errors[-1]})") from outcome.exception
        if parsed is None:
            return [], usage, [f"LLM supersession of {len(batch)} new memories (from {first}) failed "
                               f"({outcome.failure}), only the rules apply to them: "
                               + "; ".join(f"attempt {i}: {e}" for i, e in enumerate(outcome.errors, start=1))]
        by_label = {labels[new[i].id]: i for i in batch}
        found: list[tuple[int, str, str]] = []
        warnings: list[str] = []
        for pair in parsed.superseded:
            row = by_label.get(pair.new.strip())
            old = None if row is None else next(
                (c for c in candidates[row] if labels[c.id] == pair.old.strip()), None)
            if row is None or old is None:
                warnings.append(f"LLM supersession: dropped {pair.new!r} -> {pair.old!r}: not a new memory and "
                                "one of its candidates")
                continue
            attribute = " ".join(pair.attribute.lower().split())[:_MAX_ATTRIBUTE_CHARS] or "update"
            found.append((row, old.id, attribute))
        return found, usage, warnings


def _sims(matrix: np.ndarray, rows: list[int], vector: np.ndarray) -> np.ndarray:
    return matrix[rows] @ vector if rows else np.zeros(0, dtype=np.float32)


def _day(unit: MemoryUnit) -> str:
    return unit.time.start.date().isoformat() if unit.time is not None else "-"
