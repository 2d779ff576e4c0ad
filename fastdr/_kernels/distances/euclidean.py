"""Squared-Euclidean distance kernels between row blocks.

Two routes, picked by the caller:

* **norm trick** for larger d: both sides are centred on the same point ``c`` (distances do
  not change, cancellation shrinks), queries are packed as ``[q - c, 1]`` and targets as
  ``[-2 (t - c), |t - c|^2]``; one GEMM block then yields the selection key
  ``|t - c|^2 - 2 (q - c).(t - c)`` = ``|q - t|^2 - |q - c|^2``. Values that may have
  cancelled (small against the norms) are recomputed exactly. ``pairwise_distances(X)``
  (X against itself) GEMMs the centred rows with themselves instead and adds both norms
  to ``-2 (q - c).(t - c)`` in float64 (:func:`pairwise_self_gemm`).
* **direct sums** for small d, where a GEMM does not pay.

Exact distances always accumulate in float64, so identical rows give exactly 0.
"""

import numpy as np
from numba import njit, prange

from .._numba_ext import store_fence, stream_copy
from ..blocks import block_span
from ..twins import serial_twin


@njit(cache=True, fastmath={"reassoc"})
def sqdist_exact(x, y):
    """Exact squared Euclidean distance of two rows, accumulated in float64. O(d).

    Compiled as its own function with reassociation allowed (and no other fast-math flag:
    no NaN, infinity or contraction assumptions), so that LLVM vectorises the sum: a chain
    of dependent scalar additions costs about four cycles a feature (bench: knn_f32). It is
    deliberately not ``inline="always"``:
    an inlined helper takes its caller's flags, and the kernels that call it are not fast-math.
    The summation order is fixed by the compiled code, so a pair gets the same bits from
    every thread and call; ``x - y`` and ``y - x`` square alike, so it is symmetric; any order
    keeps the error within ``d u`` of the sum (u the float64 unit roundoff).
    """
    acc = 0.0
    for f in range(x.shape[0]):
        diff = np.float64(x[f]) - np.float64(y[f])
        acc += diff * diff
    return acc


@njit(cache=True, inline="always")
def _centred_sqnorm(X, i, centre):
    """``|x_i - c|^2`` accumulated in float64, features in order. O(d)."""
    acc = 0.0
    for f in range(X.shape[1]):
        diff = np.float64(X[i, f]) - np.float64(centre[f])
        acc += diff * diff
    return acc


@njit(cache=True)
def max_centred_sqnorm(X, centre):
    """``max_i |x_i - c|^2`` in float64, serial (a validation step: no launch, no lock).

    inf when a square overflows; values whose squares underflow count as 0. O(m d).
    """
    largest = 0.0
    for i in range(X.shape[0]):
        largest = max(largest, _centred_sqnorm(X, i, centre))
    return largest


@njit(cache=True, parallel=True)
def centred_sqnorms(X, centre):
    """Row norms ``|x - c|^2`` in float64. O(m d)."""
    m = X.shape[0]
    out = np.empty(m, dtype=np.float64)
    for i in prange(m):
        out[i] = _centred_sqnorm(X, i, centre)
    return out


centred_sqnorms_serial = serial_twin(centred_sqnorms)


@njit(cache=True, parallel=True)
def centre_rows(X, centre):
    """Rows ``x - c`` in X's dtype and their squared norms ``|x - c|^2`` in float64 (as
    :func:`centred_sqnorms`), from one pass over X. O(m d)."""
    m, d = X.shape
    out = np.empty((m, d), dtype=X.dtype)
    norms = np.empty(m, dtype=np.float64)
    for i in prange(m):
        for f in range(d):
            out[i, f] = X[i, f] - centre[f]
        norms[i] = _centred_sqnorm(X, i, centre)
    return out, norms


centre_rows_serial = serial_twin(centre_rows)


@njit(cache=True, inline="always")
def pack_query_row(Q, centre, scale, out, i):
    """Row i of ``[s (q - c), 1]`` into ``out`` (rounded to its dtype). O(d).

    Shared by these packers (s = 1) and the k-NN screen's (:mod:`..knn.screen`).
    """
    d = Q.shape[1]
    for f in range(d):
        out[i, f] = (Q[i, f] - centre[f]) * scale
    out[i, d] = 1


@njit(cache=True, parallel=True)
def pack_queries(Q, centre):
    """Return ``[q - c, 1]`` rows, shape (m, d + 1), in Q's dtype. O(m d)."""
    m, d = Q.shape
    out = np.empty((m, d + 1), dtype=Q.dtype)
    for i in prange(m):
        pack_query_row(Q, centre, 1.0, out, i)
    return out


pack_queries_serial = serial_twin(pack_queries)


@njit(cache=True, inline="always")
def pack_target_block(T, centre, scale, norms, shrink, out, b):
    """Block b of ``[-2 s (t - c), s^2 |t - c|^2 (1 - shrink)]`` columns; zero padding.

    Rows of 16 targets are transposed a feature at a time, so the writes run along the
    block (a target at a time, they would stride by the block and alias in L1). Shared by
    these packers (s = 1, no shrink) and the k-NN screen's. O(block d).
    """
    n, d = T.shape
    block = out.shape[2]
    start = b * block
    stop = min(n, start + block)
    for j0 in range(start, stop, 16):
        j1 = min(stop, j0 + 16)
        for f in range(d):
            c = centre[f]
            for j in range(j0, j1):
                out[b, f, j - start] = -2.0 * ((T[j, f] - c) * scale)
    for j in range(start, stop):
        out[b, d, j - start] = norms[j] * scale * scale * (1.0 - shrink)
    out[b, :, stop - start:] = 0


@njit(cache=True, parallel=True)
def pack_targets(T, centre, norms, block):
    """Return targets as GEMM-ready blocks of shape (n_blocks, d + 1, block).

    Column j of block b holds ``[-2 (t - c), |t - c|^2]`` for target ``b * block + j``;
    padding columns are zero and are never read (:func:`pack_target_block`). O(n d).
    """
    n, d = T.shape
    n_blocks = (n + block - 1) // block
    out = np.empty((n_blocks, d + 1, block), dtype=T.dtype)
    for b in prange(n_blocks):
        pack_target_block(T, centre, 1.0, norms, 0.0, out, b)
    return out


pack_targets_serial = serial_twin(pack_targets)


@njit(cache=True, parallel=True)
def pairwise_sqeuclidean_gemm(Q, T, q_packed, t_packed, q_norms, t_norms, tol, take_sqrt,
                              q_block, out, stream):
    """Fill ``out`` (m, n) with squared (or plain) Euclidean distances via the norm trick.

    Parallel over blocks of ``q_block`` query rows; each iteration writes only its own rows of
    ``out``. Values below ``tol * (|q - c|^2 + |t - c|^2)`` are recomputed exactly. ``stream``
    is :func:`fastdr._kernels._numba_ext.misalignment` of ``out`` (-1: plain stores).
    Time O(m n d), extra memory O(q_block x t_block) per iteration (the GEMM's result).
    """
    m = Q.shape[0]
    n = T.shape[0]
    t_block = t_packed.shape[2]
    n_q_blocks = (m + q_block - 1) // q_block
    flat = out.reshape(-1)
    for qb in prange(n_q_blocks):
        q0, q1 = block_span(qb, q_block, m)
        # one tile per iteration, reused for every target block (no allocation per block)
        keys = np.empty((q1 - q0, t_block), dtype=q_packed.dtype)
        for tb in range(t_packed.shape[0]):
            t0, t1 = block_span(tb, t_block, n)
            np.dot(q_packed[q0:q1], t_packed[tb], keys)
            for r in range(q1 - q0):
                i = q0 + r
                _finish_keys_row(Q[i], T, keys[r], q_norms[i], t_norms, tol, take_sqrt, t0,
                                 t1)
                stream_copy(flat, i * n + t0, keys[r], t1 - t0, stream)
        store_fence()


@njit(cache=True, inline="always")
def _finish_keys_row(q, T, keys_row, qn, t_norms, tol, take_sqrt, t0, t1):
    """Turn ``keys_row[:t1 - t0]`` (GEMM keys of q against targets t0..t1) into squared (or
    plain) distances in place, while the row is in cache: a vectorised pass adds the query
    norm and flags cancellation; only a flagged row is revisited for exact values; then the
    square roots."""
    cols = t1 - t0
    flagged = False
    for c in range(cols):
        value = keys_row[c] + qn
        keys_row[c] = value
        flagged |= value < tol * (qn + t_norms[t0 + c])
    _exact_fixes_and_roots(q, T, keys_row, qn, t_norms, tol, take_sqrt, t0, cols, flagged)


@njit(cache=True, inline="always")
def _exact_fixes_and_roots(q, T, row, qn, t_norms, tol, take_sqrt, t0, cols, flagged):
    """The end of both finishing passes: where the first pass ``flagged`` the row, recompute
    exactly every value below ``tol * (qn + |t - c|^2)``; then the square roots."""
    if flagged:
        for c in range(cols):
            if row[c] < tol * (qn + t_norms[t0 + c]):
                row[c] = sqdist_exact(q, T[t0 + c])
    if take_sqrt:
        for c in range(cols):
            row[c] = np.sqrt(row[c])


@njit(cache=True, inline="always")
def _finish_gram_row(q, T, dots, qn, norms, tol, take_sqrt, t0, t1):
    """Turn ``dots[:t1 - t0]`` (``(q - c).(t - c)`` for targets t0..t1) into squared (or
    plain) distances ``|q - c|^2 + |t - c|^2 - 2 (q - c).(t - c)`` in place, in float64
    before the store; values below ``tol`` times the two norms are recomputed exactly, then
    the square roots. ``qn + norms[j]`` is the same sum for (i, j) and (j, i), so equal
    dots give equal distances."""
    cols = t1 - t0
    flagged = False
    for c in range(cols):
        both = qn + norms[t0 + c]
        value = both - 2.0 * dots[c]
        dots[c] = value
        flagged |= value < tol * both
    _exact_fixes_and_roots(q, T, dots, qn, norms, tol, take_sqrt, t0, cols, flagged)


@njit(cache=True, parallel=True)
def pairwise_self_gemm(X, centred, norms, tol, take_sqrt, block, out, stream):
    """Fill ``out`` (m, m) with the distances of X to itself, computing each pair once.

    ``centred`` holds the rows ``x - c`` (:func:`centre_rows`) and ``norms`` their float64
    squared norms. Tiles (bi, bj) with bi <= bj of ``block`` rows each: one GEMM of the two
    row blocks of ``centred`` (the second one transposed in place, so there is no packed
    copy) gives the tile's dot products, which are finished in place (:func:`_finish_gram_row`)
    and then written to ``out[bi rows, bj cols]`` and, transposed, to ``out[bj rows, bi
    cols]``; a diagonal tile copies its upper triangle onto its lower one. So the result is
    exactly symmetric and independent of the thread count. ``out`` is written once and never
    read, with streaming stores unless ``stream`` (the misalignment from
    :func:`fastdr._kernels._numba_ext.misalignment`) is -1. Half the GEMM work of
    :func:`pairwise_sqeuclidean_gemm`; memory O(threads x block^2).
    """
    m = X.shape[0]
    n_blocks = (m + block - 1) // block
    n_pairs = n_blocks * (n_blocks + 1) // 2
    pair_i = np.empty(n_pairs, dtype=np.int64)
    pair_j = np.empty(n_pairs, dtype=np.int64)
    p = 0
    for bi in range(n_blocks):
        for bj in range(bi, n_blocks):
            pair_i[p] = bi
            pair_j[p] = bj
            p += 1
    flat = out.reshape(-1)
    for p in prange(n_pairs):
        bi = pair_i[p]
        bj = pair_j[p]
        r0 = bi * block
        r1 = min(m, r0 + block)
        c0 = bj * block
        c1 = min(m, c0 + block)
        rows = r1 - r0
        cols = c1 - c0
        dots = np.empty((rows, cols), dtype=centred.dtype)
        mirror = np.empty((16, block), dtype=centred.dtype)
        np.dot(centred[r0:r1], centred[c0:c1].T, dots)
        for r in range(rows):
            i = r0 + r
            _finish_gram_row(X[i], X, dots[r], norms[i], norms, tol, take_sqrt, c0, c1)
        if bi == bj:  # the GEMM rounds (i, j) and (j, i) apart: the upper triangle is kept
            for r in range(1, rows):
                for c in range(r):
                    dots[r, c] = dots[c, r]
        for r in range(rows):
            stream_copy(flat, (r0 + r) * m + c0, dots[r], cols, stream)
        if bi != bj:  # the mirror tile from the cached one, 16 output rows at a time
            for j0 in range(0, cols, 16):
                j1 = min(cols, j0 + 16)
                for r in range(rows):
                    for c in range(j0, j1):
                        mirror[c - j0, r] = dots[r, c]
                for c in range(j0, j1):
                    stream_copy(flat, (c0 + c) * m + r0, mirror[c - j0], rows, stream)
        store_fence()


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
