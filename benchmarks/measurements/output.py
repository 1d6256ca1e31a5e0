"""What the measurements share: their command line and how they write a results file."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

__all__ = ["emit", "locomo_parser"]


def locomo_parser(doc: str | None) -> argparse.ArgumentParser:
    """``locomo`` (the dataset file), ``--out`` (results JSON) and ``--cache`` (a vector cache directory)."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n")[0])
    parser.add_argument("locomo", help="locomo10.json")
    parser.add_argument("--out", default=None, help="results JSON (default: stdout only)")
    parser.add_argument("--cache", default=None, help="embedding cache directory (vectors per model)")
    return parser


def emit(result: dict[str, Any], out: str | None) -> None:
    """Print ``result`` as JSON and, with ``out``, write it there."""
    text = json.dumps(result, indent=1)
    if out:
        Path(out).write_text(text + "\n", "utf-8")
    print(text)
