"""``python -m benchmarks``: the benchmark harness's command (``make bench-*`` runs it)."""

import sys

from benchmarks.cli import bench_main

sys.exit(bench_main())
