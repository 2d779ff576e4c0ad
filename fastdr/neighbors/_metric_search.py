"""Exact search for the metrics off the Euclidean GEMM path.

Routes (see :class:`fastdr._distance.metric.Metric`):

* ``"minkowski"`` (manhattan, chebyshev, general p) and ``"cosine"``: the blocked kernels of
  :mod:`fastdr._kernels.distances.minkowski`, on rows the metric already transformed;
* ``"precomputed"``: heap selection over the rows of the given distance matrix;
* ``"callable"``: the user's function called once per pair from Python (the slow path: about
  a microsecond or more per pair, O(m n) memory for the distance block), then the same
  selection as ``"precomputed"``. Sparse rows reach it as 1 x d sparse matrices. A
  numba-jitted function (``@numba.njit``) without ``metric_params`` is instead called, on
  dense rows, from a parallel kernel compiled for it (compiled on first use, not cached).

Everything returns *reduced* values in float64 (``Metric.reported`` converts them).
"""

import numpy as np
import scipy.sparse
from numba.extending import is_jitted

from .._config import MINKOWSKI_T_BLOCK
from .._distance.norm_trick import target_block
from .._runtime.threads import parallel_section
from .._validation.budget import check_dense_allocation
from .._validation.callables import check_values, probe
from ._blocks import query_block, self_offset


def _kernels():
    from .._kernels.distances import minkowski  # numba: compiled on first use only

    return minkowski


def _packed(metric, T):
    block = target_block(T.shape[0]) if metric.route == "cosine" else MINKOWSKI_T_BLOCK
    return _kernels().pack_transposed(T, min(block, max(1, T.shape[0])))


def callable_matrix(metric, Q, T):
    """Distances of a callable metric between the rows of Q and T, one Python call per
    pair (the slow path), as a float64 (m, n) array, checked finite and >= 0
    (:mod:`fastdr._validation.callables`)."""
    m, n = Q.shape[0], T.shape[0]
    check_dense_allocation((m, n), np.float64, what=f"The {m} x {n} distance block of the "
                           "callable metric", alternative="Query fewer points at a time.")
    func, params = metric.func, metric.params
    out = np.full((m, n), np.nan)  # NaN marks a pair a jitted callable failed to write
    q_row, t_row = _row_reader(Q), _row_reader(T)
    if m and n:
        probe(func, q_row(0), t_row(0), params, role="metric")
        dense = not (scipy.sparse.issparse(Q) or scipy.sparse.issparse(T))
        if dense and is_jitted(func) and not params:
            try:
                _kernels().pairwise_jitted(Q, T, func, out)
            except SystemError:
                # numba's TBB layer: an exception raised on the calling thread's share of the
                # loop is left set and CPython reports a SystemError; the unwritten pairs stay
                # NaN and check_values replays the first, raising the callable's own error
                pass
        else:
            for i in range(m):
                x = q_row(i)
                for j in range(n):
                    out[i, j] = func(x, t_row(j), **params)
        check_values(out, func, q_row, t_row, params, role="metric")
    return out


def _row_reader(A):
    """Row i as the callable gets it: a 1-D array, or for sparse A a 1 x d sparse matrix of
    A's own kind (scikit-learn's ``A[[i], :]``: a 1-D sparse array would be new to the
    callables written for scikit-learn)."""
    if scipy.sparse.issparse(A):
        return lambda i: A[[i], :]
    return A.__getitem__


def _dense_rows(metric, T, Q):
    """The (m, n) distance rows behind a precomputed or callable search."""
    if metric.route == "precomputed":
        return np.ascontiguousarray(Q, dtype=np.float64)
    return callable_matrix(metric, Q, T)


def knn(metric, T, Q, k, *, self_query, n_jobs):
    """k nearest training rows by (reduced distance, index).

    Parameters
    ----------
    metric : Metric
    T : the training rows (transformed), or the (n, n) training distances (precomputed)
    Q : the query rows (transformed), or the (m, n) query distances (precomputed); T itself
        when ``self_query``
    k : int
    self_query : bool
        Query i is training point i and excludes itself by index
        (:func:`fastdr.neighbors._blocks.self_offset`).
    n_jobs : int or None

    Returns
    -------
    reduced : (m, k) float64
    indices : (m, k) int64
    """
    m = Q.shape[0]
    out_d = np.empty((m, k), dtype=np.float64)
    out_i = np.empty((m, k), dtype=np.int64)
    offset = self_offset(self_query)
    kernels = _kernels()
    if metric.route in ("precomputed", "callable"):
        with parallel_section(n_jobs):
            D = _dense_rows(metric, T, Q)
            kernels.knn_rows(D, k, offset, out_d, out_i)
        return out_d, out_i
    with parallel_section(n_jobs) as threads:
        packed = _packed(metric, T)
        kernels.knn_metric(Q, packed, T.shape[0], metric.kind, metric.p, k, offset,
                           query_block(m, threads), out_d, out_i)
    return out_d, out_i


def radius(metric, T, Q, reduced_radius, *, self_query, n_jobs):
    """Training rows within ``reduced_radius`` (inclusive) of each query, as CSR arrays
    (indptr, indices ascending in each row, reduced distances); arguments as :func:`knn`."""
    m = Q.shape[0]
    offset = self_offset(self_query)
    indptr = np.zeros(m + 1, dtype=np.int64)
    kernels = _kernels()
    empty_d = np.empty(0, dtype=np.float64)
    empty_i = np.empty(0, dtype=np.int64)
    if metric.route in ("precomputed", "callable"):
        with parallel_section(n_jobs):
            D = _dense_rows(metric, T, Q)
            kernels.radius_rows(D, reduced_radius, offset, indptr, empty_d, empty_i, False)
            np.cumsum(indptr[1:], out=indptr[1:])
            out_d = np.empty(indptr[-1], dtype=np.float64)
            out_i = np.empty(indptr[-1], dtype=np.int64)
            kernels.radius_rows(D, reduced_radius, offset, indptr, out_d, out_i, True)
        return indptr, out_i, out_d
    with parallel_section(n_jobs) as threads:
        packed = _packed(metric, T)
        args = (Q, packed, T.shape[0], metric.kind, metric.p, reduced_radius, offset,
                query_block(m, threads), indptr)
        kernels.radius_metric(*args, empty_d, empty_i, False)
        np.cumsum(indptr[1:], out=indptr[1:])
        out_d = np.empty(indptr[-1], dtype=np.float64)
        out_i = np.empty(indptr[-1], dtype=np.int64)
        kernels.radius_metric(*args, out_d, out_i, True)
    return indptr, out_i, out_d


def pairwise(metric, Q, T, *, n_jobs):
    """(m, n) reduced distances between transformed rows (minkowski and cosine routes) or
    the callable's distances."""
    if metric.route == "callable":
        with parallel_section(n_jobs):
            return callable_matrix(metric, Q, T)
    m = Q.shape[0]
    out = np.empty((m, T.shape[0]), dtype=np.float64)
    with parallel_section(n_jobs) as threads:
        packed = _packed(metric, T)
        _kernels().pairwise_metric(Q, packed, T.shape[0], metric.kind, metric.p,
                                   query_block(m, threads), out)
    return out
