"""Bring your own models: any LangChain chat model for the LLM steps, any Embeddings.

Run: python cookbook/05_bring_your_own_models.py   (offline, a few seconds)

Real setups (not run here; each needs its provider package and, for hosted ones, a key)::

    # LLM steps (extraction, query cues, recall controller, grounded answer):
    memory = RippleMem(llm="openai:gpt-4.1-mini")            # pip install "langchain-ripplemem[openai]"
    memory = RippleMem(llm="anthropic:claude-sonnet-4-5")    # pip install langchain langchain-anthropic
    from langchain_ollama import ChatOllama                     # local: pip install langchain-ollama
    memory = RippleMem(llm=ChatOllama(model="llama3.1", temperature=0))
    from langchain_openai import ChatOpenAI                     # any OpenAI-compatible server: llama.cpp, vLLM
    memory = RippleMem(llm=ChatOpenAI(base_url="http://127.0.0.1:8080/v1", api_key="x", model="local",
                                         temperature=0))
    # A server that refuses json_schema (llama-cpp-python answers it with HTTP 500) is asked once by
    # function_calling, then json_mode, and the method that worked is remembered for that model; at such a
    # base URL every answer is bounded by max_tokens too (llama.cpp ignores max_completion_tokens).

    # Embeddings (default: the bundled MiniLM ONNX model, offline):
    from langchain_openai import OpenAIEmbeddings
    memory = RippleMem(embeddings=OpenAIEmbeddings(model="text-embedding-3-small"))
    from langchain_ollama import OllamaEmbeddings
    memory = RippleMem(embeddings=OllamaEmbeddings(model="nomic-embed-text"))

Offline, this script uses two small stand-ins so it runs anywhere: a chat model that
answers RippleMem's structured-output requests by reading its own prompts (a real
model does this properly) and a hashed character-trigram ``Embeddings``. Note the
``WriteConfig``: edge thresholds depend on the encoder's score distribution, so
calibrate ``semantic_threshold`` when you change embeddings.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool

from langchain_ripplemem import RippleMem, WriteConfig

NAMESPACE = ("users", "maya")
CHAT = {"id": "maya-and-sam", "sessions": [
    {"id": "S1", "time": "2026-03-02T19:00:00Z", "turns": [
        {"id": "S1:1", "speaker": "Maya", "text": "The allergist confirmed it: I'm allergic to shellfish."}]},
    {"id": "S2", "time": "2026-03-20T19:00:00Z", "turns": [
        {"id": "S2:1", "speaker": "Sam", "text": "My cousin cooks at Harbor Grill, the oysters are famous."}]},
    {"id": "S3", "time": "2026-04-20T19:00:00Z", "turns": [
        {"id": "S3:1", "speaker": "Sam", "text": "For Maya's birthday dinner, let's book Harbor Grill!"}]},
]}
NAME = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*")


class TrigramEmbeddings(Embeddings):
    """Offline stand-in for OpenAIEmbeddings & co: hashed character trigrams, 256 dims."""

    def _vector(self, text: str) -> list[float]:
        v = np.zeros(256)
        padded = f"  {text.lower()} "
        for i in range(len(padded) - 2):
            v[int(hashlib.md5(padded[i:i + 3].encode()).hexdigest(), 16) % 256] += 1.0
        return (v / (np.linalg.norm(v) or 1.0)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


class StandInChatModel(BaseChatModel):
    """Offline stand-in for init_chat_model("openai:gpt-4.1-mini") or ChatOllama(...).

    It fills RippleMem's structured outputs (extraction, query cues, controller plan)
    and answers, by reading the prompts: just enough to run every LLM step offline.
    """

    @property
    def _llm_type(self) -> str:
        return "offline-stand-in"

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        return self.bind(tool_names=[convert_to_openai_tool(t)["function"]["name"] for t in tools])

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  tool_names: list[str] | None = None, **kwargs: Any) -> ChatResult:
        prompt = messages[-1].text
        if tool_names:  # a with_structured_output call: answer with that schema as a tool call
            args = getattr(self, f"_{tool_names[0]}")(prompt)
            message = AIMessage("", tool_calls=[{"name": tool_names[0], "args": args, "id": "call-1"}])
        else:
            message = AIMessage(self._answer(prompt))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _ExtractionOutput(self, prompt: str) -> dict[str, Any]:
        turns = json.loads(prompt.split("<transcript>")[1].split("</transcript>")[0])
        return {"events": [{
            "restatement": f"{t['speaker']} said: \"{t['text']}\"",
            "participants": [t["speaker"]], "locations": re.findall(r"(?:at|to|book) ([A-Z]\w+ [A-Z]\w+)", t["text"]),
            "kind": "fact", "turn_ids": [t["id"]]} for t in turns]}

    def _QueryCueOutput(self, prompt: str) -> dict[str, Any]:
        question = prompt.split("<<<\n")[1].split("\n>>>")[0]
        return {"semantic_query": question, "keywords": [w for w in re.findall(r"\w+", question) if len(w) > 4],
                "participants": [n for n in NAME.findall(question) if n not in ("Should",)]}

    def _ControllerPlan(self, prompt: str) -> dict[str, Any]:
        question = prompt.split("<<<\n")[1].split("\n>>>")[0]
        ids = re.findall(r"^([0-9a-f]{32}) \|", prompt, flags=re.M)
        return {"should_continue": True, "anchors": ids[:2],
                "target_restatement": "Maya's food restrictions or allergies",
                "target_participants": ["Maya"], "target_keywords": ["allergic", "food"],
                "stop_reason": "" if ids else f"nothing recalled for {question!r}"}

    def _answer(self, prompt: str) -> str:
        cited = [n for n, line in re.findall(r"^\[(\d+)\] \| [^|]+\| (.*)$", prompt, flags=re.M)
                 if "allergic" in line or "Harbor Grill" in line]
        return f"Probably not: Harbor Grill and Maya's shellfish allergy clash {' '.join(f'[{n}]' for n in cited)}."


def main() -> None:
    memory = RippleMem(
        embeddings=TrigramEmbeddings(),
        llm=StandInChatModel(),  # or "openai:gpt-4.1-mini", or ChatOllama(model="llama3.1", temperature=0)
        write_config=WriteConfig(linking={"semantic_threshold": 0.6}),  # calibrated for this encoder
    )
    report = memory.add_conversation(CHAT, namespace=NAMESPACE)
    print(f"LLM extraction: {report.summary()}; llm calls: {report.usage.llm_calls}")
    for unit in memory.list_units(NAMESPACE):
        print(f"  {unit.restatement}  participants={unit.participants} locations={unit.locations}")

    result = memory.recall("Should Maya accept Sam's birthday dinner pick?", namespace=NAMESPACE, answer=True)
    for trace in result.rounds:
        target = trace.target.restatement if trace.target else "-"
        print(f"round {trace.round}: {trace.reason!r}; target: {target}; expanded {len(trace.expanded)}")
    print("answer:", result.answer)
    print("cited:", [memory.get([uid], namespace=NAMESPACE)[0].restatement for uid in result.cited_ids])
    print("recall llm calls:", result.usage.llm_calls)


if __name__ == "__main__":
    main()
