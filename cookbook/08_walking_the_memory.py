"""An agent that walks its memory: recall, then explore what the recalled memories link to.

Run: python cookbook/08_walking_the_memory.py   (offline, a few seconds)

What it shows:
* a LangGraph agent (``agent <-> tools``) with ``recall_memory``, ``explore_memory`` and
  ``memory_timeline`` (``langchain_ripplemem.tools``) over one user's memory;
* a question whose answer the recall alone does not hold: asked whether Harbor Grill suits
  Maya's birthday dinner, a two-memory recall finds the plan and Harbor Grill's shellfish
  platter, not the allergy said weeks before. Exploring the recalled memories shows what each
  links to, grouped by edge type, strongest first; the shellfish platter links to the allergy
  (a structural edge: both name shellfish);
* ``memory_timeline``: what was said in a window of time ("2026-03-01" to "2026-03-10"), oldest
  first, a page at a time.

The chat model is an offline stand-in following a fixed policy (recall the question, explore every
recalled memory, then answer; the answer's text is canned). The tool calls it makes and what the tools
answer are real. For a real model, use
    from langchain.chat_models import init_chat_model
    llm = init_chat_model("openai:gpt-4.1-mini")   # needs OPENAI_API_KEY
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langchain_ripplemem import RippleMem
from langchain_ripplemem.tools import create_explore_memory_tool, create_memory_timeline_tool, create_recall_tool

CHAT = {"id": "maya-and-sam", "sessions": [
    {"id": "S1", "time": "2026-03-02T19:00:00Z", "turns": [
        {"id": "S1:1", "speaker": "Maya", "text": "The allergist confirmed it: I'm allergic to shellfish."},
        {"id": "S1:2", "speaker": "Sam", "text": "Good to know, I'll keep that in mind."}]},
    {"id": "S2", "time": "2026-03-09T19:00:00Z", "turns": [
        {"id": "S2:1", "speaker": "Maya", "text": "I went hiking near Portland with Priya last week."},
        {"id": "S2:2", "speaker": "Sam", "text": "Nice! Did you take the river trail?"},
        {"id": "S2:3", "speaker": "Maya", "text": "Yes, and my new boots held up well."}]},
    {"id": "S3", "time": "2026-03-20T19:00:00Z", "turns": [
        {"id": "S3:1", "speaker": "Sam", "text": "My cousin cooks at Harbor Grill, their shellfish platter is famous."},
        {"id": "S3:2", "speaker": "Maya", "text": "I've heard good things about that place."}]},
    {"id": "S4", "time": "2026-04-20T19:00:00Z", "turns": [
        {"id": "S4:1", "speaker": "Sam", "text": "For Maya's birthday dinner, let's book Harbor Grill!"},
        {"id": "S4:2", "speaker": "Maya", "text": "Sounds fun, let me think about the dinner."}]},
]}
NAMESPACE = ("memories", "maya")
QUESTION = "Is Harbor Grill a good pick for my birthday dinner?"
SYSTEM = ("You have long-term memory. Call recall_memory first; when recalled memories may link to more, "
          "call explore_memory with their ids, then answer from what you found.")
RECALLED_ID = re.compile(r"^- \[(\w+)\]", re.MULTILINE)


class StandInWalker(BaseChatModel):
    """Offline stand-in for a tool-calling chat model: recall, explore each recalled memory, answer (canned)."""

    @property
    def _llm_type(self) -> str:
        return "stand-in-walker"

    def bind_tools(self, tools: Any, **kwargs: Any) -> StandInWalker:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.next_step(messages))])

    @staticmethod
    def next_step(messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, HumanMessage):
            return AIMessage("", tool_calls=[{"name": "recall_memory", "id": "recall-1",
                                              "args": {"query": last.text}}])
        if isinstance(last, ToolMessage) and last.name == "recall_memory":
            recalled = RECALLED_ID.findall(last.text)
            return AIMessage("", tool_calls=[{"name": "explore_memory", "id": f"explore-{n}",
                                              "args": {"memory_id": uid}} for n, uid in enumerate(recalled, 1)])
        return AIMessage("Careful: Harbor Grill is famous for its shellfish platter, and you're allergic to "
                         "shellfish. Maybe suggest another place to Sam.")


def build_agent(memory: RippleMem, llm: BaseChatModel) -> Any:
    """``agent <-> tools`` over the memory: each user's memories in ``("memories", user_id)``."""
    namespace = ("memories", "{user_id}")
    tools = [create_recall_tool(memory, namespace=namespace, k=2),  # a tight recall: a long history's first hits
             create_explore_memory_tool(memory, namespace=namespace, limit=3),
             create_memory_timeline_tool(memory, namespace=namespace, page_size=3)]
    model = llm.bind_tools(tools)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke([SystemMessage(SYSTEM), *state["messages"]])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile()


def main() -> tuple[RippleMem, list[BaseMessage]]:
    """Ask the agent, print its tool calls and what the tools answered, then two timeline pages."""
    memory = RippleMem()  # offline defaults: MiniLM ONNX, embedded Chroma, rule-based extraction
    memory.add_conversation(CHAT, namespace=NAMESPACE)
    config = {"configurable": {"user_id": "maya"}}
    out = build_agent(memory, StandInWalker()).invoke({"messages": [HumanMessage(QUESTION)]}, config=config)
    for message in out["messages"]:
        if isinstance(message, AIMessage) and message.tool_calls:
            print("calls:", "; ".join(f"{call['name']}({call['args']})" for call in message.tool_calls))
        elif isinstance(message, ToolMessage):
            print(f"tool {message.name}:\n  " + message.text.replace("\n", "\n  "))
    print("agent:", out["messages"][-1].text)

    timeline = create_memory_timeline_tool(memory, namespace=("memories", "{user_id}"), page_size=3)
    for page in (1, 2):
        answer = timeline.invoke({"since": "2026-03-01", "until": "2026-03-10", "page": page}, config)
        print(f"timeline page {page}:\n  " + answer.replace("\n", "\n  "))
    return memory, list(out["messages"])


if __name__ == "__main__":
    main()
