"""RippleMemStore: a LangGraph store, one namespace per user, search that recollects.

Run: python cookbook/03_store_per_user_namespaces.py   (offline, a few seconds)

What it shows:
* ``store.put(("users", user_id), key, {"text": ...})`` writes through the RippleMem
  write path (units, cues, graph edges); ``get`` returns the value you stored;
* ``store.search(prefix, query=...)`` runs recollection in every namespace under the
  prefix and ranks items by score; without a query it lists; ``filter`` matches fields;
* users never see each other's memories; ``list_namespaces`` shows who has any;
* ``graph.compile(store=store)``: nodes use ``runtime.store`` with the user from the
  run context, exactly as with LangGraph's InMemoryStore or PostgresStore.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.runtime import Runtime

from langchain_ripplemem import RippleMem
from langchain_ripplemem.stores import RippleMemStore


@dataclass
class UserContext:
    user_id: str


def build_graph(store: RippleMemStore) -> Any:
    def remember_and_answer(state: MessagesState, runtime: Runtime[UserContext]) -> dict[str, Any]:
        namespace = ("users", runtime.context.user_id)
        question = state["messages"][-1].text
        hits = runtime.store.search(namespace, query=question, limit=2)
        # Offline stand-in for a chat model: answer with the best memory.
        reply = f"From your memories: {hits[0].value['text']}" if hits else "I don't know you yet."
        runtime.store.put(namespace, f"question-{uuid.uuid4().hex[:8]}", {"text": question, "kind": "question"})
        return {"messages": [("ai", reply)]}

    builder = StateGraph(MessagesState, context_schema=UserContext)
    builder.add_node("remember_and_answer", remember_and_answer)
    builder.add_edge(START, "remember_and_answer")
    builder.add_edge("remember_and_answer", END)
    return builder.compile(store=store)


def main() -> None:
    store = RippleMemStore(RippleMem())
    maya, sam = ("users", "maya"), ("users", "sam")
    store.put(maya, "allergy", {"text": "I'm allergic to shellfish.", "speaker": "Maya", "kind": "health"})
    store.put(maya, "pet", {"text": "My cat Biscuit hates going to the vet.", "speaker": "Maya", "kind": "pets"})
    store.put(sam, "food", {"text": "I love oysters at Harbor Grill.", "speaker": "Sam", "kind": "food"})

    print("get:", store.get(maya, "allergy").value)
    print("namespaces:", store.list_namespaces(prefix=("users",)))
    for item in store.search(("users",), query="Who should avoid seafood?"):
        print(f"search users/: {item.score:.2f} {'/'.join(item.namespace)} {item.key}: {item.value['text']}")
    print("maya only:", [i.key for i in store.search(maya, query="seafood")])
    print("filter kind=pets:", [i.key for i in store.search(maya, filter={"kind": "pets"})])

    store.put(maya, "allergy", {"text": "Update: the allergist says shellfish is fine now.", "speaker": "Maya"})
    print("after re-put:", store.get(maya, "allergy").value["text"])

    graph = build_graph(store)
    out = graph.invoke({"messages": [("user", "Can I have shellfish?")]}, context=UserContext("maya"))
    print("graph (maya):", out["messages"][-1].content)
    out = graph.invoke({"messages": [("user", "Can I have shellfish?")]}, context=UserContext("priya"))
    print("graph (priya):", out["messages"][-1].content)
    print("namespaces now:", store.list_namespaces())


if __name__ == "__main__":
    main()
