"""Spectral kernels (double centring, block products, dot-product kernels) called directly
and compared with the naive references of tests/reference.py on random inputs."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from fastdr._kernels.codes import CHEBYSHEV, MANHATTAN, MINKOWSKI, SQEUCLIDEAN
from fastdr._kernels.spectral import kernel_matrix
from fastdr._kernels.spectral.block_product import dense_times_block, upper_times_block
from fastdr._kernels.spectral.centering import double_centre_inplace
from fastdr._kernels.spectral.distance_product import GAUSSIAN, HALF_SQUARE, distance_times

from .. import reference

SHAPES = [1, 2, 5, 67, 130]


def _tolerance(dtype):
    return 1e-5 if dtype == np.float32 else 1e-12


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m", SHAPES)
@pytest.mark.parametrize("square,scale", [(True, -0.5), (False, 1.0)])
def test_double_centre_matches_the_matrix_product(rng, dtype, m, square, scale):
    X = rng.standard_normal((m, 3))
    A = np.sqrt(reference.sq_euclidean(X, X)) if square else X @ X.T
    A = A.astype(dtype)
    want, want_means = reference.double_centre(A, square, scale)
    got = A.copy()
    row_means = double_centre_inplace(got, square, scale)
    assert got.dtype == dtype and row_means.dtype == np.float64
    tol = _tolerance(dtype)
    np.testing.assert_allclose(row_means, want_means, rtol=tol, atol=0)
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * max(1.0, np.abs(want).max()))
    np.testing.assert_allclose(got.sum(axis=0), 0.0, atol=tol * m * max(1.0, np.abs(A).max()))


def test_double_centre_of_one_point_is_zero():
    A = np.array([[3.0]])
    assert double_centre_inplace(A, True, -0.5).tolist() == [9.0]
    assert A.tolist() == [[0.0]]


def test_double_centre_reports_a_float32_square_that_overflows():
    A = np.full((3, 3), 3e19, dtype=np.float32)  # its square is inf in float32
    row_means = double_centre_inplace(A, True, -0.5)
    assert np.isinf(row_means).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m,n,b", [(1, 1, 1), (3, 5, 2), (4, 7, 1), (9, 4, 4), (83, 61, 7),
                                   (130, 17, 9)])
def test_dense_times_block_matches_numpy(rng, dtype, m, n, b):
    A = rng.standard_normal((m, n)).astype(dtype)
    Qt = rng.standard_normal((b, n)).astype(dtype)
    out = np.empty((m, b))
    dense_times_block(A, Qt, out)
    want = A.astype(np.float64) @ Qt.astype(np.float64).T
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12 * np.abs(A).sum(1).max())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m,b", [(1, 1), (3, 2), (4, 1), (9, 4), (70, 5), (131, 3), (600, 2)])
def test_upper_times_block_reads_only_the_upper_triangle(rng, dtype, m, b):
    A = rng.standard_normal((m, m))
    A = (A + A.T).astype(dtype)
    stored = A.copy()
    stored[np.tril_indices(m, -1)] = np.nan  # never read
    Qt = rng.standard_normal((b, m)).astype(dtype)
    out = np.full((m, b), np.nan)
    upper_times_block(stored, Qt, out)
    want = A.astype(np.float64) @ Qt.astype(np.float64).T
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12 * np.abs(A).sum(1).max())


_DOT_KERNELS = {"linear": kernel_matrix.LINEAR, "poly": kernel_matrix.POLY,
                "sigmoid": kernel_matrix.SIGMOID, "cosine": kernel_matrix.COSINE}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m,n", [(1, 1), (1, 6), (7, 5), (40, 33)])
@pytest.mark.parametrize("kernel", list(_DOT_KERNELS))
def test_dot_kernel_inplace_matches_the_formulas(rng, dtype, m, n, kernel):
    X = rng.standard_normal((m, 4)).astype(dtype)
    Y = rng.standard_normal((n, 4)).astype(dtype)
    Y[0] = 0.0  # a zero row: the cosine kernel is 0 there
    gamma, coef0, degree = 0.3, 0.7, 3.0
    K = (X.astype(np.float64) @ Y.astype(np.float64).T).astype(dtype)

    def inverse_norms(Z):
        norms = np.linalg.norm(Z.astype(np.float64), axis=1)
        return 1.0 / np.where(norms == 0, 1.0, norms)

    kernel_matrix.dot_kernel_inplace(K, _DOT_KERNELS[kernel], gamma, coef0, degree,
                                     inverse_norms(X), inverse_norms(Y))
    want = reference.kernel_matrix(X, Y, kernel, gamma, degree=degree, coef0=coef0)
    assert K.dtype == dtype
    tol = _tolerance(dtype)
    np.testing.assert_allclose(K, want, rtol=tol, atol=tol * np.abs(want).max())
    if kernel == "cosine":
        assert (K[:, 0] == 0).all()


@pytest.mark.parametrize("m,tile,chunks", [(517, 64, 1), (517, 64, 3), (40, 256, 2),
                                           (300, 100, 7)])
@pytest.mark.parametrize("case", ["rbf", "sqeuclidean", "manhattan", "chebyshev",
                                  "minkowski"])
def test_fused_distance_product_equals_the_naive_product(m, tile, chunks, case):
    rng = np.random.default_rng(m)
    X = rng.standard_normal((m, 4))
    V = rng.standard_normal((m, 5))
    metric, p, value, gamma, power = {
        "rbf": (SQEUCLIDEAN, 2.0, GAUSSIAN, 0.3, 1.0),
        "sqeuclidean": (SQEUCLIDEAN, 2.0, HALF_SQUARE, 0.0, 1.0),
        "manhattan": (MANHATTAN, 1.0, HALF_SQUARE, 0.0, 2.0),
        "chebyshev": (CHEBYSHEV, 1.0, HALF_SQUARE, 0.0, 2.0),
        "minkowski": (MINKOWSKI, 3.0, HALF_SQUARE, 0.0, 2.0 / 3.0)}[case]
    acc = np.zeros((chunks, m, 5))
    distance_times(X, np.ascontiguousarray(X.T), metric, p, value, gamma, power, V, tile,
                   acc)
    if case == "rbf":
        A = reference.kernel_matrix(X, X, "rbf", 0.3)
    else:
        D = cdist(X, X, "minkowski", p=3) if case == "minkowski" else cdist(
            X, X, {"sqeuclidean": "euclidean", "manhattan": "cityblock"}.get(case, case))
        A = -0.5 * D ** 2
    np.testing.assert_allclose(acc.sum(axis=0), A @ V, rtol=1e-11, atol=1e-11 * np.abs(A).max())
