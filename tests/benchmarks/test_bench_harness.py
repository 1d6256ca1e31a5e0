"""The benchmark harness on big data: vector cache, resumable runs, progress, memory, first query, shortfall."""

from __future__ import annotations

import asyncio
import json
import tracemalloc

import numpy as np
import pytest

from benchmarks import cached_embeddings, runner
from benchmarks.cached_embeddings import CachedEmbeddings, default_cache_dir, model_folder
from benchmarks.checkpoint import Checkpoint, checkpoint_path
from benchmarks.cli import bench_main
from benchmarks.loaders import load_locomo
from benchmarks.progress import RunProgress
from benchmarks.report import results_markdown
from benchmarks.runner import FreshMemories, run_benchmark
from benchmarks.systems import Retrieved
from langchain_ripplemem.memory import RippleMem
from langchain_ripplemem.schemas import Conversation, Session, Turn
from langchain_ripplemem.storage.chroma_client import chroma_client
from tests.benchmarks.fixtures.bench_fakes import LOCOMO_TINY, FakeMemory, locomo_adapter
from tests.unit_tests.conftest import BagOfWordsEmbeddings

# Timing and machine fields differ between any two runs; everything else must not.
TIMING = {"date", "build_seconds", "seconds_total", "seconds_per_conversation", "query_ms_p50", "query_ms_p95",
          "query_ms_mean", "first_query_ms_p50", "first_query_ms_p95", "rss_mb",
          "heap_in_use_mb"}


class Encoder(BagOfWordsEmbeddings):
    """Bag of words with a model id, counting the texts it embeds."""

    def __init__(self, model_id: str = "bow-1") -> None:
        self.model_id, self.texts = model_id, []

    def embed_documents(self, texts):
        self.texts.extend(texts)
        return super().embed_documents(texts)


@pytest.fixture
def locomo():
    return load_locomo(LOCOMO_TINY, adapter=locomo_adapter)


def _untimed(value):
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in TIMING}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


# -- 1. the vector cache --------------------------------------------------------------------------

def test_a_second_cache_on_the_same_directory_embeds_nothing(tmp_path):
    first_base = Encoder()
    first = CachedEmbeddings(first_base, tmp_path)
    vectors = first.embed_documents(["maya likes tea", "sam runs"])
    assert first.save() is not None and first.save() is None  # nothing new the second time
    again_base = Encoder()
    again = CachedEmbeddings(again_base, tmp_path)
    assert again.embed_documents(["sam runs", "maya likes tea"]) == vectors[::-1]
    assert again_base.texts == [] and (again.embedded, again.reused) == (0, 2)
    assert again.embed_query("maya") == again.embed_query("maya")
    assert again_base.texts == []  # queries go to embed_query, never through the cache


def test_vectors_of_another_model_are_never_reused(tmp_path):
    old = CachedEmbeddings(Encoder("bow-1"), tmp_path)
    old.embed_documents(["maya likes tea"])
    shard = old.save()
    new_base = Encoder("bow-2")
    new = CachedEmbeddings(new_base, tmp_path)
    new.embed_documents(["maya likes tea"])
    assert new_base.texts == ["maya likes tea"]
    # A shard moved into another model's folder is skipped, not read as that model's.
    stray = model_folder(tmp_path, "bow-3")
    stray.mkdir()
    (stray / shard.name).write_bytes(shard.read_bytes())
    third_base = Encoder("bow-3")
    with pytest.warns(UserWarning, match="written for model bow-1"):
        CachedEmbeddings(third_base, tmp_path).embed_documents(["maya likes tea"])
    assert third_base.texts == ["maya likes tea"]


def test_vectors_made_under_another_runtime_are_never_reused(tmp_path):
    # The same model under another onnxruntime gives vectors that reorder near-ties: a cache
    # filled under one version must not stand in for another's (results would not reproduce).
    old_base = Encoder()
    old_base.runtime = "onnxruntime 1.30.0"
    first = CachedEmbeddings(old_base, tmp_path)
    first.embed_documents(["maya likes tea"])
    first.save()
    new_base = Encoder()
    new_base.runtime = "onnxruntime 1.32.0"
    new = CachedEmbeddings(new_base, tmp_path)
    new.embed_documents(["maya likes tea"])
    assert new_base.texts == ["maya likes tea"] and new.folder != first.folder
    same = Encoder()
    same.runtime = "onnxruntime 1.30.0"
    CachedEmbeddings(same, tmp_path).embed_documents(["maya likes tea"])
    assert same.texts == []


def test_the_offline_encoder_names_the_runtime_its_vectors_come_from():
    from importlib.metadata import version

    from langchain_ripplemem.embeddings import MiniLMOnnxEmbeddings

    runtime = MiniLMOnnxEmbeddings().runtime
    assert f"onnxruntime {version('onnxruntime')}" in runtime and f"tokenizers {version('tokenizers')}" in runtime
    assert CachedEmbeddings(MiniLMOnnxEmbeddings(), "/unused").vectors_id.endswith(runtime)


def test_each_save_writes_only_the_new_vectors_as_its_own_shard(tmp_path):
    cache = CachedEmbeddings(Encoder(), tmp_path)
    cache.embed_documents(["one", "two"])
    first = cache.save()
    before = first.read_bytes()
    cache.embed_documents(["two", "three"])
    second = cache.save()
    assert second != first and first.read_bytes() == before  # the old shard is not rewritten
    with np.load(second) as data:
        assert len(data["keys"]) == 1 and data["vectors"].shape == (1, BagOfWordsEmbeddings.dim)
    assert len(CachedEmbeddings(Encoder(), tmp_path)) == 3


def test_the_cache_holds_its_keys_in_a_few_dozen_bytes_a_text(tmp_path):
    # A dict of hex keys -> (shard, row) held ~200 bytes a text: a cold LongMemEval run
    # (52,000 texts) grew by 10 MB for the index alone, which the run's RSS counted.
    class Tiny:
        model_id = "tiny"

        def embed_documents(self, texts):
            return [[float(len(t)), 1.0] for t in texts]

    writer = CachedEmbeddings(Tiny(), tmp_path)
    for part in range(4):  # four shards, merged into one sorted index on reading
        writer.embed_documents([f"text {part} {i}" for i in range(5_000)])
        writer.save()
    reader = CachedEmbeddings(Tiny(), tmp_path)
    tracemalloc.start()
    try:
        assert len(reader) == 20_000
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 64 * 20_000, f"{held / 20_000:.0f} bytes a text"
    assert reader.embed_documents(["text 3 4999", "text 0 0"]) == [[11.0, 1.0], [8.0, 1.0]]
    assert reader.embedded == 0 and reader.reused == 2


def test_a_save_that_fails_leaves_the_cache_as_it_was(tmp_path, monkeypatch):
    cache = CachedEmbeddings(Encoder(), tmp_path)
    cache.embed_documents(["one"])
    cache.save()
    cache.embed_documents(["two"])

    def broken(handle, **arrays):
        handle.write(b"PK half a zip")
        raise OSError("disk full")

    monkeypatch.setattr(cached_embeddings.np, "savez", broken)
    with pytest.raises(OSError, match="disk full"):
        cache.save()
    monkeypatch.undo()
    folder = cache.folder
    assert sorted(p.name.startswith("shard-") for p in folder.iterdir()) == [True]  # no partial file left
    base = Encoder()
    assert CachedEmbeddings(base, tmp_path).embed_documents(["one", "two"]) and base.texts == ["two"]


def test_cache_arguments_are_checked(tmp_path):
    class Anonymous(BagOfWordsEmbeddings):
        pass

    with pytest.raises(ValueError, match="needs an encoder with a model_id"):
        CachedEmbeddings(Anonymous(), tmp_path).embed_documents(["x"])
    assert CachedEmbeddings(Anonymous()).embed_documents(["x"])  # in memory only: no model_id needed
    old = tmp_path / "vectors.npz"
    old.write_bytes(b"old")
    with pytest.raises(ValueError, match="is a file"):
        CachedEmbeddings(Encoder(), old)


def test_the_default_cache_directory_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("RIPPLEMEM_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "langchain-ripplemem" / "embeddings"
    monkeypatch.setenv("RIPPLEMEM_CACHE_DIR", str(tmp_path / "mine"))
    assert default_cache_dir() == tmp_path / "mine" / "embeddings"


def test_the_runner_saves_vectors_after_every_conversation(locomo, tmp_path):
    cache = CachedEmbeddings(Encoder(), tmp_path)
    factory = FreshMemories("locomo", embeddings=cache)
    run_benchmark("locomo", locomo, ["bm25"], [1], memory_factory=factory, progress=False, limit=1)
    assert len(list(cache.folder.glob("shard-*.npz"))) == len(locomo)


def test_cli_caches_vectors_by_default_and_not_with_no_embedding_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RIPPLEMEM_CACHE_DIR", str(tmp_path / "cache"))
    args = ["locomo", str(LOCOMO_TINY), "--systems", "dense,bm25", "--k", "1,3", "--limit", "1",
            "--questions", "3", "--no-progress"]
    assert bench_main([*args, "--out", str(tmp_path / "first.json")]) == 0
    shards = sorted((tmp_path / "cache" / "embeddings").rglob("shard-*.npz"))
    assert len(shards) == 1
    assert bench_main([*args, "--out", str(tmp_path / "second.json")]) == 0
    assert sorted((tmp_path / "cache" / "embeddings").rglob("shard-*.npz")) == shards  # nothing new
    first, second = (json.loads((tmp_path / f"{n}.json").read_text(encoding="utf-8")) for n in ("first", "second"))
    assert first["systems"]["dense"]["by_category"] == second["systems"]["dense"]["by_category"]
    monkeypatch.setenv("RIPPLEMEM_CACHE_DIR", str(tmp_path / "other"))
    assert bench_main([*args, "--no-embedding-cache"]) == 0
    assert not (tmp_path / "other").exists()
    assert bench_main([*args, "--no-embedding-cache", "--embedding-cache", str(tmp_path)]) == 2


# -- 2. resumable runs ----------------------------------------------------------------------------

class Interrupted(Exception):
    pass


def _systems_failing_on(conversation_id):
    def factory(name, memory, config):
        from benchmarks.systems import make_system

        system = make_system(name, memory, config)

        class Failing:
            def __init__(self):
                self.name = name

            def retrieve(self, question, namespace, k):
                if namespace == (conversation_id,):
                    raise Interrupted(namespace)
                return system.retrieve(question, namespace, k)

            def describe(self):
                return system.describe()

        return Failing()

    return factory


def test_an_interrupted_run_resumes_where_it_stopped_and_ends_as_one_run(locomo, tmp_path):
    path = tmp_path / "run.checkpoint.jsonl"
    kwargs = {"memory_factory": FakeMemory, "progress": False, "keep_questions": True, "checkpoint": path}
    whole = run_benchmark("locomo", locomo, ["bm25", "ripplemem"], [1, 3], **{**kwargs, "checkpoint": None})
    with pytest.raises(Interrupted):
        run_benchmark("locomo", locomo, ["bm25", "ripplemem"], [1, 3], system_factory=_systems_failing_on("conv-48"),
                      **kwargs)
    assert [json.loads(line).get("id") for line in path.read_text().splitlines()] == [None, "conv-26"]
    made = []

    def counting():
        made.append(FakeMemory())
        return made[-1]

    resumed = run_benchmark("locomo", locomo, ["bm25", "ripplemem"], [1, 3], **{**kwargs, "memory_factory": counting})
    assert len(made) == 1  # conv-26 came from the checkpoint; only conv-48 was built
    assert _untimed(resumed) == _untimed(whole)


def test_a_checkpoint_of_another_run_is_refused_unless_restarted(locomo, tmp_path):
    path = tmp_path / "run.checkpoint.jsonl"
    kwargs = {"memory_factory": FakeMemory, "progress": False, "checkpoint": path}
    run_benchmark("locomo", locomo, ["bm25"], [1, 3], **kwargs)
    with pytest.raises(ValueError, match=r"another run: k \(\[1, 3\] in the checkpoint, \[1, 5\] now\).*--restart"):
        run_benchmark("locomo", locomo, ["bm25"], [1, 5], **kwargs)
    res = run_benchmark("locomo", locomo, ["bm25"], [1, 5], restart=True, **kwargs)
    assert res["n_conversations"] == 2


def test_a_line_cut_short_by_a_crash_is_run_again(locomo, tmp_path):
    path = tmp_path / "run.checkpoint.jsonl"
    kwargs = {"memory_factory": FakeMemory, "progress": False, "checkpoint": path}
    whole = run_benchmark("locomo", locomo, ["bm25"], [1, 3], **kwargs)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:2] + [lines[2][:40]]) + "\n")  # the last entry half-written
    made = []

    def counting():
        made.append(FakeMemory())
        return made[-1]

    again = run_benchmark("locomo", locomo, ["bm25"], [1, 3], **{**kwargs, "memory_factory": counting})
    assert len(made) == 1 and _untimed(again) == _untimed(whole)
    assert len(path.read_text().splitlines()) == 3  # header + two whole entries


def test_cli_checkpoints_beside_out_and_removes_it_when_done(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(runner, "default_memory_factory", lambda dataset: FakeMemory)
    out = tmp_path / "r.json"
    args = ["locomo", str(LOCOMO_TINY), "--systems", "bm25", "--k", "1,3", "--no-progress",
            "--no-embedding-cache", "--out", str(out)]
    stale = Checkpoint(checkpoint_path(out))
    stale.resume({"dataset": "locomo", "k": [9]})
    assert bench_main(args) == 2
    assert "another run" in capsys.readouterr().err and not out.exists()
    assert bench_main([*args, "--restart"]) == 0
    assert out.is_file() and not checkpoint_path(out).exists()


# -- 3. progress inside a build -------------------------------------------------------------------

def _long_conversation(turns: int) -> Conversation:
    return Conversation(id="long", sessions=[Session(id="s1", turns=[
        Turn(id=f"t{i}", speaker="Maya", text=f"Maya mentioned topic number {i} with detail {i * 7}.")
        for i in range(turns)])])


def test_add_conversation_reports_embedding_progress_sync_and_async():
    heard: list[tuple[int, int]] = []
    with RippleMem(BagOfWordsEmbeddings()) as memory:
        report = memory.add_conversation(_long_conversation(300), namespace=("a",),
                                         on_embedded=lambda *p: heard.append(p))
        assert heard[0] == (0, report.new_units) and heard[-1] == (report.new_units, report.new_units)
        assert any(0 < done < total for done, total in heard)  # it moved inside the build
        heard.clear()
        asyncio.run(memory.aadd_conversation(_long_conversation(3), namespace=("b",),
                                             on_embedded=lambda *p: heard.append(p)))
        assert heard[-1][0] == heard[-1][1] > 0


def test_the_run_bar_moves_while_a_memory_is_built(locomo, monkeypatch):
    seen: list[int] = []

    class Watching(RunProgress):
        def finish(self):
            seen.append(self.done_turns)  # before finish() tops the conversation up
            super().finish()

    monkeypatch.setattr(runner, "RunProgress", Watching)
    factory = FreshMemories("locomo", embeddings=CachedEmbeddings(BagOfWordsEmbeddings()))
    run_benchmark("locomo", locomo[:1], ["bm25"], [1], memory_factory=factory, progress=False, limit=1)
    assert seen == [len(locomo[0].conversation.turns())]


# -- 4. flat memory: closing an in-memory memory frees its store ------------------------------------

def test_closing_an_in_memory_memory_frees_its_chroma_collections():
    observer = chroma_client(None)  # shares the process-wide in-memory store, keeping it alive
    try:
        before = {c.name for c in observer.list_collections()}
        memory = RippleMem(BagOfWordsEmbeddings())
        memory.add_conversation(_long_conversation(3), namespace=("a",))
        assert {c.name for c in observer.list_collections()} - before  # the memory's own collections
        memory.close()
        assert {c.name for c in observer.list_collections()} == before
    finally:
        observer.close()


def test_no_text_memo_outlives_a_conversation(locomo):
    from langchain_ripplemem.text.cue_scores import _cue_set
    from langchain_ripplemem.text.lexical import stem

    factory = FreshMemories("locomo", embeddings=CachedEmbeddings(BagOfWordsEmbeddings()))
    run_benchmark("locomo", locomo, ["ripplemem"], [1], memory_factory=factory, progress=False, limit=1)
    assert stem.cache_info().currsize == 0 and _cue_set.cache_info().currsize == 0


def test_each_conversation_row_records_resident_memory(locomo):
    res = run_benchmark("locomo", locomo, ["bm25"], [1], memory_factory=FakeMemory, progress=False)
    assert all(row["rss_mb"] is None or row["rss_mb"] > 0 for row in res["conversations"])
    assert all("rss_mb" in row for row in res["conversations"])
    for row in res["conversations"]:  # the live part of the heap: on glibc, less than all that is resident
        assert row["heap_in_use_mb"] is None or 0 < row["heap_in_use_mb"] < row["rss_mb"]


# -- 5. first query apart, 6. shortfall ------------------------------------------------------------

def test_first_queries_are_timed_apart_from_the_percentiles(locomo):
    plain = run_benchmark("locomo", locomo, ["bm25"], [1], memory_factory=FakeMemory, progress=False)
    entry = plain["systems"]["bm25"]
    assert entry["n_timed_queries"] == plain["n_questions"] - len(locomo)  # each memory's first question apart
    assert entry["first_query_ms_p50"] is not None
    warm = run_benchmark("locomo", locomo, ["bm25"], [1], memory_factory=FakeMemory, progress=False,
                         warmup="anything new?")
    assert warm["systems"]["bm25"]["n_timed_queries"] == warm["n_questions"]
    markdown = results_markdown(warm)
    assert "first query p50 ms" in markdown and "'anything new?'" in markdown


def test_shortfall_is_reported_beside_recall(locomo):
    class Two:
        def __init__(self, name, memory):
            self.name, self.memory = name, memory

        def retrieve(self, question, namespace, k):
            return Retrieved(units=self.memory.units[namespace][:2])

    res = run_benchmark("locomo", locomo, ["two"], [1, 4], memory_factory=FakeMemory, progress=False,
                        system_factory=lambda name, memory, config: Two(name, memory))
    overall = res["systems"]["two"]["by_category"]["overall_1_4"]
    assert overall["shortfall@1"] == 0.0 and overall["shortfall@4"] == 1.0
    assert overall["units_mean@4"] == 2.0
    markdown = results_markdown(res)
    table = markdown.split("### recall_all@4 (%)")[1].split("###")[0]
    assert "shortfall@4 (%)" in table and "| 100.0 |" in table
