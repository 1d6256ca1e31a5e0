"""RippleMemRetriever: recollection behind LangChain's ``BaseRetriever`` interface.

Each call runs the recall graph (tri-view recall, controller, anchor-local
expansion, assembly) and returns the assembled memories as ``Document`` objects,
best first. The recall graph's node runs nest under the retriever's run, so a
LangSmith trace shows ``retriever -> ripplemem_recall -> extract_cues, ...``.

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> from langchain_ripplemem import RippleMem
    >>> memory = RippleMem()
    >>> _ = memory.add_messages([HumanMessage("I'm allergic to shellfish.")], namespace="users/maya")
    >>> retriever = memory.as_retriever(namespace=("users", "maya"), k=5)
    >>> docs = retriever.invoke("What can't Maya eat?", k=3)  # per-call k
    >>> docs[0].page_content, docs[0].metadata["found_by"][0]
    ("User: I'm allergic to shellfish.", 'semantic')

"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field, field_validator, model_validator

from langchain_ripplemem.config import RecallConfig
from langchain_ripplemem.recall.filters import FILTER_NAMES, recall_filter
from langchain_ripplemem.schemas import Namespace, RecalledMemory, RecallResult, validate_namespace

__all__ = ["RippleMemRetriever", "memory_to_document"]


def memory_to_document(recalled: RecalledMemory) -> Document:
    """One recalled memory as a ``Document`` (JSON-serialisable metadata).

    ``page_content`` is the restatement. ``metadata`` holds ``id``, ``namespace``
    (list), ``time_start``/``time_end`` (ISO strings or ``None``),
    ``participants``, ``locations``, ``kind``, ``score``, ``found_by`` (recall
    views such as ``"semantic"``, or ``"expansion:<channel>"``), ``paths`` (unit-id
    paths of the expansions that reached it), ``turn_ids``, ``conversation_id`` and
    ``session_id``; a superseded memory also has ``superseded_by`` and ``valid_until``
    (see ``docs/lifecycle.md``).
    """
    unit = recalled.unit
    found_by: list[str] = []
    paths: list[list[str]] = []
    for hit in recalled.provenance:
        label = f"expansion:{hit.channel}" if hit.source == "expansion" else hit.source
        if label not in found_by:
            found_by.append(label)
        if hit.path and hit.path not in paths:
            paths.append(list(hit.path))
    metadata: dict[str, Any] = {
        "id": unit.id,
        "namespace": list(unit.namespace),
        "time_start": unit.time.start.isoformat() if unit.time else None,
        "time_end": unit.time.end.isoformat() if unit.time else None,
        "participants": list(unit.participants),
        "locations": list(unit.locations),
        "kind": unit.kind,
        "score": recalled.score,
        "is_anchor": recalled.is_anchor,
        "found_by": found_by,
        "paths": paths,
        "turn_ids": list(unit.source.turn_ids),
        "conversation_id": unit.source.conversation_id,
        "session_id": unit.source.session_id,
    }
    for mark in ("superseded_by", "valid_until"):
        if unit.metadata.get(mark):
            metadata[mark] = unit.metadata[mark]
    return Document(id=unit.id, page_content=unit.restatement, metadata=metadata)


class RippleMemRetriever(BaseRetriever):
    """Retriever that recollects an evidence set from a :class:`RippleMem`.

    Args:
        memory: the ``RippleMem`` to recall from.
        k: memories returned per call (at most; fewer when the namespace holds fewer).
            Overridable per call: ``retriever.invoke(query, k=3)``.
        namespace: whose memories to search; ``None`` uses the memory's default.
        config: recollection budgets; ``None`` uses the memory's ``recall_config``.
        as_of: answer as of this time (see ``RippleMem.recall``); ``None`` = now.
        asker: the speaker whose questions these are (e.g. ``"user"``): their "I" and "my"
            are that speaker (see ``RippleMem.recall``).
        since: only memories of this time or later: an ISO date or datetime, or a phrase
            ("last week") grounded at each call, relative to ``as_of`` or now (``docs/filters.md``).
        until: only memories of this time or earlier, as ``since``.
        speakers: only memories said by this speaker or these speakers.
        conversation_id: only memories of this conversation.

    Example:
        >>> from langchain_ripplemem import RippleMem
        >>> retriever = RippleMemRetriever(memory=RippleMem(), namespace=("maya",), k=5)
        >>> chain = retriever | (lambda docs: [d.page_content for d in docs])  # then | prompt | llm
        >>> chain.invoke("anything")  # an empty memory
        []

    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any = Field(description="the RippleMem to recall from")
    k: int = Field(default=10, description="memories returned per call")
    namespace: tuple[str, ...] | None = None
    config: RecallConfig | None = None
    as_of: datetime | None = None
    asker: str | None = None
    since: datetime | str | None = None
    until: datetime | str | None = None
    speakers: str | list[str] | None = None
    conversation_id: str | None = None

    @field_validator("k")
    @classmethod
    def _positive_k(cls, value: int) -> int:
        if value < 1:
            raise ValueError(f"k must be at least 1, got {value}")
        return value

    @field_validator("namespace", mode="before")
    @classmethod
    def _valid_namespace(cls, value: Any) -> Namespace | None:
        return None if value is None else validate_namespace(value)

    @model_validator(mode="after")
    def _valid_filter(self) -> RippleMemRetriever:
        recall_filter(self.since, self.until, self.speakers, self.conversation_id, reference=self.as_of)
        return self

    def _recall_kwargs(self, k: int | None, callbacks: Any) -> dict[str, Any]:
        """The shared preparation of both entry points: arguments for ``(a)recall``."""
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            raise ValueError(f"k must be a positive integer, got {k!r}")
        return {"namespace": self.namespace, "k": self.k if k is None else k,
                "config": self.config, "callbacks": callbacks, "as_of": self.as_of,
                "asker": self.asker, **{name: getattr(self, name) for name in FILTER_NAMES}}

    @staticmethod
    def _documents(result: RecallResult, k: int) -> list[Document]:
        # Assembly already keeps top_k = k; slicing keeps the "at most k" contract even if
        # a future recall path returns more.
        return [memory_to_document(m) for m in result.memories[:k]]

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        kwargs = self._recall_kwargs(k, run_manager.get_child())
        return self._documents(self.memory.recall(query, **kwargs), kwargs["k"])

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, k: int | None = None
    ) -> list[Document]:
        kwargs = self._recall_kwargs(k, run_manager.get_child())
        return self._documents(await self.memory.arecall(query, **kwargs), kwargs["k"])
