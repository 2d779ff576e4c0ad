import re
import warnings

import numpy as np
import pytest
import scipy.sparse
from scipy.stats import spearmanr

import fastdr
from fastdr import LocallyLinearEmbedding, NearestNeighbors, locally_linear_embedding
from fastdr._eigen import symmetric_eigenpairs
from fastdr._kernels.lle import weights as lle_kernels
from fastdr.manifold._lle import barycenter_weights, lle_matrix

from .. import reference


def _invalid(param, allowed, got, est='LocallyLinearEmbedding'):
    """fastdr's parameter-validation message, word for word, as a regex."""
    return re.escape(f"The {param!r} parameter of {est} must be {allowed}. Got {got} "
                     "instead.")


def _swiss_roll(m, seed=0):
    from sklearn.datasets import make_swiss_roll

    return make_swiss_roll(m, random_state=seed)


def _arc(m, seed=0, jitter=0.0):
    """Evenly spaced points on a 3-D arc (a 1-D manifold) and their arc parameter."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 3.0, m) + jitter * rng.uniform(-1, 1, m) * 3.0 / m
    return np.c_[np.cos(t), np.sin(t), 0.2 * t], t


def _neighbors(X, k):
    return NearestNeighbors(n_neighbors=k).fit(X).kneighbors(return_distance=False)


def _monotone(y, t):
    return abs(spearmanr(y, t)[0])


# --------------------------------------------------------------------------- weights


@pytest.mark.parametrize("d,k", [(3, 6), (3, 12), (20, 8)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_weights_match_closed_form_and_sum_to_one(rng, d, k, dtype):
    X = rng.standard_normal((200, d)).astype(dtype)
    ind = _neighbors(X, k)
    w, n_retried = barycenter_weights(X, X, ind, 1e-3, None)
    assert w.dtype == np.float64 and w.shape == (200, k) and n_retried == 0
    np.testing.assert_allclose(w, reference.lle_weights(X, X, ind, 1e-3), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=0, atol=1e-12)


def test_weights_match_sklearn_barycenter_graph():
    from sklearn.manifold._locally_linear import barycenter_kneighbors_graph
    from sklearn.neighbors import NearestNeighbors as SkNN

    X, _ = _swiss_roll(300)
    ind = _neighbors(X, 10)
    w, _ = barycenter_weights(X, X, ind, 1e-3, None)
    ours = scipy.sparse.csr_matrix((w.ravel(), ind.ravel(), np.arange(0, 3001, 10)),
                                   shape=(300, 300))
    theirs = barycenter_kneighbors_graph(SkNN(n_neighbors=11).fit(X), 10, reg=1e-3)
    np.testing.assert_allclose(ours.toarray(), theirs.toarray(), rtol=0, atol=1e-12)


def test_weights_for_queries_outside_the_training_set(rng):
    T = rng.standard_normal((150, 4))
    Q = rng.standard_normal((40, 4))
    _, ind = reference.knn(T, Q, 7)
    w, _ = barycenter_weights(Q, T, ind, 0.05, 1)
    np.testing.assert_allclose(w, reference.lle_weights(Q, T, ind, 0.05), rtol=1e-10,
                               atol=1e-12)


def test_weights_of_coincident_neighbours_are_uniform():
    # every neighbour equals the point: trace(C) = 0, so the ridge is reg itself
    X = np.zeros((5, 3))
    ind = _neighbors(X, 4)
    w, n_retried = barycenter_weights(X, X, ind, 1e-3, None)
    np.testing.assert_allclose(w, 0.25, rtol=0, atol=1e-15)
    assert n_retried == 0
    # reg=0 leaves C = 0 singular: the kernel adds a ridge and reports the rows
    w, n_retried = barycenter_weights(X, X, ind, 0.0, None)
    np.testing.assert_allclose(w, 0.25, rtol=0, atol=1e-15)
    assert n_retried == 5


def test_weights_do_not_depend_on_scale_even_near_overflow(rng):
    X = rng.standard_normal((60, 3))
    ind = _neighbors(X, 6)
    w, _ = barycenter_weights(X, X, ind, 1e-3, None)
    for scale in (1e160, 1e-170):  # C would overflow / underflow without the rescaling
        w_scaled, n_retried = barycenter_weights(X * scale, X * scale, ind, 1e-3, None)
        assert n_retried == 0
        np.testing.assert_allclose(w_scaled, w, rtol=1e-10, atol=1e-12)


def test_cholesky_solve_matches_numpy(rng):
    A = rng.standard_normal((6, 6))
    C = A @ A.T + 0.1 * np.eye(6)
    L = C.copy()
    assert lle_kernels.cholesky_inplace(L, 6)
    np.testing.assert_allclose(np.tril(L), np.linalg.cholesky(C), rtol=1e-12)
    out = np.empty(6)
    lle_kernels.cholesky_solve_ones(L, 6, out)
    np.testing.assert_allclose(out, np.linalg.solve(C, np.ones(6)), rtol=1e-10)
    assert not lle_kernels.cholesky_inplace(-C.copy(), 6)


# --------------------------------------------------------------------------- the matrix M


@pytest.mark.parametrize("m,k", [(40, 5), (120, 9)])
def test_M_equals_dense_formula(rng, m, k):
    X = rng.standard_normal((m, 3))
    ind = _neighbors(X, k)
    w, _ = barycenter_weights(X, X, ind, 1e-3, None)
    M = lle_matrix(w, ind, None)
    assert scipy.sparse.issparse(M) and M.format == "csr" and M.shape == (m, m)
    assert M.has_canonical_format
    dense = reference.lle_matrix(w, ind, m)
    np.testing.assert_allclose(M.toarray(), dense, rtol=1e-12, atol=1e-12)
    # bitwise symmetric, and the constant vector is its null vector ((I - W) 1 = 0) ...
    assert (M != M.T).nnz == 0
    np.testing.assert_allclose(M @ np.ones(m), 0.0, atol=1e-12)
    # ... which the transposed product (I - W)(I - W)^T does not have for this layout of W
    W = np.zeros((m, m))
    for i in range(m):
        W[i, ind[i]] = w[i]
    wrong = (np.eye(m) - W) @ (np.eye(m) - W).T
    assert np.abs(wrong @ np.ones(m)).max() > 1e-3


def test_M_does_not_depend_on_threads(rng):
    X = rng.standard_normal((300, 3))
    ind = _neighbors(X, 8)
    w, _ = barycenter_weights(X, X, ind, 1e-3, 1)
    w2, _ = barycenter_weights(X, X, ind, 1e-3, 2)
    np.testing.assert_array_equal(w, w2)
    M1 = lle_matrix(w, ind, 1)
    M2 = lle_matrix(w, ind, 2)
    for a in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(M1, a), getattr(M2, a))


# --------------------------------------------------------------------------- embedding


@pytest.mark.parametrize("eigen_solver", ["dense", "arpack"])
def test_embedding_matches_sklearn_on_swiss_roll(eigen_solver):
    from sklearn.manifold import LocallyLinearEmbedding as SkLLE

    X, _ = _swiss_roll(1000)
    sk = SkLLE(n_neighbors=10, n_components=2, reg=1e-3, eigen_solver="dense",
               method="standard").fit(X)
    est = LocallyLinearEmbedding(n_neighbors=10, n_components=2, reg=1e-3,
                                 eigen_solver=eigen_solver, random_state=0).fit(X)
    assert est.embedding_.shape == (1000, 2) and est.n_features_in_ == 3
    assert reference.procrustes_disparity(est.embedding_, sk.embedding_) < 1e-6
    np.testing.assert_allclose(est.reconstruction_error_, sk.reconstruction_error_, rtol=1e-5)
    # orthonormal columns, orthogonal to the constant vector (up to the round-off of
    # separating eigenvalues ~1e-7 from 0 in a matrix of norm ~1e2)
    np.testing.assert_allclose(est.embedding_.T @ est.embedding_, np.eye(2), atol=1e-8)
    np.testing.assert_allclose(est.embedding_.mean(axis=0), 0.0, atol=1e-7)


def test_function_matches_estimator():
    X, _ = _swiss_roll(400)
    Y, err = locally_linear_embedding(X, n_neighbors=8, n_components=2, random_state=0)
    est = LocallyLinearEmbedding(n_neighbors=8, random_state=0).fit(X)
    np.testing.assert_array_equal(Y, est.embedding_)
    assert err == est.reconstruction_error_
    np.testing.assert_array_equal(LocallyLinearEmbedding(
        n_neighbors=8, random_state=0).fit_transform(X), Y)


@pytest.mark.parametrize("eigen_solver", ["dense", "arpack"])
def test_identical_for_one_and_two_threads(eigen_solver):
    X, _ = _swiss_roll(600)
    runs = [LocallyLinearEmbedding(n_neighbors=10, eigen_solver=eigen_solver, random_state=3,
                                   n_jobs=n_jobs).fit(X) for n_jobs in (1, 2)]
    np.testing.assert_array_equal(runs[0].embedding_, runs[1].embedding_)
    assert runs[0].reconstruction_error_ == runs[1].reconstruction_error_
    Q = X[:50] + 0.01
    np.testing.assert_array_equal(runs[0].transform(Q), runs[1].transform(Q))


def test_float32_in_float32_out():
    X, _ = _swiss_roll(500)
    e64 = LocallyLinearEmbedding(n_neighbors=10, random_state=0).fit(X).embedding_
    est = LocallyLinearEmbedding(n_neighbors=10, random_state=0).fit(X.astype(np.float32))
    assert est.embedding_.dtype == np.float32
    assert est.transform(X[:10].astype(np.float32)).dtype == np.float32
    assert reference.procrustes_disparity(est.embedding_, e64) < 1e-4


# --------------------------------------------------------------------------- transform


def test_transform_of_training_points_reproduces_embedding():
    X, _ = _swiss_roll(800)
    est = LocallyLinearEmbedding(n_neighbors=10, random_state=0).fit(X)
    Z = est.transform(X)
    scale = np.abs(est.embedding_).max()
    assert np.abs(Z - est.embedding_).max() < 0.02 * scale
    assert reference.procrustes_disparity(Z, est.embedding_) < 1e-5


def test_transform_new_points_matches_reference(rng):
    X, _ = _swiss_roll(500)
    est = LocallyLinearEmbedding(n_neighbors=9, reg=0.01, random_state=0).fit(X)
    Q = X[rng.choice(500, 60, replace=False)] + 0.05 * rng.standard_normal((60, 3))
    want = reference.lle_transform(Q, X, est.embedding_, 9, 0.01)
    np.testing.assert_allclose(est.transform(Q), want, rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------- robustness


@pytest.mark.parametrize("eigen_solver", ["dense", "arpack"])
def test_duplicate_points_give_a_sensible_embedding(eigen_solver):
    arc, t = _arc(250)
    X = np.vstack([arc, arc])  # every point twice
    est = LocallyLinearEmbedding(n_neighbors=10, n_components=1, eigen_solver=eigen_solver,
                                 random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no disconnected graph, no failed factorisation
        Y = est.fit(X).embedding_
    assert np.isfinite(Y).all()
    # copies get the same coordinate (up to the ends of the arc, where the k-th neighbour
    # may be one copy of a pair but not the other)
    np.testing.assert_allclose(Y[:250], Y[250:], atol=1e-4 * np.abs(Y).max())
    assert _monotone(Y[:250, 0], t) > 0.999


@pytest.mark.parametrize("eigen_solver", ["dense", "arpack"])
def test_more_neighbours_than_dimensions(eigen_solver):
    # a planar spiral: d = 2 < k = 12, so every local Gram matrix is singular before reg
    t = np.linspace(0.5, 3.0, 300)
    X = np.c_[t * np.cos(2 * t), t * np.sin(2 * t)]
    Y = LocallyLinearEmbedding(n_neighbors=12, n_components=1, eigen_solver=eigen_solver,
                               random_state=0).fit(X).embedding_
    assert np.isfinite(Y).all() and _monotone(Y[:, 0], t) > 0.999


@pytest.mark.parametrize("eigen_solver", ["dense", "arpack"])
def test_collinear_neighbours(eigen_solver, rng):
    # all points on one line in 3-D (unevenly spaced): every C has rank 1
    t = np.sort(rng.uniform(0, 5, 300))
    X = np.outer(t, [1.0, 2.0, -0.5]) + 3.0
    Y = LocallyLinearEmbedding(n_neighbors=12, n_components=1, eigen_solver=eigen_solver,
                               random_state=0).fit(X).embedding_
    assert np.isfinite(Y).all() and _monotone(Y[:, 0], t) > 0.999


def test_all_points_identical_with_reg_zero_warns_and_stays_finite():
    X = np.ones((8, 3))
    est = LocallyLinearEmbedding(n_neighbors=4, n_components=2, reg=0.0)
    with pytest.warns(RuntimeWarning, match="local Gram matrices were singular"):
        est.fit(X)
    assert np.isfinite(est.embedding_).all()


def test_disconnected_neighbour_graph_warns(rng):
    X = np.vstack([rng.standard_normal((40, 3)), rng.standard_normal((40, 3)) + 100.0])
    with pytest.warns(RuntimeWarning, match="graph has 2 connected components"):
        Y = LocallyLinearEmbedding(n_neighbors=5).fit(X).embedding_
    assert np.isfinite(Y).all()


def test_shift_invert_falls_back_to_a_shift_when_M_is_exactly_singular():
    # a zero pivot makes SuperLU fail at sigma = 0; the shifted factorisation must succeed
    diag = np.r_[0.0, 0.0, np.arange(1.0, 299.0)]
    A = scipy.sparse.diags(diag, format="csr")
    with pytest.warns(RuntimeWarning, match="could not factor the matrix at 0"):
        values, vectors = symmetric_eigenpairs(A, 3, largest=False, solver="arpack",
                                               random_state=0)
    np.testing.assert_allclose(values, [0.0, 0.0, 1.0], atol=1e-9)
    np.testing.assert_allclose(abs(vectors[2, 2]), 1.0, atol=1e-9)
    np.testing.assert_allclose(vectors[3:, :2], 0.0, atol=1e-9)


# --------------------------------------------------------------------------- errors


def test_too_few_points_for_n_neighbors():
    X = np.random.default_rng(0).standard_normal((10, 3))
    with pytest.raises(ValueError, match=r"n_neighbors=10 must be smaller than the number of "
                                         r"samples, n_samples=10, .* Use n_neighbors <= 9"):
        LocallyLinearEmbedding(n_neighbors=10, n_components=2).fit(X)
    with pytest.raises(ValueError, match="n_samples=1, .* Pass at least 4 samples"):
        LocallyLinearEmbedding(n_neighbors=5, n_components=2).fit(X[:1])


def test_n_components_may_reach_n_neighbors_as_in_sklearn():
    # scikit-learn's standard method accepts n_components >= n_neighbors (fastdr refused it
    # before); only n_components <= n_features is required
    from sklearn.manifold import LocallyLinearEmbedding as SkLLE

    X = np.random.default_rng(0).standard_normal((40, 4))
    SkLLE(n_neighbors=3, n_components=3, eigen_solver="dense").fit(X)
    Y = LocallyLinearEmbedding(n_neighbors=3, n_components=3,
                               eigen_solver="dense").fit_transform(X)
    assert Y.shape == (40, 3) and np.isfinite(Y).all()
    with pytest.raises(ValueError, match="output dimension must be less than or equal to "
                                         "input dimension: n_components=5, but X has 4 "
                                         "features. Use n_components <= 4."):
        LocallyLinearEmbedding(n_neighbors=6, n_components=5).fit(X)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_input_is_rejected(bad):
    X = np.random.default_rng(0).standard_normal((30, 3))
    X[3, 1] = bad
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        LocallyLinearEmbedding().fit(X)
    est = LocallyLinearEmbedding().fit(np.random.default_rng(1).standard_normal((30, 3)))
    with pytest.raises(ValueError, match="X contains NaN or infinity"):
        est.transform(X)


def test_transform_checks_fitted_and_feature_count():
    X = np.random.default_rng(0).standard_normal((30, 3))
    with pytest.raises(fastdr.NotFittedError, match="not fitted yet"):
        LocallyLinearEmbedding().transform(X)
    est = LocallyLinearEmbedding().fit(X)
    with pytest.raises(ValueError, match="X has 2 features, but LocallyLinearEmbedding is "
                                         "expecting 3 features"):
        est.transform(X[:, :2])


@pytest.mark.parametrize("params,error,match", [
    ({"n_neighbors": 2.5}, TypeError, _invalid('n_neighbors',
                                               'an int in the range [1, inf)',
                                               '2.5')),
    ({"n_neighbors": 0}, ValueError, _invalid('n_neighbors', 'an int in the range [1, inf)', '0')),
    ({"n_components": 0}, ValueError, _invalid('n_components',
                                               'an int in the range [1, inf)',
                                               '0')),
    ({"reg": -1.0}, ValueError, _invalid('reg', 'a float in the range [0, inf)', '-1.0')),
    ({"eigen_solver": "lapack"}, ValueError, _invalid('eigen_solver',
                                                      "a str among {'auto', 'arpack', 'dense'}",
                                                      "'lapack'")),
    ({"tol": -1.0}, ValueError, _invalid('tol', 'a float in the range [0, inf)', '-1.0')),
    ({"max_iter": 0}, ValueError, _invalid('max_iter',
                                           'an int in the range [1, inf) or None',
                                           '0')),
    ({"method": "lle"}, ValueError, _invalid('method', "a str among {'standard', 'hessian', "
                                                       "'modified', 'ltsa'}", "'lle'")),
    ({"hessian_tol": -1e-4}, ValueError, _invalid('hessian_tol',
                                                  'a float in the range [0, inf)', '-0.0001')),
    ({"modified_tol": -1.0}, ValueError, _invalid('modified_tol',
                                                  'a float in the range [0, inf)', '-1.0')),
    ({"random_state": "seed"}, ValueError, _invalid('random_state',
                                                    'an int, a numpy RandomState '
                                                    'or Generator, or None',
                                                    "'seed'")),
    ({"n_jobs": 0}, ValueError, _invalid('n_jobs', 'a non-zero int or None', '0')),
])
def test_bad_parameters(params, error, match):
    X = np.random.default_rng(0).standard_normal((30, 3))
    with pytest.raises(error, match=match):
        LocallyLinearEmbedding(**params).fit(X)


def test_bad_input_shapes():
    with pytest.raises(ValueError, match="Expected a 2-D array for X"):
        LocallyLinearEmbedding().fit(np.arange(10.0))
    with pytest.raises(TypeError, match="X is a sparse matrix"):
        LocallyLinearEmbedding().fit(scipy.sparse.random(20, 3, density=0.5, format="csr"))


def test_dense_solver_is_announced_to_the_memory_budget(monkeypatch):
    monkeypatch.setenv("FASTDR_MEMORY_BUDGET", "1K")
    X = np.random.default_rng(0).standard_normal((100, 3))
    with pytest.raises(fastdr.MemoryBudgetError, match="The dense LLE matrix M"):
        LocallyLinearEmbedding(eigen_solver="dense").fit(X)


def test_get_params_and_repr():
    est = LocallyLinearEmbedding(n_neighbors=7, reg=0.1)
    assert est.get_params()["n_neighbors"] == 7
    assert repr(est) == "LocallyLinearEmbedding(n_neighbors=7, reg=0.1)"
