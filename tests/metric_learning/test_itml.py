"""ITML and ITML_Supervised: the compiled sweep against the algorithm written out, metric-learn
0.7's numbers on the same pairs, the constraints met, and the pairs classifier."""

import numpy as np
import pytest
from sklearn.datasets import load_iris

from fastdr._kernels.learners.itml import itml_sweep
from fastdr.metric_learning import ITML, ITML_Supervised

from ..reference import learners as reference


def _iris_pairs(n=400, seed=0):
    X, y = load_iris(return_X_y=True)
    rng = np.random.RandomState(seed)
    a, b = rng.randint(0, len(y), 4 * n), rng.randint(0, len(y), 4 * n)
    keep = np.any(X[a] != X[b], axis=1)
    a, b = a[keep], b[keep]
    same = y[a] == y[b]
    pick = np.r_[np.flatnonzero(same)[:n], np.flatnonzero(~same)[:n]]
    pairs = np.stack([X[a[pick]], X[b[pick]]], axis=1)
    return X, y, pairs, np.where(same[pick], 1, -1)


@pytest.mark.parametrize("gamma", [1.0, 10.0, np.inf])
def test_sweep_matches_the_algorithm_written_out(rng, gamma):
    d = 5
    pos, neg = rng.standard_normal((30, d)), 2 * rng.standard_normal((25, d))
    A = np.eye(d)
    diffs = np.ascontiguousarray(np.r_[pos, neg])
    delta = np.r_[np.ones(30), -np.ones(25)]
    bounds = np.r_[np.full(30, 2.0), np.full(25, 20.0)]
    lambdas = np.zeros(55)
    ref_pb, ref_nb, ref_lam = bounds[:30].copy(), bounds[30:].copy(), lambdas.copy()
    gamma_proj = 1.0 if np.isinf(gamma) else gamma / (gamma + 1.0)
    ref_A = A.copy()
    for _ in range(3):
        itml_sweep(A, diffs, delta, bounds, lambdas, gamma, gamma_proj, np.empty(d))
        ref_A = reference.itml_sweep(ref_A, pos, neg, ref_pb, ref_nb, ref_lam, gamma)
    np.testing.assert_allclose(A, ref_A, rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(A, A.T)
    np.testing.assert_allclose(lambdas, ref_lam, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(bounds, np.r_[ref_pb, ref_nb], rtol=1e-12)


@pytest.mark.jit_only  # 999 sweeps of 800 pairs: 17 s interpreted
def test_iris_pairs_equal_metric_learn():
    _, _, pairs, labels = _iris_pairs()
    itml = ITML(random_state=0).fit(pairs, labels)
    # metric_learn.ITML(random_state=0).fit(pairs, labels) on these pairs (metric-learn 0.7.0)
    np.testing.assert_allclose(itml.bounds_, [0.4242640687119282, 5.312249994117371],
                               rtol=1e-14)
    assert itml.n_iter_ == 999
    np.testing.assert_allclose(itml.get_mahalanobis_matrix()[0],
                               [0.3732970008792463, -0.0101084532183349, -0.45557245025107534,
                                -0.2921357818128809], rtol=1e-10)
    assert itml.threshold_ == pytest.approx(0.9159320748160618, rel=1e-10)


def test_hard_bounds_are_met(rng):
    # feasible, and violated at the start: classes 6 apart along feature 0 (spread 0.01),
    # noise of 0.1 in the others; must-link within 0.01, cannot-link beyond 49 (squared)
    X = 0.1 * rng.standard_normal((80, 3))
    y = np.repeat([0, 1], 40)
    X[:, 0] = 0.01 * rng.standard_normal(80) + 6 * y
    itml = ITML_Supervised(gamma=np.inf, n_constraints=60, tol=1e-9, max_iter=5000,
                           random_state=0).fit(X, y, bounds=[0.01, 49.0])
    M = itml.get_mahalanobis_matrix()
    sq = lambda idx: np.einsum("ij,jk,ik->i", X[idx[:, 0]] - X[idx[:, 1]], M,  # noqa: E731
                               X[idx[:, 0]] - X[idx[:, 1]])
    # ITML bounds squared distances (as metric-learn's and Davis et al.'s code)
    X0 = X[itml.cannot_link_[:, 0]] - X[itml.cannot_link_[:, 1]]
    assert (np.einsum("ij,ij->i", X0, X0) < 49).all()  # the start violates the bounds
    assert sq(itml.must_link_).max() <= 0.01 * (1 + 1e-6)
    assert sq(itml.cannot_link_).min() >= 49.0 * (1 - 1e-6)


def test_pairs_classifier(rng):
    _, _, pairs, labels = _iris_pairs(n=100)
    itml = ITML(max_iter=50).fit(pairs, labels)
    distances = itml.pair_distance(pairs)
    np.testing.assert_array_equal(itml.decision_function(pairs), -distances)
    np.testing.assert_array_equal(itml.predict(pairs),
                                  np.where(distances <= itml.threshold_, 1, -1))
    # "accuracy": no threshold does better on the calibration pairs
    best = max(np.mean(np.where(distances <= t, 1, -1) == labels)
               for t in np.r_[distances, distances.min() - 1])
    assert np.mean(itml.predict(pairs) == labels) == best
    assert 0.5 < itml.score(pairs, labels) <= 1.0
    itml.set_threshold(0.0)
    assert (itml.predict(pairs) == -1).all()
    for strategy, extra in [("f_beta", {"beta": 2.0}), ("max_tpr", {"min_rate": 0.8}),
                            ("max_tnr", {"min_rate": 0.8})]:
        itml.calibrate_threshold(pairs, labels, strategy=strategy, **extra)
        predicted = itml.predict(pairs)
        if strategy == "max_tpr":
            assert np.mean(predicted[labels == -1] == -1) >= 0.8
        if strategy == "max_tnr":
            assert np.mean(predicted[labels == 1] == 1) >= 0.8
    with pytest.raises(ValueError, match="min_rate must be a number in"):
        itml.calibrate_threshold(pairs, labels, strategy="max_tpr")
    with pytest.raises(ValueError, match="Strategy can either be"):
        itml.calibrate_threshold(pairs, labels, strategy="best")
    with pytest.raises(ValueError, match="threshold must be a real number"):
        itml.set_threshold("high")
    fresh = ITML(max_iter=5)
    fresh._fit_pairs(pairs.astype(float), labels.astype(float), None, np.random.RandomState(0))
    with pytest.raises(AttributeError, match="set_threshold or calibrate_threshold"):
        fresh.predict(pairs)


def test_index_pairs_with_a_preprocessor():
    X, y, pairs, labels = _iris_pairs(n=50)
    index = np.array([[np.flatnonzero((X == p[0]).all(axis=1))[0],
                       np.flatnonzero((X == p[1]).all(axis=1))[0]] for p in pairs])
    by_index = ITML(max_iter=30, preprocessor=X).fit(index, labels)
    direct = ITML(max_iter=30).fit(pairs, labels)
    np.testing.assert_array_equal(by_index.components_, direct.components_)
    np.testing.assert_array_equal(by_index.predict(index), direct.predict(pairs))


def test_identical_points_in_pairs():
    X, y, pairs, labels = _iris_pairs(n=50)
    same = pairs.copy()
    same[0, 1] = same[0, 0]  # a similar pair of one point: a no-op, as in metric-learn
    same[-1, 1] = same[-1, 0]  # a dissimilar one: left out, with a warning
    with pytest.warns(UserWarning, match="1 dissimilar pair"):
        itml = ITML(max_iter=20).fit(same, labels)
    assert np.isfinite(itml.components_).all()


def test_priors_bounds_and_old_names(rng):
    X, y = load_iris(return_X_y=True)
    cov = ITML_Supervised(prior="covariance", max_iter=5, random_state=0).fit(X, y)
    assert np.isfinite(cov.components_).all()
    with pytest.raises(np.linalg.LinAlgError, match="not definite"):
        ITML_Supervised(prior="covariance", random_state=0).fit(
            np.c_[X, X[:, :1]], y)
    with pytest.raises(np.linalg.LinAlgError, match="strictly positive definite"):
        ITML_Supervised(prior=np.diag([1.0, 1.0, 1.0, 0.0]), random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="two elements"):
        ITML_Supervised(random_state=0).fit(X, y, bounds=[1.0])
    random_prior = ITML_Supervised(prior="random", max_iter=5, random_state=0).fit(X, y)
    assert np.isfinite(random_prior.components_).all()
    with pytest.warns(FutureWarning, match="num_constraints"):
        old = ITML_Supervised(num_constraints=30, max_iter=5, random_state=0).fit(X, y)
    assert old.must_link_.shape == (30, 2)
    with pytest.warns(FutureWarning, match="convergence_threshold"):
        ITML_Supervised(convergence_threshold=1e-2, max_iter=5, random_state=0).fit(X, y)


@pytest.mark.jit_only  # seven fits of up to 1,000 sweeps: 53 s interpreted
def test_same_seed_same_metric_and_knn_gain():
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline

    from fastdr import KNeighborsClassifier

    X, y = load_iris(return_X_y=True)
    a = ITML_Supervised(random_state=1).fit(X, y).components_
    b = ITML_Supervised(random_state=1).fit(X, y).components_
    np.testing.assert_array_equal(a, b)
    # iris plus 8 noise features (sd 3): plain 3-NN 0.62 (5-fold), ITML's metric 0.95
    X = np.c_[X, 3 * np.random.RandomState(0).standard_normal((150, 8))]
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    plain = cross_val_score(KNeighborsClassifier(3), X, y, cv=cv).mean()
    score = cross_val_score(make_pipeline(ITML_Supervised(random_state=0),
                                          KNeighborsClassifier(3)), X, y, cv=cv).mean()
    assert score >= plain + 0.25


@pytest.mark.parametrize("bad, labels, match", [
    (np.zeros((0, 2, 4)), np.zeros(0), "empty"),
    (np.full((4, 2, 3), np.nan), np.array([1, 1, -1, -1]), "NaN or infinity"),
    (np.array([[["a", "b"], ["c", "d"]]]), np.array([1]), "string"),
    (np.zeros((4, 3, 3)), np.array([1, 1, -1, -1]), r"shape \(n_pairs, 2, n_features\)"),
    (np.zeros((4, 6)), np.array([1, 1, -1, -1]), "3-D array of formed pairs"),
    (np.ones((4, 2, 3)), np.array([1, 0, -1, -1]), r"only \+1 \(similar\) and -1"),
    (np.ones((4, 2, 3)), np.array([1, -1]), r"one label per pair: expected shape \(4,\)"),
])
def test_bad_pairs_are_named(bad, labels, match):
    with pytest.raises(ValueError, match=match):
        ITML().fit(bad, labels)


def test_queries_are_checked_against_the_fitted_features():
    _, _, pairs, labels = _iris_pairs(n=30)
    itml = ITML(max_iter=5).fit(pairs, labels)
    with pytest.raises(ValueError, match="4 features"):
        itml.transform(np.zeros((3, 5)))
    with pytest.raises(ValueError, match="NaN or infinity"):
        itml.predict(np.full((2, 2, 4), np.inf))


def test_extreme_scales_are_named_not_crashed(rng):
    _, _, pairs, labels = _iris_pairs(n=20)
    with pytest.raises(ValueError, match="squared distances underflow"):
        ITML(max_iter=5).fit(pairs * 1e-200, labels)
    with pytest.raises(ValueError, match="left the float64 range|positive definite"):
        ITML(max_iter=50).fit(pairs * 1e100, labels)
    tiny = pairs.copy()
    tiny[0, 1] = tiny[0, 0]
    tiny[0, 1, 0] += 1e-170  # squared distance underflows: treated as the same point
    assert np.isfinite(ITML(max_iter=5).fit(tiny, labels).components_).all()


def test_negative_labels_are_unlabelled(rng):
    X = rng.standard_normal((40, 3))
    y = np.r_[np.full(20, -1), np.zeros(10, int), np.ones(10, int)]
    itml = ITML_Supervised(max_iter=5, random_state=0).fit(X, y)
    assert itml.must_link_.min() >= 20 and itml.cannot_link_.min() >= 20


def test_calibration_edge_cases():
    _, _, pairs, labels = _iris_pairs(n=20)
    itml = ITML(max_iter=5).fit(pairs, labels)
    with pytest.raises(ValueError, match="needs both similar"):
        itml.calibrate_threshold(pairs, np.ones(len(labels)), strategy="max_tpr", min_rate=0.5)
    with pytest.raises(ValueError, match="Got nan"):
        itml.set_threshold(np.nan)
    bounds = np.array([0.0, 5.0])
    ITML(max_iter=5).fit(pairs, labels, bounds=bounds)
    np.testing.assert_array_equal(bounds, [0.0, 5.0])  # the caller's array is not changed
