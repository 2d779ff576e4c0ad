import warnings

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse

from fastdr import _eigen
from fastdr._eigen import EigenSolverError, choose_solver, symmetric_eigenpairs
from fastdr._eigen import solvers as _eigen_solvers
from fastdr._eigen.solvers import STREAMING_MAX_COLUMNS, block_product
from fastdr._eigen.values import clip_negative_eigenvalues, fix_signs, n_components_for_ratio
from fastdr._validation.params import check_n_components

SOLVERS = ["dense", "arpack", "lobpcg", "randomized"]


def _symmetric(rng, n, dtype=np.float64):
    B = rng.standard_normal((n, n))
    return (B + B.T).astype(dtype)


def _psd_with_gaps(rng, n):
    """A PSD matrix whose spectrum decays (well separated top and bottom eigenvalues)."""
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    values = 100.0 * 0.8 ** np.arange(n) + np.linspace(0, 1e-3, n)
    return (Q * values) @ Q.T


def _reference(A, k, largest):
    w, V = scipy.linalg.eigh(np.asarray(A, dtype=np.float64))
    if largest:
        return w[::-1][:k], V[:, ::-1][:, :k]
    return w[:k], V[:, :k]


def _assert_pairs(values, vectors, ref_values, ref_vectors, rtol, vtol):
    scale = np.abs(ref_values).max()
    np.testing.assert_allclose(values, ref_values, rtol=0, atol=rtol * scale)
    signs = np.sign(np.sum(vectors * ref_vectors, axis=0))
    np.testing.assert_allclose(vectors, ref_vectors * signs, atol=vtol)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("largest", [True, False])
def test_solvers_match_scipy_eigh(rng, solver, largest):
    A = _psd_with_gaps(rng, 150) if largest else -_psd_with_gaps(rng, 150)
    values, vectors = symmetric_eigenpairs(A, 4, largest=largest, solver=solver,
                                           random_state=0)
    ref_values, ref_vectors = _reference(A, 4, largest)
    vtol = 1e-6 if solver == "lobpcg" else 1e-9
    _assert_pairs(values, vectors, ref_values, ref_vectors, 1e-10, vtol)
    np.testing.assert_allclose(vectors.T @ vectors, np.eye(4), atol=1e-8)


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k", [1, 3, 12])
def test_randomized_on_indefinite_matrix_finds_algebraic_ends(rng, largest, k):
    A = _symmetric(rng, 90)
    values, vectors = symmetric_eigenpairs(A, k, largest=largest, solver="randomized",
                                           random_state=1)
    ref_values, ref_vectors = _reference(A, k, largest)
    _assert_pairs(values, vectors, ref_values, ref_vectors, 1e-12, 1e-7)


def test_randomized_with_large_negative_eigenvalues_still_returns_the_top(rng):
    Q = np.linalg.qr(rng.standard_normal((300, 300)))[0]
    values = np.concatenate([[5.0, 4.0], -np.linspace(50, 40, 40), np.zeros(258)])
    A = (Q * values) @ Q.T
    got, vectors = symmetric_eigenpairs(A, 2, solver="randomized", random_state=0)
    np.testing.assert_allclose(got, [5.0, 4.0], atol=1e-9)
    _assert_pairs(got, vectors, *_reference(A, 2, True), 1e-10, 1e-8)


def test_randomized_on_low_rank_and_tiny_matrices(rng):
    L = rng.standard_normal((120, 3))
    A = L @ L.T
    values, vectors = symmetric_eigenpairs(A, 3, solver="randomized", random_state=0)
    _assert_pairs(values, vectors, *_reference(A, 3, True), 1e-12, 1e-9)
    small = _symmetric(rng, 9)
    values, vectors = symmetric_eigenpairs(small, 8, largest=False, solver="randomized",
                                           random_state=0)
    _assert_pairs(values, vectors, *_reference(small, 8, False), 1e-12, 1e-9)


def test_float32_stays_float32(rng):
    A = _psd_with_gaps(rng, 80).astype(np.float32)
    for solver in ("dense", "randomized"):
        values, vectors = symmetric_eigenpairs(A, 3, solver=solver, random_state=0)
        assert vectors.dtype == np.float32
        _assert_pairs(values, vectors, *_reference(A, 3, True), 1e-5, 1e-3)


def test_sparse_bottom_pairs_with_arpack_and_dense(rng):
    n = 300
    main = 2.0 + rng.random(n)
    L = scipy.sparse.diags([-np.ones(n - 1), main, -np.ones(n - 1)], [-1, 0, 1], format="csr")
    ref = _reference(L.toarray(), 3, False)
    for solver in ("arpack", "dense", "auto"):
        values, vectors = symmetric_eigenpairs(L, 3, largest=False, solver=solver,
                                               random_state=0)
        _assert_pairs(values, vectors, *ref, 1e-10, 1e-8)


def test_auto_uses_the_block_solver_on_big_dense_matrices(rng, monkeypatch):
    monkeypatch.setattr(_eigen, "ARPACK_MAX_N", 100)  # keep the test matrix small
    A = _psd_with_gaps(rng, 250)
    assert choose_solver(250, 3, sparse=False) == "randomized"
    values, vectors = symmetric_eigenpairs(A, 3, solver="auto", random_state=0)
    _assert_pairs(values, vectors, *_reference(A, 3, True), 1e-12, 1e-9)


def test_auto_falls_back_to_arpack_when_the_block_solver_stalls(rng, monkeypatch):
    monkeypatch.setattr(_eigen, "AUTO_RANDOMIZED_MAX_ITER", 1)
    monkeypatch.setattr(_eigen, "ARPACK_MAX_N", 100)
    A = _symmetric(rng, 250)
    values, vectors = symmetric_eigenpairs(A, 2, solver="auto", random_state=0)
    _assert_pairs(values, vectors, *_reference(A, 2, True), 1e-12, 1e-8)


def test_auto_arpack_falls_back_to_lapack_when_it_does_not_converge(rng, monkeypatch):
    A = _psd_with_gaps(rng, 250)
    assert choose_solver(250, 3, sparse=False) == "arpack"
    calls = []
    real = _eigen.dense_pairs
    monkeypatch.setattr(_eigen, "dense_pairs", lambda *a: calls.append(1) or real(*a))
    # one Arnoldi iteration cannot converge
    values, vectors = symmetric_eigenpairs(A, 3, solver="auto", max_iter=1, random_state=0)
    assert calls
    _assert_pairs(values, vectors, *_reference(A, 3, True), 1e-12, 1e-9)
    # the fallback's n x n work copy is announced to the memory budget first
    from fastdr.exceptions import MemoryBudgetError

    monkeypatch.setenv("FASTDR_MEMORY_BUDGET", "1000")
    with pytest.raises(MemoryBudgetError, match="ARPACK did not converge"):
        symmetric_eigenpairs(A, 3, solver="auto", max_iter=1, random_state=0)


@pytest.mark.parametrize(
    "n, k, sparse, expected",
    [(200, 2, False, "dense"), (201, 2, False, "arpack"), (2000, 2, False, "arpack"),
     (2001, 2, False, "randomized"), (1000, 101, False, "dense"), (5000, 600, False, "dense"),
     (200, 2, True, "dense"), (201, 2, True, "arpack"), (5000, 600, True, "dense")],
)
def test_auto_rule(n, k, sparse, expected):
    assert choose_solver(n, k, sparse=sparse) == expected


def test_same_random_state_same_result(rng):
    A = _psd_with_gaps(rng, 80)
    for solver in ("arpack", "randomized", "lobpcg"):
        a = symmetric_eigenpairs(A, 3, solver=solver, random_state=7)
        b = symmetric_eigenpairs(A, 3, solver=solver, random_state=7)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])


def test_signs_are_fixed_on_the_largest_magnitude_entry(rng):
    A = _symmetric(rng, 60)
    _, vectors = symmetric_eigenpairs(A, 5, solver="dense")
    rows = np.argmax(np.abs(vectors), axis=0)
    assert (vectors[rows, np.arange(5)] > 0).all()
    flipped = fix_signs(-vectors.copy())
    np.testing.assert_array_equal(flipped, vectors)
    zero = fix_signs(np.zeros((4, 2)))
    np.testing.assert_array_equal(zero, np.zeros((4, 2)))
    assert fix_signs(np.zeros((4, 0))).shape == (4, 0)


def test_overwrite_a_only_when_asked(rng):
    A = _symmetric(rng, 50)
    before = A.copy()
    kept = symmetric_eigenpairs(A, 3, solver="dense")
    np.testing.assert_array_equal(A, before)
    destroyed = symmetric_eigenpairs(A, 3, solver="dense", overwrite_a=True)
    np.testing.assert_allclose(destroyed[0], kept[0], rtol=1e-13)


def test_clip_negative_eigenvalues_is_silent_on_round_off():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = clip_negative_eigenvalues(np.array([5.0, 1.0, -1e-12]), what="B")
    np.testing.assert_array_equal(out, [5.0, 1.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = clip_negative_eigenvalues(np.array([5.0, -1e-5], dtype=np.float32), what="B")
    np.testing.assert_array_equal(out, [5.0, 0.0])


def test_clip_negative_eigenvalues_warns_naming_the_large_ones():
    with pytest.warns(RuntimeWarning, match=r"B has 2 negative eigenvalue\(s\) that are not "
                      r"round-off \(#2 = -0.5, #3 = -2\b"):
        out = clip_negative_eigenvalues(np.array([5.0, 1.0, -0.5, -2.0, -1e-14]), what="B")
    np.testing.assert_array_equal(out, [5.0, 1.0, 0.0, 0.0, 0.0])


def test_solver_failures_name_another_solver(rng, monkeypatch):
    A = _symmetric(rng, 200)
    with pytest.raises(EigenSolverError,
                       match=r"eigen_solver='arpack' failed .*Try eigen_solver='dense'"):
        symmetric_eigenpairs(A, 3, solver="arpack", max_iter=1, random_state=0)
    with pytest.raises(EigenSolverError, match=r"eigen_solver='randomized' failed .*did not "
                       r"converge in 1 passes.*Try eigen_solver='dense'"):
        symmetric_eigenpairs(A, 3, solver="randomized", max_iter=1, random_state=0)
    with pytest.raises(EigenSolverError,
                       match=r"eigen_solver='lobpcg' failed .*Try eigen_solver='dense'"):
        symmetric_eigenpairs(A, 3, solver="lobpcg", max_iter=1, random_state=0)

    def broken(*args, **kwargs):
        raise np.linalg.LinAlgError("the algorithm failed to converge")

    monkeypatch.setattr(scipy.linalg, "eigh", broken)
    with pytest.raises(EigenSolverError,
                       match=r"eigen_solver='dense' failed .*Try eigen_solver='arpack'\."):
        symmetric_eigenpairs(A, 3, solver="dense")


def test_bad_arguments(rng):
    A = _symmetric(rng, 10)
    with pytest.raises(ValueError, match="eigen_solver must be one of 'auto', 'dense'"):
        symmetric_eigenpairs(A, 2, solver="svd")
    with pytest.raises(ValueError, match="between 1 and the matrix size 10; got 11"):
        symmetric_eigenpairs(A, 11)
    with pytest.raises(ValueError, match=r"square matrix, got shape \(10, 9\)"):
        symmetric_eigenpairs(A[:, :9], 2)


def test_check_n_components_messages():
    assert check_n_components(3, 5, estimator="PCA", limit="min(m, d)") == 3
    assert check_n_components(0.5, 5, estimator="PCA", limit="min(m, d)") == 0.5
    assert check_n_components(1.0, 5, estimator="PCA", limit="min(m, d)") == 1.0
    assert check_n_components(None, 5, estimator="PCA", limit="min(m, d)") is None
    with pytest.raises(ValueError, match=r"n_components=6 is larger than allowed: PCA can "
                       r"return at most min\(m, d\) = 5 components"):
        check_n_components(6, 5, estimator="PCA", limit="min(m, d)")
    for bad in (0.0, 1.5, -0.2):
        with pytest.raises(ValueError, match=r"must lie in \(0, 1\]"):
            check_n_components(bad, 5, estimator="PCA", limit="x")
    with pytest.raises(ValueError, match="n_components must be >= 1; got 0"):
        check_n_components(0, 5, estimator="PCA", limit="x")
    with pytest.raises(TypeError, match="n_components must be an int"):
        check_n_components(True, 5, estimator="PCA", limit="x")
    with pytest.raises(TypeError, match="n_components must be an int"):
        check_n_components("2", 5, estimator="PCA", limit="x")
    with pytest.raises(TypeError, match="got None"):
        check_n_components(None, 5, estimator="PCA", limit="x", allow_none=False)


def test_ratio_rule_is_the_textbook_greater_or_equal():
    values = np.array([3.0, 1.0, 0.0])
    assert n_components_for_ratio(values, 0.75) == 1  # scikit-learn's strict ">" gives 2
    assert n_components_for_ratio(values, 0.7500001) == 2
    assert n_components_for_ratio(values, 1.0) == 2
    # round-off eigenvalues past the rank, and negative ones, do not count
    assert n_components_for_ratio(np.array([2.0, 1.0, 3e-16, -1e-15]), 1.0) == 2
    assert n_components_for_ratio(np.array([0.0, 0.0]), 0.5) == 1


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize("b", [1, 3, 4, 7, STREAMING_MAX_COLUMNS, STREAMING_MAX_COLUMNS + 1])
def test_block_product_matches_numpy(rng, dtype, rtol, b, monkeypatch):
    monkeypatch.setattr(_eigen_solvers, "STREAMING_MIN_ROWS", 50)  # the kernel, on 83 rows
    A = rng.standard_normal((83, 61)).astype(dtype)
    Q = rng.standard_normal((61, b)).astype(dtype)
    got = block_product(A, Q)
    assert got.dtype == dtype and got.shape == (83, b)
    np.testing.assert_allclose(got, A.astype(np.float64) @ Q.astype(np.float64), rtol=rtol,
                               atol=rtol * 10)
    np.testing.assert_array_equal(block_product(A, Q, n_jobs=1), got)


@pytest.mark.parametrize("m,b", [(1, 1), (3, 2), (4, 1), (9, 4), (70, 5), (131, 17)])
def test_upper_triangle_product_matches_numpy_and_ignores_the_lower_triangle(rng, m, b):
    A = rng.standard_normal((m, m))
    A = A + A.T
    stored = A.copy()
    stored[np.tril_indices(m, -1)] = np.nan  # never read
    Q = rng.standard_normal((m, b))
    got = block_product(stored, Q, upper=True)
    np.testing.assert_allclose(got, A @ Q, rtol=1e-12, atol=1e-12 * np.abs(A).sum(1).max())
    np.testing.assert_array_equal(block_product(stored, Q, n_jobs=1, upper=True), got)


def test_iterative_solvers_asked_for_every_pair_use_dense(rng):
    A = _symmetric(rng, 12)
    for solver in ("arpack", "lobpcg"):
        values, vectors = symmetric_eigenpairs(A, 12, solver=solver)
        _assert_pairs(values, vectors, *_reference(A, 12, True), 1e-12, 1e-9)


def test_new_block_replaces_directions_already_in_the_basis(rng):
    basis = np.linalg.qr(rng.standard_normal((40, 5)))[0]
    residual = basis[:, :3] * 2.0  # nothing new: every column lies in the basis
    block = _eigen_solvers._new_block(residual, basis, np.random.RandomState(0))
    assert block.shape == (40, 3)
    np.testing.assert_allclose(block.T @ block, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(basis.T @ block, 0.0, atol=1e-12)


def test_reads_upper_triangle_only_for_thin_iterative_solves():
    from fastdr._eigen import reads_upper_triangle

    assert not reads_upper_triangle("dense", 5000, 2)
    assert not reads_upper_triangle("auto", 200, 2)  # auto picks LAPACK up to n = 200
    # ARPACK above, but on a matrix that fits in cache through BLAS on the mirrored matrix
    assert not reads_upper_triangle("auto", 500, 2)
    assert not reads_upper_triangle("arpack", 2000, 2)
    assert reads_upper_triangle("arpack", 2001, 2)
    assert reads_upper_triangle("auto", 5000, 2)
    assert reads_upper_triangle("randomized", 5000, 10, extra_columns=1)  # 10 + 5 + 1
    assert not reads_upper_triangle("randomized", 5000, 11, extra_columns=1)  # 11 + 5 + 1
    assert not reads_upper_triangle("arpack", 50, 50)  # every pair: dense


def test_spectral_pairs_refuses_a_non_finite_matrix_naming_it():
    from fastdr._eigen import spectral_pairs

    A = np.eye(4)
    A[1, 2] = A[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"The test matrix has non-finite entries.*do this"):
        spectral_pairs(A, 2, what="The test matrix", remedy="do this")
    with pytest.raises(ValueError, match="The test matrix has non-finite entries"):
        spectral_pairs(scipy.sparse.csr_matrix(A), 2, what="The test matrix")


def test_spectral_pairs_never_returns_fewer_pairs_than_asked(monkeypatch):
    from fastdr import _eigen

    def short(A, k, largest, overwrite_a):
        values, vectors = np.linalg.eigh(A)
        return values[-1:], vectors[:, -1:]

    monkeypatch.setattr(_eigen, "dense_pairs", short)
    with pytest.raises(ValueError, match=r"returned 1 pair\(s\) of the test matrix, not the 3"):
        _eigen.spectral_pairs(np.eye(5), 3, solver="dense", what="The test matrix")


def test_spectral_pairs_cleans_and_selects(rng):
    from fastdr._eigen import spectral_pairs

    V = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    spectrum = np.array([4.0, 2.0, 1.0, 1e-17, -1e-17, -0.5])
    A = (V * spectrum) @ V.T
    with pytest.warns(RuntimeWarning, match="1 negative eigenvalue"):
        values, vectors = spectral_pairs(A, None, what="A", psd=True, zero_roundoff=True)
    np.testing.assert_allclose(values, [4, 2, 1, 0, 0, 0], atol=1e-12)
    np.testing.assert_array_equal(values[3:], 0.0)  # zeroed and clipped, not round-off
    assert vectors.shape == (6, 6)
    rows = np.argmax(np.abs(vectors), axis=0)
    assert (vectors[rows, np.arange(6)] > 0).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert spectral_pairs(A, 0.8, what="A", psd=True)[0].shape == (2,)  # 6/7 >= 0.8
        assert spectral_pairs(A, "nonzero", what="A", psd=True,
                              zero_roundoff=True)[0].shape == (3,)
        assert spectral_pairs(A, 0.99, what="A", psd=True, max_components=2)[0].shape == (2,)
        assert spectral_pairs(A, 2, what="A", psd=True)[0].shape == (2,)


def test_plan_solve_announces_the_work_copy_and_the_eigenvectors(monkeypatch):
    from fastdr._eigen import plan_solve
    from fastdr.exceptions import MemoryBudgetError

    monkeypatch.setenv("FASTDR_MEMORY_BUDGET", "1K")
    with pytest.raises(MemoryBudgetError, match=r"LAPACK's work copy of the test matrix "
                                                 r"\(eigen_solver='dense'\) needs 3,200"):
        plan_solve(20, 2, solver="dense", what="The test matrix")
    with pytest.raises(MemoryBudgetError,
                       match=r"The 20 x 20 eigenvectors of the test matrix needs"):
        plan_solve(20, 20, solver="dense", overwrite_a=True, what="The test matrix")
    monkeypatch.setenv("FASTDR_MEMORY_BUDGET", "400")  # no copy for arpack; 20 x 2 fits
    assert plan_solve(20, 1, solver="arpack", what="The test matrix") == "arpack"


@pytest.mark.parametrize("overwrite_a", [False, True])
@pytest.mark.parametrize("largest", [True, False])
def test_dense_pairs_on_exactly_repeated_eigenvalues(overwrite_a, largest):
    # LAPACK's subset solve returns no pairs for I - 11^T/n with some OpenBLAS builds (the
    # centred rbf kernel of far-apart points); the dense solver must still return k pairs
    from fastdr._eigen.solvers import dense_pairs

    n, k = 90, 2
    A = np.eye(n) - 1.0 / n
    values, vectors = dense_pairs(A.copy(order="F"), k, largest, overwrite_a)
    assert values.shape == (k,) and vectors.shape == (n, k)
    expected = [1.0, 1.0] if largest else [0.0, 1.0]
    np.testing.assert_allclose(values, expected, atol=1e-12)
    B = np.eye(n) - 1.0 / n
    np.testing.assert_allclose(B @ vectors, vectors * values, atol=1e-12)
    np.testing.assert_allclose(vectors.T @ vectors, np.eye(k), atol=1e-12)


@pytest.mark.parametrize("k, pinned", [(2, True), (20, False)])
def test_block_solver_keeps_its_own_blas_on_one_thread_for_thin_blocks(rng, monkeypatch, k,
                                                                       pinned):
    # a thin block's products are numba kernels: a multi-threaded BLAS call between them would
    # leave OpenBLAS workers spinning into the next one; a wide block's products are BLAS
    import contextlib

    from fastdr._runtime import blas as _blas

    entered = []
    real = _blas.single_threaded_blas

    @contextlib.contextmanager
    def spy():
        with real():
            entered.append(True)
            yield

    monkeypatch.setattr(_eigen_solvers, "single_threaded_blas", spy)
    A = _psd_with_gaps(rng, 300)
    values, _ = _eigen_solvers.block_krylov_pairs(A, k, True, 0.0, 200,
                                                  np.random.RandomState(0), None)
    np.testing.assert_allclose(values, _reference(A, k, True)[0], rtol=1e-9)
    assert bool(entered) is pinned
