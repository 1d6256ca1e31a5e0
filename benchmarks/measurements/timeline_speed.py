"""Speed of the ``memory_timeline`` tool's page (``RippleMem.timeline``) at 1k, 10k and 100k memories.

Each namespace is filled as ``ui_paint`` fills its 100k one (:func:`benchmarks.measurements.ui_paint.fill`:
the synthetic dialogue through the write path, its fake encoder, no linking; a session every
one to three days from 2020, so 100k memories span about 27 years). Per size, in one process:

* ``RippleMem.timeline`` (:func:`langchain_ripplemem.recall.browsing.timeline`, what the tool,
  the MCP server and the served graphs call), 20 memories a page: a window of one week and
  of one month from the middle day of the namespace's span, and all time; without a person
  and with the namespace's most frequent one; page 1 and the window's last page. Each the
  median of ``--rounds`` calls, after one call that builds what the index keeps per row
  (``first_call_ms``: its cost, once per index);
* as the baseline of the same run, the UI's page (:func:`langchain_ripplemem.server.ui_timeline.timeline_page`)
  on the same index: its first page, its last page, the same person.

``--before FILE`` takes an earlier run's results (the same command on other code, e.g. main's)
into the results as ``before``, and the table shows both.

    python -m benchmarks.measurements.timeline_speed --out results/timeline_speed.json --doc docs/tools.md
    python -m benchmarks.measurements.timeline_speed --sizes 1000 --rounds 3   # a quick look
    python -m benchmarks.measurements.timeline_speed --table results/timeline_speed.json --doc docs/tools.md

``make bench-timeline`` runs the first (``--stores DIR`` keeps the filled stores for the next run).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from benchmarks.measurements.demo_table import replace_table
from benchmarks.measurements.output import emit
from benchmarks.measurements.ui_paint import NS, fill, open_memory
from benchmarks.results import run_metadata
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.server.ui_timeline import Filters, current_index, overview, timeline_page

__all__ = ["measure_size", "timeline_table"]

PAGE_SIZE = 20
WINDOW_DAYS = {"week": 7, "month": 30, "all time": None}
NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)  # no window is a time phrase: only the page's check reads it
TABLE_START = "<!-- timeline-speed: made from results/timeline_speed.json by `make bench-timeline`; " \
              "edit neither by hand -->"
TABLE_END = "<!-- /timeline-speed -->"


def _median_ms(call: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 2)


def _windows(memory: RippleMem) -> dict[str, tuple[str | None, str | None]]:
    """``since``/``until`` of each window: a week and a month from the middle day of the span, and all time."""
    seen = overview(current_index(memory, NS))
    assert seen.first_day is not None and seen.last_day is not None, "the namespace has no dated memory"
    middle = seen.first_day + (seen.last_day - seen.first_day) / 2
    return {name: (None, None) if days is None else (middle.isoformat(), (middle + timedelta(days - 1)).isoformat())
            for name, days in WINDOW_DAYS.items()}


def _case(memory: RippleMem, window: str, since: str | None, until: str | None, person: str | None,
          rounds: int) -> dict[str, Any]:
    """One window and person: its size, and the median ms of its first and last pages."""
    def page_of(page: int) -> Any:
        return memory.timeline(since, until, person=person, namespace=NS, page=page, page_size=PAGE_SIZE, now=NOW)

    first = page_of(1)
    late = max(first.pages, 1)
    return {"window": window, "since": since, "until": until, "person": person, "total": first.total,
            "pages": first.pages, "page_1_ms": _median_ms(lambda: page_of(1), rounds), "late_page": late,
            "late_page_ms": _median_ms(lambda: page_of(late), rounds)}


def measure_size(store: Path, memories: int, rounds: int) -> dict[str, Any]:
    """Fill ``store`` to ``memories`` (kept) and time the tool's pages and the UI's (see the module docs)."""
    filled = fill(store, memories)
    with open_memory(store) as memory:
        index = current_index(memory, NS)
        person = overview(index).people[0]
        started = time.perf_counter()
        memory.timeline(namespace=NS, page_size=PAGE_SIZE, now=NOW)
        first_call = (time.perf_counter() - started) * 1000
        cases = [_case(memory, window, since, until, who, rounds)
                 for window, (since, until) in _windows(memory).items() for who in (None, person.label)]
        index = current_index(memory, NS)
        late = max(len(index.ids) - PAGE_SIZE, 0)
        ui = {"first_page": _median_ms(lambda: timeline_page(index, Filters(), limit=PAGE_SIZE), rounds),
              "late_page": _median_ms(lambda: timeline_page(index, Filters(), offset=late, limit=PAGE_SIZE), rounds),
              "person": _median_ms(lambda: timeline_page(index, Filters(person=person.value), limit=PAGE_SIZE),
                                   rounds)}
    return {"memories": filled["memories"], "fill": filled, "person": person.label, "person_memories": person.count,
            "first_call_ms": round(first_call, 1), "cases": cases, "ui_timeline_page_ms": ui}


def _ms(value: float) -> str:
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def timeline_table(result: dict[str, Any]) -> str:
    """The markdown table of a results dict: per size, window and person, ms a page (before and now).

    Example:
        >>> case = {"window": "week", "person": None, "total": 70, "pages": 4, "page_1_ms": 1.234,
        ...         "late_page": 4, "late_page_ms": 2.0}
        >>> size = {"memories": 1000, "person": "Sam", "first_call_ms": 9.0, "cases": [case],
        ...         "ui_timeline_page_ms": {"first_page": 0.5, "late_page": 0.6, "person": 0.7}}
        >>> print(timeline_table({"page_size": 20, "sizes": [size]}).splitlines()[2])
        | 1,000 | week | anyone | 70 | 1.2 | 2.0 (page 4) |
    """
    before = {(s["memories"], c["window"], c["person"]): c for s in result.get("before", {}).get("sizes", [])
              for c in s["cases"]}
    then = " | before: page 1 | before: last page" if before else ""
    rows = [f"| memories | window | person | in window | page 1, ms | last page, ms{then} |",
            "|---:|---|---|---:|---:|---:|" + ("---:|---:|" if before else "")]
    for size in result["sizes"]:
        for case in size["cases"]:
            row = (f"| {size['memories']:,} | {case['window']} | {case['person'] or 'anyone'} | {case['total']:,} | "
                   f"{_ms(case['page_1_ms'])} | {_ms(case['late_page_ms'])} (page {case['late_page']:,}) |")
            old = before.get((size["memories"], case["window"], case["person"]))
            rows.append(row + (f" {_ms(old['page_1_ms'])} | {_ms(old['late_page_ms'])} |" if old else
                               " | |" if before else ""))
    ui = [f"{size['memories']:,}: first page {_ms(size['ui_timeline_page_ms']['first_page'])}, last page "
          f"{_ms(size['ui_timeline_page_ms']['late_page'])}, {size['person']} "
          f"{_ms(size['ui_timeline_page_ms']['person'])}; first call {_ms(size['first_call_ms'])}"
          for size in result["sizes"]]
    return "\n".join([*rows, "", f"{result['page_size']} memories a page, medians. The UI's page "
                      f"(`timeline_page`, all time) in the same run, ms, and the tool's first call on a "
                      f"freshly opened store: {'; '.join(ui)}."])


def write_table(result: dict[str, Any], doc: str) -> None:
    """Rewrite ``doc``'s table between the timeline-speed markers."""
    page = Path(doc)
    page.write_text(replace_table(page.read_text(encoding="utf-8"), timeline_table(result), TABLE_START, TABLE_END),
                    encoding="utf-8")


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="memories per namespace, comma-separated")
    parser.add_argument("--stores", default=None, help="directory of the filled stores, kept and reused "
                                                       "(default: a temporary one)")
    parser.add_argument("--rounds", type=int, default=5, help="calls per median (default: %(default)s)")
    parser.add_argument("--before", default=None, help="an earlier run's results file, shown beside this one")
    parser.add_argument("--label", default=None, help="what code this run measures (default: the git commit)")
    parser.add_argument("--out", default=None, help="results JSON")
    parser.add_argument("--doc", default=None, help="rewrite this page's timeline-speed table")
    parser.add_argument("--table", default=None, help="a results file to make the table from, measuring nothing")
    args = parser.parse_args(argv)
    if args.table:
        result: dict[str, Any] = json.loads(Path(args.table).read_text(encoding="utf-8"))
        write_table(result, args.doc or "docs/tools.md")
        return result
    if args.doc:
        replace_table(Path(args.doc).read_text(encoding="utf-8"), "", TABLE_START, TABLE_END)  # fail before the run
    meta = run_metadata(None)
    result = {"benchmark": "timeline_speed", **meta, "code": args.label or meta["git_commit"],
              "page_size": PAGE_SIZE, "rounds": args.rounds,
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "processor": platform.processor() or platform.machine()},
              "filled_by": "write path, synthetic dialogue, fake encoder, no linking (ui_paint.fill)"}
    with tempfile.TemporaryDirectory(prefix="timeline-speed-") as scratch:
        stores = Path(args.stores or scratch)
        result["sizes"] = [measure_size(stores / str(n), n, args.rounds)
                           for n in (int(size) for size in args.sizes.split(","))]
    # a shared machine: how busy it was (1, 5, 15 minutes) says how far the times are from a quiet one's
    result["machine"]["load_average"] = [round(x, 2) for x in os.getloadavg()]
    if args.before:
        before = json.loads(Path(args.before).read_text(encoding="utf-8"))
        result["before"] = {key: before[key] for key in ("code", "date", "machine", "sizes")}
    emit(result, args.out)
    if args.doc:
        write_table(result, args.doc)
    return result


if __name__ == "__main__":
    main()
