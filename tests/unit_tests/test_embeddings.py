"""Tests of MiniLMOnnxEmbeddings: LangChain standard suites plus behaviour checks."""

from __future__ import annotations

import asyncio
import shutil
import threading

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_tests.integration_tests import EmbeddingsIntegrationTests
from langchain_tests.unit_tests import EmbeddingsUnitTests
from pydantic import ValidationError

from benchmarks.cached_embeddings import default_cache_dir
from langchain_ripplemem import embeddings as embeddings_module
from langchain_ripplemem._runtime import minilm_models
from langchain_ripplemem.embeddings import DIMENSION, FLOAT_MODEL_ID, MODEL_ID, MiniLMOnnxEmbeddings


class TestMiniLMOnnxEmbeddingsStandardUnit(EmbeddingsUnitTests):
    @property
    def embeddings_class(self) -> type[MiniLMOnnxEmbeddings]:
        return MiniLMOnnxEmbeddings

    @property
    def embedding_model_params(self) -> dict:
        return {"batch_size": 16}


# Runs offline: the "integration" suite only needs the local model file.
class TestMiniLMOnnxEmbeddingsStandardIntegration(EmbeddingsIntegrationTests):
    @property
    def embeddings_class(self) -> type[MiniLMOnnxEmbeddings]:
        return MiniLMOnnxEmbeddings

    @property
    def embedding_model_params(self) -> dict:
        return {"batch_size": 16}


@pytest.fixture(scope="module")
def emb() -> MiniLMOnnxEmbeddings:
    return MiniLMOnnxEmbeddings()


def one_by_one(emb: MiniLMOnnxEmbeddings, texts: list[str]) -> np.ndarray:
    return np.stack([np.asarray(emb.embed_query(t), dtype=np.float32) for t in texts])


MIXED = [
    "Maya is allergic to shellfish.",
    "hi",
    "Sam's cousin works at Harbor Grill, which has the best oysters in town, "
    "and he says the Friday special is always sold out by seven.",
    "",
    "Priya moved to Lisbon last spring.",
    "ok " * 40,
    "Leo",
]


def test_dimension_and_model_id(emb: MiniLMOnnxEmbeddings) -> None:
    assert emb.dimension == DIMENSION == 384
    assert emb.model_id == MODEL_ID
    assert "MiniLM" in emb.model_id
    assert len(emb.embed_query("hello")) == 384


def test_embed_array_shape_dtype_and_unit_norm(emb: MiniLMOnnxEmbeddings) -> None:
    arr = emb.embed_array(MIXED)
    assert arr.shape == (len(MIXED), 384)
    assert arr.dtype == np.float32
    assert np.all(np.isfinite(arr))
    np.testing.assert_allclose(np.linalg.norm(arr, axis=1), 1.0, atol=1e-5)


def test_embed_documents_matches_embed_array(emb: MiniLMOnnxEmbeddings) -> None:
    docs = emb.embed_documents(MIXED)
    assert all(isinstance(v, list) and isinstance(v[0], float) for v in docs)
    np.testing.assert_allclose(np.asarray(docs), emb.embed_array(MIXED), atol=1e-6)


def test_order_preserved_in_mixed_length_batches(emb: MiniLMOnnxEmbeddings) -> None:
    # batch_size 2 forces several sorted batches that must be put back in order.
    small = MiniLMOnnxEmbeddings(batch_size=2)
    batched = small.embed_array(MIXED)
    single = one_by_one(emb, MIXED)
    np.testing.assert_allclose(batched, single, atol=1e-4)
    # Each row is closest to its own text, so a permutation would be caught.
    assert list(np.argmax(batched @ single.T, axis=1)) == list(range(len(MIXED)))


def test_same_vector_whatever_the_batch_neighbours(emb: MiniLMOnnxEmbeddings) -> None:
    text = "We booked the flights to Lisbon for the second week of May."
    alone = emb.embed_array([text])[0]
    with_long = emb.embed_array(["lorem ipsum dolor " * 80, text])[1]
    with_short = emb.embed_array([text, "ok", "yes"])[0]
    np.testing.assert_allclose(with_long, alone, atol=1e-4)
    np.testing.assert_allclose(with_short, alone, atol=1e-4)


def test_long_text_is_truncated(emb: MiniLMOnnxEmbeddings) -> None:
    words = " ".join(f"word{i % 50}" for i in range(5000))
    vec = emb.embed_array([words])[0]
    assert vec.shape == (384,)
    np.testing.assert_allclose(np.linalg.norm(vec), 1.0, atol=1e-5)
    # Everything past max_length is dropped, so a different tail changes nothing.
    other_tail = emb.embed_array([words + " completely different ending about oysters"])[0]
    np.testing.assert_allclose(vec, other_tail, atol=1e-5)


def test_max_length_changes_what_is_seen() -> None:
    text = "Maya loves hiking. " + "She also talks about her cat a lot. " * 20
    short = MiniLMOnnxEmbeddings(max_length=8).embed_array([text])[0]
    full = MiniLMOnnxEmbeddings(max_length=256).embed_array([text])[0]
    assert float(short @ full) < 0.999


def test_similar_sentences_are_closer(emb: MiniLMOnnxEmbeddings) -> None:
    a, b, c = emb.embed_array(
        [
            "Maya is allergic to shellfish.",
            "Shellfish gives Maya an allergic reaction.",
            "The train to Portland leaves at nine tomorrow.",
        ]
    )
    assert float(a @ b) > float(a @ c) + 0.2


def test_empty_inputs(emb: MiniLMOnnxEmbeddings) -> None:
    assert emb.embed_documents([]) == []
    assert emb.embed_array([]).shape == (0, 384)
    vec = emb.embed_query("")
    assert len(vec) == 384
    np.testing.assert_allclose(np.linalg.norm(vec), 1.0, atol=1e-5)


def test_non_string_item_names_its_index(emb: MiniLMOnnxEmbeddings) -> None:
    with pytest.raises(TypeError, match=r"texts\[2\]"):
        emb.embed_documents(["a", "b", 3])  # type: ignore[list-item]
    with pytest.raises(TypeError, match=r"texts\[0\]"):
        emb.embed_array([None])  # type: ignore[list-item]


def test_single_string_is_rejected_for_documents(emb: MiniLMOnnxEmbeddings) -> None:
    with pytest.raises(TypeError, match="embed_query"):
        emb.embed_documents("not a list")  # type: ignore[arg-type]


def test_non_string_query_is_rejected(emb: MiniLMOnnxEmbeddings) -> None:
    with pytest.raises(TypeError, match="text must be str"):
        emb.embed_query(42)  # type: ignore[arg-type]


async def test_async_rejects_bad_input(emb: MiniLMOnnxEmbeddings) -> None:
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        await emb.aembed_documents(["ok", b"bytes"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="text must be str"):
        await emb.aembed_query(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"batch_size": 0}, "batch_size"),
        ({"max_length": 1}, "max_length"),
        ({"max_length": 513}, "max_length"),
        ({"max_batch_tokens": 0}, "max_batch_tokens"),
        ({"intra_op_num_threads": 0}, "intra_op_num_threads"),
        ({"workers": 0}, "workers"),
        ({"model": "other"}, "model"),
        ({"kernels": "fp16"}, "kernels"),
    ],
)
def test_bad_constructor_arguments(params: dict, field: str) -> None:
    with pytest.raises(ValidationError, match=field) as info:
        MiniLMOnnxEmbeddings(**params)
    assert isinstance(info.value, ValueError)


async def test_async_matches_sync(emb: MiniLMOnnxEmbeddings) -> None:
    texts = ["first memory", "second, somewhat longer memory about Lisbon"]
    docs, query = await asyncio.gather(emb.aembed_documents(texts), emb.aembed_query(texts[0]))
    np.testing.assert_allclose(np.asarray(docs), emb.embed_array(texts), atol=1e-6)
    np.testing.assert_allclose(query, docs[0], atol=1e-6)


def test_concurrent_threads_agree(emb: MiniLMOnnxEmbeddings) -> None:
    expected = emb.embed_array(MIXED)
    results: list[np.ndarray] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            # A fresh instance shares the process-wide session and tokenizer.
            results.append(MiniLMOnnxEmbeddings().embed_array(MIXED))
        except BaseException as exc:  # collected and asserted in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(results) == 4
    for got in results:
        np.testing.assert_allclose(got, expected, atol=1e-5)


# --------------------------------------------------------------------------- bounded forward passes


class RecordingSession:
    """The real onnxruntime session, noting the shape of every batch it is given."""

    def __init__(self, inner: object, shapes: list[tuple[int, int]]) -> None:
        self.inner, self.shapes = inner, shapes

    def run(self, names: list[str], feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        self.shapes.append(feeds["input_ids"].shape)
        return self.inner.run(names, feeds)  # type: ignore[attr-defined,no-any-return]


@pytest.fixture
def batch_shapes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    shapes: list[tuple[int, int]] = []
    real = embeddings_module._load_session
    monkeypatch.setattr(embeddings_module, "_load_session",
                        lambda kernels, threads: RecordingSession(real(kernels, threads), shapes))
    return shapes


LONG = "Maya told Sam about the ferry to Lisbon, the grilled sardines and the rain. " * 20


@pytest.mark.parametrize("kernels", ["float", "integer"])
def test_forward_passes_are_bounded_whatever_the_input(batch_shapes: list[tuple[int, int]], kernels: str) -> None:
    # Issue 12, item 15: 64 long texts ran as one 64 x 256 pass (above 1 GB of activations).
    # A small window and budget keep the test fast; the defaults follow the same rule.
    emb = MiniLMOnnxEmbeddings(max_length=64, max_batch_tokens=160, kernels=kernels)
    biggest = []
    for n_long in (2, 40):
        batch_shapes.clear()
        vectors = emb.embed_array([LONG] * n_long + ["hi", "ok then", ""])
        assert vectors.shape == (n_long + 3, DIMENSION)
        assert sum(rows for rows, _ in batch_shapes) == n_long + 3
        for rows, width in batch_shapes:
            assert width <= emb.max_length and rows <= emb.batch_size
            assert rows * width <= emb.max_batch_tokens
        biggest.append(max(rows * width for rows, width in batch_shapes))
    assert len(set(biggest)) == 1  # the largest pass does not grow with the input


def test_budgeted_batches_give_the_same_vectors(emb: MiniLMOnnxEmbeddings) -> None:
    texts = [LONG, "Maya is allergic to shellfish.", LONG[:700], "hi"]
    roomy = MiniLMOnnxEmbeddings(max_batch_tokens=100_000).embed_array(texts)
    np.testing.assert_allclose(emb.embed_array(texts), roomy, atol=1e-4)


@given(st.lists(st.integers(min_value=2, max_value=512), max_size=80),
       st.integers(min_value=1, max_value=70), st.integers(min_value=1, max_value=4096))
def test_batches_take_every_text_once_within_the_limits(lengths: list[int], batch_size: int,
                                                       budget: int) -> None:
    emb = MiniLMOnnxEmbeddings(batch_size=batch_size, max_batch_tokens=budget, max_length=512, kernels="float")
    batches = emb.batches(lengths)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    for batch in batches:
        assert 1 <= len(batch) <= batch_size
        assert len(batch) == 1 or len(batch) * max(lengths[i] for i in batch) <= budget


def test_count_tokens_counts_past_the_window(emb: MiniLMOnnxEmbeddings) -> None:
    short, long = emb.count_tokens(["Maya is allergic to shellfish.", LONG])
    assert short == 9  # [CLS] maya is all ##ergic to shell ##fish . [SEP]
    assert long > emb.max_length


def test_a_long_turn_is_ingested_in_chunks_the_encoder_reads_whole(
        batch_shapes: list[tuple[int, int]]) -> None:
    # Issue 12, item 15, through the facade with its defaults: the turn is cut into chunks that
    # fit the encoder's window (nothing truncated), and no forward pass exceeds the token budget.
    import json
    from importlib import resources

    from langchain_ripplemem import RippleMem

    sample = json.loads(resources.files("langchain_ripplemem").joinpath(
        "data/sample_conversation.json").read_text(encoding="utf-8"))
    text = " ".join(t["text"] for s in sample["sessions"] for t in s["turns"])  # 8 kB of dialogue
    memory = RippleMem()
    try:
        memory.add_conversation({"id": "long", "sessions": [{"id": "S1", "time": "2026-02-14T10:00:00Z", "turns": [
            {"id": "t1", "speaker": "Maya", "text": text}]}]})
        emb = memory.embeddings
        assert isinstance(emb, MiniLMOnnxEmbeddings)
        units = sorted(memory.index.namespace_index(memory.default_namespace).units, key=lambda u: u.metadata["chunk"])
        assert len(units) > 1
        assert " ".join(u.restatement.removeprefix("Maya: ") for u in units) == " ".join(text.split())
        assert max(emb.count_tokens([u.restatement for u in units])) <= emb.max_length
        assert batch_shapes and all(rows * width <= emb.max_batch_tokens for rows, width in batch_shapes)
    finally:
        memory.close()


# -- kernels (issue 17, item 3) ------------------------------------------------------------
def test_model_id_follows_the_settings_that_change_vectors() -> None:
    ids = {(kernels, length): MiniLMOnnxEmbeddings(kernels=kernels, max_length=length).model_id
           for kernels in ("integer", "float") for length in (128, 256, 512)}
    assert len(set(ids.values())) == len(ids)
    assert ids["integer", 256] == MODEL_ID and ids["float", 256] == FLOAT_MODEL_ID
    # what does not change vectors keeps the id, so caches and indexes stay valid
    assert MiniLMOnnxEmbeddings(batch_size=3, max_batch_tokens=99, intra_op_num_threads=1).model_id == MODEL_ID


def test_defaults_are_the_measured_fastest_path() -> None:
    # docs/benchmarks.md, "Encoder throughput": integer kernels, one thread per pass.
    emb = MiniLMOnnxEmbeddings()
    assert (emb.kernels, emb.intra_op_num_threads, emb.max_length) == ("integer", 1, 256)


def test_threads_do_not_change_the_vectors() -> None:
    # model_id leaves threads out, so vectors made with any thread count may share a cache.
    one = MiniLMOnnxEmbeddings(intra_op_num_threads=1).embed_array(MIXED)
    np.testing.assert_allclose(MiniLMOnnxEmbeddings(intra_op_num_threads=2).embed_array(MIXED), one, atol=1e-5)


@given(st.lists(st.integers(min_value=2, max_value=512), max_size=80), st.integers(min_value=1, max_value=70))
def test_integer_kernels_run_each_text_alone(lengths: list[int], batch_size: int) -> None:
    batches = MiniLMOnnxEmbeddings(batch_size=batch_size).batches(lengths)
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    assert all(len(batch) == 1 for batch in batches)
    assert [lengths[b[0]] for b in batches] == sorted(lengths)  # still shortest first


def test_integer_vectors_do_not_depend_on_the_pass() -> None:
    # Activations are quantized with one scale per pass: were texts batched, a short text's
    # vector would move with the long text beside it (cosine ~0.98), and an embedding cache
    # keyed by text would hold whichever happened first.
    emb = MiniLMOnnxEmbeddings()
    alone = emb.embed_array(["Maya is allergic to shellfish."])
    beside = emb.embed_array(["Maya is allergic to shellfish.", LONG, "hi"])
    np.testing.assert_array_equal(beside[0], alone[0])
    np.testing.assert_array_equal(np.asarray(emb.embed_query("hi"), dtype=np.float32), beside[2])


def test_float_and_integer_kernels_agree_closely_but_not_exactly() -> None:
    integer = MiniLMOnnxEmbeddings().embed_array(MIXED)
    floats = MiniLMOnnxEmbeddings(kernels="float").embed_array(MIXED)
    cosines = (integer * floats).sum(axis=1)
    assert cosines.min() > 0.95
    assert not np.allclose(integer, floats, atol=1e-4)  # distinct vectors, hence distinct model ids


def test_integer_graph_is_built_once_and_named_by_its_inputs(tmp_path) -> None:
    import onnx

    path = minilm_models.integer_model_path(tmp_path)
    assert path.parent == tmp_path and path.name.startswith("all-MiniLM-L6-v2-int8-dynamic-")
    ops = {node.op_type for node in onnx.load(str(path)).graph.node}
    assert "MatMulInteger" in ops and "DynamicQuantizeLinear" in ops
    stamp = path.stat().st_mtime_ns
    assert minilm_models.integer_model_path(tmp_path) == path and path.stat().st_mtime_ns == stamp
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no leftovers from the build


def test_integer_graph_builds_elsewhere_when_the_cache_cannot_be_written(tmp_path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    path = minilm_models.integer_model_path(blocked / "cache")
    try:
        assert path.is_file() and blocked not in path.parents
    finally:
        shutil.rmtree(path.parent, ignore_errors=True)  # the process-only fallback is left to its user


def test_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    # The variable names the package's cache folder itself, as for the bench's vectors.
    monkeypatch.setenv("RIPPLEMEM_CACHE_DIR", str(tmp_path))
    assert minilm_models.cache_dir() == tmp_path
    assert default_cache_dir() == tmp_path / "embeddings"
    monkeypatch.delenv("RIPPLEMEM_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert minilm_models.cache_dir() == tmp_path / "xdg" / "langchain-ripplemem"


def test_unknown_kernels_are_rejected_by_name() -> None:
    with pytest.raises(ValueError, match="kernels"):
        minilm_models.load_session("fp16", None)  # type: ignore[arg-type]


def test_passes_on_two_workers_give_the_same_vectors_bit_for_bit() -> None:
    # docs/import.md, "Speed": passes run side by side, each alone on its thread, so the
    # vectors (and a store's unit ids and edges) are those of one worker, exactly.
    texts = [*MIXED, LONG, "", "Maya moved to Porto.", "Sam", *(f"memory number {i} about Lisbon" for i in range(40))]
    one = MiniLMOnnxEmbeddings().embed_array(texts)
    two = MiniLMOnnxEmbeddings(workers=2).embed_array(texts)
    np.testing.assert_array_equal(two, one)
    assert MiniLMOnnxEmbeddings(workers=2).model_id == MODEL_ID
    float_one = MiniLMOnnxEmbeddings(kernels="float").embed_array(texts)
    np.testing.assert_array_equal(MiniLMOnnxEmbeddings(kernels="float", workers=3).embed_array(texts), float_one)
