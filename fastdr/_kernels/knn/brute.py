"""Exact brute-force k-nearest-neighbour pieces: heap selection, direct sums, radius.

The per-row heap selection (:func:`select_row_candidates`, with the chunk mask and bit walk
that :mod:`fastdr._kernels.knn.screen` shares) is the serial worker (tier 3) of the
Minkowski searches (:mod:`fastdr._kernels.distances.minkowski`); the direct and radius kernels are
parallel over query rows, each iteration owning its rows of the outputs (tier 2). Memory is
never m x n.
"""

import numpy as np
from numba import njit, prange

from ..._config import KEY_LANE as LANE
from .._numba_ext import trailing_zeros
from ..blocks import skipped_target
from ..distances.euclidean import sqdist_exact
from ..heap import empty_heap, heap_push, heap_sort_into


@njit(cache=True, inline="always")
def hit_mask(chunk, threshold):
    """Bit c set when ``chunk[c] <= threshold``, for a chunk of LANE keys (one wide compare
    per 16 float32 or 8 float64 keys)."""
    mask = np.uint64(0)
    for c in range(LANE):
        mask |= np.uint64(chunk[c] <= threshold) << np.uint64(c)
    return mask


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
    vectorised compare against the heap root into a 64-bit mask; only the keys whose bit is
    set are offered (after the first blocks, few chunks have any). Target ``t0 + c`` has key
    ``keys_row[c]``; target ``skip`` is never offered.
    """
    threshold = heap_d[0]
    n_full = n_valid // LANE
    lanes = keys_row[:n_full * LANE].reshape(n_full, LANE)
    for g in range(n_full):
        mask = hit_mask(lanes[g], threshold)
        while mask:
            c = g * LANE + np.int64(trailing_zeros(mask))
            mask &= mask - np.uint64(1)
            key = np.float64(keys_row[c])
            j = t0 + c
            if key <= threshold and j != skip and heap_push(heap_d, heap_i, key, j):
                threshold = heap_d[0]
    _push_range(keys_row, n_full * LANE, n_valid, t0, skip, heap_d, heap_i, threshold)


@njit(cache=True, parallel=True)
def knn_direct(Q, T, k, self_offset, out_d, out_i):
    """k nearest targets of every query by exact direct sums (small d). O(m n d)."""
    m = Q.shape[0]
    n = T.shape[0]
    for i in prange(m):
        heap_d, heap_i = empty_heap(k)
        skip = skipped_target(self_offset, i)
        for j in range(n):
            if j == skip:
                continue
            value = sqdist_exact(Q[i], T[j])
            if value <= heap_d[0]:
                heap_push(heap_d, heap_i, value, j)
        heap_sort_into(heap_d, heap_i, out_d[i], out_i[i])


@njit(cache=True, parallel=True)
def radius_count(Q, T, radius_sq, self_offset):
    """Number of targets within ``radius_sq`` (inclusive) of each query. O(m n d)."""
    m = Q.shape[0]
    n = T.shape[0]
    counts = np.zeros(m, dtype=np.int64)
    for i in prange(m):
        skip = skipped_target(self_offset, i)
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
        skip = skipped_target(self_offset, i)
        pos = indptr[i]
        for j in range(n):
            if j == skip:
                continue
            value = sqdist_exact(Q[i], T[j])
            if value <= radius_sq:
                out_d[pos] = value
                out_i[pos] = j
                pos += 1
