"""Chroma reads by id with and without a namespace filter, and a namespace read two ways.

Builds a fresh embedded collection with the package's settings: ``--records``
records of one namespace (and 100 of another), 20-record upserts of the package's
record shapes (a 384-d vector, ``ns``/``kind``/``unit`` metadata with about 1 KB of
unit JSON). Then, wall seconds:

* reads of 10 and 200 ids, with the namespace filter as well (what the package did
  until stop 33) and by id alone (what it does: the namespace checked in Python);
* the whole namespace: pages of 5,000 records filtered by namespace (before), and
  its ids listed with the filter, 30,000 a read, then its records by id (now).

    python -m benchmarks.measurements.chroma_reads --records 100000 --out results/chroma_reads.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
import time
from typing import Any

import numpy as np

from benchmarks.measurements.output import emit
from benchmarks.results import run_metadata
from langchain_ripplemem.storage.chroma import ID_PAGE_SIZE, PAGE_SIZE
from langchain_ripplemem.storage.chroma_client import UNIT_COLLECTION_METADATA, chroma_client

NS, OTHER = '["scale", "one"]', '["scale", "other"]'


def _fill(collection: Any, records: int, namespace: str, rng: np.random.Generator) -> list[str]:
    ids = []
    for start in range(0, records, 20):
        batch = [hashlib.sha1(f"{namespace}{start + i}".encode()).hexdigest()[:32]
                 for i in range(min(20, records - start))]
        vectors = rng.standard_normal((len(batch), 384)).astype(np.float32)
        collection.upsert(ids=batch, embeddings=vectors / np.linalg.norm(vectors, axis=1, keepdims=True),
                          metadatas=[{"ns": namespace, "kind": "unit", "unit": json.dumps(
                              {"created_at": f"2026-01-01T{start + i:012d}", "rest": "w" * 900})}
                              for i in range(len(batch))])
        ids += batch
    return ids


def _seconds(read: Any) -> float:
    began = time.perf_counter()
    read()
    return round(time.perf_counter() - began, 4)


def _paged(collection: Any, page: int, include: list[str], where: dict[str, Any]) -> list[str]:
    out, offset = [], 0
    while True:
        got = collection.get(where=where, limit=page, offset=offset, include=include)
        out += got["ids"]
        if len(got["ids"]) < page:
            return out
        offset += page


def run(records: int) -> dict[str, Any]:
    """The reads' wall seconds on a fresh collection of ``records`` records of one namespace."""
    client = chroma_client(tempfile.mkdtemp(prefix="chroma-reads-"))
    collection = client.create_collection("units", embedding_function=None, metadata=UNIT_COLLECTION_METADATA)
    rng = np.random.default_rng(0)
    ids = _fill(collection, records, NS, rng)
    _fill(collection, 100, OTHER, rng)
    where, picked = {"ns": NS}, [ids[i] for i in rng.choice(len(ids), 200, replace=False)]
    out: dict[str, Any] = {"records": records}
    for n in (10, 200):
        some = picked[:n]
        out[f"by_id_{n}"] = {
            "with_filter_s": _seconds(lambda some=some: collection.get(ids=some, where=where,
                                                                       include=["embeddings", "metadatas"])),
            "by_id_alone_s": _seconds(lambda some=some: collection.get(ids=some, include=["embeddings", "metadatas"]))}

    def by_ids() -> None:
        listed = _paged(collection, ID_PAGE_SIZE, [], where)
        for start in range(0, len(listed), PAGE_SIZE):
            collection.get(ids=listed[start : start + PAGE_SIZE], include=["embeddings", "metadatas"])

    out["namespace"] = {"filtered_pages_s": _seconds(lambda: _paged(collection, PAGE_SIZE, ["embeddings", "metadatas"],
                                                                    where)),
                        "ids_then_records_s": _seconds(by_ids)}
    client.close()
    return out


def main() -> None:
    """Read the command line, measure, print the results and write them to ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--out", default=None, help="results JSON (default: stdout only)")
    args = parser.parse_args()
    emit({**run_metadata(None), "page_size": PAGE_SIZE, "id_page_size": ID_PAGE_SIZE, **run(args.records)}, args.out)


if __name__ == "__main__":
    main()
