"""``pairwise_distances``: dense distance matrices through the blocked kernels."""

import numpy as np
import scipy.sparse

from ._config import GEMM_MIN_DIM, PAIRWISE_QUERY_BLOCK
from ._distance_checks import check_distance_magnitude
from ._kernels import distances as dist_kernels
from ._metric import apply_linear_map, resolve_metric
from ._norm_trick import norm_trick_setup, target_block
from ._parallel import parallel_section
from ._validation import check_array, check_dense_allocation


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
    if scipy.sparse.issparse(X) or scipy.sparse.issparse(Y):  # sparse hook (issue 15)
        from .neighbors._sparse_search import pairwise_distances as sparse_pairwise
        return sparse_pairwise(X, Y, metric=metric, metric_params=metric_params,
                               n_jobs=n_jobs)
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
            trick = norm_trick_setup(T, None if Y is None else Q)
            t_packed = dist_kernels.pack_targets(T, trick.centre, trick.t_norms.astype(T.dtype),
                                                 target_block(n))
            q_packed = dist_kernels.pack_queries(Q, trick.centre)
            dist_kernels.pairwise_sqeuclidean_gemm(Q, T, q_packed, t_packed, trick.q_norms,
                                                   trick.t_norms, trick.tol, not squared,
                                                   PAIRWISE_QUERY_BLOCK, out)
    return out
