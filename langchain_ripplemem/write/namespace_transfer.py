"""Carrying a namespace to another store: export it to a file, import the file (``docs/export.md``).

:func:`export_namespace` writes what recall reads of one namespace: every unit (with its
provenance, turn fingerprints, lifecycle marks and ``seq``), optionally its vector, and
every edge with its type and weight (the file's format: :mod:`~langchain_ripplemem.storage.export_format`).

:func:`import_namespace` reads and checks the whole file first, so a bad file writes
nothing. Then, under the namespace's writer lock, it stores the units the namespace does
not hold yet (by id, so importing a file again adds nothing), their vectors (the file's,
or embedded again), and the file's edges the namespace lacks (so running an interrupted
import again completes it). Imported into an empty
namespace, the units keep their ``seq`` and the store holds exactly what the source
held: recall gives the same memories in the same order. Into a namespace that holds
other memories, the new units are numbered after those and linked to them as an ingest
links, and supersession is refreshed.

Unit ids hash their namespace (:meth:`~langchain_ripplemem.schemas.MemoryUnit.make_id`),
so under another namespace each unit gets the id an ingest into that namespace would
give it, and the edges and supersession marks follow: adding the same conversation there
later recognises its turns and stores nothing twice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from langchain_ripplemem.embeddings import embed_texts, embedding_dimension, embedding_model_name
from langchain_ripplemem.errors import EmbeddingModelMismatchError
from langchain_ripplemem.index.marks import SUPERSEDED_BY, SUPERSEDES
from langchain_ripplemem.schemas import Edge, MemoryUnit, Namespace, format_namespace, validate_namespace
from langchain_ripplemem.storage.export_format import ExportContents, ModelOf, read_export, write_export
from langchain_ripplemem.write.supersession.statement_rules import refresh_supersession
from langchain_ripplemem.write.transaction import WritePath, numbered

__all__ = ["OTHER_MODEL_CHOICES", "ExportReport", "ImportReport", "export_namespace", "import_namespace",
           "moved_units"]

#: What an import does with a file of another embedding model: refuse it, or embed its units again.
OTHER_MODEL_CHOICES = ("refuse", "reembed")


class ExportReport(BaseModel):
    """What an export wrote."""

    model_config = ConfigDict(frozen=True)

    namespace: Namespace
    path: str
    units: int
    edges: int
    vectors: bool = Field(description="the file holds the units' vectors")
    embedding_model: str

    def summary(self) -> str:
        """One line: what went where."""
        with_vectors = "with vectors" if self.vectors else "without vectors"
        return (f"exported {self.units} units and {self.edges} edges of namespace "
                f"{format_namespace(self.namespace)!r} to {self.path} ({with_vectors}, {self.embedding_model})")


class ImportReport(BaseModel):
    """What an import stored."""

    model_config = ConfigDict(frozen=True)

    namespace: Namespace
    source_namespace: Namespace
    path: str
    units: int = Field(description="units in the file")
    new_units: int = Field(description="units stored; the rest the namespace held already")
    unit_ids: tuple[str, ...] = Field(default=(), description="ids of the units stored")
    edges: int = Field(default=0, description="edges stored with them, from the file and, in a namespace "
                       "that held other memories, from linking")
    reembedded: bool = Field(default=False, description="the units' vectors were embedded by this memory's model")

    def summary(self) -> str:
        """One line: how many units and edges arrived where."""
        how = ", embedded again" if self.reembedded else ""
        return (f"imported {self.new_units} new of {self.units} units and {self.edges} edges into namespace "
                f"{format_namespace(self.namespace)!r} from {self.path}{how}")


def _model(write: WritePath) -> ModelOf:
    return ModelOf(embedding_model_name(write.embeddings), embedding_dimension(write.embeddings))


def export_namespace(write: WritePath, ns: Namespace, path: str | Path, *, vectors: bool = True) -> ExportReport:
    """Write namespace ``ns`` of the memory behind ``write`` to ``path`` (see the module docs).

    Units and edges are read under the namespace's writer lock: the file holds one write's state, whole.
    """
    with write.sync.writing(ns):
        index = write.index.namespace_index(ns)
        units, matrix = list(index.units), np.array(index.matrix, dtype=np.float32)
        held = set(index.ids)
        edges = [e for e in write.edge_backend.edges(ns) if e.src in held and e.dst in held]
        linked = write.edge_backend.linked_ids(ns) & held
    model = _model(write)
    if len(units) and matrix.shape[1] != model.dimension:
        model = ModelOf(model.name, int(matrix.shape[1]))
    header = write_export(path, ns, model, units, matrix if vectors else None, linked, edges)
    return ExportReport(namespace=ns, path=str(path), units=header.counts["units"], edges=header.counts["edges"],
                        vectors=vectors, embedding_model=str(model))


def _moved_id(unit: MemoryUnit, source: Namespace, ns: Namespace) -> str:
    if unit.id == MemoryUnit.make_id(source, unit.source, unit.restatement):
        return MemoryUnit.make_id(ns, unit.source, unit.restatement)
    # An id made otherwise (a custom extractor's): still one per namespace, and the same on every import.
    return hashlib.sha256(json.dumps([list(ns), unit.id]).encode("utf-8")).hexdigest()[:32]


def moved_units(contents: ExportContents, ns: Namespace) -> ExportContents:
    """The file's contents as units of namespace ``ns``: new ids, and the edges and marks that name them.

    Example:
        >>> from langchain_ripplemem.schemas import Provenance
        >>> unit = MemoryUnit.create(namespace=("a",), restatement="A: hi",
        ...                          source=Provenance(conversation_id="c", session_id="s", turn_ids=["t1"]))
        >>> from langchain_ripplemem.storage.export_format import ExportHeader
        >>> header = ExportHeader(format="ripplemem-export", version=1, namespace=["a"], vectors=False,
        ...                       embedding_model={"name": "m", "dimension": 2}, counts={"units": 1, "edges": 0})
        >>> moved = moved_units(ExportContents(header, [unit], None, {unit.id}, []), ("b",)).units[0]
        >>> moved.namespace, moved.id == MemoryUnit.make_id(("b",), unit.source, unit.restatement)
        (('b',), True)
    """
    source = contents.namespace
    if ns == source:
        return contents
    new_id = {u.id: _moved_id(u, source, ns) for u in contents.units}
    units = []
    for unit in contents.units:
        metadata = dict(unit.metadata)
        if isinstance(metadata.get(SUPERSEDED_BY), str):
            metadata[SUPERSEDED_BY] = new_id.get(metadata[SUPERSEDED_BY], metadata[SUPERSEDED_BY])
        if isinstance(metadata.get(SUPERSEDES), dict):
            metadata[SUPERSEDES] = {new_id.get(old, old): attr for old, attr in metadata[SUPERSEDES].items()}
        units.append(unit.model_copy(update={"id": new_id[unit.id], "namespace": ns, "metadata": metadata}))
    edges = []
    for edge in contents.edges:
        src, dst = sorted((new_id[edge.src], new_id[edge.dst]))
        edges.append(Edge(src=src, dst=dst, type=edge.type, weight=edge.weight))
    return ExportContents(contents.header, units, contents.vectors, {new_id[i] for i in contents.linked}, edges,
                          contents.path)


def import_namespace(write: WritePath, path: str | Path | ExportContents, namespace: Namespace | str | None = None, *,
                     other_model: Literal["refuse", "reembed"] = "refuse",
                     check_model: Callable[[], None] = lambda: None) -> ImportReport:
    """Store the units and edges of the export file ``path`` (see the module docs).

    Args:
        write: the write path of the memory to import into.
        path: the export file, or its contents as :func:`~langchain_ripplemem.storage.export_format.read_export`
            read them (a caller that checks a file before opening a store reads it once).
        namespace: where to store them (default: the namespace they were exported from).
        other_model: for a file of another embedding model: ``"refuse"`` (raise) or ``"reembed"``.
        check_model: the memory's check that its store is of its embedding model (run before any write).

    Raises:
        InvalidExportFileError: naming the line, before anything is written (see
            :func:`~langchain_ripplemem.storage.export_format.read_export`).
        EmbeddingModelMismatchError: the file is of another embedding model and ``other_model`` is
            ``"refuse"``; the message names both models.
        ValueError: naming ``other_model`` or ``namespace`` when unusable.
    """
    if other_model not in OTHER_MODEL_CHOICES:
        raise ValueError(f"other_model must be one of {OTHER_MODEL_CHOICES}, got {other_model!r}")
    target = None if namespace is None else validate_namespace(namespace)
    contents = path if isinstance(path, ExportContents) else read_export(path)
    ns = contents.namespace if target is None else target
    ours, theirs = _model(write), contents.header.model
    if theirs != ours and other_model == "refuse":
        raise EmbeddingModelMismatchError(
            f"{contents.path} was exported from a store of embedding model {theirs}, and this memory embeds "
            f"with {ours}: vectors of different models are not comparable. Import it with other_model='reembed' "
            f"(`ripplemem import --reembed`) to embed its units again with {ours.name!r}, or into a memory of "
            f"{theirs.name!r}.")
    check_model()
    contents = moved_units(contents, ns)
    reembed = theirs != ours or contents.vectors is None
    write.sync.catch_up(ns)
    held = write.index.namespace_index(ns).pos
    todo = [i for i, u in enumerate(contents.units) if u.id not in held]
    # The slow step before the lock, as an ingest embeds before it writes.
    vectors = (embed_texts(write.embeddings, [contents.units[i].restatement for i in todo],
                           write.config.extraction.embed_batch_size) if reembed and todo
               else contents.vectors[todo] if contents.vectors is not None and todo
               else np.zeros((0, ours.dimension), np.float32))
    with write.sync.writing(ns):
        index = write.index.namespace_index(ns)
        keep = [j for j, i in enumerate(todo) if contents.units[i].id not in index.pos]  # another writer's meanwhile
        new, vectors = [contents.units[todo[j]] for j in keep], vectors[keep]
        merged, start = len(index) > 0, len(index)
        if new:
            write.index.add(ns, numbered(index, new) if merged else new, vectors)
        # In a namespace that held other memories, linking marks the new units (below).
        edges, linked = _missing(write, ns, contents, linking={u.id for u in new} if merged else set())
        if edges or linked:
            write.edge_backend.add(ns, edges, linked=linked)
            write.edge_cache.add(ns, edges)
        if new and merged:  # join the imported memories to those already here, as an ingest would
            made, _ = write.link(ns, list(range(start, start + len(new))))
            edges = [*edges, *made]
            if write.config.supersession.enabled:
                refresh_supersession(write.index, ns, write.index.get(ns, [u.id for u in new]))
        if new or edges or linked:
            write.sync.written(ns, edges={e for edge in edges for e in (edge.src, edge.dst)})
    return ImportReport(namespace=ns, source_namespace=contents.namespace, path=contents.path,
                        units=len(contents.units), new_units=len(new), unit_ids=tuple(u.id for u in new),
                        edges=len(edges), reembedded=reembed and bool(new))


def _missing(write: WritePath, ns: Namespace, contents: ExportContents,
             linking: set[str]) -> tuple[list[Edge], list[str]]:
    """The file's edges between units ``ns`` holds that it lacks, and the file's "linked" marks it lacks.

    After a first import these are the new units' (re-importing adds none); after an import
    interrupted between its units and its edges, the units' edges, which the run again completes.
    A unit the file marks unlinked (its store's ingest was interrupted) is linked by the next write
    or recall; one in ``linking`` is being linked by this import.
    """
    index = write.index.namespace_index(ns)
    held = [u.id for u in contents.units if u.id in index.pos]
    stored = {(e.src, e.dst, e.type) for e in write.edge_backend.edges(ns, held)} if held else set()
    edges = [e for e in contents.edges
             if e.src in index.pos and e.dst in index.pos and (e.src, e.dst, e.type) not in stored]
    marked = write.edge_backend.linked_ids(ns)
    return edges, [uid for uid in held if uid in contents.linked and uid not in marked and uid not in linking]
