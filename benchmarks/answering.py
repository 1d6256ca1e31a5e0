"""Optional answer generation and LLM-judge scoring on top of retrieved memories.

Only used when the benchmark is given an answer model. The model sees the
question and the retrieved restatements and nothing else (docs/concepts.md: it sees "the
question and those memories, nothing else"). Scores: token F1 and BLEU-1 with
LoCoMo's normalisation, and an LLM judge (CORRECT / WRONG). The prompts are
constants so the results file can record their exact text. At an OpenAI-compatible
server (llama.cpp, vLLM) each reply is bounded (:func:`~langchain_ripplemem.llm.calls.bounded`).

Example:
    >>> parse_verdict("Reasoning... CORRECT")
    True

"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from benchmarks.metrics import answer_f1, bleu1
from langchain_ripplemem.llm.calls import bounded
from langchain_ripplemem.render.plain_text import memory_line
from langchain_ripplemem.schemas import MemoryUnit

ANSWER_SYSTEM_PROMPT = (
    "You answer questions about a long conversation using only the memories listed. "
    "Answer briefly (a few words or one short sentence). Use absolute dates when the "
    "memories give them. If the memories do not contain the answer, reply exactly: "
    "Not mentioned in the conversation."
)
ANSWER_USER_PROMPT = "Memories:\n{memories}\n\n{question_line}Question: {question}\nAnswer:"

JUDGE_SYSTEM_PROMPT = (
    "You grade answers to questions about a conversation. Compare the generated answer "
    "with the gold answer. Be generous with wording: the generated answer is CORRECT if "
    "it refers to the same thing or the same time as the gold answer, even if it is "
    "longer or phrased differently; it is WRONG if it contradicts the gold answer, "
    "misses its key content, or answers when the gold says the information is not "
    "available. Reply with one word: CORRECT or WRONG."
)
JUDGE_USER_PROMPT = "Question: {question}\nGold answer: {gold}\nGenerated answer: {prediction}"
# Gold text for questions with no support in the conversation (LoCoMo category 5,
# LongMemEval abstention): the right behaviour is to say so.
NO_ANSWER_GOLD = (
    "The conversation does not contain this information; a correct answer says it is "
    "not mentioned or not known."
)
_VERDICT = re.compile(r"\b(CORRECT|WRONG)\b")
# A reply's output bound at OpenAI-compatible servers (chat_models.bounded): the answer is brief and the verdict
# one word, but a local reasoning model thinks first; the bound only stops a model that does not stop.
REPLY_MAX_TOKENS = 512


def model_name(model: Any) -> str:
    """Best-effort model name for the results file (``model_name``/``model``/class)."""
    for attr in ("model_name", "model", "model_id", "name"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def format_memories(units: Sequence[MemoryUnit]) -> str:
    """One line per unit: ``- | date | restatement`` (``rendering.memory_line``)."""
    return "\n".join(memory_line("-", unit, undated="undated") for unit in units) or "(no memories)"


def answer_question(
    model: Any, question: str, units: Sequence[MemoryUnit], question_date: str | None = None
) -> tuple[str, dict[str, int]]:
    """Ask ``model`` to answer from the units; return ``(answer, usage)``."""
    from langchain_core.messages import HumanMessage, SystemMessage

    question_line = f"Question date: {question_date}\n" if question_date else ""
    user = ANSWER_USER_PROMPT.format(
        memories=format_memories(units), question_line=question_line, question=question
    )
    reply = bounded(model, REPLY_MAX_TOKENS).invoke([SystemMessage(ANSWER_SYSTEM_PROMPT), HumanMessage(user)])
    return _text(reply).strip(), _usage(reply)


def judge_answer(
    model: Any, question: str, gold: str | None, prediction: str
) -> tuple[bool, bool, dict[str, int]]:
    """Ask the judge; return ``(correct, parsed, usage)``.

    ``gold=None`` means the question has no answer in the conversation. An
    unparseable verdict counts as wrong and ``parsed`` is False.
    """
    from langchain_core.messages import HumanMessage, SystemMessage

    user = JUDGE_USER_PROMPT.format(
        question=question, gold=gold if gold is not None else NO_ANSWER_GOLD, prediction=prediction
    )
    reply = bounded(model, REPLY_MAX_TOKENS).invoke([SystemMessage(JUDGE_SYSTEM_PROMPT), HumanMessage(user)])
    verdict = parse_verdict(_text(reply))
    return bool(verdict), verdict is not None, _usage(reply)


def parse_verdict(text: str) -> bool | None:
    """``True`` for CORRECT, ``False`` for WRONG (first one wins), ``None`` if neither."""
    match = _VERDICT.search(text.upper())
    return None if match is None else match.group(1) == "CORRECT"


def score_answer(
    answer_model: Any,
    judge_model: Any,
    *,
    question: str,
    gold: str | None,
    answerable: bool,
    units: Sequence[MemoryUnit],
    question_date: str | None = None,
) -> dict[str, Any]:
    """Answer, judge and score one question; return per-question metric entries.

    F1 and BLEU-1 are only defined when there is a gold answer
    (``None`` otherwise, so they are left out of the means).
    """
    prediction, usage_a = answer_question(answer_model, question, units, question_date)
    reference = gold if answerable else None
    correct, parsed, usage_j = judge_answer(judge_model, question, reference, prediction)
    has_gold = answerable and gold is not None
    return {
        "_prediction": prediction,
        "n_answered": 1,
        "n_judge_unparsed": 0 if parsed else 1,
        "judge": 1.0 if correct else 0.0,
        "f1": answer_f1(prediction, gold) if has_gold else None,
        "bleu1": bleu1(prediction, gold) if has_gold else None,
        "answer_llm_calls": 2,
        "answer_tokens": usage_a["tokens"] + usage_j["tokens"],
    }


def answer_settings(answer_model: Any, judge_model: Any, systems: list[str], k: int) -> dict:
    """What the results file records about the answer part (models and exact prompts)."""
    return {
        "model": model_name(answer_model),
        "judge_model": model_name(judge_model),
        "systems": systems,
        "k": k,
        "answer_prompt": {"system": ANSWER_SYSTEM_PROMPT, "user": ANSWER_USER_PROMPT},
        "judge_prompt": {
            "system": JUDGE_SYSTEM_PROMPT,
            "user": JUDGE_USER_PROMPT,
            "no_answer_gold": NO_ANSWER_GOLD,
        },
        "normalisation": "lowercase, strip punctuation and articles (a/an/the), whitespace tokens",
    }


def _text(message: Any) -> str:
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block if isinstance(block, str) else str(block.get("text", ""))
            for block in content
            if isinstance(block, (str, dict))
        ]
        return "".join(parts)
    return str(content)


def _usage(message: Any) -> dict[str, int]:
    meta = getattr(message, "usage_metadata", None) or {}
    tokens = int(meta.get("input_tokens", 0)) + int(meta.get("output_tokens", 0))
    return {"tokens": tokens}
