"""The memory export file: one namespace as versioned JSON Lines (``docs/export.md``, field by field).

Line 1 is the header; then one line per unit, in the namespace's order; then one line per edge::

    {"format": "ripplemem-export", "version": 1, "namespace": ["users", "maya"],
     "embedding_model": {"name": "...", "dimension": 384}, "vectors": true,
     "counts": {"units": 2, "edges": 1}, "exported_at": "...", "written_by": "langchain-ripplemem 0.1.0"}
    {"record": "unit", "unit": {...MemoryUnit...}, "linked": true, "vector": "<base64 float32>"}
    {"record": "edge", "src": "...", "dst": "...", "type": "semantic", "weight": 0.61}

A unit line holds the whole :class:`~langchain_ripplemem.schemas.MemoryUnit`: its provenance
(``source``), the fingerprints of the turns it cites, its lifecycle marks (suppression,
supersession) and ``seq`` all travel in ``metadata``. Vectors are optional; they are the
model's float32 values, little-endian, base64-encoded, so an import reproduces them bit for bit.

:func:`read_export` reads and checks the whole file before a caller writes anything: a
line that does not parse, a record that breaks the format, a newer format version or a
file cut short is an :class:`~langchain_ripplemem.errors.InvalidExportFileError` naming
the line.

Example:
    >>> import tempfile, numpy as np
    >>> from pathlib import Path
    >>> from langchain_ripplemem.schemas import Edge, MemoryUnit, Provenance
    >>> units = [MemoryUnit.create(namespace=("maya",), restatement=f"Maya: note {i}",
    ...                            source=Provenance(conversation_id="c", session_id="s", turn_ids=[f"t{i}"]))
    ...          for i in range(2)]
    >>> edge = Edge(src=min(u.id for u in units), dst=max(u.id for u in units), type="semantic", weight=0.5)
    >>> path = Path(tempfile.mkdtemp()) / "maya.jsonl"
    >>> header = write_export(path, ("maya",), ModelOf("tiny", 2), units, np.eye(2, dtype=np.float32),
    ...                       {u.id for u in units}, [edge])
    >>> back = read_export(path)
    >>> back.header.counts, [u.id for u in back.units] == [u.id for u in units], back.vectors.tolist()
    ({'units': 2, 'edges': 1}, True, [[1.0, 0.0], [0.0, 1.0]])
    >>> _ = path.write_text(path.read_text().replace('"version": 1', '"version": 9', 1))
    >>> read_export(path)
    Traceback (most recent call last):
    ...
    langchain_ripplemem.errors.InvalidExportFileError: ...maya.jsonl, line 1: format version 9 is newer than \
this package reads (1): import it with a newer langchain-ripplemem

"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from langchain_ripplemem.errors import InvalidExportFileError
from langchain_ripplemem.schemas import Edge, MemoryUnit, Namespace

__all__ = ["FORMAT_NAME", "FORMAT_VERSION", "ExportContents", "ExportHeader", "ModelOf", "read_export",
           "write_export"]

FORMAT_NAME = "ripplemem-export"
#: The format this package writes and the newest it reads; a change that old readers would misread raises it.
FORMAT_VERSION = 1
_PACKAGE = "langchain-ripplemem"


class ModelOf(NamedTuple):
    """The embedding model whose vectors a file's units were stored with."""

    name: str
    dimension: int

    def __str__(self) -> str:
        return f"{self.name!r} ({self.dimension} dimensions)"


class ExportHeader(BaseModel):
    """Line 1 of an export file: what it is and what it holds."""

    model_config = ConfigDict(extra="allow")  # fields a later minor writer adds are read past

    format: Literal["ripplemem-export"]
    version: int
    namespace: list[str]
    embedding_model: dict[str, Any]
    vectors: bool
    counts: dict[str, int]
    exported_at: datetime | None = None
    written_by: str | None = None

    @property
    def model(self) -> ModelOf:
        """The embedding model named in the header."""
        return ModelOf(str(self.embedding_model["name"]), int(self.embedding_model["dimension"]))


@dataclass
class ExportContents:
    """A whole export file, checked: the header, units in file order, their vectors, linked ids, edges."""

    header: ExportHeader
    units: list[MemoryUnit]
    vectors: np.ndarray | None  # (units, dimension) float32, or None when the file holds none
    linked: set[str]
    edges: list[Edge]
    path: str = ""  # the file read

    @property
    def namespace(self) -> Namespace:
        """The namespace the units were exported from."""
        return tuple(self.header.namespace)


def _package_version() -> str:
    try:
        return f"{_PACKAGE} {metadata.version(_PACKAGE)}"
    except metadata.PackageNotFoundError:  # run from a source tree that is not installed
        return _PACKAGE


def _vector_text(vector: np.ndarray) -> str:
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def write_export(path: str | Path, namespace: Namespace, model: ModelOf, units: Sequence[MemoryUnit],
                 vectors: np.ndarray | None, linked: set[str], edges: Iterable[Edge]) -> ExportHeader:
    """Write one namespace's units (with ``vectors``, when given) and edges to ``path``; returns the header.

    The file is written beside ``path`` and renamed onto it once complete, so an
    interrupted export never leaves a file that looks whole.
    """
    edges = sorted(edges, key=lambda e: (e.src, e.dst, e.type))
    header = ExportHeader(format=FORMAT_NAME, version=FORMAT_VERSION, namespace=list(namespace),
                          embedding_model={"name": model.name, "dimension": model.dimension},
                          vectors=vectors is not None, counts={"units": len(units), "edges": len(edges)},
                          exported_at=datetime.now(timezone.utc), written_by=_package_version())
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.partial")  # the umask's mode, as any file
    try:
        with open(temporary, "x", encoding="utf-8", newline="\n") as out:
            out.write(json.dumps(header.model_dump(mode="json"), ensure_ascii=False) + "\n")
            for i, unit in enumerate(units):
                line: dict[str, Any] = {"record": "unit", "unit": unit.model_dump(mode="json"),
                                        "linked": unit.id in linked}
                if vectors is not None:
                    line["vector"] = _vector_text(vectors[i])
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
            for edge in edges:
                out.write(json.dumps({"record": "edge", **edge.model_dump(mode="json")}, ensure_ascii=False) + "\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return header


def _first_error(err: ValidationError, prefix: str) -> str:
    first = err.errors()[0]
    where = ".".join(str(part) for part in (prefix, *first["loc"]) if part != "")
    return f"{where}: {first['msg']}"


class _Reader:
    """Checks one file line by line; :meth:`fail` names the line."""

    def __init__(self, path: Path) -> None:
        self.path, self.line = path, 0

    def fail(self, what: str) -> InvalidExportFileError:
        return InvalidExportFileError(f"{self.path}, line {self.line}: {what}")

    def parse(self, text: str) -> dict[str, Any]:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as err:
            raise self.fail(f"not JSON ({err.msg} at column {err.colno})") from None
        if not isinstance(value, dict):
            raise self.fail(f"expected a JSON object, got {type(value).__name__}")
        return value

    def header(self, text: str) -> ExportHeader:
        value = self.parse(text)
        if value.get("format") != FORMAT_NAME:
            raise self.fail(f"not a RippleMem export (its first line has format {value.get('format')!r}, "
                            f"expected {FORMAT_NAME!r})")
        version = value.get("version")
        if isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION:
            raise self.fail(f"format version {version} is newer than this package reads ({FORMAT_VERSION}): "
                            f"import it with a newer {_PACKAGE}")
        try:
            header = ExportHeader.model_validate(value)
            header.model  # noqa: B018 - checks the embedding model's fields
        except ValidationError as err:
            raise self.fail(f"bad header: {_first_error(err, '')}") from None
        except (KeyError, TypeError, ValueError) as err:
            raise self.fail(f"bad header: embedding_model needs a name and a dimension ({err})") from None
        if version != FORMAT_VERSION or header.model.dimension < 1 or not header.namespace or \
                set(header.counts) != {"units", "edges"} or min(header.counts.values()) < 0:
            raise self.fail("bad header: version, embedding_model.dimension, namespace or counts out of range")
        return header

    def vector(self, value: Any, dimension: int) -> np.ndarray:
        try:
            raw = base64.b64decode(value, validate=True) if isinstance(value, str) else None
        except (binascii.Error, ValueError):
            raw = None
        if raw is None or len(raw) != 4 * dimension:
            raise self.fail(f"vector: expected base64 of {dimension} float32 values")
        vector = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        if not np.isfinite(vector).all():
            raise self.fail("vector: holds a value that is not a finite number")
        return vector


def read_export(path: str | Path) -> ExportContents:
    """Read and check a whole export file: nothing of it is returned unless every line is right.

    Raises:
        InvalidExportFileError: naming the file and line: not JSON, a bad record, a unit of
            another namespace or twice, an edge to a unit not in the file, a newer format
            version, or a file cut short (a last line without its line end, fewer records
            than the header counts).
        OSError: the file cannot be read.
    """
    reader = _Reader(Path(path))
    units: list[MemoryUnit] = []
    vectors: list[np.ndarray] = []
    linked: set[str] = set()
    edges: list[Edge] = []
    seen: set[str] = set()
    header: ExportHeader | None = None
    with open(path, encoding="utf-8", newline="") as lines:
        for reader.line, text in enumerate(lines, start=1):
            if not text.endswith("\n"):
                raise reader.fail("the line has no end: the file is cut short (truncated)")
            if header is None:
                header = reader.header(text)
                continue
            value = reader.parse(text)
            if value.get("record") == "unit":
                unit = _unit(reader, value, header)
                if unit.id in seen:
                    raise reader.fail(f"unit {unit.id} is in the file twice")
                units.append(unit)
                seen.add(unit.id)
                if value.get("linked", True) is True:
                    linked.add(unit.id)
                if header.vectors:
                    vectors.append(reader.vector(value.get("vector"), header.model.dimension))
            elif value.get("record") == "edge":
                edges.append(_edge(reader, value))
            else:
                raise reader.fail(f"record must be 'unit' or 'edge', got {value.get('record')!r}")
    if header is None:
        reader.line = 1
        raise reader.fail("the file is empty: no header")
    found = {"units": len(units), "edges": len(edges)}
    if found != header.counts:
        raise reader.fail(f"the file ends with {found['units']} units and {found['edges']} edges, but its "
                          f"header counts {header.counts['units']} and {header.counts['edges']}: it is truncated "
                          "or was edited")
    for number, edge in enumerate(edges):
        if edge.src not in seen or edge.dst not in seen:
            reader.line = 1 + len(units) + 1 + number
            raise reader.fail(f"edge {edge.src} - {edge.dst} joins a unit that is not in the file")
    matrix = np.vstack(vectors) if vectors else (np.zeros((0, header.model.dimension), np.float32)
                                                 if header.vectors else None)
    return ExportContents(header, units, matrix, linked, edges, str(path))


def _unit(reader: _Reader, value: dict[str, Any], header: ExportHeader) -> MemoryUnit:
    try:
        unit = MemoryUnit.model_validate(value.get("unit"))
    except ValidationError as err:
        raise reader.fail(f"bad unit: {_first_error(err, 'unit')}") from None
    if list(unit.namespace) != header.namespace:
        raise reader.fail(f"unit {unit.id} is of namespace {list(unit.namespace)}, not the header's "
                          f"{header.namespace}")
    return unit


def _edge(reader: _Reader, value: dict[str, Any]) -> Edge:
    try:
        edge = Edge.model_validate({k: v for k, v in value.items() if k != "record"})
    except ValidationError as err:
        raise reader.fail(f"bad edge: {_first_error(err, '')}") from None
    if edge.src == edge.dst or not math.isfinite(edge.weight):
        raise reader.fail("bad edge: it joins a unit to itself or its weight is not a finite number")
    return edge if edge.src < edge.dst else edge.model_copy(update={"src": edge.dst, "dst": edge.src})
