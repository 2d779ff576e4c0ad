"""Spectral estimators never return fewer components than asked for (issue 13).

Before the eigen pipeline checked its input and output, a non-finite scatter, kernel or
distance matrix made LAPACK return no eigenpairs at all, and the estimators silently
returned 0 columns while ``n_components_`` said 2.
"""

import numpy as np
import pytest

from fastdr import PCA, ClassicalMDS, Isomap, KernelPCA


@pytest.fixture
def X():
    return np.random.default_rng(0).standard_normal((40, 5))


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("svd_solver", ["auto", "covariance_eigh", "gram", "full",
                                        "randomized"])
@pytest.mark.parametrize("scale", [1e160, 1e200])
def test_pca_on_values_whose_squares_overflow_raises(X, svd_solver, scale):
    with pytest.raises(ValueError, match=r"overflow float64: scale X first .*StandardScaler"):
        PCA(n_components=2, svd_solver=svd_solver, random_state=0).fit(X * scale)


def test_pca_just_below_the_overflow_still_fits(X):
    Z = PCA(n_components=2).fit_transform(X * 1e150)
    assert Z.shape == (40, 2) and np.isfinite(Z).all()


@pytest.mark.parametrize("estimator", [
    ClassicalMDS(n_components=2),
    ClassicalMDS(n_components=0.9),
    Isomap(n_neighbors=8, n_components=2),
])
def test_float32_distances_whose_squares_overflow_raise(X, estimator):
    # refused at the input, before any distance is computed
    with pytest.raises(ValueError, match=r"^X holds values too large to compute distances.*"
                                         r"overflow float32.*StandardScaler"):
        estimator.fit((X * 1e19).astype(np.float32))


def test_mds_on_float64_values_whose_squares_overflow_raises(X):
    with pytest.raises(ValueError, match="^X holds values too large to compute distances.*"
                                         "overflow float64"):
        ClassicalMDS(n_components=2).fit(X * 1e200)


@pytest.mark.parametrize("estimator", [ClassicalMDS(n_components=2),
                                       Isomap(n_neighbors=8, n_components=2)])
def test_float32_with_a_large_but_safe_scale_keeps_every_component(X, estimator):
    Z = estimator.fit_transform((X * 1e17).astype(np.float32))
    assert Z.shape == (40, 2) and np.isfinite(Z).all() and np.abs(Z).max() > 0


@pytest.mark.parametrize("eigen_solver", ["dense", "randomized", "arpack"])
def test_kernel_pca_with_a_nan_kernel_names_the_degree(X, eigen_solver):
    est = KernelPCA(n_components=2, kernel="poly", degree=2.5, eigen_solver=eigen_solver,
                    random_state=0)
    with pytest.raises(ValueError, match=r"kernel matrix has non-finite entries.*"
                                         r"non-integer degree=2.5.*integer degree"):
        est.fit(X)


def test_kernel_pca_non_integer_degree_on_non_negative_data_fits(X):
    Z = KernelPCA(n_components=2, kernel="poly", degree=2.5).fit_transform(np.abs(X))
    assert Z.shape == (40, 2) and np.isfinite(Z).all()


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("eigen_solver", ["dense", "randomized"])
def test_kernel_pca_on_values_that_overflow_the_kernel_raises(X, eigen_solver):
    # (an rbf kernel of such points is exactly 0 off the diagonal, which is correct)
    est = KernelPCA(n_components=2, kernel="poly", eigen_solver=eigen_solver, random_state=0)
    with pytest.raises(ValueError, match="kernel matrix has non-finite entries.*scale X"):
        est.fit(X * 1e200)


def test_precomputed_kernel_with_inf_is_refused():
    K = np.eye(5)
    K[0, 0] = np.inf
    with pytest.raises(ValueError):
        KernelPCA(n_components=2, kernel="precomputed").fit(K)


def test_isomap_zeroes_round_off_eigenvalues_as_classical_mds_does():
    # points on a line: the geodesic B has rank 1, the rest of its spectrum is round-off
    t = np.sort(np.random.default_rng(0).uniform(0, 10, 60))
    X = np.column_stack([t, 2 * t])
    iso = Isomap(n_neighbors=5, n_components=3, eigen_solver="dense").fit(X)
    mds = ClassicalMDS(n_components=3, eigen_solver="dense").fit(X)
    assert iso.eigenvalues_[0] > 0 and mds.eigenvalues_[0] > 0
    np.testing.assert_array_equal(iso.eigenvalues_[1:], 0.0)
    np.testing.assert_array_equal(mds.eigenvalues_[1:], 0.0)
    np.testing.assert_array_equal(iso.transform(X[:4] + 0.1)[:, 1:], 0.0)


def test_transform_refuses_new_points_whose_distances_or_kernel_overflow(X):
    # fit is fine; the new points are what overflows: no NaN embedding without an error
    mds = ClassicalMDS(n_components=2).fit(X)
    with pytest.raises(ValueError, match="^X holds values too large to compute distances.*"
                                         "StandardScaler"):
        mds.transform(X[:3] * 1e200)
    kpca = KernelPCA(n_components=2, kernel="poly", degree=2.5).fit(np.abs(X))
    with pytest.raises(ValueError, match=r"kernel block between the new and the training samples "
                                         r"has non-finite entries.*integer degree"):
        kpca.transform(-np.abs(X[:3]))
