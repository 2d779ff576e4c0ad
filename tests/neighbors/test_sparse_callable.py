"""A callable metric with sparse X (issue 34): the callable gets 1 x d sparse rows, as
scikit-learn's pairwise loop hands them, and the neighbours equal scikit-learn's."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

from fastdr import KNeighborsClassifier, KNeighborsRegressor, NearestNeighbors


def sparse_only_dot(x, y):
    """A "distance" only a sparse row can compute (scikit-learn's test metric)."""
    assert sp.issparse(x) and sp.issparse(y) and x.shape[0] == 1 and y.shape[0] == 1
    return x.dot(y.T).toarray().item()


def sparse_manhattan(x, y):
    assert sp.issparse(x) and sp.issparse(y) and x.shape == y.shape == (1, 6)
    return float(abs(x - y).sum())


@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csr_array])
def test_sklearn_example(container):
    X = container([[1, 1, 1, 1, 1], [1, 0, 1, 0, 1], [0, 0, 1, 0, 0]])
    Y = container([[1, 1, 0, 1, 1], [1, 0, 0, 1, 1]])
    nn = NearestNeighbors(algorithm="brute", n_neighbors=2, metric=sparse_only_dot).fit(X)
    assert_array_equal(nn.kneighbors(Y, return_distance=False), [[2, 1], [2, 1]])


@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csr_array])
def test_neighbours_equal_sklearn(container):
    from sklearn.neighbors import KNeighborsClassifier as SkKNC
    from sklearn.neighbors import NearestNeighbors as SkNN

    rng = np.random.default_rng(7)
    X = container(rng.random((20, 6)) * (rng.random((20, 6)) < 0.5))
    Q = container(rng.random((5, 6)) * (rng.random((5, 6)) < 0.5))
    seen = set()

    def kind_recorded(x, y):
        seen.update((type(x), type(y)))
        return sparse_manhattan(x, y)

    ours = NearestNeighbors(n_neighbors=3, radius=1.2, metric=kind_recorded).fit(X)
    theirs = SkNN(n_neighbors=3, radius=1.2, metric=sparse_manhattan).fit(X)
    for queries in (Q, None):
        d_ours, i_ours = ours.kneighbors(queries)
        d_theirs, i_theirs = theirs.kneighbors(queries)
        assert_array_equal(i_ours, i_theirs)
        assert_allclose(d_ours, d_theirs, rtol=0, atol=1e-12)
        r_ours = ours.radius_neighbors(queries, sort_results=True)
        r_theirs = theirs.radius_neighbors(queries, sort_results=True)
        for a, b in zip(r_ours[1], r_theirs[1], strict=True):
            assert_array_equal(a, b)
    assert seen == {container}  # a sparse array's rows stay arrays (``*`` elementwise)
    # the same distances as the plain metric on the dense rows
    dense = NearestNeighbors(n_neighbors=3, metric="manhattan").fit(X.toarray())
    assert_allclose(ours.kneighbors(Q)[0], dense.kneighbors(Q.toarray())[0], atol=1e-12)
    y = np.arange(20) % 4
    assert_array_equal(KNeighborsClassifier(n_neighbors=3, metric=sparse_manhattan)
                       .fit(X, y).predict(Q),
                       SkKNC(n_neighbors=3, metric=sparse_manhattan).fit(X, y).predict(Q))


def test_tree_algorithms_with_a_sparse_callable():
    X = sp.csr_matrix(np.eye(6))
    with pytest.raises(ValueError, match="kd_tree does not support callable metric"):
        NearestNeighbors(algorithm="kd_tree", metric=sparse_manhattan).fit(X)
    with pytest.warns(UserWarning, match="cannot use tree with sparse input"):
        NearestNeighbors(algorithm="ball_tree", metric=sparse_manhattan).fit(X)


def test_bad_sparse_rows_refused_before_the_callable_runs():
    bad = sp.csr_matrix((4, 6))
    bad.indices = np.array([0, 9], dtype=np.int32)
    bad.indptr = np.array([0, 1, 2, 2, 2], dtype=np.int32)
    bad.data = np.ones(2)
    with pytest.raises(ValueError, match="column indices must lie in \\[0, 6\\)"):
        NearestNeighbors(metric=sparse_manhattan).fit(bad)
    nn = NearestNeighbors(n_neighbors=1, metric=sparse_manhattan).fit(sp.csr_matrix(np.eye(6)))
    with pytest.raises(ValueError, match="column indices must lie in"):
        nn.kneighbors(bad)
    with pytest.raises(ValueError, match="X has 3 features, but NearestNeighbors is "
                                         "expecting 6 features"):
        nn.kneighbors(sp.csr_matrix(np.eye(3)))


@pytest.mark.parametrize("estimator", [KNeighborsClassifier, KNeighborsRegressor])
def test_supervised_fits_take_the_values_nearest_neighbors_takes(estimator):
    # a callable reads sparse rows at any magnitude: the supervised fits check only y,
    # as NearestNeighbors checks nothing more (the review of issue 34)
    X = sp.csr_matrix(np.array([[1e200, 0.0], [0.0, 1.0], [2e200, 1.0]]))
    y = np.array([0, 1, 1])
    NearestNeighbors(n_neighbors=1, metric=sparse_manhattan_2).fit(X)
    model = estimator(n_neighbors=1, metric=sparse_manhattan_2).fit(X, y)
    assert_array_equal(model.predict(X), y)
    with pytest.raises(ValueError, match="X has 3, y has 2"):
        estimator(n_neighbors=1, metric=sparse_manhattan_2).fit(X, y[:2])


def sparse_manhattan_2(x, y):
    assert sp.issparse(x) and sp.issparse(y)
    return float(abs(x - y).sum())
