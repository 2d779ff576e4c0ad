"""Bounded max-heaps for k-nearest-neighbour selection.

A heap is a pair of rows (``dist``, ``idx``) of length k. The root holds the worst of the k
best candidates seen so far, ordered by the pair (distance, index), so ties are broken by the
smaller index and the result does not depend on the order in which candidates arrive.

Heaps are seeded with ``(inf, INDEX_SENTINEL)``: no fastmath here.
"""

import numpy as np
from numba import njit

INDEX_SENTINEL = np.iinfo(np.int64).max


@njit(cache=True, inline="always")
def _worse(d1, i1, d2, i2):
    """True when candidate (d1, i1) ranks after (d2, i2)."""
    return d1 > d2 or (d1 == d2 and i1 > i2)


@njit(cache=True)
def heap_init(dist, idx):
    """Fill heap rows with the empty value. O(size)."""
    dist[...] = np.inf
    idx[...] = INDEX_SENTINEL


@njit(cache=True)
def heap_push(dist, idx, d, i):
    """Offer candidate (d, i) to the bounded max-heap (dist, idx). O(log k).

    Returns
    -------
    bool
        True when the candidate entered the heap.
    """
    k = dist.shape[0]
    if not _worse(dist[0], idx[0], d, i):
        return False
    pos = 0
    while True:
        left = 2 * pos + 1
        if left >= k:
            break
        right = left + 1
        child = left
        if right < k and _worse(dist[right], idx[right], dist[left], idx[left]):
            child = right
        if not _worse(dist[child], idx[child], d, i):
            break
        dist[pos] = dist[child]
        idx[pos] = idx[child]
        pos = child
    dist[pos] = d
    idx[pos] = i
    return True


@njit(cache=True)
def heap_sort(dist, idx):
    """Sort a heap in place, ascending by (distance, index). O(k log k)."""
    k = dist.shape[0]
    for end in range(k - 1, 0, -1):
        d = dist[end]
        i = idx[end]
        dist[end] = dist[0]
        idx[end] = idx[0]
        # sift (d, i) down from the root within [0, end)
        pos = 0
        while True:
            left = 2 * pos + 1
            if left >= end:
                break
            right = left + 1
            child = left
            if right < end and _worse(dist[right], idx[right], dist[left], idx[left]):
                child = right
            if not _worse(dist[child], idx[child], d, i):
                break
            dist[pos] = dist[child]
            idx[pos] = idx[child]
            pos = child
        dist[pos] = d
        idx[pos] = i
