"""The Nystrom start of KernelPCA's block eigensolver (issue 16).

The start only changes how many passes the block solver makes over the kernel matrix, never
what it converges to: these tests check that the guess is good (it spans the top eigenvectors
of the centred kernel, so the solver makes fewer passes) and that the fitted estimator still
equals LAPACK's answer and scikit-learn's.
"""

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse.linalg
import sklearn.decomposition

import fastdr
from fastdr._eigen.solvers import block_krylov_pairs
from fastdr.decomposition import KernelPCA
from fastdr.decomposition import _kernel_pca_spectrum as spectrum
from fastdr.decomposition._kernel_pca_spectrum import nystrom_start

M = 1000  # above 8 x the 100 landmarks, so the start is taken


def _data(m=M, d=6, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, d)) * np.linspace(2.0, 0.5, d)  # distinct top pairs


def _rbf(X, Y, gamma):
    sq = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(axis=-1)
    return np.exp(-gamma * sq)


def _centred(K):
    return K - K.mean(axis=0) - K.mean(axis=1)[:, None] + K.mean()


def _top_vectors(A, k):
    values, vectors = scipy.linalg.eigh(A, subset_by_index=(A.shape[0] - k, A.shape[0] - 1))
    return values[::-1], vectors[:, ::-1]


def test_the_start_spans_the_top_eigenvectors_of_the_centred_kernel():
    X = _data()
    K = _rbf(X, X, 0.2)
    _, top = _top_vectors(_centred(K), 2)
    start = nystrom_start(lambda S: K[:, S], M, 3, np.random.RandomState(0))
    assert start.shape == (M, 3)
    Q = np.linalg.qr(start)[0]
    outside = np.linalg.norm(top - Q @ (Q.T @ top), axis=0)
    assert outside.max() < 0.05, outside
    # without the centring the guess would chase K's near-constant top eigenvector
    assert np.abs(start.sum(axis=0)).max() < 1e-8 * np.abs(start).sum()


class _Counting(scipy.sparse.linalg.LinearOperator):
    def __init__(self, A):
        super().__init__(dtype=A.dtype, shape=A.shape)
        self.A, self.products = A, 0

    def _matmat(self, B):
        self.products += 1
        return self.A @ B


def test_the_block_solver_needs_fewer_passes_from_the_start_and_finds_the_same_pairs():
    X = _data()
    K = _rbf(X, X, 0.2)
    C = _centred(K)
    ref_values, ref_vectors = _top_vectors(C, 2)
    runs = {}
    for name in ("random", "nystrom"):
        rng = np.random.RandomState(0)
        start = nystrom_start(lambda S: K[:, S], M, 3, rng) if name == "nystrom" else None
        op = _Counting(C)
        values, vectors = block_krylov_pairs(op, 2, True, 0.0, 100, rng, None, start=start)
        np.testing.assert_allclose(values, ref_values, rtol=1e-11)
        np.testing.assert_allclose(np.abs(vectors.T @ ref_vectors), np.eye(2), atol=1e-8)
        runs[name] = op.products
    assert runs["nystrom"] < runs["random"], runs


def test_a_start_narrower_than_the_block_is_filled_with_random_columns():
    X = _data()
    C = _centred(_rbf(X, X, 0.2))
    ref_values, _ = _top_vectors(C, 3)
    start = nystrom_start(lambda S: _rbf(X, X[S], 0.2), M, 1, np.random.RandomState(1))
    assert start.shape == (M, 1)
    values, _ = block_krylov_pairs(C, 3, True, 0.0, 100, np.random.RandomState(1), None,
                                   start=start)
    np.testing.assert_allclose(values, ref_values, rtol=1e-11)


@pytest.mark.parametrize("case", ["small", "nonfinite", "negative"])
def test_no_start_where_it_cannot_help(case):
    X = _data()
    K = _rbf(X, X, 0.2)
    m = M
    if case == "small":
        m = 799  # under 8 x 100 landmarks: the random block costs little there
    elif case == "nonfinite":
        K[:, 5] = np.inf
        K[5, :] = np.inf
    else:
        K = -K  # no positive part to build the features from
    rng = np.random.RandomState(0)
    assert nystrom_start(lambda S: K[:m][:, S], m, 3, rng) is None


def _spy(monkeypatch):
    starts = []
    real = spectrum.nystrom_start

    def spy(*args, **kwargs):
        starts.append(real(*args, **kwargs))
        return starts[-1]

    monkeypatch.setattr("fastdr.decomposition._kernel_pca_routes.nystrom_start", spy)
    return starts


@pytest.mark.parametrize("kernel", ["rbf", "poly", "cosine", "precomputed"])
def test_randomized_fit_with_the_start_equals_lapack_and_sklearn(kernel, monkeypatch):
    X = _data()
    params = {"n_components": 3, "random_state": 0}
    if kernel == "precomputed":
        X = _rbf(X, X, 0.1)
    else:
        params.update(kernel=kernel, gamma=0.1, degree=2)
    if kernel == "precomputed":
        params["kernel"] = "precomputed"
    starts = _spy(monkeypatch)
    ours = KernelPCA(eigen_solver="randomized", **params)
    Z = ours.fit_transform(X)
    assert len(starts) == 1 and starts[0] is not None  # the path under test was taken
    dense = KernelPCA(eigen_solver="dense", **params)
    Z_dense = dense.fit_transform(X)
    theirs = sklearn.decomposition.KernelPCA(eigen_solver="dense", **params)
    Z_theirs = theirs.fit_transform(X)
    for reference in (dense, theirs):
        np.testing.assert_allclose(ours.eigenvalues_, reference.eigenvalues_, rtol=1e-9)
    # distinct eigenvalues: each column equals the reference's up to its sign
    for reference in (Z_dense, Z_theirs):
        signs = np.sign((Z * reference).sum(axis=0))
        np.testing.assert_allclose(Z * signs, reference, atol=1e-7 * np.abs(reference).max())


@pytest.mark.jit_only  # interpreted (coverage pass) it takes most of a minute or more
def test_the_start_keeps_results_identical_for_a_seed_and_any_thread_count():
    X = _data(seed=3).astype(np.float32)
    fits = [KernelPCA(3, kernel="rbf", eigen_solver="randomized", random_state=7,
                      n_jobs=n_jobs).fit(X) for n_jobs in (1, 2, 2)]
    assert fits[0].eigenvectors_.dtype == np.float32
    for other in fits[1:]:
        np.testing.assert_array_equal(fits[0].eigenvectors_, other.eigenvectors_)
        np.testing.assert_array_equal(fits[0].eigenvalues_, other.eigenvalues_)


def test_a_callable_kernel_takes_the_random_start(monkeypatch):
    starts = _spy(monkeypatch)
    X = _data(m=60, d=2)
    KernelPCA(2, kernel=lambda x, y: float(np.exp(-np.sum((x - y) ** 2))),
              eigen_solver="randomized", random_state=0).fit(X)
    assert starts == []  # m x s more Python calls would cost more than the passes saved


def test_a_guess_that_misses_the_top_eigenvector_still_finds_it():
    # the guess spans eigenvectors 2-4 exactly: unperturbed, the block would be invariant,
    # its residuals 0, and the solver would return pairs 2 and 3 as "the top two"
    rng = np.random.default_rng(5)
    n = 500
    V = np.linalg.qr(rng.standard_normal((n, n)))[0]
    values = np.concatenate([[10.0, 9.0, 8.0, 7.0], rng.uniform(0.0, 1.0, n - 4)])
    A = (V * values) @ V.T
    A = 0.5 * (A + A.T)
    found, vectors = block_krylov_pairs(A, 2, True, 0.0, 100, np.random.RandomState(0), None,
                                        start=V[:, 1:4])
    np.testing.assert_allclose(np.sort(found)[::-1], [10.0, 9.0], rtol=1e-10)
    assert abs(vectors[:, np.argmax(found)] @ V[:, 0]) > 1 - 1e-10


@pytest.mark.parametrize("kernel", ["cosine", "linear", "rbf", "poly"])
@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_lobpcg_converges_on_small_easy_problems(kernel, k):
    # a block of exactly k vectors stalled here (cosine and linear kernels: centred, of
    # rank 5, with small gaps next to the wanted pairs)
    for seed in range(6):
        X = np.random.default_rng(seed).normal(size=(60, 5))
        got = fastdr.KernelPCA(k, kernel=kernel, eigen_solver="lobpcg", random_state=0).fit(X)
        want = fastdr.KernelPCA(k, kernel=kernel, eigen_solver="dense").fit(X)
        np.testing.assert_allclose(got.eigenvalues_, want.eigenvalues_, rtol=1e-6)
