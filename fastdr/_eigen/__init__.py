"""One place that computes the top or bottom eigenpairs of a symmetric matrix.

The solvers are described in :mod:`fastdr._eigen.solvers`.

Rule of ``solver="auto"``
-------------------------
* a matrix with ``n <= 200``, or any matrix when more than 10% of the spectrum is wanted:
  ``"dense"`` (LAPACK is fastest there and exact);
* a sparse matrix with ``n > 200``: ``"arpack"``;
* a dense matrix with ``200 < n <= 2000``: ``"arpack"`` (if it does not converge, LAPACK
  takes over). LAPACK's tridiagonal reduction costs ``4/3 n^3`` whatever the few pairs
  wanted, while ARPACK reads the matrix only a few dozen times (bench: kernel_pca,
  classical_mds);
* a larger dense matrix: ``"randomized"`` with at most 100 passes; if it has not converged
  by then, ``"arpack"`` takes over. There it reads the matrix fewer times than ARPACK.

Results: eigenvalues sorted (descending for ``largest=True``, ascending otherwise), each
eigenvector's sign fixed so that its entry of largest magnitude is positive (scikit-learn's
``svd_flip`` convention). A solver failure is re-raised as :class:`fastdr.EigenSolverError`,
whose message names another ``eigen_solver`` to try.

The pipeline
------------
:func:`spectral_pairs` is the one entry point of the estimators (PCA, KernelPCA,
ClassicalMDS, Isomap, LLE, LDA, the metric learners). In order it: resolves the solver
(:func:`plan_solve`: the ``"auto"`` rule, and the memory check of LAPACK's work copy and of
the eigenvectors), solves (:func:`symmetric_eigenpairs`: sorted pairs, deterministic signs,
solver fallback), refuses a non-finite or short result with a ValueError naming the remedy,
clips negative eigenvalues (warning when they are not round-off), zeroes round-off
eigenvalues, and picks ``n_components`` (an int, a variance ratio, or every non-zero pair).
:func:`reads_upper_triangle` answers whether a solve through a symmetric operator may read
only the upper triangle of its matrix.
"""

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg

from .._config import EIGEN_ARPACK_MAX_N as ARPACK_MAX_N
from .._config import EIGEN_AUTO_RANDOMIZED_MAX_ITER as AUTO_RANDOMIZED_MAX_ITER
from .._config import EIGEN_DENSE_FRACTION as DENSE_FRACTION
from .._config import EIGEN_DENSE_MAX_N as DENSE_MAX_N
from .._config import EIGEN_RANDOMIZED_MAX_ITER as RANDOMIZED_MAX_ITER
from .._config import EIGEN_SPARSE_DENSE_MAX_N as SPARSE_DENSE_MAX_N
from .._config import FINITE_CHECK_BLOCK_ELEMENTS
from .._runtime.blas import caller_blas_threads
from .._validation.budget import check_dense_allocation
from .._validation.params import check_option, check_random_state
from ..exceptions import EigenSolverError
from .solvers import (
    STREAMING_MAX_COLUMNS,
    STREAMING_MIN_ROWS,
    arpack_pairs,
    block_krylov_pairs,
    dense_pairs,
    generalized_pairs,
    lobpcg_pairs,
    randomized_block_width,
)
from .values import clip_negative_eigenvalues, fix_signs, select_count, zero_roundoff_eigenvalues

SOLVERS = ("auto", "dense", "arpack", "lobpcg", "randomized")


def choose_solver(n, n_components, *, sparse):
    """Return the solver ``"auto"`` picks for an n x n matrix and k wanted pairs.

    See the module docstring for the rule.
    """
    if n_components > DENSE_FRACTION * n:
        return "dense"
    if sparse:
        return "dense" if n <= SPARSE_DENSE_MAX_N else "arpack"
    if n <= DENSE_MAX_N:
        return "dense"
    return "arpack" if n <= ARPACK_MAX_N else "randomized"


def resolve_solver(solver, n, n_components, *, sparse):
    """The solver a solve of k = ``n_components`` pairs of an n x n matrix will run.

    ``"auto"`` follows :func:`choose_solver`; ARPACK and LOBPCG cannot return every pair, so
    ``n_components >= n`` runs ``"dense"``.
    """
    check_option(solver, "eigen_solver", SOLVERS)
    if solver == "auto":
        solver = choose_solver(n, n_components, sparse=sparse)
    if solver in ("arpack", "lobpcg") and n_components >= n:
        solver = "dense"
    return solver


def reads_upper_triangle(solver, n, n_components, *, extra_columns=0, n_oversamples=None):
    """Will this solve, through an operator on a symmetric n x n array, read only its upper
    triangle?

    True when the resolved solver is iterative, n exceeds :data:`STREAMING_MIN_ROWS` and its
    widest block (the randomized block, plus ``extra_columns`` the operator adds) fits the
    streaming kernel (:data:`STREAMING_MAX_COLUMNS`): the product then goes through
    :func:`fastdr._kernels.spectral.block_product.upper_times_block`, and the caller need
    not fill in (mirror) the lower triangle. The dense solver reads the whole matrix.
    """
    if resolve_solver(solver, n, n_components, sparse=False) == "dense":
        return False
    if n <= STREAMING_MIN_ROWS:  # BLAS on the mirrored matrix is faster (see the constant)
        return False
    width = randomized_block_width(n_components, n_oversamples) + extra_columns
    return width <= STREAMING_MAX_COLUMNS


def plan_solve(n, n_components, *, solver="auto", sparse=False, dtype=np.float64,
               overwrite_a=False, what="The matrix", work_copy_what=None):
    """Resolve the solver and check its memory against the budget; return the solver.

    Estimators may call this early (before the costly work that builds the matrix) so that
    a solve that cannot fit fails first; :func:`spectral_pairs` calls it again.

    Parameters
    ----------
    n : int
        Matrix size.
    n_components : int
        Pairs to compute (n for the whole spectrum).
    solver : str
    sparse : bool
        The matrix is scipy sparse (the dense solver then makes a float64 dense copy).
    dtype : dtype
        The matrix's dtype.
    overwrite_a : bool
        The dense solver may destroy the (dense) matrix: no work copy.
    what : str
        The matrix's name, for messages.
    work_copy_what : str or None
        The name of the dense work copy in the memory message (default: LAPACK's work copy
        of ``what``).

    Returns
    -------
    str
        The resolved solver.

    Raises
    ------
    fastdr.MemoryBudgetError
        When the dense work copy or the eigenvectors do not fit in the budget.
    """
    solver = resolve_solver(solver, n, n_components, sparse=sparse)
    if solver == "dense" and (sparse or not overwrite_a):
        copy_dtype = np.float64 if sparse else dtype
        name = work_copy_what or f"LAPACK's work copy of {_lower_article(what)}"
        check_dense_allocation(
            (n, n), copy_dtype, what=f"{name} (eigen_solver='dense')",
            alternative="Use eigen_solver='arpack' or 'randomized', which need no copy.")
    check_dense_allocation(
        (n, n_components), dtype,
        what=f"The {n} x {n_components} eigenvectors of {_lower_article(what)}",
        alternative="Ask for fewer components (an int n_components).")
    return solver


def _lower_article(what):
    return "the" + what[3:] if what.startswith("The ") else what


# scipy's BLAS at the caller's thread count whatever other threads launch (see _blas.py)
@caller_blas_threads()
def symmetric_eigenpairs(
    A,
    n_components,
    *,
    largest=True,
    solver="auto",
    tol=0.0,
    max_iter=None,
    random_state=None,
    n_oversamples=None,
    overwrite_a=False,
    n_jobs=None,
    start=None,
):
    """Top (or bottom) ``n_components`` eigenpairs of the symmetric matrix ``A``.

    Parameters
    ----------
    A : ndarray, scipy sparse matrix or LinearOperator of shape (n, n)
        Symmetric, float32 or float64 (float32 stays float32 for the dense and block solvers).
        A LinearOperator needs an iterative solver (name one; ``"auto"`` may pick
        ``"dense"`` for small n).
    n_components : int
        Number of pairs, 1 <= n_components <= n.
    largest : bool, default=True
        Largest algebraic eigenvalues when True, smallest otherwise.
    solver : {"auto", "dense", "arpack", "lobpcg", "randomized"}, default="auto"
        See the module docstring for the ``"auto"`` rule.
    tol : float, default=0.0
        Convergence tolerance of the iterative solvers. 0 means machine precision for ARPACK,
        scipy's default for LOBPCG, and a relative residual of 1e-10 (1e-5 for float32) for
        ``"randomized"``.
    max_iter : int or None
        Iteration cap of the iterative solvers (``"randomized"``: products with ``A``,
        default 1000).
    random_state : int, RandomState, Generator or None
        Seeds the starting vector (ARPACK, LOBPCG) or the starting block (randomized).
    n_oversamples : int or None
        Extra columns of the randomized block; None means ``max(1, n_components // 2)``.
    overwrite_a : bool, default=False
        Let the dense solver destroy ``A`` instead of taking an n x n work copy.
    n_jobs : int or None
        Threads of the streaming products of ``"randomized"`` (BLAS and LAPACK keep their
        own thread settings).
    start : ndarray of shape (n, j) or None
        A guess of the wanted eigenvectors, for the first block of ``"randomized"`` (random
        columns fill it up); a good guess saves passes over A. The other solvers ignore it.

    Returns
    -------
    values : ndarray of shape (n_components,)
        Sorted descending (``largest``) or ascending.
    vectors : ndarray of shape (n, n_components)
        Orthonormal eigenvectors with fixed signs.

    Raises
    ------
    EigenSolverError
        When the solver fails; the message suggests another ``eigen_solver``.
    """
    check_option(solver, "eigen_solver", SOLVERS)
    n = A.shape[0]
    if A.ndim != 2 or A.shape[1] != n:
        raise ValueError(f"A must be a square matrix, got shape {A.shape}.")
    if not 1 <= n_components <= n:
        raise ValueError(
            f"n_components must be between 1 and the matrix size {n}; got {n_components}."
        )
    sparse = scipy.sparse.issparse(A)
    auto = solver == "auto"
    if auto:
        solver = choose_solver(n, n_components, sparse=sparse)
    if solver in ("arpack", "lobpcg") and n_components >= n:
        solver = "dense"
    # None seeds a RandomState from the OS (a system call): not for LAPACK, which draws
    # nothing
    dense_unseeded = solver == "dense" and random_state is None
    rng = None if dense_unseeded else check_random_state(random_state)
    try:
        if solver == "dense":
            values, vectors = dense_pairs(A, n_components, largest, overwrite_a)
        elif solver == "arpack" and auto and not sparse:
            try:
                values, vectors = arpack_pairs(A, n_components, largest, tol, max_iter, rng,
                                               sparse)
            except scipy.sparse.linalg.ArpackNoConvergence:
                if isinstance(A, np.ndarray):  # at most 2000 x 2000: LAPACK takes over
                    solver = "dense"
                    if not overwrite_a:  # its work copy is announced like any n x n array
                        check_dense_allocation(
                            (n, n), A.dtype,
                            what="LAPACK's work copy of the matrix (ARPACK did not converge)",
                            alternative="Raise max_iter or tol, or pass "
                                        "eigen_solver='randomized'.")
                    values, vectors = dense_pairs(A, n_components, largest, overwrite_a)
                else:  # an operator (an upper triangle, say): the block solver
                    solver = "randomized"
                    values, vectors = block_krylov_pairs(
                        A, n_components, largest, tol, RANDOMIZED_MAX_ITER, rng,
                        n_oversamples, n_jobs, start)
        elif solver == "arpack":
            values, vectors = arpack_pairs(A, n_components, largest, tol, max_iter, rng, sparse)
        elif solver == "lobpcg":
            values, vectors = lobpcg_pairs(A, n_components, largest, tol, max_iter, rng)
        elif auto:
            try:
                values, vectors = block_krylov_pairs(
                    A, n_components, largest, tol, AUTO_RANDOMIZED_MAX_ITER, rng,
                    n_oversamples, n_jobs, start)
            except EigenSolverError:
                solver = "arpack"
                values, vectors = arpack_pairs(A, n_components, largest, tol, max_iter, rng,
                                          sparse)
        else:
            values, vectors = block_krylov_pairs(
                A, n_components, largest, tol, max_iter or RANDOMIZED_MAX_ITER, rng,
                n_oversamples, n_jobs, start)
    except (EigenSolverError, scipy.sparse.linalg.ArpackError, np.linalg.LinAlgError,
            scipy.linalg.LinAlgError, RuntimeError) as exc:
        other = "dense" if solver != "dense" else "arpack"
        hint = " (or raise max_iter / tol)." if solver != "dense" else "."
        raise EigenSolverError(
            f"eigen_solver={solver!r} failed on a {n} x {n} matrix: {exc} "
            f"Try eigen_solver={other!r}{hint}"
        ) from exc
    order = np.argsort(-values if largest else values, kind="stable")
    values = np.ascontiguousarray(values[order])
    vectors = np.ascontiguousarray(vectors[:, order])
    return values, fix_signs(vectors)


#: Default remedy of a non-finite matrix or spectrum.
NONFINITE_REMEDY = ("The input is too large (or too small) for its dtype: scale it first "
                    "(for example with sklearn.preprocessing.StandardScaler), or pass float64.")


def check_finite_matrix(A, what, remedy=NONFINITE_REMEDY):
    """Raise a ValueError naming ``what`` and ``remedy`` unless the ndarray A is finite.

    Scans row blocks of ``FINITE_CHECK_BLOCK_ELEMENTS``, so no m x m temporary is made. O(size).
    """
    rows = max(1, FINITE_CHECK_BLOCK_ELEMENTS // max(1, A.shape[1] if A.ndim == 2 else 1))
    for start in range(0, A.shape[0], rows):
        if not np.isfinite(A[start:start + rows]).all():
            raise ValueError(f"{what} has non-finite entries (inf or NaN). {remedy}")


def check_finite_row_means(row_means, what, remedy=NONFINITE_REMEDY):
    """Raise unless the row means of a matrix are finite (then so is every entry, unless a
    row sum overflows, which is as fatal). The O(m) check of the centring paths."""
    if not np.isfinite(row_means).all():
        bad = int(np.flatnonzero(~np.isfinite(row_means))[0])
        raise ValueError(
            f"{what} has non-finite entries (inf or NaN; first in row {bad}). {remedy}")


@caller_blas_threads()
def spectral_pairs(A, n_components, *, largest=True, solver="auto", what="The matrix",
                   psd=False, zero_roundoff=False, max_components=None, metric=None,
                   finite_checked=False, remedy=NONFINITE_REMEDY, work_copy_what=None,
                   tol=0.0, max_iter=None, random_state=None, n_oversamples=None,
                   overwrite_a=False, n_jobs=None, start=None):
    """The eigen pipeline of every spectral estimator: solve, check, clean, select.

    Parameters
    ----------
    A : ndarray, scipy sparse matrix or LinearOperator of shape (n, n)
        Symmetric.
    n_components : int, float, "nonzero" or None
        An int: that many pairs. A float t in (0, 1]: the smallest k whose cumulative share
        of the (clipped) eigenvalues is >= t (:func:`n_components_for_ratio`). ``"nonzero"``:
        every pair whose eigenvalue is above ``ZERO_EIGENVALUE_RATIO`` times the largest (at
        least one). None: every pair. All but an int solve the whole spectrum (dense).
    largest : bool, default=True
        Top pairs (descending) or bottom pairs (ascending).
    solver : str, default="auto"
        See :func:`resolve_solver`.
    what : str
        The matrix's name, for messages and the negative-eigenvalue warning.
    psd : bool, default=False
        The matrix is positive semidefinite in exact arithmetic: negative eigenvalues are
        clipped to 0, with a warning when they are not round-off
        (:func:`clip_negative_eigenvalues`).
    zero_roundoff : bool, default=False
        Set eigenvalues that are zero to round-off to exactly 0
        (:func:`zero_roundoff_eigenvalues`).
    max_components : int or None
        Cap of a ratio-chosen k.
    metric : ndarray or None
        B of the generalized problem ``A v = lambda B v`` (dense LAPACK only; B symmetric
        positive definite; vectors normalised so that ``V^T B V = I``).
    finite_checked : bool, default=False
        The caller has checked that the matrix is finite; otherwise a dense ndarray is
        scanned (:func:`check_finite_matrix`) before the solve.
    remedy : str
        What to do when the matrix or its spectrum is not finite.
    work_copy_what : str or None
        See :func:`plan_solve`.
    tol, max_iter, random_state, n_oversamples, overwrite_a, n_jobs, start : optional
        Passed to :func:`symmetric_eigenpairs`.

    Returns
    -------
    values : ndarray of shape (k,), float64
        Sorted; clipped and zeroed as asked.
    vectors : ndarray of shape (n, k)
        Orthonormal (B-orthonormal with ``metric``), C-contiguous; each column's
        largest-magnitude entry is positive.

    Raises
    ------
    ValueError
        When the matrix or the computed spectrum is not finite, or the solver returned fewer
        pairs than asked for (never a silently shorter result).
    fastdr.MemoryBudgetError, EigenSolverError
    """
    n = A.shape[0]
    whole = not isinstance(n_components, (int, np.integer)) or isinstance(n_components, bool)
    k = n if whole else int(n_components)
    if whole:
        solver = "dense"
    sparse = scipy.sparse.issparse(A)
    dtype = np.float64 if sparse else A.dtype
    if metric is not None:
        solver = "dense"
    solver = plan_solve(n, k, solver=solver, sparse=sparse, dtype=dtype,
                        overwrite_a=overwrite_a, what=what, work_copy_what=work_copy_what)
    if not finite_checked:
        if isinstance(A, np.ndarray):
            check_finite_matrix(A, what, remedy)
            if metric is not None:
                check_finite_matrix(metric, what, remedy)
        elif sparse and not np.isfinite(A.data).all():
            raise ValueError(f"{what} has non-finite entries (inf or NaN). {remedy}")
    if metric is not None:
        values, vectors = generalized_pairs(A, metric, k, largest)
    else:
        values, vectors = symmetric_eigenpairs(
            A, k, largest=largest, solver=solver, tol=tol, max_iter=max_iter,
            random_state=random_state, n_oversamples=n_oversamples, overwrite_a=overwrite_a,
            n_jobs=n_jobs, start=start)
    check_spectrum(values, vectors, k, what=what, dtype=dtype, remedy=remedy)
    if psd:
        values = clip_negative_eigenvalues(values, what=what)
    if zero_roundoff:
        values = zero_roundoff_eigenvalues(values, n, dtype)
    values = np.asarray(values, dtype=np.float64)
    keep = select_count(values, n_components, max_components)
    return (np.ascontiguousarray(values[:keep]),
            np.ascontiguousarray(vectors[:, :keep]))


def check_spectrum(values, vectors, k, *, what, dtype, remedy=NONFINITE_REMEDY):
    """Raise a ValueError unless there are k pairs and all of them are finite."""
    finite = np.isfinite(values).all() and (vectors is None or np.isfinite(vectors).all())
    if values.shape[0] != k or not finite:
        raise ValueError(
            f"The eigensolver returned {values.shape[0] if finite else 'non-finite'} pair(s) "
            f"of {_lower_article(what)}, not the {k} finite pair(s) asked for: the matrix "
            f"holds values too large (or too small) for {np.dtype(dtype).name}. {remedy}"
        )
