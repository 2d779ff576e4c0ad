"""Centred symmetric matrices that are never stored: ``J A J`` applied from A's row blocks.

Exact kernel PCA (``K``) and classical MDS (``-1/2 D^2``) need the top eigenpairs of
``J A J`` (``J = I - 11^T / m``) for an m x m matrix A that is a function of the samples.
When A does not fit the memory budget, the iterative eigensolvers get this operator
instead: each product recomputes A's row blocks from the samples (a block of about 64 MB,
reused), multiplies each into the operand and drops it. A product then costs what forming A
costs, O(m^2 d), plus O(m^2 b) for b columns, and memory is one block and the m x b operands;
the eigensolver chooses how many products (the randomized solver with a Nystrom start needs
the fewest). The blocks are fixed by m and the dtype alone, so the result does not depend on
the thread count.
"""

import numpy as np
import scipy.sparse.linalg

from .._config import budget_applies, memory_budget
from .._validation.budget import check_dense_allocation
from . import check_finite_row_means

#: bytes of one row block of A (rows = this / (m itemsize), at least 1)
BLOCK_BYTES = 64 * 2**20
#: rows and columns of the fused product's tiles (a 512 KB float64 tile stays in cache)
TILE = 256
#: most bytes of the fused product's per-chunk accumulators, all chunks together
ACCUMULATOR_BYTES = 256 * 2**20


class ImplicitCentredMatrix(scipy.sparse.linalg.LinearOperator):
    """``J A J`` for a symmetric A given by its row blocks, never stored.

    The first product carries an extra column of ones, which yields A's row means (the
    centring of new samples needs them, as :class:`fastdr.decomposition.KernelPCA`'s stored
    route keeps them) and checks that every entry of A is finite, before the solver iterates.

    Parameters
    ----------
    rows : callable
        ``rows(start, stop, out)`` writes ``A[start:stop]`` (shape (stop - start, m)) into
        ``out`` and returns it (or another array of that shape and dtype).
    m : int
        Order of A.
    dtype : numpy dtype
        The dtype of A's blocks and of the products.
    what : str
        A's name in the messages ("The kernel matrix").
    remedy : str
        What to do about a non-finite A.
    product : callable or None
        ``product(V)`` returns ``A V`` for an (m, b) V in one call (a fused kernel that
        never forms A's blocks); None forms them with ``rows``.

    Attributes
    ----------
    row_means : ndarray of shape (m,), float64, or None
        Set by the first product.
    passes : int
        Products computed so far (each one pass over A).
    """

    def __init__(self, rows, m, dtype, *, what, remedy, product=None):
        super().__init__(dtype=np.dtype(dtype), shape=(m, m))
        self.rows = rows
        self.product = product
        self.what = what
        self.remedy = remedy
        self.row_means = None
        self.passes = 0
        # a block is at most a quarter of the memory budget: the caller's row function may
        # hold a second block-sized array while it fills this one
        block_bytes = min(BLOCK_BYTES, memory_budget() // 4)
        self.block_rows = int(max(1, min(m, block_bytes // (m * self.dtype.itemsize))))

    def _matmat(self, Q):
        Q = np.asarray(Q, dtype=self.dtype)
        m, b = Q.shape
        centred = Q - Q.mean(axis=0)
        first = self.row_means is None
        if first:
            centred = np.column_stack([centred, np.ones(m, dtype=self.dtype)])
        if self.product is not None:
            product = np.asarray(self.product(centred), dtype=self.dtype)
        else:
            product = np.empty((m, centred.shape[1]), dtype=self.dtype)
            buffer = np.empty((self.block_rows, m), dtype=self.dtype)
            for start in range(0, m, self.block_rows):
                stop = min(m, start + self.block_rows)
                block = self.rows(start, stop, buffer[:stop - start])
                with np.errstate(invalid="ignore", over="ignore"):  # reported just below
                    np.matmul(block, centred, out=product[start:stop])
        self.passes += 1
        if first:
            self.row_means = product[:, b].astype(np.float64) / m
            check_finite_row_means(self.row_means, self.what, self.remedy)
            product = product[:, :b]
        return product - product.mean(axis=0)

    def _matvec(self, x):
        return self._matmat(np.asarray(x).reshape(-1, 1)).ravel()


def fused_product(X, metric, p, value, gamma, power, n_jobs):
    """``V -> A V`` for ``A_ij = g(dist(x_i, x_j))`` of the dense rows of X, A never formed:
    each pair of tiles computed once and used for both of its blocks
    (:func:`fastdr._kernels.spectral.distance_product.distance_times`, whose docstring
    gives ``metric``, ``p``, ``value``, ``gamma`` and ``power``). The chunk count depends on
    m and V's width alone, not on the threads."""
    from .._kernels.spectral.distance_product import distance_times
    from .._runtime.threads import parallel_section

    Xf = np.ascontiguousarray(X, dtype=np.float64)
    Xt = np.ascontiguousarray(Xf.T)
    m = Xf.shape[0]

    def product(V):
        V = np.ascontiguousarray(V, dtype=np.float64)
        chunks = int(max(1, min(16, ACCUMULATOR_BYTES // (8 * m * V.shape[1]))))
        acc = np.zeros((chunks, m, V.shape[1]))
        with parallel_section(n_jobs):
            distance_times(Xf, Xt, int(metric), float(p), int(value), float(gamma),
                           float(power), V, TILE, acc)
        return acc.sum(axis=0)

    return product


def choose_storage(storage, m, dtype, *, n_components, eigen_solver, parameter, what,
                   alternatives):
    """``"stored"`` or ``"implicit"``: the route of an m x m matrix an estimator decomposes.

    Parameters
    ----------
    storage : {"auto", "stored", "implicit"}
        The estimator's choice. "auto" stores the matrix when it fits the memory budget and
        goes implicit otherwise, when it can.
    m : int
    dtype : numpy dtype
        The stored matrix's dtype.
    n_components, eigen_solver
        The estimator's: the implicit route needs an int count and an iterative solver (the
        whole spectrum, or LAPACK, needs the stored matrix).
    parameter : str
        The estimator's name for ``storage``, for the messages.
    what : str
        The stored matrix's name ("The 1000 x 1000 kernel matrix").
    alternatives : str
        Remedies for a matrix that does not fit, after the implicit route.

    Raises
    ------
    ValueError
        ``storage="implicit"`` where it cannot run.
    fastdr.MemoryBudgetError
        The matrix does not fit and the implicit route was not chosen or cannot run.
    """
    can_be_implicit = (isinstance(n_components, (int, np.integer))
                       and not isinstance(n_components, bool) and eigen_solver != "dense")
    if storage == "implicit":
        if not can_be_implicit:
            raise ValueError(
                f"{parameter}='implicit' computes a few eigenpairs with an iterative "
                f"eigensolver; it cannot run with n_components={n_components!r} and "
                f"eigen_solver={eigen_solver!r} (the whole spectrum, or LAPACK, needs the "
                "stored matrix). Pass an int n_components and eigen_solver='auto', "
                f"'arpack', 'lobpcg' or 'randomized', or {parameter}='stored'.")
        return "implicit"
    n_bytes = m * m * np.dtype(dtype).itemsize
    fits = not budget_applies(n_bytes) or n_bytes <= memory_budget()
    if storage == "auto" and not fits and can_be_implicit:
        return "implicit"
    check_dense_allocation(
        (m, m), dtype, what=what,
        alternative=(f"Pass {parameter}='implicit' (the matrix is never stored: each "
                     "eigensolver product rebuilds it from X, which takes longer; needs an "
                     f"int n_components), {alternatives}"))
    return "stored"
