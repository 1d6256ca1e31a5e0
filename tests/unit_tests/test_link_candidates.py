"""Semantic linking from the rows over the threshold: the edges of the full top-k pool, batches as single units."""

import numpy as np

from langchain_ripplemem.config import WriteConfig
from langchain_ripplemem.index import NamespaceView
from langchain_ripplemem.memory_graph.candidates import above, similarities
from langchain_ripplemem.memory_graph.linking import link_rows
from langchain_ripplemem.schemas import MemoryUnit, Provenance

NS = ("u",)
CONFIG = WriteConfig(semantic_threshold=0.8)


def _view(n: int, seed: int = 0) -> NamespaceView:
    """Clustered unit vectors (many pairs over 0.8, most far under), with shared names for cue edges."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((12, 32))
    vectors = centres[rng.integers(0, 12, n)] + 0.45 * rng.standard_normal((n, 32))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    names = ["Harbor Grill", "Biscuit", "Lisbon", "Maya", "Oslo"]
    units = [MemoryUnit.create(namespace=NS, restatement=f"Note {i} about {names[i % 5]}.", source=Provenance(
        conversation_id="c", session_id=f"s{i // 20}", turn_ids=[str(i)])) for i in range(n)]
    view = NamespaceView(NS)
    view.add(units, vectors.astype(np.float32))
    return view


def _edges(view: NamespaceView, rows: list[int], config: WriteConfig = CONFIG) -> set[tuple[str, str, str, float]]:
    return {(e.src, e.dst, e.type, e.weight) for e in link_rows(view, rows, config)}


def _reference(view: NamespaceView, row: int, config: WriteConfig) -> set[tuple[str, str, float]]:
    """METHOD.md's semantic edges: of the ``semantic_pool`` nearest earlier units, the strongest over the threshold."""
    sims = similarities(view.matrix, list(range(row)), view.matrix[row])
    pool = sorted(range(row), key=lambda j: (-sims[j], -j))[: config.semantic_pool]
    kept = sorted((j for j in pool if sims[j] >= config.semantic_threshold), key=lambda j: (-sims[j], -j))
    return {(view.ids[row], view.ids[j], round(float(sims[j]), 6)) for j in kept[: config.max_semantic_edges]}


def test_semantic_edges_are_the_top_pools_strongest():
    view = _view(300)
    rows = list(range(150, 300))
    got = {(s, d, w) for s, d, t, w in _edges(view, rows) if t == "semantic"}
    assert len(got) > 300  # most new units have several
    want = set().union(*(_reference(view, row, CONFIG) for row in rows))
    assert got == want
    # a pool smaller than the edge cap: only the pool's closest count (no cue pool adding its own)
    small = CONFIG.model_copy(update={"semantic_pool": 2, "cue_pool": 0})
    got = {(s, d, w) for s, d, t, w in _edges(view, rows, small) if t == "semantic"}
    assert got == set().union(*(_reference(view, row, small) for row in rows))


def test_above_keeps_every_row_over_the_threshold_and_only_earlier_ones():
    view = _view(200)
    block = list(range(120, 200))
    exact = view.matrix @ view.matrix.T
    for row, kept in zip(block, above(view.matrix, block, 0.8), strict=True):
        assert set(kept.tolist()) == set(np.flatnonzero(exact[row, :row] >= 0.8 - 1e-4).tolist())


def test_a_batch_links_as_one_unit_at_a_time():
    view = _view(300)
    batch = _edges(view, list(range(220, 300)))
    one_by_one = set().union(*(_edges(_view(300), [row]) for row in range(220, 300)))
    assert batch == one_by_one
