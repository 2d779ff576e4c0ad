"""braycurtis, canberra, correlation and seuclidean in the neighbour estimators and
pairwise_distances, against scikit-learn's brute force on the same input."""

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.metrics as skm
import sklearn.neighbors as skn

import fastdr

RNG = np.random.default_rng(0)
X = RNG.random((60, 7))
Q = RNG.random((9, 7))
V = RNG.random(7) + 0.1
CASES = [("braycurtis", None), ("canberra", None), ("correlation", None),
         ("seuclidean", {"V": V})]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("metric, params", CASES)
def test_kneighbors_radius_and_pairwise_match_scikit_learn(metric, params, dtype):
    Xd, Qd = X.astype(dtype), Q.astype(dtype)
    ours = fastdr.NearestNeighbors(n_neighbors=5, metric=metric, metric_params=params)
    theirs = skn.NearestNeighbors(n_neighbors=5, metric=metric, metric_params=params,
                                  algorithm="brute")
    dist, ind = ours.fit(Xd).kneighbors(Qd)
    ref_dist, ref_ind = theirs.fit(Xd).kneighbors(Qd)
    np.testing.assert_array_equal(ind, ref_ind)
    tol = 1e-6 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(dist, ref_dist, rtol=tol, atol=tol)
    radius = float(np.median(ref_dist))
    full = skm.pairwise_distances(Qd, Xd, metric=metric, **(params or {}))
    borderline = [set(np.flatnonzero(np.abs(row - radius) <= 1e-5 * radius)) for row in full]
    got = ours.radius_neighbors(Qd, radius=radius)[1]
    want = theirs.radius_neighbors(Qd, radius=radius)[1]
    for a, b, skip in zip(got, want, borderline, strict=True):
        assert set(a) - skip == set(b) - skip  # rounding decides the points at the radius
    D = fastdr.pairwise_distances(X, Q, metric=metric, metric_params=params)
    np.testing.assert_allclose(D, skm.pairwise_distances(X, Q, metric=metric, **(params or {})),
                               rtol=1e-12, atol=1e-12)


def test_the_classifier_takes_them_too():
    y = np.arange(60) % 3
    for metric, params in CASES:
        got = fastdr.KNeighborsClassifier(4, metric=metric, metric_params=params).fit(X, y)
        want = skn.KNeighborsClassifier(4, metric=metric, metric_params=params).fit(X, y)
        np.testing.assert_array_equal(got.predict(Q), want.predict(Q))


def test_seuclidean_needs_positive_variances_one_per_feature():
    with pytest.raises(ValueError, match=r"takes metric_params=\{'V': variances\}"):
        fastdr.NearestNeighbors(metric="seuclidean").fit(X)
    with pytest.raises(ValueError, match="6 variances, but the data have 7 features"):
        fastdr.NearestNeighbors(metric="seuclidean", metric_params={"V": V[:6]}).fit(X)
    with pytest.raises(ValueError, match="positive variances"):
        fastdr.NearestNeighbors(metric="seuclidean", metric_params={"V": V * 0}).fit(X)


def test_sparse_input_with_these_metrics_names_the_remedy():
    with pytest.raises(ValueError, match="not valid for sparse input"):
        fastdr.NearestNeighbors(metric="braycurtis").fit(sp.csr_matrix(X))


BOOLEAN = ["dice", "jaccard", "rogerstanimoto", "russellrao", "sokalsneath", "yule"]


def _assert_same_up_to_ties(dist, ind, ref_dist, full):
    # discrete metrics tie often: the distances must agree exactly, each index must be at its
    # reported distance, and every point strictly nearer than the k-th must be there
    np.testing.assert_allclose(dist, ref_dist, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.take_along_axis(full, ind, axis=1), dist, rtol=1e-12,
                               atol=1e-15)
    for row, kth in enumerate(dist[:, -1]):
        assert set(np.flatnonzero(full[row] < kth - 1e-12)) <= set(ind[row])


@pytest.mark.parametrize("metric", [*BOOLEAN, "hamming", "haversine"])
def test_boolean_hamming_and_haversine_match_scikit_learn(metric):
    rng = np.random.default_rng(1)
    if metric in BOOLEAN:
        Xm, Qm = rng.random((60, 9)) > 0.5, rng.random((8, 9)) > 0.5
    elif metric == "hamming":
        Xm, Qm = rng.integers(0, 3, (60, 9)).astype(float), rng.integers(0, 3, (8, 9)) * 1.0
    else:
        Xm, Qm = rng.random((60, 2)), rng.random((8, 2))
    full = skm.pairwise_distances(Qm, Xm, metric=metric)
    np.testing.assert_allclose(fastdr.pairwise_distances(Qm, Xm, metric=metric), full,
                               rtol=1e-12, atol=1e-15)
    dist, ind = fastdr.NearestNeighbors(n_neighbors=5, metric=metric).fit(Xm).kneighbors(Qm)
    ref_dist, _ = skn.NearestNeighbors(n_neighbors=5, metric=metric,
                                       algorithm="brute").fit(Xm).kneighbors(Qm)
    _assert_same_up_to_ties(dist, ind, ref_dist, full)


def test_haversine_needs_two_columns():
    with pytest.raises(ValueError, match="Haversine distance only valid in 2 dimensions"):
        fastdr.NearestNeighbors(metric="haversine").fit(X)
