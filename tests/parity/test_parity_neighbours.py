"""Parity with scikit-learn for every neighbour metric (issue 15, "Metrics in the kernels").

Continuous random data, so no two distances tie and indices must be equal, not just
distances. Sizes stay small (m <= 300) for the interpreted coverage pass; 300 targets span
two packed blocks of the Minkowski kernels (256 each), so the partial block is exercised.
"""

import copy
import inspect
import warnings

import numpy as np
import pytest
import sklearn.manifold
import sklearn.metrics
import sklearn.neighbors as skn
from scipy.spatial import procrustes

import fastdr
from fastdr.exceptions import InvalidParameterError
from fastdr.neighbors import (
    KNeighborsClassifier,
    KNeighborsRegressor,
    NearestNeighbors,
    kneighbors_graph,
    radius_neighbors_graph,
)

RNG = np.random.default_rng(15)
X_FIT = RNG.random((300, 6))
X_NEW = RNG.random((40, 6))
Y_CLASS = RNG.integers(0, 3, 300)
Y_REG = RNG.random(300)
VI = np.linalg.inv(np.cov(X_FIT.T))


def _manhattan(a, b):
    return float(np.abs(a - b).sum())


# (id, keyword arguments shared by fastdr and scikit-learn)
METRICS = [
    ("minkowski-p1", {"p": 1}),
    ("minkowski-p1.5", {"p": 1.5}),
    ("minkowski-p2", {"p": 2}),
    ("minkowski-p3", {"p": 3}),
    ("minkowski-pinf", {"p": np.inf}),
    ("euclidean", {"metric": "euclidean"}),
    ("l2", {"metric": "l2"}),
    ("sqeuclidean", {"metric": "sqeuclidean"}),
    ("manhattan", {"metric": "manhattan"}),
    ("cityblock", {"metric": "cityblock"}),
    ("l1", {"metric": "l1"}),
    ("chebyshev", {"metric": "chebyshev"}),
    ("infinity", {"metric": "infinity"}),
    ("cosine", {"metric": "cosine"}),
    ("mahalanobis-VI", {"metric": "mahalanobis", "metric_params": {"VI": VI}}),
    ("minkowski-w", {"metric": "minkowski", "p": 3, "metric_params": {"w": RNG.random(6)}}),
    ("callable", {"metric": _manhattan}),
]
IDS = [case[0] for case in METRICS]
KWARGS = [case[1] for case in METRICS]
TOL = {"rtol": 1e-10, "atol": 1e-12}


def _pair(cls_f, cls_s, **kw):
    # separate copies: scikit-learn may write into metric_params
    return cls_f(**copy.deepcopy(kw)), cls_s(**copy.deepcopy(kw))


@pytest.mark.parametrize("kw", KWARGS, ids=IDS)
def test_kneighbors_equal_sklearn(kw):
    ours, theirs = _pair(NearestNeighbors, skn.NearestNeighbors, n_neighbors=5, **kw)
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
    ours, theirs = _pair(NearestNeighbors, skn.NearestNeighbors, **kw)
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


@pytest.mark.parametrize("weights", ["uniform", "distance"])
@pytest.mark.parametrize("kw", KWARGS, ids=IDS)
def test_classifier_and_regressor_equal_sklearn(kw, weights):
    clf, sk_clf = _pair(KNeighborsClassifier, skn.KNeighborsClassifier, n_neighbors=7,
                        weights=weights, **kw)
    clf.fit(X_FIT, Y_CLASS)
    sk_clf.fit(X_FIT, Y_CLASS)
    np.testing.assert_array_equal(clf.predict(X_NEW), sk_clf.predict(X_NEW))
    np.testing.assert_allclose(clf.predict_proba(X_NEW), sk_clf.predict_proba(X_NEW),
                               rtol=1e-8, atol=1e-12)
    reg, sk_reg = _pair(KNeighborsRegressor, skn.KNeighborsRegressor, n_neighbors=7,
                        weights=weights, **kw)
    reg.fit(X_FIT, Y_REG)
    sk_reg.fit(X_FIT, Y_REG)
    np.testing.assert_allclose(reg.predict(X_NEW), sk_reg.predict(X_NEW), rtol=1e-8)


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


PAIRWISE = [
    ("euclidean", {}), ("l2", {}), ("sqeuclidean", {}), ("manhattan", {}), ("cityblock", {}),
    ("l1", {}), ("chebyshev", {}), ("cosine", {}), ("minkowski", {}), ("minkowski", {"p": 1}),
    ("minkowski", {"p": 1.5}), ("minkowski", {"p": 3}), ("minkowski", {"p": np.inf}),
    ("mahalanobis", {"VI": VI}), ("minkowski", {"p": 3, "w": RNG.random(6)}),
    (_manhattan, {}),
]


@pytest.mark.parametrize("metric,kwds", PAIRWISE)
def test_pairwise_distances_allclose_sklearn(metric, kwds):
    X = X_FIT[:60].copy()
    X[5] = 0.0  # a zero row: cosine distance 1 to everything, as in scikit-learn
    for Y in (None, X_NEW):
        ours = fastdr.pairwise_distances(X, Y, metric, **kwds)
        theirs = sklearn.metrics.pairwise_distances(X, Y, metric, **kwds)
        np.testing.assert_allclose(ours, theirs, **TOL)


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
        NearestNeighbors(metric=_manhattan, algorithm="kd_tree").fit(X)
    with pytest.raises(ValueError, match="algorithm='nndescent' supports the Euclidean"):
        NearestNeighbors(metric="manhattan", algorithm="nndescent").fit(X)
    with pytest.raises(ValueError, match=r"The 'metric' parameter of NearestNeighbors must be "
                       r"a str among \{'minkowski', 'euclidean'.*Got 'hamming'"):
        NearestNeighbors(metric="hamming").fit(X)
    with pytest.raises(ValueError, match=r"Unknown metric 'hamming': metric must be one of "
                       r"'minkowski'.*'precomputed', a callable"):
        fastdr.pairwise_distances(X, metric="hamming")
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


@pytest.mark.parametrize("est,sk_est", [
    (NearestNeighbors, skn.NearestNeighbors),
    (KNeighborsClassifier, skn.KNeighborsClassifier),
    (KNeighborsRegressor, skn.KNeighborsRegressor),
    (kneighbors_graph, skn.kneighbors_graph),
    (radius_neighbors_graph, skn.radius_neighbors_graph),
    (fastdr.pairwise_distances, sklearn.metrics.pairwise_distances),
    (fastdr.ClassicalMDS, sklearn.manifold.ClassicalMDS),
])
def test_signature_has_every_sklearn_parameter(est, sk_est):
    ours = inspect.signature(est).parameters
    for name, param in inspect.signature(sk_est).parameters.items():
        if param.kind == param.VAR_KEYWORD:
            assert any(p.kind == p.VAR_KEYWORD for p in ours.values())
            continue
        assert name in ours, name
        assert ours[name].default == param.default or (
            ours[name].default is param.default), name
        assert ours[name].kind == param.kind, name


MDS_METRICS = [("euclidean", None), ("manhattan", None), ("chebyshev", None),
               ("cosine", None), ("minkowski", {"p": 3}), ("mahalanobis", {"VI": VI})]


@pytest.mark.parametrize("metric,params", MDS_METRICS)
def test_classical_mds_metric_equals_precomputed_and_sklearn(metric, params):
    X = X_FIT[:80]
    ours = fastdr.ClassicalMDS(2, metric=metric, metric_params=params).fit(X)
    D = sklearn.metrics.pairwise_distances(X, metric=metric, **(params or {}))
    pre = fastdr.ClassicalMDS(2, metric="precomputed").fit(D)
    assert procrustes(ours.embedding_, pre.embedding_)[2] < 1e-6
    np.testing.assert_allclose(ours.eigenvalues_, pre.eigenvalues_, rtol=1e-8)
    np.testing.assert_allclose(ours.dissimilarity_matrix_, D, **TOL)
    theirs = sklearn.manifold.ClassicalMDS(2, metric=metric, metric_params=params).fit(X)
    assert procrustes(ours.embedding_, theirs.embedding_)[2] < 1e-6
    np.testing.assert_allclose(ours.eigenvalues_, theirs.eigenvalues_, rtol=1e-8)
    # transform of the training points in the same metric returns their embedding
    np.testing.assert_allclose(ours.transform(X[:5]), ours.embedding_[:5], atol=1e-8)


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


@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_multi_output_classifier_and_the_neighbour_methods_match_sklearn(weights):
    from sklearn.neighbors import KNeighborsClassifier as SkC

    rng = np.random.default_rng(11)
    X = rng.standard_normal((60, 3))
    Y = np.column_stack([(X[:, 0] > 0).astype(int), np.where(X[:, 1] > 0, "a", "b"),
                         rng.integers(0, 3, 60)])
    Q = rng.standard_normal((12, 3))
    ours = fastdr.KNeighborsClassifier(4, weights=weights).fit(X, Y)
    theirs = SkC(4, weights=weights).fit(X, Y)
    assert ours.outputs_2d_ is True and theirs.outputs_2d_ is True
    np.testing.assert_array_equal(ours.predict(Q), theirs.predict(Q))
    for got, expected in zip(ours.predict_proba(Q), theirs.predict_proba(Q), strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    for got, expected in zip(ours.classes_, theirs.classes_, strict=True):
        np.testing.assert_array_equal(got, expected)
    d, i = ours.kneighbors(Q)
    sk_d, sk_i = theirs.kneighbors(Q)
    np.testing.assert_array_equal(i, sk_i)
    np.testing.assert_allclose(d, sk_d, rtol=1e-12)
    np.testing.assert_allclose(ours.kneighbors_graph(Q, mode="distance").toarray(),
                               theirs.kneighbors_graph(Q, mode="distance").toarray(),
                               rtol=1e-12)


def test_column_vector_y_warns_and_is_one_output_as_in_sklearn():
    from sklearn.exceptions import DataConversionWarning as SkDCW

    rng = np.random.default_rng(12)
    X = rng.standard_normal((30, 2))
    y = (X[:, :1] > 0).astype(int)
    with pytest.warns(SkDCW, match="A column-vector y was passed"):
        clf = fastdr.KNeighborsClassifier(3).fit(X, y)
    assert clf.outputs_2d_ is False and clf.predict(X[:4]).shape == (4,)
    i = fastdr.KNeighborsRegressor(3).fit(X, y.ravel()).kneighbors(X[:4], 2,
                                                                   return_distance=False)
    assert i.shape == (4, 2)
