"""One place that computes the top or bottom eigenpairs of a symmetric matrix.

Solvers
-------
* ``"dense"``: LAPACK ``eigh`` (``syevr``) with ``subset_by_index``; O(n^3), exact.
* ``"arpack"``: implicitly restarted Lanczos (``scipy.sparse.linalg.eigsh``), one
  matrix-vector product per step. For the bottom of a sparse matrix ARPACK runs in
  shift-invert mode around 0 and falls back to LOBPCG, with a warning, if the factorisation
  fails.
* ``"lobpcg"``: ``scipy.sparse.linalg.lobpcg``, a block method.
* ``"randomized"``: randomized block Krylov -- block Lanczos from a random orthonormal
  block of ``k + max(1, k // 2)`` columns, with full reorthogonalisation and thick restarts, and
  a residual test every pass: it stops when ``|A u - theta u| <= tol * max |theta|`` for
  every wanted pair. One pass is one product of A with a block; on a big dense matrix that
  costs little more than one ARPACK matrix-vector product (both are bound by reading the
  matrix), and it needs several times fewer passes than ARPACK needs products (on rbf
  kernel matrices 8-12 passes where ARPACK took 21-110 products), so it is the fastest
  solver there. Like any Lanczos method it converges to both ends of the spectrum,
  so it serves the top and the bottom pairs of indefinite matrices alike.

Rule of ``solver="auto"``
-------------------------
* a dense matrix with ``n <= 1000``, or any matrix when more than 10% of the spectrum is
  wanted: ``"dense"`` (LAPACK is fastest there and exact);
* a sparse matrix with ``n <= 200``: ``"dense"``; a larger sparse matrix: ``"arpack"``;
* a larger dense matrix: ``"randomized"`` with at most 100 passes; if it has not converged
  by then, ``"arpack"`` takes over.

Results: eigenvalues sorted (descending for ``largest=True``, ascending otherwise), each
eigenvector's sign fixed so that its entry of largest magnitude is positive (scikit-learn's
``svd_flip`` convention). A solver failure is re-raised as :class:`EigenSolverError`, whose
message names another ``eigen_solver`` to try.

This module also holds the ``n_components`` rules shared by the spectral estimators:
:func:`check_n_components` and :func:`n_components_for_ratio`.
"""

import numbers
import warnings

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg

from ._blas import caller_blas_threads
from ._kernels.block_product import dense_times_block, upper_times_block
from ._parallel import parallel_section
from ._validation import check_option, check_random_state

SOLVERS = ("auto", "dense", "arpack", "lobpcg", "randomized")
DENSE_MAX_N = 1000
SPARSE_DENSE_MAX_N = 200
DENSE_FRACTION = 0.1
AUTO_RANDOMIZED_MAX_ITER = 100
RANDOMIZED_MAX_ITER = 1000
#: Round-off allowance of the cumulative-ratio rule of :func:`n_components_for_ratio`.
RATIO_ROUNDOFF = 1e-12
#: Eigenvalues below this fraction of the largest count as zero in ``n_components=None``.
ZERO_EIGENVALUE_RATIO = 1e-12


class EigenSolverError(RuntimeError):
    """An eigensolver failed; the message names a different ``eigen_solver`` to try."""


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
    return "randomized"


def fix_signs(vectors):
    """Flip each column so that its entry of largest magnitude is positive. In place."""
    if vectors.size == 0:
        return vectors
    rows = np.argmax(np.abs(vectors), axis=0)
    signs = np.sign(vectors[rows, np.arange(vectors.shape[1])])
    signs[signs == 0] = 1
    vectors *= signs.astype(vectors.dtype)
    return vectors


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
    rng = check_random_state(random_state)
    try:
        if solver == "dense":
            values, vectors = _dense(A, n_components, largest, overwrite_a)
        elif solver == "arpack":
            values, vectors = _arpack(A, n_components, largest, tol, max_iter, rng, sparse)
        elif solver == "lobpcg":
            values, vectors = _lobpcg(A, n_components, largest, tol, max_iter, rng)
        elif auto:
            try:
                values, vectors = _block_krylov(
                    A, n_components, largest, tol, AUTO_RANDOMIZED_MAX_ITER, rng,
                    n_oversamples, n_jobs)
            except EigenSolverError:
                solver = "arpack"
                values, vectors = _arpack(A, n_components, largest, tol, max_iter, rng,
                                          sparse)
        else:
            values, vectors = _block_krylov(
                A, n_components, largest, tol, max_iter or RANDOMIZED_MAX_ITER, rng,
                n_oversamples, n_jobs)
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


def _dense(A, k, largest, overwrite_a):
    if scipy.sparse.issparse(A):
        A = A.toarray()
        overwrite_a = True
    n = A.shape[0]
    subset = (n - k, n - 1) if largest else (0, k - 1)
    if A.flags.c_contiguous and not A.flags.f_contiguous:
        A = A.T  # the same symmetric matrix, in the Fortran order LAPACK works in
    return scipy.linalg.eigh(A, subset_by_index=subset, overwrite_a=overwrite_a,
                             check_finite=False)


def _arpack(A, k, largest, tol, max_iter, rng, sparse):
    n = A.shape[0]
    v0 = rng.uniform(-1, 1, n)
    if largest:
        return scipy.sparse.linalg.eigsh(A, k=k, which="LA", tol=tol, maxiter=max_iter, v0=v0)
    if sparse:
        try:
            return _shift_invert_bottom(A, k, tol, max_iter, v0)
        except RuntimeError as exc:  # singular factorisation, even shifted
            warnings.warn(
                f"Shift-invert ARPACK could not factor the matrix ({exc}); falling back to "
                "LOBPCG. Set eigen_solver='dense' for small problems.",
                RuntimeWarning,
                stacklevel=4,
            )
            return _lobpcg(A, k, largest, tol, max_iter, rng)
    return scipy.sparse.linalg.eigsh(A, k=k, which="SA", tol=tol, maxiter=max_iter, v0=v0)


def _splu_symmetric(A_csc):
    """SuperLU with a symmetric ordering (minimum degree on A^T + A), diagonal pivots first."""
    return scipy.sparse.linalg.splu(A_csc, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.01,
                                    options={"SymmetricMode": True})


def _shift_invert_bottom(A, k, tol, max_iter, v0):
    """Bottom k pairs of a sparse symmetric A by ARPACK on (A - sigma I)^-1 (one sparse LU).

    For the positive semidefinite matrices met here (LLE's M, graph Laplacians) the symmetric
    ordering has about half the fill of SuperLU's default column ordering and factors
    several times faster. sigma is 0; when SuperLU finds A exactly singular (LLE's M with
    groups of duplicate points), sigma moves to -1e-12 times the largest diagonal magnitude
    (the eigenvectors are unchanged), with a warning. A second failure raises RuntimeError.
    """
    n = A.shape[0]
    csc = scipy.sparse.csc_matrix(A, dtype=np.float64)
    sigma = 0.0
    try:
        lu = _splu_symmetric(csc)
    except RuntimeError as exc:
        sigma = -1e-12 * (float(np.abs(csc.diagonal()).max()) or 1.0)
        warnings.warn(
            f"Shift-invert ARPACK could not factor the matrix at 0 ({exc}); factoring it "
            f"shifted by {-sigma:.3g} instead (the eigenvectors are the same).",
            RuntimeWarning,
            stacklevel=5,
        )
        lu = _splu_symmetric(scipy.sparse.csc_matrix(csc - sigma * scipy.sparse.eye(n)))
    op = scipy.sparse.linalg.LinearOperator((n, n), matvec=lu.solve, dtype=np.float64)
    return scipy.sparse.linalg.eigsh(A, k=k, sigma=sigma, which="LM", tol=tol,
                                     maxiter=max_iter, v0=v0, OPinv=op)


def _lobpcg(A, k, largest, tol, max_iter, rng):
    n = A.shape[0]
    X = rng.standard_normal((n, k))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        values, vectors = scipy.sparse.linalg.lobpcg(
            A, X, tol=tol or None, maxiter=max_iter or 200, largest=largest
        )
    residual_tol = tol or np.sqrt(np.finfo(np.float64).eps) * n
    residuals = np.linalg.norm(A @ vectors - vectors * values, axis=0)
    if residuals.max() > 10 * residual_tol:
        raise EigenSolverError(
            f"LOBPCG did not converge: the largest residual |A v - lambda v| is "
            f"{residuals.max():.3g}, above the tolerance {residual_tol:.3g}."
        )
    return values, vectors


def _orthonormal(Y):
    return np.linalg.qr(Y, mode="reduced")[0]


def _new_block(residual, basis, rng):
    """Orthonormal block spanning ``residual`` minus its part in ``basis`` (twice, CGS2).

    Columns that vanish (the Krylov space became invariant) are replaced by random vectors,
    so the block always brings new directions.
    """
    scale = np.linalg.norm(residual, axis=0)
    residual = residual - basis @ (basis.T @ residual)
    residual -= basis @ (basis.T @ residual)
    lost = np.linalg.norm(residual, axis=0) <= 1e-8 * np.maximum(scale, 1e-300)
    if lost.any():
        fresh = rng.standard_normal((residual.shape[0], int(lost.sum())))
        residual[:, lost] = fresh.astype(residual.dtype)
        residual -= basis @ (basis.T @ residual)
    block = _orthonormal(residual)
    block -= basis @ (basis.T @ block)
    return _orthonormal(block)


#: Up to this many columns, a dense product runs in the streaming numba kernel, not BLAS.
STREAMING_MAX_COLUMNS = 16


def block_product(A, block, n_jobs=None, upper=False):
    """``A @ block``; a dense C-ordered A with a thin block goes through the streaming kernel.

    Parameters
    ----------
    A : ndarray, sparse matrix or LinearOperator of shape (m, n)
    block : ndarray of shape (n, b)
    n_jobs : int or None
        Threads of the streaming kernel.
    upper : bool, default=False
        A is a symmetric ndarray of which only the upper triangle is filled in (and read):
        the product always goes through
        :func:`fastdr._kernels.block_product.upper_times_block` (half the memory traffic;
        best for thin blocks, correct for any).

    Returns
    -------
    ndarray of shape (m, b), in block's dtype
    """
    if upper:
        out = np.empty((A.shape[0], block.shape[1]), dtype=np.float64)
        with parallel_section(n_jobs):
            upper_times_block(A, np.ascontiguousarray(block.T), out)
        return out.astype(block.dtype, copy=False)
    if (isinstance(A, np.ndarray) and A.flags.c_contiguous
            and block.shape[1] <= STREAMING_MAX_COLUMNS):
        out = np.empty((A.shape[0], block.shape[1]), dtype=np.float64)
        with parallel_section(n_jobs):
            dense_times_block(A, np.ascontiguousarray(block.T), out)
        return out.astype(block.dtype, copy=False)
    return np.asarray(A @ block, dtype=block.dtype)


def randomized_block_width(k, n_oversamples=None):
    """Columns of the randomized solver's block: ``k`` plus the oversampling.

    None means ``max(1, k // 2)`` extra columns. (The block can never exceed n.)
    """
    extra = max(1, k // 2) if n_oversamples is None else int(n_oversamples)
    return k + extra


def _block_krylov(A, k, largest, tol, max_iter, rng, n_oversamples, n_jobs=None):
    """Randomized block Krylov (block Lanczos with full reorthogonalisation, thick restarts).

    Starts from a random orthonormal n x b block (b = k + n_oversamples), extends the basis
    V by one block per pass (one product ``A @ block``, through the streaming kernel for a
    dense matrix), keeps ``H = V^T A V`` up to date from the new block only, and after every
    pass takes Ritz pairs from H (Rayleigh-Ritz). It stops when every wanted pair has
    ``|A u - theta u| <= tol * max |theta|``. When the basis would exceed ``max(10 b, 60)``
    columns it restarts from its best half (thick restart: the kept Ritz vectors carry what
    the discarded directions taught). Lanczos converges to both ends of the spectrum, so the
    largest (or smallest) algebraic eigenvalues are found on indefinite matrices too.
    Time O(passes * (cost of A @ block + n w b)) with w the basis width; memory O(n w).
    """
    n = A.shape[0]
    dtype = np.float32 if A.dtype == np.float32 else np.float64
    if tol <= 0:
        tol = 1e-5 if dtype == np.float32 else 1e-10
    b = min(n, randomized_block_width(k, n_oversamples))
    max_width = min(n, max(10 * b, 60))
    basis = np.empty((n, max_width), dtype=dtype)
    products = np.empty((n, max_width), dtype=dtype)
    H = np.zeros((max_width, max_width), dtype=np.float64)
    block = _orthonormal(rng.standard_normal((n, b)).astype(dtype))
    width = 0
    worst = np.inf
    for _ in range(max_iter):
        step = block.shape[1]
        new_products = block_product(A, block, n_jobs)
        stop = width + step
        basis[:, width:stop] = block
        products[:, width:stop] = new_products
        cross = np.asarray(basis[:, :stop].T @ new_products, dtype=np.float64)
        H[:stop, width:stop] = cross
        H[width:stop, :stop] = cross.T
        width = stop
        theta, S = np.linalg.eigh(0.5 * (H[:width, :width] + H[:width, :width].T))
        if largest:
            theta, S = theta[::-1], S[:, ::-1]
        S = np.ascontiguousarray(S).astype(dtype)
        U = basis[:, :width] @ S[:, :k]
        AU = products[:, :width] @ S[:, :k]
        residuals = np.linalg.norm(AU - U * theta[:k].astype(dtype), axis=0)
        scale = max(np.abs(theta).max(), np.finfo(np.float64).tiny)
        worst = residuals.max() / scale
        if worst <= tol or width >= n:
            return theta[:k], U
        last = new_products
        if width + b > max_width and max_width < n:
            keep = min(width, max(k + b, max_width // 2))
            kept = basis[:, :width] @ S[:, :keep]
            kept_products = products[:, :width] @ S[:, :keep]
            basis[:, :keep] = kept
            products[:, :keep] = kept_products
            H[:, :] = 0.0
            H[np.arange(keep), np.arange(keep)] = theta[:keep]
            width = keep
            last = kept_products[:, :b] - kept[:, :b] * theta[:b].astype(dtype)
        step = min(b, n - width, last.shape[1])
        block = _new_block(last[:, :step], basis[:, :width], rng)
    raise EigenSolverError(
        f"block Krylov iteration did not converge in {max_iter} passes (relative residual "
        f"{worst:.3g} > tol {tol:.3g})."
    )


def clip_negative_eigenvalues(values, *, what, warn_ratio=None):
    """Clip negative eigenvalues to 0; warn, naming them, when any is not negligible.

    A negative eigenvalue is negligible (round-off) when its magnitude is at most
    ``warn_ratio`` times the largest eigenvalue magnitude. ``warn_ratio=None`` uses 1e-8 for
    float64 values and 1e-3 for float32 values (whose eigensolver round-off is larger).

    Parameters
    ----------
    values : array-like of shape (k,)
    what : str
        What the eigenvalues belong to, for the warning ("The double-centred kernel matrix").
    warn_ratio : float or None

    Returns
    -------
    ndarray of float64
        The clipped copy.
    """
    values = np.asarray(values)
    if warn_ratio is None:
        warn_ratio = 1e-3 if values.dtype == np.float32 else 1e-8
    values = np.array(values, dtype=np.float64)
    negative = values < 0
    if negative.any():
        scale = np.max(np.abs(values))
        significant = np.flatnonzero(negative & (np.abs(values) > warn_ratio * scale))
        if significant.size:
            shown = ", ".join(f"#{i} = {values[i]:.3g}" for i in significant[:5])
            more = f" and {significant.size - 5} more" if significant.size > 5 else ""
            warnings.warn(
                f"{what} has {significant.size} negative eigenvalue(s) that are not round-off "
                f"({shown}{more}; the largest eigenvalue magnitude is {scale:.3g}); they were "
                "set to 0. The input is not exactly Euclidean (or the kernel is not positive "
                "semidefinite).",
                RuntimeWarning,
                stacklevel=3,
            )
        values[negative] = 0.0
    return values


def zero_roundoff_eigenvalues(values, n, dtype):
    """Set eigenvalues that are zero to round-off to exactly 0 (a copy, float64).

    An eigenvalue of an n x n matrix of ``dtype`` is round-off when its magnitude is at most
    ``10 sqrt(n) eps`` times the largest magnitude: LAPACK and the iterative solvers return
    such values for the null space of a rank-deficient matrix. Zeroing them keeps
    ``Lambda^(-1/2)`` (new-point placement in MDS and kernel PCA) from amplifying noise: those
    components get coordinate 0.
    """
    values = np.array(values, dtype=np.float64)
    if values.size:
        limit = 10.0 * np.sqrt(n) * np.finfo(dtype).eps * np.abs(values).max()
        values[np.abs(values) <= limit] = 0.0
    return values


def check_n_components(n_components, max_components, *, estimator, limit, allow_none=True):
    """Validate ``n_components``: an int in [1, max_components] or a float in (0, 1].

    Parameters
    ----------
    n_components : int, float or None
    max_components : int
        The most components the estimator can return on this input.
    estimator : str
        The estimator's name, for the message.
    limit : str
        Why ``max_components`` is the limit, for the message ("min(n_samples, n_features)").
    allow_none : bool

    Returns
    -------
    int, float or None
        The int or float as given (a float is a cumulative-ratio threshold).
    """
    if n_components is None and allow_none:
        return None
    if isinstance(n_components, bool) or not isinstance(n_components, numbers.Real):
        raise TypeError(
            f"n_components must be an int, a float in (0, 1]"
            f"{' or None' if allow_none else ''}; got {n_components!r} of type "
            f"{type(n_components).__name__}."
        )
    if isinstance(n_components, numbers.Integral):
        n_components = int(n_components)
        if n_components < 1:
            raise ValueError(
                f"n_components must be >= 1; got {n_components}. Pass a positive int, or a "
                "float in (0, 1] to keep a share of the variance."
            )
        if n_components > max_components:
            raise ValueError(
                f"n_components={n_components} is larger than allowed: {estimator} can return "
                f"at most {limit} = {max_components} components on this input. Pass "
                f"n_components <= {max_components}."
            )
        return n_components
    t = float(n_components)
    if not (0.0 < t <= 1.0):
        raise ValueError(
            f"A float n_components is a share of the explained variance and must lie in "
            f"(0, 1]; got {n_components!r}. Pass an int for a number of components."
        )
    return t


def n_components_for_ratio(values, threshold):
    """Smallest d' whose cumulative ratio of the positive ``values`` is >= ``threshold``.

    This is the textbook rule (scikit-learn's PCA uses a strict ``>``). The comparison allows
    ``RATIO_ROUNDOFF`` = 1e-12 of round-off, so ``threshold=1.0`` keeps exactly the
    components whose eigenvalue is not zero to round-off.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Eigenvalues sorted descending; negatives count as 0.
    threshold : float in (0, 1]

    Returns
    -------
    int
        Between 1 and n.
    """
    positive = np.clip(np.asarray(values, dtype=np.float64), 0.0, None)
    total = positive.sum()
    if total <= 0:
        return 1
    ratios = np.cumsum(positive) / total
    index = int(np.searchsorted(ratios, threshold - RATIO_ROUNDOFF, side="left"))
    return min(index + 1, positive.size)
