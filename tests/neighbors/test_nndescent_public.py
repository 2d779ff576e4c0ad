"""nndescent_graph and nndescent_query through their public names: exports, docstring
examples, exact answers where one leaf holds every point, and the input checks."""

import doctest

import numpy as np
import pytest
from scipy.spatial.distance import cdist

import fastdr
import fastdr.neighbors
from fastdr.neighbors import nndescent_graph, nndescent_query


def _exact(Q, X, k, exclude_self):
    D = cdist(Q, X)
    if exclude_self:
        np.fill_diagonal(D, np.inf)
    ind = np.argsort(D, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(D, ind, axis=1), ind


def test_public_names():
    for name in ("nndescent_graph", "nndescent_query"):
        assert name in fastdr.__all__ and name in fastdr.neighbors.__all__
        assert getattr(fastdr, name) is getattr(fastdr.neighbors, name)
        assert name in dir(fastdr)


@pytest.mark.parametrize("func", [nndescent_graph, nndescent_query])
def test_docstring_examples_run(func):
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder().find(func, globs={}):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
    assert runner.summarize(verbose=False).attempted > 0


def test_graph_and_query_are_exact_when_one_leaf_holds_every_point():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 6))  # fewer points than the default leaf size
    dist, ind, index = fastdr.nndescent_graph(X, 7, random_state=0, return_index=True)
    want_d, want_i = _exact(X, X, 7, exclude_self=True)
    np.testing.assert_array_equal(ind, want_i)
    np.testing.assert_allclose(dist, want_d, rtol=1e-12)
    assert ind.dtype == np.int64 and dist.dtype == np.float64

    Q = rng.normal(size=(40, 6))
    q_dist, q_ind = fastdr.nndescent_query(index, Q, 12)  # wider than the graph
    want_d, want_i = _exact(Q, X, 12, exclude_self=False)
    np.testing.assert_array_equal(q_ind, want_i)
    np.testing.assert_allclose(q_dist, want_d, rtol=1e-12)


def test_same_graph_as_the_estimator():
    X = np.random.default_rng(1).normal(size=(400, 5)).astype(np.float32)
    dist, ind = fastdr.nndescent_graph(X, 6, random_state=0)
    nn = fastdr.NearestNeighbors(n_neighbors=6, algorithm="nndescent").fit(X)
    est_d, est_i = nn.kneighbors()
    np.testing.assert_array_equal(ind, est_i)
    np.testing.assert_allclose(dist, est_d, rtol=1e-6)  # sqrt of float32 squared distances there
    assert dist.dtype == np.float32


def test_a_query_equal_to_an_indexed_point_returns_it_at_distance_zero():
    X = np.random.default_rng(2).normal(size=(200, 4))
    _, _, index = nndescent_graph(X, 5, random_state=0, return_index=True)
    dist, ind = nndescent_query(index, X[:10], 3)
    np.testing.assert_array_equal(ind[:, 0], np.arange(10))
    np.testing.assert_array_equal(dist[:, 0], 0.0)


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_return_index_must_be_a_bool(bad):
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(TypeError, match=f"return_index must be True or False, got {bad!r}"):
        nndescent_graph(X, 5, return_index=bad)


def test_query_input_checks_name_q():
    X = np.random.default_rng(0).normal(size=(30, 3))
    _, _, index = nndescent_graph(X, 5, random_state=0, return_index=True)
    with pytest.raises(ValueError, match=r"Q has 0 sample\(s\)"):
        nndescent_query(index, np.zeros((0, 3)), 5)
    with pytest.raises(ValueError, match="Q contains NaN or infinity"):
        nndescent_query(index, np.full((2, 3), np.nan), 5)
    with pytest.raises(TypeError, match="Q is a sparse matrix"):
        import scipy.sparse

        nndescent_query(index, scipy.sparse.csr_matrix(X), 5)
    with pytest.raises(ValueError, match=r"overflow float64 distance sums\. Rescale Q "
                                         r"\(for example divide by its largest absolute "
                                         r"value\)\.$"):
        nndescent_query(index, X * 1e200, 5)
    with pytest.raises(ValueError, match="n_jobs=0 is not a thread count"):
        nndescent_query(index, X, 5, n_jobs=0)
    with pytest.raises(ValueError, match="epsilon must be finite"):
        nndescent_query(index, X, 5, epsilon=np.inf)
    with pytest.raises(TypeError, match=r"index_state must be an NNDescentIndex \(from "
                                        r"nndescent_graph\(\.\.\., return_index=True\)\)"):
        nndescent_query(None, X, 5)


def test_float32_overflow_messages_say_what_to_do():
    X = np.random.default_rng(0).normal(size=(30, 3))
    with pytest.raises(ValueError, match="Rescale X .* or pass float64 data"):
        nndescent_graph((X * 1e19).astype(np.float32), 5)
    _, _, index = nndescent_graph(X.astype(np.float32), 5, random_state=0, return_index=True)
    with pytest.raises(ValueError, match="Rescale Q .* or build the index from float64 data"):
        nndescent_query(index, X * 1e19, 5)
