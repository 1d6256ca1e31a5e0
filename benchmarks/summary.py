"""One table of every suite: ``python -m benchmarks summary results/*.json`` (``make bench-all``).

Each suite's own results file (LoCoMo, LongMemEval, the linked suites, sets, facts,
small memories, multilingual, updates) keeps its per-category tables; this module reads them
all and writes one summary: suite x split x system, recall_all@k at the turn level
(and the session level where the data has sessions), and each system's p50 query
latency as a ratio to hybrid RRF's in the same run. Nothing is typed by hand: the
figures are the results files' own.

It also lists where the default loses: every suite, split and category in which
``ripplemem``'s recall_all@10 is below plain dense or hybrid RRF top-10 by more than
one question (issue 35's rule: recollection adds to what plain top-k finds), or, where
the data has sessions, its session recall_all@5 below hybrid RRF's or the
session-document baseline's (``session_dense``) by more than one question.

Example:
    >>> run = {"dataset": "toy", "k": [10], "levels": ["turn"], "systems": {
    ...     "ripplemem": {"by_category": {"overall": {"n_evaluated": 4, "recall_all@10": 0.5}},
    ...                   "splits": {}, "query_ms_p50": 3.0},
    ...     "dense": {"by_category": {"overall": {"n_evaluated": 4, "recall_all@10": 1.0}},
    ...               "splits": {}, "query_ms_p50": 1.0}}}
    >>> table = summarise({"toy": run})
    >>> table["rows"][0]["recall_all@10"], table["losses"][0]["questions"]
    (0.5, 2.0)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["LOSS_RULES", "load_summary_inputs", "summarise", "summary_markdown"]

#: What the default must not lose by more than one question: each metric, and the baselines it is compared with.
LOSS_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("recall_all@10", ("dense", "hybrid_rrf")), ("session_recall_all@5", ("hybrid_rrf", "session_dense")))
_LATENCY_REFERENCE = "hybrid_rrf"
# A suite file's whole question set, beside its tuning / held-out splits. LongMemEval's committed file
# is its development split (all of it is tuned on), so its "all" is a tuning figure.
_ALL = "all"


def load_summary_inputs(paths: Sequence[str | Path]) -> dict[str, dict[str, Any]]:
    """Each results file by its suite name (the file's stem: ``linked_dev`` for ``results/linked_dev.json``).

    Raises:
        ValueError: if a file cannot be read or is not a results file (not JSON, no ``systems``), or two
            files share a stem.

    """
    suites: dict[str, dict[str, Any]] = {}
    for path in map(Path, paths):
        try:
            results = json.loads(path.read_text(encoding="utf-8"))
        except OSError as err:
            raise ValueError(f"{path}: cannot read it: {err.strerror or err}") from err
        if not isinstance(results, dict) or not isinstance(results.get("systems"), dict):
            raise ValueError(f"{path}: not a benchmark results file (it has no 'systems')")
        if path.stem in suites:
            raise ValueError(f"{path}: a second results file named {path.stem!r}; give each suite once")
        suites[path.stem] = results
    return suites


def summarise(suites: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The summary of ``{suite name: results}``: ``rows`` (suite, split, system, metrics) and ``losses``."""
    rows: list[dict[str, Any]] = []
    losses: list[dict[str, Any]] = []
    for suite, results in suites.items():
        metrics = _metrics(results)
        systems: Mapping[str, Any] = results["systems"]
        reference = systems.get(_LATENCY_REFERENCE, {}).get("query_ms_p50")
        for split, groups_of in _splits(systems).items():
            for name, system in systems.items():
                groups = groups_of(system)
                overall = groups.get(_overall(groups)) or {}
                row = {"suite": suite, "split": split, "system": name, "n": overall.get("n_evaluated")}
                row.update({metric: overall.get(metric) for metric in metrics})
                row["p50_vs_hybrid_rrf"] = _ratio(system.get("query_ms_p50"), reference)
                rows.append(row)
            losses.extend(_losses(suite, split, systems, groups_of))
    return {"rows": rows, "losses": losses, "loss_rule": "ripplemem below a baseline by more than one question, "
            "in any suite, split or category: " + "; ".join(
                f"{metric} against {' or '.join(baselines)}" for metric, baselines in LOSS_RULES),
            "sources": {suite: _source(results) for suite, results in suites.items()}}


def summary_markdown(summary: Mapping[str, Any]) -> str:
    """The summary as markdown: one table of every row, then the losses (or a line saying there are none)."""
    rows = summary["rows"]
    metrics = sorted({key for row in rows for key in row if "@" in key and row[key] is not None},
                     key=lambda m: (m.startswith("session_"), int(m.rpartition("@")[2])))
    head = ["suite", "split", "system", "n", *metrics, "p50 / hybrid RRF"]
    lines = ["<!-- generated by `python -m benchmarks summary`; do not edit by hand -->", "",
             "# Every suite in one table", "",
             "Generated by `python -m benchmarks summary` (`make bench-all`) from the results files of: " +
             ", ".join(f"`{suite}`" for suite in summary["sources"]) + ".",
             "recall_all@k: share of questions with all their evidence in the top k (`session_`: evidence sessions); "
             "latency: p50 query time as a ratio to hybrid RRF's in the same run.", _runtimes(summary["sources"]),
             _made(summary["sources"]), "",
             _table(head, [[str(row["suite"]), str(row["split"]), str(row["system"]), str(row["n"] or "-"),
                            *(_pct(row.get(m)) for m in metrics), _times(row["p50_vs_hybrid_rrf"])] for row in rows])]
    lines += ["", f"## Where ripplemem loses ({summary['loss_rule']})", ""]
    if summary["losses"]:
        lines.append(_table(["suite", "split", "category", "metric", "baseline", "ripplemem", "baseline's",
                             "questions"],
                            [[str(loss["suite"]), str(loss["split"]), str(loss["category"]), str(loss["metric"]),
                              str(loss["baseline"]), _pct(loss["ripplemem"]), _pct(loss["baseline_value"]),
                              f"{loss['questions']:.0f}"] for loss in summary["losses"]]))
    else:
        lines.append("Nowhere.")
    return "\n".join(lines) + "\n"


def _runtimes(sources: Mapping[str, Any]) -> str:
    """The runtime the files were made under; a mix (vectors of other versions) is named, file by file."""
    made_under = {suite: ", ".join(f"{name} {v}" for name, v in (source.get("runtime_versions") or {}).items())
                  or "not recorded" for suite, source in sources.items()}
    if len(set(made_under.values())) == 1:
        return f"Runtime of every file: {next(iter(made_under.values()), 'none')}."
    return "The files were made under different runtimes, so their figures may not compare: " + "; ".join(
        f"`{suite}`: {runtime}" for suite, runtime in made_under.items()) + "."


def _made(sources: Mapping[str, Any]) -> str:
    """When and from which commit each file was made: files of other runs (or machines) may not compare.

    Example:
        >>> _made({"a": {"git_commit": "0123456789ab", "date": "2026-12-06T10:00:00+00:00"}, "b": {}})
        'Made by: `a` 0123456789 on 2026-12-06; `b` not recorded.'
    """
    def made(source: Mapping[str, Any]) -> str:
        commit, date = source.get("git_commit"), source.get("date")
        return f"{str(commit)[:10]} on {str(date)[:10]}" if commit and date else "not recorded"
    return "Made by: " + "; ".join(f"`{suite}` {made(source)}" for suite, source in sources.items()) + "."


def _metrics(results: Mapping[str, Any]) -> list[str]:
    levels = results.get("levels") or ["turn"]
    prefixes = [""] + (["session_"] if "session" in levels else [])
    return [f"{prefix}recall_all@{k}" for prefix in prefixes for k in results.get("k", [5, 10, 30])]


def _splits(systems: Mapping[str, Any]) -> dict[str, Any]:
    """Each split's way to a system's groups: the whole file, then its tuning and held-out splits if it has them."""
    names = sorted({split for system in systems.values() for split in system.get("splits") or {}},
                   key=lambda split: (split != "tune", split))
    out: dict[str, Any] = {_ALL: lambda system: system.get("by_category") or {}}
    for split in names:
        out[split] = lambda system, split=split: ((system.get("splits") or {}).get(split) or {}).get("by_category", {})
    return out


def _overall(groups: Mapping[str, Any]) -> str:
    """The pooled group: ``overall`` (LoCoMo: ``overall_1_4``, the answerable categories)."""
    return next((key for key in ("overall_1_4", "overall") if key in groups), "")


def _losses(suite: str, split: str, systems: Mapping[str, Any], groups_of: Any) -> list[dict[str, Any]]:
    if "ripplemem" not in systems:
        return []
    ours = groups_of(systems["ripplemem"])
    out = []
    for metric, baselines in LOSS_RULES:
        # Session figures count the questions scored at the session level (LongMemEval's abstentions too).
        counted = "n_session_evaluated" if metric.startswith("session_") else "n_evaluated"
        for baseline in (b for b in baselines if b in systems):
            for category, group in groups_of(systems[baseline]).items():
                mine = ours.get(category) or {}
                if group.get(metric) is None or mine.get(metric) is None:
                    continue
                # Shares are rounded to 6 places in the files: a question is a whole count again after rounding.
                questions = round((group[metric] - mine[metric]) * (group.get(counted) or 0), 2)
                if questions > 1:
                    out.append({"suite": suite, "split": split, "category": category, "metric": metric,
                                "baseline": baseline, "ripplemem": mine[metric], "baseline_value": group[metric],
                                "questions": questions})
    return out


def _source(results: Mapping[str, Any]) -> dict[str, Any]:
    file = results.get("dataset_file") or {}
    return {"dataset": results.get("dataset"), "file": file.get("path") if isinstance(file, dict) else None,
            "git_commit": results.get("git_commit"), "date": results.get("date"),
            "runtime_versions": results.get("runtime_versions")}


def _ratio(value: Any, reference: Any) -> float | None:
    return round(value / reference, 3) if value and reference else None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _times(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _table(head: list[str], rows: list[list[str]]) -> str:
    return "\n".join(["| " + " | ".join(head) + " |", "|" + "---|" * len(head),
                      *("| " + " | ".join(row) + " |" for row in rows)])
