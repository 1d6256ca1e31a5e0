"""An agent that walks its memory: recall, then explore what the recalled memories link to.

Run: python cookbook/08_walking_the_memory.py   (offline, a few seconds)

What it shows, on the demo's conversation (``ripplemem demo``: seven sessions of Maya and Sam):
* a LangGraph agent (``agent <-> tools``) with ``recall_memory``, ``explore_memory`` and
  ``memory_timeline`` (``langchain_ripplemem.tools``) over one user's memory;
* a question the recall alone does not answer. Asked whether Maya can fly to Lisbon on her
  current passport, a two-memory recall finds the wedding and the flight dates, not the
  passport's expiry (said while clearing a junk drawer) nor how long renewals take (a story
  about Sam's sister). Exploring the recalled memories shows what each links to, grouped by
  edge type, strongest first: the expiry is among them, and exploring it reaches the renewals;
* ``memory_timeline``: what was said in a window of time (the weekend before Maya's interview),
  oldest first, a page at a time.

The chat model is an offline stand-in following a fixed policy: recall the question, explore every
recalled memory, then explore the linked memories that name something the question asks about and
the recall did not show, then answer (the answer's text is canned). The tool calls it makes and what
the tools answer are real. For a real model, use
    from langchain.chat_models import init_chat_model
    llm = init_chat_model("openai:gpt-4.1-mini")   # needs OPENAI_API_KEY
"""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langchain_ripplemem import RippleMem
from langchain_ripplemem.tools import create_explore_memory_tool, create_memory_timeline_tool, create_recall_tool

NAMESPACE = ("memories", "maya")
QUESTION = "Can Maya fly to Lisbon for Priya's wedding on her current passport?"
SYSTEM = ("You have long-term memory. Call recall_memory first; when recalled memories may link to more, "
          "call explore_memory with their ids, then answer from what you found.")
MEMORY_LINE = re.compile(r"^(?:- |Memory )\[(\w+)\] \| [^|]+ \| (.*)$", re.MULTILINE)


def demo_conversation() -> dict[str, Any]:
    """The conversation ``ripplemem demo`` ships (langchain_ripplemem/data/sample_conversation.json)."""
    return json.loads((resources.files("langchain_ripplemem") / "data" / "sample_conversation.json").read_text())


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
        question = next(m.text for m in messages if isinstance(m, HumanMessage))
        answers = [m for m in messages if isinstance(m, ToolMessage)]
        if not answers:
            return AIMessage("", tool_calls=[{"name": "recall_memory", "id": "recall", "args": {"query": question}}])
        recalled = MEMORY_LINE.findall(answers[0].text)
        explored = {call["args"]["memory_id"] for m in messages if isinstance(m, AIMessage)
                    for call in m.tool_calls if call["name"] == "explore_memory"}
        if not explored:  # first look at what each recalled memory links to
            return _explore([uid for uid, _ in recalled], "explore")
        # Then follow the links that name what the question asks about and the recall did not show.
        unseen = {w for w in _words(question) if w not in _words(answers[0].text)}
        linked = [uid for a in answers[1:] for uid, text in MEMORY_LINE.findall(a.text)
                  if uid not in explored and unseen & _words(text)]
        if linked:
            return _explore(list(dict.fromkeys(linked)), "follow")
        return AIMessage("Probably not: her passport runs out on June 3rd, a week before she flies on June 10th, "
                         "and renewals are taking about ten weeks, so she should renew it now.")


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]{5,}", text.lower()))


def _explore(ids: list[str], label: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": "explore_memory", "id": f"{label}-{n}", "args": {"memory_id": uid}}
                                     for n, uid in enumerate(ids, 1)])


def build_agent(memory: RippleMem, llm: BaseChatModel) -> Any:
    """``agent <-> tools`` over the memory: each user's memories in ``("memories", user_id)``."""
    namespace = ("memories", "{user_id}")
    tools = [create_recall_tool(memory, namespace=namespace, k=2),  # a tight recall: a long history's first hits
             create_explore_memory_tool(memory, namespace=namespace),
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
    memory.add_conversation(demo_conversation(), namespace=NAMESPACE)
    config = {"configurable": {"user_id": "maya"}}
    out = build_agent(memory, StandInWalker()).invoke({"messages": [HumanMessage(QUESTION)]}, config=config)
    for message in out["messages"]:
        if isinstance(message, AIMessage) and message.tool_calls:
            print("calls:", "; ".join(f"{call['name']}({call['args']})" for call in message.tool_calls))
        elif isinstance(message, ToolMessage):
            print(f"tool {message.name}:\n  " + message.text.replace("\n", "\n  "))
    print("agent:", out["messages"][-1].text)

    timeline = create_memory_timeline_tool(memory, namespace=("memories", "{user_id}"), page_size=3)
    # Maya's second interview was on Thursday, April 2nd: the weekend before it.
    for page in (1, 2):
        answer = timeline.invoke({"since": "2026-03-28", "until": "2026-03-29", "page": page, "page_size": 1},
                                 config)
        print(f"timeline page {page}:\n  " + answer.replace("\n", "\n  "))
    return memory, list(out["messages"])


if __name__ == "__main__":
    main()
