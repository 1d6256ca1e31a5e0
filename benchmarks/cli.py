"""``python -m benchmarks ...``: run LoCoMo / LongMemEval benchmarks and regenerate tables.

Usage::

    python -m benchmarks locomo PATH [--systems a,b] [--k 5,10,30] [--out results.json]
                               [--plot results.png] [--limit N] [--questions N]
    python -m benchmarks longmemeval PATH ...
    python -m benchmarks linked [--haystack locomo10.json] [--split tune|heldout|all] [--suite FILE]
                           [--out results/linked.json] [--md docs/linked_tables.md]
    python -m benchmarks sets|facts [--haystack locomo10.json] [--split ...] [--suite FILE] [--out ...] [--md ...]
    python -m benchmarks multilingual [--split ...] [--suite FILE] [--out results/multilingual.json] [--md ...]
    python -m benchmarks small [--split ...] [--suite FILE] [--out results/small_memory.json] [--md ...]
    python -m benchmarks updates [--split ...] [--suite FILE] [--out results/updates.json] [--md ...]
    python -m benchmarks report RESULTS.json... --md docs/benchmarks_tables.md [--plot out.png]
    python -m benchmarks summary RESULTS.json... [--out results/summary.json] [--md docs/summary_tables.md]

Document vectors are cached per encoder model in ``--embedding-cache DIR``
(default ``$RIPPLEMEM_CACHE_DIR`` or ``~/.cache/langchain-ripplemem``, folder
``embeddings``; ``--no-embedding-cache`` to embed afresh), saved after every
conversation. With ``--out``, each finished conversation is also appended to a
checkpoint beside it (``x.checkpoint.jsonl``, or ``--checkpoint FILE``): an
interrupted run, rerun with the same arguments, skips what it holds
(``--restart`` starts over); the checkpoint goes once the results are written.

``--limit`` keeps the first N conversations (LongMemEval: records),
``--questions`` the first N questions of each. Without ``--out`` the results
JSON goes to stdout. ``--answer-model provider:model`` adds answer F1,
BLEU-1 and an LLM judge (needs the provider's package and credentials).

``locomo --units observations`` builds the memories from LoCoMo's recorded
observations instead of raw turns (:mod:`benchmarks.observations`).
``linked`` injects the linked-evidence suite into LoCoMo conversations
(``--haystack``), or into the shipped sample conversation without one; there
``--limit`` keeps the first N cases. ``sets`` and ``facts`` do the same with
the set-question and stand-alone fact suites
(:mod:`benchmarks.set_fact_cases`), for every system by default.
``multilingual`` runs the multilingual suite (:mod:`benchmarks.multilingual`):
each case its own short conversation, no haystack.

``small`` runs the small-memory suite (:mod:`benchmarks.small_memory`):
each case is a memory of its own, with no haystack. ``updates`` runs the update suite
(:mod:`benchmarks.updates`) the same way: knowledge updates and statements
that must stay current.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.checkpoint import Checkpoint, checkpoint_path
from benchmarks.haystack import locomo_haystacks, sample_haystacks
from benchmarks.linked import run_linked
from benchmarks.linked_cases import load_linked_cases
from benchmarks.loaders import load_locomo, load_longmemeval
from benchmarks.multilingual import load_multilingual_cases, run_multilingual
from benchmarks.observations import observation_memories
from benchmarks.set_fact_cases import DEFAULT_SUITES, answered_case_row, load_answered_cases
from benchmarks.small_memory import load_small_memory_cases, run_small_memory
from benchmarks.suite_runner import run_suite
from benchmarks.summary import load_summary_inputs, summarise, summary_markdown
from benchmarks.systems import LINKED_SYSTEMS, SYSTEM_FACTORIES, SYSTEM_NAMES
from benchmarks.updates import load_update_cases, run_updates, updates_markdown

# The small-memory suite's systems: the full system, the ablation without graph expansion, and the baselines.
SMALL_SYSTEMS = ("ripplemem", "no_expansion", "dense", "hybrid_rrf")
# The update suite's: the full system and the three plain top-k baselines.
UPDATE_SYSTEMS = ("ripplemem", "dense", "bm25", "hybrid_rrf")

# The injected suites: what each is, its shipped file, its default systems.
_SUITES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "linked": ("linked-evidence", "linked_cases.json", LINKED_SYSTEMS),
    "sets": ("set-question", "set_cases.json", SYSTEM_NAMES),
    "facts": ("stand-alone fact", "fact_cases.json", SYSTEM_NAMES),
    "small": ("small-memory", "small_memory_cases.json", SMALL_SYSTEMS),
    "updates": ("update", "update_cases.json", UPDATE_SYSTEMS),
}

_MULTILINGUAL_SYSTEMS = ("ripplemem", "dense", "bm25", "hybrid_rrf")


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m benchmarks`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description="Benchmark RippleMem against ablations and baselines."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("locomo", "longmemeval"):
        run = sub.add_parser(name, help=f"run the {name} benchmark")
        run.add_argument("path", help=f"{name} JSON file")
        run.add_argument("--systems", default=",".join(SYSTEM_NAMES),
                         help=f"comma-separated systems (default: {','.join(SYSTEM_NAMES)})")
        run.add_argument("--k", default="5,10,30", help="comma-separated cut-offs (default 5,10,30)")
        run.add_argument("--out", help="write the results JSON here (default: stdout)")
        run.add_argument("--plot", help="also write a PNG bar chart here (needs matplotlib)")
        run.add_argument("--md", help="also write the markdown tables here")
        run.add_argument("--limit", type=int, help="only the first N conversations")
        run.add_argument("--questions", type=int, help="only the first N questions per conversation")
        run.add_argument("--no-progress", action="store_true", help="hide the progress bar")
        run.add_argument("--answer-model", help="'provider:model' chat model to answer with")
        run.add_argument("--judge-model", help="judge chat model (default: the answer model)")
        run.add_argument("--answer-systems", help="comma-separated systems to answer for")
        run.add_argument("--answer-k", type=int, help="memories shown to the answer model")
        _cache_arguments(run)
        run.add_argument("--checkpoint", help="JSONL file of finished conversations, for resuming "
                                              "(default: beside --out, e.g. results/x.checkpoint.jsonl)")
        run.add_argument("--restart", action="store_true",
                         help="start over even if a checkpoint of an interrupted run exists")
        if name == "longmemeval":
            run.add_argument("--per-type", type=int, metavar="N",
                             help="only the first N answerable records of each question type (a sample of every type)")
        if name == "locomo":
            run.add_argument("--units", choices=("turns", "observations"), default="turns",
                             help="memory units: one per turn (default) or LoCoMo's observations "
                                  "plus turns no observation covers")
    for name, (what, file, systems) in _SUITES.items():
        where = "each case a memory of its own" if name in ("small", "updates") else "injected into long dialogue"
        suite = sub.add_parser(name, help=f"run the {what} suite, {where}")
        suite.add_argument("--haystack", help="LoCoMo JSON file whose conversations are the haystacks "
                                              "(default: the shipped sample conversation, repeated)")
        _suite_arguments(suite, file, systems, "5,10,30")
    multi = sub.add_parser("multilingual", help="run the multilingual suite: each case its own short conversation")
    _suite_arguments(multi, "multilingual_cases.json", _MULTILINGUAL_SYSTEMS, "5,10")
    report = sub.add_parser("report", help="regenerate markdown tables from results files")
    report.add_argument("results", nargs="+", help="results JSON files")
    report.add_argument("--md", help="write the tables here (default: stdout)")
    report.add_argument("--plot", help="bar chart of the first results file (PNG)")
    summary = sub.add_parser("summary", help="one table of every suite's results files (suite x split x system)")
    summary.add_argument("results", nargs="+", help="results JSON files, one per suite")
    summary.add_argument("--out", help="write the summary JSON here (default: stdout)")
    summary.add_argument("--md", help="also write the markdown table here")
    return parser


def _cache_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--embedding-cache", metavar="DIR",
                        help="directory keeping document vectors between runs, per model "
                             "(default: $RIPPLEMEM_CACHE_DIR or ~/.cache/langchain-ripplemem, folder embeddings)")
    parser.add_argument("--no-embedding-cache", action="store_true", help="embed every document afresh")


def _embedding_cache(args: argparse.Namespace, base: Any = None) -> Any:
    """The run's :class:`CachedEmbeddings` around ``base`` (``None`` with ``--no-embedding-cache``)."""
    from benchmarks.cached_embeddings import CachedEmbeddings, default_cache_dir

    if args.no_embedding_cache:
        if args.embedding_cache:
            raise ValueError("--embedding-cache and --no-embedding-cache contradict each other: give one")
        return None
    return CachedEmbeddings(base, directory=args.embedding_cache or default_cache_dir())


def bench_main(argv: Sequence[str] | None = None) -> int:
    """Run ``python -m benchmarks`` with ``argv``; return an exit code."""
    parser = build_parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        if args.command == "report":
            return _report(args)
        if args.command == "summary":
            return _summary(args)
        if args.command in _SUITES:
            return _suite(args)
        if args.command == "multilingual":
            return _multilingual(args)
        return _run(args)
    except (ValueError, ImportError) as exc:
        print(f"benchmarks: error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    from benchmarks.report import plot
    from benchmarks.runner import WARMUP_QUERY, FreshMemories, run_benchmark

    systems = _systems(args.systems)
    ks = _ints(args.k, "--k")
    conversations = load_locomo(args.path, limit=args.limit) if args.command == "locomo" else \
        load_longmemeval(args.path, limit=args.limit, per_type=args.per_type)
    memory_factory: FreshMemories | None = None
    if getattr(args, "units", "turns") == "observations":
        memory_factory = observation_memories(args.path)
    cache = _embedding_cache(args, getattr(memory_factory, "embeddings", None))  # keep a factory's encoder
    if cache is not None:
        memory_factory = memory_factory or FreshMemories(args.command)
        memory_factory.embeddings = cache
    answer_model = _chat_model(args.answer_model) if args.answer_model else None
    judge_model = _chat_model(args.judge_model) if args.judge_model else None
    checkpoint = args.checkpoint or (checkpoint_path(args.out) if args.out else None)
    results = run_benchmark(
        args.command,
        conversations,
        systems,
        ks,
        progress=not args.no_progress,
        limit=args.questions,
        answer_model=answer_model,
        judge_model=judge_model,
        answer_systems=_csv(args.answer_systems) if args.answer_systems else None,
        answer_k=args.answer_k,
        dataset_path=args.path,
        memory_factory=memory_factory,
        warmup=WARMUP_QUERY,
        checkpoint=checkpoint,
        restart=args.restart,
    )
    if cache is not None:
        cache.save()
        print(f"embedding cache {cache.folder}: {cache.embedded} texts embedded, {cache.reused} reused",
              file=sys.stderr)
    extractor = memory_factory.extractor if memory_factory is not None else None
    if extractor is not None:
        results["memory_units"] = extractor.describe()
        results["memory_units"]["evidence_turns_covered"] = extractor.evidence_coverage(conversations)
    _emit(results, args)
    if checkpoint is not None:  # the results are written: nothing left to resume
        Checkpoint(checkpoint).remove()
    if args.plot:
        print(f"wrote {plot(results, args.plot)}", file=sys.stderr)
    return 0


def _suite(args: argparse.Namespace) -> int:
    systems = _systems(args.systems)
    ks = _ints(args.k, "--k")
    if args.command in ("small", "updates"):
        return _small(args, systems, ks)
    linked = args.command == "linked"
    cases: list[Any] = (load_linked_cases(args.suite, split=args.split) if linked
                        else load_answered_cases(args.command, args.suite, split=args.split))
    cases = _first(cases, args.limit)
    haystacks = locomo_haystacks(args.haystack) if args.haystack else sample_haystacks()
    options = {"progress": not args.no_progress, "embeddings": _embedding_cache(args),
               "haystack_path": args.haystack, "suite_path": args.suite, "split": args.split}
    results = (run_linked(cases, haystacks, systems, ks, **options) if linked else
               run_suite(args.command, cases, haystacks, systems, ks, case_row=answered_case_row,
                         default_suite=DEFAULT_SUITES[args.command], **options))
    _emit(results, args)
    return 0


def _multilingual(args: argparse.Namespace) -> int:
    cases = load_multilingual_cases(args.suite, split=args.split)
    cases = _first(cases, args.limit)
    results = run_multilingual(cases, _systems(args.systems), _ints(args.k, "--k"), progress=not args.no_progress,
                               embeddings=_embedding_cache(args), suite_path=args.suite, split=args.split)
    _emit(results, args)
    return 0


def _small(args: argparse.Namespace, systems: list[str], ks: list[int]) -> int:
    """``python -m benchmarks small|updates``: every case its own memory, no haystack (``--haystack`` is refused)."""
    if args.haystack:
        raise ValueError(f"--haystack: the {_SUITES[args.command][0]} suite has none, each case is a memory of its own")
    options = {"progress": not args.no_progress, "embeddings": _embedding_cache(args), "suite_path": args.suite,
               "split": args.split}
    if args.command == "updates":
        results = run_updates(_first(load_update_cases(args.suite, split=args.split), args.limit), systems, ks,
                              **options)
        _emit(results, args, updates_markdown(results))
        return 0
    cases = _first(load_small_memory_cases(args.suite, split=args.split), args.limit)
    _emit(run_small_memory(cases, systems, ks, **options), args)
    return 0


def _suite_arguments(parser: argparse.ArgumentParser, file: str, systems: Sequence[str], ks: str) -> None:
    """The options every case suite takes: its file, split, systems, cut-offs, outputs and cache."""
    parser.add_argument("--suite", help=f"suite JSON file (default: the shipped {file})")
    parser.add_argument("--split", choices=("tune", "heldout", "all"), default="all")
    parser.add_argument("--systems", default=",".join(systems),
                        help=f"comma-separated systems (default: {','.join(systems)})")
    parser.add_argument("--k", default=ks, help=f"comma-separated cut-offs (default {ks})")
    parser.add_argument("--out", help="write the results JSON here (default: stdout)")
    parser.add_argument("--md", help="also write the markdown tables here")
    parser.add_argument("--limit", type=int, help="only the first N cases")
    _cache_arguments(parser)
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def _first(cases: list[Any], limit: int | None) -> list[Any]:
    """The first ``--limit`` cases (all of them without one)."""
    if limit is None:
        return cases
    if limit < 1:
        raise ValueError(f"--limit must be >= 1, got {limit}")
    return cases[:limit]


def _emit(results: dict[str, Any], args: argparse.Namespace, more: str = "") -> None:
    """Write the results JSON (``--out``, else stdout) and the markdown tables (``--md``), then ``more`` tables."""
    from benchmarks.report import results_markdown

    _write_or_print(args.out, json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    if args.md:
        tables = results_markdown(results, source=Path(args.out or "").name)
        _write_or_print(args.md, tables + ("\n\n" + more if more else "") + "\n")


def _report(args: argparse.Namespace) -> int:
    from benchmarks.report import load_results, plot, write_markdown

    _write_or_print(args.md, write_markdown(args.results))
    if args.plot:
        plot(load_results(args.results[0]), args.plot)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def _summary(args: argparse.Namespace) -> int:
    summary = summarise(load_summary_inputs(args.results))
    _write_or_print(args.out, json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    if args.md:
        _write_or_print(args.md, summary_markdown(summary))
    return 0


def _chat_model(spec: str) -> Any:
    """A chat model at temperature 0 from ``"provider:model"`` (as the package resolves every model string)."""
    from langchain_ripplemem.llm.calls import resolve_chat_model

    return resolve_chat_model(spec, temperature=0)


def _systems(value: str) -> list[str]:
    systems = _csv(value)
    unknown = [s for s in systems if s not in SYSTEM_FACTORIES]  # the defaults, and variants asked by name
    if unknown:
        raise ValueError(f"unknown systems {unknown}; choose from {', '.join(SYSTEM_NAMES)}")
    return systems


def _csv(value: str) -> list[str]:
    items = [item.strip() for item in value.split(",") if item.strip()]
    if not items:
        raise ValueError(f"expected a comma-separated list, got {value!r}")
    return items


def _ints(value: str, flag: str) -> list[int]:
    try:
        return [int(item) for item in _csv(value)]
    except ValueError as exc:
        raise ValueError(f"{flag} expects comma-separated integers, got {value!r}") from exc


def _write_or_print(path: str | None, text: str) -> None:
    """``text`` to the file ``path`` (saying so on stderr), or to stdout without one."""
    if path:
        _write(path, text)
        print(f"wrote {path}", file=sys.stderr)
    else:
        print(text, end="")


def _write(path: str, text: str) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover - manual use
    raise SystemExit(bench_main())
