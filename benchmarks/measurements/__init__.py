"""Measurements behind figures the docs quote, each a module run by a Makefile target.

Each writes one committed results file (``results/*.json``) from the command line, as
``python -m benchmarks.measurements.<name> ... --out results/<file>.json``;
``docs/benchmarks.md`` and ``docs/scale.md`` say what each found. Unlike the suites
under ``python -m benchmarks`` they score no recall: they time, count or check one part.
"""
