"""Run LangGraph's own store tests, as released, against RippleMemStore.

For each of ``langgraph-checkpoint`` (the installed version), ``langgraph-checkpoint-sqlite``
and ``langgraph-checkpoint-postgres`` (the releases below, which require that
``langgraph-checkpoint``), it downloads the released source distribution from PyPI into a
temporary directory and runs its ``tests/test_store.py`` and ``tests/test_async_store.py``
with ``-p ripplemem_contract`` (``tests/langgraph_store_contract/``): the tests open a
RippleMemStore where they open their own store, and nothing else of them changes. Nothing
is copied into this repository. The PostgreSQL tests get a throwaway cluster
(``bench/scale/throwaway_postgres.py``) and are skipped, saying why, without PostgreSQL.

The tests that cannot apply (``ripplemem_contract.NOT_APPLICABLE``) are expected to
fail; the run fails when any other test fails or one of them passes.

    python scripts/run_langgraph_store_tests.py --install      # what CI runs
    python scripts/run_langgraph_store_tests.py --all-count    # every test counted, none expected to fail
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_DIR = ROOT / "tests" / "langgraph_store_contract"
# Releases whose store tests run; each requires langgraph-checkpoint>=4.3,<5, as langgraph 1.2 installs it.
RELEASES = {"langgraph-checkpoint-sqlite": "3.1.2", "langgraph-checkpoint-postgres": "3.2.0"}
TEST_FILES = ("tests/test_store.py", "tests/test_async_store.py")
PACKAGE_TIMEOUT = 1800  # hang guard for one package's tests on a slow machine, not a performance threshold
# What the released tests import beyond the package itself.
TEST_NEEDS = ["pytest-mock"]


def versions() -> dict[str, str]:
    """The packages whose tests run, each at the version to fetch."""
    return {"langgraph-checkpoint": importlib.metadata.version("langgraph-checkpoint"), **RELEASES}


def install(wanted: dict[str, str]) -> None:
    """Install the released packages the tests import (at those versions) and the test plugins they use."""
    packages = [f"{name}=={version}" for name, version in wanted.items() if name != "langgraph-checkpoint"]
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", *packages, *TEST_NEEDS], check=True)


def fetch(name: str, version: str, into: Path) -> Path:
    """The released source distribution of ``name==version``, unpacked; its directory."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                    "--dest", str(into), f"{name}=={version}"], check=True)
    (archive,) = into.glob(f"{name.replace('-', '_')}-{version}.tar.gz")
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / f"{name.replace('-', '_')}-{version}"


def counts(report: Path) -> dict[str, int]:
    """Outcomes of a JUnit XML report: passed, failed, expected failures, skipped."""
    found = {"passed": 0, "failed": 0, "xfailed": 0, "skipped": 0}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        kinds = {child.tag for child in case}
        skipped = case.find("skipped")
        if kinds & {"failure", "error"}:
            found["failed"] += 1
        elif skipped is not None and skipped.get("type") == "pytest.xfail":
            found["xfailed"] += 1
        elif skipped is not None:
            found["skipped"] += 1
        else:
            found["passed"] += 1
    return found


def run_tests(source: Path, work: Path, env: dict[str, str], all_count: bool,
              keyword: str | None = None) -> tuple[int, dict[str, int]]:
    """Run one package's store tests; pytest's exit code and the outcome counts."""
    files = [f for f in TEST_FILES if (source / f).exists()]
    report = work / f"{source.name}.xml"
    cmd = [sys.executable, "-m", "pytest", *files, "-p", "ripplemem_contract", "-p", "no:cacheprovider",
           "--junitxml", str(report), "-q", "--no-header", "-rfE", "--tb=short"]
    if all_count:
        cmd.append("--runxfail")
    if keyword:
        cmd += ["-k", keyword]
    paths = [str(PLUGIN_DIR), str(source), env.get("PYTHONPATH", "")]
    try:
        code = subprocess.run(cmd, cwd=source, env={**env, "PYTHONPATH": os.pathsep.join(p for p in paths if p)},
                              timeout=PACKAGE_TIMEOUT).returncode
    except subprocess.TimeoutExpired:
        print(f"{source.name}: its tests did not end within {PACKAGE_TIMEOUT} s (a hang): failed", flush=True)
        return 1, {"failed": 1}
    return code, counts(report) if report.exists() else {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--install", action="store_true", help="pip install the released packages the tests import")
    parser.add_argument("--all-count", action="store_true",
                        help="expect nothing to fail: count how many of all the tests pass")
    parser.add_argument("--only", choices=["langgraph-checkpoint", *RELEASES], action="append",
                        help="run only this package's tests (repeatable)")
    parser.add_argument("-k", dest="keyword", default=None, help="pytest's -k: only the tests it selects")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the PostgreSQL cluster on the way out
    wanted = {k: v for k, v in versions().items() if not args.only or k in args.only}
    if args.install:
        install(wanted)
    env = dict(os.environ)
    sys.path.insert(0, str(ROOT))
    server = None
    totals = {"passed": 0, "failed": 0, "xfailed": 0, "skipped": 0}
    worst = 0
    with tempfile.TemporaryDirectory(prefix="langgraph-store-tests-") as tmp:
        work = Path(tmp)
        try:
            for name, version in wanted.items():
                if name == "langgraph-checkpoint-postgres" and server is None:
                    from benchmarks.scale.throwaway_postgres import start_postgres

                    try:
                        server = start_postgres()
                    except RuntimeError as err:
                        print(f"{name} {version}: skipped, PostgreSQL cannot start here: {err}")
                        continue
                    env["RIPPLEMEM_CONTRACT_POSTGRES"] = f"postgres://postgres:postgres@{server.host}:{server.port}"
                print(f"== {name} {version}: its store tests against RippleMemStore", flush=True)
                code, found = run_tests(fetch(name, version, work / name), work, env, args.all_count, args.keyword)
                print(f"{name}: " + ", ".join(f"{n} {kind}" for kind, n in found.items()), flush=True)
                worst = max(worst, code)
                for kind, n in found.items():
                    totals[kind] += n
        finally:
            if server is not None:
                from benchmarks.scale.throwaway_postgres import stop_postgres

                stop_postgres(server)
    ran = totals["passed"] + totals["failed"] + totals["xfailed"]
    print(f"LangGraph store tests: {totals['passed']} of {ran} pass against RippleMemStore "
          f"({totals['xfailed']} do not apply, docs/langgraph_store.md; {totals['skipped']} skipped)")
    print(f"{totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped")
    return 1 if worst not in (0, 5) or totals["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
