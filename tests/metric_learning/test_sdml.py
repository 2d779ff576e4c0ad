"""SDML and SDML_Supervised: metric-learn's constructors, the graphical lasso's input against
its pairwise definition, the lasso's optimality conditions at the learned M, the classifier
of pairs, and the failures metric-learn leaves to a RuntimeError.

metric-learn 0.7 itself cannot be the oracle here: without skggm it passes ``cov_init`` to
scikit-learn's ``graphical_lasso``, which no longer takes it, and raises RuntimeError on every
input (scikit-learn 1.7)."""

import inspect

import numpy as np
import pytest
from sklearn.covariance import graphical_lasso
from sklearn.datasets import load_iris

from fastdr import ConvergenceWarning
from fastdr.metric_learning import SDML, SDML_Supervised
from fastdr.metric_learning._sdml import signed_scatter

from ..reference import learners as reference

# metric_learn/sdml.py at 0.7.0, in order, with the defaults
METRIC_LEARN_SDML = [("balance_param", 0.5), ("sparsity_param", 0.01), ("prior", "identity"),
                     ("verbose", False), ("preprocessor", None), ("random_state", None)]
METRIC_LEARN_SDML_SUPERVISED = [
    ("balance_param", 0.5), ("sparsity_param", 0.01), ("prior", "identity"),
    ("n_constraints", None), ("verbose", False), ("preprocessor", None),
    ("random_state", None), ("num_constraints", "deprecated")]
# the setting of metric-learn's own example: the inverse covariance as prior, pairs lightly
WORKING = {"prior": "covariance", "balance_param": 1e-5}


@pytest.mark.parametrize("cls,expected", [(SDML, METRIC_LEARN_SDML),
                                          (SDML_Supervised, METRIC_LEARN_SDML_SUPERVISED)])
def test_constructor_is_metric_learns(cls, expected):
    params = inspect.signature(cls).parameters.values()
    assert [(p.name, p.default) for p in params] == expected


def _iris_pairs(seed=0, n=120):
    X, y = load_iris(return_X_y=True)
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 150, n), rng.integers(0, 150, n)
    keep = a != b
    pairs = np.stack([X[a[keep]], X[b[keep]]], axis=1)
    labels = np.where(y[a[keep]] == y[b[keep]], 1.0, -1.0)
    return X, pairs, labels


def test_signed_scatter_is_the_pairwise_sum():
    _, pairs, labels = _iris_pairs()
    prior_inverse = np.cov(pairs.reshape(-1, 4), rowvar=False)
    expected = reference.sdml_lasso_input(pairs, labels, prior_inverse, 0.3)
    np.testing.assert_allclose(prior_inverse + 0.3 * signed_scatter(pairs, labels), expected,
                               rtol=1e-12, atol=1e-12)


def test_learned_metric_is_the_graphical_lasso_optimum():
    X, pairs, labels = _iris_pairs()
    sdml = SDML(prior="identity", balance_param=1e-3, sparsity_param=0.05).fit(pairs, labels)
    M = sdml.get_mahalanobis_matrix()
    S = reference.sdml_lasso_input(pairs, labels, np.eye(4), 1e-3)
    np.testing.assert_allclose(M, graphical_lasso(S, alpha=0.05)[1], rtol=1e-6, atol=1e-9)
    # optimality of min tr(S M) - log det M + alpha sum_{i != j} |M_ij|: the subgradient of
    # the penalty balances S - M^{-1} off the diagonal, and the diagonal matches exactly
    G = S - np.linalg.inv(M)
    off = ~np.eye(4, dtype=bool)
    assert np.abs(np.diag(G)).max() < 1e-3 * np.abs(S).max()
    nonzero = off & (np.abs(M) > 1e-10)
    np.testing.assert_allclose(G[nonzero], -0.05 * np.sign(M[nonzero]), atol=2e-3)
    assert (np.abs(G[off & ~nonzero]) <= 0.05 + 2e-3).all()


def test_pairs_classifier_and_preprocessor():
    X, pairs, labels = _iris_pairs()
    sdml = SDML(**WORKING).fit(pairs, labels)
    distances = sdml.pair_distance(pairs)
    np.testing.assert_array_equal(sdml.predict(pairs),
                                  np.where(distances <= sdml.threshold_, 1, -1))
    assert sdml.score(pairs, labels) > 0.75  # ROC AUC; chance is 0.5
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 150, 120), rng.integers(0, 150, 120)
    keep = a != b
    indexed = SDML(preprocessor=X, **WORKING).fit(np.column_stack([a[keep], b[keep]]), labels)
    np.testing.assert_allclose(indexed.components_, sdml.components_, rtol=1e-12)


def test_supervised_draws_reproducible_labelled_pairs():
    X, y = load_iris(return_X_y=True)
    y = y.copy()
    y[:10] = -1  # unlabelled, as in metric-learn
    fits = [SDML_Supervised(random_state=3, **WORKING).fit(X, y) for _ in range(2)]
    np.testing.assert_array_equal(fits[0].components_, fits[1].components_)
    assert fits[0].must_link_.shape == (20 * 4**2, 2)  # metric-learn counts -1 as a label
    drawn = np.concatenate([fits[0].must_link_.ravel(), fits[0].cannot_link_.ravel()])
    assert drawn.min() >= 10
    with pytest.warns(FutureWarning, match='"num_constraints" was renamed "n_constraints"'):
        old = SDML_Supervised(random_state=3, num_constraints=30, **WORKING).fit(X, y)
    assert old.must_link_.shape == (30, 2)


def test_ill_posed_lasso_input_is_a_named_error():
    # the defaults on iris: the dissimilar pairs make the lasso's input indefinite
    X, y = load_iris(return_X_y=True)
    with pytest.warns(ConvergenceWarning, match="not positive semidefinite"), \
            pytest.raises(ValueError, match="SDML's graphical lasso .*Lower balance_param"):
        SDML_Supervised(random_state=0).fit(X, y)


def test_one_feature_and_bad_parameters_are_named():
    X, pairs, labels = _iris_pairs()
    with pytest.raises(ValueError, match=r"Cannot fit SDML with 1 feature\(s\)"):
        SDML().fit(pairs[:, :, :1], labels)
    with pytest.raises(ValueError, match="'sparsity_param' parameter of SDML must be"):
        SDML(sparsity_param=-1.0).fit(pairs, labels)
    with pytest.raises(ValueError, match="input .* overflows float64. Lower balance_param"):
        SDML(balance_param=1e307).fit(pairs, labels)
