"""Sparse distance kernels (fastdr/_kernels/distances/sparse.py: CSR k-NN by merge and by
products, radius search, pairwise distances) called directly, as
fastdr/neighbors/_sparse_search.py calls them, and compared with the naive references of
tests/reference.py on random CSR matrices with empty rows and duplicate rows."""

import numpy as np
import pytest
import scipy.sparse

from fastdr._kernels import codes
from fastdr._kernels.distances import sparse

from .. import reference

# code, p and the reference's name of every metric the merge kernels take
METRICS = {"euclidean": (codes.EUCLIDEAN, 2.0, "sqeuclidean"),
           "sqeuclidean": (codes.SQEUCLIDEAN, 2.0, "sqeuclidean"),
           "manhattan": (codes.MANHATTAN, 2.0, "manhattan"),
           "chebyshev": (codes.CHEBYSHEV, 2.0, "chebyshev"),
           "minkowski": (codes.MINKOWSKI, 3.0, "minkowski"),
           "cosine": (codes.COSINE, 2.0, "cosine")}
PRODUCT_METRICS = ["euclidean", "sqeuclidean", "cosine"]

# (how the queries relate to the targets, self_mode, self_offset) as _self_pairs sets them,
# plus a block of a self query (its rows lo: skip target row + lo)
SELF_CASES = {"other": (0, -1), "skip": (1, 0), "skip_block": (1, 3), "same": (2, 0)}


def _rows(rng, m, d, dtype, *, empty=(), duplicate=()):
    """Dense rows with about 40% non-zeros; rows ``empty`` all zero, rows ``duplicate``
    copies of row 0."""
    X = rng.standard_normal((m, d)) * (rng.random((m, d)) < 0.4)
    X[[r for r in empty if r < m]] = 0.0
    X[[r for r in duplicate if r < m]] = X[0]
    return X.astype(dtype)


def _csr(X):
    """Canonical CSR arrays with int64 indices, as check_csr hands them over, plus the
    squared and inverse row norms."""
    A = scipy.sparse.csr_matrix(X)
    data = A.data
    indices = A.indices.astype(np.int64)
    indptr = A.indptr.astype(np.int64)
    sq = sparse.row_sq_norms(data, indptr)
    with np.errstate(divide="ignore"):
        inv = np.where(sq > 0, 1.0 / np.sqrt(sq), 0.0)
    return data, indices, indptr, sq, inv


def _problem(rng, case, m, n, d, dtype):
    """Targets T, queries Q (dense) and the kernels' (self_mode, self_offset)."""
    T = _rows(rng, n, d, dtype, empty=(2, n - 1), duplicate=(n // 2, n // 2 + 1))
    mode, offset = SELF_CASES[case]
    if case == "other":
        Q = _rows(rng, m, d, dtype, empty=(1,), duplicate=())
        Q[-1] = T[n // 2]  # a query equal to targets 0, n/2 and n/2 + 1
    elif case == "skip_block":
        Q = T[offset:offset + m]
    else:
        Q = T
    return T, Q, mode, offset


def _reference_keys(Q, T, name, mode, offset):
    """Reference keys; a mode 2 pair (query row i, target i) has key 0."""
    _, p, ref_name = METRICS[name]
    keys = reference.metric_keys(Q, T, ref_name, p)
    if mode == 2:
        np.fill_diagonal(keys, 0.0)
    return keys, (offset if mode == 1 else -1)


def _assert_knn(out_key, out_i, Q, T, name, mode, offset):
    """The kernel's k-NN rows against the full sort of the reference keys.

    Keys agree to rounding. Indices agree exactly, ties by index included, except for the
    cosine: two copies of a row are at key 0 only up to rounding, which the kernel and the
    reference do differently, so there each row must hold distinct indices (never the
    skipped one) whose reference keys are the k smallest.
    """
    keys, skip = _reference_keys(Q, T, name, mode, offset)
    want_key, want_i = reference.smallest_per_row(keys, out_i.shape[1], skip)
    np.testing.assert_allclose(out_key, want_key, rtol=1e-12, atol=1e-12)
    if name != "cosine":
        np.testing.assert_array_equal(out_i, want_i)
        return
    for i, row in enumerate(out_i):
        assert len(set(row.tolist())) == row.size and (skip < 0 or i + skip not in row)
    np.testing.assert_allclose(np.take_along_axis(keys, out_i, 1), want_key, rtol=1e-12,
                               atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m,d", [(1, 1), (7, 5), (40, 23)])
def test_row_sq_norms_match_numpy(rng, dtype, m, d):
    X = _rows(rng, m, d, dtype, empty=(0,))
    A = scipy.sparse.csr_matrix(X)
    got = sparse.row_sq_norms(A.data, A.indptr.astype(np.int64))
    want = (X.astype(np.float64) ** 2).sum(axis=1)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    assert got[0] == 0.0


CASES = [("other", 1, 1, 1, 1), ("other", 6, 9, 4, 3), ("other", 25, 40, 7, 8),
         ("skip", 2, 2, 1, 1), ("skip", 30, 30, 6, 4), ("skip_block", 10, 20, 5, 3),
         ("same", 30, 30, 6, 64)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case,m,n,k,q_block", CASES)
@pytest.mark.parametrize("name", list(METRICS))
def test_knn_merge_matches_a_full_sort(rng, dtype, case, m, n, k, q_block, name):
    kind, p, _ = METRICS[name]
    T, Q, mode, offset = _problem(rng, case, m, n, 6, dtype)
    m = Q.shape[0]
    td, ti, tp, _, t_inv = _csr(T)
    qd, qi, qp, _, q_inv = _csr(Q)
    out_key = np.empty((m, k))
    out_i = np.empty((m, k), dtype=np.int64)
    sparse.knn_merge(kind, p, qd, qi, qp, q_inv, td, ti, tp, t_inv, k, mode, offset, q_block,
                     out_key, out_i)
    _assert_knn(out_key, out_i, Q, T, name, mode, offset)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case,m,n,k,q_block", CASES)
@pytest.mark.parametrize("name", PRODUCT_METRICS)
def test_knn_product_matches_a_full_sort(rng, dtype, case, m, n, k, q_block, name):
    kind, _, _ = METRICS[name]
    T, Q, mode, offset = _problem(rng, case, m, n, 6, dtype)
    m = Q.shape[0]
    td, ti, tp, t_sq, t_inv = _csr(T)
    qd, qi, qp, q_sq, q_inv = _csr(Q)
    csc = scipy.sparse.csr_matrix(T).tocsc()
    csc.sort_indices()
    n_avail = n - (mode == 1)
    n_candidates = min(n_avail, k + (0 if kind == codes.COSINE else max(k, 8)))
    out_key = np.empty((m, k))
    out_i = np.empty((m, k), dtype=np.int64)
    sparse.knn_product(kind, qd, qi, qp, q_sq, q_inv, td, ti, tp, t_sq, t_inv, csc.data,
                       csc.indices.astype(np.int64), csc.indptr.astype(np.int64), k,
                       n_candidates, mode, offset, q_block, out_key, out_i)
    _assert_knn(out_key, out_i, Q, T, name, mode, offset)


PAIR_CASES = [("other", 1, 1), ("other", 5, 8), ("other", 23, 31), ("same", 1, 1),
              ("same", 17, 17)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case,m,n", PAIR_CASES)
@pytest.mark.parametrize("name", list(METRICS))
def test_pairwise_merge_matches_the_distances(rng, dtype, case, m, n, name):
    kind, p, _ = METRICS[name]
    T, Q, mode, offset = _problem(rng, case, m, n, 5, dtype)
    td, ti, tp, _, t_inv = _csr(T)
    qd, qi, qp, _, q_inv = _csr(Q)
    out = np.empty((Q.shape[0], n), dtype=dtype)
    sparse.pairwise_merge(kind, p, qd, qi, qp, q_inv, td, ti, tp, t_inv, mode, 0, out)
    keys, _ = _reference_keys(Q, T, name, mode, offset)
    want = reference.keys_to_distances(keys, name, p)
    rtol = 1e-12 if dtype == np.float64 else 1e-6  # the output is rounded to float32
    np.testing.assert_allclose(out, want, rtol=rtol, atol=rtol)
    if mode == 2:
        assert (np.diag(out) == 0).all()  # a row's distance to itself, empty rows included


def _radius(args, m):
    """radius_count, the cumulative sum and radius_fill, as _sparse_search.radius runs them."""
    counts = sparse.radius_count(*args)
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    dist = np.empty(indptr[-1])
    indices = np.empty(indptr[-1], dtype=np.int64)
    sparse.radius_fill(*args, indptr, dist, indices)
    return indptr, indices, dist


def _gap_radius(D):
    """A radius halfway across the widest gap among the middle distances: no distance lies
    within rounding of it."""
    values = np.unique(D)
    if values.size < 2:
        return float(values[0]) + 1.0
    mid = values[values.size // 4:3 * values.size // 4 + 2]
    gap = np.argmax(np.diff(mid))
    return float(0.5 * (mid[gap] + mid[gap + 1]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case,m,n", [("other", 1, 1), ("other", 9, 14), ("skip", 25, 25),
                                      ("skip_block", 8, 20), ("same", 25, 25)])
@pytest.mark.parametrize("name,on_zero",
                         [(name, False) for name in METRICS]
                         # copies of a row are at cosine distance 0 only up to rounding
                         + [(name, True) for name in METRICS if name != "cosine"])
def test_radius_count_and_fill_match_a_scan(rng, dtype, case, m, n, name, on_zero):
    kind, p, _ = METRICS[name]
    T, Q, mode, offset = _problem(rng, case, m, n, 5, dtype)
    m = Q.shape[0]
    td, ti, tp, _, t_inv = _csr(T)
    qd, qi, qp, _, q_inv = _csr(Q)
    keys, skip = _reference_keys(Q, T, name, mode, offset)
    D = reference.keys_to_distances(keys, name, p)
    # radius 0 finds exactly the pairs at distance 0 (duplicates; inclusive bound)
    radius = 0.0 if on_zero else _gap_radius(D)
    indptr, indices, dist = _radius((kind, p, qd, qi, qp, q_inv, td, ti, tp, t_inv, radius,
                                     mode, offset), m)
    want = reference.within_per_row(D, radius, skip)
    assert indptr[-1] == sum(len(cols) for cols, _ in want)
    for i, (cols, values) in enumerate(want):
        np.testing.assert_array_equal(indices[indptr[i]:indptr[i + 1]], cols)
        np.testing.assert_allclose(dist[indptr[i]:indptr[i + 1]], values, rtol=1e-12,
                                   atol=1e-12)
    if on_zero:
        assert indptr[-1] > 0


@pytest.mark.parametrize("name", list(METRICS))
def test_all_zero_matrices(name):
    """No stored entry at all: every key is 0 (cosine: 1, a same pair 0)."""
    kind, p, _ = METRICS[name]
    X = np.zeros((4, 3))
    xd, xi, xp, x_sq, x_inv = _csr(X)
    out_key = np.empty((4, 2))
    out_i = np.empty((4, 2), dtype=np.int64)
    sparse.knn_merge(kind, p, xd, xi, xp, x_inv, xd, xi, xp, x_inv, 2, 0, -1, 1, out_key, out_i)
    want = 1.0 if kind == codes.COSINE else 0.0
    np.testing.assert_array_equal(out_key, want)
    np.testing.assert_array_equal(out_i, [[0, 1]] * 4)
    out = np.empty((4, 4))
    sparse.pairwise_merge(kind, p, xd, xi, xp, x_inv, xd, xi, xp, x_inv, 2, 0, out)
    np.testing.assert_array_equal(out, np.where(np.eye(4, dtype=bool), 0.0, want))
