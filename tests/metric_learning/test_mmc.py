import re

import numpy as np
import pytest
import scipy.optimize

import fastdr
from fastdr import MMC, KNeighborsClassifier, MMC_Supervised
from fastdr._kernels.learners import mmc as mmc_kernels
from fastdr._runtime.threads import parallel_section
from fastdr.metric_learning._base import components_from_psd, project_psd
from fastdr.metric_learning._constraints import draw_class_pairs
from fastdr.metric_learning._mmc_solvers import FeasibleProjection

from .. import reference

pytestmark = pytest.mark.filterwarnings("ignore::fastdr.exceptions.ConvergenceWarning")



def _invalid(param, allowed, got, est='MMC_Supervised'):
    """fastdr's parameter-validation message, word for word, as a regex."""
    return re.escape(f"The {param!r} parameter of {est} must be {allowed}. Got {got} "
                     "instead.")


def _pairs(rng, m, n):
    a = rng.integers(0, m, n)
    b = (a + 1 + rng.integers(0, m - 1, n)) % m
    return np.column_stack([a, b]).astype(np.int64)


def _informative(rng, m=200, noise_dims=4, noise=2.0):
    """Two classes apart along feature 0; the other features are noise."""
    y = rng.integers(0, 2, m)
    X = noise * rng.standard_normal((m, noise_dims + 1))
    X[:, 0] = 3.0 * y + 0.3 * rng.standard_normal(m)
    return X, y


def _pair_split(X, y, rng, n=300):
    codes = np.unique(y, return_inverse=True)[1].astype(np.int64)
    must, cannot = draw_class_pairs(codes, n, rng)
    return np.column_stack(must), np.column_stack(cannot)


def _sums(X, must, cannot, M):
    Vs = X[must[:, 0]] - X[must[:, 1]]
    Vd = X[cannot[:, 0]] - X[cannot[:, 1]]
    objective = np.einsum("kf,fg,kg->", Vs, M, Vs)
    constraint = np.sqrt(np.maximum(np.einsum("kf,fg,kg->k", Vd, M, Vd), 0)).sum()
    return objective, constraint


# -- kernels ---------------------------------------------------------------------------------

@pytest.mark.parametrize("n,d", [(1, 1), (7, 3), (300, 5), (1000, 17)])
def test_pair_kernels_match_naive_sums(rng, n, d):
    X = rng.standard_normal((40, d))
    pairs = _pairs(rng, 40, n)
    a, b = np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1])
    weights = rng.random(n)
    B = rng.standard_normal((d, d))
    M = B @ B.T
    outer, squares, forms = reference.mmc_pair_sums(X, pairs, weights, M)
    np.testing.assert_allclose(mmc_kernels.pair_outer_sum(X, a, b, weights), outer,
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mmc_kernels.pair_squared_sum(X, a, b, weights), squares,
                               rtol=1e-12)
    np.testing.assert_allclose(mmc_kernels.pair_quadratic_forms(X, a, b, M), forms, rtol=1e-11)
    # the serial twins (small sums run without a parallel launch) give the same bits
    np.testing.assert_array_equal(mmc_kernels.pair_outer_sum_serial(X, a, b, weights),
                                  mmc_kernels.pair_outer_sum(X, a, b, weights))
    np.testing.assert_array_equal(mmc_kernels.pair_quadratic_forms_serial(X, a, b, M),
                                  mmc_kernels.pair_quadratic_forms(X, a, b, M))
    w = rng.random(d)
    np.testing.assert_allclose(mmc_kernels.pair_diagonal_forms(X, a, b, w),
                               reference.mmc_pair_sums(X, pairs, weights, np.diag(w))[2],
                               rtol=1e-12)


def test_pair_kernels_do_not_depend_on_the_thread_count(rng):
    X = rng.standard_normal((100, 9))
    pairs = _pairs(rng, 100, 2000)
    a, b = np.ascontiguousarray(pairs[:, 0]), np.ascontiguousarray(pairs[:, 1])
    weights = rng.random(2000)
    results = []
    for threads in (1, 2):
        with parallel_section(threads):
            results.append((mmc_kernels.pair_outer_sum(X, a, b, weights),
                            mmc_kernels.pair_squared_sum(X, a, b, weights)))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


# -- projections -----------------------------------------------------------------------------

def test_psd_projection_is_psd_and_nearest(rng):
    for d in (1, 4, 30):
        B = rng.standard_normal((d, d))
        P = project_psd(B)
        assert np.array_equal(P, P.T)
        assert np.linalg.eigvalsh(P).min() >= -1e-12 * max(1.0, np.abs(P).max())
        values, vectors = np.linalg.eigh(0.5 * (B + B.T))
        np.testing.assert_allclose(P, (vectors * np.maximum(values, 0)) @ vectors.T,
                                   atol=1e-12)
        np.testing.assert_allclose(project_psd(P), P, atol=1e-12)
        # nearest: no random PSD matrix is closer to the symmetric part of B
        S = 0.5 * (B + B.T)
        for _ in range(20):
            C = rng.standard_normal((d, d))
            assert np.linalg.norm(S - C @ C.T) >= np.linalg.norm(S - P) - 1e-12


def test_projection_onto_the_feasible_set_matches_dykstra(rng):
    d = 6
    V = rng.standard_normal((40, d))
    S = V.T @ V
    for scale in (0.01, 0.5, 5.0):
        B = scale * rng.standard_normal((d, d))
        B = B + B.T + 2 * scale * np.eye(d)
        level = 0.2 * np.trace(S) * scale
        project = FeasibleProjection(S, level, 200)
        A, feasible = project(B)
        assert feasible
        assert np.linalg.eigvalsh(A).min() >= -1e-10 * np.abs(A).max()
        assert np.sum(S * A) <= level * (1 + 0.01)
        expected = reference.dykstra_psd_halfspace(B, S, level)
        assert np.linalg.norm(A - expected) <= 2e-3 * max(np.linalg.norm(expected), 1e-12)


def test_components_from_psd_factor_and_truncate(rng):
    B = rng.standard_normal((5, 3))
    M = B @ B.T  # rank 3
    P = components_from_psd(M)
    assert P.shape == (5, 5)
    np.testing.assert_allclose(P.T @ P, M, atol=1e-10)
    P2 = components_from_psd(M, 2)
    values = np.linalg.eigvalsh(M)[::-1]
    np.testing.assert_allclose(np.linalg.norm(P2, axis=1) ** 2, values[:2], rtol=1e-10)


# -- the solvers -----------------------------------------------------------------------------

@pytest.mark.parametrize("diagonal", [False, True])
def test_constraint_is_met_with_equality_at_the_solution(rng, diagonal):
    X, y = _informative(rng)
    must, cannot = _pair_split(X, y, rng)
    mmc = MMC(diagonal=diagonal).fit(X, must_link=must, cannot_link=cannot)
    M = mmc.get_mahalanobis_matrix()
    objective, constraint = _sums(X, must, cannot, M)
    assert constraint >= 1 - 1e-9
    np.testing.assert_allclose(constraint, 1.0, rtol=1e-9)
    np.testing.assert_allclose(mmc.constraint_, constraint, rtol=1e-9)
    np.testing.assert_allclose(mmc.objective_, objective, rtol=1e-9)
    assert np.linalg.eigvalsh(M).min() >= -1e-10 * np.abs(M).max()
    if diagonal:
        np.testing.assert_allclose(M, np.diag(np.diag(M)), atol=1e-14)


@pytest.mark.parametrize("diagonal", [False, True])
def test_learned_metric_up_weights_the_informative_direction(rng, diagonal):
    X, y = _informative(rng, noise_dims=5)
    must, cannot = _pair_split(X, y, rng)
    M = MMC(diagonal=diagonal).fit(X, must_link=must, cannot_link=cannot)
    M = M.get_mahalanobis_matrix()
    # relative to the identity, the weight of feature 0 dominates every noise feature
    assert M[0, 0] > 20 * np.diag(M)[1:].max()
    top = np.linalg.eigh(M)[1][:, -1]
    assert abs(top[0]) > 0.95


def _ratio_minimum(X, must, cannot, start, diagonal):
    """Reference optimum of the scale-free form min f(M) / g(M)^2 by L-BFGS-B."""
    Vs = X[must[:, 0]] - X[must[:, 1]]
    Vd = X[cannot[:, 0]] - X[cannot[:, 1]]
    S = Vs.T @ Vs
    d = X.shape[1]

    def ratio(theta):
        if diagonal:
            f = (Vs**2 @ theta).sum()
            dist = np.sqrt(np.maximum(Vd**2 @ theta, 1e-300))
            g = dist.sum()
            grad = (Vs**2).sum(0) / g**2 - 2 * f / g**3 * ((Vd**2).T @ (0.5 / dist))
            return f / g**2, grad
        L = theta.reshape(d, d)
        f = np.sum((Vs @ L.T) ** 2)
        dist = np.sqrt(np.maximum(np.sum((Vd @ L.T) ** 2, 1), 1e-300))
        g = dist.sum()
        grad = 2 * L @ S / g**2 - 2 * f / g**3 * (L @ (Vd.T * (1 / dist)) @ Vd)
        return f / g**2, grad.ravel()

    bounds = [(0, None)] * d if diagonal else None
    result = scipy.optimize.minimize(ratio, start.ravel(), jac=True, method="L-BFGS-B",
                                     bounds=bounds, options={"maxiter": 3000})
    return result.fun


@pytest.mark.parametrize("diagonal", [False, True])
def test_solution_is_close_to_the_textbook_optimum(rng, diagonal):
    X, y = _informative(rng, m=150, noise_dims=3, noise=1.0)
    must, cannot = _pair_split(X, y, rng, n=200)
    mmc = MMC(diagonal=diagonal, max_iter=500, tol=1e-5).fit(X, must_link=must,
                                                             cannot_link=cannot)
    start = np.ones(X.shape[1]) if diagonal else np.eye(X.shape[1])
    best = _ratio_minimum(X, must, cannot, start, diagonal)
    ours = mmc.objective_  # sum_S d_M^2 with sum_D d_M = 1: the ratio's value at M
    assert ours <= best * (1 + 1e-2)


def test_pairs_form_equals_index_form(rng):
    X, y = _informative(rng, m=120)
    must, cannot = _pair_split(X, y, rng, n=100)
    by_index = MMC().fit(X, must_link=must, cannot_link=cannot)
    pairs = np.concatenate([np.stack([X[must[:, 0]], X[must[:, 1]]], axis=1),
                            np.stack([X[cannot[:, 0]], X[cannot[:, 1]]], axis=1)])
    labels = np.r_[np.ones(len(must)), -np.ones(len(cannot))]
    by_pairs = MMC().fit(pairs, labels)
    np.testing.assert_allclose(by_pairs.get_mahalanobis_matrix(),
                               by_index.get_mahalanobis_matrix(), rtol=1e-9, atol=1e-12)
    assert by_pairs.n_features_in_ == X.shape[1]


@pytest.mark.parametrize("diagonal", [False, True])
def test_n_components_gives_the_top_factor(rng, diagonal):
    X, y = _informative(rng, noise_dims=4)
    must, cannot = _pair_split(X, y, rng)
    full = MMC(diagonal=diagonal).fit(X, must_link=must, cannot_link=cannot)
    low = MMC(diagonal=diagonal, n_components=2).fit(X, must_link=must, cannot_link=cannot)
    assert full.components_.shape == (5, 5) and low.components_.shape == (2, 5)
    np.testing.assert_allclose(low.components_, full.components_[:2], rtol=1e-9, atol=1e-12)
    assert low.transform(X).shape == (X.shape[0], 2)
    M = full.get_mahalanobis_matrix()
    values, vectors = np.linalg.eigh(M)
    best_rank_2 = (vectors[:, -2:] * values[-2:]) @ vectors[:, -2:].T
    np.testing.assert_allclose(low.get_mahalanobis_matrix(), best_rank_2, atol=1e-10)


@pytest.mark.parametrize("diagonal", [False, True])
def test_rank_deficient_input_works(rng, diagonal):
    X, y = _informative(rng, m=100, noise_dims=2)
    X = np.column_stack([X, np.zeros(100), X[:, 1], 2 * X[:, 2]])  # constant and copies
    must, cannot = _pair_split(X, y, rng, n=60)
    for init in ("identity", "covariance", "random"):
        mmc = MMC(diagonal=diagonal, init=init, random_state=0).fit(
            X, must_link=must, cannot_link=cannot)
        M = mmc.get_mahalanobis_matrix()
        assert np.isfinite(M).all() and np.isfinite(mmc.objective_)
        np.testing.assert_allclose(mmc.constraint_, 1.0, rtol=1e-9)
    few = MMC(diagonal=diagonal).fit(X, must_link=must[:2], cannot_link=cannot[:1])
    assert np.isfinite(few.get_mahalanobis_matrix()).all()


def test_max_iter_bounds_the_run_and_non_convergence_warns(rng):
    X, y = _informative(rng)
    must, cannot = _pair_split(X, y, rng)
    for diagonal in (False, True):
        with pytest.warns(fastdr.ConvergenceWarning, match="MMC did not converge within "
                                                           "max_iter=1"):
            mmc = MMC(diagonal=diagonal, max_iter=1, tol=0.0).fit(
                X, must_link=must, cannot_link=cannot)
        assert mmc.n_iter_ == 1 and not mmc.converged_


def test_verbose_prints_iterations(rng, capsys):
    X, y = _informative(rng)
    must, cannot = _pair_split(X, y, rng)
    mmc = MMC(max_iter=5, verbose=1).fit(X, must_link=must, cannot_link=cannot)
    lines = [line for line in capsys.readouterr().out.splitlines()
             if line.startswith("[MMC]") and line.split()[1].isdigit()]
    assert len(lines) == mmc.n_iter_
    assert all(np.isfinite(float(line.split()[2])) for line in lines)


# -- MMC_Supervised --------------------------------------------------------------------------

def test_supervised_draws_reproducible_class_pairs(rng):
    X, y = _informative(rng, m=90)
    y = np.where(y == 1, "b", "a")
    y[:5] = "c"
    fits = [MMC_Supervised(random_state=7, max_iter=3).fit(X, y) for _ in range(2)]
    np.testing.assert_array_equal(fits[0].must_link_, fits[1].must_link_)
    np.testing.assert_array_equal(fits[0].components_, fits[1].components_)
    assert fits[0].must_link_.shape == (20 * 3**2, 2)
    ml, cl = fits[0].must_link_, fits[0].cannot_link_
    assert (y[ml[:, 0]] == y[ml[:, 1]]).all() and (ml[:, 0] != ml[:, 1]).all()
    assert (y[cl[:, 0]] != y[cl[:, 1]]).all()
    other = MMC_Supervised(random_state=8, n_constraints=50, max_iter=3).fit(X, y)
    assert other.cannot_link_.shape == (50, 2)
    assert not np.array_equal(other.must_link_, fits[0].must_link_[:50])
    # every class with two or more members is drawn, roughly by its size
    assert set(y[ml[:, 0]]) == {"a", "b", "c"}


def test_class_pairs_are_uniform(rng):
    codes = np.repeat(np.arange(3), [2, 3, 5]).astype(np.int64)
    must, cannot = draw_class_pairs(codes, 20000, np.random.RandomState(0))
    counts = np.zeros((10, 10))
    np.add.at(counts, (must[0], must[1]), 1)
    # anchors uniform over the 10 points; partners uniform within the class
    np.testing.assert_allclose(counts.sum(1), 2000, rtol=0.1)
    np.testing.assert_allclose(counts[5:, 5:][~np.eye(5, dtype=bool)], 2000 / 4, rtol=0.2)
    assert (codes[cannot[0]] != codes[cannot[1]]).all()
    np.testing.assert_allclose(np.bincount(cannot[1], minlength=10).sum(), 20000)


@pytest.mark.jit_only  # interpreted (coverage pass) it takes most of a minute or more
def test_diagonal_solution_on_digits_meets_kkt_and_drops_noise_features():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    noise = 8.0 * np.random.default_rng(0).standard_normal((500, 20))
    X, y = np.hstack([X[:500], noise]), y[:500]
    mmc = MMC_Supervised(diagonal=True, tol=1e-12, max_iter=2000, random_state=0).fit(X, y)
    must, cannot, w = mmc.must_link_, mmc.cannot_link_, np.diag(mmc.get_mahalanobis_matrix())
    s = ((X[must[:, 0]] - X[must[:, 1]]) ** 2).sum(0)
    V2 = (X[cannot[:, 0]] - X[cannot[:, 1]]) ** 2
    dist = np.sqrt(V2 @ w)  # the gradient of s.w - log g(w) where t w is least on the ray
    grad = s - (V2 / (2.0 * dist[:, None])).sum(0) / dist.sum() * (2.0 * (s @ w))
    # KKT over w >= 0: zero gradient where w > 0, non-negative where w = 0 (L-BFGS-B leaves
    # some weights 1e-11 of the largest, not 0: held at 0 here); no noise feature is used
    tol, used = 1e-6 * np.abs(s).max(), w > 1e-8 * w.max()
    assert mmc.converged_ and np.abs(grad[used]).max() < tol and grad[~used].min() > -tol
    assert used.any() and not used[64:].any()


def test_full_metric_beats_euclidean_knn_on_noisy_data(rng):
    X, y = _informative(rng, m=300, noise_dims=8, noise=4.0)
    mmc = MMC_Supervised(random_state=0).fit(X[:200], y[:200])
    euclid = KNeighborsClassifier(n_neighbors=3).fit(X[:200], y[:200]).score(X[200:], y[200:])
    learned = KNeighborsClassifier(n_neighbors=3, metric=mmc).fit(X[:200], y[:200]).score(
        X[200:], y[200:])
    assert learned > euclid + 0.05
    # metric=learner is Euclidean k-NN on transform(X)
    mapped = KNeighborsClassifier(n_neighbors=3).fit(mmc.transform(X[:200]), y[:200])
    np.testing.assert_array_equal(
        mapped.predict(mmc.transform(X[200:])),
        KNeighborsClassifier(n_neighbors=3, metric=mmc).fit(X[:200], y[:200]).predict(X[200:]))


# -- bad input -------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_input_is_rejected(rng, bad):
    X, y = _informative(rng, m=40)
    must, cannot = _pair_split(X, y, rng, n=10)
    Xb = X.copy()
    Xb[2, 1] = bad
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        MMC().fit(Xb, must_link=must, cannot_link=cannot)
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        MMC_Supervised().fit(Xb, y)
    pairs = np.stack([X[:4], X[4:8]], axis=1)
    pairs[1, 0, 0] = bad
    with pytest.raises(ValueError, match="pairs contains NaN or infinity"):
        MMC().fit(pairs, [1, 1, -1, -1])


def test_single_class_is_rejected(rng):
    X, _ = _informative(rng, m=40)
    with pytest.raises(ValueError, match="MMC_Supervised needs at least 2 classes to draw "
                                         "cannot-link pairs; y has a single class"):
        MMC_Supervised().fit(X, np.zeros(40))


def test_no_class_with_two_members_is_rejected(rng):
    X = rng.standard_normal((3, 2))
    with pytest.raises(ValueError, match="No class has two or more samples"):
        MMC_Supervised().fit(X, [0, 1, 2])


def test_n_components_larger_than_d_is_rejected(rng):
    X, y = _informative(rng, m=40, noise_dims=2)
    with pytest.raises(ValueError) as info:
        MMC_Supervised(n_components=4).fit(X, y)
    assert str(info.value) == "Invalid n_components, must be in [1, 3]"
    assert "the factor of a 3 x 3 matrix has at most 3 rows" in info.value.__notes__[0]


@pytest.mark.parametrize("must,cannot,match", [
    ([[0, 40]], [[0, 1]], r"must_link holds the index 40, out of range for X with 40 rows; "
                          r"indices must lie in \[0, 39\]"),
    ([[0, 1]], [[-1, 2]], r"cannot_link holds the index -1, out of range"),
    ([[0.0, 1.0]], [[0, 2]], "must_link must hold integer row indices"),
    ([[0, 1, 2]], [[0, 2]], r"must_link must be an \(n, 2\) array"),
    (np.empty((0, 2), dtype=int), [[0, 2]], "must_link is empty: MMC needs at least one "
                                            "must-link pair"),
    ([[0, 1]], [], "cannot_link is empty: MMC needs at least one cannot-link pair"),
])
def test_bad_index_pairs(rng, must, cannot, match):
    X, _ = _informative(rng, m=40)
    with pytest.raises(ValueError, match=match):
        MMC().fit(X, must_link=np.asarray(must), cannot_link=np.asarray(cannot))


def test_bad_fit_calls_and_degenerate_pairs(rng):
    X, y = _informative(rng, m=40)
    with pytest.raises(ValueError, match=r"MMC.fit takes pairs of shape \(n_pairs, 2, "
                                         r"n_features\) with labels y, or a 2-D X with "
                                         "must_link and cannot_link"):
        MMC().fit(X, y)
    with pytest.raises(ValueError, match="MMC.fit needs both must_link and cannot_link"):
        MMC().fit(X, must_link=[[0, 1]])
    with pytest.raises(ValueError, match="y is not used with must_link / cannot_link"):
        MMC().fit(X, y, must_link=[[0, 1]], cannot_link=[[0, 2]])
    pairs = np.stack([X[:4], X[4:8]], axis=1)
    with pytest.raises(ValueError, match="Pass either pairs"):
        MMC().fit(pairs, [1, 1, -1, -1], must_link=[[0, 1]])
    Xd = X.copy()
    Xd[1] = Xd[0]
    with pytest.raises(ValueError, match="Every must-link pair joins two identical points"):
        MMC().fit(Xd, must_link=[[0, 1]], cannot_link=[[0, 2]])
    with pytest.raises(ValueError, match="Every cannot-link pair joins two identical points"):
        MMC().fit(Xd, must_link=[[0, 2]], cannot_link=[[1, 0]])


@pytest.mark.parametrize("params,error,match", [
    ({"init": "svd"}, ValueError, _invalid('init',
                                           "a str among {'identity', 'covariance', 'random'}"
                                           " or an array-like",
                                           "'svd'")),
    ({"init": np.eye(3)}, ValueError, r"init must be a 5 x 5 matrix"),
    ({"init": -np.eye(5)}, ValueError, "init must be a symmetric positive semidefinite"),
    ({"max_iter": 0}, ValueError, _invalid('max_iter', 'an int in the range [1, inf)', '0')),
    ({"max_proj": 0}, ValueError, _invalid('max_proj', 'an int in the range [1, inf)', '0')),
    ({"diagonal": "yes"}, TypeError, _invalid('diagonal', 'a bool', "'yes'")),
    ({"n_constraints": 0}, ValueError, _invalid('n_constraints',
                                                'an int in the range [1, inf) or None',
                                                '0')),
    ({"n_jobs": 0}, ValueError, _invalid('n_jobs', 'a non-zero int or None', '0')),
])
def test_bad_parameters(rng, params, error, match):
    X, y = _informative(rng, m=40, noise_dims=4)
    with pytest.raises(error, match=match):
        MMC_Supervised(**params).fit(X, y)


def test_transform_checks_fitted_and_feature_count(rng):
    X, y = _informative(rng, m=40)
    with pytest.raises(fastdr.NotFittedError, match="not fitted yet"):
        MMC_Supervised().transform(X)
    mmc = MMC_Supervised(max_iter=3).fit(X, y)
    with pytest.raises(ValueError, match="X has 4 features, but MMC_Supervised is expecting 5"):
        mmc.transform(X[:, :4])


def test_n_jobs_reaches_the_pair_kernels(rng, monkeypatch):
    from fastdr.metric_learning import _mmc_solvers

    X, y = _informative(rng, m=40)
    seen = []
    real = _mmc_solvers.parallel_section

    def spy(n_jobs):
        seen.append(n_jobs)
        return real(n_jobs)

    monkeypatch.setattr(_mmc_solvers, "parallel_section", spy)
    one = MMC_Supervised(max_iter=5, random_state=0, n_jobs=1).fit(X, y)
    assert seen and set(seen) == {1}
    seen.clear()
    every = MMC_Supervised(max_iter=5, random_state=0).fit(X, y)
    assert seen and set(seen) == {None}
    np.testing.assert_array_equal(one.components_, every.components_)


def test_small_pair_sums_take_the_serial_twins_with_the_same_fit(monkeypatch):
    from fastdr import _config
    from fastdr.metric_learning import _mmc_solvers

    data = np.random.default_rng(4)
    X = data.standard_normal((120, 6))
    y = np.repeat(np.arange(4), 30)
    calls = []
    twins = {parallel: (lambda *args, _f=serial: calls.append(1) or _f(*args))
             for parallel, serial in _mmc_solvers._SERIAL.items()}
    monkeypatch.setattr(_mmc_solvers, "_SERIAL", twins)
    serial = MMC_Supervised(random_state=0, max_iter=20).fit(X, y)
    assert calls  # the small sums ran serially
    calls.clear()
    monkeypatch.setattr(_config, "MMC_SERIAL_MAX_WORK", -1)  # every sum parallel
    parallel = MMC_Supervised(random_state=0, max_iter=20).fit(X, y)
    assert not calls
    np.testing.assert_array_equal(serial.components_, parallel.components_)
