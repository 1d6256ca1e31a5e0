"""RAG over long-term memory: RippleMemRetriever in an LCEL chain.

Run: python cookbook/01_retriever_rag_chain.py   (offline, a few seconds)

What it shows:
* writing a short multi-session chat into RippleMemory (real MiniLM embeddings, offline);
* ``memory.as_retriever(...)`` as an ordinary LangChain retriever that recollects: the
  allergy does not look like a dinner question, and graph expansion brings it in;
* every Document carries why it was recalled (``found_by``: recall views or
  ``expansion:<channel>``, ``paths`` through the memory graph) and where it came from
  (turn ids, time);
* ``retriever | format_docs | prompt | llm`` answering from the recalled set.

The chat model is an offline stand-in with a canned reply. For a real answer, use
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
    {"id": "S2", "time": "2026-03-20T19:00:00Z", "turns": [
        {"id": "S2:1", "speaker": "Sam", "text": "My cousin cooks at Harbor Grill, the oysters are famous."},
        {"id": "S2:2", "speaker": "Maya", "text": "I went hiking near Portland with Priya last week."}]},
    {"id": "S3", "time": "2026-04-20T19:00:00Z", "turns": [
        {"id": "S3:1", "speaker": "Sam", "text": "For Maya's birthday dinner, let's book Harbor Grill!"},
        {"id": "S3:2", "speaker": "Maya", "text": "Sounds fun, let me think about the dinner."}]},
]}
QUESTION = "Should Maya accept Sam's birthday dinner pick?"


def format_docs(docs: list[Document]) -> str:
    """One line per memory: id, date and restatement (what the model gets to see)."""
    return "\n".join(f"[{d.id[:8]}] {(d.metadata['time_start'] or 'undated')[:10]} {d.page_content}"
                     for d in docs)


def main() -> None:
    memory = RippleMemory()  # offline defaults: MiniLM ONNX, embedded Chroma, rule-based extraction
    report = memory.add_conversation(CHAT, namespace=NAMESPACE)
    print("ingest:", report.summary())

    # Six memories all fit in the default first hop (10 semantic + 5 lexical + 5 cue hits),
    # so this tight budget plays the part of a long history, where the allergy would not be
    # among the top hits for a question about a dinner.
    tight = RecallConfig(views={"semantic_k": 2, "lexical_k": 1, "cue_k": 1})
    retriever = memory.as_retriever(namespace=NAMESPACE, k=4, config=tight)
    print(f"\nretriever.invoke({QUESTION!r}):")
    for doc in retriever.invoke(QUESTION):
        meta = doc.metadata
        via = f" via {' -> '.join(p[:6] for p in meta['paths'][0])}" if meta["paths"] else ""
        print(f"  {meta['score']:.2f} {meta['found_by']}{via} turns={meta['turn_ids']} {doc.page_content}")
    print("k per call:", len(retriever.invoke(QUESTION, k=2)), "documents with k=2")

    prompt = ChatPromptTemplate.from_messages([
        ("system", "Answer only from these memories; cite their ids.\n{context}"),
        ("human", "{question}"),
    ])
    # Offline stand-in for init_chat_model("openai:gpt-4.1-mini"): always says this.
    llm = GenericFakeChatModel(messages=iter([AIMessage(
        "Maybe not: Sam picked Harbor Grill, and Maya is allergic to shellfish; check the menu first.")]))
    chain = (
        {"context": retriever | RunnableLambda(format_docs), "question": RunnablePassthrough()}
        | prompt | llm | StrOutputParser()
    )
    print("\nchain answer:", chain.invoke(QUESTION))


if __name__ == "__main__":
    main()
