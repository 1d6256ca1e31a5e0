"""Warn when the installed versions differ from constraints/bench.txt, the ones behind the committed results.

pyproject.toml declares ranges, so a benchmark may run under other versions than the committed
results files were made under; another onnxruntime or tokenizers gives other vectors, which can
reorder near-ties. Each results file records its encoder runtime anyway; this says beforehand.
``make bench-env`` installs the constrained versions.

    python scripts/bench_runtime.py            # one warning line per difference, exit 0
    python scripts/bench_runtime.py --strict   # exit 1 when anything differs
"""

from __future__ import annotations

import argparse
import re
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

CONSTRAINTS = Path(__file__).resolve().parents[1] / "constraints" / "bench.txt"


def pinned_versions(path: Path = CONSTRAINTS) -> dict[str, str]:
    """``name==version`` lines of a constraints file (comments and blank lines skipped)."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, pinned = line.partition("==")
            if not sep:
                raise ValueError(f"{path}: {line!r} is not name==version")
            pins[re.sub(r"[-_.]+", "-", name.strip()).lower()] = pinned.strip()
    return pins


def differences(pins: dict[str, str]) -> list[str]:
    """One line per pinned distribution installed at another version, or not installed."""
    found = []
    for name, pinned in sorted(pins.items()):
        try:
            installed = version(name)
        except PackageNotFoundError:
            installed = "not installed"
        if installed != pinned:
            found.append(f"{name} {installed} (the committed results: {pinned})")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strict", action="store_true", help="exit 1 when an installed version differs")
    args = parser.parse_args(argv)
    found = differences(pinned_versions())
    for line in found:
        print(f"warning: {line}", file=sys.stderr)
    if found:
        print(f"warning: {len(found)} version(s) differ from {CONSTRAINTS.relative_to(CONSTRAINTS.parents[1])}: "
              "figures may differ from the committed ones (`make bench-env` installs those versions)",
              file=sys.stderr)
    return 1 if found and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
