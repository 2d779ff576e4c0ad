"""A fitted neighbours estimator (fastdr's or scikit-learn's) or a scikit-learn BallTree /
KDTree as X of ``fit`` (issue 34): its training points are reused, and the answers equal a
fit on those points; the graph functions take a fitted estimator as scikit-learn's do."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

from fastdr import (
    KNeighborsClassifier,
    KNeighborsRegressor,
    NearestNeighbors,
    kneighbors_graph,
    radius_neighbors_graph,
)
from fastdr.exceptions import NotFittedError


@pytest.fixture
def data():
    rng = np.random.default_rng(5)
    return rng.random((25, 3)), rng.random((6, 3)), rng.integers(0, 3, 25)


def _indexes(X):
    from sklearn.neighbors import BallTree, KDTree
    from sklearn.neighbors import NearestNeighbors as SkNN

    return {
        "fastdr": NearestNeighbors(n_neighbors=2).fit(X),
        "fastdr_cosine": NearestNeighbors(metric="cosine").fit(X),  # its own metric: unused
        "fastdr_classifier": KNeighborsClassifier().fit(X, np.zeros(len(X))),
        "sklearn": SkNN().fit(X),
        "ball_tree": BallTree(X),
        "kd_tree": KDTree(X),
    }


@pytest.mark.parametrize("source", ["fastdr", "fastdr_cosine", "fastdr_classifier", "sklearn",
                                    "ball_tree", "kd_tree"])
@pytest.mark.parametrize("cls", [NearestNeighbors, KNeighborsClassifier, KNeighborsRegressor])
def test_fit_on_a_fitted_index_equals_fit_on_its_points(data, source, cls):
    X, Q, y = data
    index = _indexes(X)[source]
    args = () if cls is NearestNeighbors else (y,)
    ours = cls(n_neighbors=3).fit(index, *args)
    direct = cls(n_neighbors=3).fit(X, *args)
    for queries in (Q, None):
        d_ours, i_ours = ours.kneighbors(queries)
        d_direct, i_direct = direct.kneighbors(queries)
        assert_array_equal(i_ours, i_direct)
        assert_allclose(d_ours, d_direct, rtol=0, atol=1e-12)
    if cls is not NearestNeighbors:
        assert_array_equal(ours.predict(Q), direct.predict(Q))
    assert ours.n_samples_fit_ == X.shape[0]


def test_sklearn_answers_the_same_on_the_same_index(data):
    from sklearn.neighbors import KDTree
    from sklearn.neighbors import KNeighborsClassifier as SkKNC

    X, Q, y = data
    ours = KNeighborsClassifier(n_neighbors=3).fit(KDTree(X), y)
    theirs = SkKNC(n_neighbors=3).fit(KDTree(X), y)
    assert_array_equal(ours.predict(Q), theirs.predict(Q))
    assert_allclose(ours.kneighbors(Q)[0], theirs.kneighbors(Q)[0], rtol=0, atol=1e-12)


def test_sparse_fit_lends_its_rows(data):
    X, Q, _ = data
    sparse_fit = NearestNeighbors(n_neighbors=2).fit(sp.csr_matrix(X))
    ours = NearestNeighbors(n_neighbors=2).fit(sparse_fit)
    assert sp.issparse(ours._fit_X)
    assert_array_equal(ours.kneighbors(Q)[1], NearestNeighbors(n_neighbors=2).fit(X)
                       .kneighbors(Q)[1])


def test_unfitted_estimator_refused(data):
    from sklearn.neighbors import NearestNeighbors as SkNN

    X, _, y = data
    for unfitted in (NearestNeighbors(), SkNN()):
        with pytest.raises(NotFittedError, match="is not fitted yet"):
            KNeighborsClassifier().fit(unfitted, y)


def test_graph_functions_take_a_fitted_estimator(data):
    from sklearn.neighbors import NearestNeighbors as SkNN

    X, _, _ = data
    for index in (NearestNeighbors(metric="manhattan").fit(X),
                  SkNN(metric="manhattan").fit(X)):
        for include_self in (False, True):
            got = kneighbors_graph(index, 3, metric="manhattan", mode="distance",
                                   include_self=include_self)
            want = kneighbors_graph(X, 3, metric="manhattan", mode="distance",
                                    include_self=include_self)
            assert_allclose(got.toarray(), want.toarray(), rtol=0, atol=1e-12)
            got = radius_neighbors_graph(index, 0.5, metric="manhattan",
                                         include_self=include_self)
            want = radius_neighbors_graph(X, 0.5, metric="manhattan",
                                          include_self=include_self)
            assert_array_equal(got.toarray(), want.toarray())
        with pytest.raises(ValueError, match="Got euclidean for metric, while the estimator "
                                             "has manhattan for the same parameter"):
            kneighbors_graph(index, 3, metric="euclidean")
        with pytest.raises(ValueError, match="Got 1 for p, while the estimator has 2"):
            radius_neighbors_graph(index, 0.5, metric="manhattan", p=1)


def test_lent_points_are_fit_x_or_a_copy_never_the_callers_array(data):
    import pickle

    X, Q, _ = data
    plain = NearestNeighbors(n_neighbors=2).fit(X)
    assert plain._fit_input is None  # nothing stored twice: _fit_X is lent
    assert NearestNeighbors(n_neighbors=2).fit(plain)._fit_X is plain._fit_X
    own = X.copy()
    mapped = NearestNeighbors(n_neighbors=2, metric="mahalanobis",
                              metric_params={"VI": np.eye(3) * 2}).fit(own)
    assert not np.shares_memory(mapped._fit_input, own)
    own[:] = 0  # the caller's array changes after the fit: the lent points do not
    refit = NearestNeighbors(n_neighbors=2).fit(mapped)
    assert_array_equal(refit._fit_X, X)
    # a pickle without the attribute (an older fastdr's) still lends its points
    old = pickle.loads(pickle.dumps(plain))
    del old._fit_input
    assert_array_equal(NearestNeighbors(n_neighbors=2).fit(old).kneighbors(Q)[1],
                       plain.kneighbors(Q)[1])


def test_graph_functions_compare_array_metric_params(data):
    X, _, _ = data
    VI = np.eye(3) * 2
    nn = NearestNeighbors(n_neighbors=3, radius=0.5, metric="mahalanobis",
                          metric_params={"VI": VI}).fit(X)
    want = NearestNeighbors(n_neighbors=3, metric="mahalanobis",
                            metric_params={"VI": VI}).fit(X).kneighbors_graph(mode="distance")
    got = kneighbors_graph(nn, 3, mode="distance", metric="mahalanobis",
                           metric_params={"VI": VI.copy()})
    assert_allclose(got.toarray(), want.toarray())
    radius_neighbors_graph(nn, 0.5, metric="mahalanobis", metric_params={"VI": VI.copy()})
    with pytest.raises(ValueError, match="while the estimator has"):
        kneighbors_graph(nn, 3, metric="mahalanobis", metric_params={"VI": VI * 3})
