"""Nystrom kernel PCA, ``KernelPCA(n_landmarks=L)`` (issue 36): the exact answer at L = m,
a close one at L << m, never an m x m array, and the errors of its bad inputs."""

import re

import numpy as np
import pytest
import scipy.sparse
from sklearn.decomposition import KernelPCA as SkKernelPCA

import fastdr
from fastdr.decomposition import _kernel_pca_nystrom

from ..reference.linear import centred_kernel, kernel_matrix
from ..reference.manifold import procrustes_disparity


def _data(m=300, d=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, d)) * np.linspace(1.0, 2.0, d)


def _nystrom_reference(X, landmarks, k, gamma):
    """Kernel PCA of the Nystrom kernel ``C K_zz^+ C^T``, formed m x m (naive)."""
    C = kernel_matrix(X, landmarks, "rbf", gamma)
    K_zz = kernel_matrix(landmarks, landmarks, "rbf", gamma)
    K = C @ np.linalg.pinv(K_zz, rcond=1e-13, hermitian=True) @ C.T
    Kc = centred_kernel(K)
    values, vectors = np.linalg.eigh(Kc)
    values, vectors = values[::-1][:k], vectors[:, ::-1][:, :k]
    return values, vectors * np.sqrt(values)


@pytest.mark.parametrize("kernel", ["rbf", "poly", "cosine"])
def test_all_samples_as_landmarks_is_the_exact_method(kernel):
    X = _data(m=120)
    exact = fastdr.KernelPCA(4, kernel=kernel, eigen_solver="dense").fit(X)
    ours = fastdr.KernelPCA(4, kernel=kernel, n_landmarks=120).fit(X)
    np.testing.assert_allclose(ours.eigenvalues_, exact.eigenvalues_, rtol=1e-8)
    assert procrustes_disparity(ours.transform(X), exact.transform(X)) < 1e-12
    Q = _data(m=30, seed=1)
    assert procrustes_disparity(ours.transform(Q), exact.transform(Q)) < 1e-12
    # same signs too: the largest-magnitude entry of each eigenvector is positive
    np.testing.assert_allclose(ours.transform(Q), exact.transform(Q), atol=1e-7)


def test_landmarks_equal_the_naive_nystrom_kernel_pca():
    X = _data()
    ours = fastdr.KernelPCA(3, kernel="rbf", gamma=0.2, n_landmarks=40, random_state=0).fit(X)
    values, embedding = _nystrom_reference(X, ours.landmarks_, 3, 0.2)
    np.testing.assert_allclose(ours.eigenvalues_, values, rtol=1e-9)
    assert procrustes_disparity(ours.fit_transform(X), embedding) < 1e-12
    np.testing.assert_array_equal(ours.landmarks_, X[ours.landmark_indices_])


def test_a_few_landmarks_approximate_scikit_learn():
    X = _data(m=1500, d=4)
    theirs = SkKernelPCA(2, kernel="rbf", gamma=0.1).fit(X)
    ours = fastdr.KernelPCA(2, kernel="rbf", gamma=0.1, n_landmarks=300,
                            random_state=0).fit(X)
    np.testing.assert_allclose(ours.eigenvalues_, theirs.eigenvalues_, rtol=1e-2)
    assert procrustes_disparity(ours.transform(X), theirs.transform(X)) < 1e-3


def test_never_forms_an_m_by_m_array(monkeypatch):
    X = _data(m=2000, d=3)
    real_kernel = fastdr.KernelPCA._kernel
    shapes = []

    def recording(self, A, B, *args, **kwargs):
        shapes.append((A.shape[0], B.shape[0]))
        return real_kernel(self, A, B, *args, **kwargs)

    monkeypatch.setattr(fastdr.KernelPCA, "_kernel", recording)
    monkeypatch.setattr(_kernel_pca_nystrom, "_BLOCK_BYTES", 8 * 50 * 300)  # 300-row blocks
    model = fastdr.KernelPCA(2, kernel="rbf", n_landmarks=50, random_state=0).fit(X)
    model.transform(X)
    assert shapes and max(a * b for a, b in shapes) <= 300 * 50


def test_kmeans_plus_plus_landmarks_spread_over_the_data():
    X = np.vstack([_data(m=950, d=2), _data(m=50, d=2) + 40.0])  # a small far cluster
    ours = fastdr.KernelPCA(2, kernel="rbf", gamma=0.01, n_landmarks=10,
                            landmark_method="kmeans++", random_state=0).fit(X)
    assert (ours.landmark_indices_ >= 950).any()
    assert np.all(np.diff(ours.landmark_indices_) > 0)


def test_same_seed_same_landmarks_and_answer():
    X = _data()
    a = fastdr.KernelPCA(2, kernel="rbf", n_landmarks=50, random_state=3).fit_transform(X)
    b = fastdr.KernelPCA(2, kernel="rbf", n_landmarks=50, random_state=3).fit_transform(X)
    np.testing.assert_array_equal(a, b)


def test_sparse_input_and_float32():
    X = _data()
    dense = fastdr.KernelPCA(2, kernel="rbf", n_landmarks=60, random_state=0).fit(X)
    sparse = fastdr.KernelPCA(2, kernel="rbf", n_landmarks=60, random_state=0).fit(
        scipy.sparse.csr_matrix(X))
    np.testing.assert_allclose(sparse.transform(scipy.sparse.csr_matrix(X)), dense.transform(X),
                               atol=1e-8)
    single = fastdr.KernelPCA(2, kernel="rbf", n_landmarks=60, random_state=0).fit(
        X.astype(np.float32))
    out = single.transform(X.astype(np.float32))
    assert out.dtype == np.float32
    assert procrustes_disparity(out.astype(np.float64), dense.transform(X)) < 1e-6


def test_inverse_transform_on_the_landmark_basis():
    rng = np.random.default_rng(0)
    t = rng.uniform(0, 2 * np.pi, 800)
    X = np.column_stack([np.cos(t), np.sin(t)]) + 0.01 * rng.standard_normal((800, 2))
    model = fastdr.KernelPCA(2, kernel="rbf", gamma=1.0, n_landmarks=100,
                             fit_inverse_transform=True, alpha=1e-3, random_state=0).fit(X)
    assert model.dual_coef_.shape == (100, 2)
    back = model.inverse_transform(model.transform(X))
    assert np.sqrt(np.mean((back - X) ** 2)) < 0.1  # 0.7 for a constant guess


def test_bad_landmark_parameters_name_the_problem():
    X = _data(m=50)
    with pytest.raises(fastdr.InvalidParameterError, match="n_landmarks"):
        fastdr.KernelPCA(2, n_landmarks=0).fit(X)
    with pytest.raises(fastdr.InvalidParameterError, match="landmark_method"):
        fastdr.KernelPCA(2, n_landmarks=5, landmark_method="grid").fit(X)
    K = X @ X.T
    with pytest.raises(ValueError, match=re.escape("n_landmarks=5 needs the samples")):
        fastdr.KernelPCA(2, kernel="precomputed", n_landmarks=5).fit(K)
    with pytest.raises(ValueError, match="no positive eigenvalue"):
        fastdr.KernelPCA(2, kernel=lambda a, b: -1.0 - float(a @ b), n_landmarks=5).fit(X)


@pytest.mark.parametrize("gamma, n_landmarks", [(1e-3, 30), (3e-3, 100), (1e-2, 300)])
def test_wide_kernels_are_stable(gamma, n_landmarks):
    # rbf rows far wider than the data: every kernel value is near 1, K_zz is
    # ill-conditioned, and an uncentred second moment cancelled into negative eigenvalues
    X = np.random.default_rng(0).standard_normal((300, 3))
    exact = fastdr.KernelPCA(5, kernel="rbf", gamma=gamma, eigen_solver="dense").fit(X)
    ours = fastdr.KernelPCA(5, kernel="rbf", gamma=gamma, n_landmarks=n_landmarks,
                            random_state=0).fit(X)
    # Nystrom's own error at these L is about 1e-3 of the smallest of the five; the
    # cancellation gave 6% on the largest and 160% on the fourth
    np.testing.assert_allclose(ours.eigenvalues_, exact.eigenvalues_, rtol=5e-3)
    fastdr.KernelPCA(kernel="rbf", gamma=gamma, n_landmarks=n_landmarks,
                     random_state=0).fit(X)  # every component: no negative eigenvalue


def test_default_parameters_on_a_thousand_points():
    X = np.random.default_rng(0).standard_normal((1000, 3))
    model = fastdr.KernelPCA(kernel="rbf", n_landmarks=300, random_state=0).fit(X)
    assert model.n_components_ > 0 and (model.eigenvalues_ > 0).all()


def test_more_components_than_the_landmark_features_are_zero():
    X = _data(m=300, d=3)
    ours = fastdr.KernelPCA(6, kernel="linear", n_landmarks=50, random_state=0).fit(X)
    exact = fastdr.KernelPCA(6, kernel="linear", eigen_solver="dense").fit(X)
    assert ours.n_components_ == exact.n_components_ == 6
    np.testing.assert_allclose(ours.eigenvalues_, exact.eigenvalues_, rtol=1e-8, atol=1e-8)
    np.testing.assert_array_equal(ours.transform(X)[:, 3:], 0.0)


def test_a_refused_fit_leaves_the_fitted_model():
    X = _data(m=100)
    model = fastdr.KernelPCA(2, kernel="rbf", n_landmarks=20, random_state=0).fit(X)
    before = model.transform(X)
    model.set_params(kernel="precomputed")
    with pytest.raises(ValueError, match="needs the samples"):
        model.fit(X @ X.T)
    model.set_params(kernel="rbf")
    np.testing.assert_array_equal(model.transform(X), before)
