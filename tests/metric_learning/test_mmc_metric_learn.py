"""MMC and MMC_Supervised with metric-learn 0.7's interface: its parameters in its order, the
classifier of pairs, the preprocessor, the old parameter names, ``diagonal_c``, unlabelled
rows."""

import inspect

import numpy as np
import pytest

from fastdr import MMC, MMC_Supervised
from fastdr.metric_learning._constraints import draw_class_pairs
from fastdr.metric_learning._mmc_solvers import fit_diagonal

pytestmark = pytest.mark.filterwarnings("ignore::fastdr.exceptions.ConvergenceWarning")

# metric-learn 0.7.0's constructors (metric_learn/mmc.py), in order, with their defaults
METRIC_LEARN_MMC = [("max_iter", 100), ("max_proj", 10000), ("tol", 1e-3),
                    ("init", "identity"), ("diagonal", False), ("diagonal_c", 1.0),
                    ("verbose", False), ("preprocessor", None), ("random_state", None),
                    ("convergence_threshold", "deprecated")]
METRIC_LEARN_MMC_SUPERVISED = [
    ("max_iter", 100), ("max_proj", 10000), ("tol", 1e-6), ("n_constraints", None),
    ("init", "identity"), ("diagonal", False), ("diagonal_c", 1.0), ("verbose", False),
    ("preprocessor", None), ("random_state", None), ("num_constraints", "deprecated"),
    ("convergence_threshold", "deprecated")]


def _data(rng, m=120, noise_dims=3):
    y = rng.integers(0, 3, m)
    X = rng.standard_normal((m, noise_dims + 1))
    X[:, 0] += 3.0 * y
    return X, y


def _labelled_pairs(X, y, rng, n=150):
    codes = np.unique(y, return_inverse=True)[1].astype(np.int64)
    must, cannot = draw_class_pairs(codes, n, rng)
    index = np.concatenate([np.column_stack(must), np.column_stack(cannot)])
    labels = np.r_[np.ones(n), -np.ones(n)]
    return index, labels


@pytest.mark.parametrize("cls,expected", [(MMC, METRIC_LEARN_MMC),
                                          (MMC_Supervised, METRIC_LEARN_MMC_SUPERVISED)])
def test_constructor_is_metric_learns_then_keyword_only_extras(cls, expected):
    params = list(inspect.signature(cls).parameters.values())
    positional = [(p.name, p.default) for p in params
                  if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert positional == expected
    extras = [p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert extras == ["n_components", "n_jobs"]


def test_pairs_classifier_after_fit(rng):
    X, y = _data(rng)
    index, labels = _labelled_pairs(X, y, rng)
    pairs = np.stack([X[index[:, 0]], X[index[:, 1]]], axis=1)
    mmc = MMC(random_state=0).fit(pairs, labels)
    distances = mmc.pair_distance(pairs)
    # the "accuracy" calibration: no other cut of the sorted distances classifies more
    # training pairs correctly than threshold_
    predicted = mmc.predict(pairs)
    np.testing.assert_array_equal(predicted, np.where(distances <= mmc.threshold_, 1, -1))
    best = max(np.sum(np.where(distances <= t, 1, -1) == labels)
               for t in np.r_[-1.0, distances])
    assert np.sum(predicted == labels) == best
    assert np.sum(predicted == labels) > 0.85 * labels.size
    np.testing.assert_array_equal(mmc.decision_function(pairs), -distances)
    assert 0.9 < mmc.score(pairs, labels) <= 1.0
    strict = MMC(random_state=0).fit(pairs, labels, calibration_params={
        "strategy": "max_tpr", "min_rate": 1.0})
    assert (strict.predict(pairs)[labels == -1] == -1).all()  # no dissimilar pair accepted
    assert mmc.set_threshold(0.0).predict(pairs[:3]).tolist() == [-1, -1, -1]


def test_index_form_also_calibrates_the_threshold(rng):
    X, y = _data(rng)
    index, labels = _labelled_pairs(X, y, rng)
    n = labels.size // 2
    by_index = MMC().fit(X, must_link=index[:n], cannot_link=index[n:])
    pairs = np.stack([X[index[:, 0]], X[index[:, 1]]], axis=1)
    by_pairs = MMC().fit(pairs, labels)
    assert by_index.threshold_ == pytest.approx(by_pairs.threshold_, rel=1e-9)
    np.testing.assert_array_equal(by_index.predict(pairs), by_pairs.predict(pairs))


def test_preprocessor_takes_index_pairs_and_index_points(rng):
    X, y = _data(rng)
    index, labels = _labelled_pairs(X, y, rng)
    pairs = np.stack([X[index[:, 0]], X[index[:, 1]]], axis=1)
    formed = MMC().fit(pairs, labels)
    indexed = MMC(preprocessor=X).fit(index, labels)
    np.testing.assert_allclose(indexed.components_, formed.components_, rtol=1e-12)
    np.testing.assert_array_equal(indexed.predict(index), formed.predict(pairs))
    n = labels.size // 2
    points = MMC(preprocessor=X).fit(np.arange(X.shape[0]), must_link=index[:n],
                                     cannot_link=index[n:])
    np.testing.assert_allclose(points.components_, formed.components_, rtol=1e-12)
    supervised = MMC_Supervised(random_state=3, max_iter=20).fit(X, y)
    by_rows = MMC_Supervised(random_state=3, max_iter=20, preprocessor=X).fit(
        np.arange(X.shape[0]), y)
    np.testing.assert_array_equal(by_rows.components_, supervised.components_)
    with pytest.raises(ValueError, match="index 120, out of range for the preprocessor's 120"):
        MMC(preprocessor=X).fit(index + 1, labels)


def test_old_names_warn_and_are_used(rng):
    X, y = _data(rng)
    plain = MMC_Supervised(tol=1e-2, n_constraints=40, random_state=0).fit(X, y)
    with pytest.warns(FutureWarning, match='"convergence_threshold" was renamed "tol"'):
        old_tol = MMC_Supervised(convergence_threshold=1e-2, n_constraints=40,
                                 random_state=0).fit(X, y)
    with pytest.warns(FutureWarning, match='"num_constraints" was renamed "n_constraints"'):
        old_count = MMC_Supervised(tol=1e-2, num_constraints=40, random_state=0).fit(X, y)
    for old in (old_tol, old_count):
        np.testing.assert_array_equal(old.components_, plain.components_)
        assert old.n_iter_ == plain.n_iter_
    assert plain.must_link_.shape == (40, 2)


def test_diagonal_c_weights_the_cannot_link_term(rng):
    X, y = _data(rng)
    index, labels = _labelled_pairs(X, y, rng)
    n = labels.size // 2
    must = index[:n, 0], index[:n, 1]
    cannot = index[n:, 0], index[n:, 1]
    w0 = np.ones(X.shape[1])
    runs = {c: fit_diagonal(X, must, cannot, w0, max_iter=200, tol=1e-14,
                            report=lambda *a: None, weight=c)[0] for c in (1.0, 3.0)}
    # h_c(w) = s.w - c log g(w), g homogeneous of degree 1/2: the minimiser scales with c
    np.testing.assert_allclose(runs[3.0], 3.0 * runs[1.0], rtol=1e-5, atol=1e-9)
    # and it is the minimiser: KKT over w >= 0 (zero gradient where w > 0, >= 0 elsewhere)
    s = ((X[must[0]] - X[must[1]]) ** 2).sum(0)
    V2 = (X[cannot[0]] - X[cannot[1]]) ** 2
    w = runs[1.0]
    dist = np.sqrt(V2 @ w)
    grad = s - (V2 / (2.0 * dist[:, None])).sum(0) / dist.sum()
    used, tol = w > 1e-8 * w.max(), 1e-6 * s.max()
    assert np.abs(grad[used]).max() < tol and grad[~used].min() > -tol
    # the learned M is rescaled onto sum_D d_M = 1, so c leaves it unchanged
    fits = [MMC(diagonal=True, diagonal_c=c, tol=1e-12, max_iter=200).fit(
        X, must_link=index[:n], cannot_link=index[n:]) for c in (1.0, 3.0)]
    np.testing.assert_allclose(fits[1].get_mahalanobis_matrix(),
                               fits[0].get_mahalanobis_matrix(), rtol=1e-5, atol=1e-9)
    with pytest.raises(ValueError, match="'diagonal_c' parameter of MMC must be a float in the "
                                         r"range \(0, inf\)"):
        MMC(diagonal=True, diagonal_c=0.0).fit(X, must_link=index[:n], cannot_link=index[n:])


def test_negative_labels_are_unlabelled_in_mmc_supervised(rng):
    X, y = _data(rng)
    y = y.copy()
    y[:30] = -1
    mmc = MMC_Supervised(random_state=0, max_iter=10).fit(X, y)
    drawn = np.concatenate([mmc.must_link_.ravel(), mmc.cannot_link_.ravel()])
    assert drawn.min() >= 30  # rows 0..29 are unlabelled and never drawn
    np.testing.assert_array_equal(mmc.classes_, [0, 1, 2])
    assert mmc.must_link_.shape == (20 * 4**2, 2)  # metric-learn counts -1 as a label too
    with pytest.raises(ValueError, match="y has no labelled class"):
        MMC_Supervised().fit(X, -np.ones(X.shape[0]))


def test_bad_pair_labels(rng):
    X, _ = _data(rng, m=40)
    pairs = np.stack([X[:6], X[6:12]], axis=1)
    with pytest.raises(ValueError, match=r"y for pairs must hold only \+1 \(must-link\) and -1 "
                                         r"\(cannot-link\); got \[0, 1\]"):
        MMC().fit(pairs, [0, 1, 0, 1, 0, 1])
    with pytest.raises(ValueError, match=r"No cannot-link pair: y has no -1 label"):
        MMC().fit(pairs, np.ones(6))
    with pytest.raises(ValueError, match=r"No must-link pair: y has no \+1 label"):
        MMC().fit(pairs, -np.ones(6))
    with pytest.raises(ValueError, match=r"y must hold one label per pair"):
        MMC().fit(pairs, [1, -1])
    with pytest.raises(ValueError, match="y is required with pairs"):
        MMC().fit(pairs)
    with pytest.raises(ValueError, match=r"pairs must have shape \(n_pairs, 2, n_features\)"):
        MMC().fit(np.zeros((4, 3, 2)), [1, 1, -1, -1])


def test_calibration_params_are_checked_before_the_fit(rng):
    X, y = _data(rng)
    index, labels = _labelled_pairs(X, y, rng)
    pairs = np.stack([X[index[:, 0]], X[index[:, 1]]], axis=1)
    mmc = MMC().fit(pairs, labels)
    before = mmc.threshold_, mmc.components_
    with pytest.raises(ValueError, match="Strategy can either be"):
        mmc.fit(pairs[:40], labels[:40], calibration_params={"strategy": "best"})
    assert (mmc.threshold_, mmc.components_) == before  # refused before anything changed
    with pytest.raises(TypeError, match="Unknown calibration parameters"):
        MMC().fit(pairs, labels, calibration_params={"strategi": "accuracy"})


def test_a_start_that_separates_no_pair_is_named(rng):
    X, y = _data(rng)
    index, labels = _labelled_pairs(X, y, rng)
    n = labels.size // 2
    with pytest.raises(ValueError, match="gives every cannot-link pair distance 0"):
        MMC(diagonal=True, init=np.zeros((4, 4))).fit(X, must_link=index[:n],
                                                       cannot_link=index[n:])


def test_singular_covariance_start_warns_and_uses_the_pseudo_inverse():
    """init="covariance" on linearly dependent features: metric-learn's warning (its text,
    which its tests compare), pointing at the caller, and the pseudo-inverse as the start."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    X = np.c_[X, X[:, 0] + X[:, 1]]
    y = np.repeat([0, 1], 20)
    with pytest.warns(UserWarning, match="^The covariance matrix is not invertible: using the "
                                         "pseudo-inverse instead") as record:
        MMC_Supervised(init="covariance", random_state=0, max_iter=5).fit(X, y)
    assert any(w.filename == __file__ for w in record)
    start = MMC_Supervised(init="covariance")._initial_matrix(X, None)
    np.testing.assert_allclose(start, np.linalg.pinv(np.cov(X, rowvar=False)), rtol=1e-8,
                               atol=1e-10)
