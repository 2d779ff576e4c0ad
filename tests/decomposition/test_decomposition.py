import warnings

import numpy as np
import pytest
from sklearn import decomposition as skd

from fastdr import PCA, InvalidParameterError, KernelPCA, _eigen
from fastdr._kernels.distances.euclidean import centred_sqnorms
from fastdr._kernels.spectral import kernel_matrix as kk
from fastdr.decomposition._centred import centred_scatter, project_centred
from fastdr.decomposition._kernel_pca import _CentredKernel
from fastdr.exceptions import MemoryBudgetError

from .. import reference

KERNELS = ["linear", "rbf", "poly", "sigmoid", "cosine"]


def _up_to_sign(a, b, atol):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    signs = np.sign(np.sum(a * b, axis=0))
    signs[signs == 0] = 1
    np.testing.assert_allclose(a, b * signs, rtol=0, atol=atol)


def _data(rng, m=200, d=6, offset=3.0):
    A = rng.standard_normal((d, d)) * np.linspace(2.0, 0.3, d)
    return rng.standard_normal((m, d)) @ A + offset


# ----------------------------------------------------------------------------- PCA


@pytest.mark.parametrize("solver", ["auto", "covariance_eigh", "full", "gram", "randomized"])
def test_pca_matches_sklearn_and_reference(rng, solver):
    X = _data(rng)
    Xt = _data(rng, m=40)
    ours = PCA(n_components=3, svd_solver=solver, random_state=0).fit(X)
    sk = skd.PCA(n_components=3, svd_solver="full").fit(X)
    _up_to_sign(ours.transform(Xt), sk.transform(Xt), 1e-8)
    _up_to_sign(ours.components_.T, sk.components_.T, 1e-8)
    np.testing.assert_allclose(ours.explained_variance_, sk.explained_variance_, rtol=1e-10)
    np.testing.assert_allclose(ours.explained_variance_ratio_, sk.explained_variance_ratio_,
                               rtol=1e-10)
    np.testing.assert_allclose(ours.singular_values_, sk.singular_values_, rtol=1e-10)
    np.testing.assert_allclose(ours.mean_, sk.mean_, rtol=1e-12)
    components, variance, scores = reference.pca_svd(X, 3)
    _up_to_sign(ours.transform(X), scores, 1e-8)
    np.testing.assert_allclose(ours.explained_variance_, variance, rtol=1e-10)
    np.testing.assert_allclose(ours.components_ @ ours.components_.T, np.eye(3), atol=1e-12)
    assert ours.n_components_ == 3 and ours.n_features_in_ == 6


def test_pca_wide_data_uses_the_gram_route_and_matches_sklearn(rng):
    X = rng.standard_normal((30, 80))
    ours = PCA(n_components=5).fit(X)
    sk = skd.PCA(n_components=5).fit(X)
    _up_to_sign(ours.transform(X), sk.transform(X), 1e-8)
    np.testing.assert_allclose(ours.explained_variance_, sk.explained_variance_, rtol=1e-10)
    # all min(m, d) components: the null direction is completed orthonormally
    full = PCA().fit(X)
    assert full.n_components_ == 30
    np.testing.assert_allclose(full.components_ @ full.components_.T, np.eye(30), atol=1e-10)
    assert full.explained_variance_[-1] < 1e-10 * full.explained_variance_[0]
    _up_to_sign(full.transform(X)[:, :29], skd.PCA().fit(X).transform(X)[:, :29], 1e-8)


def test_pca_float_threshold_is_sklearns_rule_and_t_the_textbook_rule():
    # two directions with exactly equal variance: cumulative ratios (0.5, 1.0)
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    assert PCA(t=0.5).fit(X).n_components_ == 1  # the textbook: ratio >= t
    assert PCA(n_components=0.5).fit(X).n_components_ == 2  # scikit-learn: strict ">"
    assert skd.PCA(n_components=0.5).fit(X).n_components_ == 2


def test_pca_float_threshold_against_the_cumulative_ratios(rng):
    X = _data(rng, d=8)
    ratios = PCA().fit(X).explained_variance_ratio_
    cumulative = np.cumsum(ratios)
    for t in (0.3, 0.6, 0.9, 0.99, 1.0):
        k = PCA(t=t).fit(X).n_components_
        assert cumulative[k - 1] >= t - 1e-12
        assert k == 1 or cumulative[k - 2] < t
        if t < 1:
            k_sk = PCA(n_components=t).fit(X).n_components_
            assert cumulative[k_sk - 1] > t and (k_sk == 1 or cumulative[k_sk - 2] <= t)
            assert k_sk == skd.PCA(n_components=t).fit(X).n_components_


def test_pca_whiten_and_inverse_transform(rng):
    X = _data(rng)
    ours = PCA(n_components=3, whiten=True).fit(X)
    sk = skd.PCA(n_components=3, whiten=True).fit(X)
    Z = ours.transform(X)
    _up_to_sign(Z, sk.transform(X), 1e-8)
    np.testing.assert_allclose(Z.var(axis=0, ddof=1), 1.0, rtol=1e-10)
    _up_to_sign(ours.inverse_transform(Z).T, sk.inverse_transform(sk.transform(X)).T, 1e-8)
    full = PCA(n_components=6).fit(X)
    np.testing.assert_allclose(full.inverse_transform(full.transform(X)), X, atol=1e-10)
    full_w = PCA(n_components=6, whiten=True).fit(X)
    np.testing.assert_allclose(full_w.inverse_transform(full_w.transform(X)), X, atol=1e-10)


def test_pca_zero_variance_whitening_never_divides_by_zero():
    X = np.array([[1.0, 5.0, -2.0], [2.0, 5.0, -2.0], [3.0, 5.0, -2.0], [4.0, 5.0, -2.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = PCA(whiten=True).fit(X)
        Z = est.transform(X)
    assert np.isfinite(Z).all()
    np.testing.assert_array_equal(est.explained_variance_[1:], 0.0)
    np.testing.assert_array_equal(Z[:, 1:], 0.0)
    np.testing.assert_allclose(est.inverse_transform(Z), X, atol=1e-12)


def test_pca_far_from_origin_keeps_its_digits(rng):
    noise = _data(rng, offset=0.0)
    X = noise + 1e7
    ours = PCA(n_components=3).fit(X)
    ref_components, ref_variance, ref_scores = reference.pca_svd(noise, 3)
    np.testing.assert_allclose(ours.explained_variance_, ref_variance, rtol=1e-7)
    _up_to_sign(ours.transform(X), ref_scores, 1e-6)


def test_centred_scatter_and_projection_routes_agree(rng):
    for offset in (0.0, 3.0, 1e7):
        X = _data(rng, m=3000, offset=offset)
        mean, scatter = centred_scatter(X)
        exact = (X - X.mean(axis=0)).T @ (X - X.mean(axis=0))
        np.testing.assert_allclose(mean, X.mean(axis=0), rtol=1e-14)
        np.testing.assert_allclose(scatter, exact, rtol=1e-6 if offset > 1e6 else 1e-11,
                                   atol=1e-9 * np.abs(exact).max())
        W = np.linalg.qr(rng.standard_normal((6, 3)))[0].T
        np.testing.assert_allclose(project_centred(X, mean, W), (X - mean) @ W.T,
                                   atol=1e-7 if offset > 1e6 else 1e-12)
    X32 = _data(rng, m=3000).astype(np.float32)
    mean, scatter = centred_scatter(X32)
    X64 = X32.astype(np.float64)
    np.testing.assert_allclose(scatter, np.cov(X64.T, ddof=0) * 3000, rtol=1e-10)


def test_pca_float32_in_float32_out(rng):
    X = _data(rng)
    ours32 = PCA(n_components=3).fit(X.astype(np.float32))
    ours64 = PCA(n_components=3).fit(X)
    Z = ours32.transform(X.astype(np.float32))
    assert Z.dtype == np.float32 and ours32.components_.dtype == np.float32
    _up_to_sign(Z, ours64.transform(X), 1e-4)


def test_pca_bad_input(rng):
    X = _data(rng, m=20, d=5)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        PCA().fit(bad)
    with pytest.raises(ValueError, match=r"X has 1 sample\(s\).*at least 2"):
        PCA().fit(X[:1])
    with pytest.raises(ValueError, match=r"n_components=6 must be between 0 and "
                       r"min\(n_samples, n_features\)=5 with svd_solver='full'"):
        PCA(n_components=6).fit(X)
    for t in (1.5, 1.0, -1):
        with pytest.raises(InvalidParameterError,
                           match=r"^The 'n_components' parameter of PCA must be an int in the "
                                 r"range \[0, inf\), a float in the range \(0, 1\), a str "
                                 rf"among \{{'mle'\}} or None\. Got {t!r} instead\.$"):
            PCA(n_components=t).fit(X)
    est = PCA(n_components=2).fit(X)
    with pytest.raises(ValueError, match="X has 3 features, but PCA is expecting 5"):
        est.transform(X[:, :3])
    with pytest.raises(ValueError, match="X has 3 columns, but this PCA has 2 components"):
        est.inverse_transform(X[:, :3])
    with pytest.raises(InvalidParameterError,
                       match=r"The 'svd_solver' parameter of PCA must be a str among "
                             r"\{'auto', 'full', 'covariance_eigh', 'arpack', 'randomized', "
                             r"'gram'\}\. Got 'lapack' instead\."):
        PCA(svd_solver="lapack").fit(X)
    with pytest.raises(ValueError, match=r"n_components=0.5 must be between 1 and "
                                         r"min\(n_samples, n_features\)=5 with "
                                         r"svd_solver='randomized'"):
        PCA(n_components=0.5, svd_solver="randomized").fit(X)
    with pytest.raises(InvalidParameterError,
                       match="The 'whiten' parameter of PCA must be a bool. Got 'yes' instead."):
        PCA(whiten="yes").fit(X)


# ----------------------------------------------------------------------- kernel matrices


@pytest.mark.parametrize("d", [3, 20])
@pytest.mark.parametrize("dtype,atol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_kernel_matrices_match_reference(rng, d, dtype, atol):
    X = rng.standard_normal((60, d)).astype(dtype)
    Y = rng.standard_normal((25, d)).astype(dtype)
    X[5] = 0.0  # a zero row for the cosine kernel
    Y[3] = X[7]  # an identical pair for the rbf kernel
    for kernel in KERNELS:
        est = KernelPCA(kernel=kernel, gamma=0.3, degree=2.5 if kernel == "poly" else 3,
                        coef0=1.5)
        est.gamma_ = 0.3
        for A, B in ((X, X), (X, Y)):
            out = np.empty((A.shape[0], B.shape[0]), dtype=dtype)
            with np.errstate(invalid="ignore"):  # kernels run as Python in the coverage pass
                est._kernel(A, B, out)
            with np.errstate(invalid="ignore"):  # poly with degree 2.5 of a negative base
                ref = reference.kernel_matrix(A, B, kernel, 0.3, est.degree, 1.5)
            np.testing.assert_allclose(out, ref, rtol=atol, atol=atol)


def test_rbf_kernels_recompute_cancelled_distances_exactly(rng):
    X = rng.standard_normal((40, 20)) * 1e-4 + 50.0
    ref = np.exp(-1e6 * reference.sq_euclidean(X, X))
    Xc = X - X.mean(axis=0)
    norms = centred_sqnorms(Xc, np.zeros(20))
    for upper in (False, True):
        K = Xc @ Xc.T
        kk.rbf_from_gram_inplace(K, Xc, Xc, norms, norms, 1e-6, 1e6, upper)
        if upper:
            kk.mirror_upper_to_lower(K)
        np.testing.assert_allclose(K, ref, rtol=1e-9)
        np.testing.assert_array_equal(np.diag(K), 1.0)
        direct = np.full((40, 40), np.nan)
        kk.rbf_direct(X, np.ascontiguousarray(X.T), 1e6, upper, direct)
        if upper:
            kk.mirror_upper_to_lower(direct)
        np.testing.assert_allclose(direct, ref, rtol=1e-9)


@pytest.mark.parametrize("m", [1, 63, 64, 130, 257])
def test_mirror_upper_to_lower(rng, m):
    A = rng.standard_normal((m, m))
    expected = np.triu(A) + np.triu(A, 1).T
    kk.mirror_upper_to_lower(A)
    np.testing.assert_array_equal(A, expected)


def test_centre_kernel_rows_matches_reference(rng):
    X = rng.standard_normal((30, 4))
    Xn = rng.standard_normal((7, 4))
    K = reference.kernel_matrix(X, X, "rbf", 0.5)
    Kn = reference.kernel_matrix(Xn, X, "rbf", 0.5)
    row_means = K.mean(axis=1)
    got = Kn.copy()
    kk.centre_kernel_rows(got, row_means, row_means.mean())
    np.testing.assert_allclose(got, reference.centred_kernel(K, Kn), atol=1e-13)


def test_centred_kernel_operator_is_j_k_j(rng):
    X = rng.standard_normal((50, 3))
    K = reference.kernel_matrix(X, X, "rbf", 0.4)
    operator = _CentredKernel(K, None)
    Q = rng.standard_normal((50, 3))
    np.testing.assert_allclose(operator @ Q, reference.centred_kernel(K) @ Q, atol=1e-12)
    np.testing.assert_allclose(operator.row_means, K.mean(axis=1), rtol=1e-13)
    np.testing.assert_allclose(operator @ Q[:, 0], reference.centred_kernel(K) @ Q[:, 0],
                               atol=1e-12)


# -------------------------------------------------------------------------- KernelPCA


@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_pca_matches_sklearn(rng, kernel):
    X = _data(rng, m=150, d=5, offset=0.5)
    Xt = _data(rng, m=30, d=5, offset=0.5)
    params = {"gamma": 0.1, "degree": 2, "coef0": 1.0}
    ours = KernelPCA(n_components=4, kernel=kernel, **params)
    sk = skd.KernelPCA(n_components=4, kernel=kernel, **params)
    _up_to_sign(ours.fit_transform(X), sk.fit_transform(X), 1e-8)
    np.testing.assert_allclose(ours.eigenvalues_, sk.eigenvalues_, rtol=1e-10)
    _up_to_sign(ours.eigenvectors_, sk.eigenvectors_, 1e-8)
    _up_to_sign(ours.transform(Xt), sk.transform(Xt), 1e-8)


def test_kernel_pca_transform_is_the_textbook_kernel_sum(rng):
    X = _data(rng, m=80, d=4)
    Xt = _data(rng, m=10, d=4)
    est = KernelPCA(n_components=3, kernel="rbf", gamma=0.2).fit(X)
    K = reference.kernel_matrix(X, X, "rbf", 0.2)
    Kt = reference.centred_kernel(K, reference.kernel_matrix(Xt, X, "rbf", 0.2))
    A = est.eigenvectors_ / np.sqrt(est.eigenvalues_)
    np.testing.assert_allclose(est.transform(Xt), Kt @ A, atol=1e-12)
    np.testing.assert_allclose(est.transform(X), est.fit_transform(X), atol=1e-10)


def test_linear_kernel_pca_equals_pca(rng):
    X = _data(rng, m=120, d=5)
    Xt = _data(rng, m=20, d=5)
    kpca = KernelPCA(n_components=3, kernel="linear").fit(X)
    pca = PCA(n_components=3).fit(X)
    _up_to_sign(kpca.fit_transform(X), pca.transform(X), 1e-8)
    _up_to_sign(kpca.transform(Xt), pca.transform(Xt), 1e-8)
    np.testing.assert_allclose(kpca.eigenvalues_, pca.explained_variance_ * 119, rtol=1e-10)


def test_kernel_pca_precomputed_equals_the_kernel_route(rng):
    X = _data(rng, m=100, d=4)
    Xt = _data(rng, m=15, d=4)
    direct = KernelPCA(n_components=3, kernel="poly", gamma=0.2, degree=2).fit(X)
    K = reference.kernel_matrix(X, X, "poly", 0.2, 2, 1)
    pre = KernelPCA(n_components=3, kernel="precomputed")
    np.testing.assert_allclose(pre.fit_transform(K), direct.fit_transform(X), atol=1e-9)
    Kt = reference.kernel_matrix(Xt, X, "poly", 0.2, 2, 1)
    np.testing.assert_allclose(pre.transform(Kt), direct.transform(Xt), atol=1e-9)
    assert pre.n_features_in_ == 100


def test_kernel_pca_default_keeps_the_nonzero_components_like_sklearn(rng):
    X = _data(rng, m=60, d=3)
    ours = KernelPCA(kernel="linear").fit(X)
    sk = skd.KernelPCA(kernel="linear").fit(X)
    assert ours.n_components_ == sk.eigenvalues_.shape[0] == 3
    np.testing.assert_allclose(ours.eigenvalues_, sk.eigenvalues_, rtol=1e-10)


def test_kernel_pca_float_threshold(rng):
    X = _data(rng, m=80, d=5)
    values = KernelPCA(kernel="rbf", gamma=0.1).fit(X).eigenvalues_
    cumulative = np.cumsum(values) / values.sum()
    est = KernelPCA(n_components=0.8, kernel="rbf", gamma=0.1).fit(X)
    k = est.n_components_
    assert cumulative[k - 1] >= 0.8 - 1e-9 and cumulative[k - 2] < 0.8


def test_kernel_pca_zero_eigenvalues_give_zero_coordinates(rng):
    X = _data(rng, m=50, d=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = KernelPCA(n_components=4, kernel="linear").fit(X)
        Z = est.transform(_data(rng, m=5, d=2))
    assert np.isfinite(Z).all()
    assert est.eigenvalues_[2:].max() < 1e-10 * est.eigenvalues_[0]


def test_kernel_pca_significant_negative_eigenvalues_are_refused_as_in_sklearn(rng):
    from sklearn.decomposition import KernelPCA as SkKernelPCA

    m = 40
    Q = rng.standard_normal((m, 5))
    Q -= Q.mean(axis=0)  # columns orthogonal to 1 survive the centring
    Q = np.linalg.qr(Q)[0]
    K = (Q * np.array([5.0, 3.0, -4.0, 1.0, -0.5])) @ Q.T
    # the whole spectrum (n_components=None) holds -4: both refuse it, with the same phrase
    for est in (KernelPCA(kernel="precomputed"), SkKernelPCA(kernel="precomputed")):
        with pytest.raises(ValueError, match=r"There are significant negative eigenvalues "
                           r"\(0\.8 of the maximum positive\)"):
            est.fit(K)
    # the top three are positive: no error, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = KernelPCA(3, kernel="precomputed").fit(K)
    np.testing.assert_allclose(est.eigenvalues_, [5.0, 3.0, 1.0], atol=1e-12)
    assert np.isfinite(est.transform(K[:3])).all()
    # negatives that are not significant (below 1e-5 of the largest) are clipped silently
    K_small = (Q * np.array([5.0, 3.0, -4e-6, 1.0, -1e-6])) @ Q.T
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = KernelPCA(kernel="precomputed", remove_zero_eig=False).fit(K_small)
    np.testing.assert_allclose(est.eigenvalues_, [5.0, 3.0, 1.0], atol=1e-12)


@pytest.mark.parametrize("solver", ["arpack", "randomized", "lobpcg"])
def test_kernel_pca_iterative_solvers_match_dense(rng, solver):
    X = _data(rng, m=300, d=5)
    dense = KernelPCA(n_components=3, kernel="rbf", gamma=0.2, eigen_solver="dense").fit(X)
    other = KernelPCA(n_components=3, kernel="rbf", gamma=0.2, eigen_solver=solver,
                      random_state=0).fit(X)
    np.testing.assert_allclose(other.eigenvalues_, dense.eigenvalues_, rtol=1e-9)
    _up_to_sign(other.transform(X[:20]), dense.transform(X[:20]),
                1e-5 if solver == "lobpcg" else 1e-8)


@pytest.mark.parametrize("kernel,n_components", [("rbf", 12), ("linear", 2), ("poly", 4)])
def test_kernel_pca_upper_triangle_and_wide_block_paths_match_dense(rng, kernel, n_components):
    # rbf with 12 components is too wide for the upper-triangle product (K is mirrored);
    # the dot-product kernels fill K in full and the thin solves read its upper triangle
    X = _data(rng, m=260, d=6)
    dense = KernelPCA(n_components=n_components, kernel=kernel, gamma=0.2,
                      eigen_solver="dense").fit(X)
    other = KernelPCA(n_components=n_components, kernel=kernel, gamma=0.2,
                      eigen_solver="randomized", random_state=0).fit(X)
    np.testing.assert_allclose(other.eigenvalues_, dense.eigenvalues_, rtol=1e-9)
    _up_to_sign(other.transform(X[:20]), dense.transform(X[:20]), 1e-7)


def test_kernel_pca_thin_iterative_solve_never_reads_the_unmirrored_half(rng, monkeypatch):
    original = KernelPCA._kernel
    mirrored = []

    def poisoned(self, X, Y, out, mirror=True):
        original(self, X, Y, out, mirror=mirror)
        mirrored.append(mirror)
        if not mirror:
            out[np.tril_indices(out.shape[0], -1)] = np.nan
        return out

    monkeypatch.setattr(KernelPCA, "_kernel", poisoned)
    monkeypatch.setattr(_eigen, "STREAMING_MIN_ROWS", 100)  # stream at m=300
    X = _data(rng, m=300, d=5)
    other = KernelPCA(n_components=3, kernel="rbf", gamma=0.2, eigen_solver="randomized",
                      random_state=0).fit(X)
    assert mirrored[0] is False  # the fit took the upper-triangle path
    monkeypatch.undo()
    dense = KernelPCA(n_components=3, kernel="rbf", gamma=0.2, eigen_solver="dense").fit(X)
    np.testing.assert_allclose(other.eigenvalues_, dense.eigenvalues_, rtol=1e-9)
    _up_to_sign(other.transform(X[:20]), dense.transform(X[:20]), 1e-8)


def test_kernel_pca_all_components_with_arpack_falls_back_to_dense(rng):
    X = _data(rng, m=30, d=3)
    ours = KernelPCA(n_components=30, kernel="rbf", gamma=0.3, eigen_solver="arpack").fit(X)
    dense = KernelPCA(n_components=30, kernel="rbf", gamma=0.3, eigen_solver="dense").fit(X)
    np.testing.assert_allclose(ours.eigenvalues_, dense.eigenvalues_, atol=1e-12)


def test_kernel_pca_same_result_for_any_n_jobs(rng):
    X = _data(rng, m=120, d=20)
    a = KernelPCA(n_components=3, kernel="rbf", n_jobs=1).fit(X)
    b = KernelPCA(n_components=3, kernel="rbf", n_jobs=None).fit(X)
    np.testing.assert_array_equal(a.eigenvectors_, b.eigenvectors_)
    np.testing.assert_array_equal(a.transform(X[:9]), b.transform(X[:9]))


def test_kernel_pca_float32_in_float32_out(rng):
    X = _data(rng, m=100, d=20)
    est32 = KernelPCA(n_components=2, kernel="rbf", gamma=0.002).fit(X.astype(np.float32))
    est64 = KernelPCA(n_components=2, kernel="rbf", gamma=0.002).fit(X)
    Z = est32.transform(X[:10].astype(np.float32))
    assert Z.dtype == np.float32 and est32.eigenvectors_.dtype == np.float32
    _up_to_sign(Z, est64.transform(X[:10]), 1e-4)


def test_kernel_pca_bad_input(rng, monkeypatch):
    X = _data(rng, m=20, d=4)
    bad = X.copy()
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        KernelPCA(kernel="rbf").fit(bad)
    with pytest.raises(ValueError, match=r"X has 1 sample\(s\).*at least 2"):
        KernelPCA().fit(X[:1])
    # an int above n_samples is cut to n_samples, as scikit-learn does
    assert KernelPCA(n_components=21).fit(X).eigenvectors_.shape == (20, 20)
    with pytest.raises(InvalidParameterError, match=r"The 'n_components' parameter of "
                       r"KernelPCA must be .* a float in the range \(0, 1\] or None\. Got 1\.2"):
        KernelPCA(n_components=1.2).fit(X)
    est = KernelPCA(n_components=2, kernel="rbf").fit(X)
    with pytest.raises(ValueError, match="X has 3 features, but KernelPCA is expecting 4"):
        est.transform(X[:, :3])
    with pytest.raises(InvalidParameterError, match=r"The 'gamma' parameter of KernelPCA must "
                       r"be a float in the range \[0, inf\) or None\. Got -1\.0 instead\."):
        KernelPCA(kernel="rbf", gamma=-1.0).fit(X)
    with pytest.raises(InvalidParameterError, match=r"The 'kernel' parameter of KernelPCA must "
                       r"be a str among \{'linear', 'rbf', .*\} or a callable\. Got "
                       r"'laplacian' instead\."):
        KernelPCA(kernel="laplacian").fit(X)
    K = reference.kernel_matrix(X, X, "rbf", 0.5)
    with pytest.raises(ValueError, match=r"array must be 2-dimensional and square: The precomputed "
                       r"kernel matrix has shape \(20, 19\)"):
        KernelPCA(kernel="precomputed").fit(K[:, :19])
    asym = K.copy()
    asym[0, 1] += 0.1
    with pytest.raises(ValueError,
                       match="Array must be symmetric: The precomputed kernel matrix is not"):
        KernelPCA(kernel="precomputed").fit(asym)
    pre = KernelPCA(n_components=2, kernel="precomputed").fit(K)
    with pytest.raises(ValueError, match=r"The precomputed kernel has 19 columns, but "
                       r"KernelPCA was fitted on 20 samples"):
        pre.transform(K[:, :19])
    monkeypatch.setenv("FASTDR_MEMORY_BUDGET", "1K")
    with pytest.raises(MemoryBudgetError, match="The 20 x 20 kernel matrix needs 3,200 bytes"):
        KernelPCA(kernel="rbf").fit(X)


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_kernel_pca_keeps_its_own_copy_of_the_training_data(rng, kernel):
    X = rng.standard_normal((30, 4))
    new = rng.standard_normal((5, 4))
    est = KernelPCA(n_components=2, kernel=kernel).fit(X)
    before = est.transform(new)
    X *= 3.0  # the caller edits its array after fit (scikit-learn's copy_X=True case)
    np.testing.assert_array_equal(est.transform(new), before)


def test_kernel_pca_precomputed_check_uses_n_jobs(rng, monkeypatch):
    import fastdr._runtime.threads as parallel

    X = rng.standard_normal((40, 3))
    K = X @ X.T
    one = KernelPCA(n_components=2, kernel="precomputed", n_jobs=1).fit(K)
    seen = []
    real = parallel.parallel_section

    def spy(n_jobs):
        seen.append(n_jobs)
        return real(n_jobs)

    monkeypatch.setattr(parallel, "parallel_section", spy)
    two = KernelPCA(n_components=2, kernel="precomputed", n_jobs=2).fit(K)
    assert seen == [2]  # the symmetry check, imported at call time, honours n_jobs
    np.testing.assert_array_equal(one.eigenvectors_, two.eigenvectors_)
    np.testing.assert_array_equal(one.transform(K[:5]), two.transform(K[:5]))
