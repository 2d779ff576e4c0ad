"""LocallyLinearEmbedding and locally_linear_embedding against scikit-learn 1.9, all methods."""

import inspect

import numpy as np
import pytest
import scipy.linalg

import fastdr
from fastdr import LocallyLinearEmbedding, NearestNeighbors, locally_linear_embedding
from fastdr._kernels.lle import methods as lle_methods
from fastdr.manifold._lle_methods import method_matrix

from .. import reference

METHODS = ["standard", "modified", "hessian", "ltsa"]


def _sklearn_roll(m, seed=0, noise=0.1):
    from sklearn.datasets import make_swiss_roll

    return make_swiss_roll(m, noise=noise, random_state=seed)[0]


def _roll_and_coordinates(m, t_end, height, seed=0):
    """A swiss roll sampled uniformly in its own (arc length, height) coordinates."""
    rng = np.random.default_rng(seed)
    grid = np.linspace(1.5 * np.pi, t_end, 20001)
    arc = np.r_[0.0, np.cumsum(np.hypot(np.diff(grid * np.cos(grid)),
                                        np.diff(grid * np.sin(grid))))]
    s = rng.uniform(0.0, arc[-1], m)
    t = np.interp(s, arc, grid)
    h = rng.uniform(0.0, height, m)
    return np.c_[t * np.cos(t), h, t * np.sin(t)], np.c_[s, h]


def _whiten(Z):
    """Z centred and linearly mapped to orthonormal columns (a null-space embedding is fixed
    only up to such an affine map)."""
    Z = Z - Z.mean(axis=0)
    L = np.linalg.cholesky(Z.T @ Z)
    return scipy.linalg.solve_triangular(L, Z.T, lower=True).T


def _sklearn_M(monkeypatch, X, **params):
    """The matrix M scikit-learn builds (its dense solver path), captured at null_space."""
    import sklearn.manifold._locally_linear as sk_lle

    captured = {}
    original = sk_lle.null_space

    def capture(M, *args, **kwargs):
        captured["M"] = np.asarray(M)
        return original(M, *args, **kwargs)

    monkeypatch.setattr(sk_lle, "null_space", capture)
    sk_lle.locally_linear_embedding(X, eigen_solver="dense", **params)
    return captured["M"]


# --------------------------------------------------------------------------- the matrix M


@pytest.mark.parametrize("method,k", [("modified", 10), ("modified", 4), ("hessian", 10),
                                      ("hessian", 6), ("ltsa", 10), ("ltsa", 4)])
@pytest.mark.parametrize("data", ["roll", "gauss12"])
def test_M_equals_sklearns(monkeypatch, method, k, data):
    # "roll": d=3 < k (scikit-learn's SVD branch); "gauss12": d=12 >= k (its eigh branch)
    X = (_sklearn_roll(150) if data == "roll"
         else np.random.default_rng(0).standard_normal((120, 12)))
    theirs = _sklearn_M(monkeypatch, X, n_neighbors=k, n_components=2, method=method)
    ind = NearestNeighbors(n_neighbors=k).fit(X).kneighbors(return_distance=False)
    M = method_matrix(method, X, ind, 2, hessian_tol=1e-4, modified_tol=1e-12, n_jobs=None)
    assert M.format == "csr" and M.has_canonical_format
    assert M.nnz <= X.shape[0] * (k + 1) ** 2  # nothing m x m
    np.testing.assert_allclose(M.toarray(), theirs, rtol=0, atol=1e-11 * np.abs(theirs).max())
    assert (M != M.T).nnz == 0  # bitwise symmetric
    np.testing.assert_allclose(M @ np.ones(X.shape[0]), 0.0, atol=1e-10)  # constant null vector


@pytest.mark.parametrize("method", ["modified", "hessian", "ltsa"])
def test_M_does_not_depend_on_threads(method):
    X = _sklearn_roll(200)
    ind = NearestNeighbors(n_neighbors=9).fit(X).kneighbors(return_distance=False)
    M1, M2 = (method_matrix(method, X, ind, 2, hessian_tol=1e-4, modified_tol=1e-12,
                            n_jobs=n_jobs) for n_jobs in (1, 2))
    for a in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(M1, a), getattr(M2, a))


def test_householder_full_q_equals_lapack_and_ignores_column_signs(rng):
    A = rng.standard_normal((9, 4))
    Q = np.empty((9, 9))
    lle_methods.householder_full_q(A.copy(), np.empty(4), Q)
    np.testing.assert_allclose(Q, scipy.linalg.qr(A)[0], rtol=0, atol=1e-13)
    flipped = A * np.array([1.0, -1.0, 1.0, -1.0])
    Q_flipped = np.empty((9, 9))
    lle_methods.householder_full_q(flipped, np.empty(4), Q_flipped)
    np.testing.assert_allclose(Q_flipped, Q, rtol=0, atol=1e-13)


def test_local_blocks_are_announced_to_the_memory_budget(monkeypatch):
    monkeypatch.setenv("FASTDR_MEMORY_BUDGET", "10K")
    X = _sklearn_roll(100)
    with pytest.raises(fastdr.MemoryBudgetError, match="The local blocks of ltsa LLE"):
        LocallyLinearEmbedding(n_neighbors=8, method="ltsa", eigen_solver="arpack").fit(X)


# --------------------------------------------------------------------------- embeddings


def _check_embedding_parity(m, method, eigen_solver):
    from sklearn.manifold import LocallyLinearEmbedding as SkLLE

    X = _sklearn_roll(m)
    sk = SkLLE(n_neighbors=12, method=method, eigen_solver="dense").fit(X)
    est = LocallyLinearEmbedding(n_neighbors=12, method=method, eigen_solver=eigen_solver,
                                 random_state=0).fit(X)
    assert est.embedding_.shape == (m, 2)
    assert reference.procrustes_disparity(est.embedding_, sk.embedding_) < 1e-6
    np.testing.assert_allclose(est.reconstruction_error_, sk.reconstruction_error_, rtol=1e-6)
    np.testing.assert_allclose(est.embedding_.T @ est.embedding_, np.eye(2), atol=1e-8)
    return est, sk, X


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("eigen_solver", ["dense", "arpack"])
def test_embedding_equals_sklearns(method, eigen_solver):
    est, sk, X = _check_embedding_parity(200, method, eigen_solver)
    # transform uses barycentric weights for every method, as scikit-learn's does
    Q = X[:30] + 0.05
    ours, theirs = est.transform(Q), sk.transform(Q)
    R, _ = scipy.linalg.orthogonal_procrustes(est.embedding_, sk.embedding_)
    np.testing.assert_allclose(ours @ R, theirs, rtol=0, atol=1e-6 * np.abs(theirs).max())


@pytest.mark.jit_only
@pytest.mark.parametrize("method", METHODS)
def test_embedding_equals_sklearns_at_m_1000(method):
    _check_embedding_parity(1000, method, "dense")


@pytest.mark.parametrize("method", ["hessian", "ltsa"])
@pytest.mark.parametrize("eigen_solver", ["dense", "arpack"])
def test_swiss_roll_coordinates_are_recovered(method, eigen_solver):
    X, coordinates = _roll_and_coordinates(300, 3.5 * np.pi, 10.0)
    Y = LocallyLinearEmbedding(n_neighbors=10, method=method, eigen_solver=eigen_solver,
                               random_state=0).fit_transform(X)
    assert reference.procrustes_disparity(_whiten(coordinates), Y) < 0.05


@pytest.mark.jit_only
@pytest.mark.parametrize("method", ["hessian", "ltsa"])
def test_swiss_roll_coordinates_are_recovered_at_m_1000(method):
    X, coordinates = _roll_and_coordinates(1000, 4.5 * np.pi, 21.0)
    Y = LocallyLinearEmbedding(n_neighbors=12, method=method,
                               random_state=0).fit_transform(X)
    assert reference.procrustes_disparity(_whiten(coordinates), Y) < 0.05


@pytest.mark.parametrize("method", ["modified", "hessian", "ltsa"])
def test_float32_in_float32_out(method):
    X = _sklearn_roll(200)
    e64 = LocallyLinearEmbedding(n_neighbors=10, method=method).fit(X).embedding_
    est = LocallyLinearEmbedding(n_neighbors=10, method=method).fit(X.astype(np.float32))
    assert est.embedding_.dtype == np.float32
    assert reference.procrustes_disparity(est.embedding_, e64) < 1e-4


@pytest.mark.parametrize("method", METHODS)
def test_function_equals_sklearns_function(method):
    from sklearn.manifold import locally_linear_embedding as sk_function

    X = _sklearn_roll(200)
    Y, err = locally_linear_embedding(X, n_neighbors=10, n_components=2, method=method,
                                      eigen_solver="dense")
    Y_sk, err_sk = sk_function(X, n_neighbors=10, n_components=2, method=method,
                               eigen_solver="dense")
    assert reference.procrustes_disparity(Y, Y_sk) < 1e-6
    np.testing.assert_allclose(err, err_sk, rtol=1e-6)
    # a fitted NearestNeighbors stands for its training points, as in scikit-learn
    from sklearn.neighbors import NearestNeighbors as SkNN

    for nbrs in (NearestNeighbors().fit(X), SkNN().fit(X)):
        Y_nn, _ = locally_linear_embedding(nbrs, n_neighbors=10, n_components=2,
                                           method=method, eigen_solver="dense")
        np.testing.assert_array_equal(Y_nn, Y)
    with pytest.raises(fastdr.NotFittedError, match="not fitted yet"):
        locally_linear_embedding(NearestNeighbors(), n_neighbors=10, n_components=2)


# --------------------------------------------------------------------------- API and errors


def test_signatures_match_sklearn():
    from sklearn.manifold import LocallyLinearEmbedding as SkLLE
    from sklearn.manifold import locally_linear_embedding as sk_function

    for ours, theirs in ((LocallyLinearEmbedding, SkLLE),
                         (locally_linear_embedding, sk_function)):
        mine = inspect.signature(ours).parameters
        for name, param in inspect.signature(theirs).parameters.items():
            assert name in mine, name
            assert mine[name].default == param.default, name
            assert mine[name].kind == param.kind, name


@pytest.mark.parametrize("params,match", [
    ({"method": "hessian", "n_neighbors": 5, "n_components": 2},
     r"for method='hessian', n_neighbors must be greater than \[n_components \* "
     r"\(n_components \+ 3\) / 2\]"),
    ({"method": "modified", "n_neighbors": 2, "n_components": 3},
     "modified LLE requires n_neighbors >= n_components"),
    ({"n_components": 4}, "output dimension must be less than or equal to input dimension"),
    ({"n_neighbors": 30}, r"Expected n_neighbors < n_samples, but n_samples = 30, "
                          r"n_neighbors = 30"),
])
def test_errors_keep_sklearns_class_and_phrase(params, match):
    from sklearn.manifold import LocallyLinearEmbedding as SkLLE

    X = np.random.default_rng(0).standard_normal((30, 3))
    with pytest.raises(ValueError, match=match):
        SkLLE(**params).fit(X)
    with pytest.raises(ValueError, match=match):
        LocallyLinearEmbedding(**params).fit(X)


@pytest.mark.parametrize("method,params,remedy", [
    ("hessian", {"n_neighbors": 5, "n_components": 2}, "Use n_neighbors >= 6"),
    ("modified", {"n_neighbors": 2, "n_components": 3}, "Use n_neighbors >= 3"),
    ("ltsa", {"n_neighbors": 2, "n_components": 3}, "Use n_neighbors >= 3"),
])
def test_too_few_neighbours_for_the_method_names_the_remedy(method, params, remedy):
    X = np.random.default_rng(0).standard_normal((30, 3))
    with pytest.raises(ValueError, match=remedy):
        LocallyLinearEmbedding(method=method, **params).fit(X)
    with pytest.raises(ValueError, match=remedy):
        locally_linear_embedding(X, method=method, **params)


def test_hessian_accepts_the_smallest_n_neighbors():
    # n_components=2 needs n_neighbors > 5: 6 is accepted, as in scikit-learn (the matrix
    # itself is compared in test_M_equals_sklearns)
    X = _sklearn_roll(150)
    est = LocallyLinearEmbedding(n_neighbors=6, method="hessian", eigen_solver="dense").fit(X)
    assert est.embedding_.shape == (150, 2) and np.isfinite(est.embedding_).all()


def test_bad_method_is_rejected():
    X = np.random.default_rng(0).standard_normal((30, 3))
    with pytest.raises(ValueError, match="The 'method' parameter of LocallyLinearEmbedding "
                                         "must be a str among"):
        LocallyLinearEmbedding(method="laplacian").fit(X)


def test_null_space_size_and_tail_ratio_follow_sklearns_formulas(rng):
    # scikit-learn: rho = sum(evals[p:]) / sum(evals[:p]) and s_i = searchsorted of eta in
    # the reversed tail-to-head ratios, plus the k - n_kept exact null directions
    for k, n_kept in ((10, 3), (8, 8), (6, 4)):
        for _ in range(20):
            values = np.sort(rng.exponential(size=k))
            values[:k - n_kept] = 0.0
            desc = values[::-1][:n_kept]
            rho = desc[2:].sum() / desc[:2].sum()
            assert np.isclose(lle_methods.tail_ratio(values, n_kept, 2), rho, rtol=1e-12)
            eta = rng.uniform(0.0, 2.0)
            cumulative = np.cumsum(desc)
            ratios = cumulative[-1] / cumulative[:-1] - 1
            want = np.searchsorted(ratios[::-1], eta) + k - n_kept
            assert lle_methods.null_space_size(values, n_kept, eta) == max(want, 1)
    # no split below eta and no exact null: scikit-learn would take 0 vectors (NaN weights);
    # fastdr keeps the bottom one
    assert lle_methods.null_space_size(np.array([1.0, 2.0, 3.0]), 3, 0.0) == 1
