"""A store past SQLite's 32,766 bound variables reopens in a new process (issue 16, item 1).

One unpaged Chroma read of more than 32,766 records fails with "too many SQL
variables". The store here holds more than that in one namespace, and many
small namespaces beside it; a new process then loads the big namespace,
recalls, lists the namespaces and checks the store, in the library and with
``ripplemem check``. Built through the public API with the cheapest settings:
a 4-d fake embedding, a one-unit-per-turn extractor, no link pools, no supersession.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langchain_ripplemem.config import WriteConfig
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.schemas import MemoryUnit, Namespace, Provenance
from langchain_ripplemem.write.extraction.extractor import ExtractionResult, Window
from langchain_ripplemem.write.linking import local_linking

pytestmark = pytest.mark.slow

BIG = ("big",)
BIG_UNITS = 32_800  # SQLite's default SQLITE_MAX_VARIABLE_NUMBER is 32,766
SMALL = 50  # namespaces of two units each


class TinyEmbeddings(Embeddings):
    """4-d vectors from a text's CRC32: cheap, deterministic, not meant to be similar."""

    def _vec(self, text: str) -> list[float]:
        v = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(4)
        return (v / np.linalg.norm(v)).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


class TurnUnits:
    """One unit per turn, its text as is and its speaker as the only cue (an extractor at no cost)."""

    def extract(self, window: Window, namespace: Namespace) -> ExtractionResult:
        return ExtractionResult(units=[
            MemoryUnit.create(namespace=namespace, restatement=f"{turn.speaker}: {turn.text}",
                              participants=[turn.speaker.lower()],
                              source=Provenance(conversation_id=window.conversation_id, session_id=session.id,
                                                turn_ids=[turn.id]))
            for session, turn in window.items])

    async def aextract(self, window: Window, namespace: Namespace) -> ExtractionResult:
        return self.extract(window, namespace)


CHEAP = WriteConfig(extraction={"window_size": 1000, "window_overlap": 0},
                    linking={"semantic_threshold": 0.99},
                    supersession={"enabled": False})


def _conversation(cid: str, turns: int, word: str) -> dict[str, object]:
    sessions = []
    for s in range(0, turns, 1000):
        sessions.append({"id": f"S{s // 1000}", "turns": [
            {"id": f"S{s // 1000}:{t}", "speaker": "Maya" if t % 2 else "Sam", "text": f"{word} note number {t}"}
            for t in range(s, min(s + 1000, turns))]})
    return {"id": cid, "sessions": sessions}


REOPEN = """
import json, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_store_scale import CHEAP, TinyEmbeddings
from langchain_ripplemem.cli.integrity import check_store
from langchain_ripplemem.memory import RippleMem

memory = RippleMem(TinyEmbeddings(), persist_directory={path!r}, write_config=CHEAP)
big = memory.recall("zebra note number 32799", namespace=("big",), k=5)
small = memory.recall("otter note number 1", namespace=("small", "n7"), k=5)
report = check_store(memory)
print(json.dumps({{
    "namespaces": [list(ns) for ns in memory.namespaces()],
    "big_units": len(memory.list_units(("big",))),
    "big_top": [m.unit.restatement for m in big.memories],
    "small_namespaces": sorted({{tuple(m.unit.namespace) for m in small.memories}}),
    "ok": report.ok, "records": report.chroma_records, "summary": report.summary()[-500:],
}}))
"""


@pytest.fixture(scope="module")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("big-store")
    with pytest.MonkeyPatch.context() as patch, RippleMem(TinyEmbeddings(), persist_directory=path, write_config=CHEAP,
                                                          extractor=TurnUnits()) as memory:
        for pool in ("SEMANTIC_POOL", "CUE_POOL"):  # no link pools: the cheapest build
            patch.setattr(local_linking, pool, 0)
        report = memory.add_conversation(_conversation("big", BIG_UNITS, "zebra"), namespace=BIG)
        assert report.new_units == BIG_UNITS
        for i in range(SMALL):
            memory.add_conversation(_conversation(f"s{i}", 2, "otter"), namespace=("small", f"n{i}"))
    return path


def test_a_store_past_the_sql_variable_bound_reopens_in_a_new_process(big_store: Path) -> None:
    script = REOPEN.format(tests=str(Path(__file__).parent), path=str(big_store))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    expected = sorted([["big"], *(["small", f"n{i}"] for i in range(SMALL))])
    assert got["namespaces"] == expected
    assert got["big_units"] == BIG_UNITS
    assert "Maya: zebra note number 32799" in got["big_top"]
    assert got["small_namespaces"] == [["small", "n7"]]
    assert got["ok"], got["summary"]
    assert got["records"] == BIG_UNITS + 2 * SMALL


def test_ripplemem_check_passes_on_that_store(big_store: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", "import sys; from langchain_ripplemem.cli.commands import main; "
                           "sys.exit(main(sys.argv[1:]))", "check", "--persist", str(big_store)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("ok")
