"""Markdown tables of ``results/scale.json`` (``python -m benchmarks.scale.bench_scale report``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _size(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


def _wall_cpu(timing: dict[str, Any] | None, q: str) -> str:
    if not timing:
        return "-"
    return f"{timing['wall_ms'][q]:g} ({timing['cpu_ms'][q]:g})"


def _failed(step: dict[str, Any] | None) -> str | None:
    if step is None:
        return "-"
    if "error" in step:
        last = [line for line in step["error"].strip().splitlines() if line.strip()]
        return "fails: " + (last[-1] if last else "error")[:90].replace("|", "/")
    return None


def single_rows(entry: dict[str, Any]) -> list[str]:
    """The one-namespace table's rows of one run, a failed step as ``fails: ...``."""
    rows = []
    for row in entry["single"]:
        opened = row.get("open")
        failed = _failed(row) if "ingest" not in row else None
        if failed:
            rows.append(f"| {entry['label']} | {_size(row['size'])} | {failed} |" + " |" * 9)
            continue
        warm = dict(row["warm"])
        warm.setdefault("tuned", warm.get("locomo-tuned"))  # the first runs' name for it
        first = _failed(opened) or f"{opened['first_recall_s']:g} s ({opened['first_recall_cpu_s']:g})"
        rss = _failed(opened) and "-" or f"{opened['serving_peak_rss_mb']:.0f} MB"
        after = row["after_write"]
        rows.append(
            f"| {entry['label']} | {_size(row['size'])} | {_wall_cpu(warm['paper'], 'p50')} | "
            f"{_wall_cpu(warm['paper'], 'p95')} | {_wall_cpu(warm['tuned'], 'p50')} | "
            f"{_wall_cpu(warm['tuned'], 'p95')} | {row['exact_floor']['wall_ms']['p50']:g} | {first} | "
            f"{_after_write(after)} | {rss} | "
            f"{row['ingest']['per_s_at_size']:g}{_cpu_rate(row['ingest'])} |")
    return rows


def _after_write(after: dict[str, Any]) -> str:
    """Wall p50 and its ratio to a warm recall's; CPU p50 and ratio in brackets when recorded."""
    cpu = (f" ({after['cpu_ms']['p50']:g}, x{after['cpu_ratio_to_warm_p50']:g})"
           if "cpu_ratio_to_warm_p50" in after else "")
    return f"{after['wall_ms']['p50']:g} (x{after['ratio_to_warm_p50']:g}){cpu}"


def _cpu_rate(ingest: dict[str, Any]) -> str:
    return f" ({ingest['per_cpu_s_at_size']:g} per CPU-s)" if "per_cpu_s_at_size" in ingest else ""


AMORTIZED = 10_000  # memories: long enough to hold the full garbage collections in proportion


def amortized_cpu_rate(curve: list[dict[str, Any]], memories: int = AMORTIZED) -> float | None:
    """Memories per CPU-s over the last ``memories`` of an ingest curve (all of it when shorter).

    A window's count is the difference of the cumulative ``memories`` of two windows.

    Example:
        >>> amortized_cpu_rate([{"memories": 1000, "per_cpu_s": 500.0}, {"memories": 2000, "per_cpu_s": 250.0}])
        333.3
    """
    if not curve or "per_cpu_s" not in curve[-1]:
        return None
    units = cpu = 0.0
    for i in range(len(curve) - 1, -1, -1):
        n = curve[i]["memories"] - (curve[i - 1]["memories"] if i else 0)
        units, cpu = units + n, cpu + n / curve[i]["per_cpu_s"]
        if units >= memories:
            break
    return round(units / cpu, 1)


def ingest_rows(entry: dict[str, Any]) -> list[str]:
    """Per size: the last 1,000 memories' and the last 10,000's CPU rate, each against the run's 1k rate."""
    rows = [r for r in entry["single"] if "curve" in r.get("ingest", {})]
    base = next((r for r in rows if r["size"] == 1000), None)
    if base is None or "per_cpu_s_at_size" not in base["ingest"]:
        return []
    start = base["ingest"]["per_cpu_s_at_size"]
    out = []
    for row in rows:
        last, spread = row["ingest"]["per_cpu_s_at_size"], amortized_cpu_rate(row["ingest"]["curve"])
        assert spread is not None
        out.append(f"| {entry['label']} | {_size(row['size'])} | {last:g} (x{last / start:.2f}) | "
                   f"{spread:g} (x{spread / start:.2f}) |")
    return out


def whole_open_rows(entry: dict[str, Any]) -> list[str]:
    """Per size, the first recall in a new process with the view read whole (no snapshot), beside the snapshot's."""
    out = []
    for row in entry["single"]:
        whole, opened = row.get("open_whole"), row.get("open") or {}
        if whole is None:
            continue
        failed = _failed(whole)
        first = failed or (f"{whole['first_recall_s']:g} s ({whole['first_recall_cpu_s']:g}), imports "
                           f"{whole['import_s']:g} s, peak RSS {whole['serving_peak_rss_mb']:.0f} MB")
        snap = _failed(opened) or f"{opened['first_recall_s']:g} s ({opened['first_recall_cpu_s']:g})"
        out.append(f"| {entry['label']} | {_size(row['size'])} | {first} | {snap} |")
    return out


def many_rows(entry: dict[str, Any]) -> list[str]:
    """The many-namespace table's row of one run (none when it has no such part)."""
    many = entry.get("many")
    if not many:
        return []
    if "error" in many:
        return [f"| {entry['label']} | {_failed(many)} |" + " |" * 6]
    probe = many.get("probe", {})
    if _failed(probe):
        return [f"| {entry['label']} | {many['namespaces']} x {many['per_namespace']} | {_failed(probe)} |" + " |" * 5]
    listed = (f"{probe['namespaces_found']} in {probe['namespaces_s']:g} s" if "namespaces_found" in probe
              else "fails: " + probe["namespaces_error"][:90].replace("|", "/"))
    bound = json.dumps(probe["cache_bound"]) if probe.get("cache_bound") else "none (unbounded)"
    return [f"| {entry['label']} | {many['namespaces']} x {many['per_namespace']} | {listed} | "
            f"{probe['first_recall_ms']['p50']:g} | {probe['warm_recall_ms']['p50']:g} | "
            f"{probe['rss_open_mb']:.0f} MB | "
            f"{probe['rss_after_warmup_mb']:.0f} MB | {bound} |"]


def write_report(results: Path, md: Path) -> None:
    """Write the scale tables of every run in ``results`` to ``md``."""
    data = json.loads(results.read_text())
    runs = list(data["runs"].values())
    lines = [
        "<!-- generated by `python -m benchmarks.scale.bench_scale report results/scale.json"
        " --md docs/scale_tables.md`; do not edit -->",
        "",
        "One namespace (fake 384-d embedding, synthetic two-person dialogue, embedding excluded). "
        "Times in ms unless marked, CPU time in brackets; recall p50/p95 warm, 50 queries; "
        "`paper`: the paper's view sizes 10/5/5 with the hybrid alignment; `tuned`: the recommended settings "
        "(`RecallConfig()`); the first recall after open and the recall after a write "
        "use `paper`.",
        "",
        "| run | memories | recall p50 paper | recall p95 paper | recall p50 tuned | recall p95 tuned | "
        "exact search p50 | first recall after open (new process) | recall right after a 2-turn write (p50) | "
        "peak RSS (new process) | ingest memories/s (embedding excluded) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for entry in runs:
        lines += single_rows(entry)
    lines += ["", "Ingest, memories per CPU-s (embedding excluded) and the ratio to the same run's 1k figure: "
              f"the last 1,000 memories before the size, and the last {AMORTIZED:,} (all of them below that "
              "size), which hold the full garbage collections in proportion.", "",
              "| run | memories | last 1,000 | last 10,000 |", "|---|---|---|---|"]
    for entry in runs:
        lines += ingest_rows(entry)
    whole = [line for entry in runs for line in whole_open_rows(entry)]
    if whole:
        lines += ["", "First recall in a new process with no view snapshot: the view is read whole from Chroma "
                  "(the first open after an upgrade, or a process without a snapshot directory), beside the "
                  "same store's first recall from its snapshot. Wall time, CPU in brackets (`paper` settings).", "",
                  "| run | memories | no snapshot | from the snapshot |", "|---|---|---|---|", *whole]
    lines += ["", "Many namespaces in one store: `namespaces()`, then recall in 200 random namespaces "
              "(first and second time, p50 ms), RSS of that process.", "",
              "| run | namespaces x memories | `namespaces()` | first recall p50 | warm recall p50 | RSS after open | "
              "RSS after warm-up | cache bound |", "|---|---|---|---|---|---|---|---|"]
    for entry in runs:
        lines += many_rows(entry)
    lines += ["", "Runs: " + "; ".join(
        f"`{e['label']}` = commit {e['commit']}, {e['started']}, {e['machine']['cpus']} CPUs, "
        f"Python {e['machine']['python']}" for e in runs), ""]
    md.write_text("\n".join(lines))
