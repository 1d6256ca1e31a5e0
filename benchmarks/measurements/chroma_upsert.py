"""Chroma's upsert alone, by HNSW ``sync_threshold``: CPU ms and bytes written per record as a collection grows.

Each setting gets a fresh embedded store and a collection with the package's sparse
HNSW build; 20-record upserts of the package's record shapes (a 384-d vector, a
restatement as the document, ``ns``/``kind``/``unit`` metadata with about 1 KB of
unit JSON, creation time first) go in until ``--records``. Reported per setting: CPU
ms a record over the first 2,000 records and over the last 3,000, wall ms, and KB
written a record over the last 1,000 (``/proc/self/io``).

    python -m benchmarks.measurements.chroma_upsert --out results/chroma_upsert.json

With ``--documents``: the package's collection settings, two fresh stores written
batch by batch in turn (which goes first alternates), one upserting each record with
its restatement as a Chroma document (what the package did until stop 33), one
without; the restatements are 8-40 words drawn from a 5,000-word vocabulary, so
Chroma's full-text index of documents sees text like dialogue's, not one repeated word.

    python -m benchmarks.measurements.chroma_upsert --documents --out results/chroma_documents.json
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

from benchmarks.measurements.output import emit
from benchmarks.results import run_metadata
from langchain_ripplemem.storage.chroma_client import UNIT_COLLECTION_METADATA, chroma_client

BATCH, WINDOW = 20, 1000
SETTINGS = [1000, 200, 100, 400]


def _written() -> int:
    return int(Path("/proc/self/io").read_text().split("write_bytes: ")[1].split()[0])


def run(sync_threshold: int, records: int) -> dict[str, Any]:
    """CPU ms and bytes written a record while a fresh collection with ``sync_threshold`` grows to ``records``."""
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


def compare_documents(records: int) -> dict[str, Any]:
    """CPU ms a record with and without Chroma documents, the two stores written in turn."""
    rng = np.random.default_rng(0)
    vocab = ["".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), size=int(rng.integers(3, 9))))
             for _ in range(5000)]
    stores = {}
    for name in ("documents", "no_documents"):
        client = chroma_client(tempfile.mkdtemp(prefix="chroma-documents-"))
        stores[name] = (client, client.create_collection("units", embedding_function=None,
                                                         metadata=UNIT_COLLECTION_METADATA))
    spent, windows = dict.fromkeys(stores, 0.0), {name: [] for name in stores}
    for start in range(0, records, BATCH):
        ids = [hashlib.sha1(str(start + i).encode()).hexdigest()[:32] for i in range(BATCH)]
        vectors = rng.standard_normal((BATCH, 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        texts = ["Maya: " + " ".join(rng.choice(vocab, size=int(rng.integers(8, 40)))) for _ in range(BATCH)]
        metadatas = [{"ns": '["scale", "one"]', "kind": "unit", "unit": json.dumps(
            {"created_at": f"2026-01-01T{start + i:012d}", "restatement": text, "rest": "w" * 600})}
            for i, text in enumerate(texts)]
        for name in sorted(stores, reverse=(start // BATCH) % 2 == 1):
            documents = {"documents": texts} if name == "documents" else {}
            began = time.process_time()
            stores[name][1].upsert(ids=ids, embeddings=vectors, metadatas=metadatas, **documents)
            spent[name] += time.process_time() - began
        if (start + BATCH) % WINDOW == 0:
            for name in stores:
                windows[name].append(spent[name] * 1000 / WINDOW)
                spent[name] = 0.0
    for client, _ in stores.values():
        client.close()
    return {name: {"cpu_ms_first_2k": round(float(np.mean(w[:2])), 3),
                   "cpu_ms_last_3k": round(float(np.mean(w[-3:])), 3),
                   "cpu_ms_by_window": [round(x, 3) for x in w]} for name, w in windows.items()}


def main() -> None:
    """Read the command line, measure, print the results and write them to ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=30_000)
    parser.add_argument("--out", default=None, help="results JSON (default: stdout only)")
    parser.add_argument("--documents", action="store_true", help="with and without Chroma documents instead")
    args = parser.parse_args()
    if args.documents:
        emit({**run_metadata(None), "batch": BATCH, "records": args.records,
              "documents": compare_documents(args.records)}, args.out)
        return
    emit({**run_metadata(None), "batch": BATCH, "runs": [run(s, args.records) for s in SETTINGS]}, args.out)


if __name__ == "__main__":
    main()
