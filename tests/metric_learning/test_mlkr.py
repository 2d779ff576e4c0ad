"""MLKR: the compiled loss and gradient against the pairwise definition and metric-learn 0.7's
numbers, the optimiser's start rules, and determinism."""

import numpy as np
import pytest

from fastdr._kernels.learners import nca as softmax_kernels
from fastdr.metric_learning import MLKR
from fastdr.metric_learning._mlkr import mlkr_loss_gradient

from ..reference import learners as reference


def _regression(rng, m=60, d=4):
    X = rng.standard_normal((m, d))
    y = X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.standard_normal(m)
    return np.ascontiguousarray(X), y


@pytest.mark.parametrize("r", [1, 3])
def test_loss_and_gradient_match_the_pairwise_definition(rng, r):
    X, y = _regression(rng, m=40)
    A = 0.5 * rng.standard_normal((r, 4))
    loss, grad = mlkr_loss_gradient(X, A, y)
    ref_loss, ref_grad = reference.mlkr_loss_gradient(X, A, y)
    assert loss == pytest.approx(ref_loss, rel=1e-10)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-8, atol=1e-10 * np.abs(ref_grad).max())


@pytest.mark.parametrize("block, n_chunks, mode", [
    (16, 1, softmax_kernels.SPARSE), (16, 4, softmax_kernels.DENSE), (7, 3, softmax_kernels.AUTO),
])
def test_blocks_chunks_and_products_agree(rng, block, n_chunks, mode):
    X, y = _regression(rng, m=90)
    A = rng.standard_normal((2, 4))
    rows = np.arange(90, dtype=np.int64)
    ref_loss, ref_grad = mlkr_loss_gradient(X, A, y)
    loss, grad = softmax_kernels.mlkr_objective_gradient(X, A, y, rows, block, n_chunks, mode)
    assert loss == pytest.approx(ref_loss, rel=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-10, atol=1e-12)


def test_loss_on_diabetes_equals_metric_learn():
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    X = np.ascontiguousarray((X - X.mean(0)) / X.std(0))
    y = (y - y.mean()) / y.std()
    A = np.random.RandomState(0).randn(3, 10) * 0.3
    loss, grad = mlkr_loss_gradient(X, A, y)
    assert loss == pytest.approx(METRIC_LEARN_DIABETES_LOSS, rel=1e-12)
    assert grad[0, 0] == pytest.approx(METRIC_LEARN_DIABETES_GRAD00, rel=1e-10)


def test_fit_lowers_the_loss_and_finds_the_relevant_direction(rng):
    X, y = _regression(rng, m=150)
    mlkr = MLKR(n_components=1, init="identity").fit(X, y)
    start, _ = mlkr_loss_gradient(X, np.eye(1, 4), y)
    end, grad = mlkr_loss_gradient(X, mlkr.components_, y)
    assert end < 0.5 * start
    direction = mlkr.components_[0] / np.linalg.norm(mlkr.components_[0])
    assert abs(direction[2]) < 0.2 and abs(direction[3]) < 0.2
    assert abs(direction[0]) > 2 * abs(direction[1]) > 0
    assert mlkr.n_iter_ > 1


@pytest.mark.jit_only  # interpreted, prange is range: one thread, nothing to compare
def test_same_result_for_any_n_jobs(rng):
    X, y = _regression(rng, m=300, d=5)
    fits = [MLKR(n_components=2, max_iter=30, random_state=0, n_jobs=n).fit(X, y).components_
            for n in (1, 2)]
    np.testing.assert_array_equal(fits[0], fits[1])


@pytest.mark.parametrize("init, expected", [
    ("identity", lambda X, r: np.eye(r, X.shape[1])),
    ("random", lambda X, r: np.random.RandomState(3).randn(r, X.shape[1])),
])
def test_named_starts(rng, init, expected):
    X, y = _regression(rng)
    mlkr = MLKR(n_components=2, init=init, max_iter=1, random_state=3)
    np.testing.assert_array_equal(mlkr._start(X, 2), expected(X, 2))


def test_auto_start_is_pca_below_full_rank_and_identity_at_it(rng):
    from fastdr import PCA

    X, y = _regression(rng)
    mlkr = MLKR(random_state=0)
    np.testing.assert_array_equal(mlkr._start(X, 4), np.eye(4))
    np.testing.assert_allclose(mlkr._start(X, 2),
                               PCA(n_components=2, random_state=0).fit(X).components_)


def test_array_start_and_bad_starts(rng):
    X, y = _regression(rng)
    A0 = rng.standard_normal((2, 4))
    mlkr = MLKR(n_components=2, init=A0, max_iter=1)
    np.testing.assert_array_equal(mlkr._start(X, 2), A0)
    with pytest.raises(ValueError, match="must match the dimensionality"):
        MLKR(init=rng.standard_normal((2, 3))).fit(X, y)
    with pytest.raises(ValueError, match="'init' parameter of MLKR"):
        MLKR(init="lda").fit(X, y)


def test_verbose_prints_metric_learns_lines(rng, capsys):
    X, y = _regression(rng, m=30)
    MLKR(n_components=1, max_iter=3, verbose=True).fit(X, y)
    out = capsys.readouterr().out
    assert "[MLKR]  Iteration      Objective Value    Time(s)" in out
    assert "[MLKR] Training took" in out


# metric_learn.MLKR()._loss on the standardised diabetes data at A = 0.3 randn(3, 10) (seed 0)
METRIC_LEARN_DIABETES_LOSS = 310.400365844945
METRIC_LEARN_DIABETES_GRAD00 = -11.380348573420429
