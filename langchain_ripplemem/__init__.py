"""langchain-ripplemem: long-term memory for LangChain and LangGraph agents that recollects.

Example:
    >>> from langchain_ripplemem import RippleMemory
    >>> memory = RippleMemory()  # embedded, in memory, offline
    >>> report = memory.add_conversation({"id": "c1", "sessions": [
    ...     {"id": "S1", "time": "2026-03-02T19:00:00+00:00", "turns": [
    ...         {"id": "S1:1", "speaker": "Maya", "text": "I'm allergic to shellfish."},
    ...         {"id": "S1:2", "speaker": "Sam", "text": "Let's book Harbor Grill on Friday!"}]}]},
    ...     namespace=("users", "maya"))
    >>> result = memory.recall("Should Maya accept Sam's dinner pick?", namespace=("users", "maya"))
    >>> sorted(t for m in result.memories for t in m.unit.source.turn_ids)
    ['S1:1', 'S1:2']

"""

from __future__ import annotations

import importlib
from typing import Any

from langchain_ripplemem.config import RecallConfig, WriteConfig
from langchain_ripplemem.errors import (
    DuplicateSessionWarning,
    EmbeddingModelMismatchError,
    ErasureError,
    ExtractionError,
    FailedWindowsWarning,
    InvalidConversationError,
    InvalidNamespaceError,
    MalformedChatWarning,
    MemoryClosedError,
    ModelConfigurationError,
    RippleMemError,
)
from langchain_ripplemem.index.cache_bounds import CacheBounds
from langchain_ripplemem.presets import (
    LONG_HISTORY,
    PAPER,
    PAPER_LONG_HISTORY,
    PAPER_LONG_HISTORY_WRITE,
    PAPER_WRITE,
    PRESETS,
    preset,
)
from langchain_ripplemem.schemas import (
    Conversation,
    Edge,
    IngestReport,
    MemoryUnit,
    NamespaceStats,
    Provenance,
    RecalledMemory,
    RecallResult,
    Session,
    TimeInterval,
    Turn,
)
from langchain_ripplemem.storage.base import GraphStore, UnitBackend

__version__ = "0.1.0"

# Heavier components load on first access, so `import langchain_ripplemem` stays cheap
# (and the optional mcp SDK is imported only by create_mcp_server's module).
_LAZY = {
    "ChromaUnitBackend": "langchain_ripplemem.storage.chroma",
    "ForgetReport": "langchain_ripplemem.write.forget",
    "LLMExtractor": "langchain_ripplemem.extraction.llm",
    "MiniLMOnnxEmbeddings": "langchain_ripplemem.embeddings",
    "PostgresGraph": "langchain_ripplemem.storage.postgres",
    "RecallContext": "langchain_ripplemem.recall.state",
    "RippleMemRetriever": "langchain_ripplemem.retrievers",
    "RippleMemStore": "langchain_ripplemem.stores",
    "RippleMemory": "langchain_ripplemem.memory",
    "RuleBasedExtractor": "langchain_ripplemem.extraction.rules",
    "SQLiteEdgeBackend": "langchain_ripplemem.storage.sqlite",
    "SQLiteNamespaceLog": "langchain_ripplemem.storage.sqlite",
    "StoreLockedError": "langchain_ripplemem.storage.locks",
    "WriterLockTimeoutError": "langchain_ripplemem.storage.locks",
    "build_recall_graph": "langchain_ripplemem.recall.graph",
    "checkpoint_serde": "langchain_ripplemem.recall.checkpointing",
    "conversation_from_messages": "langchain_ripplemem.adapters",
    "create_correct_tool": "langchain_ripplemem.tools",
    "create_mcp_server": "langchain_ripplemem.server.mcp",
    "create_recall_tool": "langchain_ripplemem.tools",
    "create_remember_tool": "langchain_ripplemem.tools",
    "load_chatgpt_export": "langchain_ripplemem.chat_exports",
    "load_claude_export": "langchain_ripplemem.chat_exports",
    "load_conversations": "langchain_ripplemem.adapters",
    "render_recall_html": "langchain_ripplemem.picture.html",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'langchain_ripplemem' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


# Sorted (tests/unit_tests/test_public_api.py): what a user passes to, or gets from, the package.
__all__ = [
    "CacheBounds",
    "ChromaUnitBackend",
    "Conversation",
    "DuplicateSessionWarning",
    "Edge",
    "EmbeddingModelMismatchError",
    "ErasureError",
    "ExtractionError",
    "FailedWindowsWarning",
    "ForgetReport",
    "GraphStore",
    "IngestReport",
    "InvalidConversationError",
    "InvalidNamespaceError",
    "LLMExtractor",
    "LONG_HISTORY",
    "MalformedChatWarning",
    "MemoryClosedError",
    "MemoryUnit",
    "MiniLMOnnxEmbeddings",
    "ModelConfigurationError",
    "NamespaceStats",
    "PAPER",
    "PAPER_LONG_HISTORY",
    "PAPER_LONG_HISTORY_WRITE",
    "PAPER_WRITE",
    "PRESETS",
    "PostgresGraph",
    "Provenance",
    "RecallConfig",
    "RecallContext",
    "RecallResult",
    "RecalledMemory",
    "RippleMemError",
    "RippleMemRetriever",
    "RippleMemStore",
    "RippleMemory",
    "RuleBasedExtractor",
    "SQLiteEdgeBackend",
    "SQLiteNamespaceLog",
    "Session",
    "StoreLockedError",
    "TimeInterval",
    "Turn",
    "UnitBackend",
    "WriteConfig",
    "WriterLockTimeoutError",
    "__version__",
    "build_recall_graph",
    "checkpoint_serde",
    "conversation_from_messages",
    "create_correct_tool",
    "create_mcp_server",
    "create_recall_tool",
    "create_remember_tool",
    "load_chatgpt_export",
    "load_claude_export",
    "load_conversations",
    "preset",
    "render_recall_html",
]
