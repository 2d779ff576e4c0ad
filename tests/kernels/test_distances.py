"""Distance kernels (matrix checks, CSR pairs, the Minkowski family and cosine) called
directly and compared with the naive references of tests/reference.py and SciPy."""

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from fastdr._kernels import codes
from fastdr._kernels.distances import minkowski
from fastdr._kernels.distances.matrix_checks import symmetry_stats
from fastdr._kernels.distances.pairs import csr_pair_sqdist

from .. import reference

# (kind, p) of every reduced distance the Minkowski kernels compute, and the cdist metric
# whose values they reduce
KINDS = {"manhattan": (codes.MANHATTAN, 1.0, "cityblock"),
         "chebyshev": (codes.CHEBYSHEV, 1.0, "chebyshev"),
         "power": (codes.MINKOWSKI, 3.0, "minkowski"),
         "cosine": (codes.COSINE, 1.0, "cosine"),
         "braycurtis": (codes.BRAYCURTIS, 1.0, "braycurtis"),
         "canberra": (codes.CANBERRA, 1.0, "canberra"),
         "hamming": (codes.HAMMING, 1.0, "hamming"),
         "haversine": (codes.HAVERSINE, 1.0, None),  # not in cdist
         **{name: (getattr(codes, name.upper()), 1.0, name) for name in (
             "dice", "jaccard", "rogerstanimoto", "russellrao", "sokalsneath", "yule")}}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m", [1, 2, 63, 64, 65, 150])
def test_symmetry_stats_matches_numpy(rng, dtype, m):
    A = rng.standard_normal((m, m)).astype(dtype)
    assert symmetry_stats(A) == reference.symmetry_stats(A)
    S = A + A.T
    assert symmetry_stats(S) == reference.symmetry_stats(S)
    assert symmetry_stats(S)[0] == 0.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m,n,d", [(1, 1, 1), (1, 9, 3), (20, 30, 5), (57, 40, 17)])
def test_csr_pair_sqdist_matches_the_dense_distances(rng, dtype, m, n, d):
    Q = rng.standard_normal((m, d)).astype(dtype)
    T = rng.standard_normal((n, d)).astype(dtype)
    T[-1] = Q[0]  # a pair at distance 0
    counts = rng.integers(0, n + 1, m)
    counts[0] = n
    indptr = np.r_[0, np.cumsum(counts)].astype(np.int64)
    indices = np.concatenate([np.sort(rng.permutation(n)[:c]) for c in counts]).astype(np.int64)
    got = csr_pair_sqdist(Q, T, indptr, indices)
    rows = np.repeat(np.arange(m), counts)
    want = reference.sq_euclidean(Q, T)[rows, indices]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * d)
    assert got[indptr[1] - 1] == 0.0


def _metric_rows(rng, shape, kind, dtype):
    X = rng.standard_normal(shape)
    if kind == codes.COSINE:
        X /= np.linalg.norm(X, axis=1, keepdims=True)
    if kind in (codes.BRAYCURTIS, codes.CANBERRA):
        X = np.abs(X)  # scipy's convention: non-negative data (the 0/0 terms count 0)
        X[:, 0] = 0.0
    if kind == codes.HAMMING:
        X = np.round(X)  # values that repeat
    if codes.DICE <= kind <= codes.YULE:
        X = (X > 0).astype(np.float64)
        X[:, 0] = 0.0  # a false-false feature everywhere
    if kind == codes.HAVERSINE:
        X = X[:, :2]
    return X.astype(dtype)


def _packed(T, block):
    return minkowski.pack_transposed(T, min(block, max(1, T.shape[0])))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m,n,block", [(1, 1, 8), (5, 13, 4), (40, 70, 32), (33, 9, 64)])
@pytest.mark.parametrize("metric", list(KINDS))
def test_pairwise_metric_matches_cdist(rng, dtype, m, n, block, metric):
    kind, p, scipy_name = KINDS[metric]
    Q = _metric_rows(rng, (m, 6), kind, dtype)
    T = _metric_rows(rng, (n, 6), kind, dtype)
    out = np.empty((m, n))
    minkowski.pairwise_metric(Q, _packed(T, block), n, kind, p, 3, out)
    want = reference.reduced_distances(Q, T, metric, p)
    # the Minkowski kinds sum in float64; cosine takes its products from one GEMM in the
    # rows' own dtype
    tol = 1e-6 if kind == codes.COSINE and dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, want, rtol=tol, atol=tol)
    if kind == codes.MINKOWSKI:
        out = out ** (1 / p)
    if scipy_name is None:
        return
    kwargs = {"p": p} if scipy_name == "minkowski" else {}
    with np.errstate(invalid="ignore", divide="ignore"):
        scipy_out = cdist(Q.astype(np.float64), T.astype(np.float64), scipy_name, **kwargs)
    defined = np.isfinite(scipy_out)  # scipy leaves 0/0 undefined where fastdr counts 0
    np.testing.assert_allclose(out[defined], scipy_out[defined], rtol=100 * tol,
                               atol=100 * tol)


def _tied_rows(rng, m, d, kind):
    """Rows with exact ties: duplicates of row 1 (Minkowski kinds), or signed unit vectors
    (cosine: their dot products 0 and +-1 are exact, so reduced distances tie exactly)."""
    if kind == codes.COSINE:
        X = np.zeros((m, d))
        X[np.arange(m), rng.integers(0, d, m)] = rng.choice([-1.0, 1.0], m)
        return X
    X = rng.standard_normal((m, d))
    if m > 4:
        X[m // 2:m // 2 + 3] = X[1]
    return X


# a single point has no neighbour but itself: no self-query case with one row
KNN_CASES = [(False, 1, 1, 8), (False, 12, 3, 4), (True, 12, 3, 4), (False, 70, 9, 32),
             (True, 70, 9, 32), (True, 2, 1, 8)]


@pytest.mark.parametrize("self_query,m,k,block", KNN_CASES)
@pytest.mark.parametrize("metric", list(KINDS))
def test_knn_metric_and_knn_rows_match_a_full_sort_with_ties(rng, self_query, m, k, block,
                                                             metric):
    kind, p, _ = KINDS[metric]
    T = _tied_rows(rng, m, 4, kind)
    offset = 0 if self_query else -1
    D = reference.reduced_distances(T, T, metric, p)
    want_d, want_i = reference.smallest_per_row(D, k, offset)
    out_d = np.empty((m, k))
    out_i = np.empty((m, k), dtype=np.int64)
    minkowski.knn_metric(T, _packed(T, block), m, kind, p, k, offset, 5, out_d, out_i)
    np.testing.assert_array_equal(out_i, want_i)
    np.testing.assert_allclose(out_d, want_d, rtol=1e-12, atol=1e-12)
    minkowski.knn_rows(D, k, offset, out_d, out_i)
    np.testing.assert_array_equal(out_i, want_i)
    np.testing.assert_array_equal(out_d, want_d)


def _radius_csr(run, m):
    """The kernels' count pass, cumulative sum and fill pass, as the public layer runs them."""
    indptr = np.zeros(m + 1, dtype=np.int64)
    run(indptr, np.empty(0), np.empty(0, dtype=np.int64), False)
    np.cumsum(indptr[1:], out=indptr[1:])
    out_d = np.empty(indptr[-1])
    out_i = np.empty(indptr[-1], dtype=np.int64)
    run(indptr, out_d, out_i, True)
    return indptr, out_i, out_d


@pytest.mark.parametrize("self_offset", [-1, 0])
@pytest.mark.parametrize("m,n,block", [(1, 1, 8), (9, 14, 4), (50, 61, 32)])
@pytest.mark.parametrize("metric", list(KINDS))
def test_radius_metric_and_radius_rows_match_a_scan(rng, self_offset, m, n, block, metric):
    kind, p, _ = KINDS[metric]
    T = _tied_rows(rng, n, 3, kind)
    Q = T[:m].copy() if self_offset >= 0 else _tied_rows(rng, m, 3, kind)
    D = reference.reduced_distances(Q, T, metric, p)
    radius = float(np.median(D))
    radius = float(D.flat[np.argmin(np.abs(D - radius))])  # some entries lie on the sphere
    want = reference.within_per_row(D, radius, self_offset)
    packed = _packed(T, block)
    runs = [lambda *a: minkowski.radius_metric(Q, packed, n, kind, p, radius, self_offset, 4,
                                               *a),
            lambda *a: minkowski.radius_rows(D, radius, self_offset, *a)]
    for run in runs:
        indptr, indices, dist = _radius_csr(run, m)
        assert indptr[-1] == sum(len(cols) for cols, _ in want)
        for i, (cols, values) in enumerate(want):
            np.testing.assert_array_equal(indices[indptr[i]:indptr[i + 1]], cols)
            np.testing.assert_allclose(dist[indptr[i]:indptr[i + 1]], values, rtol=1e-12,
                                       atol=1e-12)
