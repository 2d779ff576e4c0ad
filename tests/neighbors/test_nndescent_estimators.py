"""algorithm="nndescent" in the public estimators: recall, determinism, models, manifolds,
errors and pickling."""

import pickle
import re

import numpy as np
import pytest
from scipy.spatial import procrustes
from sklearn.datasets import make_swiss_roll

import fastdr
from fastdr import (
    Isomap,
    KNeighborsClassifier,
    KNeighborsRegressor,
    LocallyLinearEmbedding,
    NearestNeighbors,
    kneighbors_graph,
    radius_neighbors_graph,
)


def clustered(m, d=30, *, intrinsic=8, n_clusters=12, seed=0):
    """Gaussian clusters, each spread over its own random ``intrinsic``-dim subspace."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=4.0, size=(n_clusters, d))
    label = rng.integers(0, n_clusters, m)
    bases = rng.normal(size=(n_clusters, intrinsic, d)) / np.sqrt(intrinsic)
    spread = np.einsum("mi,mid->md", rng.normal(size=(m, intrinsic)), bases[label])
    return centres[label] + spread + 0.05 * rng.normal(size=(m, d)), label


def blobs(m, d=30, *, seed=0, spread=3.0):
    """Full-dimensional Gaussian blobs: NN-descent misses some neighbours here."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=spread, size=(10, d))
    label = rng.integers(0, 10, m)
    return centres[label] + rng.normal(size=(m, d)), label


def recall(found, exact):
    k = exact.shape[1]
    return np.mean([np.intersect1d(a, b).size for a, b in zip(found, exact, strict=True)]) / k


@pytest.fixture(scope="module")
def fitted():
    X, _ = clustered(3000)
    exact = NearestNeighbors(n_neighbors=10, algorithm="brute").fit(X)
    approx = NearestNeighbors(n_neighbors=10, algorithm="nndescent").fit(X)
    return X, exact, approx


@pytest.mark.jit_only  # m >= 1,500: minutes when interpreted (coverage pass)
def test_training_graph_recall_and_exact_distances(fitted):
    X, exact, approx = fitted
    assert approx._algorithm == "nndescent" and approx._nnd is not None
    d_e, i_e = exact.kneighbors()
    d_a, i_a = approx.kneighbors()
    assert recall(i_a, i_e) >= 0.95
    # reported distances are the true Euclidean distances of the returned neighbours
    true = np.linalg.norm(X[:, None, :] - X[i_a], axis=2)
    np.testing.assert_allclose(d_a, true, rtol=1e-10)
    assert np.all(np.diff(d_a, axis=1) >= 0) and not np.any(i_a == np.arange(3000)[:, None])
    # a smaller k reads the first columns of the stored graph; a larger k builds a new one
    np.testing.assert_array_equal(approx.kneighbors(n_neighbors=4)[1], i_a[:, :4])
    d15, i15 = approx.kneighbors(n_neighbors=15)
    assert i15.shape == (3000, 15)
    assert recall(i15, exact.kneighbors(n_neighbors=15)[1]) >= 0.95
    assert approx._nnd.neighbor_indices_.shape == (3000, 10)  # the fitted index is unchanged


@pytest.mark.jit_only  # m >= 1,500: minutes when interpreted (coverage pass)
def test_new_points_recall(fitted):
    X, exact, approx = fitted
    Q, _ = clustered(400, seed=1)
    Q = Q[:, :X.shape[1]]
    d_e, i_e = exact.kneighbors(Q)
    d_a, i_a = approx.kneighbors(Q)
    assert recall(i_a, i_e) >= 0.95
    true = np.linalg.norm(Q[:, None, :] - X[i_a], axis=2)
    np.testing.assert_allclose(d_a, true, rtol=1e-10)
    # a bigger k than the graph's works too for new points
    assert recall(approx.kneighbors(Q, n_neighbors=20)[1],
                  exact.kneighbors(Q, n_neighbors=20)[1]) >= 0.95


@pytest.mark.jit_only  # m >= 1,500: minutes when interpreted (coverage pass)
def test_auto_stays_exact(fitted):
    X, exact, _ = fitted
    nn = NearestNeighbors(n_neighbors=10).fit(X)
    assert nn._algorithm in ("brute", "kd_tree")
    np.testing.assert_array_equal(nn.kneighbors()[1], exact.kneighbors()[1])


@pytest.mark.jit_only  # m >= 1,500: minutes when interpreted (coverage pass)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_same_results_for_one_and_two_threads(dtype):
    X, _ = blobs(2000)
    X = X.astype(dtype)
    Q = X[:200] + 0.1
    one = NearestNeighbors(n_neighbors=8, algorithm="nndescent", n_jobs=1).fit(X)
    two = NearestNeighbors(n_neighbors=8, algorithm="nndescent", n_jobs=2).fit(X)
    for args in ((), (Q,)):
        d1, i1 = one.kneighbors(*args)
        d2, i2 = two.kneighbors(*args)
        np.testing.assert_array_equal(i1, i2)
        np.testing.assert_array_equal(d1, d2)
        assert d1.dtype == dtype
    # the default seed is fixed (fits repeat); another seed gives another approximate graph
    again = NearestNeighbors(n_neighbors=8, algorithm="nndescent").fit(X)
    np.testing.assert_array_equal(again.kneighbors()[1], one.kneighbors()[1])
    # (one round on narrow heaps, so that the graph stays approximate: the defaults find
    # nearly every neighbour of these 2,000 points, whatever the seed)
    rough = {"n_iters": 1, "build_neighbors": 8}
    seed0 = NearestNeighbors(n_neighbors=8, algorithm="nndescent",
                             algorithm_params=rough).fit(X)
    other = NearestNeighbors(n_neighbors=8, algorithm="nndescent",
                             algorithm_params={**rough, "random_state": 1}).fit(X)
    assert not np.array_equal(other.kneighbors()[1], seed0.kneighbors()[1])


@pytest.mark.jit_only  # m >= 1,500: minutes when interpreted (coverage pass)
def test_classifier_and_regressor_close_to_exact():
    # overlapping full-dimensional blobs: the hard case (recall about 0.95 here)
    X, y = blobs(3600, seed=2, spread=0.4)
    X, Xt, y, yt = X[:3000], X[3000:], y[:3000], y[3000:]
    exact = KNeighborsClassifier(n_neighbors=10, algorithm="brute").fit(X, y)
    approx = KNeighborsClassifier(n_neighbors=10, algorithm="nndescent").fit(X, y)
    acc_exact = np.mean(exact.predict(Xt) == yt)
    acc_approx = np.mean(approx.predict(Xt) == yt)
    assert 0.5 < acc_exact < 1.0  # overlapping classes: a vote that can go wrong
    assert abs(acc_approx - acc_exact) <= 0.01
    assert np.mean(approx.predict(Xt) == exact.predict(Xt)) >= 0.9
    target = X[:, 0] + np.sin(X[:, 1])
    reg_e = KNeighborsRegressor(n_neighbors=10, algorithm="brute").fit(X, target)
    reg_a = KNeighborsRegressor(n_neighbors=10, algorithm="nndescent").fit(X, target)
    err_e = np.abs(reg_e.predict(Xt) - (Xt[:, 0] + np.sin(Xt[:, 1]))).mean()
    err_a = np.abs(reg_a.predict(Xt) - (Xt[:, 0] + np.sin(Xt[:, 1]))).mean()
    assert err_a <= 1.02 * err_e


@pytest.fixture(scope="module")
def roll():
    X = make_swiss_roll(1500, noise=0.0, random_state=0)[0]
    return X, X[::30] + 0.01


@pytest.mark.jit_only  # m >= 1,500: minutes when interpreted (coverage pass)
@pytest.mark.parametrize("cls", [Isomap, LocallyLinearEmbedding])
def test_manifolds_on_the_approximate_graph_match_the_exact_ones(roll, cls):
    X, Q = roll
    params = {"n_neighbors": 10, "n_components": 2, "random_state": 0}
    exact = cls(**params).fit(X)
    approx = cls(neighbors_algorithm="nndescent", **params).fit(X)
    assert approx.nbrs_._algorithm == "nndescent"  # fit and transform use the NN-descent index
    assert procrustes(exact.embedding_, approx.embedding_)[2] < 1e-3
    assert procrustes(exact.transform(Q), approx.transform(Q))[2] < 1e-3


def test_ball_tree_is_an_alias_of_kd_tree(roll):
    X, _ = roll
    # the same seed: the eigensolver of a 300 x 300 matrix is ARPACK, started at random
    ball = Isomap(n_neighbors=8, neighbors_algorithm="ball_tree", random_state=0).fit(X[:300])
    kd = Isomap(n_neighbors=8, neighbors_algorithm="kd_tree", random_state=0).fit(X[:300])
    assert ball.nbrs_.algorithm == "kd_tree"
    np.testing.assert_array_equal(ball.embedding_, kd.embedding_)
    lle = LocallyLinearEmbedding(n_neighbors=8, neighbors_algorithm="ball_tree").fit(X[:300])
    assert lle.nbrs_.algorithm == "kd_tree"


def test_self_query_beyond_the_stored_graph_and_new_points():
    # k above the fitted graph's width: a wider graph with the same parameters, the fitted
    # index left as it was; new points are searched in the fitted graph
    X, _ = clustered(300, seed=2)
    nn = NearestNeighbors(n_neighbors=4, algorithm="nndescent").fit(X)
    before = nn.kneighbors()
    dist, ind = nn.kneighbors(n_neighbors=25)
    assert ind.shape == (300, 25) and not np.any(ind == np.arange(300)[:, None])
    _, exact_i = NearestNeighbors(n_neighbors=25, algorithm="brute").fit(X).kneighbors()
    assert recall(ind, exact_i) >= 0.95
    assert np.all(np.diff(dist, axis=1) >= 0)
    after = nn.kneighbors()
    np.testing.assert_array_equal(after[1], before[1])
    np.testing.assert_array_equal(after[0], before[0])
    # new points: a search of the fitted graph
    Q = X[:40] + 1e-3
    found = nn.kneighbors(Q, n_neighbors=4)[1]
    exact = NearestNeighbors(n_neighbors=4, algorithm="brute").fit(X).kneighbors(Q)[1]
    assert recall(found, exact) >= 0.95


def test_kneighbors_graph_with_and_without_self():
    X, _ = clustered(500, seed=4)
    ref = NearestNeighbors(n_neighbors=6, algorithm="nndescent").fit(X).kneighbors()[1]
    G = kneighbors_graph(X, 6, algorithm="nndescent")
    np.testing.assert_array_equal(G.indices.reshape(500, 6), ref)
    S = kneighbors_graph(X, 6, mode="distance", include_self=True, algorithm="nndescent",
                         algorithm_params={"n_trees": 4})
    ind = S.indices.reshape(500, 6)
    np.testing.assert_array_equal(ind[:, 0], np.arange(500))
    assert np.all(S.data.reshape(500, 6)[:, 0] == 0)
    own = NearestNeighbors(n_neighbors=5, algorithm="nndescent",
                           algorithm_params={"n_trees": 4}).fit(X).kneighbors()[1]
    np.testing.assert_array_equal(ind[:, 1:], own)


def test_bad_algorithm_params():
    X = np.random.default_rng(0).normal(size=(50, 3))
    allowed = ("n_trees, n_iters, max_candidates, delta, leaf_size, build_neighbors, epsilon, "
               "random_state")
    with pytest.raises(ValueError, match=re.escape("unknown key(s) 'trees'") + ".*"
                       + re.escape(allowed)):
        NearestNeighbors(algorithm="nndescent", algorithm_params={"trees": 4}).fit(X)
    # keys are checked for every algorithm (a typo must not pass silently)
    with pytest.raises(ValueError, match="unknown key"):
        KNeighborsClassifier(algorithm_params={"eps": 0.2}).fit(X, np.arange(50) % 2)
    with pytest.raises(ValueError, match="The 'algorithm_params' parameter of "
                                         "NearestNeighbors must be"):
        NearestNeighbors(algorithm="nndescent", algorithm_params=[("n_trees", 4)]).fit(X)
    with pytest.raises(ValueError, match=r"epsilon must be >= 0, got -1"):
        NearestNeighbors(algorithm="nndescent", algorithm_params={"epsilon": -1}).fit(X)
    with pytest.raises(TypeError, match="n_trees must be an int"):
        NearestNeighbors(algorithm="nndescent", algorithm_params={"n_trees": 2.5}).fit(X)
    with pytest.raises(ValueError, match="delta must be >= 0"):
        KNeighborsRegressor(algorithm="nndescent",
                            algorithm_params={"delta": -0.1}).fit(X, np.ones(50))
    with pytest.raises(ValueError, match="a str among .*'nndescent'"):
        Isomap(neighbors_algorithm="annoy").fit(X)


def test_radius_queries_are_a_clear_error():
    X = np.random.default_rng(0).normal(size=(60, 3))
    nn = NearestNeighbors(algorithm="nndescent", radius=1.0).fit(X)
    message = "has no radius search.*'brute'.*'kd_tree'"
    with pytest.raises(ValueError, match="algorithm='nndescent' " + message):
        nn.radius_neighbors()
    with pytest.raises(ValueError, match=message):
        nn.radius_neighbors_graph(X[:5])
    with pytest.raises(ValueError, match=message):
        radius_neighbors_graph(X, 1.0, algorithm="nndescent")
    with pytest.raises(ValueError, match="neighbors_algorithm='nndescent' " + message):
        Isomap(n_neighbors=None, radius=1.0, neighbors_algorithm="nndescent").fit(X)


def test_dask_neighbours_stay_exact():
    import dask.array as da

    import fastdr.dask as fdd

    X = da.from_array(np.random.default_rng(0).normal(size=(40, 3)), chunks=20)
    with pytest.raises(ValueError, match="algorithm must be one of 'auto', 'brute', "
                                         "'kd_tree'; got 'nndescent'"):
        fdd.NearestNeighbors(algorithm="nndescent").fit(X)


@pytest.mark.jit_only  # interpreted (coverage pass) it takes most of a minute or more
def test_pickled_estimator_answers_the_same(fitted):
    X, _, approx = fitted
    Q = X[:50] + 0.05
    clone = pickle.loads(pickle.dumps(approx))
    for args in ((), (Q,)):
        d0, i0 = approx.kneighbors(*args)
        d1, i1 = clone.kneighbors(*args)
        np.testing.assert_array_equal(i0, i1)
        np.testing.assert_array_equal(d0, d1)
    y = np.arange(X.shape[0]) % 3
    clf = KNeighborsClassifier(n_neighbors=5, algorithm="nndescent").fit(X, y)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict(Q), clf.predict(Q))


def test_one_training_point_falls_back_to_exact():
    X = np.array([[0.0, 1.0]])
    nn = NearestNeighbors(n_neighbors=1, algorithm="nndescent").fit(X)
    dist, ind = nn.kneighbors([[3.0, 5.0]])
    assert ind.tolist() == [[0]] and dist.tolist() == [[5.0]]
    assert fastdr.NearestNeighbors().get_params()["algorithm_params"] is None
