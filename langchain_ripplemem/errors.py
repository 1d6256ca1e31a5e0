"""Errors with messages that say what was wrong and where."""

from __future__ import annotations

from langgraph.store.base import InvalidNamespaceError as LangGraphInvalidNamespaceError


class RippleMemError(Exception):
    """Base class of every error this package raises on purpose."""


class InvalidConversationError(RippleMemError, ValueError):
    """A conversation (file, session, turn or field) cannot be used; the message names it."""


class InvalidExportFileError(RippleMemError, ValueError):
    """A memory export file cannot be imported: the message names the file, the line and what is wrong.

    Raised before anything is written (``docs/export.md``): a file of a newer format
    version, a truncated file, a line that does not parse or a record that breaks the format.
    """


class ExtractionError(RippleMemError):
    """The extractor could not produce valid units for a window."""


class InvalidNamespaceError(RippleMemError, LangGraphInvalidNamespaceError):
    """A namespace breaks the rules: non-empty tuple of non-empty string labels.

    A LangGraph ``InvalidNamespaceError`` (and so a ``ValueError``): code that catches
    LangGraph's, e.g. around :class:`~langchain_ripplemem.stores.RippleMemStore`, catches it.
    """


class EmbeddingModelMismatchError(RippleMemError, ValueError):
    """A store's vectors were made by another embedding model than the one given to open it.

    Raised when the memory opens, before anything is read or written; the message names
    the model (name and dimension) that built the store and the one passed. Vectors of two
    models are not comparable, so open the store with the embeddings that built it, or
    re-ingest into a new store.
    """


class MemoryClosedError(RippleMemError, RuntimeError):
    """The memory was closed (``RippleMem.close()`` or the end of its ``with`` block): open a new one."""


class ErasureError(RippleMemError, RuntimeError):
    """A forget deleted its units, but rewriting a file that may still hold their bytes failed.

    The units are gone from the memory (recall, lists, search); the message names the file
    and the error. The next forget rewrites the file again (``docs/lifecycle.md``, "Deletes").
    """


class ModelConfigurationError(RippleMemError):
    """The chat model refuses every request with these settings (bad API key, no access, unknown model).

    Raised during an ingest before anything is written; the provider's own error is the ``__cause__``.
    """


class FailedWindowsWarning(UserWarning):
    """Some extraction windows of an ingest failed: nothing of them was stored.

    ``IngestReport.failed_windows`` names each (turns, error); ingesting the conversation
    again extracts them again.
    """


class DuplicateSessionWarning(UserWarning):
    """A conversation uses one session id twice; the message names both places.

    A LongMemEval record listing a session twice with the same turns keeps it once; two
    sessions of one conversation with the same id and other turns are both kept.
    """


class MalformedChatWarning(UserWarning):
    """A chat of a ChatGPT or Claude export cannot be read: it is skipped, and the rest is read.

    The message names the chat (its position in the file, title and id) and the field that
    is wrong (``langchain_ripplemem.conversations.chat_exports``).
    """
