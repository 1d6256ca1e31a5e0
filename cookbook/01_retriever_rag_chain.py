"""RAG over long-term memory: RippleMemRetriever in an LCEL chain.

Run: python cookbook/01_retriever_rag_chain.py   (offline, a few seconds)

What it shows:
* writing a short multi-session chat into RippleMemory (real MiniLM embeddings, offline);
* ``memory.as_retriever(...)`` as an ordinary LangChain retriever that recollects: the
  allergy (S1:1) does not look like a dinner question, so plain top-4 search misses it;
  the retriever reaches it through the memory graph, from the dinner plan (S4:1) to the
  turn that names Harbor Grill's shellfish (S3:1) to the allergy;
* every Document carries why it was recalled (``found_by``: recall views or
  ``expansion:<channel>``, ``paths`` through the memory graph) and where it came from
  (turn ids, time);
* ``retriever | format_docs | prompt | llm`` answering from the recalled set.

The chat model is an offline stand-in with a canned reply (what the script prints before
it, the memories the model is given, is computed). For a real answer, use
    from langchain.chat_models import init_chat_model
    llm = init_chat_model("openai:gpt-4.1-mini", temperature=0)   # needs OPENAI_API_KEY
"""

from __future__ import annotations

from langchain_core.documents import Document
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from langchain_ripplemem import RecallConfig, RippleMemory

NAMESPACE = ("users", "maya")
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
QUESTION = "Should Maya accept Sam's birthday dinner pick?"
K = 4
# Nine memories all fit in the default first hop (35 semantic + 45 lexical + 30 cue hits), so
# this tight budget plays the part of a long history, where the allergy would not be among
# the first hits for a question about a dinner.
TIGHT = RecallConfig(views={"semantic_k": 2, "lexical_k": 1, "cue_k": 1})


def build_memory() -> RippleMemory:
    """The chat above in a fresh in-memory RippleMemory."""
    memory = RippleMemory()  # offline defaults: MiniLM ONNX, embedded Chroma, rule-based extraction
    report = memory.add_conversation(CHAT, namespace=NAMESPACE)
    print("ingest:", report.summary())
    return memory


def turn_of(memory: RippleMemory) -> dict[str, str]:
    """Unit id -> the turn it came from ("S1:1"), to print paths through the graph readably."""
    return {unit.id: ",".join(unit.source.turn_ids) for unit in memory.list_units(NAMESPACE)}


def plain_top_k(memory: RippleMemory, k: int = K) -> list[str]:
    """The turns of the ``k`` memories closest to the question: dense search, no recollection."""
    return [",".join(unit.source.turn_ids) for unit, _ in memory.search(QUESTION, namespace=NAMESPACE, k=k)]


def format_docs(docs: list[Document]) -> str:
    """One line per memory: id, date and restatement (what the model gets to see)."""
    return "\n".join(f"[{d.id[:8]}] {(d.metadata['time_start'] or 'undated')[:10]} {d.page_content}"
                     for d in docs)


def main() -> tuple[list[str], list[Document]]:
    """Run the example; returns plain top-k's turns and the retriever's Documents (what the test checks)."""
    memory = build_memory()
    turns = turn_of(memory)
    plain = plain_top_k(memory)
    print(f"\nplain top-{K} (memory.search, dense): {plain}")

    retriever = memory.as_retriever(namespace=NAMESPACE, k=K, config=TIGHT)
    docs = retriever.invoke(QUESTION)
    print(f"\nretriever.invoke({QUESTION!r}):")
    for doc in docs:
        meta = doc.metadata
        via = f" via {' -> '.join(turns[uid] for uid in meta['paths'][0])}" if meta["paths"] else ""
        print(f"  {meta['score']:.2f} turns={meta['turn_ids']} {meta['found_by']}{via}\n      {doc.page_content}")
    print("k per call:", len(retriever.invoke(QUESTION, k=2)), "documents with k=2")

    prompt = ChatPromptTemplate.from_messages([
        ("system", "Answer only from these memories; cite their ids.\n{context}"),
        ("human", "{question}"),
    ])
    to_prompt = {"context": retriever | RunnableLambda(format_docs), "question": RunnablePassthrough()} | prompt
    print("\nthe model is given:\n" + to_prompt.invoke(QUESTION).to_messages()[0].text)
    # Offline stand-in for init_chat_model("openai:gpt-4.1-mini"): always says this.
    llm = GenericFakeChatModel(messages=iter([AIMessage(
        "Maybe not: Sam picked Harbor Grill, and Maya is allergic to shellfish; check the menu first.")]))
    chain = to_prompt | llm | StrOutputParser()
    print("\nchain answer (canned):", chain.invoke(QUESTION))
    return plain, docs


if __name__ == "__main__":
    main()
