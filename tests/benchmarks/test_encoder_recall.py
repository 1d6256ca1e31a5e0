"""The encoder benchmark's recall part runs both kernels over the vector cache it is given (issue 17, item 3)."""

from __future__ import annotations

import pytest

from benchmarks.scale.encoder_bench import recall
from tests.benchmarks.fixtures.bench_fakes import LOCOMO_TINY


@pytest.mark.slow
def test_recall_caches_each_kernels_vectors_apart_under_the_directory_and_compares_them(tmp_path) -> None:
    got = recall("locomo", str(LOCOMO_TINY), str(tmp_path))
    # one folder per model id: float and integer kernels are two models, their vectors never mix
    folders = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert len(folders) == 2
    assert all(any(f.glob("shard-*.npz")) for f in folders)
    scores = got["recall_all"]
    assert set(scores) == {"float", "integer"}
    for system, row in got["integer_minus_float_points"].items():
        for key, delta in row.items():
            assert delta == round(100 * (scores["integer"][system][key] - scores["float"][system][key]), 2)
    assert all(flips["questions"] > 0 for flips in got["questions_that_flip"].values())
