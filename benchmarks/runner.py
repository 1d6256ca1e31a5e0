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
    >>> from benchmarks import load_locomo
    >>> results = run_benchmark("locomo", load_locomo(path), ["bm25"], progress=False)
    >>> results["systems"]["bm25"]["by_category"]["overall_1_4"]["recall_all@10"]
    1.0

"""

from __future__ import annotations

import gc
import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from benchmarks import answering, results
from benchmarks.checkpoint import Checkpoint
from benchmarks.loaders import LOCOMO_HELDOUT, LOCOMO_TUNE, BenchConversation, BenchQuestion
from benchmarks.progress import RunProgress, heap_in_use_mb, rss_mb
from benchmarks.results import question_record
from benchmarks.systems import (
    SYSTEM_NAMES,
    Retrieved,
    System,
    describe_system,
    make_system,
    retrieve_question,
)
from langchain_ripplemem.cache_bounds import clear_text_caches
from langchain_ripplemem.config import RecallConfig, WriteConfig
from langchain_ripplemem.presets import preset

T = TypeVar("T")
DEFAULT_KS = (5, 10, 30)
DATASETS = ("locomo", "longmemeval", "linked", "sets", "facts", "multilingual", "small", "updates")
#: The paper's preset for each dataset: its write settings, and the ``ripplemem_paper`` row.
#: The injected suites' haystacks are LoCoMo-style dialogue.
PAPER_PRESETS = {"locomo": "paper", "longmemeval": "paper-long-history", "linked": "paper", "sets": "paper",
                 "facts": "paper", "multilingual": "paper", "small": "paper", "updates": "paper"}
MemoryFactory = Callable[[], Any]
#: The unscored query ``python -m benchmarks`` asks each memory before its questions: a system's first
#: query on a memory loads its views, and LongMemEval asks one question per memory, so without it every
#: timed query would be a first one.
WARMUP_QUERY = "What have we talked about lately?"


@dataclass
class FreshMemories:
    """A factory of fresh in-memory ``RippleMem`` objects with the paper's preset for the dataset.

    The runner owns what it makes: it deletes each conversation's namespace once
    scored. ``extractor`` (e.g. LoCoMo's observations) and ``embeddings`` (e.g. a
    cache) replace the defaults; one encoder serves every memory, since loading
    the model per conversation would cost more than the build itself on LongMemEval.
    """

    dataset: str
    extractor: Any = None
    embeddings: Any = None

    def __call__(self) -> Any:
        """A new, empty in-memory ``RippleMem``."""
        from langchain_ripplemem.memory import RippleMem

        if self.embeddings is None:
            from langchain_ripplemem.embeddings import MiniLMOnnxEmbeddings

            self.embeddings = MiniLMOnnxEmbeddings()
        # The memory's own recall config is the paper's (the ripplemem_paper row); its
        # write settings are the recommended ones with the dataset's windows, which
        # every system reads (cue edges: docs/architecture.md).
        write_config, recall_config = preset(PAPER_PRESETS[self.dataset])
        write_config = write_config.replace(linking={"structural_edges": WriteConfig().linking.structural_edges})
        return RippleMem(self.embeddings, write_config=write_config, recall_config=recall_config,
                         extractor=self.extractor)


def default_memory_factory(dataset: str) -> MemoryFactory:
    """A factory of fresh in-memory ``RippleMem`` objects with the paper's preset for the dataset.

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
    checkpoint: str | Path | None = None,
    restart: bool = False,
) -> dict[str, Any]:
    """Benchmark ``systems`` on ``conversations`` and return the results dict.

    Args:
        dataset: one of :data:`DATASETS` (decides categories and levels).
        conversations: from :func:`load_locomo` / :func:`load_longmemeval`.
        systems: system names (see :data:`SYSTEM_NAMES`).
        ks: cut-offs to score; retrieval runs once at ``max(ks)``.
        memory_factory: no-argument callable returning a fresh memory; called
            once per conversation. Default: ``RippleMem`` with the preset
            (:class:`FreshMemories`, whose namespaces the runner deletes when done).
        progress: show a tqdm bar over the turns (it moves while a memory is built).
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
            scored questions (unscored). Each system's first query on a memory
            (this one, else the first question) pays loading the namespace; it
            is timed apart (``first_query_ms_*``) and left out of ``query_ms_*``.
        checkpoint: a JSONL file receiving each conversation's records as it
            finishes (:class:`~.checkpoint.Checkpoint`); a rerun of the same run
            skips the conversations it holds.
        restart: start the checkpoint over instead of resuming it.

    Raises:
        ValueError: on an unknown dataset, an empty system list, bad ks, or a
            checkpoint of another run (naming what differs).

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
    judge = judge_model if judge_model is not None else answer_model
    to_answer = set(answer_systems if answer_systems is not None else systems)
    unknown = to_answer - set(systems)
    if unknown:
        raise ValueError(f"answer_systems {sorted(unknown)} are not among systems {list(systems)}")
    a_k = answer_k or kmax
    if not 1 <= a_k <= kmax:
        raise ValueError(f"answer_k must be between 1 and max(ks)={kmax}, got {answer_k}")
    answer = answering.answer_settings(answer_model, judge, sorted(to_answer), a_k) if answer_model else None
    scoring = _Scoring(ks, limit, warmup, answer_model, judge, to_answer, a_k)

    # The first memory's write settings and systems go into the results and the run's fingerprint.
    memory: Any = factory()
    built = {name: system_factory(name, memory, base_config) for name in systems}
    config = {"write": results.dump_config(getattr(memory, "write_config", None)),
              "recall": results.dump_config(base_config),
              "systems": {name: describe_system(system) for name, system in built.items()}}
    settings = {"question_limit": limit, "warmup_query": warmup, "answer": answer, "config": config}
    saved = Checkpoint(checkpoint) if checkpoint is not None else None
    finished = saved.resume(_fingerprint(dataset, conversations, systems, ks, settings, memory, dataset_path),
                            restart=restart) if saved is not None else {}
    todo = [conv for conv in conversations if conv.id not in finished]
    bar = RunProgress([(conv.id, len(conv.conversation.turns())) for conv in todo], enabled=progress)
    entries = dict(finished)
    # What the run holds now (the dataset, the vector cache's index) lives to its end; frozen, the
    # collector's full passes stop walking it. Unfrozen, a LongMemEval run spent ~125 ms a pass
    # on it, inside whichever recall the pass landed in: p95 latency 190 ms for a 17 ms median.
    gc.freeze()
    try:
        for bench_conv in todo:
            if memory is None:
                memory = factory()
                built = {name: system_factory(name, memory, base_config) for name in systems}
            entry = entries[bench_conv.id] = _score_conversation(bench_conv, memory, built, scoring, bar, owned=owned)
            memory = None
            clear_text_caches()  # process-wide memo caches would otherwise grow with every haystack
            entry["row"]["rss_mb"] = rss_mb()  # after the memory is closed: what the run keeps
            entry["row"]["heap_in_use_mb"] = heap_in_use_mb(collect=False)  # its live part (RSS adds what glibc keeps)
            if saved is not None:
                saved.append(entry)
            _save_vectors(factory)
            bar.finish()
    finally:
        gc.unfreeze()
        bar.close()
        if memory is not None:
            _close(memory, (), owned=False)  # made for the fingerprint only: it holds nothing
    return _rounded(_assemble(dataset, [entries[conv.id] for conv in conversations], list(systems), ks,
                              settings, dataset_path, keep_questions))


def _fingerprint(dataset: str, conversations: Sequence[BenchConversation], systems: Sequence[str], ks: list[int],
                 settings: dict[str, Any], memory: Any, dataset_path: str | None) -> dict[str, Any]:
    """What must not change between a run and its resumption (:class:`~.checkpoint.Checkpoint`)."""
    sha = results.file_sha256(dataset_path) if dataset_path and Path(dataset_path).is_file() else None
    return {
        "dataset": dataset, "dataset_sha256": sha, "git_commit": results.git_commit(), "systems": list(systems),
        "k": ks, "conversations": [conv.id for conv in conversations], **settings,
        "extractor": type(getattr(memory, "extractor", None)).__name__,
        "embeddings": getattr(getattr(memory, "embeddings", None), "model_id", None),
    }


@dataclass(frozen=True)
class _Scoring:
    """What every conversation is scored with."""

    ks: list[int]
    limit: int | None
    warmup: str | None
    answer_model: Any
    judge: Any
    to_answer: set[str]
    answer_k: int


def _score_conversation(bench_conv: BenchConversation, memory: Any, built: dict[str, System], scoring: _Scoring,
                        bar: RunProgress, *, owned: bool) -> dict[str, Any]:
    """Build one memory, ask every system every question; the conversation's checkpoint entry."""
    namespace, kmax = (bench_conv.id,), max(scoring.ks)
    bar.start(bench_conv.id, "ingest")
    start = time.perf_counter()
    # RippleMem takes the progress hook; a caller's stand-in memory may not.
    takes_hook = "on_embedded" in inspect.signature(memory.add_conversation).parameters
    hook = {"on_embedded": bar.on_embedded} if takes_hook else {}
    report = memory.add_conversation(bench_conv.conversation, namespace=namespace, **hook)
    build_seconds = time.perf_counter() - start
    usage = {"llm_calls": 0, "tokens": 0}
    _add_build_usage(usage, report)
    questions = bench_conv.questions[: scoring.limit] if scoring.limit else bench_conv.questions
    records: dict[str, list[dict[str, Any]]] = {name: [] for name in built}
    latencies: dict[str, list[float]] = {name: [] for name in built}
    first_query: dict[str, float] = {}
    if scoring.warmup:
        for name, system in built.items():
            first_query[name] = _timed(system.retrieve, scoring.warmup, namespace, kmax)[1]
    bar.phase(f"{len(questions)} questions")
    for position, question in enumerate(questions):
        # Systems are interleaved per question so a busy machine affects all of them alike,
        # in an order rotated per question so warm caches do too: in one fixed order hybrid
        # RRF always ran right after BM25 and dense, which had just warmed its every cache.
        for name, system in rotated(built, position):
            got, ms = _timed(retrieve_question, system, question, namespace, kmax)
            if name in first_query:
                latencies[name].append(ms)
            else:
                first_query[name] = ms  # no warm-up: the first question pays the loading
            record = question_record(question, got, scoring.ks, split=bench_conv.split)
            if scoring.answer_model is not None and name in scoring.to_answer:
                record.update(answering.score_answer(
                    scoring.answer_model, scoring.judge, question=question.question, gold=question.answer,
                    answerable=question.answerable, units=got.units[: scoring.answer_k],
                    question_date=question.question_date))
            records[name].append(record)
    _close(memory, namespace, owned=owned)
    row = {"id": bench_conv.id, "split": bench_conv.split, "n_questions": len(questions),
           "build_seconds": build_seconds, "units": getattr(report, "units", None),
           "turns": len(bench_conv.conversation.turns())}
    return {"id": bench_conv.id, "row": row, "records": records, "latencies": latencies,
            "first_query_ms": first_query, "usage": usage,
            "unresolved": [_unresolved_row(bench_conv, q) for q in questions if q.unresolved]}


def rotated(systems: Mapping[str, T], position: int) -> list[tuple[str, T]]:
    """``systems``' items starting at index ``position`` (mod their number), wrapping around.

    Over ``len(systems)`` consecutive questions each system runs in every place once,
    and after every other system once.

    Example:
        >>> [name for name, _ in rotated({"a": 1, "b": 2, "c": 3}, 4)]
        ['b', 'c', 'a']
    """
    items = list(systems.items())
    start = position % len(items) if items else 0
    return items[start:] + items[:start]


def _timed(retrieve: Callable[..., Retrieved], *args: Any) -> tuple[Retrieved, float]:
    """What ``retrieve(*args)`` returns, and how long it took in milliseconds."""
    start = time.perf_counter()
    got = retrieve(*args)
    return got, (time.perf_counter() - start) * 1000.0


def _assemble(dataset: str, entries: list[dict[str, Any]], systems: list[str], ks: list[int],
              settings: dict[str, Any], dataset_path: str | None, keep_questions: bool) -> dict[str, Any]:
    """The results dict from every conversation's entry, in conversation order."""
    conv_rows = [entry["row"] for entry in entries]
    records = {name: [r for entry in entries for r in entry["records"][name]] for name in systems}
    total_build = sum(row["build_seconds"] for row in conv_rows)
    out: dict[str, Any] = {
        "dataset": dataset,
        "unit": "turn",
        "k": ks,
        "systems": {
            name: results.system_summary(
                dataset, records[name], [ms for entry in entries for ms in entry["latencies"][name]], ks=ks,
                build_seconds=total_build,
                first_query_ms=[entry["first_query_ms"][name] for entry in entries if name in entry["first_query_ms"]])
            for name in systems
        },
    }
    first = records[systems[0]]
    unresolved = [row for entry in entries for row in entry["unresolved"]]
    out.update(results.run_metadata(dataset_path))
    out.update({
        "levels": ["turn", "session"] if dataset == "longmemeval" else ["turn"],
        "n_questions": sum(row["n_questions"] for row in conv_rows),
        "n_questions_evaluated": sum(r["n_evaluated"] for r in first),
        "n_conversations": len(conv_rows),
        "question_limit": settings["question_limit"],
        "build": {
            "seconds_total": total_build,
            "seconds_per_conversation": total_build / len(conv_rows) if conv_rows else None,
            "llm_calls": sum(entry["usage"]["llm_calls"] for entry in entries),
            "tokens": sum(entry["usage"]["tokens"] for entry in entries),
        },
        "config": settings["config"],
        "context_token_rule": "ceil(whitespace tokens * 1.3) per restatement, summed over top-k",
        "latency_rule": results.LATENCY_RULE,
        "warmup_query": settings["warmup_query"],
        "unresolved_evidence": unresolved,
        "n_unresolved_evidence": sum(len(row["unresolved"]) for row in unresolved),
        "no_evidence_questions": [r["_id"] for r in first if not r["n_evaluated"]],
        "conversations": conv_rows,
        "splits": _split_definition(dataset, conv_rows),
        "answer": settings["answer"],
    })
    if keep_questions:
        out["questions"] = records
    return out


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


def _save_vectors(factory: Any) -> None:
    """Save the vectors embedded for the last conversation (a :class:`CachedEmbeddings`' ``save``)."""
    save = getattr(getattr(factory, "embeddings", None), "save", None)
    if callable(save):
        save()
