"""Exact brute-force k-nearest-neighbour and radius kernels.

Parallel over blocks of query rows; each iteration owns its rows of the outputs (tier 2).
The per-row selection (:func:`select_row_candidates`) and refinement (:func:`refine_row`) are
the serial workers (tier 3). Memory is O(threads x q_block x t_block), never m x n.
"""

import numpy as np
from numba import njit, prange

from .distances import sqdist_exact
from .heap import heap_init, heap_push, heap_sort

_CHUNK = 16


@njit(cache=True)
def select_row_candidates(keys_row, n_valid, t0, skip, heap_d, heap_i):
    """Push the keys of one query row against one target block into its heap. O(n_valid).

    Keys are scanned in chunks: a vectorisable count decides whether a chunk holds anything
    better than the current heap root, so most chunks cost a few SIMD compares.
    """
    threshold = heap_d[0]
    for c0 in range(0, n_valid, _CHUNK):
        c1 = min(n_valid, c0 + _CHUNK)
        hits = 0
        for c in range(c0, c1):
            hits += keys_row[c] <= threshold
        if hits == 0:
            continue
        for c in range(c0, c1):
            key = np.float64(keys_row[c])
            if key <= threshold:
                j = t0 + c
                if j == skip:
                    continue
                if heap_push(heap_d, heap_i, key, j):
                    threshold = heap_d[0]


@njit(cache=True)
def refine_row(q, T, cand_i, k, out_d, out_i):
    """Recompute exact distances of the candidates, keep the k best by (distance, index)."""
    n_cand = cand_i.shape[0]
    exact = np.empty(n_cand, dtype=np.float64)
    for c in range(n_cand):
        exact[c] = sqdist_exact(q, T[cand_i[c]])
    heap_d = np.empty(k, dtype=np.float64)
    heap_i = np.empty(k, dtype=np.int64)
    heap_init(heap_d, heap_i)
    for c in range(n_cand):
        heap_push(heap_d, heap_i, exact[c], cand_i[c])
    heap_sort(heap_d, heap_i)
    for c in range(k):
        out_d[c] = heap_d[c]
        out_i[c] = heap_i[c]


@njit(cache=True, parallel=True)
def knn_gemm(Q, T, q_packed, t_packed, k, n_candidates, self_offset, q_block, out_d, out_i):
    """k nearest targets of every query by the norm trick, refined exactly.

    Parameters
    ----------
    Q, T : (m, d), (n, d) arrays, same dtype
    q_packed, t_packed : outputs of ``pack_queries`` / ``pack_targets``
    k : neighbours returned per query
    n_candidates : candidates kept by the fast key before exact refinement (>= k)
    self_offset : -1, or the target index of query row 0 (query i is target i + offset and
        excludes itself by index)
    out_d, out_i : (m, k) outputs, squared distances (float64) and indices

    Time O(m n d), memory O(threads x q_block x (t_block + n_candidates)) besides the
    outputs (the caller picks q_block in [16, 256] and t_block <= 2048, see
    ``fastdr.neighbors._search``).
    """
    m = Q.shape[0]
    n = T.shape[0]
    t_block = t_packed.shape[2]
    n_q_blocks = (m + q_block - 1) // q_block
    for qb in prange(n_q_blocks):
        q0 = qb * q_block
        q1 = min(m, q0 + q_block)
        rows = q1 - q0
        heap_d = np.empty((rows, n_candidates), dtype=np.float64)
        heap_i = np.empty((rows, n_candidates), dtype=np.int64)
        heap_init(heap_d, heap_i)
        keys = np.empty((rows, t_block), dtype=q_packed.dtype)
        for tb in range(t_packed.shape[0]):
            t0 = tb * t_block
            n_valid = min(n, t0 + t_block) - t0
            np.dot(q_packed[q0:q1], t_packed[tb], keys)
            for r in range(rows):
                skip = -1 if self_offset < 0 else q0 + r + self_offset
                select_row_candidates(keys[r], n_valid, t0, skip, heap_d[r], heap_i[r])
        for r in range(rows):
            refine_row(Q[q0 + r], T, heap_i[r], k, out_d[q0 + r], out_i[q0 + r])


@njit(cache=True, parallel=True)
def knn_direct(Q, T, k, self_offset, out_d, out_i):
    """k nearest targets of every query by exact direct sums (small d). O(m n d)."""
    m = Q.shape[0]
    n = T.shape[0]
    for i in prange(m):
        heap_d = np.empty(k, dtype=np.float64)
        heap_i = np.empty(k, dtype=np.int64)
        heap_init(heap_d, heap_i)
        skip = -1 if self_offset < 0 else i + self_offset
        for j in range(n):
            if j == skip:
                continue
            value = sqdist_exact(Q[i], T[j])
            if value <= heap_d[0]:
                heap_push(heap_d, heap_i, value, j)
        heap_sort(heap_d, heap_i)
        out_d[i] = heap_d
        out_i[i] = heap_i


@njit(cache=True, parallel=True)
def radius_count(Q, T, radius_sq, self_offset):
    """Number of targets within ``radius_sq`` (inclusive) of each query. O(m n d)."""
    m = Q.shape[0]
    n = T.shape[0]
    counts = np.zeros(m, dtype=np.int64)
    for i in prange(m):
        skip = -1 if self_offset < 0 else i + self_offset
        c = 0
        for j in range(n):
            if j != skip and sqdist_exact(Q[i], T[j]) <= radius_sq:
                c += 1
        counts[i] = c
    return counts


@njit(cache=True, parallel=True)
def radius_fill(Q, T, radius_sq, self_offset, indptr, out_d, out_i):
    """Write the in-radius targets of each query into its CSR slice, by index. O(m n d)."""
    m = Q.shape[0]
    n = T.shape[0]
    for i in prange(m):
        skip = -1 if self_offset < 0 else i + self_offset
        pos = indptr[i]
        for j in range(n):
            if j == skip:
                continue
            value = sqdist_exact(Q[i], T[j])
            if value <= radius_sq:
                out_d[pos] = value
                out_i[pos] = j
                pos += 1
