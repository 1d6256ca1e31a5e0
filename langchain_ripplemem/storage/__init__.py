"""The storage seam: its protocols, and the backends behind it (Chroma units; SQLite and PostgreSQL edges and logs).

Everything a custom deployment passes to a memory comes from here::

    from langchain_ripplemem.storage import ChromaUnitBackend, PostgresEdgeBackend, UnitBackend

Backends load on first access: importing the protocols loads neither chromadb nor psycopg.
"""

from __future__ import annotations

from langchain_ripplemem._runtime.lazy import lazy_getattr
from langchain_ripplemem.storage.protocols import (
    Changes,
    EdgeBackend,
    EdgeLogBackend,
    EdgeRow,
    NamespaceLog,
    StoredRecord,
    UnitBackend,
)

_LAZY = {
    "ChromaUnitBackend": "langchain_ripplemem.storage.chroma",
    "PostgresEdgeBackend": "langchain_ripplemem.storage.postgres",
    "SQLiteEdgeBackend": "langchain_ripplemem.storage.sqlite",
    "SQLiteNamespaceLog": "langchain_ripplemem.storage.sqlite",
    "StoreLockedError": "langchain_ripplemem.storage.locks",
    "WriterLockTimeoutError": "langchain_ripplemem.storage.locks",
    "open_sqlite_edges": "langchain_ripplemem.storage.sqlite",
}


__getattr__ = lazy_getattr(__name__, _LAZY, globals())
del lazy_getattr


__all__ = [
    # protocols
    "UnitBackend",
    "EdgeBackend",
    "NamespaceLog",
    "EdgeLogBackend",
    "Changes",
    "EdgeRow",
    "StoredRecord",
    # backends
    "ChromaUnitBackend",
    "SQLiteEdgeBackend",
    "SQLiteNamespaceLog",
    "PostgresEdgeBackend",
    "open_sqlite_edges",
    # what they raise
    "StoreLockedError",
    "WriterLockTimeoutError",
]
