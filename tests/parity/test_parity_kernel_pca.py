"""KernelPCA against scikit-learn 1.9's KernelPCA on the same small data (issue 14).

Embeddings are compared up to an orthogonal map (per-column signs, and rotations inside
repeated eigenvalues such as a null space): the Procrustes disparity must stay below 1e-6.
Eigenvalues, pre-image coefficients and reconstructions are compared directly: the kernel of
the embedding is invariant under those maps, so ``dual_coef_`` and ``inverse_transform``
must agree entry by entry.
"""

import inspect

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse
import sklearn.decomposition
import sklearn.exceptions

import fastdr
from fastdr.decomposition import KernelPCA

M, D, K = 30, 4, 6  # K > D: the linear and cosine kernels then have zero eigenvalues
KERNELS = ["linear", "rbf", "poly", "sigmoid", "cosine"]
SOLVERS = ["auto", "dense", "arpack", "randomized"]


def _data(seed=0, m=M):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, (m, D))
    X[X < 0.35] = 0.0  # sparse-ish, so that the CSR form has real structure
    return X


def _laplacian(x, y, scale=1.0):
    """A callable kernel; sparse rows arrive as (1, d) sparse matrices."""
    diff = x - y
    if scipy.sparse.issparse(diff):
        diff = diff.toarray()
    return float(np.exp(-scale * np.abs(diff).sum()))


def _disparity(ours, theirs):
    """Orthogonal Procrustes disparity ``min_R |ours R - theirs|^2 / |theirs|^2``."""
    assert ours.shape == theirs.shape
    scale = np.sum(theirs ** 2)
    if scale == 0:
        return float(np.sum(ours ** 2))
    R, _ = scipy.linalg.orthogonal_procrustes(ours, theirs)
    return float(np.sum((ours @ R - theirs) ** 2) / scale)


def _pair(**params):
    return KernelPCA(**params), sklearn.decomposition.KernelPCA(**params)


def _compare(ours, theirs, X, X_new, fit_inverse_transform):
    Z_ours, Z_theirs = ours.fit_transform(X), theirs.fit_transform(X)
    top = float(theirs.eigenvalues_.max())
    np.testing.assert_allclose(ours.eigenvalues_, theirs.eigenvalues_, rtol=1e-7,
                               atol=1e-9 * top)
    assert ours.n_components_ == theirs.eigenvalues_.shape[0]
    assert ours.eigenvectors_.shape == theirs.eigenvectors_.shape
    assert _disparity(Z_ours, Z_theirs) < 1e-6
    T_ours, T_theirs = ours.transform(X_new), theirs.transform(X_new)
    assert _disparity(T_ours, T_theirs) < 1e-6
    if fit_inverse_transform:
        np.testing.assert_allclose(ours.dual_coef_, theirs.dual_coef_, rtol=1e-6, atol=1e-8)
        assert _disparity(ours.X_transformed_fit_, theirs.X_transformed_fit_) < 1e-6
        np.testing.assert_allclose(ours.inverse_transform(T_ours),
                                   theirs.inverse_transform(T_theirs), rtol=1e-6, atol=1e-8)
    else:
        assert not hasattr(ours, "dual_coef_")


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("eigen_solver", SOLVERS)
@pytest.mark.parametrize("remove_zero_eig", [False, True])
@pytest.mark.parametrize("fit_inverse_transform", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_named_kernels_match_sklearn(kernel, eigen_solver, remove_zero_eig,
                                     fit_inverse_transform, sparse):
    X, X_new = _data(0), _data(1, m=7)
    if sparse:
        X, X_new = scipy.sparse.csr_matrix(X), scipy.sparse.csr_matrix(X_new)
    # iterated_power=30 makes scikit-learn's randomized solver exact here (fastdr's
    # iterates to convergence whatever the value)
    ours, theirs = _pair(n_components=K, kernel=kernel, eigen_solver=eigen_solver,
                         remove_zero_eig=remove_zero_eig, iterated_power=30,
                         fit_inverse_transform=fit_inverse_transform, alpha=0.1,
                         random_state=0)
    if kernel == "sigmoid" and eigen_solver == "randomized":
        # scikit-learn's randomized solver takes the eigenvalues of largest magnitude: on
        # this indefinite kernel, negative ones, which it then refuses. fastdr's takes the
        # largest, as the dense solver does: compare with scikit-learn's dense solver.
        with pytest.raises(ValueError, match="There are significant negative eigenvalues"):
            theirs.fit(X.toarray() if sparse else X)
        theirs.set_params(eigen_solver="dense")
    if sparse and fit_inverse_transform:
        for est in (ours, theirs):
            with pytest.raises(NotImplementedError,
                               match="Inverse transform not implemented for sparse matrices"):
                est.fit(X)
        return
    _compare(ours, theirs, X, X_new, fit_inverse_transform)
    if remove_zero_eig and kernel in ("linear", "cosine"):
        assert ours.n_components_ == D  # the rank of the centred kernel: 2 pairs dropped
    else:
        assert ours.n_components_ == K


@pytest.mark.parametrize("eigen_solver", SOLVERS)
@pytest.mark.parametrize("fit_inverse_transform", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_callable_kernel_with_kernel_params_matches_sklearn(eigen_solver,
                                                             fit_inverse_transform, sparse):
    X, X_new = _data(2, m=20), _data(3, m=5)
    if sparse:
        X, X_new = scipy.sparse.csr_matrix(X), scipy.sparse.csr_matrix(X_new)
    ours, theirs = _pair(n_components=3, kernel=_laplacian, kernel_params={"scale": 0.7},
                         eigen_solver=eigen_solver, iterated_power=30,
                         fit_inverse_transform=fit_inverse_transform, random_state=0)
    if sparse and fit_inverse_transform:
        with pytest.raises(NotImplementedError, match="not implemented for sparse"):
            ours.fit(X)
        return
    _compare(ours, theirs, X, X_new, fit_inverse_transform)
    # kernel_params reach the callable: another scale, another spectrum
    other = KernelPCA(3, kernel=_laplacian, kernel_params={"scale": 2.0}).fit(X)
    assert not np.allclose(other.eigenvalues_, ours.eigenvalues_)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("n_components", [None, 50])
def test_n_components_none_and_above_n_samples_match_sklearn(kernel, n_components):
    X, X_new = _data(4), _data(5, m=6)
    ours, theirs = _pair(n_components=n_components, kernel=kernel)
    if kernel == "sigmoid":
        # the whole spectrum of this indefinite kernel: both refuse its negative eigenvalues
        for est in (ours, theirs):
            with pytest.raises(ValueError, match="There are significant negative eigenvalues"):
                est.fit(X)
        return
    _compare(ours, theirs, X, X_new, False)


def test_precomputed_kernel_matches_sklearn():
    X, X_new = _data(6), _data(7, m=5)
    rbf = sklearn.metrics.pairwise.rbf_kernel
    ours, theirs = _pair(n_components=3, kernel="precomputed")
    Z_ours, Z_theirs = ours.fit_transform(rbf(X)), theirs.fit_transform(rbf(X))
    assert _disparity(Z_ours, Z_theirs) < 1e-6
    assert ours.gamma_ == theirs.gamma_ == 1.0 / M
    np.testing.assert_allclose(ours.eigenvalues_, theirs.eigenvalues_, rtol=1e-9)
    assert _disparity(ours.transform(rbf(X_new, X)), theirs.transform(rbf(X_new, X))) < 1e-6


def test_signature_matches_sklearn():
    ours = inspect.signature(KernelPCA).parameters
    theirs = inspect.signature(sklearn.decomposition.KernelPCA).parameters
    for name, param in theirs.items():
        assert name in ours, name
        assert ours[name].default == param.default, name
        assert ours[name].kind == param.kind, name
    extras = set(ours) - set(theirs)
    assert all(ours[name].kind is inspect.Parameter.KEYWORD_ONLY for name in extras)
    assert KernelPCA(2).n_components == 2


def test_errors_match_sklearn():
    X = _data(8)
    for est in _pair(kernel="precomputed", fit_inverse_transform=True):
        with pytest.raises(ValueError, match="Cannot fit_inverse_transform with a precomputed"):
            est.fit(X @ X.T)
    for est in _pair(n_components=2, kernel="rbf"):
        est.fit(X)
        with pytest.raises(sklearn.exceptions.NotFittedError,
                           match="The fit_inverse_transform parameter was not set to True"):
            est.inverse_transform(np.zeros((2, 2)))
    ours = KernelPCA(2, fit_inverse_transform=True)
    with pytest.raises(sklearn.exceptions.NotFittedError):
        ours.inverse_transform(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="has 3 columns, but KernelPCA.inverse_transform "
                                         "expects 2"):
        ours.fit(X).inverse_transform(np.zeros((2, 3)))
    for params in ({"alpha": -1.0}, {"tol": -1.0}, {"max_iter": 0}, {"iterated_power": -1},
                   {"iterated_power": "full"}, {"kernel_params": [1]}, {"copy_X": "yes"},
                   {"remove_zero_eig": 1}, {"fit_inverse_transform": None}):
        with pytest.raises(ValueError, match=f"The '{next(iter(params))}' parameter"):
            KernelPCA(**params).fit(X)


def test_fitted_attributes_match_sklearn():
    import pandas as pd

    X = pd.DataFrame(_data(9), columns=["a", "b", "c", "d"])
    ours, theirs = _pair(n_components=3, kernel="rbf")
    ours.fit(X)
    theirs.fit(X)
    assert ours.gamma_ == theirs.gamma_ == 0.25
    assert ours.n_features_in_ == theirs.n_features_in_ == D
    np.testing.assert_array_equal(ours.feature_names_in_, theirs.feature_names_in_)
    np.testing.assert_array_equal(ours.X_fit_, theirs.X_fit_)
    np.testing.assert_array_equal(ours.get_feature_names_out(), theirs.get_feature_names_out())
    assert KernelPCA(kernel="rbf", gamma=0).fit(X).gamma_ == 0.0  # gamma=0 is accepted


def test_float32_keeps_its_dtype_with_the_pre_image():
    X = _data(10).astype(np.float32)
    est = KernelPCA(2, kernel="rbf", fit_inverse_transform=True).fit(X)
    Z = est.transform(X[:4])
    assert Z.dtype == np.float32 and est.dual_coef_.dtype == np.float32
    assert est.inverse_transform(Z).dtype == np.float32


def test_copy_x_false_keeps_a_reference_and_true_a_copy():
    X = _data(11)
    assert KernelPCA(2, copy_X=False).fit(X).X_fit_ is X
    kept = KernelPCA(2, copy_X=True).fit(X).X_fit_
    assert kept is not X and np.array_equal(kept, X)
    Xs = scipy.sparse.csr_matrix(X)
    assert KernelPCA(2, copy_X=False).fit(Xs).X_fit_ is Xs
    copied = KernelPCA(2).fit(Xs).X_fit_
    assert copied is not Xs and copied.data is not Xs.data


def test_sparse_x_is_never_densified(monkeypatch):
    # only the (m, m) kernel product may become dense, never the (m, d) samples
    X = scipy.sparse.csr_matrix(_data(12))
    densified = []
    toarray = scipy.sparse.csr_matrix.toarray
    for name in ("toarray", "todense"):
        def spy(self, *args, _name=name, **kwargs):
            densified.append(self.shape)
            return toarray(self, *args, **kwargs)
        monkeypatch.setattr(scipy.sparse.csr_matrix, name, spy)
    for kernel in KERNELS:
        est = KernelPCA(3, kernel=kernel).fit(X)
        est.transform(X[:5])
        assert scipy.sparse.issparse(est.X_fit_)
    assert densified and all(shape[1] != D for shape in densified)


def test_arpack_receives_tol_and_max_iter(monkeypatch):
    import fastdr._eigen.solvers as solvers

    seen = {}
    eigsh = solvers.scipy.sparse.linalg.eigsh

    def spy(*args, **kwargs):
        seen.update(tol=kwargs["tol"], maxiter=kwargs["maxiter"])
        return eigsh(*args, **kwargs)

    monkeypatch.setattr(solvers.scipy.sparse.linalg, "eigsh", spy)
    X = _data(13)
    ours, theirs = _pair(n_components=2, kernel="rbf", eigen_solver="arpack", tol=1e-9,
                         max_iter=500, random_state=0)
    _compare(ours, theirs, X, X[:5], False)
    assert seen == {"tol": 1e-9, "maxiter": 500}


def test_remove_zero_eig_drops_null_space_and_transform_zeroes_it():
    X = _data(14)
    kept = KernelPCA(K, kernel="linear").fit(X)
    assert np.count_nonzero(kept.eigenvalues_ == 0) == K - D
    Z = kept.transform(X[:5])
    assert np.all(Z[:, D:] == 0)  # zero eigenvalues project to 0, never to inf
    dropped = KernelPCA(K, kernel="linear", remove_zero_eig=True).fit(X)
    assert dropped.n_components_ == D and np.all(dropped.eigenvalues_ > 0)
    assert fastdr.KernelPCA is KernelPCA


@pytest.mark.parametrize("kernel", ["rbf", "cosine", "poly"])
def test_mixed_dense_and_sparse_inputs_match_sklearn(kernel):
    X, X_new = _data(15), _data(16, m=6)
    for fit_on, new in ((scipy.sparse.csr_matrix(X), X_new),
                        (X, scipy.sparse.csr_matrix(X_new))):
        ours, theirs = _pair(n_components=3, kernel=kernel)
        ours.fit(fit_on)
        theirs.fit(fit_on)
        assert _disparity(ours.transform(new), theirs.transform(new)) < 1e-6


def test_sparse_float32_and_other_formats_are_accepted():
    X = _data(17)
    ref = KernelPCA(3, kernel="rbf").fit(X).transform(X[:5])
    for fmt in ("csc", "coo", "lil"):
        est = KernelPCA(3, kernel="rbf").fit(scipy.sparse.csr_matrix(X).asformat(fmt))
        assert _disparity(est.transform(scipy.sparse.csr_matrix(X[:5]).asformat(fmt)),
                          ref) < 1e-12
    est32 = KernelPCA(3, kernel="rbf").fit(scipy.sparse.csr_matrix(X.astype(np.float32)))
    Z = est32.transform(scipy.sparse.csr_matrix(X[:5].astype(np.float32)))
    assert Z.dtype == np.float32 and _disparity(Z.astype(np.float64), ref) < 1e-6
    with pytest.raises(ValueError, match="contains NaN or infinity"):
        bad = scipy.sparse.csr_matrix(X)
        bad.data[0] = np.nan
        KernelPCA(3).fit(bad)
