"""Chroma's upsert alone, by HNSW ``sync_threshold``: CPU ms and bytes written per record as a collection grows.

Each setting gets a fresh embedded store and a collection with the package's sparse
HNSW build; 20-record upserts of the package's record shapes (a 384-d vector, a
restatement as the document, ``ns``/``kind``/``unit`` metadata with about 1 KB of
unit JSON, creation time first) go in until ``--records``. Reported per setting: CPU
ms a record over the first 2,000 records and over the last 3,000, wall ms, and KB
written a record over the last 1,000 (``/proc/self/io``).

    python scripts/chroma_upsert.py --out results/chroma_upsert.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from results_io import emit

from langchain_ripplemem.bench.results import run_metadata
from langchain_ripplemem.storage.chroma import chroma_client

BATCH, WINDOW = 20, 1000
SETTINGS = [1000, 200, 100, 400]


def _written() -> int:
    return int(Path("/proc/self/io").read_text().split("write_bytes: ")[1].split()[0])


def run(sync_threshold: int, records: int) -> dict[str, Any]:
    client = chroma_client(tempfile.mkdtemp(prefix="chroma-upsert-"))
    collection = client.create_collection("units", embedding_function=None, metadata={
        "hnsw:space": "cosine", "hnsw:construction_ef": 8, "hnsw:M": 4, "hnsw:sync_threshold": sync_threshold})
    rng = np.random.default_rng(0)
    cpu, wall, written = [], [], []
    spent, started, bytes_before = 0.0, time.perf_counter(), _written()
    for start in range(0, records, BATCH):
        ids = [hashlib.sha1(str(start + i).encode()).hexdigest()[:32] for i in range(BATCH)]
        vectors = rng.standard_normal((BATCH, 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        unit = [json.dumps({"created_at": f"2026-01-01T{start + i:012d}", "text": "w" * 900}) for i in range(BATCH)]
        began = time.process_time()
        collection.upsert(ids=ids, embeddings=vectors, documents=[f"User: turn {start + i} " + "word " * 40
                                                                  for i in range(BATCH)],
                          metadatas=[{"ns": "scale/one", "kind": "turn", "unit": u} for u in unit])
        spent += time.process_time() - began
        if (start + BATCH) % WINDOW == 0:
            cpu.append(spent * 1000 / WINDOW)
            wall.append((time.perf_counter() - started) * 1000 / WINDOW)
            written.append((_written() - bytes_before) / WINDOW / 1024)
            spent, started, bytes_before = 0.0, time.perf_counter(), _written()
    client.close()
    def mean(values: list[float]) -> float:
        return round(float(np.mean(values)), 3)

    return {"sync_threshold": sync_threshold, "records": records,
            "cpu_ms_first_2k": mean(cpu[:2]), "cpu_ms_last_3k": mean(cpu[-3:]),
            "wall_ms_first_2k": mean(wall[:2]), "wall_ms_last_3k": mean(wall[-3:]),
            "kb_written_last_1k": round(written[-1], 1), "cpu_ms_by_window": [round(x, 3) for x in cpu]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=30_000)
    parser.add_argument("--out", default=None, help="results JSON (default: stdout only)")
    args = parser.parse_args()
    emit({**run_metadata(None), "batch": BATCH, "runs": [run(s, args.records) for s in SETTINGS]}, args.out)


if __name__ == "__main__":
    main()
