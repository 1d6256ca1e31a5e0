# Developer shortcuts. CI runs .ci/run, which uses the README's commands.
PY ?= python
LOCOMO ?= ../shared/data/locomo/locomo10.json
LONGMEMEVAL ?= ../shared/data/longmemeval/longmemeval_s_dev143.json

.PHONY: install test lint format typecheck bench-env bench-runtime bench bench-linked bench-linked-dev bench-sets bench-facts bench-multilingual bench-small bench-updates bench-observations bench-longmemeval bench-longmemeval-sample bench-ingest bench-import bench-calibration bench-batch-shapes bench-edges bench-multihop-reach bench-cue-quality bench-local-controller bench-chroma bench-forget small-memory-cases update-cases bench-all bench-summary bench-demo demo bench-ui bench-timeline ui-screenshot

install:
	$(PY) -m pip install -e ".[dev,bench]"

test:
	$(PY) -m pytest

# The code is laid out by hand within ruff's rules (120 columns); `ruff format`
# is not used: its layout would grow the modules by a quarter.
lint:
	$(PY) -m ruff check langchain_ripplemem benchmarks tests graphs cookbook scripts

format:
	$(PY) -m ruff check --fix langchain_ripplemem benchmarks tests graphs cookbook scripts

typecheck:
	$(PY) -m mypy langchain_ripplemem benchmarks

demo:
	ripplemem demo

# The README's table: the demo's comparison as a results file, and the README's table rewritten from it (offline, seconds).
bench-demo:
	$(PY) -m benchmarks.measurements.demo_table --out results/demo.json --readme README.md

# The benchmarks' environment: the package within its declared ranges, at the exact versions the committed results
# files were made under (constraints/bench.txt; another onnxruntime or tokenizers gives other vectors).
bench-env:
	$(PY) -m pip install -e ".[bench,openai]" -c constraints/bench.txt

# Every target that measures warns first about each installed version that differs from those.
bench-runtime:
	@$(PY) scripts/bench_runtime.py

BENCH_TARGETS = bench bench-linked bench-linked-dev bench-sets bench-facts bench-multilingual bench-small \
	bench-observations bench-longmemeval bench-longmemeval-sample bench-ingest bench-calibration \
	bench-batch-shapes bench-edges bench-multihop-reach bench-cue-quality bench-local-controller bench-chroma bench-demo
$(BENCH_TARGETS): bench-runtime

# Retrieval quality and latency against baselines in one run (offline, ~10 min). Tables before the
# plot: the plot needs matplotlib (the [bench] extra), the results and tables do not.
bench:
	$(PY) -m benchmarks locomo $(LOCOMO) --out results/locomo.json
	$(PY) -m benchmarks report results/locomo.json --md docs/benchmarks_tables.md --plot docs/locomo_recall.png

# The linked-evidence suite injected into LoCoMo conversations (offline, ~1 min with the vector cache).
bench-linked:
	$(PY) -m benchmarks linked --haystack $(LOCOMO) --out results/linked.json --md docs/linked_tables.md

# Its development set: 56 cases written after the tune and held-out splits, looked at (no held-out part).
bench-linked-dev:
	$(PY) -m benchmarks linked --haystack $(LOCOMO) --suite benchmarks/data/linked_dev_cases.json \
		--out results/linked_dev.json --md docs/linked_dev_tables.md

# Issue 35's suites, injected into LoCoMo conversations like the linked one, every system (offline, a few minutes
# each with the vector cache): set questions answered by all their members, and stand-alone facts said once.
bench-sets:
	$(PY) -m benchmarks sets --haystack $(LOCOMO) --out results/sets.json --md docs/sets_tables.md

bench-facts:
	$(PY) -m benchmarks facts --haystack $(LOCOMO) --out results/facts.json --md docs/facts_tables.md

# Issue 36.2's multilingual suite: six languages, each case its own short conversation (offline, ~1 min).
bench-multilingual:
	$(PY) -m benchmarks multilingual --out results/multilingual.json --md docs/multilingual_tables.md

# Issue 36's small memories: each case a memory of its own (14-22 turns, no haystack), four systems.
bench-small:
	$(PY) -m benchmarks small --out results/small_memory.json --md docs/small_memory_tables.md

# Issue 52's update suite: knowledge updates and statements that must stay current, each case a memory of its own.
bench-updates:
	$(PY) -m benchmarks updates --out results/updates.json --md docs/updates_tables.md

# LoCoMo with its recorded LLM observations as memory units.
bench-observations:
	$(PY) -m benchmarks locomo $(LOCOMO) --units observations --out results/locomo_observations.json
	$(PY) -m benchmarks report results/locomo_observations.json --md docs/locomo_observations_tables.md

# LongMemEval-S, the 143-question development split (offline; ~50 min the first time, less once the
# vector cache in ~/.cache/langchain-ripplemem is filled). Interrupted? Run it again: it resumes from
# results/longmemeval.checkpoint.jsonl.
bench-longmemeval:
	$(PY) -m benchmarks longmemeval $(LONGMEMEVAL) --out results/longmemeval.json --md docs/longmemeval_tables.md

# A sample of every question type of the same split: its first 4 answerable questions of each (24 questions;
# ~15 min the first time, 3 with the vector cache).
bench-longmemeval-sample:
	$(PY) -m benchmarks longmemeval $(LONGMEMEVAL) --per-type 4 --out results/longmemeval_sample.json \
		--md docs/longmemeval_sample_tables.md

# Every suite, then one table of them all (results/summary.json, docs/summary_tables.md; about 1.5 h cold, 30 min
# with the vector cache).
SUITE_RESULTS = results/locomo.json results/longmemeval.json results/longmemeval_sample.json results/linked.json results/linked_dev.json \
	results/sets.json results/facts.json results/small_memory.json results/multilingual.json results/updates.json

bench-all: bench bench-longmemeval bench-longmemeval-sample bench-linked bench-linked-dev bench-sets bench-facts bench-small bench-multilingual bench-updates
	$(MAKE) bench-summary

bench-summary:
	$(PY) -m benchmarks summary $(SUITE_RESULTS) --out results/summary.json --md docs/summary_tables.md

# Write-path throughput vs the embedding model alone.
bench-ingest:
	$(PY) -m benchmarks.measurements.ingest_throughput $(LOCOMO) --out results/ingest.json

# Bringing a history: a generated 10,000-message ChatGPT export imported end to end, one encoder worker against two
# (docs/import.md, Speed).
bench-import:
	$(PY) -m benchmarks.measurements.import_throughput --out results/import_throughput.json --doc docs/import.md

# The semantic edge threshold of the default encoder on the LoCoMo tuning conversations (copy a changed value into
# edges/calibration.py).
bench-calibration:
	$(PY) -m benchmarks.measurements.edge_threshold $(LOCOMO) --out results/calibration.json

# The measurements behind figures docs/benchmarks.md and docs/scale.md quote (benchmarks/measurements/, one results file each).
bench-batch-shapes:
	$(PY) -m benchmarks.measurements.batch_shapes $(LOCOMO) --out results/batch_shapes.json

bench-edges:
	$(PY) -m benchmarks.measurements.edge_report $(LOCOMO) --out results/edges.json

bench-multihop-reach:
	$(PY) -m benchmarks.measurements.multihop_reach $(LOCOMO) --out results/multihop_reach.json

bench-cue-quality:
	$(PY) -m benchmarks.measurements.cue_quality --out results/cue_quality.json

# Needs the local-llm extra: SmolLM2 in llama-cpp-python's server, as the recall's cues and controller on the demo.
bench-local-controller:
	$(PY) -m benchmarks.measurements.local_controller --out results/local_controller.json
	$(PY) -m benchmarks.measurements.local_controller --suite small --out results/local_controller_small.json

bench-chroma:
	$(PY) -m benchmarks.measurements.chroma_upsert --out results/chroma_upsert.json
	$(PY) -m benchmarks.measurements.chroma_upsert --documents --out results/chroma_documents.json
	$(PY) -m benchmarks.measurements.chroma_reads --records 100000 --out results/chroma_reads.json

# What a forget that erases costs against a delete that only deletes (docs/lifecycle.md, Deletes).
bench-forget:
	$(PY) -m benchmarks.measurements.forget_cost --out results/forget_cost.json

# First paint of `ripplemem ui` with 100,000 memories in one namespace, in headless Chromium (docs/ui.md).
bench-ui:
	$(PY) -m benchmarks.measurements.ui_paint --out results/ui_paint.json

# memory_timeline's page at 1k, 10k and 100k memories, the UI's page as the baseline; rewrites docs/tools.md's table.
bench-timeline:
	$(PY) -m benchmarks.measurements.timeline_speed --out results/timeline_speed.json --doc docs/tools.md

# docs/ui.png: the page over the demo's conversation, one recall, one memory open.
ui-screenshot:
	$(PY) -m benchmarks.ui_screenshot --out docs/ui.png

# The small-memory suite's cases file, written from the cases in benchmarks/small_memory_source.py.
small-memory-cases:
	$(PY) -m benchmarks.small_memory_source

# The update suite's cases file, written from the cases in bench/update_source.py.
update-cases:
	$(PY) -m benchmarks.update_source

