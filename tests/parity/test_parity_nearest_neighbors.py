"""Parity of NearestNeighbors and the graph functions with scikit-learn for every neighbour
metric (issue 15, "Metrics in the kernels"): neighbours, radius queries, graphs, the
precomputed and callable metrics, parameter validation. Data: tests/parity/_neighbour_data.py.
"""

import warnings

import numpy as np
import pytest
import sklearn.manifold
import sklearn.metrics
import sklearn.neighbors as skn

import fastdr
from fastdr.exceptions import InvalidParameterError
from fastdr.neighbors import (
    KNeighborsClassifier,
    NearestNeighbors,
    kneighbors_graph,
    radius_neighbors_graph,
)

from ._neighbour_data import (
    IDS,
    KWARGS,
    TOL,
    X_FIT,
    X_NEW,
    Y_CLASS,
    manhattan_callable,
    pair,
)


@pytest.mark.parametrize("kw", KWARGS, ids=IDS)
def test_kneighbors_equal_sklearn(kw):
    ours, theirs = pair(NearestNeighbors, skn.NearestNeighbors, n_neighbors=5, **kw)
    ours.fit(X_FIT)
    theirs.fit(X_FIT)
    assert ours.effective_metric_ == theirs.effective_metric_
    for query in (None, X_NEW):
        d_ours, i_ours = ours.kneighbors(query)
        d_theirs, i_theirs = theirs.kneighbors(query)
        np.testing.assert_array_equal(i_ours, i_theirs)
        np.testing.assert_allclose(d_ours, d_theirs, **TOL)


@pytest.mark.parametrize("kw", KWARGS, ids=IDS)
def test_radius_neighbors_and_graphs_equal_sklearn(kw):
    ours, theirs = pair(NearestNeighbors, skn.NearestNeighbors, **kw)
    ours.fit(X_FIT)
    theirs.fit(X_FIT)
    radius = float(np.median(theirs.kneighbors(X_NEW, 8)[0][:, -1]))
    for query in (None, X_NEW):
        g_ours = ours.radius_neighbors_graph(query, radius, mode="distance")
        g_theirs = theirs.radius_neighbors_graph(query, radius, mode="distance")
        g_theirs.sort_indices()
        np.testing.assert_array_equal(g_ours.indptr, g_theirs.indptr)
        np.testing.assert_array_equal(g_ours.indices, g_theirs.indices)
        np.testing.assert_allclose(g_ours.data, g_theirs.data, **TOL)
        k_ours = ours.kneighbors_graph(query, 4, mode="distance")
        k_theirs = theirs.kneighbors_graph(query, 4, mode="distance")
        assert abs(k_ours - k_theirs).max() < 1e-10
        assert (k_ours != 0).sum() == (k_theirs != 0).sum()
    d_ours, i_ours = ours.radius_neighbors(X_NEW, radius, sort_results=True)
    d_theirs, i_theirs = theirs.radius_neighbors(X_NEW, radius, sort_results=True)
    for a, b in zip(i_ours, i_theirs, strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(d_ours, d_theirs, strict=True):
        np.testing.assert_allclose(a, b, **TOL)


@pytest.mark.parametrize("include_self", [False, True])
@pytest.mark.parametrize("kw", KWARGS[:5] + [{"metric": "cosine"}], ids=IDS[:5] + ["cosine"])
def test_graph_functions_equal_sklearn(kw, include_self):
    for mode in ("connectivity", "distance"):
        ours = kneighbors_graph(X_FIT, 5, mode=mode, include_self=include_self, **kw)
        theirs = skn.kneighbors_graph(X_FIT, 5, mode=mode, include_self=include_self, **kw)
        assert abs(ours - theirs).max() < 1e-10
        ours = radius_neighbors_graph(X_FIT, 0.5, mode=mode, include_self=include_self, **kw)
        theirs = skn.radius_neighbors_graph(X_FIT, 0.5, mode=mode, include_self=include_self,
                                            **kw)
        assert ours.nnz == theirs.nnz
        assert abs(ours - theirs).max() < 1e-10


def test_cosine_zero_rows_as_sklearn():
    X = X_FIT[:50].copy()
    X[3] = 0.0
    Q = X_NEW[:10].copy()
    Q[4] = 0.0
    ours = NearestNeighbors(n_neighbors=50, metric="cosine").fit(X)
    theirs = skn.NearestNeighbors(n_neighbors=50, metric="cosine").fit(X)
    d_ours, i_ours = ours.kneighbors(Q)
    d_theirs, i_theirs = theirs.kneighbors(Q)
    np.testing.assert_allclose(d_ours, d_theirs, **TOL)
    nonzero = np.arange(10) != 4
    # the zero training rows sit at distance exactly 1 from every non-zero query
    np.testing.assert_array_equal(i_ours[nonzero], i_theirs[nonzero])
    np.testing.assert_array_equal(d_ours[4], np.ones(50))  # the zero query: all at 1


def test_precomputed_equals_sklearn():
    D_fit = sklearn.metrics.pairwise_distances(X_FIT, metric="manhattan")
    D_new = sklearn.metrics.pairwise_distances(X_NEW, X_FIT, metric="manhattan")
    ours = NearestNeighbors(n_neighbors=5, metric="precomputed").fit(D_fit)
    theirs = skn.NearestNeighbors(n_neighbors=5, metric="precomputed").fit(D_fit)
    for query in (None, D_new):
        d_ours, i_ours = ours.kneighbors(query)
        d_theirs, i_theirs = theirs.kneighbors(query)
        np.testing.assert_array_equal(i_ours, i_theirs)
        np.testing.assert_allclose(d_ours, d_theirs, **TOL)
        g_ours = ours.radius_neighbors_graph(query, 2.0, mode="distance")
        g_theirs = theirs.radius_neighbors_graph(query, 2.0, mode="distance")
        assert g_ours.nnz == g_theirs.nnz and abs(g_ours - g_theirs).max() == 0
    clf = KNeighborsClassifier(5, metric="precomputed", weights="distance").fit(D_fit, Y_CLASS)
    sk_clf = skn.KNeighborsClassifier(5, metric="precomputed", weights="distance")
    sk_clf.fit(D_fit, Y_CLASS)
    np.testing.assert_allclose(clf.predict_proba(D_new), sk_clf.predict_proba(D_new),
                               rtol=1e-8)
    # and equal to the metric itself
    direct = NearestNeighbors(n_neighbors=5, metric="manhattan").fit(X_FIT)
    np.testing.assert_array_equal(direct.kneighbors(X_NEW)[1], ours.kneighbors(D_new)[1])


def test_precomputed_checks():
    D = sklearn.metrics.pairwise_distances(X_FIT[:10])
    with pytest.raises(ValueError, match="Precomputed matrix must be square. Input is a "
                       "10x9 matrix"):
        NearestNeighbors(metric="precomputed").fit(D[:, :9])
    with pytest.raises(ValueError, match="Negative values in data passed to precomputed"):
        NearestNeighbors(metric="precomputed").fit(-D)
    nn = NearestNeighbors(n_neighbors=2, metric="precomputed").fit(D)
    with pytest.raises(ValueError, match=r"Precomputed metric requires shape \(n_queries, "
                       r"n_indexed\). Got \(3, 9\) for 10 indexed"):
        nn.kneighbors(D[:3, :9])
    with pytest.raises(ValueError, match="Negative values in data passed to precomputed"):
        nn.kneighbors(-D[:3])
    with pytest.raises(ValueError, match="Negative values in data passed to precomputed"):
        fastdr.pairwise_distances(-D, metric="precomputed")
    np.testing.assert_array_equal(fastdr.pairwise_distances(D, metric="precomputed"), D)


def test_p_and_metric_validation():
    X = X_FIT[:30]
    with pytest.raises(InvalidParameterError, match="The 'p' parameter of NearestNeighbors"):
        NearestNeighbors(p=0).fit(X)
    with pytest.raises(InvalidParameterError, match="The 'p' parameter"):
        NearestNeighbors(p=-1.0).fit(X)
    with pytest.warns(UserWarning, match="for 0 < p < 1, Minkowski metrics are not distance"):
        ours = NearestNeighbors(n_neighbors=3, p=0.5).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = skn.NearestNeighbors(n_neighbors=3, p=0.5).fit(X)
    np.testing.assert_array_equal(ours.kneighbors()[1], theirs.kneighbors()[1])
    with pytest.raises(ValueError, match='algorithm="kd_tree" does not support 0 < p < 1'):
        NearestNeighbors(p=0.5, algorithm="kd_tree").fit(X)
    with pytest.raises(ValueError, match="Metric 'cosine' not valid for algorithm='kd_tree'"):
        NearestNeighbors(metric="cosine", algorithm="kd_tree").fit(X)
    with pytest.raises(ValueError, match="kd_tree does not support callable metric"):
        NearestNeighbors(metric=manhattan_callable, algorithm="kd_tree").fit(X)
    with pytest.raises(ValueError, match="algorithm='nndescent' supports the Euclidean"):
        NearestNeighbors(metric="manhattan", algorithm="nndescent").fit(X)
    with pytest.raises(ValueError, match=r"The 'metric' parameter of NearestNeighbors must be "
                       r"a str among \{'minkowski', 'euclidean'.*Got 'sokalmichener'"):
        NearestNeighbors(metric="sokalmichener").fit(X)
    with pytest.raises(ValueError, match=r"Unknown metric 'sokalmichener': metric must be one of "
                       r"'minkowski'.*'precomputed', a callable"):
        fastdr.pairwise_distances(X, metric="sokalmichener")
    with pytest.warns(SyntaxWarning, match="Parameter p is found in metric_params"):
        nn = NearestNeighbors(p=2, metric_params={"p": 1}).fit(X)
    assert nn.effective_metric_ == "manhattan"
    with pytest.raises(ValueError, match=r"Unknown metric_params for 'minkowski': \['q'\]"):
        NearestNeighbors(metric_params={"q": 1}).fit(X)
    with pytest.raises(ValueError, match="metric='cosine' takes no metric_params"):
        NearestNeighbors(metric="cosine", metric_params={"p": 1}).fit(X)
    # ball_tree is accepted and exact for the Minkowski family
    ours = NearestNeighbors(n_neighbors=3, metric="manhattan", algorithm="ball_tree").fit(X)
    theirs = skn.NearestNeighbors(n_neighbors=3, metric="manhattan").fit(X)
    np.testing.assert_array_equal(ours.kneighbors()[1], theirs.kneighbors()[1])


def test_mahalanobis_v_equals_vi():
    V = np.cov(X_FIT.T)
    a = NearestNeighbors(n_neighbors=4, metric="mahalanobis", metric_params={"V": V})
    b = NearestNeighbors(n_neighbors=4, metric="mahalanobis",
                         metric_params={"VI": np.linalg.inv(V)})
    da, ia = a.fit(X_FIT).kneighbors(X_NEW)
    db, ib = b.fit(X_FIT).kneighbors(X_NEW)
    np.testing.assert_array_equal(ia, ib)
    np.testing.assert_allclose(da, db, rtol=1e-8)


@pytest.mark.parametrize("metric", ["manhattan", "chebyshev", "cosine"])
def test_float32_and_n_jobs(metric):
    ours = NearestNeighbors(n_neighbors=5, metric=metric).fit(X_FIT)
    d64, i64 = ours.kneighbors(X_NEW)
    d1, i1 = NearestNeighbors(n_neighbors=5, metric=metric, n_jobs=1).fit(X_FIT).kneighbors(
        X_NEW)
    np.testing.assert_array_equal(i1, i64)
    np.testing.assert_array_equal(d1, d64)
    ours32 = NearestNeighbors(n_neighbors=5, metric=metric).fit(X_FIT.astype(np.float32))
    d32, _ = ours32.kneighbors(X_NEW.astype(np.float32))
    assert d32.dtype == np.float32
    np.testing.assert_allclose(d32, d64, rtol=1e-5, atol=1e-6)


def test_numba_jitted_callable_equals_the_named_metric():
    import numba

    @numba.njit
    def manhattan(a, b):
        acc = 0.0
        for f in range(a.shape[0]):
            acc += abs(a[f] - b[f])
        return acc

    X = X_FIT[:120]
    d_jit, i_jit = NearestNeighbors(n_neighbors=4, metric=manhattan).fit(X).kneighbors()
    d_named, i_named = NearestNeighbors(n_neighbors=4, metric="manhattan").fit(X).kneighbors()
    np.testing.assert_array_equal(i_jit, i_named)
    np.testing.assert_allclose(d_jit, d_named, **TOL)
    np.testing.assert_allclose(fastdr.pairwise_distances(X[:7], X, manhattan),
                               fastdr.pairwise_distances(X[:7], X, "manhattan"), **TOL)
