"""A sklearn.metrics.DistanceMetric object as ``metric``: read as fastdr's metric of the same
name and parameters (the kernels do the work), against the object's own distances and
scikit-learn's neighbour estimators given the same object."""

import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.neighbors as skn
from sklearn.metrics import DistanceMetric

import fastdr

RNG = np.random.default_rng(3)
X = RNG.random((70, 5))
Q = RNG.random((11, 5))
W = RNG.random(5) + 0.5
V = RNG.random(5) + 0.1
A = RNG.random((5, 5))
VI = A @ A.T + np.eye(5)

#: (DistanceMetric name, its parameters, fastdr's name, fastdr's metric_params, data)
CASES = [
    ("euclidean", {}, "euclidean", None, "real"),
    ("l2", {}, "euclidean", None, "real"),
    ("manhattan", {}, "manhattan", None, "real"),
    ("chebyshev", {}, "chebyshev", None, "real"),
    ("minkowski", {"p": 3}, "minkowski", {"p": 3}, "real"),
    ("minkowski", {"p": 1.5, "w": W}, "minkowski", {"p": 1.5, "w": W}, "real"),
    ("seuclidean", {"V": V}, "seuclidean", {"V": V}, "real"),
    ("mahalanobis", {"VI": VI}, "mahalanobis", {"VI": VI}, "real"),
    ("canberra", {}, "canberra", None, "real"),
    ("braycurtis", {}, "braycurtis", None, "real"),
    ("haversine", {}, "haversine", None, "angles"),
    ("hamming", {}, "hamming", None, "boolean"),
    ("jaccard", {}, "jaccard", None, "boolean"),
    ("dice", {}, "dice", None, "boolean"),
    ("rogerstanimoto", {}, "rogerstanimoto", None, "boolean"),
    ("russellrao", {}, "russellrao", None, "boolean"),
    ("sokalsneath", {}, "sokalsneath", None, "boolean"),
]


def _data(kind):
    if kind == "angles":
        return X[:, :2] - 0.5, Q[:, :2] - 0.5
    if kind == "boolean":
        return (X > 0.5).astype(np.float64), (Q > 0.5).astype(np.float64)
    return X, Q


@pytest.mark.parametrize("dm_dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, params, fastdr_name, fastdr_params, data", CASES)
def test_the_object_gives_the_named_metric(name, params, fastdr_name, fastdr_params, data,
                                           dm_dtype):
    Xd, Qd = _data(data)
    dm = DistanceMetric.get_metric(name, dtype=dm_dtype, **params)
    ours = fastdr.NearestNeighbors(n_neighbors=6, metric=dm).fit(Xd)
    assert ours.effective_metric_ is dm
    dist, ind = ours.kneighbors(Qd)
    fastdr_params = dict(fastdr_params or {})
    named = fastdr.NearestNeighbors(n_neighbors=6, metric=fastdr_name,
                                    p=fastdr_params.pop("p", 2),
                                    metric_params=fastdr_params or None).fit(Xd)
    ref_dist, ref_ind = named.kneighbors(Qd)
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_array_equal(dist, ref_dist)
    # the object's own distances (float64 only: a 32-bit object computes in float32)
    D = DistanceMetric.get_metric(name, **params).pairwise(Qd, Xd)
    np.testing.assert_allclose(dist, np.take_along_axis(D, ind, axis=1), rtol=1e-12,
                               atol=1e-12)
    if data != "boolean":  # (0/1 data: the ties make any index order as right)
        theirs = skn.NearestNeighbors(n_neighbors=6, metric=DistanceMetric.get_metric(
            name, **params), algorithm="brute").fit(Xd)
        np.testing.assert_array_equal(ind, theirs.kneighbors(Qd)[1])


def test_the_objects_parameters_win_over_p_and_metric_params():
    dm = DistanceMetric.get_metric("minkowski", p=3)
    ours = fastdr.NearestNeighbors(n_neighbors=4, metric=dm, p=1, metric_params={"p": 5})
    theirs = skn.NearestNeighbors(n_neighbors=4, metric=dm, p=1, metric_params={"p": 5},
                                  algorithm="brute")
    for estimator in (ours, theirs):  # both warn that p is ignored (the object's p wins)
        with pytest.warns(SyntaxWarning, match="Parameter p is found in metric_params"):
            estimator.fit(X)
    np.testing.assert_array_equal(ours.kneighbors(Q)[1], theirs.kneighbors(Q)[1])
    np.testing.assert_allclose(ours.kneighbors(Q)[0], theirs.kneighbors(Q)[0], rtol=1e-12)
    assert ours.effective_metric_ is dm
    assert ours.effective_metric_params_ == theirs.effective_metric_params_ == {"p": 5}


def test_supervised_estimators_sparse_input_and_radius_take_it():
    y = (X[:, 0] > 0.5).astype(int)
    dm = DistanceMetric.get_metric("manhattan")
    for Ours, Theirs in ((fastdr.KNeighborsClassifier, skn.KNeighborsClassifier),
                         (fastdr.KNeighborsRegressor, skn.KNeighborsRegressor)):
        got = Ours(5, metric=dm).fit(X, y).predict(Q)
        want = Theirs(5, metric="manhattan").fit(X, y).predict(Q)
        np.testing.assert_allclose(got, want)
    sparse = fastdr.NearestNeighbors(n_neighbors=5, metric=dm).fit(sp.csr_matrix(X))
    dense = fastdr.NearestNeighbors(n_neighbors=5, metric="manhattan").fit(X)
    np.testing.assert_array_equal(sparse.kneighbors(Q)[1], dense.kneighbors(Q)[1])
    got = fastdr.NearestNeighbors(radius=0.8, metric=dm).fit(X).radius_neighbors(
        Q, sort_results=True)[1]
    want = dense.radius_neighbors(Q, radius=0.8, sort_results=True)[1]
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_pyfunc_object_calls_its_function():
    def taxicab(x, y, scale=1.0):
        return scale * float(np.abs(x - y).sum())

    dm = DistanceMetric.get_metric("pyfunc", func=taxicab, scale=2.0)
    dist, ind = fastdr.NearestNeighbors(n_neighbors=3, metric=dm).fit(X).kneighbors(Q)
    ref_dist, ref_ind = fastdr.NearestNeighbors(n_neighbors=3, metric="manhattan").fit(
        X).kneighbors(Q)
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, 2 * ref_dist, rtol=1e-12)


def test_an_object_without_a_kernel_is_refused_clearly():
    dm = DistanceMetric.get_metric("matching")
    with pytest.raises(ValueError, match="DistanceMetric .*MatchingDistance64.* that fastdr "
                                         "has no kernel for"):
        fastdr.NearestNeighbors(metric=dm).fit(X > 0.5)
    with pytest.raises(ValueError, match="'metric' parameter of NearestNeighbors must be"):
        fastdr.NearestNeighbors(metric=object()).fit(X)


def test_importing_fastdr_does_not_import_scikit_learn_metrics():
    code = ("import sys, fastdr; fastdr.NearestNeighbors; "
            "assert 'sklearn.metrics' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_pyfunc_distance_metric_with_sparse_x_gets_sparse_rows():
    # the object is resolved before the sparse fit branches: a "pyfunc" DistanceMetric is
    # a callable, so its sparse rows reach it as 1 x d matrices (review of issue 34)
    def manhattan(x, y):
        return float(abs(x - y).sum())

    rng = np.random.default_rng(3)
    dense = rng.random((15, 4)) * (rng.random((15, 4)) < 0.6)
    X = sp.csr_matrix(dense)
    metric = DistanceMetric.get_metric("pyfunc", func=manhattan)
    got = fastdr.NearestNeighbors(n_neighbors=3, metric=metric).fit(X).kneighbors(X[:4])
    want = skn.NearestNeighbors(n_neighbors=3, metric="manhattan").fit(dense)
    want = want.kneighbors(dense[:4])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_array_equal(got[1], want[1])
