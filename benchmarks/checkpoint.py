"""Resumable benchmark runs: each finished conversation's records, one JSON line each, as it finishes.

A LongMemEval-S run builds hundreds of memories over an hour or more; an
interrupted run should not start over. :class:`Checkpoint` keeps a JSONL file
(by default next to ``--out``): its first line is the run's *fingerprint*
(dataset hash, commit, systems, k, configs, conversations), every further line one
scored conversation. A rerun with the same fingerprint skips the conversations
the file holds; another fingerprint is refused with the fields that differ,
unless ``restart`` is asked for. A line cut short by a crash is dropped (that
conversation runs again).

Example:
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.checkpoint.jsonl"
    >>> first = Checkpoint(path)
    >>> first.resume({"commit": "abc", "k": [5, 10]})
    {}
    >>> first.append({"id": "conv-1", "records": {}})
    >>> list(Checkpoint(path).resume({"commit": "abc", "k": [5, 10]}))
    ['conv-1']
    >>> Checkpoint(path).resume({"commit": "def", "k": [5, 10]})
    Traceback (most recent call last):
    ...
    ValueError: ... commit ('abc' in the checkpoint, 'def' now) ...

"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["Checkpoint", "checkpoint_path", "fingerprint_differences"]

_HEADER = "fingerprint"


def checkpoint_path(out: str | Path) -> Path:
    """The checkpoint beside a results file: ``results/x.json`` -> ``results/x.checkpoint.jsonl``.

    Example:
        >>> checkpoint_path("results/longmemeval.json").as_posix()
        'results/longmemeval.checkpoint.jsonl'

    """
    out = Path(out)
    return out.with_name(f"{out.stem}.checkpoint.jsonl")


def fingerprint_differences(stored: Any, current: Any, where: str = "") -> list[str]:
    """Dotted names of the fields where two fingerprints differ, with both values when they are short.

    Example:
        >>> fingerprint_differences({"a": 1, "c": {"d": [1]}}, {"a": 2, "c": {"d": [1, 2]}})
        ['a (1 in the checkpoint, 2 now)', 'c.d ([1] in the checkpoint, [1, 2] now)']

    """
    if isinstance(stored, Mapping) and isinstance(current, Mapping):
        out: list[str] = []
        for key in sorted(set(stored) | set(current)):
            out += fingerprint_differences(stored.get(key), current.get(key), f"{where}.{key}" if where else key)
        return out
    if stored == current:
        return []
    shown = (repr(stored), repr(current))
    if max(map(len, shown)) > 60:
        return [where]
    return [f"{where} ({shown[0]} in the checkpoint, {shown[1]} now)"]


class Checkpoint:
    """The JSONL file of one run's finished conversations.

    Args:
        path: the checkpoint file (created on first :meth:`append`).

    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._fingerprint: dict[str, Any] | None = None

    def resume(self, fingerprint: dict[str, Any], *, restart: bool = False) -> dict[str, dict[str, Any]]:
        """Finished conversations by id, after checking that the file is this run's.

        Args:
            fingerprint: JSON-ready description of the run; a stored one must equal it.
            restart: forget an existing file instead of resuming it.

        Raises:
            ValueError: the file holds another run (the message names what differs),
                or is not a checkpoint.

        """
        self._fingerprint = json.loads(json.dumps(fingerprint))  # compare what JSON keeps
        if restart or not self.path.is_file():
            self._rewrite([])
            return {}
        lines = self.path.read_text(encoding="utf-8").splitlines()
        header = _parse(lines[0]) if lines else None
        if not isinstance(header, dict) or _HEADER not in header:
            raise ValueError(f"{self.path} is not a benchmark checkpoint; remove it or pass --restart")
        differences = fingerprint_differences(header[_HEADER], self._fingerprint)
        if differences:
            raise ValueError(f"checkpoint {self.path} is from another run: {'; '.join(differences[:6])} "
                             "differ. Rerun with the same arguments and code, or pass --restart to start over.")
        entries = [entry for entry in map(_parse, lines[1:]) if isinstance(entry, dict) and "id" in entry]
        if len(entries) != len(lines) - 1:  # a line a crash cut short: keep the file clean for appends
            self._rewrite(entries)
        return {entry["id"]: entry for entry in entries}

    def append(self, entry: dict[str, Any]) -> None:
        """Add one finished conversation (``entry["id"]`` names it), flushed to disk before returning."""
        if self._fingerprint is None:
            raise ValueError("call resume() before append(): the file needs the run's fingerprint first")
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def remove(self) -> None:
        """Delete the file (the run's results are written: nothing left to resume)."""
        self.path.unlink(missing_ok=True)

    def _rewrite(self, entries: list[dict[str, Any]]) -> None:
        """Replace the file with the header and ``entries`` at once (written aside, then renamed)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines = [{_HEADER: self._fingerprint}, *entries]
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.writelines(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def _parse(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None
