"""PCA on the inputs where a threshold's type, a singular model or cancellation used to give
a wrong answer or an obscure error."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.decomposition import PCA as SkPCA

import fastdr

RNG = np.random.default_rng(0)
X = RNG.normal(size=(50, 6)) * np.arange(1, 7)


@pytest.mark.parametrize("t", [1, 1.0, np.int64(1), True])
def test_t_is_a_variance_fraction_whatever_its_type(t):
    if isinstance(t, bool):
        with pytest.raises(ValueError, match="t"):
            fastdr.PCA(t=t).fit(X)
        return
    assert fastdr.PCA(t=t).fit(X).n_components_ == 6


def test_t_below_one_picks_the_smallest_count_reaching_the_fraction():
    ratios = np.cumsum(SkPCA().fit(X).explained_variance_ratio_)
    for t in (0.3, 0.5, 0.9, 0.99):
        want = int(np.searchsorted(ratios, t)) + 1
        assert fastdr.PCA(t=t).fit(X).n_components_ == want


@pytest.mark.parametrize("n_components", [None, 2, 0])
def test_score_of_a_singular_model_names_the_cause(n_components):
    Z = np.ones((20, 3))  # before: numpy's bare "Singular matrix" or scipy's inf/NaN error
    est = fastdr.PCA(n_components).fit(Z)
    for method in (est.score, est.score_samples):
        with pytest.raises(np.linalg.LinAlgError, match="covariance is singular"):
            method(Z)
    with pytest.raises(np.linalg.LinAlgError, match="n_components below the data's rank"):
        est.get_precision()


def test_score_where_the_inverse_exists_numerically_still_works_as_in_scikit_learn():
    # scikit-learn's gh-12489 case: n_components == n_samples < n_features, noise 0
    Z = np.random.RandomState(0).randn(100, 3) * 0.1 + np.array([3, 4, 5])
    est = fastdr.PCA(3).fit(Z.T)
    assert est.noise_variance_ == 0
    assert np.isfinite(est.score(Z.T))


def test_score_of_a_regular_model_matches_scikit_learn():
    for k in (2, 6):
        np.testing.assert_allclose(fastdr.PCA(k).fit(X).score(X), SkPCA(k).fit(X).score(X),
                                   rtol=1e-10)


@pytest.mark.parametrize("make", [lambda: sp.csr_matrix((20, 5)), lambda: np.ones((20, 5))])
def test_arpack_on_data_without_variance_says_so(make):
    with pytest.raises(ValueError, match="X has no variance"):
        fastdr.PCA(2, svd_solver="arpack").fit(make())


@pytest.mark.parametrize("m, d", [(50, 3), (200, 4), (1000, 10)])
def test_sparse_arpack_keeps_its_digits_when_a_column_sits_far_from_zero(m, d):
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(m, d))
    Z[:, 0] = 1e6 + rng.choice([-1.0, 1.0], m)  # variance 1 at mean 1e6: 12 digits cancel
    want = SkPCA(2, svd_solver="full").fit(Z).explained_variance_
    got = fastdr.PCA(2, svd_solver="arpack").fit(sp.csr_matrix(Z)).explained_variance_
    np.testing.assert_allclose(got, want, rtol=1e-9)
