"""The interleaved ingest benchmark writes the windows it claims to time (a small run of the module)."""

from __future__ import annotations

import json
import subprocess
import sys

_MODULE = "benchmarks.scale.ingest_ratio"


def test_each_writer_writes_its_window_in_blocks_and_the_ratio_is_of_their_rates(tmp_path) -> None:
    out = tmp_path / "ratio.json"
    subprocess.run([sys.executable, "-m", _MODULE, "--small", "60", "--large", "200", "--block", "30",
                    "--warm-up", "20", "--repeats", "1", "--workdir", str(tmp_path / "work"), "--out", str(out)],
                   check=True, capture_output=True, text=True, timeout=600)
    got = json.loads(out.read_text())
    (repeat,) = got["repeats"]
    # the large writer started at 200 - 60 - 20 (its store holds exactly that, or the run stops)
    assert repeat["memories"] == {"small": 60, "large": 60}
    assert len(repeat["blocks"]) == 2 and set(repeat["blocks"][0]) == {"small", "large"}
    rates = repeat["per_cpu_s"]
    assert abs(repeat["ratio"] - rates["large"] / rates["small"]) < 1e-3
    assert got["ratio_median"] == repeat["ratio"]
    small = repeat["cpu_ms_per_memory"]["small"]
    assert {"total", "chroma", "link", "edge_add", "log_record"} <= set(small)
    assert small["chroma"] + small["link"] + small["edge_add"] < small["total"]  # parts of the whole
    assert (tmp_path / "work" / "base-120").is_dir()  # the build is kept for the next run
