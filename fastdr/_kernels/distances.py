"""Squared-Euclidean distance kernels between row blocks.

Two routes, picked by the caller:

* **norm trick** for larger d: both sides are centred on the same point ``c`` (distances do
  not change, cancellation shrinks), queries are packed as ``[q - c, 1]`` and targets as
  ``[-2 (t - c), |t - c|^2]``; one GEMM block then yields the selection key
  ``|t - c|^2 - 2 (q - c).(t - c)`` = ``|q - t|^2 - |q - c|^2``. Values that may have
  cancelled (small against the norms) are recomputed exactly.
* **direct sums** for small d, where a GEMM does not pay.

Exact distances always accumulate in float64, so identical rows give exactly 0.
"""

import numpy as np
from numba import njit, prange


@njit(cache=True, inline="always")
def sqdist_exact(x, y):
    """Exact squared Euclidean distance of two rows, accumulated in float64. O(d)."""
    acc = 0.0
    for f in range(x.shape[0]):
        diff = np.float64(x[f]) - np.float64(y[f])
        acc += diff * diff
    return acc


@njit(cache=True)
def max_centred_sqnorm(X, centre):
    """``max_i |x_i - c|^2`` in float64, serial (a validation step: no launch, no lock).

    inf when a square overflows; values whose squares underflow count as 0. O(m d).
    """
    m, d = X.shape
    largest = 0.0
    for i in range(m):
        acc = 0.0
        for f in range(d):
            diff = np.float64(X[i, f]) - centre[f]
            acc += diff * diff
        largest = max(largest, acc)
    return largest


@njit(cache=True, parallel=True)
def centred_sqnorms(X, centre):
    """Row norms ``|x - c|^2`` in float64. O(m d)."""
    m, d = X.shape
    out = np.empty(m, dtype=np.float64)
    for i in prange(m):
        acc = 0.0
        for f in range(d):
            diff = np.float64(X[i, f]) - np.float64(centre[f])
            acc += diff * diff
        out[i] = acc
    return out


@njit(cache=True, parallel=True)
def pack_queries(Q, centre):
    """Return ``[q - c, 1]`` rows, shape (m, d + 1), in Q's dtype. O(m d)."""
    m, d = Q.shape
    out = np.empty((m, d + 1), dtype=Q.dtype)
    for i in prange(m):
        for f in range(d):
            out[i, f] = Q[i, f] - centre[f]
        out[i, d] = 1
    return out


@njit(cache=True, parallel=True)
def pack_targets(T, centre, norms, block):
    """Return targets as GEMM-ready blocks of shape (n_blocks, d + 1, block).

    Column j of block b holds ``[-2 (t - c), |t - c|^2]`` for target ``b * block + j``;
    padding columns are zero and are never read. O(n d).
    """
    n, d = T.shape
    n_blocks = (n + block - 1) // block
    out = np.zeros((n_blocks, d + 1, block), dtype=T.dtype)
    for b in prange(n_blocks):
        start = b * block
        stop = min(n, start + block)
        for j in range(start, stop):
            for f in range(d):
                out[b, f, j - start] = -2 * (T[j, f] - centre[f])
            out[b, d, j - start] = norms[j]
    return out


@njit(cache=True, parallel=True)
def pairwise_sqeuclidean_gemm(Q, T, q_packed, t_packed, q_norms, t_norms, tol, take_sqrt,
                              q_block, out):
    """Fill ``out`` (m, n) with squared (or plain) Euclidean distances via the norm trick.

    Parallel over blocks of ``q_block`` query rows; each iteration writes only its own rows of
    ``out``. Values below ``tol * (|q - c|^2 + |t - c|^2)`` are recomputed exactly.
    Time O(m n d), extra memory O(q_block x t_block) per iteration (the GEMM's result).
    """
    m = Q.shape[0]
    n = T.shape[0]
    t_block = t_packed.shape[2]
    n_q_blocks = (m + q_block - 1) // q_block
    for qb in prange(n_q_blocks):
        q0 = qb * q_block
        q1 = min(m, q0 + q_block)
        for tb in range(t_packed.shape[0]):
            t0 = tb * t_block
            t1 = min(n, t0 + t_block)
            keys = np.dot(q_packed[q0:q1], t_packed[tb])
            for r in range(q1 - q0):
                i = q0 + r
                qn = q_norms[i]
                for c in range(t1 - t0):
                    j = t0 + c
                    value = np.float64(keys[r, c]) + qn
                    if value < tol * (qn + t_norms[j]):
                        value = sqdist_exact(Q[i], T[j])
                    if take_sqrt:
                        value = np.sqrt(value)
                    out[i, j] = value


@njit(cache=True, parallel=True)
def pairwise_sqeuclidean_direct(Q, T, take_sqrt, out):
    """Fill ``out`` (m, n) with exact squared (or plain) distances by direct sums. O(m n d)."""
    m = Q.shape[0]
    n = T.shape[0]
    for i in prange(m):
        for j in range(n):
            value = sqdist_exact(Q[i], T[j])
            if take_sqrt:
                value = np.sqrt(value)
            out[i, j] = value
