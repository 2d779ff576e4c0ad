"""A sparse precomputed neighbour graph as X of the neighbour estimators (issue 34): the
same neighbours, distances and predictions as scikit-learn's on the same graph, and corrupt
or unusable graphs refused with a message naming the problem before anything reads them."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

from fastdr import KNeighborsClassifier, KNeighborsRegressor, NearestNeighbors

FORMATS = ["csr", "csc", "coo", "lil"]


def _sk(cls_name, **params):
    import sklearn.neighbors

    return getattr(sklearn.neighbors, cls_name)(**params)


def _quiet(func, *args, **kwargs):
    """scikit-learn's call, without its EfficiencyWarning on graphs not sorted by value."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return func(*args, **kwargs)


@pytest.fixture
def graphs():
    """Training and query graphs: a k-NN graph that stores each point itself (at 0) and a
    radius graph (rows of varying length, stored in column order)."""
    from sklearn.neighbors import NearestNeighbors as SkNN

    rng = np.random.default_rng(3)
    X, Y = rng.random((30, 3)), rng.random((7, 3))
    knn = SkNN(n_neighbors=6).fit(X)
    rad = SkNN(radius=0.6).fit(X)
    return {
        "knn": (knn.kneighbors_graph(X, mode="distance"),
                knn.kneighbors_graph(Y, mode="distance")),
        "radius": (rad.radius_neighbors_graph(X, mode="distance"),
                   rad.radius_neighbors_graph(Y, mode="distance")),
    }


def _tied_graph():
    """Tied values stored out of column order, duplicate entries, an explicit zero and a
    row without its own point: scikit-learn's reading (stable by value, ties in storage
    order, duplicates kept) is the one to match."""
    rows = [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3]
    cols = [3, 1, 2, 0, 2, 0, 3, 2, 1, 3, 0, 2, 1, 0, 3]
    vals = [1.0, 1.0, 2.0, 0.0, 1.5, 1.5, 0.0, 4.0, 2.0, 2.0, 3.0, 0.5, 0.5, 0.5, 0.0]
    order = np.argsort(rows, kind="stable")
    indptr = np.searchsorted(np.asarray(rows)[order], np.arange(5))
    return sp.csr_matrix((np.asarray(vals)[order], np.asarray(cols)[order], indptr),
                         shape=(4, 4))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kind", ["knn", "radius"])
def test_kneighbors_equal_sklearn(graphs, kind, fmt):
    train, queries = (g.asformat(fmt) for g in graphs[kind])
    ours = NearestNeighbors(n_neighbors=3, metric="precomputed").fit(train)
    theirs = _quiet(_sk("NearestNeighbors", n_neighbors=3, metric="precomputed").fit, train)
    for Q in (queries, None):
        d_ours, i_ours = ours.kneighbors(Q)
        d_theirs, i_theirs = _quiet(theirs.kneighbors, Q)
        assert_array_equal(i_ours, i_theirs)
        assert_allclose(d_ours, d_theirs, rtol=0, atol=1e-12)


def test_ties_duplicates_and_missing_self_read_as_sklearn():
    graph = _tied_graph()
    ours = NearestNeighbors(metric="precomputed").fit(graph)
    theirs = _quiet(_sk("NearestNeighbors", metric="precomputed").fit, graph)
    for k, Q in ((2, None), (3, graph), (1, None)):
        d_ours, i_ours = ours.kneighbors(Q, n_neighbors=k)
        d_theirs, i_theirs = _quiet(theirs.kneighbors, Q, n_neighbors=k)
        assert_array_equal(i_ours, i_theirs)
        assert_allclose(d_ours, d_theirs, rtol=0, atol=1e-12)
    for Q in (None, graph):
        d_ours, i_ours = ours.radius_neighbors(Q, radius=1.5)
        d_theirs, i_theirs = _quiet(theirs.radius_neighbors, Q, radius=1.5)
        for a, b, c, e in zip(i_ours, i_theirs, d_ours, d_theirs, strict=True):
            assert_array_equal(a, b)
            assert_allclose(c, e, rtol=0, atol=1e-12)


@pytest.mark.parametrize("fmt", ["csr", "lil"])
def test_radius_neighbors_and_graph_equal_sklearn(graphs, fmt):
    train, queries = (g.asformat(fmt) for g in graphs["radius"])
    ours = NearestNeighbors(radius=0.4, metric="precomputed").fit(train)
    theirs = _quiet(_sk("NearestNeighbors", radius=0.4, metric="precomputed").fit, train)
    for Q in (queries, None):
        d_ours, i_ours = ours.radius_neighbors(Q)
        d_theirs, i_theirs = _quiet(theirs.radius_neighbors, Q)
        for a, b, c, e in zip(i_ours, i_theirs, d_ours, d_theirs, strict=True):
            assert_array_equal(a, b)
            assert_allclose(c, e, rtol=0, atol=1e-12)
        g_ours = ours.radius_neighbors_graph(Q, mode="distance")
        g_theirs = _quiet(theirs.radius_neighbors_graph, Q, mode="distance")
        assert_allclose(g_ours.toarray(), g_theirs.toarray(), rtol=0, atol=1e-12)


def test_predictions_equal_sklearn(graphs):
    train, queries = graphs["knn"]
    y = np.arange(train.shape[0]) % 3
    for name, cls in (("KNeighborsClassifier", KNeighborsClassifier),
                      ("KNeighborsRegressor", KNeighborsRegressor)):
        for weights in ("uniform", "distance"):
            ours = cls(n_neighbors=4, weights=weights, metric="precomputed").fit(train, y)
            theirs = _quiet(_sk(name, n_neighbors=4, weights=weights,
                                metric="precomputed").fit, train, y)
            # labels exactly; means to rounding (fastdr sums weights scaled to a largest 1)
            assert_allclose(ours.predict(queries), _quiet(theirs.predict, queries),
                            rtol=1e-12, atol=0)


def test_dense_queries_against_a_graph_fit(graphs):
    """A dense (n_queries, n) distance matrix still answers after a sparse fit."""
    train, queries = graphs["knn"]
    ours = NearestNeighbors(n_neighbors=2, metric="precomputed").fit(train)
    theirs = _quiet(_sk("NearestNeighbors", n_neighbors=2, metric="precomputed").fit, train)
    D = queries.toarray()
    assert_array_equal(ours.kneighbors(D)[1], _quiet(theirs.kneighbors, D)[1])


def test_graph_is_never_modified(graphs):
    train = graphs["radius"][0].copy()
    data, indices = train.data.copy(), train.indices.copy()
    NearestNeighbors(n_neighbors=2, metric="precomputed").fit(train).kneighbors(train)
    assert_array_equal(train.data, data)
    assert_array_equal(train.indices, indices)


def test_too_few_neighbours_per_row():
    dist = np.array([[0.0, 2.0, 0.0], [2.0, 0.0, 3.0], [0.0, 3.0, 0.0]])
    nn = NearestNeighbors(n_neighbors=1, metric="precomputed").fit(sp.csr_matrix(dist))
    with pytest.raises(ValueError, match="2 neighbors per samples are required, but some "
                                         "samples have only 1 neighbors in precomputed "
                                         "graph matrix. Decrease n_neighbors"):
        nn.kneighbors(None, n_neighbors=1)
    with pytest.raises(ValueError, match="2 neighbors per samples are required"):
        nn.kneighbors(sp.csr_matrix(dist), n_neighbors=2)


def _raw(data, indices, indptr, shape=(3, 3)):
    """A CSR matrix over raw arrays that scipy does not check."""
    out = sp.csr_matrix((3, 3))
    out.data, out.indices, out.indptr = (np.asarray(data, dtype=float),
                                         np.asarray(indices, dtype=np.int32),
                                         np.asarray(indptr, dtype=np.int32))
    out._shape = shape
    return out


@pytest.mark.parametrize("bad,match", [
    (_raw([1.0, 2.0], [1, 7], [0, 1, 2, 2]), "column indices must lie in \\[0, 3\\)"),
    (_raw([1.0, 2.0], [1, -1], [0, 1, 2, 2]), "column indices must lie in \\[0, 3\\)"),
    (_raw([1.0, 2.0], [1, 0], [0, 2, 1, 2]), "indptr must start at 0 and be non-decreasing"),
    (_raw([1.0], [1], [0, 1, 2, 2]), "indptr ends at 2 but indices has 1 entries"),
    (sp.csr_matrix(np.array([[0.0, -1.0, 2.0], [1.0, 0, 1], [2, 1, 0]])),
     "Negative values in data passed to precomputed distance matrix"),
    (sp.csr_matrix(np.array([[0.0, np.nan, 2.0], [1.0, 0, 1], [2, 1, 0]])),
     "contains NaN or infinity"),
    (sp.csr_matrix(np.ones((3, 4))), "Precomputed matrix must be square"),
    (sp.csr_matrix((0, 0)), "n_samples must be greater than 0"),
])
def test_bad_training_graph_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        NearestNeighbors(n_neighbors=1, metric="precomputed").fit(bad)
    with pytest.raises(ValueError, match=match):
        KNeighborsClassifier(n_neighbors=1, metric="precomputed").fit(bad, [0, 1, 1])


@pytest.mark.parametrize("fmt", ["dok", "bsr", "dia"])
def test_formats_that_lose_explicit_zeros_refused(fmt):
    graph = sp.csr_matrix(np.array([[0.0, 1.0, 2.0], [1.0, 0, 1], [2, 1, 0]]))
    with pytest.raises(TypeError, match=f"Sparse matrix in '{fmt}' format is not supported "
                                        "due to its handling of explicit zeros"):
        NearestNeighbors(n_neighbors=1, metric="precomputed").fit(graph.asformat(fmt))
    nn = KNeighborsRegressor(n_neighbors=1, metric="precomputed").fit(graph, [0.0, 1, 2])
    with pytest.raises(TypeError, match="not supported due to its handling of explicit"):
        nn.predict(graph.asformat(fmt))


def test_bad_query_graph_refused():
    graph = sp.csr_matrix(np.array([[0.0, 1.0, 2.0], [1.0, 0, 1], [2, 1, 0]]))
    nn = NearestNeighbors(n_neighbors=1, metric="precomputed").fit(graph)
    with pytest.raises(ValueError, match="Precomputed metric requires shape "
                                         "\\(n_queries, n_indexed\\). Got \\(2, 4\\)"):
        nn.kneighbors(sp.csr_matrix(np.ones((2, 4))))
    with pytest.raises(ValueError, match="column indices must lie in"):
        nn.kneighbors(_raw([1.0, 2.0], [1, 9], [0, 1, 2, 2]))
    with pytest.raises(ValueError, match="Negative values in data passed to precomputed"):
        nn.radius_neighbors(sp.csr_matrix(-graph.toarray()))


def test_nndescent_refused_and_trees_warn(graphs):
    train = graphs["knn"][0]
    with pytest.raises(ValueError, match="algorithm='nndescent' supports the Euclidean"):
        NearestNeighbors(metric="precomputed", algorithm="nndescent").fit(train)
    with pytest.warns(UserWarning, match="cannot use tree with sparse input"):
        NearestNeighbors(metric="precomputed", algorithm="kd_tree").fit(train)


def test_self_entry_stored_twice_names_the_duplicate_and_the_remedy():
    # CSR keeps duplicates: row 0 stores (0, 0) twice, so X=None cannot drop itself once
    graph = sp.csr_matrix((np.array([0.0, 0.0, 1.0, 1.0, 0.0, 2.0, 2.0, 0.0]),
                           np.array([0, 0, 1, 0, 1, 2, 1, 2]),
                           np.array([0, 3, 6, 8])), shape=(3, 3))
    nn = NearestNeighbors(n_neighbors=1, metric="precomputed").fit(graph)
    with pytest.raises(ValueError, match=r"stores the entry \(0, 0\) of point 0 to itself "
                       r"more than once.*graph\.sum_duplicates\(\)"):
        nn.kneighbors()
