"""The eigensolvers behind :func:`fastdr._eigen.symmetric_eigenpairs`.

Each returns the wanted pairs of a symmetric matrix, unsorted and with raw signs;
:mod:`fastdr._eigen` chooses among them, sorts, fixes the signs and post-processes. See
:mod:`fastdr._eigen` for the ``"auto"`` rule.

Solvers
-------
* ``"dense"``: LAPACK ``eigh`` (``syevr``) with ``subset_by_index``; O(n^3), exact.
* ``"arpack"``: implicitly restarted Lanczos (``scipy.sparse.linalg.eigsh``), one
  matrix-vector product per step. For the bottom of a sparse matrix ARPACK runs in
  shift-invert mode around 0 and falls back to LOBPCG, with a warning, if the factorisation
  fails.
* ``"lobpcg"``: ``scipy.sparse.linalg.lobpcg``, a block method.
* ``"randomized"``: randomized block Krylov -- block Lanczos from a random orthonormal block
  of ``k + max(1, k // 2)`` columns (or from a caller's guess, such as KernelPCA's Nystrom
  start, perturbed so that no direction is missing), with full reorthogonalisation and thick
  restarts, and a residual test every pass: it stops when ``|A u - theta u| <= tol * max
  |theta|`` for every wanted pair. One pass is one product of A with a block; on a big dense
  matrix that costs little more than one ARPACK matrix-vector product (both are bound by
  reading the matrix), and it needs several times fewer passes than ARPACK needs products
  (on rbf kernel matrices 8-12 passes where ARPACK took 21-110 products), so it is the
  fastest solver there. Like any Lanczos method it converges to both ends of the spectrum,
  so it serves the top and the bottom pairs of indefinite matrices alike.
"""

import warnings
from contextlib import nullcontext

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg

from .._config import STREAMING_MAX_COLUMNS, STREAMING_MIN_ROWS
from .._kernels.spectral.block_product import dense_times_block, upper_times_block
from .._runtime.blas import single_threaded_blas
from .._runtime.threads import parallel_section
from ..exceptions import EigenSolverError
from .values import fix_signs


def dense_pairs(A, k, largest, overwrite_a):
    if scipy.sparse.issparse(A):
        A = A.toarray()
        overwrite_a = True
    n = A.shape[0]
    subset = (n - k, n - 1) if largest else (0, k - 1)
    if A.flags.c_contiguous and not A.flags.f_contiguous:
        A = A.T  # the same symmetric matrix, in the Fortran order LAPACK works in
    diagonal = np.diag(A).copy()
    values, vectors = scipy.linalg.eigh(A, subset_by_index=subset, overwrite_a=overwrite_a,
                                        check_finite=False)
    if values.shape[0] == k:
        return values, vectors
    # ?syevr asked for a subset can return fewer pairs than asked on exactly repeated
    # eigenvalues (OpenBLAS 0.3.31: I - 11^T / n, the centred kernel of far-apart points,
    # gives 0 of the top 2). The lower-triangle solve destroyed only the lower triangle and
    # the diagonal, so put the diagonal back and solve the untouched upper triangle for the
    # whole spectrum with the divide-and-conquer driver, then keep the subset.
    A[np.diag_indices(n)] = diagonal
    values, vectors = scipy.linalg.eigh(A, lower=False, driver="evd", overwrite_a=overwrite_a,
                                        check_finite=False)
    return values[subset[0]:subset[1] + 1], vectors[:, subset[0]:subset[1] + 1]


def arpack_pairs(A, k, largest, tol, max_iter, rng, sparse):
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
            return lobpcg_pairs(A, k, largest, tol, max_iter, rng)
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


def lobpcg_pairs(A, k, largest, tol, max_iter, rng):
    """k extreme pairs by LOBPCG on an oversampled block.

    The block holds ``max(2k, k + 4)`` vectors (at most n): LOBPCG's convergence rate for
    the k-th pair depends on the gap to the first pair outside the block, and a block of
    exactly k stalls where that gap is small or where a null space (a centred kernel's) sits
    next to the wanted pairs. Convergence is judged by residuals relative to the largest
    wanted eigenvalue's magnitude where it exceeds 1 (absolute below: bottom pairs near 0,
    as LLE's, have no scale of their own).
    """
    n = A.shape[0]
    block = min(n, max(2 * k, k + 4))
    X = rng.standard_normal((n, block))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        values, vectors = scipy.sparse.linalg.lobpcg(
            A, X, tol=tol or None, maxiter=max_iter or 200, largest=largest
        )
    keep = np.argsort(-values if largest else values, kind="stable")[:k]
    values, vectors = values[keep], vectors[:, keep]
    scale = max(float(np.abs(values).max(initial=0.0)), 1.0)
    residual_tol = (tol or np.sqrt(np.finfo(np.float64).eps) * n) * scale
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
        :func:`fastdr._kernels.spectral.block_product.upper_times_block` (half the memory traffic;
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
            and block.shape[1] <= STREAMING_MAX_COLUMNS and A.shape[0] > STREAMING_MIN_ROWS):
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


#: Least relative size of the random part of a start block built from a guess.
START_NOISE = 1e-5


def _start_block(n, b, rng, dtype, start, tol):
    """The first orthonormal (n, b) block: random, or a guess plus a little random noise.

    The guess fills the leading columns, each normalised and perturbed by a random vector
    of relative size ``eps = min(1, max(START_NOISE, 100 sqrt(n) tol))``. A random start
    has a component along every eigenvector, which is what keeps the residual test from
    accepting pairs that miss a wanted direction; the noise keeps that true of a guess that
    lacks one (a Nystrom guess whose landmarks missed a cluster, say): its component along
    any eigenvector, about ``eps / sqrt(n)``, leaves a residual above ``tol`` for any gap
    above 1% of the largest eigenvalue, until the solver has found that direction. It
    costs passes only where the guess was poor.
    """
    block = rng.standard_normal((n, b)).astype(dtype)
    given = 0 if start is None else min(b, start.shape[1])
    if given:
        eps = min(1.0, max(START_NOISE, 100.0 * np.sqrt(n) * tol))
        guess = np.asarray(start[:, :given], dtype=np.float64)
        norms = np.linalg.norm(guess, axis=0)
        usable = np.flatnonzero(np.isfinite(norms) & (norms > 0))
        block[:, usable] = (guess[:, usable] / norms[usable]
                            + (eps / np.sqrt(n)) * block[:, usable])
    return _orthonormal(block)


def block_krylov_pairs(A, k, largest, tol, max_iter, rng, n_oversamples, n_jobs=None,
                       start=None):
    """Randomized block Krylov (block Lanczos with full reorthogonalisation, thick restarts).

    Starts from a random orthonormal n x b block (b = k + n_oversamples), or from the
    columns of ``start`` (an (n, j) guess of the wanted eigenvectors, slightly perturbed;
    random columns fill it up to b, extra columns are dropped), extends the basis
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
    # With a thin block the solver's own BLAS work is small (O(n w b) a pass, w <= 10 b) and
    # runs on one thread: a multi-threaded call would leave OpenBLAS workers spinning into
    # the next product, a numba kernel, and share the cores with it (bench: kernel_pca)
    ops = single_threaded_blas if b <= STREAMING_MAX_COLUMNS else nullcontext
    with ops():
        block = _start_block(n, b, rng, dtype, start, tol)
    width = 0
    worst = np.inf
    for _ in range(max_iter):
        step = block.shape[1]
        new_products = block_product(A, block, n_jobs)
        with ops():
            stop = width + step
            basis[:, width:stop] = block
            products[:, width:stop] = new_products
            cross = np.asarray(basis[:, :stop].T @ new_products, dtype=np.float64)
            H[:stop, width:stop] = cross
            H[width:stop, :stop] = cross.T
            width = stop
            theta, S = scipy.linalg.eigh(0.5 * (H[:width, :width] + H[:width, :width].T),
                                         driver="evd", check_finite=False)
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


def generalized_pairs(A, B, k, largest):
    """Top (or bottom) k pairs of ``A v = lambda B v`` (LAPACK), sorted, signs fixed."""
    n = A.shape[0]
    subset = None if k == n else ((n - k, n - 1) if largest else (0, k - 1))
    values, vectors = scipy.linalg.eigh(A, B, subset_by_index=subset, check_finite=False)
    order = np.argsort(-values if largest else values, kind="stable")
    values = np.ascontiguousarray(values[order])
    vectors = np.ascontiguousarray(vectors[:, order])
    return values, fix_signs(vectors)
