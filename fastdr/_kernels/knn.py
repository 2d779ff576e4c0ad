"""Exact brute-force k-nearest-neighbour pieces: heap selection, refinement, direct sums, radius.

The per-row selection (:func:`select_row_candidates`) and refinement (:func:`refine_row`) are
the serial workers (tier 3) of the GEMM searches (:mod:`fastdr._kernels.knn_screen`,
:mod:`fastdr._kernels.minkowski`); the direct and radius kernels are parallel over query
rows, each iteration owning its rows of the outputs (tier 2). Memory is never m x n.
"""

import numpy as np
from numba import njit, prange

from .distances import sqdist_exact
from .heap import heap_init, heap_push, heap_sort

#: keys per screened chunk: a compile-time trip count over a contiguous row piece, which
#: LLVM turns into a few wide compares (a variable-length chunk stays scalar, about 4x slower)
LANE = 64


#: keys per sub-chunk of a chunk with a hit: 8 float64 or 16 float32 fill one 512-bit compare
SUB = 8


@njit(cache=True, inline="always")
def _push_range(keys_row, c0, c1, t0, skip, heap_d, heap_i, threshold):
    """Offer keys ``c0 <= c < c1`` of a row to the heap; return the new threshold."""
    for c in range(c0, c1):
        key = np.float64(keys_row[c])
        if key <= threshold:
            j = t0 + c
            if j != skip and heap_push(heap_d, heap_i, key, j):
                threshold = heap_d[0]
    return threshold


@njit(cache=True)
def select_row_candidates(keys_row, n_valid, t0, skip, heap_d, heap_i):
    """Push the keys of one query row against one target block into its heap. O(n_valid).

    ``keys_row`` must be C-contiguous. Full chunks of :data:`LANE` keys are screened by a
    vectorised count of the keys at or below the heap root; a chunk with a hit is screened
    again by sub-chunks of :data:`SUB`, and only those with a hit are scanned one key at a
    time (after the first blocks, few are). Target ``t0 + c`` has key ``keys_row[c]``;
    target ``skip`` is never offered.
    """
    threshold = heap_d[0]
    n_full = n_valid // LANE
    lanes = keys_row[:n_full * LANE].reshape(n_full, LANE)
    for g in range(n_full):
        chunk = lanes[g]
        hits = 0
        for c in range(LANE):
            hits += chunk[c] <= threshold
        if hits == 0:
            continue
        subs = chunk.reshape(LANE // SUB, SUB)
        for h in range(LANE // SUB):
            sub = subs[h]
            sub_hits = 0
            for c in range(SUB):
                sub_hits += sub[c] <= threshold
            if sub_hits > 0:
                c0 = g * LANE + h * SUB
                threshold = _push_range(keys_row, c0, c0 + SUB, t0, skip, heap_d, heap_i,
                                        threshold)
    _push_range(keys_row, n_full * LANE, n_valid, t0, skip, heap_d, heap_i, threshold)


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
