"""LSML and LSML_Supervised: metric-learn's constructors, the loss and its gradient against
their definitions, the batched line search against metric-learn's loop, the objective against
metric-learn's own fit, and the classifier of quadruplets."""

import inspect
import pickle

import numpy as np
import pytest
from numpy.linalg import LinAlgError
from sklearn.datasets import load_iris

from fastdr.metric_learning import LSML, LSML_Supervised
from fastdr.metric_learning._lsml import (
    _Metric,
    _row_norms,
    best_step,
    candidates,
    lsml_gradient,
    lsml_loss,
)

from ..reference import learners as reference

# metric_learn/lsml.py at 0.7.0, in order, with the defaults
METRIC_LEARN_LSML = [("tol", 1e-3), ("max_iter", 1000), ("prior", "identity"),
                     ("verbose", False), ("preprocessor", None), ("random_state", None)]
METRIC_LEARN_LSML_SUPERVISED = [
    ("tol", 1e-3), ("max_iter", 1000), ("prior", "identity"), ("n_constraints", None),
    ("weights", None), ("verbose", False), ("preprocessor", None), ("random_state", None),
    ("num_constraints", "deprecated")]


@pytest.mark.parametrize("cls,expected", [(LSML, METRIC_LEARN_LSML),
                                          (LSML_Supervised, METRIC_LEARN_LSML_SUPERVISED)])
def test_constructor_is_metric_learns(cls, expected):
    params = inspect.signature(cls).parameters.values()
    assert [(p.name, p.default) for p in params] == expected


def _iris_quadruplets(seed=0, n=60):
    """Quadruplets of iris: a pair of one class, then a pair of two classes."""
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(seed)
    rows = []
    while len(rows) < n:
        a, b, c, d = rng.integers(0, 150, 4)
        if a != b and y[a] == y[b] and y[c] != y[d]:
            rows.append((a, b, c, d))
    return X, y, np.asarray(rows)


def _parts(Q, w=None):
    vab, vcd = Q[:, 0] - Q[:, 1], Q[:, 2] - Q[:, 3]
    return vab, vcd, np.full(len(Q), 1 / len(Q)) if w is None else w


def test_gradient_is_the_loss_derivative():
    X, _, idx = _iris_quadruplets()
    vab, vcd, _ = _parts(X[idx])
    w = np.random.default_rng(1).random(len(idx))
    w /= w.sum()
    rng = np.random.default_rng(2)
    A = rng.standard_normal((4, 4))
    M, P = A @ A.T + np.eye(4), np.linalg.inv(np.cov(X, rowvar=False))
    G = lsml_gradient(np.linalg.inv(M), vab, vcd, w, P, _row_norms(vab, M), _row_norms(vcd, M))
    h = 1e-6
    for i, j in [(0, 0), (0, 1), (2, 3), (3, 3)]:
        E = np.zeros((4, 4))
        E[i, j] = E[j, i] = h
        numeric = (lsml_loss(M + E, vab, vcd, w, P) - lsml_loss(M - E, vab, vcd, w, P)) / (2 * h)
        assert G[i, j] * (1 if i == j else 2) == pytest.approx(numeric, rel=1e-5)


def _metric_learns_candidates(M, G, vab, vcd, w):
    """Each candidate as metric-learn computes it: decomposed, clipped, loss from scratch."""
    out = []
    for step in np.logspace(-10, 0, 10) / np.linalg.norm(G):
        values, vectors = np.linalg.eigh(M - step * G)
        candidate = (vectors * np.maximum(values, 1e-8)) @ vectors.T
        out.append((lsml_loss(candidate, vab, vcd, w, np.eye(4)), candidate))
    return out


@pytest.mark.parametrize("start", ["near", "far"])
def test_batched_line_search_is_metric_learns_loop(start):
    """'far' starts near singular, so the large steps need the clip."""
    X, _, idx = _iris_quadruplets()
    vab, vcd, w = _parts(X[idx])
    M = np.eye(4) if start == "near" else np.diag([1.0, 1e-3, 1e-6, 2.0])
    metric = _Metric(M)
    dab, dcd = _row_norms(vab, M), _row_norms(vcd, M)
    G = lsml_gradient(metric.inverse, vab, vcd, w, np.eye(4), dab, dcd)
    loss, M_new, dab_new, dcd_new = best_step(metric, G, vab, vcd, w, np.eye(4), dab, dcd)
    best_loss, best_M = min(_metric_learns_candidates(M, G, vab, vcd, w), key=lambda e: e[0])
    assert loss == pytest.approx(best_loss, rel=1e-10)
    np.testing.assert_allclose(M_new, best_M, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dab_new, _row_norms(vab, best_M), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dcd_new, _row_norms(vcd, best_M), rtol=1e-9, atol=1e-12)


def test_candidates_clipped_just_above_zero():
    """A step that leaves an eigenvalue in (0, 1e-8) is clipped too (the lower bound on the
    candidate's eigenvalues decides which need the decomposition): every candidate's loss
    and metric, with the smallest eigenvalue of M at 1.1e-8 and G pushing it down."""
    X, _, idx = _iris_quadruplets()
    vab, vcd, w = _parts(X[idx])
    M, G = np.diag([1.0, 0.5, 2.0, 1.1e-8]), np.diag([0.3, -0.2, 0.1, 1.0])
    losses, metric_of, dab_new, _ = candidates(_Metric(M), G, vab, vcd, w, np.eye(4),
                                               _row_norms(vab, M), _row_norms(vcd, M))
    expected = _metric_learns_candidates(M, G, vab, vcd, w)
    assert 0 < 1.1e-8 - np.logspace(-10, 0, 10)[1] / np.linalg.norm(G) < 1e-8  # the case
    for k, (loss, candidate) in enumerate(expected):
        assert losses[k] == pytest.approx(loss, rel=1e-10, abs=1e-10)
        np.testing.assert_allclose(metric_of(k), candidate, rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(dab_new[:, k], _row_norms(vab, candidate), rtol=1e-9,
                                   atol=1e-15)


@pytest.mark.parametrize("prior", ["identity", "covariance"])
def test_fit_is_the_reference_loop(prior):
    X, _, idx = _iris_quadruplets()
    Q = X[idx]
    lsml = LSML(prior=prior, max_iter=40).fit(Q)
    P0 = (np.eye(4) if prior == "identity"
          else np.linalg.inv(np.cov(np.unique(Q.reshape(-1, 4), axis=0), rowvar=False)))
    M, loss, n_iter = reference.lsml_fit(Q, np.full(len(Q), 1 / len(Q)), P0, 1e-3, 40)
    assert lsml.n_iter_ == n_iter
    np.testing.assert_allclose(lsml.get_mahalanobis_matrix(), M, rtol=1e-7, atol=1e-9)


# metric-learn 0.7's LSML (scikit-learn 1.7.2) fitted on these quadruplets (_iris_quadruplets
# with seed 0, n 60, and with the covariance prior): the loss of its M, by its own _total_loss
# (both stop after 2 steps: their gradient, without the weights, finds no lower step)
METRIC_LEARN_LOSS = {"identity": 4.035989745871628, "covariance": -2.2358098626158243}


@pytest.mark.parametrize("prior", ["identity", "covariance"])
def test_objective_at_most_metric_learns(prior):
    X, _, idx = _iris_quadruplets()
    Q = X[idx]
    lsml = LSML(prior=prior).fit(Q)
    P0 = (np.eye(4) if prior == "identity"
          else np.linalg.inv(np.cov(np.unique(Q.reshape(-1, 4), axis=0), rowvar=False)))
    vab, vcd, w = _parts(Q)
    loss = lsml_loss(lsml.get_mahalanobis_matrix(), vab, vcd, w, np.linalg.inv(P0))
    assert loss < METRIC_LEARN_LOSS[prior] - 1e-4


def test_weights_are_normalised_and_left_alone():
    X, _, idx = _iris_quadruplets()
    weights = np.arange(1.0, len(idx) + 1)
    before = weights.copy()
    lsml = LSML(max_iter=5).fit(X[idx], weights=weights)
    np.testing.assert_array_equal(weights, before)
    np.testing.assert_allclose(lsml.w_, before / before.sum())
    with pytest.raises(ValueError, match="one weight per quadruplet"):
        LSML().fit(X[idx], weights=np.ones(3))
    with pytest.raises(ValueError, match="positive sum"):
        LSML().fit(X[idx], weights=-weights)


def test_quadruplets_classifier():
    X, _, idx = _iris_quadruplets()
    Q = X[idx]
    lsml = LSML().fit(Q)
    d_first, d_second = lsml.pair_distance(Q[:, :2]), lsml.pair_distance(Q[:, 2:])
    np.testing.assert_allclose(lsml.decision_function(Q), d_second - d_first, rtol=1e-12)
    np.testing.assert_array_equal(lsml.predict(Q), np.sign(d_second - d_first))
    assert lsml.score(Q) == pytest.approx((np.sign(d_second - d_first).mean() + 1) / 2)
    assert lsml.score(Q) > 0.9
    # a tie predicts 0 (metric-learn's np.sign), and scores a half
    tie = np.stack([Q[0, :2], Q[0, :2]]).reshape(1, 4, 4)
    assert lsml.predict(tie)[0] == 0 and lsml.score(tie) == 0.5
    np.testing.assert_array_equal(lsml.classes_, [0, 1])


def test_preprocessor_indices_match_formed_quadruplets():
    X, _, idx = _iris_quadruplets()
    formed = LSML(max_iter=20).fit(X[idx])
    indexed = LSML(max_iter=20, preprocessor=X).fit(idx)
    np.testing.assert_array_equal(formed.components_, indexed.components_)
    np.testing.assert_array_equal(formed.predict(X[idx]), indexed.predict(idx))
    with pytest.raises(ValueError, match="out of range for the preprocessor's 150 rows"):
        indexed.predict(idx + 150)
    with pytest.raises(ValueError, match="must have 4 columns"):
        indexed.fit(idx[:, :3])


@pytest.mark.parametrize("bad,match", [
    (np.ones((5, 3, 4)), r"shape \(n_quadruplets, 4, n_features\)"),
    (np.ones((5, 4)), "3-D array of formed quadruplets"),
    (np.full((5, 4, 2), np.nan), "NaN"),
])
def test_bad_quadruplets_are_named(bad, match):
    with pytest.raises(ValueError, match=match):
        LSML().fit(bad)


def test_prior_must_be_positive_definite():
    X, _, idx = _iris_quadruplets()
    with pytest.raises(LinAlgError, match="strictly positive definite"):
        LSML(prior=np.diag([1.0, 1.0, 1.0, 0.0])).fit(X[idx])
    with pytest.raises(ValueError, match="must match the dimensionality"):
        LSML(prior=np.eye(3)).fit(X[idx])


def test_supervised_draws_quadruplets_from_classes():
    X, y = load_iris(return_X_y=True)
    lsml = LSML_Supervised(n_constraints=100, random_state=0).fit(X, y)
    q = lsml.quadruplets_
    assert q.shape == (100, 4)
    assert (y[q[:, 0]] == y[q[:, 1]]).all() and (y[q[:, 2]] != y[q[:, 3]]).all()
    again = LSML_Supervised(n_constraints=100, random_state=0).fit(X, y)
    np.testing.assert_array_equal(lsml.components_, again.components_)
    restored = pickle.loads(pickle.dumps(lsml))
    np.testing.assert_array_equal(restored.transform(X), lsml.transform(X))
    with pytest.warns(FutureWarning, match='"num_constraints" was renamed'):
        LSML_Supervised(num_constraints=50, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        LSML_Supervised().fit(X, np.zeros(150))
