"""Sums over index pairs for MMC (Xing et al., 2002): never an n x d x d array.

A pair k joins rows ``a[k]`` and ``b[k]`` of X; ``v_k = x_a - x_b``. The kernels split the
pairs into a fixed number of chunks (independent of the thread count), gather each chunk's
differences into a small buffer and hand it to BLAS; partial sums are merged serially in
chunk order, so results do not depend on the number of threads.
"""

import numpy as np
from numba import njit, prange

from ..._config import MMC_PAIR_CHUNK as _CHUNK
from ..twins import serial_twin


@njit(cache=True)
def _gather_differences(X, a, b, start, stop, out):
    """Rows ``v_k`` for pairs start..stop into ``out``. O(n d)."""
    d = X.shape[1]
    for t in range(stop - start):
        k = start + t
        for f in range(d):
            diff = X[a[k], f] - X[b[k], f]
            out[t, f] = diff


@njit(cache=True)
def _outer_chunk(X, a, b, weights, start, stop, out):
    """``out = sum_{start <= k < stop} weights[k] v_k v_k^T`` by one BLAS product."""
    d = X.shape[1]
    diffs = np.empty((stop - start, d))
    _gather_differences(X, a, b, start, stop, diffs)
    scaled = np.empty((stop - start, d))
    for t in range(stop - start):
        for f in range(d):
            scaled[t, f] = weights[start + t] * diffs[t, f]
    out[:, :] = np.dot(diffs.T, scaled)


@njit(cache=True)
def _merge_outer(partial):
    """The chunks' sums in chunk order, symmetrised."""
    out = np.zeros(partial.shape[1:])
    for c in range(partial.shape[0]):
        out += partial[c]
    return 0.5 * (out + out.T)


@njit(cache=True, parallel=True)
def pair_outer_sum(X, a, b, weights):
    """``sum_k weights[k] v_k v_k^T``.

    The must-link scatter and the gradient of the cannot-link distance sum are both this
    sum. Time O(n d^2), memory O(n_chunks d^2 + chunk d).
    :func:`pair_outer_sum_serial` is the same sum, bit for bit, without a parallel launch.

    Returns
    -------
    ndarray of shape (d, d)
    """
    n = a.shape[0]
    n_chunks = (n + _CHUNK - 1) // _CHUNK
    partial = np.zeros((n_chunks, X.shape[1], X.shape[1]))
    for c in prange(n_chunks):
        _outer_chunk(X, a, b, weights, c * _CHUNK, min(n, (c + 1) * _CHUNK), partial[c])
    return _merge_outer(partial)


pair_outer_sum_serial = serial_twin(pair_outer_sum)


@njit(cache=True)
def _quadratic_chunk(X, a, b, M, start, stop, out):
    """``out[k] = v_k^T M v_k`` for pairs start..stop, by one BLAS product."""
    d = X.shape[1]
    diffs = np.empty((stop - start, d))
    _gather_differences(X, a, b, start, stop, diffs)
    mapped = np.dot(diffs, M)
    for t in range(stop - start):
        acc = 0.0
        for f in range(d):
            acc += mapped[t, f] * diffs[t, f]
        out[start + t] = acc


@njit(cache=True, parallel=True)
def pair_quadratic_forms(X, a, b, M):
    """``q_k = v_k^T M v_k`` for every pair (squared Mahalanobis distances). O(n d^2).
    :func:`pair_quadratic_forms_serial` gives the same values without a parallel launch."""
    n = a.shape[0]
    out = np.empty(n)
    n_chunks = (n + _CHUNK - 1) // _CHUNK
    for c in prange(n_chunks):
        _quadratic_chunk(X, a, b, M, c * _CHUNK, min(n, (c + 1) * _CHUNK), out)
    return out


pair_quadratic_forms_serial = serial_twin(pair_quadratic_forms)


@njit(cache=True)
def pair_diagonal_forms(X, a, b, w):
    """``q_k = sum_f w_f v_kf^2`` for every pair (diagonal M = diag(w)). O(n d), serial.

    Memory-bound and light: threads would not pay for their start-up (and compile time).
    """
    n = a.shape[0]
    d = X.shape[1]
    out = np.empty(n)
    for k in range(n):
        acc = 0.0
        for f in range(d):
            diff = X[a[k], f] - X[b[k], f]
            acc += w[f] * diff * diff
        out[k] = acc
    return out


@njit(cache=True)
def pair_squared_sum(X, a, b, weights):
    """``sum_k weights[k] v_k ** 2`` (elementwise squares), the diagonal solver's gradient.

    Time O(n d), serial (light and memory-bound), summed in chunks of pairs in a fixed order.

    Returns
    -------
    ndarray of shape (d,)
    """
    n = a.shape[0]
    d = X.shape[1]
    out = np.zeros(d)
    partial = np.empty(d)
    for start in range(0, n, _CHUNK):
        partial[:] = 0.0
        for k in range(start, min(n, start + _CHUNK)):
            for f in range(d):
                diff = X[a[k], f] - X[b[k], f]
                partial[f] += weights[k] * diff * diff
        out += partial
    return out
