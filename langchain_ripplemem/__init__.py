"""langchain-ripplemem: long-term memory for LangChain and LangGraph agents that recollects.

The public face is :data:`__all__`: the LangChain-shaped pieces first (the memory, its retriever,
its LangGraph store, the encoder, the agent tools, the recall graph), then settings, the data
model, reading conversations, the recall picture and the errors to catch. Storage backends and
protocols come from :mod:`langchain_ripplemem.storage`, presets from
:mod:`langchain_ripplemem.presets`, every other name from its module.

Example:
    >>> from langchain_ripplemem import RippleMem
    >>> memory = RippleMem()  # embedded, in memory, offline
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

from langchain_ripplemem._runtime.lazy import lazy_getattr
from langchain_ripplemem.config import RecallConfig, WriteConfig
from langchain_ripplemem.errors import InvalidConversationError, RippleMemError
from langchain_ripplemem.presets import preset
from langchain_ripplemem.schemas import (
    Conversation,
    IngestReport,
    MemoryUnit,
    RecalledMemory,
    RecallResult,
    Session,
    Turn,
)

__version__ = "0.1.0"

# Heavier components load on first access, so `import langchain_ripplemem` stays cheap.
_LAZY = {
    "MiniLMOnnxEmbeddings": "langchain_ripplemem.embeddings",
    "RippleMemRetriever": "langchain_ripplemem.retrievers",
    "RippleMemStore": "langchain_ripplemem.stores",
    "RippleMem": "langchain_ripplemem.memory",
    "build_recall_graph": "langchain_ripplemem.recall.graph",
    "create_correct_tool": "langchain_ripplemem.tools",
    "create_recall_tool": "langchain_ripplemem.tools",
    "create_remember_tool": "langchain_ripplemem.tools",
    "load_chatgpt_export": "langchain_ripplemem.conversations.chat_exports",
    "load_claude_export": "langchain_ripplemem.conversations.chat_exports",
    "load_conversations": "langchain_ripplemem.conversations.files",
    "render_recall_html": "langchain_ripplemem.render.html_page",
}


__getattr__ = lazy_getattr(__name__, _LAZY, globals())
del lazy_getattr


# At most 25 names (tests/unit_tests/test_public_api.py), the LangChain-shaped ones first.
__all__ = [
    # LangChain and LangGraph shaped
    "RippleMem",
    "RippleMemRetriever",
    "RippleMemStore",
    "MiniLMOnnxEmbeddings",
    "create_recall_tool",
    "create_remember_tool",
    "create_correct_tool",
    "build_recall_graph",
    # settings
    "RecallConfig",
    "WriteConfig",
    "preset",
    # the data model
    "Conversation",
    "Session",
    "Turn",
    "MemoryUnit",
    "RecalledMemory",
    "RecallResult",
    "IngestReport",
    # conversations in, pictures out
    "load_conversations",
    "load_chatgpt_export",
    "load_claude_export",
    "render_recall_html",
    # errors
    "RippleMemError",
    "InvalidConversationError",
    "__version__",
]
