"""Compare the recall figures of two benchmark results files: ``python scripts/compare_results.py OLD NEW``.

Walks ``systems`` and prints every numeric figure that differs, leaving out timings and memory
(keys with seconds, _ms, ms_, rss, heap or latency): those change from run to run.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

_SKIP = ("seconds", "_ms", "ms_", "rss", "heap", "latency")


def _figures(value: Any, path: str = "") -> Iterator[tuple[str, float]]:
    if isinstance(value, dict):
        for key, item in value.items():
            if not any(s in str(key) for s in _SKIP):
                yield from _figures(item, f"{path}/{key}")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield path, float(value)


def main(old: str, new: str) -> int:
    """Print the figures of ``systems`` that differ; the count of them is the last line."""
    with open(old, encoding="utf-8") as a, open(new, encoding="utf-8") as b:
        before, after = dict(_figures(json.load(a)["systems"])), dict(_figures(json.load(b)["systems"]))
    changed = 0
    for key in sorted(before.keys() | after.keys()):
        x, y = before.get(key), after.get(key)
        if x != y:
            changed += 1
            delta = "" if x is None or y is None else f"  ({y - x:+.4f})"
            print(f"{key}: {x} -> {y}{delta}")
    print(f"{changed} figures differ")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
