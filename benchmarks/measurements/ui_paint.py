"""First paint of ``ripplemem ui`` with 100,000 memories in one namespace, in headless Chromium.

The store is filled through the write path with the scale benchmark's synthetic dialogue
(``benchmarks/scale/scale_dialogue.py``: two speakers, friends, places, relative times, so
the units carry every kind of cue) and its fast fake encoder, one unit per turn from the
rule-based extractor, in conversations of 25 sessions of 20 turns. Linking is switched off
(the candidate pools ``SEMANTIC_POOL`` and ``CUE_POOL`` are 0 while it fills) and supersession
too: at 100k a full ingest links for about an hour, and a first paint reads no edge (a
memory's links are read when it is opened). So the store has units, vectors, cues,
sessions and the namespace log as an ingest leaves them, and no edges.

The page is served as ``ripplemem ui --persist DIR`` serves it: the embedded store is
opened for a burst of requests and closed when idle (``server/ui_access.py``). Measured,
each ``--rounds`` times, median and each run:

* ``cold``: the store closed (a new process, or idle past ``--idle``): navigation start to
  the timeline drawn (the page's ``ripplemem-timeline`` mark), the store's open and the
  namespace index's restore from its snapshot included; and the browser's first paint;
* ``warm``: the same with the store open and its index cached (a reload within ``--idle``);
* what a cold paint spends in the server: the store's open and the index's restore;
* each API route the first paint asks, timed in the server, warm; and a page far into the
  timeline, a person filter and a text filter.

    python -m benchmarks.measurements.ui_paint --out results/ui_paint.json
    python -m benchmarks.measurements.ui_paint --memories 5000 --rounds 1   # a quick look
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.browser import Chromium, Tab, serving
from benchmarks.measurements.output import emit
from benchmarks.scale.scale_dialogue import Dialogue, FastFakeEmbeddings
from langchain_ripplemem.config import WriteConfig
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.server.ui_access import MemoryAccess
from langchain_ripplemem.server.ui_page import create_app
from langchain_ripplemem.write.linking import local_linking

__all__ = ["fill", "first_paint"]

NS = ("ui", "bench")
NAMESPACE = "ui/bench"
SESSIONS_PER_CONVERSATION = 25
# No edges (see the module docs): no semantic edge passes a threshold of 1, and the pools are emptied while the
# store fills; supersession off for the same reason.
UNLINKED = WriteConfig(linking={"semantic_threshold": 1.0}, supersession={"enabled": False})
READY = "document.body.dataset.ready === '1'"


def open_memory(store: Path) -> RippleMem:
    """The benchmark's store with its fake encoder."""
    return RippleMem(FastFakeEmbeddings(), persist_directory=store, write_config=UNLINKED)


def fill(store: Path, memories: int) -> dict[str, Any]:
    """Write ``memories`` units of the synthetic dialogue into ``store`` (kept: a second run reuses it)."""
    started = time.perf_counter()
    pools = local_linking.SEMANTIC_POOL, local_linking.CUE_POOL
    local_linking.SEMANTIC_POOL = local_linking.CUE_POOL = 0
    try:
        return _fill(store, memories, started)
    finally:
        local_linking.SEMANTIC_POOL, local_linking.CUE_POOL = pools


def _fill(store: Path, memories: int, started: float) -> dict[str, Any]:
    with open_memory(store) as memory:
        held = len(memory.list_units(NS, include_suppressed=True)) if NS in memory.namespaces() else 0
        dialogue, number, before = Dialogue(seed=1), 0, held
        while held < memories:
            number += 1
            conversation = dialogue.conversation(f"c{number}", sessions=SESSIONS_PER_CONVERSATION)
            turns = [t for s in conversation["sessions"] for t in s["turns"]]
            if len(turns) > memories - held:  # the last one cut to the size asked
                keep = {t["id"] for t in turns[:memories - held]}
                conversation["sessions"] = [{**s, "turns": [t for t in s["turns"] if t["id"] in keep]}
                                            for s in conversation["sessions"]]
                conversation["sessions"] = [s for s in conversation["sessions"] if s["turns"]]
            held += memory.add_conversation(conversation, namespace=NS).new_units
    # written 0: the store was filled by an earlier run (--store), and only counted here
    return {"memories": held, "written": held - before, "seconds": round(time.perf_counter() - started, 1)}


def _timeline_ms(tab: Tab) -> float:
    return float(tab.evaluate("performance.getEntriesByName('ripplemem-timeline')[0].startTime"))


def _paint_ms(tab: Tab) -> float | None:
    value = tab.evaluate("(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime")
    return None if value is None else float(value)


def first_paint(tab: Tab, url: str) -> dict[str, Any]:
    """Navigate to ``url`` and wait for the timeline: milliseconds from navigation start."""
    tab.goto("about:blank")  # a new document each time (the same URL again would only change the hash)
    tab.goto(url)
    tab.wait_for(READY, timeout=600)
    return {"timeline_ms": round(_timeline_ms(tab), 1), "first_contentful_paint_ms": _paint_ms(tab)}


def _median(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in runs if r[key] is not None]
    return round(statistics.median(values), 1) if values else None


def _api_ms(client: Any, path: str, params: dict[str, Any], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        answer = client.get(path, params=params)
        times.append((time.perf_counter() - started) * 1000)
        assert answer.status_code == 200, answer.text
    return round(statistics.median(times), 1)


def cold_parts(store: Path, rounds: int) -> dict[str, float]:
    """What a cold paint spends in the server, medians: opening the store, restoring the namespace's index."""
    from langchain_ripplemem.server.ui_timeline import current_index

    opening, restoring = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        memory = open_memory(store)
        opened = time.perf_counter()
        current_index(memory, NS)
        restoring.append((time.perf_counter() - opened) * 1000)
        opening.append((opened - started) * 1000)
        memory.close()
    return {"open": round(statistics.median(opening), 1), "index": round(statistics.median(restoring), 1)}


def measure(store: Path, rounds: int, idle: float) -> dict[str, Any]:
    """Cold and warm first paints in Chromium, and the routes' server times (see the module docs)."""
    from starlette.testclient import TestClient

    access = MemoryAccess(lambda: open_memory(store), per_use=True, idle=idle)
    out: dict[str, Any] = {"idle_s": idle}
    with serving(create_app(access, store=str(store))) as url, Chromium() as browser:
        page = f"{url}#ns={NAMESPACE}"
        tab = browser.tab("about:blank")
        cold, warm = [], []
        for _ in range(rounds):
            access.close()  # as after --idle seconds without a request
            cold.append(first_paint(tab, page))
            warm.append(first_paint(tab, page))  # at once: the store still open, its index cached
        out["cold"] = {"timeline_ms": _median(cold, "timeline_ms"),
                       "first_contentful_paint_ms": _median(cold, "first_contentful_paint_ms"), "runs": cold}
        out["warm"] = {"timeline_ms": _median(warm, "timeline_ms"),
                       "first_contentful_paint_ms": _median(warm, "first_contentful_paint_ms"), "runs": warm}
        out["shown"] = tab.evaluate("document.getElementById('range').textContent")
        out["opened"] = access.opened
    out["cold_parts_ms"] = cold_parts(store, rounds)
    held = MemoryAccess.held(open_memory(store))
    try:
        client = TestClient(create_app(held), base_url="http://127.0.0.1")
        person = client.get("/api/overview", params={"namespace": NAMESPACE}).json()["people"][0]["value"]
        routes: dict[str, tuple[str, dict[str, Any]]] = {
            "namespaces": ("/api/namespaces", {}),
            "overview": ("/api/overview", {"namespace": NAMESPACE}),
            "timeline_first_page": ("/api/timeline", {"namespace": NAMESPACE}),
            "timeline_page_at_50000": ("/api/timeline", {"namespace": NAMESPACE, "offset": 50_000}),
            "timeline_person": ("/api/timeline", {"namespace": NAMESPACE, "person": person}),
            "timeline_text": ("/api/timeline", {"namespace": NAMESPACE, "text": "hiking"}),
        }
        client.get("/api/timeline", params={"namespace": NAMESPACE})  # the index loaded once
        out["server_ms_warm"] = {name: _api_ms(client, path, params, max(rounds, 3))
                                 for name, (path, params) in routes.items()}
    finally:
        held.close()
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--memories", type=int, default=100_000, help="memories in the namespace")
    parser.add_argument("--store", default=None, help="store directory, kept and reused (default: a temporary one)")
    parser.add_argument("--rounds", type=int, default=5, help="cold and warm paints each (default: %(default)s)")
    parser.add_argument("--idle", type=float, default=1.0, help="the page's --idle (default: %(default)s)")
    parser.add_argument("--out", default=None, help="results JSON")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ui-paint-") as scratch:
        store = Path(args.store or scratch)
        result: dict[str, Any] = {"benchmark": "ui_paint", "namespace": NAMESPACE,
                                  "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                                              "processor": platform.processor() or platform.machine()},
                                  "fill": fill(store, args.memories),
                                  "filled_by": "write path, synthetic dialogue, fake encoder, no linking"}
        result.update(measure(store, args.rounds, args.idle))
        # a shared machine: how busy it was (1, 5, 15 minutes) says how far the times are from a quiet one's
        result["machine"]["load_average"] = [round(x, 2) for x in os.getloadavg()]
    emit(result, args.out)
    return result


if __name__ == "__main__":
    main()
