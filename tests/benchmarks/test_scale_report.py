"""The scale report's ingest table: the amortised rate spans whole windows, from the end."""

from __future__ import annotations

import pytest

from benchmarks.scale import scale_report


def _curve(rates: list[float], step: int = 1000) -> list[dict[str, float]]:
    return [{"memories": step * (i + 1), "per_cpu_s": r} for i, r in enumerate(rates)]


def test_amortized_rate_weighs_windows_by_their_cpu_time() -> None:
    # 10 windows: nine at 500 memories per CPU-s, one (a full collection) at 100.
    curve = _curve([900.0] * 5 + [500.0] * 9 + [100.0])
    spread = scale_report.amortized_cpu_rate(curve, memories=10_000)
    # 10,000 memories over 9 x 2 s + 10 s = 28 s; the first five windows are outside the span.
    assert spread == pytest.approx(10_000 / 28, abs=0.1)
    assert scale_report.amortized_cpu_rate(curve[:1]) == 900.0  # shorter than the span: all of it
    assert scale_report.amortized_cpu_rate([{"memories": 1000, "per_s": 10.0}]) is None  # no CPU rate recorded


def test_ingest_rows_compare_each_size_with_the_runs_1k() -> None:
    entry = {"label": "run", "single": [
        {"size": 1000, "ingest": {"per_cpu_s_at_size": 600.0, "curve": _curve([600.0])}},
        {"size": 12000, "ingest": {"per_cpu_s_at_size": 300.0, "curve": _curve([600.0] * 2 + [500.0] * 9 + [300.0])}},
    ]}
    rows = scale_report.ingest_rows(entry)
    assert rows[0] == "| run | 1k | 600 (x1.00) | 600 (x1.00) |"
    assert rows[1].startswith("| run | 12k | 300 (x0.50) | ")
    assert "468.7 (x0.78)" in rows[1]  # 10,000 memories / (9 x 2 + 3.33 CPU-s) = 468.7 per CPU-s


def test_whole_open_rows_show_the_load_without_a_snapshot_beside_the_snapshots() -> None:
    opened = {"first_recall_s": 1.2, "first_recall_cpu_s": 1.1, "import_s": 0.9, "serving_peak_rss_mb": 300.0}
    whole = {"first_recall_s": 9.5, "first_recall_cpu_s": 9.0, "import_s": 0.8, "serving_peak_rss_mb": 900.4}
    entry = {"label": "run", "single": [
        {"size": 1000, "open": opened},  # an older run: no whole open, no row
        {"size": 50000, "open": opened, "open_whole": whole},
        {"size": 100000, "open": opened, "open_whole": {"error": "Traceback ...\nMemoryError: out"}},
    ]}
    assert scale_report.whole_open_rows(entry) == [
        "| run | 50k | 9.5 s (9), imports 0.8 s, peak RSS 900 MB | 1.2 s (1.1) |",
        "| run | 100k | fails: MemoryError: out | 1.2 s (1.1) |",
    ]
