"""``pairwise_distances``: dense distance matrices through the blocked kernels."""

import numpy as np

from ._distance_checks import check_distance_magnitude
from ._kernels import distances as dist_kernels
from ._metric import apply_linear_map, resolve_metric
from ._parallel import parallel_section
from ._validation import check_array, check_dense_allocation
from .neighbors._search import GEMM_MIN_DIM, target_block

# Values of |x - y|^2 below TOL * (|x - c|^2 + |y - c|^2) may have lost their digits to
# cancellation in the norm trick and are recomputed exactly.
_RECOMPUTE_TOL = {np.dtype(np.float64): 1e-6, np.dtype(np.float32): 1e-2}


def pairwise_distances(X, Y=None, *, metric="euclidean", metric_params=None, n_jobs=None):
    """Distances between the rows of X and the rows of Y (or of X).

    Parameters
    ----------
    X : array-like of shape (m, d)
    Y : array-like of shape (n, d) or None
        None means X itself; the diagonal is then exactly 0.
    metric : {"euclidean", "sqeuclidean", "mahalanobis"} or fitted metric learner
    metric_params : dict or None
        ``{"M": M}`` or ``{"VI": VI}`` for ``"mahalanobis"``.
    n_jobs : int or None
        Threads for this call only.

    Returns
    -------
    ndarray of shape (m, n)
        In X's dtype (float32 stays float32). Never negative; exactly 0 for identical rows.

    Raises
    ------
    fastdr.MemoryBudgetError
        When the m x n result would not fit in the memory budget.

    Notes
    -----
    Time O(m n d): for d >= 16 the cross term runs as blocked GEMM on centred data; values
    that may have cancelled are recomputed exactly. Extra memory is O(d (m + n)).
    """
    X = check_array(X)
    if Y is None:
        Y_arr = X
    else:
        Y_arr = check_array(Y, name="Y")
        if Y_arr.shape[1] != X.shape[1]:
            raise ValueError(
                f"X and Y must have the same number of features; got {X.shape[1]} and "
                f"{Y_arr.shape[1]}."
            )
        Y_arr = Y_arr.astype(X.dtype, copy=False)
    linear_map, squared = resolve_metric(metric, metric_params, X.shape[1])
    Q = apply_linear_map(X, linear_map)
    T = Q if Y is None else apply_linear_map(Y_arr, linear_map)
    check_distance_magnitude(Q, centre=check_distance_magnitude(T, "X" if Y is None else "Y"))
    m, n = Q.shape[0], T.shape[0]
    check_dense_allocation((m, n), X.dtype, what=f"The {m} x {n} distance matrix",
                           alternative="Use float32 input, fewer rows, or "
                           "fastdr.NearestNeighbors for k-NN queries that never build it.")
    out = np.empty((m, n), dtype=X.dtype)
    with parallel_section(n_jobs):
        if Q.shape[1] < GEMM_MIN_DIM:
            dist_kernels.pairwise_sqeuclidean_direct(Q, T, not squared, out)
        else:
            centre = T.mean(axis=0, dtype=np.float64).astype(T.dtype)
            t_norms = dist_kernels.centred_sqnorms(T, centre)
            q_norms = t_norms if Y is None else dist_kernels.centred_sqnorms(Q, centre)
            t_packed = dist_kernels.pack_targets(T, centre, t_norms.astype(T.dtype),
                                                 target_block(n))
            q_packed = dist_kernels.pack_queries(Q, centre)
            tol = _RECOMPUTE_TOL[np.dtype(X.dtype)]
            dist_kernels.pairwise_sqeuclidean_gemm(Q, T, q_packed, t_packed, q_norms, t_norms,
                                                   tol, not squared, out)
    return out
