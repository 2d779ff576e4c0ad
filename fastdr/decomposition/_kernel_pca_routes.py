"""The two exact routes of :class:`~fastdr.decomposition.KernelPCA`: the kernel matrix stored
(built once, centred and decomposed in place) or implicit (never stored: every product of the
iterative eigensolver rebuilds it by row blocks from X, :mod:`fastdr._eigen.implicit`).

Both give the same eigenpairs to round-off (the products differ only in summation order).
The stored route costs one m x m array and one O(m^2 d) kernel; the implicit one costs
O(block m + m b) memory and one O(m^2 (d + b)) pass per product, so it takes longer and is
chosen (``kernel_storage="auto"``) only when the m x m kernel does not fit the memory budget.
"""

import numpy as np
import scipy.sparse

from .._config import EIGEN_ARPACK_MAX_N
from .._eigen import (
    check_finite_row_means,
    plan_solve,
    reads_upper_triangle,
    spectral_pairs,
)
from .._eigen.implicit import ImplicitCentredMatrix, fused_product
from .._eigen.implicit import choose_storage as choose_route
from .._eigen.solvers import randomized_block_width
from .._kernels.codes import SQEUCLIDEAN
from .._kernels.spectral.centering import double_centre_inplace
from .._kernels.spectral.distance_product import GAUSSIAN
from .._runtime.threads import parallel_section
from .._validation.params import check_random_state
from ._kernel_pca_spectrum import CentredKernel, nystrom_start

WHAT = "The centred kernel matrix"


def choose_storage(estimator, m, dtype, n_components):
    """``"stored"`` or ``"implicit"``, by ``kernel_storage`` and the memory budget
    (:func:`fastdr._eigen.implicit.choose_storage`)."""
    return choose_route(
        estimator.kernel_storage, m, dtype, n_components=n_components,
        eigen_solver=estimator.eigen_solver, parameter="kernel_storage",
        what=f"The {m} x {m} kernel matrix",
        alternatives="n_landmarks (Nystrom kernel PCA: O(m L) time), float32 input or fewer "
                     "samples.")


def _finish_solve(estimator, A, n_components, solver, rng, start):
    iterative = solver in ("arpack", "lobpcg")
    return spectral_pairs(
        A, n_components, solver=solver, what=WHAT, zero_roundoff=True, finite_checked=True,
        remedy=estimator._nonfinite_remedy(), tol=float(estimator.tol) if iterative else 0.0,
        max_iter=estimator.max_iter if iterative else None, random_state=rng,
        overwrite_a=True, n_jobs=estimator.n_jobs, start=start)


def _randomized_start(estimator, X, K, m, k_solve, solver):
    """The random stream and the randomized solver's Nystrom start (None for other
    solvers and Python kernels, which are slow)."""
    if solver != "randomized" or callable(estimator.kernel):
        return estimator.random_state, None
    # one stream draws the landmarks, then the solver's random columns
    rng = check_random_state(estimator.random_state)
    return rng, nystrom_start(estimator._kernel_columns(X, K), m,
                              randomized_block_width(k_solve), rng)


def solve_stored(estimator, X, K, n_components, log):
    """Eigenpairs of the centred kernel through the stored m x m matrix.

    ``K`` is the precomputed kernel (decomposed in place) or None (built here from X).
    Returns ``(values, vectors, row_means, dtype)``.
    """
    m = X.shape[0] if K is None else K.shape[0]
    k_solve = n_components if isinstance(n_components, int) else m
    solver = estimator.eigen_solver if isinstance(n_components, int) else "dense"
    # an iterative solver with a thin block reads only K's upper triangle (half the
    # memory traffic per product), so the rbf kernel need not be mirrored
    # (+ 1: the first product carries a column of ones for the row means)
    upper = reads_upper_triangle(solver, m, k_solve, extra_columns=1)
    dtype = X.dtype if K is None else K.dtype
    # the memory plan before the O(m^2 d) kernel: a solve that cannot fit fails first
    solver = plan_solve(m, k_solve, solver=solver, dtype=dtype, overwrite_a=True, what=WHAT)
    if K is None:
        K = estimator._kernel(X, X, np.empty((m, m), dtype=X.dtype), mirror=not upper)
        log.done(f"kernel matrix ({estimator._kernel_name()}, {m} x {m})")
    remedy = estimator._nonfinite_remedy()
    rng, start = _randomized_start(estimator, X, K, m, k_solve, solver)
    if solver == "dense":
        with parallel_section(estimator.n_jobs):
            row_means = double_centre_inplace(K, False, 1.0)
        check_finite_row_means(row_means, "The kernel matrix", remedy)
        A = K
    else:
        A = CentredKernel(K, estimator.n_jobs, upper, remedy)
    values, vectors = _finish_solve(estimator, A, n_components, solver, rng, start)
    log.done(f"centring and eigensolver ({solver})")
    return values, vectors, (row_means if solver == "dense" else A.row_means), dtype


def solve_implicit(estimator, X, n_components, log):
    """Eigenpairs of the centred kernel with the kernel never stored (``n_components`` an
    int). ``eigen_solver="auto"`` takes ARPACK up to 2,000 samples, else the randomized
    solver with a Nystrom start (the fewest passes over the kernel). Returns
    ``(values, vectors, row_means, dtype)``."""
    m = X.shape[0]
    solver = estimator.eigen_solver
    if solver == "auto":
        solver = "arpack" if m <= EIGEN_ARPACK_MAX_N else "randomized"
    solver = plan_solve(m, n_components, solver=solver, dtype=X.dtype, overwrite_a=True,
                        what=WHAT)

    def rows(start, stop, out):
        return estimator._kernel(X[start:stop], X, out)

    fused = None
    if estimator.kernel == "rbf" and not scipy.sparse.issparse(X):
        fused = fused_product(X, SQEUCLIDEAN, 2.0, GAUSSIAN, estimator.gamma_, 1.0,
                              estimator.n_jobs)
    A = ImplicitCentredMatrix(rows, m, X.dtype, what="The kernel matrix",
                              remedy=estimator._nonfinite_remedy(), product=fused)
    rng, start = _randomized_start(estimator, X, None, m, n_components, solver)
    values, vectors = _finish_solve(estimator, A, n_components, solver, rng, start)
    log.done(f"eigensolver ({solver}) on the implicit kernel ({estimator._kernel_name()}, "
             f"{m} x {m}, never stored): {A.passes} passes")
    return values, vectors, A.row_means, X.dtype
