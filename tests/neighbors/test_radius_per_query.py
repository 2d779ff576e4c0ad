"""One radius per query (an array ``radius``) in ``radius_neighbors`` and
``radius_neighbors_graph`` (issue 34): each row answers exactly what a search with its own
radius answers (points on the sphere included) on every search route, equal to scikit-learn's
trees; a radius array of the wrong shape or with a negative entry is refused."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal

from fastdr import NearestNeighbors

#: (estimator parameters, training X maker): every route of NeighborsBase._radius_csr
ROUTES = {
    "brute": ({"algorithm": "brute"}, np.asarray),
    "kd_tree": ({"algorithm": "kd_tree"}, np.asarray),
    "sqeuclidean": ({"metric": "sqeuclidean", "algorithm": "brute"}, np.asarray),
    "manhattan": ({"metric": "manhattan"}, np.asarray),
    "minkowski3": ({"metric": "minkowski", "p": 3}, np.asarray),
    "sparse": ({}, sp.csr_matrix),
    "sparse_sqeuclidean": ({"metric": "sqeuclidean"}, sp.csr_matrix),
}


@pytest.fixture
def grid():
    """Integer points, so that many pairs lie exactly on a sphere of integer radius."""
    rng = np.random.default_rng(1)
    return rng.integers(0, 4, (40, 3)).astype(np.float64)


def _radii(n, seed=2):
    return np.random.default_rng(seed).choice([0.0, 1.0, 2.0, 2.5, 3.0, np.inf], n)


@pytest.mark.parametrize("route", list(ROUTES))
def test_each_row_equals_its_own_radius_search(grid, route):
    params, make = ROUTES[route]
    nn = NearestNeighbors(**params).fit(make(grid))
    Q = make(grid[:12])
    for queries, n in ((Q, 12), (None, grid.shape[0])):
        radii = _radii(n)
        dist, ind = nn.radius_neighbors(queries, radius=radii)
        for i, r in enumerate(radii):
            row = None if queries is None else Q[i:i + 1]
            d_one, i_one = nn.radius_neighbors(row, radius=r)
            pick = i if queries is None else 0
            assert_array_equal(ind[i], i_one[pick])
            assert_allclose(dist[i], d_one[pick], rtol=0, atol=0)


@pytest.mark.parametrize("algorithm", ["ball_tree", "kd_tree", "brute"])
def test_equals_sklearn_tree(grid, algorithm):
    from sklearn.neighbors import NearestNeighbors as SkNN

    radii = _radii(15, seed=4)
    Q = grid[:15] + 0.25
    ours = NearestNeighbors(algorithm=algorithm).fit(grid)
    theirs = SkNN(algorithm="ball_tree").fit(grid)
    d_ours, i_ours = ours.radius_neighbors(Q, radius=radii, sort_results=True)
    d_theirs, i_theirs = theirs.radius_neighbors(Q, radius=radii, sort_results=True)
    for a, b, c, e in zip(i_ours, i_theirs, d_ours, d_theirs, strict=True):
        assert_array_equal(np.sort(a), np.sort(b))
        assert_allclose(c, e, rtol=1e-12, atol=1e-12)
    g_ours = ours.radius_neighbors_graph(Q, radius=radii, mode="distance")
    g_theirs = theirs.radius_neighbors_graph(Q, radius=radii, mode="distance")
    assert_allclose(g_ours.toarray(), g_theirs.toarray(), rtol=1e-12, atol=1e-12)


def test_precomputed_graph_takes_one_radius_per_row():
    """(scikit-learn's graph reader takes one radius only.) The zero diagonal is not stored,
    so no point is its own candidate; rows come in increasing distance."""
    graph = sp.csr_matrix(np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [2.0, 3.0, 0.0]]))
    nn = NearestNeighbors(metric="precomputed").fit(graph)
    ind = nn.radius_neighbors(graph, radius=[0.5, 3.0, 2.0], return_distance=False)
    assert [row.tolist() for row in ind] == [[], [0, 2], [0]]
    ind = nn.radius_neighbors(None, radius=[1.0, 0.5, 2.5], return_distance=False)
    assert [row.tolist() for row in ind] == [[1], [], [0]]


@pytest.mark.parametrize("radius,error,match", [
    (np.ones(3), ValueError, "radius has shape \\(3,\\), but there are 5 queries: pass one "
                             "radius for all of them, or an array of shape \\(5,\\)"),
    (np.ones((5, 1)), ValueError, "radius has shape \\(5, 1\\)"),
    ([1.0, 1.0, -0.5, 1.0, 1.0], ValueError, "radius must be >= 0 for every query; "
                                              "radius\\[2\\] is -0.5"),
    ([1.0, np.nan, 1.0, 1.0, 1.0], ValueError, "radius\\[1\\] is nan"),
    (np.array(["a"] * 5), TypeError, "an array of numbers"),
    (-1.0, ValueError, "radius must be >= 0"),
])
def test_bad_radius_refused(grid, radius, error, match):
    nn = NearestNeighbors().fit(grid)
    with pytest.raises(error, match=match):
        nn.radius_neighbors(grid[:5], radius=radius)
    with pytest.raises(error, match=match):
        nn.radius_neighbors_graph(grid[:5], radius=radius)


def test_sparse_per_query_radius_tests_the_distances_the_kernel_tested():
    # manhattan distance 1e-170 squares to 0: the row of radius 0 must still exclude it
    X = sp.csr_matrix(np.array([[0.0], [1e-170], [1.0]]))
    nn = NearestNeighbors(metric="manhattan").fit(X)
    ind = nn.radius_neighbors(radius=np.array([0.0, 10.0, 10.0]))[1]
    assert [sorted(row) for row in ind] == [[], [0, 2], [0, 1]]
    one = nn.radius_neighbors(radius=0.0)[1]
    assert list(one[0]) == list(ind[0])


def test_graph_function_takes_one_radius_per_point():
    from fastdr import radius_neighbors_graph

    X = np.array([[0.0], [1.0], [3.0]])
    got = radius_neighbors_graph(X, np.array([0.5, 2.0, 2.5]), mode="distance")
    assert_array_equal(got.toarray(), [[0, 0, 0], [1, 0, 2], [0, 2, 0]])
    with pytest.raises(ValueError, match="radius has shape"):
        radius_neighbors_graph(X, np.array([0.5, 2.0]))


def test_verbose_log_prints_the_range_of_the_radii_not_the_array(capsys):
    X = np.arange(5.0)[:, None]
    NearestNeighbors(verbose=1).fit(X).radius_neighbors(radius=np.linspace(0.5, 2.0, 5))
    out = capsys.readouterr().out
    assert "5 radii in [0.5, 2]" in out
    assert "1.25" not in out
