"""Isomap against scikit-learn and the naive references: embeddings, policies, errors."""

import re
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_swiss_roll

import fastdr
from fastdr import Isomap
from fastdr.manifold import _isomap_graph

from .. import reference


def _invalid(param, allowed, got, est='Isomap'):
    """fastdr's parameter-validation message, word for word, as a regex."""
    return re.escape(f"The {param!r} parameter of {est} must be {allowed}. Got {got} "
                     "instead.")


def roll(m, seed=0, noise=0.0):
    return make_swiss_roll(m, noise=noise, random_state=seed)[0]


@pytest.fixture(scope="module")
def roll1500():
    from sklearn.manifold import Isomap as SkIsomap

    X = roll(1500)
    return X, SkIsomap(n_neighbors=10, n_components=2).fit(X)


def sheet(nx, ny, offset, seed=0):
    """A jittered nx x ny grid in 3-D (connected under a 5-NN graph), moved by offset."""
    g = np.stack(np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij"), -1).reshape(-1, 2)
    jitter = np.random.default_rng(seed).uniform(-0.1, 0.1, g.shape)
    return np.c_[g + jitter, np.zeros(len(g))] + offset


def two_sheets():
    return np.vstack([sheet(10, 20, [0, 0, 0]), sheet(10, 20, [0, 0, 7], seed=1)])


@pytest.mark.jit_only  # interpreted (coverage pass) it takes most of a minute or more
def test_matches_sklearn_on_knn_graph(roll1500):
    X, sk = roll1500
    iso = Isomap(n_neighbors=10, n_components=2).fit(X)
    assert reference.procrustes_disparity(iso.embedding_, sk.embedding_) < 1e-6
    np.testing.assert_allclose(iso.dist_matrix_, sk.dist_matrix_, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(iso.reconstruction_error(), sk.reconstruction_error(),
                               rtol=1e-6)
    assert iso.n_features_in_ == 3 and iso.embedding_.shape == (1500, 2)
    assert iso.n_connected_components_ == 1 and iso.short_circuit_edges_.shape == (0, 2)
    np.testing.assert_array_equal(iso.kept_indices_, np.arange(1500))
    # new points: both embed the union the same way
    Q = X[:40] + 0.3
    joint = np.vstack([iso.embedding_, iso.transform(Q)])
    sk_joint = np.vstack([sk.embedding_, sk.transform(Q)])
    assert reference.procrustes_disparity(joint, sk_joint) < 1e-6


def test_epsilon_graph_matches_sklearn():
    from sklearn.manifold import Isomap as SkIsomap

    X = roll(600, seed=1)
    iso = Isomap(radius=5.0, n_neighbors=None).fit(X)
    sk = SkIsomap(radius=5.0, n_neighbors=None).fit(X)
    assert reference.procrustes_disparity(iso.embedding_, sk.embedding_) < 1e-6
    np.testing.assert_allclose(iso.dist_matrix_, sk.dist_matrix_, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(iso.transform(X[:30]), iso.embedding_[:30], atol=1e-6)


def test_full_pipeline_against_naive_reference(rng):
    X = roll(250, seed=2)
    Q = X[:15] + rng.normal(0, 0.2, (15, 3))
    iso = Isomap(n_neighbors=6, path_method="floyd").fit(X)
    dist, ind = reference.knn(X, X, 6, exclude_self=True)
    W = np.full((250, 250), np.inf)
    W[np.repeat(np.arange(250), 6), ind.ravel()] = dist.ravel()
    D = reference.floyd_dense(W)
    np.testing.assert_allclose(iso.dist_matrix_, D, rtol=1e-10)
    q_dist, q_ind = reference.knn(X, Q, 6)
    D_new = np.min(q_dist[:, :, None] + D[q_ind], axis=1)
    emb, new = reference.classical_mds_triangulate(D, D_new, 2)
    both = np.vstack([iso.embedding_, iso.transform(Q)])
    assert reference.procrustes_disparity(both, np.vstack([emb, new])) < 1e-10
    dijkstra = Isomap(n_neighbors=6, path_method="dijkstra").fit(X)
    np.testing.assert_allclose(dijkstra.dist_matrix_, iso.dist_matrix_, rtol=1e-10)


def test_float32_storage():
    X = roll(400, seed=3)
    full = Isomap(n_neighbors=8).fit(X)
    half = Isomap(n_neighbors=8, dtype=np.float32).fit(X)
    assert half.dist_matrix_.dtype == np.float32 and half.embedding_.dtype == np.float32
    assert half.transform(X[:5]).dtype == np.float32
    assert reference.procrustes_disparity(half.embedding_, full.embedding_) < 1e-6
    np.testing.assert_allclose(half.dist_matrix_, full.dist_matrix_,
                               atol=1e-3 * full.dist_matrix_.max())
    from_x = Isomap(n_neighbors=8).fit(X.astype(np.float32))
    assert from_x.embedding_.dtype == np.float32


@pytest.mark.parametrize("n_landmarks", [None, 60])
def test_transform_on_training_points_reproduces_embedding(n_landmarks):
    X = roll(600, seed=4)
    for mode in ("geodesic", "regressor"):
        iso = Isomap(n_neighbors=8, out_of_sample=mode, n_landmarks=n_landmarks,
                     random_state=0).fit(X)
        np.testing.assert_allclose(iso.transform(X), iso.embedding_,
                                   atol=1e-6 * np.abs(iso.embedding_).max())


@pytest.mark.jit_only  # interpreted (coverage pass) it takes most of a minute or more
def test_landmark_isomap_close_to_full():
    X = roll(3000, seed=5)
    full = Isomap(n_neighbors=10).fit(X)
    chosen = {}
    for method in ("random", "maxmin"):
        lm = Isomap(n_neighbors=10, n_landmarks=300, landmark_method=method,
                    random_state=0).fit(X)
        assert not hasattr(lm, "dist_matrix_")
        assert lm.landmarks_.shape == (300,) and len(set(lm.landmarks_.tolist())) == 300
        assert reference.procrustes_disparity(lm.embedding_, full.embedding_) < 0.01
        # landmarks sit where their own MDS put them; new points land near the full answer
        Q = X[:20] + 0.2
        joint = np.vstack([lm.embedding_, lm.transform(Q)])
        full_joint = np.vstack([full.embedding_, full.transform(Q)])
        assert reference.procrustes_disparity(joint, full_joint) < 0.01
        chosen[method] = lm.landmarks_
    # the two rules pick different landmarks; the default rule is "random", and a fixed
    # random_state reproduces its draw exactly (one more fit only: this test is slow without
    # the JIT, in the coverage pass)
    assert not np.array_equal(chosen["random"], chosen["maxmin"])
    again = Isomap(n_neighbors=10, n_landmarks=300, random_state=0).fit(X)
    np.testing.assert_array_equal(again.landmarks_, chosen["random"])


def test_maxmin_landmarks_are_the_greedy_farthest_points_of_the_graph():
    # each landmark after the first is the point farthest (in geodesic distance over the
    # k-NN graph) from the landmarks before it
    from sklearn.neighbors import kneighbors_graph

    X = roll(300, seed=3)
    lm = Isomap(n_neighbors=10, n_landmarks=20, landmark_method="maxmin", random_state=0).fit(X)
    G = kneighbors_graph(X, 10, mode="distance")
    want = reference.maxmin_landmarks(G, int(lm.landmarks_[0]), 20)
    np.testing.assert_array_equal(lm.landmarks_, want)
    assert np.all(np.isfinite(lm.transform(X[:10] + 0.1)))


@pytest.mark.jit_only  # interpreted, prange is range: one thread, nothing to compare
def test_identical_results_for_any_n_jobs():
    X = roll(400, seed=6)
    for kwargs in ({}, {"radius": 5.0, "n_neighbors": None}, {"n_landmarks": 80, "random_state": 1},
                   {"n_landmarks": 50, "landmark_method": "maxmin", "random_state": 1}):
        one = Isomap(n_jobs=1, **{"random_state": 0, **kwargs}).fit(X)
        two = Isomap(n_jobs=2, **{"random_state": 0, **kwargs}).fit(X)
        np.testing.assert_array_equal(one.embedding_, two.embedding_)
        np.testing.assert_array_equal(one.transform(X[:20]), two.transform(X[:20]))
        if "n_landmarks" not in kwargs:
            np.testing.assert_array_equal(one.dist_matrix_, two.dist_matrix_)


# ---- disconnected graphs ----


def test_disconnected_raise_names_components():
    X = np.vstack([two_sheets(), sheet(5, 6, [0, 0, 50], seed=2)])
    with pytest.raises(ValueError, match=r"The number of connected components of the neighbors "
                                         r"graph is 3 > 1 \(sizes 200, 200, 30\).*larger "
                                         r"n_neighbors \(now 5\).*on_disconnected='connect'"
                                         r".*'largest'"):
        Isomap(on_disconnected="raise").fit(X)
    with pytest.raises(ValueError, match=r"larger radius \(now 1.5\)"):
        Isomap(radius=1.5, n_neighbors=None, on_disconnected="raise").fit(X)


def test_disconnected_connect_adds_shortest_edges_like_sklearn():
    from sklearn.manifold import Isomap as SkIsomap

    X = two_sheets()
    with pytest.warns(UserWarning, match=r"^The number of connected components of the "
                                         r"neighbors graph is 2 > 1\. .*sizes 200, 200; they "
                                         r"were joined by 1 shortest edge\(s\) between "
                                         r"components: \(\d+, \d+\) of length"):
        iso = Isomap().fit(X)  # the default, as in scikit-learn
    assert iso.n_connected_components_ == 2
    assert iso.connecting_edges_.shape == (1, 2)
    between = np.sqrt(reference.sq_euclidean(X[:200], X[200:]))
    a, b = np.unravel_index(np.argmin(between), between.shape)
    assert tuple(iso.connecting_edges_[0]) == (a, b + 200)
    assert np.isfinite(iso.dist_matrix_).all()
    np.testing.assert_allclose(iso.dist_matrix_[a, b + 200], between[a, b], rtol=1e-12)
    with pytest.warns(UserWarning, match="connected components"):
        sk = SkIsomap(n_neighbors=5).fit(X)
    assert reference.procrustes_disparity(iso.embedding_, sk.embedding_) < 1e-6
    three = np.vstack([X, sheet(5, 6, [0, 0, 50], seed=2)])
    with pytest.warns(UserWarning, match=r"joined by 3 shortest edge\(s\)"):
        iso3 = Isomap().fit(three)
    assert iso3.connecting_edges_.shape == (3, 2) and np.isfinite(iso3.dist_matrix_).all()


def test_disconnected_largest_keeps_rows_and_transforms():
    X = np.vstack([sheet(5, 6, [0, 0, 50], seed=2), two_sheets()[:200]])
    with pytest.warns(UserWarning, match=r"embeds only the largest one: 200 of 230 rows"):
        iso = Isomap(on_disconnected="largest").fit(X)
    np.testing.assert_array_equal(iso.kept_indices_, np.arange(30, 230))
    assert iso.embedding_.shape == (200, 2) and iso.dist_matrix_.shape == (200, 200)
    alone = Isomap().fit(X[30:])
    np.testing.assert_allclose(iso.embedding_, alone.embedding_, atol=1e-8)
    np.testing.assert_allclose(iso.transform(X[30:40]), iso.embedding_[:10], atol=1e-6)
    assert np.isfinite(iso.transform(X[:5])).all()  # dropped rows can still be placed


# ---- short circuits ----


def bridged_roll():
    """A swiss roll made denser (height / 5) with a clump of 4 stray points half-way between
    two folds: a short circuit."""
    X = roll(1200, seed=11)
    X[:, 1] *= 0.2  # neighbours ~0.5 apart, folds 2 pi apart
    t = 7.0
    inner = np.array([t * np.cos(t), 2.0, t * np.sin(t)])
    outer = np.array([(t + 2 * np.pi) * np.cos(t), 2.0, (t + 2 * np.pi) * np.sin(t)])
    clump = [inner + f * (outer - inner) for f in (0.48, 0.49, 0.51, 0.52)]
    return np.vstack([X, clump])


@pytest.mark.jit_only  # interpreted (coverage pass) it takes most of a minute or more
def test_short_circuit_edges_are_flagged():
    X = bridged_roll()
    with pytest.warns(UserWarning, match=r"edge\(s\) longer than 3 times the median neighbour"
                                         r".*short circuits"):
        iso = Isomap().fit(X)
    edges = iso.short_circuit_edges_
    assert edges.shape[0] >= 2 and (edges[:, 0] < edges[:, 1]).all()
    assert (edges[:, 1] >= 1200).all() and (edges[:, 0] < 1200).all()  # clump to roll only
    radius = np.hypot(X[edges[:, 0], 0], X[edges[:, 0], 2])
    assert (radius < 7 + np.pi).any() and (radius > 7 + np.pi).any()  # it joins both folds
    # the short circuit is real: the geodesic across the folds collapses
    clean = Isomap().fit(X[:1200])
    assert clean.short_circuit_edges_.shape == (0, 2)
    i, j = edges[np.argmin(radius), 0], edges[np.argmax(radius), 0]
    assert iso.dist_matrix_[i, j] < 0.5 * clean.dist_matrix_[i, j]


def test_no_short_circuit_on_clean_data(rng):
    for X in (roll(3000, seed=3), rng.standard_normal((2000, 3)), rng.uniform(size=(2000, 2)),
              rng.standard_normal((1000, 10))):
        for k in (5, 10):
            graph, directed, _ = _isomap_graph.build_graph(X, n_neighbors=k, radius=None,
                                                           n_jobs=None)
            assert _isomap_graph.short_circuit_edges(graph, directed).shape == (0, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Isomap().fit(roll(600, seed=4))


def test_short_circuit_rule_on_a_tiny_graph():
    # two tight clumps of 4 points, 10 apart; with k=4 some edges must jump between them
    X = np.array([[0, 0], [0.1, 0], [0, 0.1], [0.1, 0.1],
                  [10, 0], [10.1, 0], [10, 0.1], [10.1, 0.1]], dtype=float)
    graph, directed, _ = _isomap_graph.build_graph(X, n_neighbors=4, radius=None, n_jobs=1)
    edges = _isomap_graph.short_circuit_edges(graph, directed)
    assert len(edges) and all((a < 4) != (b < 4) for a, b in edges)
    inside = _isomap_graph.short_circuit_edges(
        *_isomap_graph.build_graph(X[:4], n_neighbors=3, radius=None, n_jobs=1)[:2])
    assert inside.shape == (0, 2)


# ---- parameters and errors ----


def test_sklearn_regressor_and_clone():
    from sklearn.base import clone
    from sklearn.linear_model import LinearRegression

    X = roll(300, seed=12)
    reg = LinearRegression()
    iso = Isomap(out_of_sample="regressor", regressor=reg).fit(X)
    assert not hasattr(reg, "coef_")  # the user's regressor is copied, not fitted
    np.testing.assert_allclose(iso.transform(X[:5]), iso.regressor_.predict(X[:5]))
    default = Isomap(out_of_sample="regressor").fit(X)
    assert isinstance(default.regressor_, fastdr.KNeighborsRegressor)
    assert default.regressor_.weights == "distance"
    twin = clone(iso)
    assert twin.get_params()["out_of_sample"] == "regressor"


@pytest.mark.parametrize("kwargs,error,match", [
    ({"radius": 1.0}, ValueError,
     re.escape("Both n_neighbors and radius are provided. Use Isomap(radius=1.0, "
               "n_neighbors=None) if intended to use radius-based neighbors")),
    ({"n_neighbors": None}, ValueError, r"n_neighbors and radius are both None"),
    ({"radius": -1.0, "n_neighbors": None}, ValueError,
     _invalid('radius', 'a float in the range [0, inf), np.inf or None', '-1.0')),
    ({"p": 0.5}, ValueError, _invalid('p', 'a float in the range [1, inf) or np.inf', '0.5')),
    ({"tol": -1.0}, ValueError, _invalid('tol', 'a float in the range [0, inf)', '-1.0')),
    ({"max_iter": 0}, ValueError, _invalid('max_iter', 'an int in the range [1, inf) or None',
                                           '0')),
    ({"metric_params": 3}, TypeError, _invalid('metric_params',
                                               "an instance of 'dict' or None", '3')),
    ({"out_of_sample": "regressor", "metric": "precomputed"}, ValueError,
     r"out_of_sample='regressor' needs the points' features"),
    ({"n_neighbors": 0}, ValueError, _invalid('n_neighbors',
                                              'an int in the range [1, inf) or None',
                                              '0')),
    ({"n_neighbors": 300}, ValueError,
     r"n_neighbors=300 must be smaller than the number of samples \(300\).*<= 299"),
    ({"n_components": 0}, ValueError, _invalid('n_components',
                                               'an int in the range [1, inf)',
                                               '0')),
    ({"path_method": "bellman"}, ValueError,
     _invalid('path_method', "a str among {'auto', 'FW', 'D', 'dijkstra', 'floyd'}",
              "'bellman'")),
    ({"eigen_solver": "qr"}, ValueError, _invalid('eigen_solver',
                                                  "a str among {'auto', 'dense', "
                                                  "'arpack', 'lobpcg', 'randomized'}",
                                                  "'qr'")),
    ({"on_disconnected": "drop"}, ValueError,
     _invalid('on_disconnected', "a str among {'connect', 'raise', 'largest'}", "'drop'")),
    ({"out_of_sample": "nystrom"}, ValueError,
     _invalid('out_of_sample', "a str among {'geodesic', 'regressor'}", "'nystrom'")),
    ({"landmark_method": "kmeans"}, ValueError, _invalid('landmark_method',
                                                         "a str among {'random', 'maxmin'}",
                                                         "'kmeans'")),
    ({"n_landmarks": 2.5}, TypeError, _invalid('n_landmarks',
                                               'an int in the range [1, inf) or None',
                                               '2.5')),
    ({"n_landmarks": 500}, ValueError, r"n_landmarks=500 is larger than the number of embedded"),
    ({"n_components": 61, "n_landmarks": 60}, ValueError,
     r"n_components=61 is larger than n_landmarks \(60\)"),
    ({"n_components": 301}, ValueError, r"larger than the number of embedded points \(300\)"),
    ({"dtype": np.int32}, ValueError, _invalid('dtype',
                                               'np.float32, np.float64 or None',
                                               "<class 'numpy.int32'>")),
    ({"regressor": 3}, TypeError, _invalid('regressor',
                                           "an object implementing 'fit' and 'predict' or None",
                                           '3')),
])
def test_bad_parameters(kwargs, error, match):
    with pytest.raises(error, match=match):
        Isomap(**kwargs).fit(roll(300, seed=13))


def test_bad_input_and_use_before_fit():
    with pytest.raises(fastdr.NotFittedError, match="not fitted yet"):
        Isomap().transform(np.ones((2, 3)))
    with pytest.raises(fastdr.NotFittedError, match="not fitted yet"):
        Isomap().reconstruction_error()
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        Isomap().fit(np.full((10, 3), np.nan))
    with pytest.raises(ValueError, match=r"X has 1 sample\(s\)"):
        Isomap().fit(np.ones((1, 3)))
    iso = Isomap(n_neighbors=5).fit(roll(200, seed=14))
    with pytest.raises(ValueError, match="X has 2 features, but Isomap is expecting 3"):
        iso.transform(np.ones((4, 2)))
    eps = Isomap(radius=1.5, n_neighbors=None).fit(two_sheets()[:200])
    with pytest.raises(ValueError, match=r"1 of the 2 points to transform \(rows \[1\]\) have "
                                         r"no training point within radius=1.5"):
        eps.transform(np.array([[3.0, 3.0, 0.5], [3.0, 3.0, 40.0]]))


def test_memory_budget_error_suggests_landmarks(monkeypatch):
    monkeypatch.setenv("FASTDR_MEMORY_BUDGET", "100K")
    X = roll(300, seed=15)
    with pytest.raises(fastdr.MemoryBudgetError,
                       match=r"Isomap's m x m geodesic distance matrix needs 720,000 bytes.*"
                             r"n_landmarks"):
        Isomap().fit(X)
    with pytest.raises(fastdr.MemoryBudgetError, match="landmark geodesic matrix"):
        Isomap(n_landmarks=100).fit(X)
    lm = Isomap(n_landmarks=30, random_state=0).fit(X)  # 300 x 30 fits
    assert lm.embedding_.shape == (300, 2)


def test_precomputed_with_landmarks_and_largest_component():
    from sklearn.metrics import pairwise_distances

    X = np.vstack([sheet(5, 6, [0, 0, 50], seed=2), two_sheets()[:200]])
    D = pairwise_distances(X)
    features = Isomap(n_neighbors=6, n_landmarks=40, random_state=0).fit(X[30:])
    pre = Isomap(n_neighbors=6, n_landmarks=40, random_state=0,
                 metric="precomputed").fit(D[30:, 30:])
    np.testing.assert_array_equal(pre.landmarks_, features.landmarks_)
    assert reference.procrustes_disparity(pre.embedding_, features.embedding_) < 1e-10
    np.testing.assert_allclose(pre.transform(D[30:40, 30:]), pre.embedding_[:10], atol=1e-6)
    with pytest.warns(UserWarning, match=r"embeds only the largest one: 200 of 230 rows"):
        largest = Isomap(n_neighbors=6, metric="precomputed", on_disconnected="largest").fit(D)
    np.testing.assert_array_equal(largest.kept_indices_, np.arange(30, 230))
    # new points give their distances to the kept training rows
    np.testing.assert_allclose(largest.transform(D[30:35, 30:]), largest.embedding_[:5],
                               atol=1e-6)
    with pytest.raises(ValueError, match="Negative values in data passed to precomputed"):
        Isomap(metric="precomputed").fit(-D)


def test_precomputed_neighbours_drop_self_as_sklearn():
    from sklearn.neighbors import NearestNeighbors as SkNN

    from fastdr.manifold._isomap_precomputed import PrecomputedNeighbors, check_precomputed

    rng = np.random.default_rng(3)
    P = rng.uniform(size=(30, 2))
    P[5] = P[4]  # a duplicate: its twin at distance 0 ties with itself
    D = np.sqrt(((P[:, None] - P[None]) ** 2).sum(-1))
    for matrix in (D, scipy_csr(D)):
        ours = PrecomputedNeighbors(4).fit(check_precomputed(matrix))
        theirs = SkNN(n_neighbors=4, metric="precomputed").fit(matrix)
        d1, i1 = ours.kneighbors()
        d2, i2 = theirs.kneighbors()
        np.testing.assert_allclose(d1, d2)
        # the twins tie everywhere and may swap places; each row holds one of them once
        np.testing.assert_array_equal(np.where(i1 == 5, 4, i1), np.where(i2 == 5, 4, i2))
        assert not np.any(i1 == np.arange(30)[:, None])


def scipy_csr(D):
    import scipy.sparse

    return scipy.sparse.csr_matrix(D)
