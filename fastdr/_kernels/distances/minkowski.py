"""Blocked k-NN, radius and pairwise kernels for the Minkowski family and cosine.

Targets are packed transposed in blocks, ``(n_blocks, d, t_block)``, so the innermost loop of
a Minkowski tile runs over targets with one accumulator each (vectorisable without
reassociating a sum). Every kernel works on *reduced* distances, ``kind`` being a code of
:mod:`fastdr._kernels.codes`:

* ``MANHATTAN``: ``sum |q - t|``;
* ``CHEBYSHEV``: ``max |q - t|``;
* ``MINKOWSKI``: ``sum |q - t|^p`` (the caller takes the ``1/p``-th power);
* ``COSINE``: ``1 - q.t`` clipped to [0, 2], on rows the caller normalised, by one GEMM per
  tile;
* ``BRAYCURTIS``: ``sum |q - t| / sum (|q| + |t|)`` (scikit-learn's neighbours) and
  ``SCIPY_BRAYCURTIS``: ``sum |q - t| / sum |q + t|`` (scipy's, and scikit-learn's
  ``pairwise_distances``'); 0 when the denominator is 0;
* ``CANBERRA``: ``sum |q - t| / (|q| + |t|)`` over the features where ``|q| + |t| > 0``;
* ``HAMMING``, the boolean codes ``DICE`` to ``YULE`` and ``HAVERSINE``: one target at a time
  (:func:`pair_value`), with scipy's definitions;
* ``NAN_EUCLIDEAN``: one target at a time (:func:`nan_euclidean_pair`), scikit-learn's
  ``nan_euclidean_distances``; ``inf`` for a pair with no feature present in both.

Parallel over blocks of query rows; each iteration owns its rows of the outputs. The k-NN
selection is the bounded heap of :mod:`fastdr._kernels.heap` (ties by the smaller index).
Memory O(threads x q_block x t_block) besides the outputs.
"""

import numpy as np
from numba import njit, prange

from ..blocks import block_span, skipped_target
from ..codes import (
    BRAYCURTIS,
    CANBERRA,
    CHEBYSHEV,
    COSINE,
    DICE,
    HAMMING,
    HAVERSINE,
    JACCARD,
    MANHATTAN,
    NAN_EUCLIDEAN,
    ROGERSTANIMOTO,
    RUSSELLRAO,
    SCIPY_BRAYCURTIS,
    SOKALSNEATH,
)
from ..heap import empty_heap, empty_heaps, heap_sort_into, heaps_sort_into
from ..knn.brute import select_row_candidates


@njit(cache=True, parallel=True)
def pack_transposed(T, block):
    """Targets as blocks of shape (n_blocks, d, block): column j of block b is target
    ``b * block + j``; padding columns are zero and never read. O(n d)."""
    n, d = T.shape
    n_blocks = (n + block - 1) // block
    out = np.zeros((n_blocks, d, block), dtype=T.dtype)
    for b in prange(n_blocks):
        start = b * block
        for j in range(start, min(n, start + block)):
            for f in range(d):
                out[b, f, j - start] = T[j, f]
    return out


@njit(cache=True)
def minkowski_row(q, t_block, n_valid, kind, p, acc):
    """Reduced distances of one query row to the ``n_valid`` targets of one packed block,
    written to ``acc[:n_valid]`` (float64). O(d n_valid)."""
    d = q.shape[0]
    for c in range(n_valid):
        acc[c] = 0.0
    if kind == MANHATTAN:
        for f in range(d):
            qf = np.float64(q[f])
            for c in range(n_valid):
                acc[c] += abs(qf - np.float64(t_block[f, c]))
    elif kind == CHEBYSHEV:
        for f in range(d):
            qf = np.float64(q[f])
            for c in range(n_valid):
                diff = abs(qf - np.float64(t_block[f, c]))
                prev = acc[c]
                acc[c] = diff if diff > prev else prev  # a select: vectorises
    elif kind == BRAYCURTIS or kind == SCIPY_BRAYCURTIS:
        for f in range(d):
            qf = np.float64(q[f])
            for c in range(n_valid):
                acc[c] += abs(qf - np.float64(t_block[f, c]))
        absolute_sum = kind == SCIPY_BRAYCURTIS  # |q + t|; else |q| + |t|
        for c in range(n_valid):
            den = 0.0
            for f in range(d):
                qf, tf = np.float64(q[f]), np.float64(t_block[f, c])
                den += abs(qf + tf) if absolute_sum else abs(qf) + abs(tf)
            acc[c] = acc[c] / den if den > 0.0 else 0.0
    elif kind >= HAMMING:
        for c in range(n_valid):
            acc[c] = pair_value(q, t_block, c, kind)
    elif kind == CANBERRA:
        for f in range(d):
            qf = np.float64(q[f])
            for c in range(n_valid):
                tf = np.float64(t_block[f, c])
                den = abs(qf) + abs(tf)
                acc[c] += abs(qf - tf) / den if den > 0.0 else 0.0
    else:
        for f in range(d):
            qf = np.float64(q[f])
            for c in range(n_valid):
                acc[c] += abs(qf - np.float64(t_block[f, c])) ** p


@njit(cache=True)
def _ratio(num, den):
    return num / den if den > 0.0 else 0.0


@njit(cache=True)
def nan_euclidean_pair(q, t_block, c):
    """scikit-learn's NaN-aware Euclidean distance of query row q to column c of a packed
    block: ``sqrt(d / n_both * sum (q_f - t_f)^2)`` over the ``n_both`` features where neither
    is NaN (the sum scaled up as if every feature were present). A pair with no feature
    present in both has no distance: scikit-learn gives NaN and ranks it last; the kernel
    returns ``inf``, which the heaps also rank last (ties by index) and every finite radius
    excludes, and the Python tier reports it as NaN. O(d)."""
    d = q.shape[0]
    total = 0.0
    n_both = 0
    for f in range(d):
        diff = np.float64(q[f]) - np.float64(t_block[f, c])
        if diff == diff:  # neither is NaN (inf is refused before the kernels)
            total += diff * diff
            n_both += 1
    if n_both == 0:
        return np.inf
    return np.sqrt(total * (d / n_both))


@njit(cache=True)
def pair_value(q, t_block, c, kind):
    """The distance of query row q to column c of a packed block for the codes computed one
    pair at a time: hamming, the boolean dissimilarities (of ``x != 0``; 0/0 counts 0) and
    haversine (d = 2); nan_euclidean. O(d)."""
    d = q.shape[0]
    if kind == NAN_EUCLIDEAN:
        return nan_euclidean_pair(q, t_block, c)
    if kind == HAVERSINE:
        lat_q, lat_t = np.float64(q[0]), np.float64(t_block[0, c])
        half_lat = np.sin(0.5 * (lat_q - lat_t))
        half_lon = np.sin(0.5 * (np.float64(q[1]) - np.float64(t_block[1, c])))
        inner = half_lat * half_lat + np.cos(lat_q) * np.cos(lat_t) * half_lon * half_lon
        return 2.0 * np.arcsin(np.sqrt(min(max(inner, 0.0), 1.0)))
    if kind == HAMMING:
        differ = 0
        for f in range(d):
            differ += q[f] != t_block[f, c]
        return differ / d
    ntt = 0
    ntf = 0
    nft = 0
    for f in range(d):
        x = q[f] != 0
        y = t_block[f, c] != 0
        ntt += x and y
        ntf += x and not y
        nft += y and not x
    nff = d - ntt - ntf - nft
    if kind == DICE:
        return _ratio(ntf + nft, 2.0 * ntt + ntf + nft)
    if kind == JACCARD:
        return _ratio(ntf + nft, ntt + ntf + nft)
    if kind == ROGERSTANIMOTO:
        return _ratio(2.0 * (ntf + nft), ntt + nff + 2.0 * (ntf + nft))
    if kind == RUSSELLRAO:
        return (d - ntt) / d
    if kind == SOKALSNEATH:
        return _ratio(2.0 * (ntf + nft), ntt + 2.0 * (ntf + nft))
    return _ratio(2.0 * ntf * nft, ntt * nff + ntf * nft)  # YULE


@njit(cache=True)
def tile(Q, q0, q1, t_packed, tb, n, kind, p, keys):
    """Reduced distances of queries ``q0:q1`` to packed block ``tb`` of the n targets into
    ``keys[:, :n_valid]``; returns ``(t0, n_valid)``, the block's first target and its
    number of targets. O((q1 - q0) n_valid d)."""
    t0, t1 = block_span(tb, t_packed.shape[2], n)
    n_valid = t1 - t0
    if kind == COSINE:
        prod = np.dot(Q[q0:q1], t_packed[tb])
        for r in range(q1 - q0):
            for c in range(n_valid):
                value = 1.0 - np.float64(prod[r, c])
                keys[r, c] = min(max(value, 0.0), 2.0)
    else:
        for r in range(q1 - q0):
            minkowski_row(Q[q0 + r], t_packed[tb], n_valid, kind, p, keys[r])
    return t0, n_valid


@njit(cache=True, parallel=True)
def knn_metric(Q, t_packed, n, kind, p, k, self_offset, q_block, out_d, out_i):
    """k nearest targets of every query by reduced distance, ties by index.

    Parameters
    ----------
    Q : (m, d) array
    t_packed : output of :func:`pack_transposed` for the n targets
    kind, p : the metric (see the module docstring)
    k : neighbours per query (<= available targets)
    self_offset : -1, or the target index of query row 0 (query i excludes target
        i + offset)
    q_block : query rows per parallel iteration
    out_d, out_i : (m, k) outputs, reduced distances (float64) and indices
    """
    m = Q.shape[0]
    t_block = t_packed.shape[2]
    n_q_blocks = (m + q_block - 1) // q_block
    for qb in prange(n_q_blocks):
        q0, q1 = block_span(qb, q_block, m)
        rows = q1 - q0
        heap_d, heap_i = empty_heaps(rows, k)
        keys = np.empty((rows, t_block), dtype=np.float64)
        for tb in range(t_packed.shape[0]):
            t0, n_valid = tile(Q, q0, q1, t_packed, tb, n, kind, p, keys)
            for r in range(rows):
                skip = skipped_target(self_offset, q0 + r)
                select_row_candidates(keys[r], n_valid, t0, skip, heap_d[r], heap_i[r])
        heaps_sort_into(heap_d, heap_i, out_d, out_i, q0)


@njit(cache=True, parallel=True)
def radius_metric(Q, t_packed, n, kind, p, radius, self_offset, q_block, indptr, out_d,
                  out_i, fill):
    """Targets within reduced ``radius`` (inclusive) of each query, by index.

    With ``fill=False`` writes each query's count to ``indptr[i + 1]``; with ``fill=True``
    writes the hits into the CSR slices ``indptr[i]:indptr[i + 1]`` of ``out_d`` (reduced
    distances) and ``out_i``. The caller runs the count, a cumulative sum, then the fill.
    """
    m = Q.shape[0]
    t_block = t_packed.shape[2]
    n_q_blocks = (m + q_block - 1) // q_block
    for qb in prange(n_q_blocks):
        q0, q1 = block_span(qb, q_block, m)
        rows = q1 - q0
        keys = np.empty((rows, t_block), dtype=np.float64)
        pos = np.zeros(rows, dtype=np.int64)
        if fill:
            for r in range(rows):
                pos[r] = indptr[q0 + r]
        for tb in range(t_packed.shape[0]):
            t0, n_valid = tile(Q, q0, q1, t_packed, tb, n, kind, p, keys)
            for r in range(rows):
                skip = skipped_target(self_offset, q0 + r)
                for c in range(n_valid):
                    if keys[r, c] <= radius and t0 + c != skip:
                        if fill:
                            out_d[pos[r]] = keys[r, c]
                            out_i[pos[r]] = t0 + c
                        pos[r] += 1
        if not fill:
            for r in range(rows):
                indptr[q0 + r + 1] = pos[r]


@njit(cache=True, parallel=True)
def pairwise_metric(Q, t_packed, n, kind, p, q_block, out):
    """Fill ``out`` (m, n) with reduced distances. O(m n d)."""
    m = Q.shape[0]
    t_block = t_packed.shape[2]
    n_q_blocks = (m + q_block - 1) // q_block
    for qb in prange(n_q_blocks):
        q0, q1 = block_span(qb, q_block, m)
        keys = np.empty((q1 - q0, t_block), dtype=np.float64)
        for tb in range(t_packed.shape[0]):
            t0, n_valid = tile(Q, q0, q1, t_packed, tb, n, kind, p, keys)
            for r in range(q1 - q0):
                for c in range(n_valid):
                    out[q0 + r, t0 + c] = keys[r, c]


@njit(cache=True, parallel=True)
def knn_rows(D, k, self_offset, out_d, out_i):
    """k smallest entries of each row of a dense distance matrix (precomputed or from a
    callable), ties by column index; row i skips column i + offset unless offset < 0."""
    m, n = D.shape
    for i in prange(m):
        heap_d, heap_i = empty_heap(k)
        select_row_candidates(D[i], n, 0, skipped_target(self_offset, i), heap_d, heap_i)
        heap_sort_into(heap_d, heap_i, out_d[i], out_i[i])


@njit(cache=True, parallel=True)
def radius_rows(D, radius, self_offset, indptr, out_d, out_i, fill):
    """Entries <= radius of each row of a dense distance matrix, by column; the count and
    fill passes as in :func:`radius_metric`."""
    m, n = D.shape
    for i in prange(m):
        skip = skipped_target(self_offset, i)
        pos = indptr[i] if fill else 0
        for j in range(n):
            if D[i, j] <= radius and j != skip:
                if fill:
                    out_d[pos] = D[i, j]
                    out_i[pos] = j
                pos += 1
        if not fill:
            indptr[i + 1] = pos


@njit(cache=False, parallel=True)
def pairwise_jitted(Q, T, func, out):
    """Fill ``out`` (m, n) with ``func(q, t)`` for a numba-jitted metric ``func``; compiled
    once per function (not cached: the function is the user's). O(m n) calls."""
    m, n = Q.shape[0], T.shape[0]
    for i in prange(m):
        for j in range(n):
            out[i, j] = func(Q[i], T[j])
