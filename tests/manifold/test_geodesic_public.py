"""geodesic_distances through its public name: export, docstring example, SciPy's answer on
sparse and dense graphs, and the input checks."""

import doctest

import numpy as np
import pytest
import scipy.sparse
from scipy.sparse.csgraph import shortest_path

import fastdr
import fastdr.manifold
from fastdr.manifold import geodesic_distances


def _knn_graph(m, seed=0):
    X = np.random.default_rng(seed).normal(size=(m, 3))
    return fastdr.kneighbors_graph(X, 5, mode="distance")


def test_public_name():
    assert "geodesic_distances" in fastdr.__all__
    assert "geodesic_distances" in fastdr.manifold.__all__
    assert fastdr.geodesic_distances is fastdr.manifold.geodesic_distances


def test_docstring_example_runs():
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    for test in doctest.DocTestFinder().find(geodesic_distances, globs={}):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
    assert runner.summarize(verbose=False).attempted > 0


@pytest.mark.parametrize("method", ["auto", "D", "FW"])
def test_equals_scipy_on_a_knn_graph(method):
    G = _knn_graph(150)
    want = shortest_path(G, directed=False)
    got = fastdr.geodesic_distances(G, method=method)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got.dtype == np.float64
    got32 = fastdr.geodesic_distances(G, method=method, dtype="float32", n_jobs=1)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, want, rtol=1e-5)


def test_dense_input_zeros_are_missing_edges_as_in_scipy():
    dense = np.array([[0.0, 2.0, 0.0, 0.0],
                      [0.0, 0.0, 1.0, 0.0],
                      [5.0, 0.0, 0.0, 0.0],
                      [0.0, 0.0, 0.0, 0.0]])
    got = geodesic_distances(dense.tolist())
    np.testing.assert_array_equal(got, shortest_path(dense, directed=False))
    assert np.isinf(got[3, :3]).all() and got[3, 3] == 0


def test_empty_graph_gives_an_empty_matrix_as_scipy():
    out = geodesic_distances(scipy.sparse.csr_matrix((0, 0)), dtype=np.float32)
    assert out.shape == (0, 0) and out.dtype == np.float32


@pytest.mark.parametrize("dtype", [np.int32, "float16", "fp64", object])
def test_dtype_must_be_float32_or_float64(dtype):
    with pytest.raises(ValueError, match=r"dtype must be np\.float64 or np\.float32, got"):
        geodesic_distances(_knn_graph(10), dtype=dtype)


def test_bad_graphs_are_refused_with_a_remedy():
    with pytest.raises(TypeError, match=r"graph has dtype complex128; edge lengths must be "
                                        r"real numbers"):
        geodesic_distances(scipy.sparse.csr_matrix(np.array([[0, 1 + 1j], [0, 0]])))
    with pytest.raises(ValueError, match="graph holds non-numeric values"):
        geodesic_distances([["a", "b"], ["c", "d"]])
    with pytest.raises(ValueError, match="Expected a 2-D array for graph"):
        geodesic_distances(np.ones(3))
    with pytest.raises(ValueError, match="graph has NaN or infinite edge lengths"):
        geodesic_distances(np.array([[0.0, np.nan], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="graph has negative edge lengths"):
        geodesic_distances(np.array([[0.0, -1.0], [1.0, 0.0]]))
    with pytest.raises(ValueError, match="n_jobs=0 is not a thread count"):
        geodesic_distances(_knn_graph(10), n_jobs=0)


def test_path_lengths_that_could_overflow_the_dtype_are_refused():
    G = scipy.sparse.csr_matrix(np.array([[0.0, 2e38, 0.0],
                                          [0.0, 0.0, 2e38],
                                          [0.0, 0.0, 0.0]]))
    with pytest.raises(ValueError, match=r"edge lengths up to 2e\+38, so a path length could "
                                         r"overflow float32 .* or use dtype=np\.float64\.$"):
        geodesic_distances(G, dtype=np.float32)
    np.testing.assert_array_equal(geodesic_distances(G)[0], [0.0, 2e38, 4e38])
    with pytest.raises(ValueError, match=r"could overflow float64 .* largest edge length\.$"):
        geodesic_distances(G / 2e38 * 1e308)
