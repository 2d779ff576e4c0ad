"""The one-pass centred Gram product and CSR column moments against naive NumPy."""

import numpy as np
import pytest
import scipy.sparse as sp

from fastdr._kernels.spectral.gram_product import (
    centred_gram_csr,
    centred_gram_dense,
    csr_column_moments,
)
from fastdr._runtime.threads import parallel_section
from fastdr.decomposition._pca_sparse import unsigned_index_arrays


def _reference(X, mean, v):
    Xc = np.asarray(X, dtype=np.float64) - mean
    return Xc.T @ (Xc @ v)


def _with_threads(n, fn):
    """``fn()`` inside fastdr's launch section (its thread count and fork-safe layer)."""
    with parallel_section(n):
        return fn()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m", [1, 3, 7, 130, 1001])
def test_dense_gram_matches_reference(dtype, m):
    rng = np.random.default_rng(m)
    X = (rng.standard_normal((m, 9)) * 3 + 5).astype(dtype)
    mean = X.mean(axis=0, dtype=np.float64)
    v = rng.standard_normal(9)
    out = np.empty(9)
    _with_threads(None, lambda: centred_gram_dense(X, mean, v, out))
    expected = _reference(X, mean, v)
    np.testing.assert_allclose(out, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


@pytest.mark.parametrize("m", [1, 5, 64, 777])
def test_csr_gram_matches_reference(m):
    rng = np.random.default_rng(m)
    dense = rng.standard_normal((m, 11)) * (rng.random((m, 11)) < 0.3)
    dense[m // 2] = 0.0  # an empty row
    X = sp.csr_matrix(dense)
    mean = dense.mean(axis=0)
    v = rng.standard_normal(11)
    out = np.empty(11)
    indptr, indices = unsigned_index_arrays(X)
    _with_threads(None, lambda: centred_gram_csr(indptr, indices, X.data, mean, v, out))
    np.testing.assert_allclose(out, _reference(dense, mean, v), rtol=1e-10, atol=1e-10)


def test_gram_products_do_not_depend_on_the_thread_count():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((4001, 37))
    S = sp.csr_matrix(X * (rng.random(X.shape) < 0.2))
    mean = X.mean(axis=0)
    v = rng.standard_normal(37)
    indptr, indices = unsigned_index_arrays(S)

    def both():
        a, b = np.empty(37), np.empty(37)
        centred_gram_dense(X, mean, v, a)
        centred_gram_csr(indptr, indices, S.data, mean, v, b)
        return a, b

    one = _with_threads(1, both)
    two = _with_threads(2, both)
    for x, y in zip(one, two, strict=True):
        assert np.array_equal(x, y)


def test_csr_column_moments_match_numpy():
    rng = np.random.default_rng(5)
    dense = (rng.standard_normal((300, 13)) + 1e3) * (rng.random((300, 13)) < 0.5)
    X = sp.csr_matrix(dense)
    indptr, indices = unsigned_index_arrays(X)
    mean, ssq = csr_column_moments(indptr, indices, X.data, 13)
    np.testing.assert_allclose(mean, dense.mean(axis=0), rtol=1e-13)
    np.testing.assert_allclose(ssq, ((dense - dense.mean(axis=0)) ** 2).sum(axis=0),
                               rtol=1e-12)
