import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import fastdr
from fastdr import pairwise_distances

from ..reference import sq_euclidean


@pytest.mark.parametrize("d", [2, 3, 20, 100])
@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-10), (np.float32, 1e-4)])
def test_pairwise_matches_reference_and_sklearn(rng, d, dtype, rtol):
    from sklearn.metrics import pairwise_distances as sk_pairwise

    X = (rng.standard_normal((120, d)) * 3 + 5).astype(dtype)
    Y = rng.standard_normal((70, d)).astype(dtype)
    D = pairwise_distances(X, Y)
    assert D.dtype == dtype
    ref = np.sqrt(sq_euclidean(X, Y))
    np.testing.assert_allclose(D, ref, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(D, sk_pairwise(X, Y), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(pairwise_distances(X, Y, metric="sqeuclidean"), ref**2,
                               rtol=10 * rtol, atol=10 * rtol)


@pytest.mark.parametrize("d", [3, 40])
def test_identical_rows_give_exact_zero_and_no_negatives(rng, d):
    X = rng.standard_normal((50, d)) * 1e3 + 1e4
    X[10] = X[3]
    D = pairwise_distances(X)
    assert D[3, 10] == 0.0 and D[10, 3] == 0.0
    assert (np.diag(D) == 0).all()
    assert (D >= 0).all()
    D32 = pairwise_distances(X.astype(np.float32))
    assert D32[3, 10] == 0.0 and (np.diag(D32) == 0).all() and (D32 >= 0).all()


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean"])
def test_duplicates_in_different_tiles_are_exactly_zero_both_ways(rng, metric):
    # 300 rows: 128-row tiles, so (5, 250) lies in an off-diagonal tile whose mirror is
    # written from the cached tile; far from the origin the GEMM key cancels and must be
    # recomputed exactly (on the tile, before the square root and the mirror copy)
    X = rng.standard_normal((300, 30)) * 1e3 + 1e4
    X[250] = X[5]
    X[140] = X[130]  # and inside a diagonal tile
    D = pairwise_distances(X, metric=metric)
    assert D[5, 250] == 0.0 and D[250, 5] == 0.0
    assert D[130, 140] == 0.0 and D[140, 130] == 0.0
    np.testing.assert_array_equal(D, D.T)
    expected = sq_euclidean(X, X)
    if metric == "euclidean":
        expected = np.sqrt(expected)
    np.testing.assert_allclose(D, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(pairwise_distances(X[:150], X, metric=metric), expected[:150],
                               rtol=1e-6, atol=1e-6)


def test_mahalanobis_equals_transformed_euclidean(rng):
    X = rng.standard_normal((40, 5))
    L = rng.standard_normal((3, 5))
    M = L.T @ L
    D = pairwise_distances(X, metric="mahalanobis", metric_params={"M": M})
    np.testing.assert_allclose(D, np.sqrt(sq_euclidean(X @ L.T, X @ L.T)), atol=1e-10)
    from scipy.spatial.distance import cdist

    np.testing.assert_allclose(D, cdist(X, X, "mahalanobis", VI=M), atol=1e-8)
    D_vi = pairwise_distances(X, metric="mahalanobis", metric_params={"VI": M})
    np.testing.assert_allclose(D, D_vi)


@pytest.mark.parametrize(
    "M,match",
    [
        (np.ones((2, 3)), "must be a square matrix"),
        (np.array([[1.0, 2.0], [0.0, 1.0]]), "must be symmetric"),
        (np.array([[1.0, 0.0], [0.0, -1.0]]), "must be positive semidefinite"),
    ],
)
def test_bad_mahalanobis_matrix(M, match):
    with pytest.raises(ValueError, match=match):
        pairwise_distances(np.ones((3, 2)), metric="mahalanobis", metric_params={"M": M})


def test_mahalanobis_without_matrix_is_explained():
    with pytest.raises(ValueError, match=r"needs exactly one of metric_params=\{'VI': array\}"):
        pairwise_distances(np.ones((3, 2)), metric="mahalanobis")


def test_unknown_metric_lists_the_valid_ones():
    with pytest.raises(ValueError, match=r"Unknown metric 'sokalmichener': metric must be one of "
                       r"'minkowski', 'euclidean', .*'cosine', 'mahalanobis', .*'haversine', .*"
                       r"'precomputed'"):
        pairwise_distances(np.ones((3, 2)), metric="sokalmichener")


def test_feature_mismatch_between_x_and_y():
    with pytest.raises(ValueError, match="same number of features; got 2 and 3"):
        pairwise_distances(np.ones((3, 2)), np.ones((3, 3)))


def test_memory_budget_error_names_bytes(monkeypatch):
    monkeypatch.setenv("FASTDR_MEMORY_BUDGET", "1K")
    with pytest.raises(fastdr.MemoryBudgetError, match=r"needs 80,000 bytes .* 100 x 100"):
        pairwise_distances(np.zeros((100, 2)))


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float64, st.tuples(st.integers(2, 12), st.integers(1, 20)),
                  # spreads below about 1e-154 are refused (squared distances underflow:
                  # tests/test_bad_input_magnitudes.py), so magnitudes start at 1e-100
                  elements=st.one_of(st.just(0.0), st.floats(1e-100, 1e3),
                                     st.floats(-1e3, -1e-100))))
def test_distance_properties(X):
    D = pairwise_distances(X)
    assert (D >= 0).all()
    np.testing.assert_allclose(D, D.T, rtol=1e-9, atol=1e-9)
    scale = 1e-9 * (1 + np.abs(X).max()) * np.sqrt(X.shape[1])
    # triangle inequality
    assert (D[:, None, :] <= D[:, :, None] + D[None, :, :] + scale).all()


@pytest.mark.parametrize("m", [100, 600])  # one diagonal tile; several tiles
def test_distances_of_x_to_itself_are_exactly_symmetric(rng, m):
    X = rng.standard_normal((m, 20)) + 3
    D = pairwise_distances(X)
    np.testing.assert_array_equal(D, D.T)
    assert (np.diag(D) == 0).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_serial_twins_of_the_setup_kernels_are_bit_identical(rng, dtype):
    from fastdr._kernels.distances import euclidean as k

    X = (rng.standard_normal((301, 37)) * 4 + 2).astype(dtype)
    centre = X.mean(axis=0).astype(dtype)
    norms = k.centred_sqnorms(X, centre)
    np.testing.assert_array_equal(k.centred_sqnorms_serial(X, centre), norms)
    np.testing.assert_array_equal(k.pack_queries_serial(X, centre), k.pack_queries(X, centre))
    centred, centred_norms = k.centre_rows(X, centre)
    assert centred.dtype == dtype and centred_norms.dtype == np.float64
    np.testing.assert_array_equal(centred, X - centre)
    np.testing.assert_array_equal(centred_norms, norms)
    for got, want in zip(k.centre_rows_serial(X, centre), (centred, norms), strict=True):
        np.testing.assert_array_equal(got, want)
    for block in (16, 64, 128):  # 301 rows: ragged last blocks, zero padding
        packed = k.pack_targets(X, centre, norms.astype(dtype), block)
        np.testing.assert_array_equal(
            k.pack_targets_serial(X, centre, norms.astype(dtype), block), packed)
        rows = np.arange(301)
        blk, col = rows // block, rows % block
        np.testing.assert_array_equal(packed[blk, :37, col], -2 * (X - centre))
        np.testing.assert_array_equal(packed[blk, 37, col], norms.astype(dtype))
        pad = np.ones(packed.shape, dtype=bool)
        pad[blk, :, col] = False
        assert (packed[pad] == 0).all()


@pytest.mark.parametrize("m", [300, 2100])  # 128-row tiles, 256-row tiles
@pytest.mark.parametrize("serial_limit", [0, 2**30])  # parallel set-up, serial set-up
@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-10), (np.float32, 1e-4)])
def test_self_distances_on_both_tile_sizes_and_set_up_paths(rng, monkeypatch, m, serial_limit,
                                                            dtype, rtol):
    from sklearn.metrics import pairwise_distances as sk_pairwise

    import fastdr._distance.norm_trick as norm_trick

    monkeypatch.setattr(norm_trick, "PREP_SERIAL_MAX_ELEMENTS", serial_limit)
    X = (rng.standard_normal((m, 20)) + 3).astype(dtype)
    D = pairwise_distances(X)
    assert D.dtype == dtype
    np.testing.assert_allclose(D, np.sqrt(sq_euclidean(X, X)), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(D, sk_pairwise(X), rtol=rtol, atol=rtol)
    np.testing.assert_array_equal(D, D.T)
    assert (np.diag(D) == 0).all()
    assert np.array_equal(pairwise_distances(X, n_jobs=1), D)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m", [301, 600])  # ragged rows (every line offset) and tiles
def test_streaming_stores_give_the_same_matrix(rng, monkeypatch, dtype, m):
    import importlib

    pairwise_module = importlib.import_module("fastdr.pairwise")
    X = (rng.standard_normal((m, 24)) * 3 + 1).astype(dtype)
    Q = X[: m // 3 + 5]
    plain = pairwise_distances(X), pairwise_distances(Q, X, metric="sqeuclidean")
    monkeypatch.setattr(pairwise_module, "PAIRWISE_STREAM_MIN_BYTES", 0)
    streamed = pairwise_distances(X), pairwise_distances(Q, X, metric="sqeuclidean")
    for a, b in zip(plain, streamed, strict=True):
        assert a.dtype == b.dtype == dtype
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(streamed[0] ** 2, sq_euclidean(X, X), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_stream_copy_writes_exactly_its_range_at_any_alignment(dtype):
    from fastdr._kernels._numba_ext import misalignment, stream_copy

    src = np.arange(1, 101, dtype=dtype)
    for offset in range(17):  # every start of the view within a line
        buffer = np.zeros(400, dtype=dtype)
        dst = buffer[offset:]
        shift = misalignment(dst, 0)
        assert 0 <= shift < 64 // dst.itemsize
        for start, n in [(0, 100), (5, 37), (64, 3), (11, 0), (200, 100)]:
            dst[:] = 0
            stream_copy(dst, start, src, n, shift)
            expected = np.zeros_like(dst)
            expected[start:start + n] = src[:n]
            np.testing.assert_array_equal(dst, expected)
    assert misalignment(np.zeros(10, dtype=dtype), 1 << 20) == -1  # too small: plain stores


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("d", [1, 7, 8, 9, 31, 150])
def test_exact_squared_distance_is_symmetric_and_accurate(rng, d, dtype):
    """The kernels' exact distance (a vectorised float64 sum) is bit-symmetric in its rows
    and within d float64 roundoffs of the correctly rounded sum (math.fsum)."""
    import math

    from fastdr._kernels.distances.euclidean import sqdist_exact

    X = rng.standard_normal((20, d)).astype(dtype) * np.geomspace(1e-3, 1e3, d).astype(dtype)
    u = 2.0**-53
    for i in range(0, 20, 2):
        x, y = X[i], X[i + 1]
        forward = sqdist_exact(x, y)
        assert forward == sqdist_exact(y, x)
        diff = x.astype(np.float64) - y.astype(np.float64)
        exact = math.fsum(float(v) for v in diff * diff)  # each square rounded once: 2 d u
        assert abs(forward - exact) <= 2 * d * u * exact
        assert sqdist_exact(x, x) == 0.0
