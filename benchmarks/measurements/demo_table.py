"""The demo's table: plain dense top-k against recollection on the shipped sample conversation.

Runs ``ripplemem demo``'s comparison (:func:`~langchain_ripplemem.cli.demo.run_demo`, offline,
the recommended settings) and writes its per-question evidence counts as a results file. With
``--readme``, the table between the README's ``demo-table`` markers is rewritten from it, so the
README shows the committed file's figures and nothing typed by hand.

    python -m benchmarks.measurements.demo_table --out results/demo.json --readme README.md

``make bench-demo`` runs exactly this.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from benchmarks.measurements.output import emit
from benchmarks.results import run_metadata

__all__ = ["TABLE_END", "TABLE_START", "demo_table", "measure", "replace_table"]

TABLE_START = "<!-- demo-table: made from results/demo.json by `make bench-demo`; edit neither by hand -->"
TABLE_END = "<!-- /demo-table -->"


def measure(k: int) -> dict[str, Any]:
    """Per question of the demo, its evidence turns and how many of them each way finds in its top ``k``."""
    from langchain_ripplemem.cli.demo import run_demo

    summary = run_demo(k=k, out=lambda line: None)
    return {"k": k, **summary}


def demo_table(results: dict[str, Any]) -> str:
    """The markdown table of a demo results file: one row a question, then the totals.

    Example:
        >>> print(demo_table({"k": 10, "total": 3, "plain": 1, "recollection": 3, "questions": [
        ...     {"question": "Q?", "evidence": 3, "plain": 1, "recollection": 3}]}))
        | question | evidence turns | plain top-10 finds | recollection finds |
        |---|---|---|---|
        | Q? | 3 | 1 | 3 |
        | **all 1 questions** | **3** | **1** | **3** |

    """
    k = results["k"]
    rows = [f"| question | evidence turns | plain top-{k} finds | recollection finds |", "|---|---|---|---|"]
    rows += [f"| {q['question']} | {q['evidence']} | {q['plain']} | {q['recollection']} |"
             for q in results["questions"]]
    rows.append(f"| **all {len(results['questions'])} questions** | **{results['total']}** | "
                f"**{results['plain']}** | **{results['recollection']}** |")
    return "\n".join(rows)


def replace_table(text: str, table: str, start: str = TABLE_START, end: str = TABLE_END) -> str:
    """``text`` with the table between its markers (the demo table's by default) replaced by ``table``.

    Raises:
        ValueError: if ``text`` does not hold both markers, in order.

    """
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"text: no table between {start!r} and {end!r}")
    return pattern.sub(lambda _: f"{start}\n{table}\n{end}", text, count=1)


def main(argv: list[str] | None = None) -> int:
    """Run the demo's comparison, print (and with ``--out`` write) its results, and rewrite ``--readme``'s table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--out", default=None, help="results JSON (default: stdout only)")
    parser.add_argument("-k", type=int, default=10, help="memories returned per way (default: %(default)s)")
    parser.add_argument("--readme", default=None, help="a markdown file whose demo-table block is rewritten")
    args = parser.parse_args(argv)
    readme = Path(args.readme) if args.readme else None
    if readme is not None:
        replace_table(readme.read_text("utf-8"), "")  # a README without the markers fails before the run
    result = {"measurement": "demo", **run_metadata(None), **measure(args.k)}
    emit(result, args.out)
    if readme is not None:
        readme.write_text(replace_table(readme.read_text("utf-8"), demo_table(result)), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
