"""Run every system on every question, on one shared memory per conversation.

For each conversation the runner builds ONE memory (namespace ``(conv_id,)``),
ingests it once (timed), then asks every system every question. Each system
retrieves once at the largest k; smaller k are scored on prefixes of that list,
which is what "top-k" means for a ranked list and keeps the query count (and
latency numbers) independent of how many k are reported.

Example:
    >>> import json, pathlib, tempfile
    >>> record = {"sample_id": "conv-x", "conversation": {
    ...     "speaker_a": "Maya", "speaker_b": "Sam", "session_1_date_time": "10:00 am on 3 March, 2023",
    ...     "session_1": [{"speaker": "Maya", "dia_id": "D1:1", "text": "I took a pottery class in Lisbon."},
    ...                   {"speaker": "Sam", "dia_id": "D1:2", "text": "Nice, I ran 10 km on Sunday."}]},
    ...     "qa": [{"question": "Where did Maya take a pottery class?", "answer": "Lisbon",
    ...             "evidence": ["D1:1"], "category": 4}]}
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "locomo.json"
    >>> _ = path.write_text(json.dumps([record]))
    >>> from langchain_ripplemem.bench import load_locomo
    >>> results = run_benchmark("locomo", load_locomo(path), ["bm25"], progress=False)
    >>> results["systems"]["bm25"]["by_category"]["overall_1_4"]["recall_all@10"]
    1.0

"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_ripplemem.bench import answering, results
from langchain_ripplemem.bench.loaders import (
    LOCOMO_HELDOUT,
    LOCOMO_TUNE,
    BenchConversation,
    BenchQuestion,
)
from langchain_ripplemem.bench.metrics import (
    context_tokens,
    recall_all,
    recall_frac,
    sessions_covered_at_k,
    turns_covered_at_k,
)
from langchain_ripplemem.bench.systems import (
    SYSTEM_NAMES,
    Retrieved,
    System,
    describe_system,
    make_system,
    retrieve_question,
)
from langchain_ripplemem.config import RecallConfig, WriteConfig, preset

DEFAULT_KS = (5, 10, 30)
DATASETS = ("locomo", "longmemeval", "linked")
#: The paper's preset for each dataset: its write settings, and the ``ripplemem_paper`` row.
#: The linked suite's haystacks are LoCoMo-style dialogue.
PAPER_PRESETS = {"locomo": "paper", "longmemeval": "paper-long-history", "linked": "paper"}
MemoryFactory = Callable[[], Any]


@dataclass
class FreshMemories:
    """A factory of fresh in-memory ``RippleMemory`` objects with the paper's preset for the dataset.

    The runner owns what it makes: it deletes each conversation's namespace once
    scored. ``extractor`` (e.g. LoCoMo's observations) and ``embeddings`` (e.g. a
    cache) replace the defaults; one encoder serves every memory, since loading
    the model per conversation would cost more than the build itself on LongMemEval.
    """

    dataset: str
    extractor: Any = None
    embeddings: Any = None

    def __call__(self) -> Any:
        """A new, empty in-memory ``RippleMemory``."""
        from langchain_ripplemem.memory import RippleMemory

        if self.embeddings is None:
            from langchain_ripplemem.embeddings import MiniLMOnnxEmbeddings

            self.embeddings = MiniLMOnnxEmbeddings()
        # The memory's own recall config is the paper's (the ripplemem_paper row); its
        # write settings are the recommended ones with the dataset's windows, which
        # every system reads (cue edges: docs/architecture.md).
        write_config, recall_config = preset(PAPER_PRESETS[self.dataset])
        write_config = write_config.model_copy(update={"structural_edges": WriteConfig().structural_edges})
        return RippleMemory(self.embeddings, write_config=write_config, recall_config=recall_config,
                            extractor=self.extractor)


def default_memory_factory(dataset: str) -> MemoryFactory:
    """A factory of fresh in-memory ``RippleMemory`` objects with the paper's preset for the dataset.

    The memory's own ``recall_config`` is the paper's (the ``ripplemem_paper`` row);
    the ``ripplemem`` row and its ablations run the recommended ``RecallConfig()``.
    """
    return FreshMemories(dataset)


def run_benchmark(
    dataset: str,
    conversations: Sequence[BenchConversation],
    systems: Sequence[str] = SYSTEM_NAMES,
    ks: Sequence[int] = DEFAULT_KS,
    memory_factory: MemoryFactory | None = None,
    progress: bool = True,
    limit: int | None = None,
    *,
    recall_config: RecallConfig | None = None,
    system_factory: Callable[[str, Any, RecallConfig | None], System] = make_system,
    answer_model: Any = None,
    judge_model: Any = None,
    answer_systems: Sequence[str] | None = None,
    answer_k: int | None = None,
    dataset_path: str | None = None,
    keep_questions: bool = False,
    warmup: str | None = None,
) -> dict[str, Any]:
    """Benchmark ``systems`` on ``conversations`` and return the results dict.

    Args:
        dataset: ``"locomo"``, ``"longmemeval"`` or ``"linked"`` (decides categories and levels).
        conversations: from :func:`load_locomo` / :func:`load_longmemeval`.
        systems: system names (see :data:`SYSTEM_NAMES`).
        ks: cut-offs to score; retrieval runs once at ``max(ks)``.
        memory_factory: no-argument callable returning a fresh memory; called
            once per conversation. Default: ``RippleMemory`` with the preset
            (:class:`FreshMemories`, whose namespaces the runner deletes when done).
        progress: show a tqdm bar over conversations.
        limit: score at most this many questions per conversation (quick runs).
        recall_config: base config of the recall systems (default: the recommended ``RecallConfig()``).
        system_factory: ``(name, memory, recall_config) -> System``; tests swap it.
        answer_model: optional chat model (``.invoke(messages)``); when given,
            answers are generated and scored (F1, BLEU-1, judge).
        judge_model: judge chat model; defaults to ``answer_model``.
        answer_systems: systems whose retrievals are answered (default: all).
        answer_k: memories shown to the answer model (default: ``max(ks)``).
        dataset_path: the dataset file, hashed into the results.
        keep_questions: also return per-question records under ``"questions"``.
        warmup: a query every system asks once per conversation before the
            timed questions (untimed, unscored), so that a memory asked few
            questions is timed warm, as a long-lived memory would be.

    Raises:
        ValueError: on an unknown dataset, an empty system list, or bad ks.

    """
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; expected one of {DATASETS}")
    if not systems:
        raise ValueError("systems is empty: name at least one system")
    if len(set(systems)) != len(systems):
        raise ValueError(f"systems has duplicates: {list(systems)}")
    ks = sorted(set(int(k) for k in ks))
    if not ks or ks[0] < 1:
        raise ValueError(f"ks must be positive integers, got {ks}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    kmax = max(ks)
    base_config = recall_config or RecallConfig()
    factory = memory_factory or default_memory_factory(dataset)
    owned = memory_factory is None or isinstance(memory_factory, FreshMemories)
    answering_on = answer_model is not None
    judge = judge_model if judge_model is not None else answer_model
    to_answer = set(answer_systems if answer_systems is not None else systems)
    unknown = to_answer - set(systems)
    if unknown:
        raise ValueError(f"answer_systems {sorted(unknown)} are not among systems {list(systems)}")
    a_k = answer_k or kmax
    if not 1 <= a_k <= kmax:
        raise ValueError(f"answer_k must be between 1 and max(ks)={kmax}, got {answer_k}")

    records: dict[str, list[dict[str, Any]]] = {name: [] for name in systems}
    latencies: dict[str, list[float]] = {name: [] for name in systems}
    conv_rows: list[dict[str, Any]] = []
    unresolved: list[dict[str, Any]] = []
    described: dict[str, Any] = {}
    write_config: Any = None
    build_usage = {"llm_calls": 0, "tokens": 0}

    bar = _progress(conversations, progress)
    for bench_conv in bar:
        namespace = (bench_conv.id,)
        memory = factory()
        if write_config is None:
            write_config = getattr(memory, "write_config", None)
        _set_postfix(bar, bench_conv.id, "ingest")
        start = time.perf_counter()
        report = memory.add_conversation(bench_conv.conversation, namespace=namespace)
        build_seconds = time.perf_counter() - start
        _add_build_usage(build_usage, report)
        built = {name: system_factory(name, memory, base_config) for name in systems}
        for name, system in built.items():
            described.setdefault(name, describe_system(system))
        questions = bench_conv.questions[:limit] if limit else bench_conv.questions
        if warmup:
            for system in built.values():
                system.retrieve(warmup, namespace, kmax)
        _set_postfix(bar, bench_conv.id, f"{len(questions)} questions")
        for question in questions:
            if question.unresolved:
                unresolved.append(_unresolved_row(bench_conv, question))
            # Systems are interleaved per question so warm caches or a busy
            # machine affect all of them alike.
            for name, system in built.items():
                start = time.perf_counter()
                got = retrieve_question(system, question, namespace, kmax)
                latencies[name].append((time.perf_counter() - start) * 1000.0)
                record = question_record(question, got, ks, split=bench_conv.split)
                if answering_on and name in to_answer:
                    record.update(
                        answering.score_answer(
                            answer_model, judge, question=question.question,
                            gold=question.answer, answerable=question.answerable,
                            units=got.units[:a_k], question_date=question.question_date,
                        )
                    )
                records[name].append(record)
        conv_rows.append({
            "id": bench_conv.id,
            "split": bench_conv.split,
            "n_questions": len(questions),
            "build_seconds": build_seconds,
            "units": getattr(report, "units", None),
            "turns": len(bench_conv.conversation.turns()),
        })
        _close(memory, namespace, owned=owned)

    total_build = sum(row["build_seconds"] for row in conv_rows)
    out: dict[str, Any] = {
        "dataset": dataset,
        "unit": "turn",
        "k": ks,
        "systems": {
            name: results.system_summary(
                dataset, records[name], latencies[name], ks=ks, build_seconds=total_build
            )
            for name in systems
        },
    }
    n_questions = sum(row["n_questions"] for row in conv_rows)
    first = records[systems[0]]
    out.update(results.run_metadata(dataset_path))
    out.update({
        "levels": ["turn", "session"] if dataset == "longmemeval" else ["turn"],
        "n_questions": n_questions,
        "n_questions_evaluated": sum(r["n_evaluated"] for r in first),
        "n_conversations": len(conv_rows),
        "question_limit": limit,
        "build": {
            "seconds_total": total_build,
            "seconds_per_conversation": total_build / len(conv_rows) if conv_rows else None,
            **build_usage,
        },
        "config": {
            "write": results.dump_config(write_config),
            "recall": results.dump_config(base_config),
            "systems": described,
        },
        "context_token_rule": "ceil(whitespace tokens * 1.3) per restatement, summed over top-k",
        "warmup_query": warmup,
        "unresolved_evidence": unresolved,
        "n_unresolved_evidence": sum(len(row["unresolved"]) for row in unresolved),
        "no_evidence_questions": [r["_id"] for r in first if not r["n_evaluated"]],
        "conversations": conv_rows,
        "splits": _split_definition(dataset, conv_rows),
        "answer": answering.answer_settings(answer_model, judge, sorted(to_answer), a_k)
        if answering_on else None,
    })
    if keep_questions:
        out["questions"] = {name: records[name] for name in systems}
    return _rounded(out)


def question_record(
    question: BenchQuestion, got: Retrieved, ks: Sequence[int], split: str | None = None
) -> dict[str, Any]:
    """Per-question metrics of one retrieval at every k (prefixes of one ranked list).

    Recall is ``None`` (left out of the means) when the question has no
    resolved evidence; ``n_evaluated`` counts the questions that have some.
    ``_evidence_ranks`` gives each evidence turn's first 1-based rank in the
    list (``None``: not retrieved), for per-question reports.
    """
    units = got.units
    first_rank: dict[str, int] = {}
    for rank, unit in enumerate(units, start=1):
        for turn_id in unit.source.turn_ids:
            first_rank.setdefault(turn_id, rank)
    record: dict[str, Any] = {
        "_id": question.id,
        "_category": question.category,
        "_category_name": question.category_name,
        "_answerable": question.answerable,
        "_split": split,
        "_evidence_ranks": {turn_id: first_rank.get(turn_id) for turn_id in question.evidence},
        "n_evaluated": 1 if question.evidence else 0,
        "llm_calls": got.llm_calls,
        "tokens": got.tokens,
    }
    with_sessions = bool(question.evidence_sessions)
    if with_sessions:
        record["n_session_evaluated"] = 1
    for k in ks:
        if question.evidence:
            covered = turns_covered_at_k(units, k)
            record[f"recall_all@{k}"] = recall_all(question.evidence, covered)
            record[f"recall_frac@{k}"] = recall_frac(question.evidence, covered)
        else:
            record[f"recall_all@{k}"] = record[f"recall_frac@{k}"] = None
        if with_sessions:
            sessions = sessions_covered_at_k(units, k)
            record[f"session_recall_all@{k}"] = recall_all(question.evidence_sessions, sessions)
            record[f"session_recall_frac@{k}"] = recall_frac(question.evidence_sessions, sessions)
        record[f"units_mean@{k}"] = min(k, len(units))
        record[f"context_tokens_mean@{k}"] = context_tokens(units, k)
    return record


def _rounded(value: Any, digits: int = 6) -> Any:
    """Round floats for tidy, diff-friendly results files (1e-6 is far below any reported digit)."""
    if isinstance(value, float):
        return round(value, digits)
    if isinstance(value, dict):
        return {key: _rounded(item, digits) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item, digits) for item in value]
    return value


def _split_definition(dataset: str, conv_rows: Sequence[dict[str, Any]]) -> dict[str, list[str]]:
    if dataset == "locomo":
        return {"tune": list(LOCOMO_TUNE), "heldout": list(LOCOMO_HELDOUT)}
    splits: dict[str, list[str]] = {}
    for row in conv_rows:
        if row["split"]:
            splits.setdefault(row["split"], []).append(row["id"])
    return splits


def _unresolved_row(conv: BenchConversation, question: BenchQuestion) -> dict[str, Any]:
    return {
        "conversation": conv.id,
        "question_id": question.id,
        "category": question.category_name,
        "unresolved": list(question.unresolved),
        "resolved": list(question.evidence),
    }


def _add_build_usage(total: dict[str, int], report: Any) -> None:
    usage = getattr(report, "usage", None)
    if usage is None:
        return
    total["llm_calls"] += int(getattr(usage, "llm_calls", 0) or 0)
    total["tokens"] += int(getattr(usage, "input_tokens", 0) or 0)
    total["tokens"] += int(getattr(usage, "output_tokens", 0) or 0)


def _close(memory: Any, namespace: tuple[str, ...], *, owned: bool) -> None:
    """Free the conversation's memory once it is scored.

    Only a memory the runner created itself (the default factory) has its
    namespace deleted: in-process stores can share one backend, so leftovers
    would pile up over 500 LongMemEval haystacks. A caller's memory may be
    persistent and is never emptied.
    """
    delete = getattr(memory, "delete_namespace", None)
    if owned and callable(delete):
        try:
            delete(namespace)
        except Exception:  # noqa: BLE001 - cleanup must never fail a finished run
            pass
    close = getattr(memory, "close", None)
    if callable(close):
        close()


def _progress(conversations: Sequence[BenchConversation], enabled: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(conversations, desc="conversations", unit="conv", disable=not enabled)


def _set_postfix(bar: Any, conv_id: str, phase: str) -> None:
    if hasattr(bar, "set_postfix_str"):
        bar.set_postfix_str(f"{conv_id}: {phase}", refresh=False)
