"""The package's matrix products run on one BLAS thread, and give the values a plain product gives."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from langchain_ripplemem._runtime import blas

threadpoolctl = pytest.importorskip("threadpoolctl")


def blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"]


@pytest.fixture
def two_threads():
    """numpy's BLAS set to two threads for the test (the one-thread rule must be what lowers it)."""
    if not blas_threads():
        pytest.skip("numpy's BLAS is not one threadpoolctl can control")
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        yield


def test_products_inside_run_on_one_thread_and_the_setting_comes_back(two_threads):
    assert set(blas_threads()) == {2}
    with blas.one_thread():
        assert set(blas_threads()) == {1}
        with blas.one_thread():  # re-entrant
            assert set(blas_threads()) == {1}
        assert set(blas_threads()) == {1}  # still inside the outer block
    assert set(blas_threads()) == {2}


def test_overlapping_threads_restore_the_setting_only_when_the_last_leaves(two_threads):
    inside, release = threading.Event(), threading.Event()

    def hold() -> None:
        with blas.one_thread():
            inside.set()
            release.wait(10)

    worker = threading.Thread(target=hold)
    worker.start()
    inside.wait(10)
    with blas.one_thread():
        pass  # this caller leaves first: the worker is still inside
    assert set(blas_threads()) == {1}
    release.set()
    worker.join(10)
    assert set(blas_threads()) == {2}


def test_product_equals_the_plain_product():
    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((3000, 384)).astype(np.float32)
    query = rng.standard_normal(384).astype(np.float32)
    assert np.array_equal(blas.product(matrix, query), matrix @ query)
    # A matrix times a matrix: bit for bit under OpenBLAS 0.3.31.188 (numpy 2.4.5 on); older builds sum in
    # another order on one thread than on two, so the last bits may differ (numpy's floor, 1.26.2, to 2.4.3).
    np.testing.assert_allclose(blas.product(matrix[:7], matrix.T), matrix[:7] @ matrix.T, rtol=1e-5, atol=1e-3)
