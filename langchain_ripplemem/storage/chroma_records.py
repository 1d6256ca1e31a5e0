"""The record format of :class:`~langchain_ripplemem.storage.chroma.ChromaUnitBackend`: what one Chroma record holds.

* **One record per unit.** The unit's vector and metadata
  ``{"ns": <namespace key>, "kind", "unit": <the MemoryUnit as JSON>}``, its
  creation time first (:func:`stored_json`); no document (records written with
  one load the same). Every read keeps to ``ns``: a namespace's ids are listed
  with a filter on it, and what is read by id is checked against it
  (:func:`owned_positions`; Chroma given both ids and a filter passes over the
  whole collection for each id). Every write checks that a unit belongs to the
  namespace it is written to (:func:`namespace_key_of`).
* **The embedding model.** The unit collection's metadata records the model that
  made its vectors under :data:`MODEL_KEY` and :data:`DIMENSION_KEY` (:func:`recorded_model`).

Example:
    >>> from langchain_ripplemem.schemas import MemoryUnit, Provenance
    >>> unit = MemoryUnit.create(namespace=("maya",), restatement="Maya: hi",
    ...                          source=Provenance(conversation_id="c", session_id="s"))
    >>> key = namespace_key_of(("maya",), [unit])
    >>> got = {"ids": [unit.id, "other"], "metadatas": [record_metadata(key, unit), {"ns": "[]"}]}
    >>> owned_positions(got, key), stored_record(unit.id, got["metadatas"][0]).unit == unit
    ([0], True)

"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_ripplemem.schemas import MemoryUnit, Namespace, namespace_from_key, namespace_key
from langchain_ripplemem.storage.embedding_record import EmbeddingModel
from langchain_ripplemem.storage.protocols import StoredRecord

__all__ = ["DIMENSION_KEY", "MODEL_KEY", "namespace_key_of", "owned_positions", "record_metadata", "recorded_model",
           "stored_json", "stored_record"]

# The unit collection's metadata keys recording its embedding model.
MODEL_KEY, DIMENSION_KEY = "embedding_model", "embedding_dimension"


def stored_json(unit: MemoryUnit) -> str:
    """The unit as the JSON a record keeps: its creation time first, then the other fields.

    Chroma's SQLite indexes every string metadata value (by key and value). With the id
    (a hash) first, each new unit's JSON went to a random page of an index holding every
    unit's JSON (12k pages of 4 KB at 50k units), which the upsert reads and rewrites; time
    first appends new units near the index's end (the upsert's CPU: 3-5 % less at 1k and at
    50k units, docs/scale.md "Ingest"). Any key order parses to the same unit.

    Example:
        >>> from langchain_ripplemem.schemas import Provenance
        >>> unit = MemoryUnit.create(namespace=("maya",), restatement="Maya: hi",
        ...                          source=Provenance(conversation_id="c", session_id="s"))
        >>> text = stored_json(unit)
        >>> text.startswith('{"created_at":'), MemoryUnit.model_validate_json(text) == unit
        (True, True)
    """
    first = unit.model_dump_json(include={"created_at"})
    return f"{first[:-1]},{unit.model_dump_json(exclude={'created_at'})[1:]}"


def record_metadata(key: str, unit: MemoryUnit) -> dict[str, Any]:
    """The metadata of ``unit``'s record in namespace ``key``."""
    return {"ns": key, "kind": unit.kind, "unit": stored_json(unit)}


def namespace_key_of(namespace: Namespace, units: Sequence[MemoryUnit]) -> str:
    """``namespace``'s key, once every unit is checked to belong to it.

    Raises:
        ValueError: a unit of another namespace, naming it.
    """
    for unit in units:
        if unit.namespace != tuple(namespace):
            raise ValueError(f"unit {unit.id} belongs to {unit.namespace}, not {namespace}")
    return namespace_key(namespace)


def owned_positions(got: dict[str, Any], key: str) -> list[int]:
    """Positions in a ``get`` result (metadatas included) of the records of namespace ``key``."""
    return [i for i, meta in enumerate(got["metadatas"] or ()) if (meta or {}).get("ns") == key]


def stored_record(uid: str, meta: dict[str, Any] | None) -> StoredRecord:
    """One record as read, its unit parsed, or why it is unreadable."""
    key = (meta or {}).get("ns")
    if not isinstance(key, str):
        return StoredRecord(uid, None, None, "no namespace key")
    try:
        namespace_from_key(key)
        return StoredRecord(uid, key, MemoryUnit.model_validate_json((meta or {})["unit"]))
    except (KeyError, TypeError, ValueError) as err:
        return StoredRecord(uid, key, None, f"{type(err).__name__}: {err}")


def recorded_model(metadata: dict[str, Any] | None) -> EmbeddingModel | None:
    """The embedding model a unit collection's metadata records, if any."""
    name, dimension = (metadata or {}).get(MODEL_KEY), (metadata or {}).get(DIMENSION_KEY)
    return EmbeddingModel(name, dimension) if isinstance(name, str) and isinstance(dimension, int) else None
