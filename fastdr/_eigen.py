"""One place that computes the top or bottom eigenpairs of a symmetric matrix.

Solver rule for ``solver="auto"`` (documented in the README and benchmarked in ``bench/``):

* ``"dense"`` (LAPACK ``eigh`` with ``subset_by_index``) when the matrix is dense and
  ``n <= 1500``, or when more than 10% of the spectrum is wanted;
* otherwise ``"arpack"`` (Lanczos, ``eigsh``); for the bottom of a sparse matrix ARPACK runs
  in shift-invert mode around 0, falling back to LOBPCG with a warning if the factorisation
  fails.

Results: eigenvalues sorted (descending for ``largest=True``, ascending otherwise), each
eigenvector's sign fixed so that its entry of largest magnitude is positive.
"""

import warnings

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg

from ._validation import check_option, check_random_state

SOLVERS = ("auto", "dense", "arpack", "lobpcg", "randomized")
_DENSE_MAX_N = 1500


class EigenSolverError(RuntimeError):
    """An eigensolver failed; the message names a different ``eigen_solver`` to try."""


def choose_solver(n, n_components, *, sparse):
    """Return the solver ``"auto"`` picks for an n x n matrix and k wanted pairs."""
    if not sparse and (n <= _DENSE_MAX_N or n_components > 0.1 * n):
        return "dense"
    if sparse and n <= 200:
        return "dense"
    return "arpack"


def fix_signs(vectors):
    """Flip each column so that its entry of largest magnitude is positive. In place."""
    if vectors.size == 0:
        return vectors
    rows = np.argmax(np.abs(vectors), axis=0)
    signs = np.sign(vectors[rows, np.arange(vectors.shape[1])])
    signs[signs == 0] = 1
    vectors *= signs
    return vectors


def symmetric_eigenpairs(
    A,
    n_components,
    *,
    largest=True,
    solver="auto",
    tol=0.0,
    max_iter=None,
    random_state=None,
    n_oversamples=10,
    n_power_iter=4,
):
    """Top (or bottom) ``n_components`` eigenpairs of the symmetric matrix ``A``.

    Parameters
    ----------
    A : ndarray or scipy sparse matrix of shape (n, n)
        Symmetric; only a dense array may be used with ``solver="dense"`` on big n.
    n_components : int
        Number of pairs, 1 <= n_components <= n (< n for ARPACK).
    largest : bool, default=True
        Largest algebraic eigenvalues when True, smallest otherwise.
    solver : {"auto", "dense", "arpack", "lobpcg", "randomized"}, default="auto"
        See the module docstring for the ``"auto"`` rule.
    tol : float, default=0.0
        Convergence tolerance of the iterative solvers (0 means machine precision for ARPACK).
    max_iter : int or None
        Iteration cap of the iterative solvers.
    random_state : int, RandomState or None
        Seeds the starting vector (ARPACK, LOBPCG) or the test matrix (randomized).
    n_oversamples, n_power_iter : int
        Randomized range-finder settings.

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
    sparse = scipy.sparse.issparse(A)
    if solver == "auto":
        solver = choose_solver(n, n_components, sparse=sparse)
    if solver in ("arpack", "lobpcg") and n_components >= n:
        solver = "dense"
    rng = check_random_state(random_state)
    try:
        if solver == "dense":
            values, vectors = _dense(A, n_components, largest)
        elif solver == "arpack":
            values, vectors = _arpack(A, n_components, largest, tol, max_iter, rng, sparse)
        elif solver == "lobpcg":
            values, vectors = _lobpcg(A, n_components, largest, tol, max_iter, rng)
        else:
            values, vectors = _randomized(A, n_components, largest, n_oversamples,
                                          n_power_iter, rng)
    except (scipy.sparse.linalg.ArpackError, scipy.sparse.linalg.ArpackNoConvergence,
            np.linalg.LinAlgError, scipy.linalg.LinAlgError, RuntimeError) as exc:
        if isinstance(exc, EigenSolverError):
            raise
        other = "dense" if solver != "dense" else "arpack"
        raise EigenSolverError(
            f"eigen_solver={solver!r} failed on a {n} x {n} matrix: {exc}. "
            f"Try eigen_solver={other!r}"
            + (" (or raise max_iter / tol)." if solver != "dense" else ".")
        ) from exc
    order = np.argsort(-values if largest else values, kind="stable")
    values = np.ascontiguousarray(values[order])
    vectors = np.ascontiguousarray(vectors[:, order])
    return values, fix_signs(vectors)


def _dense(A, k, largest):
    if scipy.sparse.issparse(A):
        A = A.toarray()
    n = A.shape[0]
    subset = (n - k, n - 1) if largest else (0, k - 1)
    return scipy.linalg.eigh(A, subset_by_index=subset, overwrite_a=False, check_finite=False)


def _arpack(A, k, largest, tol, max_iter, rng, sparse):
    n = A.shape[0]
    v0 = rng.uniform(-1, 1, n)
    if largest:
        return scipy.sparse.linalg.eigsh(A, k=k, which="LA", tol=tol, maxiter=max_iter, v0=v0)
    if sparse:
        try:
            return scipy.sparse.linalg.eigsh(A, k=k, sigma=0.0, which="LM", tol=tol,
                                             maxiter=max_iter, v0=v0)
        except RuntimeError as exc:  # singular factorisation
            warnings.warn(
                f"Shift-invert ARPACK could not factor the matrix ({exc}); falling back to "
                "LOBPCG. Set eigen_solver='dense' for small problems.",
                RuntimeWarning,
                stacklevel=3,
            )
            return _lobpcg(A, k, largest, tol, max_iter, rng)
    return scipy.sparse.linalg.eigsh(A, k=k, which="SA", tol=tol, maxiter=max_iter, v0=v0)


def _lobpcg(A, k, largest, tol, max_iter, rng):
    n = A.shape[0]
    X = rng.standard_normal((n, k))
    values, vectors = scipy.sparse.linalg.lobpcg(
        A, X, tol=tol or None, maxiter=max_iter or 200, largest=largest
    )
    return values, vectors


def _randomized(A, k, largest, n_oversamples, n_power_iter, rng):
    n = A.shape[0]
    size = min(n, k + n_oversamples)
    Q = rng.standard_normal((n, size))
    for _ in range(n_power_iter):
        Q, _ = scipy.linalg.qr(A @ Q, mode="economic")
    Q, _ = scipy.linalg.qr(A @ Q, mode="economic")
    B = Q.T @ (A @ Q)
    B = 0.5 * (B + B.T)
    values, small = scipy.linalg.eigh(B)
    order = np.argsort(-values if largest else values)[:k]
    return values[order], Q @ small[:, order]


def clip_negative_eigenvalues(values, *, what, warn_ratio=1e-8):
    """Clip negative eigenvalues to 0; warn when any is not negligible.

    A negative eigenvalue is negligible when its magnitude is at most ``warn_ratio`` times
    the largest eigenvalue magnitude (plain round-off).

    Returns
    -------
    ndarray
        The clipped copy.
    """
    values = np.array(values, dtype=np.float64)
    negative = values < 0
    if negative.any():
        scale = np.max(np.abs(values)) if values.size else 0.0
        significant = values[negative & (np.abs(values) > warn_ratio * scale)]
        if significant.size:
            shown = ", ".join(f"{v:.3g}" for v in significant[:5])
            warnings.warn(
                f"{what} has {significant.size} negative eigenvalue(s) that are not round-off "
                f"({shown}); they were set to 0. The input is not exactly Euclidean "
                "(or the kernel is not positive semidefinite).",
                RuntimeWarning,
                stacklevel=3,
            )
        values[negative] = 0.0
    return values
