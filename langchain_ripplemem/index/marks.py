"""The lifecycle marks a memory unit carries in its ``metadata``.

They travel with the unit in the unit store, whatever the backend, so every
process sees them:

* ``"suppressed": {"reason", "at"}``: a user correction. The unit is kept for
  audit but recall never returns it until the mark is lifted.
* ``"superseded_by"``, ``"valid_until"``, ``"superseded_attribute"`` (and
  ``"superseded_via": "llm"``): a knowledge update, derived by
  :mod:`langchain_ripplemem.write.supersession`.
* ``"supersedes": {older id: attribute}``: on a newer unit, a chat model's
  claims (``WriteConfig(supersession={"llm": True})``).

Example:
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance
    >>> unit = MemoryUnit.create(namespace=("maya",), restatement="Maya: I live in Paris.",
    ...                          source=Provenance(conversation_id="c", session_id="s"))
    >>> hidden = with_suppression([unit], "wrong city")[0]
    >>> is_suppressed(unit), is_suppressed(hidden), hidden.metadata[SUPPRESSED]["reason"]
    (False, True, 'wrong city')
    >>> with_suppression([hidden], "again")  # already suppressed: unchanged
    []

"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Any

from langchain_ripplemem.schemas import MemoryUnit, aware

__all__ = [
    "MARKS", "OWNED_FIELDS", "SUPERSEDED_ATTRIBUTE", "SUPERSEDED_BY", "SUPERSEDED_VIA", "SUPERSEDES", "SUPPRESSED",
    "VALID_UNTIL",
    "claims", "is_suppressed", "order_key", "order_time", "stated_at", "unit_metadata_fields", "with_suppression",
]

SUPPRESSED = "suppressed"
SUPERSEDED_BY = "superseded_by"
VALID_UNTIL = "valid_until"
SUPERSEDED_ATTRIBUTE = "superseded_attribute"
SUPERSEDED_VIA = "superseded_via"  # "llm" when an LLM claim, not a rule, made the mark
SUPERSEDES = "supersedes"  # on a newer unit: {older unit id: attribute}, an LLM's claims
#: The marks supersession derives (recomputed, never edited by hand).
MARKS = (SUPERSEDED_BY, VALID_UNTIL, SUPERSEDED_ATTRIBUTE, SUPERSEDED_VIA)


def is_suppressed(unit: MemoryUnit) -> bool:
    """Whether a user correction hides this unit from recall."""
    return bool(unit.metadata.get(SUPPRESSED))


def order_time(unit: MemoryUnit) -> datetime:
    """When a unit's statement holds from: the time it mentions, unless that is after it was said.

    "I moved to Berlin last week" holds from last week; "the wedding is next year", said
    today, is a statement of today. Without a time: when it was said, else stored.
    """
    said = stated_at(unit)
    return min(unit.time.start, said) if unit.time is not None else said


def stated_at(unit: MemoryUnit) -> datetime:
    """When the statement was made: its session's time, else the time it mentions, else when it was stored.

    A plan said in February for April was *stated* in February: ``as_of`` and the
    reference time of relative query times go by this, not by the time it mentions.
    """
    said = unit.metadata.get("session_time")
    if isinstance(said, str):
        try:
            return aware(datetime.fromisoformat(said))
        except ValueError:
            pass
    return unit.time.start if unit.time is not None else aware(unit.created_at)


def order_key(unit: MemoryUnit) -> tuple[datetime, int, str]:
    """Statement order: when said (:func:`stated_at`), then insertion ``seq`` (one session's in the order said)."""
    return stated_at(unit), int(unit.metadata.get("seq", 0)), unit.id


def claims(unit: MemoryUnit) -> dict[str, str]:
    """Older unit id -> attribute: the units an LLM found this one to supersede (usually empty)."""
    return dict(unit.metadata.get(SUPERSEDES) or {})


def with_suppression(units: Iterable[MemoryUnit], reason: str | None) -> list[MemoryUnit]:
    """Copies of the units whose suppression changes: suppressed with ``reason``, or lifted with ``None``.

    Units already in the asked state are left out, so a unit keeps its first
    reason and time.

    Raises:
        ValueError: naming ``reason`` when it is given but blank.
    """
    if reason is not None and (not isinstance(reason, str) or not reason.strip()):
        raise ValueError(f"reason must be a non-empty string saying why, got {reason!r}")
    stamp = {"reason": reason.strip(), "at": datetime.now(timezone.utc).isoformat()} if reason else None
    changed = []
    for unit in units:
        if is_suppressed(unit) == (stamp is not None):
            continue
        metadata = {k: v for k, v in unit.metadata.items() if k != SUPPRESSED}
        if stamp is not None:
            metadata[SUPPRESSED] = stamp
        changed.append(unit.model_copy(update={"metadata": metadata}))
    return changed


#: Metadata only the write path and the marks above set.
OWNED_FIELDS = frozenset({SUPPRESSED, SUPERSEDES, *MARKS, "seq"})


def unit_metadata_fields(fields_by_id: object) -> dict[str, dict[str, Any]]:
    """``{unit id: {field: JSON value}}`` checked for ``RippleMem.update_metadata``, as plain dicts.

    Raises:
        ValueError: naming ``fields_by_id`` when it has another shape, a value JSON cannot
            hold, or a field in :data:`OWNED_FIELDS`.

    Example:
        >>> unit_metadata_fields({"u1": {"store_expires_at": "2026-01-01T00:00:00+00:00"}})
        {'u1': {'store_expires_at': '2026-01-01T00:00:00+00:00'}}
        >>> unit_metadata_fields({"u1": {"seq": 3}})
        Traceback (most recent call last):
        ...
        ValueError: fields_by_id: 'seq' is set by the write path or a lifecycle mark, not update_metadata
    """
    if not isinstance(fields_by_id, Mapping) or not all(
            isinstance(uid, str) and isinstance(fields, Mapping) for uid, fields in fields_by_id.items()):
        raise ValueError(f"fields_by_id must map unit ids to {{field: value}} dicts, got {fields_by_id!r}")
    out: dict[str, dict[str, Any]] = {}
    for uid, fields in fields_by_id.items():
        for name in fields:
            if not isinstance(name, str) or name in OWNED_FIELDS:
                raise ValueError(f"fields_by_id: {name!r} is set by the write path or a lifecycle mark, "
                                 "not update_metadata")
        try:
            out[uid] = json.loads(json.dumps(dict(fields)))
        except (TypeError, ValueError) as err:
            raise ValueError(f"fields_by_id[{uid!r}] must be JSON-serialisable: {err}") from None
    return out
