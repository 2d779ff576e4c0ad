"""metric="nan_euclidean": the NaN-aware Euclidean distance in the kernels, against the naive
reference (tests/reference) and scikit-learn's brute force on the same input, and its input
rules (NaN allowed for this metric only, never inf; dense only)."""

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.metrics as skm
import sklearn.neighbors as skn

import fastdr

from .. import reference

DTYPES = [(np.float64, 1e-12), (np.float32, 1e-5)]


def _with_holes(rng, m, d, share=0.25):
    """Random rows with a share of NaN entries (every row keeps at least one value)."""
    X = rng.standard_normal((m, d))
    holes = rng.random((m, d)) < share
    holes[np.arange(m), rng.integers(0, d, m)] = False
    X[holes] = np.nan
    return X


def _hostile(rng):
    """Holes, plus an all-NaN row, a column all NaN and a duplicate row."""
    X = _with_holes(rng, 40, 6)
    X[:, 2] = np.nan
    X[7] = np.nan
    X[11] = X[3]
    return X


def _reference_knn(D, k, exclude_self=False):
    """k nearest by (distance, index) from a full matrix, NaN (no distance) ranked last."""
    keys = np.where(np.isnan(D), np.inf, D)
    if exclude_self:
        keys = keys.copy()
        keys[np.arange(D.shape[0]), np.arange(D.shape[0])] = -1  # sorted first, then dropped
    order = np.array([np.lexsort((np.arange(D.shape[1]), row)) for row in keys])
    order = order[:, 1:k + 1] if exclude_self else order[:, :k]
    return np.take_along_axis(D, order, axis=1), order


@pytest.mark.parametrize("dtype, tol", DTYPES)
def test_pairwise_distances_match_the_reference_and_scikit_learn(rng, dtype, tol):
    X = _hostile(rng).astype(dtype)
    Y = _with_holes(rng, 9, 6).astype(dtype)
    for A, B in ((X, Y), (X, None)):
        got = fastdr.pairwise_distances(A, B, metric="nan_euclidean")
        assert got.dtype == dtype
        want = reference.nan_euclidean(A, A if B is None else B)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
        theirs = skm.pairwise_distances(A, B, metric="nan_euclidean")
        np.testing.assert_array_equal(np.isnan(got), np.isnan(theirs))
        # scikit-learn expands the squares (the norm trick): agreement to its round-off
        np.testing.assert_allclose(got, theirs, rtol=1e-5, atol=1e-5)
    self_distances = np.diag(fastdr.pairwise_distances(X, metric="nan_euclidean"))
    assert np.isnan(self_distances[7])  # an all-NaN row has no distance, even to itself
    assert (np.delete(self_distances, 7) == 0).all()


@pytest.mark.parametrize("dtype, tol", DTYPES)
def test_kneighbors_match_the_reference_and_scikit_learn(rng, dtype, tol):
    X = _hostile(rng).astype(dtype)
    Q = _with_holes(rng, 12, 6).astype(dtype)
    Q[4] = np.nan  # a query with no feature at all
    ours = fastdr.NearestNeighbors(n_neighbors=6, metric="nan_euclidean").fit(X)
    dist, ind = ours.kneighbors(Q)
    assert dist.dtype == dtype
    ref_dist, ref_ind = _reference_knn(reference.nan_euclidean(Q, X), 6)
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist, rtol=tol, atol=tol)
    assert np.isnan(dist[4]).all() and (ind[4] == np.arange(6)).all()  # NaN, by index
    # scikit-learn ranks the NaN pairs last too, in an order of its own, and breaks the
    # duplicate's tie by its round-off: compare the rest, without the duplicate
    X = np.delete(X, 11, axis=0)
    dist, ind = fastdr.NearestNeighbors(n_neighbors=6, metric="nan_euclidean").fit(
        X).kneighbors(Q)
    theirs = skn.NearestNeighbors(n_neighbors=6, metric="nan_euclidean").fit(X)
    sk_dist, sk_ind = theirs.kneighbors(Q)
    found = ~np.isnan(sk_dist)
    np.testing.assert_array_equal(np.isnan(dist), ~found)
    np.testing.assert_array_equal(ind[found], sk_ind[found])
    np.testing.assert_allclose(dist[found], sk_dist[found], rtol=1e-5, atol=1e-5)


def test_kneighbors_of_the_training_points_exclude_themselves(rng):
    X = _hostile(rng)
    dist, ind = fastdr.NearestNeighbors(n_neighbors=5, metric="nan_euclidean").fit(
        X).kneighbors()
    ref_dist, ref_ind = _reference_knn(reference.nan_euclidean(X, X), 5, exclude_self=True)
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist, rtol=1e-12, atol=1e-12)
    assert 3 in ind[11] and 11 in ind[3]  # the duplicate row is a neighbour, at distance 0
    graph = fastdr.kneighbors_graph(X, 5, mode="distance", metric="nan_euclidean")
    np.testing.assert_array_equal(graph.indices.reshape(-1, 5), ind)


@pytest.mark.parametrize("radius", [1.5, np.inf])
def test_radius_neighbors_match_the_reference_and_scikit_learn(rng, radius):
    X = _hostile(rng)
    Q = _with_holes(rng, 10, 6)
    Q[2] = np.nan
    D = reference.nan_euclidean(Q, X)
    dist, ind = fastdr.NearestNeighbors(radius=radius, metric="nan_euclidean").fit(
        X).radius_neighbors(Q, sort_results=True)
    sk_dist, sk_ind = skn.NearestNeighbors(radius=radius, metric="nan_euclidean").fit(
        X).radius_neighbors(Q, sort_results=True)
    for i, row in enumerate(D):
        # a pair without a distance is within no radius, not even an infinite one
        want = np.flatnonzero(row <= radius)
        want = want[np.lexsort((want, row[want]))]
        np.testing.assert_array_equal(ind[i], want)
        np.testing.assert_allclose(dist[i], row[want], rtol=1e-12, atol=1e-12)
        assert set(ind[i]) == set(sk_ind[i])
    assert ind[2].size == 0


def test_classifier_and_regressor_take_nan_as_scikit_learn_does(rng):
    X = _with_holes(rng, 80, 5)
    Q = _with_holes(rng, 20, 5)
    y = (np.nan_to_num(X).sum(axis=1) > 0).astype(int)
    for weights in ("uniform", "distance"):
        got = fastdr.KNeighborsClassifier(5, weights=weights, metric="nan_euclidean")
        want = skn.KNeighborsClassifier(5, weights=weights, metric="nan_euclidean")
        np.testing.assert_array_equal(got.fit(X, y).predict(Q), want.fit(X, y).predict(Q))
        got = fastdr.KNeighborsRegressor(5, weights=weights, metric="nan_euclidean")
        want = skn.KNeighborsRegressor(5, weights=weights, metric="nan_euclidean")
        np.testing.assert_allclose(got.fit(X, y).predict(Q), want.fit(X, y).predict(Q),
                                   rtol=1e-6)


def test_nan_is_refused_for_every_other_metric_and_inf_for_this_one(rng):
    X = _with_holes(rng, 20, 4)
    with pytest.raises(ValueError, match=r"X contains NaN or infinity \(\d+ NaN"):
        fastdr.NearestNeighbors(metric="euclidean").fit(X)
    with pytest.raises(ValueError, match=r"X contains NaN or infinity"):
        fastdr.pairwise_distances(X, metric="manhattan")
    with pytest.raises(ValueError, match=r"X contains NaN or infinity"):
        fastdr.NearestNeighbors(metric="euclidean").fit(np.nan_to_num(X)).kneighbors(X)
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match=r"X contains infinity \(1 inf\)"):
        fastdr.NearestNeighbors(metric="nan_euclidean").fit(bad)
    with pytest.raises(ValueError, match=r"X contains infinity \(1 inf\)"):
        fastdr.NearestNeighbors(metric="nan_euclidean").fit(X).kneighbors(bad)
    with pytest.raises(ValueError, match=r"X contains infinity \(1 inf\)"):
        fastdr.KNeighborsClassifier(metric="nan_euclidean").fit(bad, np.arange(20) % 2)
    with pytest.raises(ValueError, match=r"Y contains infinity \(1 inf\)"):
        fastdr.pairwise_distances(X, bad, metric="nan_euclidean")
    with pytest.raises(ValueError, match=r"X contains infinity \(1 inf\)"):
        fastdr.pairwise_distances(bad, metric="nan_euclidean", ensure_all_finite=False)
    # ensure_all_finite=False is refused for the other metrics, not for this one (NaN is fine)
    np.testing.assert_array_equal(
        fastdr.pairwise_distances(X, metric="nan_euclidean", ensure_all_finite=False),
        fastdr.pairwise_distances(X, metric="nan_euclidean"))
    huge = X.copy()
    huge[1, 1] = 1e200  # squared differences overflow float64
    with pytest.raises(ValueError, match="too large for metric='nan_euclidean'"):
        fastdr.NearestNeighbors(metric="nan_euclidean").fit(huge)


def test_sparse_input_and_trees_are_refused_as_in_scikit_learn(rng):
    X = np.abs(rng.standard_normal((20, 4)))
    with pytest.raises(ValueError, match="Metric 'nan_euclidean' not valid for sparse input"):
        fastdr.NearestNeighbors(metric="nan_euclidean").fit(sp.csr_matrix(X))
    fitted = fastdr.NearestNeighbors(n_neighbors=2, metric="nan_euclidean").fit(X)
    with pytest.raises(TypeError, match="Sparse data was passed, but dense data is required"):
        fitted.kneighbors(sp.csr_matrix(X))
    for algorithm in ("kd_tree", "ball_tree"):
        with pytest.raises(ValueError, match="Metric 'nan_euclidean' not valid for algorithm"):
            fastdr.NearestNeighbors(metric="nan_euclidean", algorithm=algorithm).fit(X)


@pytest.mark.parametrize("estimator", [fastdr.NearestNeighbors, fastdr.KNeighborsClassifier,
                                       fastdr.KNeighborsRegressor])
def test_allow_nan_tag_follows_the_metric(estimator):
    from sklearn.utils import get_tags

    assert get_tags(estimator(metric="nan_euclidean")).input_tags.allow_nan
    assert not get_tags(estimator()).input_tags.allow_nan
    tags = get_tags(estimator(metric="precomputed")).input_tags
    assert tags.pairwise and tags.sparse
