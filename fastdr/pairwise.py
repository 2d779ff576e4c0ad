"""``pairwise_distances``: dense distance matrices through the blocked kernels."""

import numpy as np
import scipy.sparse

from ._config import (
    GEMM_MIN_DIM,
    PAIRWISE_QUERY_BLOCK,
    PAIRWISE_SELF_BLOCK,
    PAIRWISE_SMALL_ROWS,
    PAIRWISE_STREAM_MIN_BYTES,
)
from ._distance.metric import allows_nan, nan_policy, resolve_neighbors_metric
from ._distance.norm_trick import norm_trick_setup, prep_kernel, self_norm_trick, target_block
from ._kernels._numba_ext import misalignment
from ._kernels.distances import euclidean as dist_kernels
from ._runtime.threads import parallel_section
from ._validation.arrays import check_array
from ._validation.budget import check_dense_allocation
from ._validation.magnitudes import check_distance_magnitude


def pairwise_distances(X, Y=None, metric="euclidean", *, n_jobs=None, ensure_all_finite=True,
                       metric_params=None, **kwds):
    """Distances between the rows of X and the rows of Y (or of X).

    Parameters
    ----------
    X : array-like of shape (m, d), or (m, n) distances with ``metric="precomputed"``
    Y : array-like of shape (n, d) or None
        None means X itself; the diagonal is then exactly 0 (except for a callable, which
        is called on each pair).
    metric : str, callable or fitted metric learner, default="euclidean"
        ``"euclidean"``/``"l2"``, ``"sqeuclidean"``, ``"minkowski"`` (``p=``, ``w=``),
        ``"manhattan"``/``"cityblock"``/``"l1"``, ``"chebyshev"``/``"infinity"``,
        ``"cosine"`` (a zero row is at distance 1, as in scikit-learn),
        ``"mahalanobis"`` (``VI=``, ``V=`` or ``M=``), ``"nan_euclidean"`` (NaN marks a
        missing value; a pair with no feature present in both gets NaN, as in
        scikit-learn), the other names of :class:`fastdr.NearestNeighbors`,
        ``"precomputed"`` (X is returned,
        checked), a callable ``f(x, y, **kwds) -> float`` (called once per pair in Python:
        the slow path) or a fitted metric learner.
    n_jobs : int or None
        Threads for this call only.
    ensure_all_finite : bool, default=True
        Accepted for scikit-learn compatibility; fastdr's kernels always require finite
        input (NaN has no distance), so False is refused, except with ``"nan_euclidean"``,
        which accepts NaN (never inf) whatever this says, as in scikit-learn.
    metric_params : dict or None
        The metric's parameters as one dict (a fastdr extra); ``**kwds`` are added to it.
    **kwds
        The metric's parameters, as scikit-learn passes them (``p=3``, ``VI=...``).

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
    if not ensure_all_finite and not allows_nan(metric):
        raise ValueError("ensure_all_finite=False is not supported: fastdr's distance kernels "
                         "need finite input. Impute or drop the NaN/inf entries first.")
    params = {**(metric_params or {}), **kwds}
    if scipy.sparse.issparse(X) or scipy.sparse.issparse(Y):  # sparse hook (issue 15)
        from .neighbors._sparse_search import pairwise_distances as sparse_pairwise
        return sparse_pairwise(X, Y, metric=metric, metric_params=params or None,
                               n_jobs=n_jobs)
    if isinstance(metric, str) and metric == "precomputed":
        return _checked_precomputed(X, Y)
    X = check_array(X, allow_nonfinite=nan_policy(metric))
    if Y is None:
        Y_arr = X
    else:
        Y_arr = check_array(Y, name="Y", allow_nonfinite=nan_policy(metric))
        if Y_arr.shape[1] != X.shape[1]:
            raise ValueError(
                f"X and Y must have the same number of features; got {X.shape[1]} and "
                f"{Y_arr.shape[1]}."
            )
        Y_arr = Y_arr.astype(X.dtype, copy=False)
    spec = resolve_neighbors_metric(metric, params.pop("p", None) if metric == "minkowski"
                                    else None, params, X.shape[1], warn_p=False,
                                    pairwise=True)
    Q = spec.transform_rows(X)
    T = Q if Y is None else spec.transform_rows(Y_arr)
    m, n = Q.shape[0], T.shape[0]
    check_dense_allocation((m, n), X.dtype, what=f"The {m} x {n} distance matrix",
                           alternative="Use float32 input, fewer rows, or "
                           "fastdr.NearestNeighbors for k-NN queries that never build it.")
    if spec.route != "euclidean":
        from .neighbors import _metric_search

        out = spec.reported(_metric_search.pairwise(spec, Q, T, n_jobs=n_jobs))
        # an exact 0 on the diagonal; nan_euclidean's kernel gives it already, and NaN for
        # an all-missing row, as scikit-learn (it has no distance even to itself)
        if Y is None and spec.route != "callable" and not allows_nan(metric):
            np.fill_diagonal(out, 0.0)
        return out.astype(X.dtype, copy=False)
    squared = spec.squared
    trick = None
    if Y is None and Q.shape[1] >= GEMM_MIN_DIM:
        # the norm trick's centred norms are the magnitude check's: one mean, one pass
        with parallel_section(n_jobs):
            trick, centred = self_norm_trick(T)
        check_distance_magnitude(T, "X", centre=trick.centre, sq_norms=trick.t_norms,
                                 training=True)
    else:
        centre = check_distance_magnitude(T, "X" if Y is None else "Y")
        if Y is not None:  # without Y, Q is T: its rows were just checked against this centre
            check_distance_magnitude(Q, centre=centre)
    out = np.empty((m, n), dtype=X.dtype)
    stream = misalignment(out, PAIRWISE_STREAM_MIN_BYTES)
    with parallel_section(n_jobs):
        if Q.shape[1] < GEMM_MIN_DIM:
            dist_kernels.pairwise_sqeuclidean_direct(Q, T, not squared, out)
        else:
            if trick is None:
                trick = norm_trick_setup(T, None if Y is None else Q)
            if Y is None:
                # each pair once, mirrored (half the GEMM work)
                block = PAIRWISE_SELF_BLOCK // (2 if m <= PAIRWISE_SMALL_ROWS else 1)
                dist_kernels.pairwise_self_gemm(T, centred, trick.t_norms, trick.tol,
                                                not squared, block, out, stream)
                return out
            t_packed = prep_kernel(dist_kernels.pack_targets, T)(
                T, trick.centre, trick.t_norms.astype(T.dtype), target_block(n))
            q_packed = prep_kernel(dist_kernels.pack_queries, Q)(Q, trick.centre)
            dist_kernels.pairwise_sqeuclidean_gemm(Q, T, q_packed, t_packed, trick.q_norms,
                                                   trick.t_norms, trick.tol, not squared,
                                                   PAIRWISE_QUERY_BLOCK, out, stream)
    return out


def _checked_precomputed(X, Y):
    """``metric="precomputed"``: X itself, checked to be distances."""
    X = check_array(X)
    if Y is not None:
        Y_arr = check_array(Y, name="Y")
        if X.shape[1] != Y_arr.shape[0]:
            raise ValueError(
                "Precomputed metric requires shape (n_queries, n_indexed). Got "
                f"({X.shape[0]}, {X.shape[1]}) for {Y_arr.shape[0]} indexed. Pass the "
                "distances from each row of X to each row of Y."
            )
    if X.size and X.min() < 0:
        raise ValueError(
            "Negative values in data passed to precomputed distance matrix (smallest "
            f"{X.min():.3g}). Pass distances (>= 0), not similarities."
        )
    return X
