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
def worse(d1, i1, d2, i2):
    """True when candidate (d1, i1) ranks after (d2, i2)."""
    return d1 > d2 or (d1 == d2 and i1 > i2)


@njit(cache=True)
def heap_init(dist, idx):
    """Fill heap rows with the empty value. O(size)."""
    dist[...] = np.inf
    idx[...] = INDEX_SENTINEL


@njit(cache=True, inline="always")
def sift_down(dist, idx, size, d, i):
    """Place (d, i) at the root of the heap dist[:size] and sift it down. O(log size)."""
    pos = 0
    while True:
        left = 2 * pos + 1
        if left >= size:
            break
        right = left + 1
        child = left
        if right < size and worse(dist[right], idx[right], dist[left], idx[left]):
            child = right
        if not worse(dist[child], idx[child], d, i):
            break
        dist[pos] = dist[child]
        idx[pos] = idx[child]
        pos = child
    dist[pos] = d
    idx[pos] = i


@njit(cache=True)
def heap_push(dist, idx, d, i):
    """Offer candidate (d, i) to the bounded max-heap (dist, idx). O(log k).

    Returns
    -------
    bool
        True when the candidate entered the heap.
    """
    if not worse(dist[0], idx[0], d, i):
        return False
    sift_down(dist, idx, dist.shape[0], d, i)
    return True


@njit(cache=True)
def heap_sort(dist, idx):
    """Sort a heap in place, ascending by (distance, index). O(k log k)."""
    for end in range(dist.shape[0] - 1, 0, -1):
        d = dist[end]
        i = idx[end]
        dist[end] = dist[0]
        idx[end] = idx[0]
        sift_down(dist, idx, end, d, i)
