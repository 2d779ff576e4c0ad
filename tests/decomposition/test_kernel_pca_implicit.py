"""Exact kernel PCA with the kernel never stored, ``KernelPCA(kernel_storage="implicit")``
(issue 36): the stored route's answer to round-off, no m x m array, the automatic choice
under the memory budget, and the errors of what it cannot do."""

import re

import numpy as np
import pytest
import scipy.sparse
from sklearn.decomposition import KernelPCA as SkKernelPCA

import fastdr
from fastdr._eigen import implicit
from fastdr._kernels.spectral import distance_product
from fastdr.exceptions import MemoryBudgetError

from ..reference.linear import centred_kernel, kernel_matrix


def _data(m=300, d=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, d)) * np.linspace(1.0, 2.0, d)


def _pair(X, **params):
    stored = fastdr.KernelPCA(kernel_storage="stored", random_state=0, **params).fit(X)
    free = fastdr.KernelPCA(kernel_storage="implicit", random_state=0, **params).fit(X)
    return stored, free


def _assert_same(a, b, X, Q, rtol=1e-8):
    scale = a.eigenvalues_.max()
    np.testing.assert_allclose(b.eigenvalues_, a.eigenvalues_, rtol=0, atol=rtol * scale)
    np.testing.assert_allclose(b.eigenvectors_, a.eigenvectors_, rtol=0, atol=rtol)
    np.testing.assert_allclose(b.transform(Q), a.transform(Q), rtol=0,
                               atol=rtol * np.sqrt(scale))


@pytest.mark.jit_only  # many passes over m x m: compiled kernels only
@pytest.mark.parametrize("solver", ["arpack", "lobpcg", "randomized"])
@pytest.mark.parametrize("kernel", ["rbf", "poly", "cosine", "linear"])
def test_implicit_equals_stored(kernel, solver):
    X = _data(m=400 if solver != "randomized" else 1200)
    stored, free = _pair(X, n_components=4, kernel=kernel, gamma=0.1, eigen_solver=solver)
    _assert_same(stored, free, X, _data(m=9, seed=1))


@pytest.mark.jit_only  # many passes over m x m: compiled kernels only
def test_implicit_equals_the_naive_reference_and_scikit_learn():
    X = _data(m=500)
    free = fastdr.KernelPCA(5, kernel="rbf", gamma=0.2, kernel_storage="implicit",
                            random_state=0).fit(X)
    values, vectors = np.linalg.eigh(centred_kernel(kernel_matrix(X, X, "rbf", 0.2)))
    np.testing.assert_allclose(free.eigenvalues_, values[::-1][:5], rtol=1e-9)
    sk = SkKernelPCA(5, kernel="rbf", gamma=0.2, eigen_solver="dense").fit(X)
    embedding = free.transform(X[:20])
    expected = sk.transform(X[:20])
    np.testing.assert_allclose(np.abs(embedding), np.abs(expected), atol=1e-8)


@pytest.mark.jit_only  # many passes over m x m: compiled kernels only
def test_sparse_float32_and_callable_kernels():
    X = _data(m=300)
    sparse = scipy.sparse.random(300, 40, density=0.1, format="csr", random_state=0)
    for data, params in [(sparse, {"kernel": "rbf", "gamma": 0.5}),
                         (X.astype(np.float32), {"kernel": "rbf", "gamma": 0.1}),
                         # a Python kernel is called m^2 times per product: few samples
                         (X[:40], {"kernel": lambda a, b: float(np.exp(-np.sum((a - b) ** 2)))})]:
        stored, free = _pair(data, n_components=3, eigen_solver="arpack", **params)
        assert free.eigenvectors_.dtype == stored.eigenvectors_.dtype
        tol = 1e-4 if free.eigenvectors_.dtype == np.float32 else 1e-8
        _assert_same(stored, free, data, data[:5], rtol=tol)


@pytest.mark.jit_only  # many passes over m x m: compiled kernels only
@pytest.mark.parametrize("kernel", ["poly", "rbf"])
def test_never_forms_an_m_by_m_array(monkeypatch, kernel):
    X = _data(m=1500, d=3)
    real_kernel = fastdr.KernelPCA._kernel
    real_times = distance_product.distance_times
    shapes, accumulators = [], []

    def recording(self, A, B, *args, **kwargs):
        shapes.append((A.shape[0], B.shape[0]))
        return real_kernel(self, A, B, *args, **kwargs)

    def recording_times(*args):
        accumulators.append(args[-1].nbytes)
        return real_times(*args)

    monkeypatch.setattr(fastdr.KernelPCA, "_kernel", recording)
    monkeypatch.setattr(distance_product, "distance_times", recording_times)
    monkeypatch.setattr(implicit, "BLOCK_BYTES", 8 * 1500 * 200)  # 200-row blocks
    monkeypatch.setattr(implicit, "ACCUMULATOR_BYTES", 8 * 1500 * 5 * 3)
    fastdr.KernelPCA(3, kernel=kernel, kernel_storage="implicit", eigen_solver="arpack",
                     random_state=0).fit(X)
    if kernel == "rbf":  # the fused product: tiles and at most 3 accumulators of m x 5
        assert not shapes and accumulators
        assert max(accumulators) <= 8 * 1500 * 5 * 3
    else:
        assert shapes and max(a * b for a, b in shapes) <= 200 * 1500


@pytest.mark.jit_only  # many passes over m x m: compiled kernels only
def test_auto_goes_implicit_when_the_kernel_does_not_fit(capsys):
    X = _data(m=800)
    stored = fastdr.KernelPCA(3, kernel="rbf", random_state=0).fit(X)
    with fastdr.config_context(memory_budget=800 * 800 * 8 - 1):
        auto = fastdr.KernelPCA(3, kernel="rbf", random_state=0, verbose=1).fit(X)
        assert "never stored" in capsys.readouterr().out
        with pytest.raises(MemoryBudgetError, match=re.escape(
                "Pass kernel_storage='implicit' (the matrix is never stored")) as info:
            fastdr.KernelPCA(3, kernel="rbf", kernel_storage="stored").fit(X)
        assert "n_landmarks (Nystrom kernel PCA" in str(info.value)
        # the whole spectrum cannot be implicit: the budget error stands, naming the routes
        with pytest.raises(MemoryBudgetError, match="kernel_storage='implicit'"):
            fastdr.KernelPCA(kernel="rbf").fit(X)
    _assert_same(stored, auto, X, X[:5])


@pytest.mark.parametrize("params", [{"n_components": None}, {"n_components": 0.9},
                                    {"n_components": 3, "eigen_solver": "dense"}])
def test_what_implicit_cannot_do_is_a_clear_error(params):
    with pytest.raises(ValueError, match=re.escape(
            "kernel_storage='implicit' computes a few eigenpairs with an iterative "
            "eigensolver; it cannot run with n_components=")):
        fastdr.KernelPCA(kernel="rbf", kernel_storage="implicit", **params).fit(_data())


def test_bad_kernel_storage_is_refused():
    with pytest.raises(fastdr.exceptions.InvalidParameterError,
                       match="The 'kernel_storage' parameter of KernelPCA must be"):
        fastdr.KernelPCA(2, kernel_storage="disk").fit(_data())


@pytest.mark.jit_only  # many passes over m x m: compiled kernels only
def test_bit_identical_for_any_n_jobs():
    X = _data(m=2500, d=4)
    fits = [fastdr.KernelPCA(3, kernel="rbf", kernel_storage="implicit", random_state=0,
                             n_jobs=n).fit(X) for n in (1, 2)]
    np.testing.assert_array_equal(fits[0].eigenvectors_, fits[1].eigenvectors_)
    np.testing.assert_array_equal(fits[0].eigenvalues_, fits[1].eigenvalues_)


def test_non_finite_kernel_is_caught_before_the_solver():
    X = _data() * 1e110
    with pytest.raises(ValueError, match="The kernel matrix has non-finite entries"):
        fastdr.KernelPCA(2, kernel="poly", kernel_storage="implicit").fit(X)


@pytest.mark.jit_only  # many passes over m x m: compiled kernels only
def test_inverse_transform_as_the_stored_route():
    X = _data(m=200)
    stored, free = _pair(X, n_components=3, kernel="rbf", gamma=0.1, eigen_solver="arpack",
                         fit_inverse_transform=True)
    Z = stored.transform(X[:5])
    np.testing.assert_allclose(free.inverse_transform(Z), stored.inverse_transform(Z),
                               atol=1e-7)


@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_small_implicit_equals_stored(kernel):
    # the one comparison small enough for the interpreted kernels of the coverage pass
    X = _data(m=60, d=3)
    stored, free = _pair(X, n_components=2, kernel=kernel, gamma=0.3, eigen_solver="arpack")
    _assert_same(stored, free, X, X[:4])
