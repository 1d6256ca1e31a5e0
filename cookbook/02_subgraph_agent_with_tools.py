"""The recall graph as a subgraph node of your agent, plus a remember tool.

Run: python cookbook/02_subgraph_agent_with_tools.py   (offline, a few seconds)

State mapping between the parent agent and the recall subgraph (shared keys, so
the compiled recall graph is added as a node as is)::

    parent AgentState            recall graph
    -----------------            ------------
    query: str            --->   RecallInput.query        (set by the to_query node)
    result: RecallResult  <---   RecallOutput.result      (memories, rounds, usage)
    answer: str | None    <---   RecallOutput.answer      (only when built with llm=)
    context (RecallContext) is passed through unchanged: namespace, config.

Its internal keys (cues, evidence, plan, ...) stay inside the subgraph. If your
parent state cannot use these names, call the recall graph from a node instead:
``build_recall_graph(memory.reader).invoke({"query": q}, context=RecallContext(...))``
and copy ``["result"]`` where you want it.

Flow: to_query -> recall (subgraph) -> agent <-> tools (remember) -> end.
The chat model is an offline stand-in replaying scripted replies; use
``init_chat_model("openai:gpt-4.1-mini")`` for a real one.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode, tools_condition

from langchain_ripplemem import RecallResult, RippleMem, build_recall_graph
from langchain_ripplemem.recall import RecallContext
from langchain_ripplemem.tools import create_remember_tool

NAMESPACE = ("memories", "maya")
HISTORY = {"id": "earlier-chat", "sessions": [{"id": "S1", "time": "2026-03-20T19:00:00Z", "turns": [
    {"id": "S1:1", "speaker": "Sam", "text": "My cousin cooks at Harbor Grill, it's a seafood place."},
    {"id": "S1:2", "speaker": "Maya", "text": "I went hiking near Portland with Priya last week."},
]}]}


class AgentState(TypedDict, total=False):
    """The parent's state: chat messages plus the two keys shared with the recall graph."""

    messages: Annotated[list[AnyMessage], add_messages]
    query: str
    result: RecallResult


class StandInChatModel(GenericFakeChatModel):
    """Offline stand-in for init_chat_model("openai:gpt-4.1-mini"): replays scripted replies."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> StandInChatModel:
        return self


def build_agent(memory: RippleMem, llm: Any) -> Any:
    remember = create_remember_tool(memory, namespace=("memories", "{user_id}"))
    model = llm.bind_tools([remember])

    def to_query(state: AgentState) -> dict[str, Any]:
        """Map the parent state to the recall graph's input: the latest user message."""
        return {"query": next(m.text for m in reversed(state["messages"]) if isinstance(m, HumanMessage))}

    def agent(state: AgentState) -> dict[str, Any]:
        memories = "\n".join(f"- [{m.unit.id[:8]}] {m.unit.restatement}" for m in state["result"].memories)
        system = SystemMessage(f"You have long-term memory. Recalled for this turn:\n{memories or '(nothing)'}")
        return {"messages": [model.invoke([system, *state["messages"]])]}

    builder = StateGraph(AgentState, context_schema=RecallContext)
    builder.add_node("to_query", to_query)
    builder.add_node("recall", build_recall_graph(memory.reader))  # the compiled recall graph, as a node
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([remember]))
    builder.add_edge(START, "to_query")
    builder.add_edge("to_query", "recall")
    builder.add_edge("recall", "agent")
    builder.add_conditional_edges("agent", tools_condition, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile()


def main() -> None:
    memory = RippleMem()
    memory.add_conversation(HISTORY, namespace=NAMESPACE)
    llm = StandInChatModel(messages=iter([
        AIMessage("", tool_calls=[{"name": "remember", "id": "call-1",
                                   "args": {"content": "Maya is allergic to shellfish."}}]),
        AIMessage("Noted: shellfish is off the menu for you."),
        AIMessage("Careful: Harbor Grill is a seafood place and you're allergic to shellfish."),
    ]))
    app = build_agent(memory, llm)
    # Whose memories: the recall subgraph reads the context, the remember tool fills
    # "{user_id}" from the configurable.
    context = RecallContext(namespace=NAMESPACE)
    config = {"configurable": {"user_id": "maya"}}

    messages: list[Any] = [HumanMessage("Please remember that I'm allergic to shellfish.")]
    out = app.invoke({"messages": messages}, config=config, context=context)
    for message in out["messages"]:
        if isinstance(message, ToolMessage):
            print(f"tool {message.name}: {message.content}")
    print("agent:", out["messages"][-1].content)

    messages = [*out["messages"], HumanMessage("Sam wants Harbor Grill for my birthday. Good idea?")]
    for namespace, update in app.stream({"messages": messages}, config=config, context=context,
                                        subgraphs=True, stream_mode="updates"):
        where = "/".join(part.split(":")[0] for part in namespace) or "parent"  # drop task ids
        print(f"  step {where}: {', '.join(update)}")
        if "recall" in update:
            for recalled in update["recall"]["result"].memories:
                print(f"    recalled {recalled.score:.2f} {recalled.unit.restatement}")
        if "agent" in update:
            print("agent:", update["agent"]["messages"][-1].content)


if __name__ == "__main__":
    main()
