"""Semantic linking from the rows over the threshold, or a bound on them: the full top-k pool's edges, batch or not."""

import numpy as np
import pytest

from langchain_ripplemem.config import WriteConfig
from langchain_ripplemem.index.namespace_index import NamespaceIndex
from langchain_ripplemem.write.linking import candidates, local_linking
from langchain_ripplemem.write.linking.candidates import Projection, above, leading, projection, similarities
from langchain_ripplemem.write.linking.local_linking import link_rows

from .conftest import make_unit

NS = ("u",)
CONFIG = WriteConfig(linking={"semantic_threshold": 0.8})


def _index(n: int, seed: int = 0) -> NamespaceIndex:
    """Clustered unit vectors (many pairs over 0.8, most far under), with shared names for cue edges."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((12, 32))
    vectors = centres[rng.integers(0, 12, n)] + 0.45 * rng.standard_normal((n, 32))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    names = ["Harbor Grill", "Biscuit", "Lisbon", "Maya", "Oslo"]
    units = [make_unit(f"Note {i} about {names[i % 5]}.", namespace=NS, session=f"s{i // 20}", turns=[str(i)])
             for i in range(n)]
    index = NamespaceIndex(NS)
    index.add(units, vectors.astype(np.float32))
    return index


def _edges(index: NamespaceIndex, rows: list[int], config: WriteConfig = CONFIG) -> set[tuple[str, str, str, float]]:
    return {(e.src, e.dst, e.type, e.weight) for e in link_rows(index, rows, config.linking)}


def _reference(index: NamespaceIndex, row: int, config: WriteConfig) -> set[tuple[str, str, float]]:
    """The paper's semantic edges: of the SEMANTIC_POOL nearest earlier units, the strongest over the threshold."""
    sims = similarities(index.matrix, list(range(row)), index.matrix[row])
    pool = sorted(range(row), key=lambda j: (-sims[j], -j))[: local_linking.SEMANTIC_POOL]
    kept = sorted((j for j in pool if sims[j] >= config.linking.semantic_threshold), key=lambda j: (-sims[j], -j))
    return {(index.ids[row], index.ids[j], round(float(sims[j]), 6)) for j in kept[: local_linking.MAX_SEMANTIC_EDGES]}


def test_semantic_edges_are_the_top_pools_strongest(monkeypatch):
    index = _index(300)
    rows = list(range(150, 300))
    got = {(s, d, w) for s, d, t, w in _edges(index, rows) if t == "semantic"}
    assert len(got) > 300  # most new units have several
    want = set().union(*(_reference(index, row, CONFIG) for row in rows))
    assert got == want
    # a pool smaller than the edge cap: only the pool's closest count (no cue pool adding its own)
    monkeypatch.setattr(local_linking, "SEMANTIC_POOL", 2)
    monkeypatch.setattr(local_linking, "CUE_POOL", 0)
    got = {(s, d, w) for s, d, t, w in _edges(index, rows) if t == "semantic"}
    assert got == set().union(*(_reference(index, row, CONFIG) for row in rows))


def test_above_keeps_every_row_over_the_threshold_and_only_earlier_ones():
    index = _index(200)
    block = list(range(120, 200))
    exact = index.matrix @ index.matrix.T
    for row, kept in zip(block, above(index.matrix, block, 0.8), strict=True):
        assert set(kept.tolist()) == set(np.flatnonzero(exact[row, :row] >= 0.8 - 1e-4).tolist())


def test_a_batch_links_as_one_unit_at_a_time():
    index = _index(300)
    batch = _edges(index, list(range(220, 300)))
    one_by_one = set().union(*(_edges(_index(300), [row]) for row in range(220, 300)))
    assert batch == one_by_one


def _tied_index(n: int, seed: int = 1) -> NamespaceIndex:
    """:func:`_index` with every third vector a copy of an earlier one: exact ties at the top of many pools."""
    index = _index(n, seed)
    rng = np.random.default_rng(seed)
    matrix = index.matrix.copy()
    for row in range(3, n, 3):
        matrix[row] = matrix[rng.integers(0, row)]
    tied = NamespaceIndex(NS)
    tied.add(list(index.units), matrix)
    return tied


@pytest.mark.parametrize("dimensions", [2, 8, 96])
def test_the_projected_bound_links_the_edges_of_the_full_product(monkeypatch, dimensions):
    # Few directions leave a wide slack (the cuts by threshold and by the keep-th lower bound do
    # the work); 96 of 32 leave none. Either way the edges are the full product's, ties included.
    index = _tied_index(400)
    rows = list(range(150, 400))
    full = _edges(index, rows)
    monkeypatch.setattr(local_linking, "PROJECTED_FROM", 100)
    monkeypatch.setattr(candidates, "DIMENSIONS", dimensions)
    candidates._projections.clear()
    assert _edges(index, rows) == full
    want = set().union(*(_reference(index, row, CONFIG) for row in rows))
    assert {(s, d, w) for s, d, t, w in full if t == "semantic"} == want
    one_by_one = set().union(*(_edges(index, [row]) for row in rows))
    assert one_by_one == full


def test_leading_keeps_every_row_that_can_be_among_the_closest_and_drops_the_rest():
    index = _tied_index(500)
    matrix = index.matrix
    block, keep = list(range(300, 500)), 6
    exact = matrix @ matrix.T
    kept_total = over_total = 0
    for dimensions in (3, 12):
        projected = Projection(matrix, dimensions=dimensions)
        for row, kept in zip(block, leading(projected, matrix, block, 0.8, keep), strict=True):
            sims = exact[row, :row]
            over = np.flatnonzero(sims >= 0.8 + 1e-4)
            # the keep closest over the threshold (ties: the later row), with a rounding margin
            closest = over[np.lexsort((-over, -sims[over]))][:keep]
            assert set(closest.tolist()) <= set(kept.tolist())
            assert kept.max(initial=-1) < row
            kept_total, over_total = kept_total + len(kept), over_total + len(over)
    assert kept_total < over_total / 2  # the keep-th bound cuts: most rows over the threshold go


def test_a_projection_grows_with_its_index_and_is_renewed_past_twice_its_rows():
    index = _index(120)
    first = projection(index, index.matrix)
    assert first.rows == 120 and first.built_for == 120
    more = _index(260, seed=5)
    index.add(list(more.units)[120:200], more.matrix[120:200])
    grown = projection(index, index.matrix)
    assert grown is first and grown.rows == 200
    # every row projected, and what is left is the rest of its norm: |x|^2 = |Px|^2 + rest^2
    for held in (grown, Projection(index.matrix, dimensions=3)):
        norms = np.linalg.norm(index.matrix.astype(np.float64), axis=1) ** 2
        parts = np.linalg.norm(held.coords.astype(np.float64), axis=1) ** 2 + held.rest.astype(np.float64) ** 2
        assert np.allclose(parts, norms, atol=1e-5)
    assert Projection(index.matrix, dimensions=3).rest.min() > 0.1  # 3 of 32 directions leave much
    index.add(list(more.units)[200:], more.matrix[200:])
    assert projection(index, index.matrix) is not first  # 260 >= 2 x 120: directions taken again
    with pytest.raises(ValueError, match="dimensions"):
        Projection(index.matrix, dimensions=0)


@pytest.mark.parametrize("chunk", [7, 64, 4096])
def test_the_block_product_in_chunks_is_the_whole_product(monkeypatch, chunk):
    # Chunks that end past the block, inside it and at a row that is not a multiple of the chunk.
    matrix = _tied_index(300).matrix
    monkeypatch.setattr(candidates, "_CHUNK", chunk)
    for block in ([5, 9], list(range(200, 260)), [299]):
        upto = max(block) + 1
        got = candidates._block_product(matrix, block, upto)
        assert got.shape == (len(block), upto)
        np.testing.assert_allclose(got, matrix[block] @ matrix[:upto].T, atol=1e-5)
