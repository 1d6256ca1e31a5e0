"""The table of which rules beyond the paper's method earn their place (issue 51.4), from one run per suite.

Reads results files of ``python -m benchmarks`` runs that hold the default (``ripplemem``) and
the rule ablations (``abl_<rule>``, ``benchmarks/systems.py``: ``RULE_ABLATIONS`` and
``RULE_CONSTANTS``) and prints, per rule, how many questions its removal gains (+) or
costs (-) at recall_all@10 on each suite and split, with the largest move of any category.
Question counts, not rates: ``round(recall_all@10 x n_evaluated)``. A rule whose removal
moves no suite, split or category by more than one question is a candidate to go.

    python scripts/rule_ablation.py results/ablation/*.json [--k 10] [--base ripplemem]
    python scripts/rule_ablation.py results/ablation/*.json --doc docs/benchmarks.md --removed abl_a,abl_b

With ``--doc``, the table replaces what stands between the markers
``<!-- rule-ablation:start -->`` and ``<!-- rule-ablation:end -->`` in that file; ``--removed``
names the variants whose rule has since left the code (their row says "removed"). With
``--slim``, each results file is first rewritten with its per-question records cut to what
tells which questions a removal gained or lost (id, split, category, recall_all@k): 27
systems' full records make a file of megabytes.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

#: Labels of the suites (the results' ``dataset``), in column order.
SUITES = {"linked": "linked", "linked_dev": "linked dev", "sets": "sets", "facts": "facts", "small": "small",
          "multilingual": "multilingual", "updates": "updates", "locomo": "LoCoMo", "longmemeval": "LongMemEval"}
#: A removal that moves no column or category by more than this many questions makes its rule a candidate to go.
TOLERANCE = 1
START, END = "<!-- rule-ablation:start -->", "<!-- rule-ablation:end -->"


def _label(results: dict[str, Any]) -> str:
    dataset = results["dataset"]
    if dataset == "linked" and "linked_dev" in str(results.get("suite", {}).get("path", "")):
        dataset = "linked_dev"
    return SUITES.get(dataset, dataset)


def _count(row: dict[str, Any], metric: str, k: int) -> int:
    evaluated = row.get("n_session_evaluated" if metric.startswith("session") else "n_evaluated", row.get("n", 0))
    return round(row[f"{metric}@{k}"] * evaluated)


def columns(results: dict[str, Any], k: int) -> Iterator[tuple[str, str, dict[str, int], int]]:
    """``(column, category, {system: questions found}, questions)`` of one results file, each split's overall first.

    A column is a suite and split (and LongMemEval's session level apart); category ``""`` is the overall row.
    """
    label, systems = _label(results), results["systems"]
    metrics = ["recall_all"] + (["session_recall_all"] if "session" in results.get("levels", ()) else [])
    any_system = next(iter(systems.values()))
    splits = sorted(any_system.get("splits") or {}, key=lambda s: (s != "tune", s)) or [None]
    for metric in metrics:
        level = " session" if metric.startswith("session") else ""
        for split in splits:
            name = f"{label}{level}" + (f" {split}" if split and len(splits) > 1 else "")

            def rows(system: dict[str, Any], split: str | None = split) -> dict[str, Any]:
                return system["splits"][split]["by_category"] if split else system["by_category"]

            categories = rows(any_system)
            overall = "overall_1_4" if "overall_1_4" in categories else "overall"
            # LoCoMo's overall leaves its adversarial category out (categories 1-4): so does this table.
            left_out = {"adversarial"} if overall == "overall_1_4" else set()
            for category in [overall, *sorted(c for c in categories if not c.startswith("overall") and
                                             c not in left_out)]:
                found = {n: _count(rows(s)[category], metric, k) for n, s in systems.items()
                         if rows(s).get(category, {}).get(f"{metric}@{k}") is not None}
                row = categories[category]
                asked = int(row.get("n_session_evaluated" if level else "n_evaluated", row.get("n", 0)))
                yield name, "" if category == overall else category, found, asked


def table(paths: Sequence[str | Path], k: int = 10, base: str = "ripplemem", removed: Collection[str] = ()) -> str:
    """The markdown table: one row per removed rule, one column per suite and split (questions at @k).

    ``removed``: variants whose rule the code no longer has (the table says "removed", not "candidate").
    """
    cells: dict[str, dict[str, int]] = {}
    worst: dict[str, list[tuple[int, str]]] = {}
    heads: list[str] = []
    totals: dict[str, tuple[int, int]] = {}
    order = list(SUITES.values())
    loaded = [json.loads(Path(path).read_text(encoding="utf-8")) for path in paths]
    for results in sorted(loaded, key=lambda r: order.index(_label(r)) if _label(r) in order else len(order)):
        for column, category, found, asked in columns(results, k):
            if base not in found:
                continue
            for system, n in found.items():
                if not system.startswith("abl_"):
                    continue
                move = n - found[base]
                if category:
                    worst.setdefault(system, []).append((move, f"{column} {category}"))
                else:
                    cells.setdefault(system, {})[column] = move
            if not category:
                heads.append(column)
                totals[column] = (found[base], asked)
    lines = ["| rule removed | " + " | ".join(f"{h} ({found}/{n})" for h, (found, n) in
                                            ((h, totals[h]) for h in heads)) + " | largest move in a category | |",
             "|---|" + "---:|" * len(heads) + "---|---|"]
    for system in sorted(cells, key=lambda s: (min(cells[s].values()), s)):
        moves = cells[system]
        low = min(worst.get(system, [(0, "")]))
        high = max(worst.get(system, [(0, "")]))
        big = low if -low[0] >= high[0] else high
        moved = max([*(abs(m) for m in moves.values()), abs(big[0])]) > TOLERANCE
        where = f"{big[0]:+d} {big[1]}" if big[0] else "0"
        lines.append(f"| `{system}` | " + " | ".join(f"{moves[h]:+d}" if h in moves else "" for h in heads)
                     + f" | {where} | {_verdict(system, moved, removed)} |")
    return "\n".join(lines)


def _verdict(system: str, moved: bool, removed: Collection[str]) -> str:
    if system in removed:
        return "removed" if not moved else "removed, but moves more than one"
    return "moves more than one" if moved else "candidate to remove"


#: What ``--slim`` keeps of a per-question record.
KEPT_FIELDS = ("_id", "_split", "_category_name", "n_evaluated")


def slim(path: Path, ks: Sequence[int] = (5, 10, 30)) -> None:
    """Rewrite a results file with its per-question records cut to :data:`KEPT_FIELDS` and recall_all@k."""
    results = json.loads(path.read_text(encoding="utf-8"))
    keep = {*KEPT_FIELDS, *(f"recall_all@{k}" for k in ks)}
    results["questions"] = {system: [{key: value for key, value in record.items() if key in keep}
                                     for record in records]
                            for system, records in results.get("questions", {}).items()}
    path.write_text(json.dumps(results, separators=(",", ":")) + "\n", encoding="utf-8")


def write_doc(doc: Path, text: str) -> None:
    """Put ``text`` between the markers of ``doc`` (they must be there)."""
    page = doc.read_text(encoding="utf-8")
    if START not in page or END not in page:
        raise ValueError(f"{doc} has no {START} ... {END} block to fill")
    doc.write_text(re.sub(re.escape(START) + ".*?" + re.escape(END), lambda _: f"{START}\n{text}\n{END}", page,
                          flags=re.S), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--base", default="ripplemem")
    parser.add_argument("--doc", type=Path, help="write the table into this markdown file, between the markers")
    parser.add_argument("--slim", action="store_true", help="first cut each file's per-question records")
    parser.add_argument("--removed", default="", help="comma-separated variants whose rule is gone from the code")
    args = parser.parse_args(argv)
    if args.slim:
        for path in args.results:
            slim(Path(path))
    text = table(args.results, args.k, args.base, [name for name in args.removed.split(",") if name])
    if args.doc:
        write_doc(args.doc, text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
