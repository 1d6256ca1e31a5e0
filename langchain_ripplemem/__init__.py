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

from langchain_ripplemem.config import (
    LONG_HISTORY,
    PAPER,
    PAPER_LONG_HISTORY,
    PAPER_LONG_HISTORY_WRITE,
    PRESETS,
    RecallConfig,
    WriteConfig,
    preset,
)
from langchain_ripplemem.errors import (
    DuplicateSessionWarning,
    EmbeddingModelMismatchError,
    ExtractionError,
    InvalidConversationError,
    InvalidNamespaceError,
    MemoryClosedError,
    ModelConfigurationError,
    RippleMemError,
)
from langchain_ripplemem.schemas import (
    Conversation,
    Edge,
    ExpansionTarget,
    Hit,
    IngestReport,
    MemoryUnit,
    NamespaceStats,
    Provenance,
    QueryCues,
    RecalledMemory,
    RecallResult,
    RoundTrace,
    Session,
    TimeInterval,
    Turn,
    Usage,
)

__version__ = "0.1.0"

# Heavier components load on first access, so `import langchain_ripplemem` stays cheap.
_LAZY = {
    "RippleMemory": "langchain_ripplemem.memory",
    "MiniLMOnnxEmbeddings": "langchain_ripplemem.embeddings",
    "RuleBasedExtractor": "langchain_ripplemem.extraction.rules",
    "LLMExtractor": "langchain_ripplemem.extraction.llm",
    "build_recall_graph": "langchain_ripplemem.recall.graph",
    "checkpoint_serde": "langchain_ripplemem.recall.checkpointing",
    "RecallContext": "langchain_ripplemem.recall.state",
    "HeuristicController": "langchain_ripplemem.recall.controller",
    "LLMController": "langchain_ripplemem.recall.controller",
    "RippleMemRetriever": "langchain_ripplemem.retrievers",
    "StoreLockedError": "langchain_ripplemem.storage.locks",
    "WriterLockTimeout": "langchain_ripplemem.storage.locks",
    "RippleMemStore": "langchain_ripplemem.stores",
    "create_correct_tool": "langchain_ripplemem.tools",
    "create_recall_tool": "langchain_ripplemem.tools",
    "create_remember_tool": "langchain_ripplemem.tools",
    "conversation_from_messages": "langchain_ripplemem.adapters",
    "load_conversations": "langchain_ripplemem.adapters",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'langchain_ripplemem' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "Conversation",
    "DuplicateSessionWarning",
    "Edge",
    "EmbeddingModelMismatchError",
    "ExpansionTarget",
    "ExtractionError",
    "HeuristicController",
    "Hit",
    "IngestReport",
    "InvalidConversationError",
    "InvalidNamespaceError",
    "LLMController",
    "LLMExtractor",
    "MemoryUnit",
    "MiniLMOnnxEmbeddings",
    "LONG_HISTORY",
    "MemoryClosedError",
    "ModelConfigurationError",
    "NamespaceStats",
    "PAPER",
    "PAPER_LONG_HISTORY",
    "PAPER_LONG_HISTORY_WRITE",
    "PRESETS",
    "Provenance",
    "QueryCues",
    "RecallConfig",
    "RecallContext",
    "RecallResult",
    "RecalledMemory",
    "RippleMemError",
    "RippleMemRetriever",
    "RippleMemStore",
    "RippleMemory",
    "RoundTrace",
    "RuleBasedExtractor",
    "Session",
    "StoreLockedError",
    "TimeInterval",
    "Turn",
    "Usage",
    "WriteConfig",
    "WriterLockTimeout",
    "__version__",
    "build_recall_graph",
    "checkpoint_serde",
    "conversation_from_messages",
    "create_correct_tool",
    "create_recall_tool",
    "create_remember_tool",
    "load_conversations",
    "preset",
]
