"""The ``ingest`` graph for LangGraph Server / ``langgraph dev``: write a conversation to memory.

Input: ``{"conversation": {...}}`` in the package's JSON form
(``{"id", "sessions": [{"id", "time", "turns": [{"id", "speaker", "text"}]}]}``),
a LoCoMo record or a LongMemEval record; or ``{"messages": [...]}`` (chat
messages, remembered as one session). Output: ``{"report": IngestReport as a
dict}``. The run context names the namespace: ``{"namespace": ["users", "maya"]}``.

The memory is the one the ``recall`` and ``agent`` graphs use (see
``graphs/recall.py``), created on the first run.

Each run ingests its own input: on a thread that is used again, a run that passes
``messages`` does not see the ``conversation`` of an earlier run, nor the input
of a run that failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from langgraph.channels import EphemeralValue
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import get_runtime
from typing_extensions import TypedDict  # typing's has no JSON schema before 3.12: the server's input form

from langchain_ripplemem.errors import InvalidConversationError
from langchain_ripplemem.schemas import Conversation, Namespace, validate_namespace
from langchain_ripplemem.server.served_memory import get_memory


@dataclass
class IngestContext:
    """Where to write."""

    namespace: Namespace = ("default",)

    def __post_init__(self) -> None:
        self.namespace = validate_namespace(self.namespace)  # JSON contexts carry lists


class IngestInput(TypedDict, total=False):
    """A conversation (native, LoCoMo or LongMemEval JSON) or a list of chat messages."""

    # Ephemeral channels. A thread's checkpoint keeps a plain channel's last value and a run's
    # input writes only the keys it passes, so an earlier run's conversation (or a failed run's)
    # would be ingested again in place of this run's messages. An ephemeral value is cleared at
    # the first step that does not write it: each run's input reaches that run's node only.
    conversation: Annotated[dict[str, Any], EphemeralValue(dict)]
    messages: Annotated[list[Any], EphemeralValue(list)]


class IngestOutput(TypedDict):
    """What the write did."""

    report: dict[str, Any]


class IngestState(IngestInput, IngestOutput, total=False):
    """Input and output together."""


def _prepare(state: IngestState) -> tuple[Any, Conversation, Namespace]:
    from langchain_ripplemem import conversations

    ctx = get_runtime().context
    namespace = ctx.namespace if isinstance(ctx, IngestContext) else IngestContext(**dict(ctx or {})).namespace
    if state.get("conversation"):
        # One reader for every path: the CLI's and MCP's (formats, timestamps, errors naming the field).
        conv = conversations.conversation_from_json(state["conversation"], where="input 'conversation'")
    elif state.get("messages"):
        conv = conversations.conversation_from_messages(state["messages"])  # JSON dicts are converted there
    else:
        raise InvalidConversationError("ingest input needs 'conversation' (JSON object) or 'messages' (list)")
    return get_memory(), conv, namespace


def ingest(state: IngestState) -> IngestOutput:
    """Extract, embed, index and link the conversation.

    A sync node: under ``ainvoke`` LangGraph runs it in a worker thread, so creating
    the served memory and writing to disk never block the server's event loop.
    """
    memory, conv, namespace = _prepare(state)
    return {"report": memory.add_conversation(conv, namespace=namespace).model_dump(mode="json")}


_builder = StateGraph(IngestState, context_schema=IngestContext, input_schema=IngestInput,
                      output_schema=IngestOutput)
_builder.add_node("ingest", ingest)
_builder.add_edge(START, "ingest")
_builder.add_edge("ingest", END)
graph = _builder.compile(name="ripplemem_ingest")
