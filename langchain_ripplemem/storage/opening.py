"""Open a memory's storage: units (Chroma unless a backend is given), edges and the namespace log (SQLite unless given).

Example:
    >>> units, edges, log = open_storage()  # everything in memory for this process
    >>> edges is not log, type(units).__name__
    (True, 'ChromaUnitBackend')
    >>> for part in (log, edges, units):
    ...     part.close()

"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_ripplemem.storage.chroma import DEFAULT_COLLECTION, ChromaUnitBackend
from langchain_ripplemem.storage.protocols import EdgeBackend, EdgeLogBackend, NamespaceLog, UnitBackend
from langchain_ripplemem.storage.sqlite import EDGES_FILENAME, open_sqlite_edges

__all__ = ["check_storage_arguments", "open_storage"]


def check_storage_arguments(*, persist_directory: str | Path | None = None, client: Any = None,
                            edges_path: str | Path | None = None, unit_backend: UnitBackend | None = None,
                            edge_backend: EdgeLogBackend | None = None) -> None:
    """Refuse storage arguments that cannot go together, before anything is opened or loaded.

    Raises:
        ValueError: naming the arguments, or a ``persist_directory`` that is a file.
    """
    if client is not None and persist_directory is not None:
        raise ValueError("pass either client or persist_directory, not both")
    if unit_backend is not None and client is not None:
        raise ValueError("pass either unit_backend or client, not both")
    if edge_backend is not None and edges_path is not None:
        raise ValueError("pass either edge_backend or edges_path, not both")
    if persist_directory is not None and Path(persist_directory).exists() and not Path(persist_directory).is_dir():
        raise ValueError(f"persist_directory {str(persist_directory)!r} is a file, not a directory")


def open_storage(*, persist_directory: str | Path | None = None, client: Any = None,
                 collection_name: str = DEFAULT_COLLECTION, edges_path: str | Path | None = None,
                 unit_backend: UnitBackend | None = None, edge_backend: EdgeLogBackend | None = None,
                 ) -> tuple[UnitBackend, EdgeBackend, NamespaceLog]:
    """The unit backend, the edge backend and the namespace log a memory's arguments name.

    Units go to ``unit_backend``, else Chroma (``client``, or embedded in ``persist_directory``, or in
    memory); edges and the log to ``edge_backend``, else SQLite (``edges_path``, by default in
    ``persist_directory``, or in memory). What was opened is closed again when a later part fails.
    """
    check_storage_arguments(persist_directory=persist_directory, client=client, edges_path=edges_path,
                            unit_backend=unit_backend, edge_backend=edge_backend)
    units = unit_backend or ChromaUnitBackend(
        client, persist_directory=persist_directory if client is None else None, collection_name=collection_name)
    edges: EdgeBackend
    log: NamespaceLog
    try:
        if edge_backend is not None:
            edges = log = edge_backend
        else:
            if edges_path is None and persist_directory is not None:
                edges_path = Path(persist_directory) / EDGES_FILENAME
            edges, log = open_sqlite_edges(edges_path)
    except BaseException:
        units.close()
        raise
    return units, edges, log
