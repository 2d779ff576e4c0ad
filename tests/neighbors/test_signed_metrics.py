"""Every metric name on signed data, against scikit-learn: its neighbours (brute force) and
its ``pairwise_distances`` define Bray-Curtis differently (``sum (|x| + |y|)`` against
scipy's ``sum |x + y|`` below the line), and each fastdr entry point follows its namesake."""

import warnings

import numpy as np
import pytest
import sklearn.metrics as skm
import sklearn.neighbors as skn
from sklearn.metrics import DistanceMetric

import fastdr
from fastdr._distance.metric import NEIGHBOR_METRICS
from fastdr._kernels import codes
from fastdr._kernels.distances import minkowski

from .. import reference

RNG = np.random.default_rng(7)
X = RNG.standard_normal((25, 4))
Q = RNG.standard_normal((6, 4))
X[0, 1] = Q[1, 2] = 0.0  # zeros in signed data (canberra's 0/0 terms)
PARAMS = {"mahalanobis": {"VI": np.eye(4) * 2}, "seuclidean": {"V": np.full(4, 3.0)}}
# "infinity" is fastdr's alias of chebyshev, unknown to scikit-learn's neighbours
NAMES = [m for m in NEIGHBOR_METRICS if m not in ("precomputed", "infinity")]


def _data(metric):
    return (X[:, :2], Q[:, :2]) if metric == "haversine" else (X, Q)


@pytest.mark.parametrize("metric", NAMES)
def test_every_metric_matches_scikit_learn_on_signed_data(metric):
    data, queries = _data(metric)
    params = PARAMS.get(metric)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn's bool-conversion warnings
        want = skn.NearestNeighbors(n_neighbors=len(data), metric=metric, metric_params=params,
                                    algorithm="brute").fit(data).kneighbors(queries)[0]
        want_pairwise = skm.pairwise_distances(queries, data, metric=metric, **(params or {}))
    got = fastdr.NearestNeighbors(n_neighbors=len(data), metric=metric,
                                  metric_params=params).fit(data).kneighbors(queries)[0]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    got_pairwise = fastdr.pairwise_distances(queries, data, metric=metric, **(params or {}))
    np.testing.assert_allclose(got_pairwise, want_pairwise, rtol=1e-12, atol=1e-14)


def test_braycurtis_follows_each_entry_points_namesake():
    x, y = np.array([[1.0, -2.0, 3.0]]), np.array([[-1.0, 2.0, 0.5]])
    neighbours = 8.5 / 9.5  # sum |x - y| / sum (|x| + |y|)
    scipy_value = 8.5 / 3.5  # sum |x - y| / sum |x + y|
    want = skn.NearestNeighbors(n_neighbors=1, metric="braycurtis", algorithm="brute")
    assert want.fit(y).kneighbors(x)[0][0, 0] == pytest.approx(neighbours)
    assert skm.pairwise_distances(x, y, metric="braycurtis")[0, 0] == pytest.approx(scipy_value)
    for estimator in (fastdr.NearestNeighbors(n_neighbors=1, metric="braycurtis"),
                      fastdr.NearestNeighbors(n_neighbors=1,
                                              metric=DistanceMetric.get_metric("braycurtis"))):
        assert estimator.fit(y).kneighbors(x)[0][0, 0] == pytest.approx(neighbours, rel=1e-14)
    graph = fastdr.kneighbors_graph(np.vstack([x, y]), 1, mode="distance", metric="braycurtis")
    assert graph[0, 1] == pytest.approx(neighbours, rel=1e-14)
    radius = fastdr.radius_neighbors_graph(np.vstack([x, y]), 1.0, mode="distance",
                                           metric="braycurtis")
    assert radius[0, 1] == pytest.approx(neighbours, rel=1e-14)
    got = fastdr.pairwise_distances(x, y, metric="braycurtis")[0, 0]
    assert got == pytest.approx(scipy_value, rel=1e-14)


@pytest.mark.parametrize("kind, name", [(codes.BRAYCURTIS, "braycurtis"),
                                        (codes.SCIPY_BRAYCURTIS, "scipy_braycurtis")])
def test_braycurtis_kernels_match_the_naive_references(kind, name):
    n_block = 8
    packed = minkowski.pack_transposed(X, n_block)
    got = np.empty((Q.shape[0], X.shape[0]))
    minkowski.pairwise_metric(Q, packed, X.shape[0], kind, 1.0, 4, got)
    want = reference.reduced_distances(Q, X, name)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    other = "scipy_braycurtis" if name == "braycurtis" else "braycurtis"
    assert not np.allclose(got, reference.reduced_distances(Q, X, other))  # signed: differ
