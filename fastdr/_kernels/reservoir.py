"""Reservoir selection of the n smallest keys of a stream, by (key, index).

A bounded heap pays a sift (slow, with its unpredictable branches) for every key that
beats its root, about ``n (1 + ln(N / n))`` times over a stream of N keys. A reservoir
appends such keys to a buffer of ``cap > n`` slots instead (a store and a counter) and, when
the buffer is full, keeps its n smallest by an in-place quickselect and tightens the
threshold to the largest kept key. The kept set after the last compaction is the same as the
heap's: the n smallest keys by (key, index), so ties go to the smaller index.

State of one row: ``buf_d[:count]`` and ``buf_i[:count]`` hold the candidates, and
``threshold`` is +inf until the first compaction. Keys above the threshold can never be
among the n smallest (n kept keys are at or below it). The appends are written inline by the
caller (:func:`fastdr._kernels.knn.screen._screen_tile`): a helper taking the buffers cost
reference counting on every key that passes.
"""

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def _before(d1, i1, d2, i2):
    """(d1, i1) ranks strictly before (d2, i2)."""
    return d1 < d2 or (d1 == d2 and i1 < i2)


@njit(cache=True)
def keep_smallest(buf_d, buf_i, count, n):
    """Move the n smallest of ``buf[:count]`` (by key, then index) to ``buf[:n]``, in any
    order, and return the largest key among them. Quickselect, O(count) on average, with a
    branch-free partition: the comparisons of random keys mispredict half the time."""
    lo = 0
    hi = count - 1
    target = n - 1
    while lo < hi:
        # median of three as the pivot, placed at hi
        mid = (lo + hi) // 2
        if _before(buf_d[mid], buf_i[mid], buf_d[lo], buf_i[lo]):
            buf_d[mid], buf_d[lo] = buf_d[lo], buf_d[mid]
            buf_i[mid], buf_i[lo] = buf_i[lo], buf_i[mid]
        if _before(buf_d[hi], buf_i[hi], buf_d[lo], buf_i[lo]):
            buf_d[hi], buf_d[lo] = buf_d[lo], buf_d[hi]
            buf_i[hi], buf_i[lo] = buf_i[lo], buf_i[hi]
        if _before(buf_d[mid], buf_i[mid], buf_d[hi], buf_i[hi]):
            buf_d[mid], buf_d[hi] = buf_d[hi], buf_d[mid]
            buf_i[mid], buf_i[hi] = buf_i[hi], buf_i[mid]
        pd = buf_d[hi]
        pi = buf_i[hi]
        store = lo
        for c in range(lo, hi):  # branch-free Lomuto: swap always, advance when before
            key = buf_d[c]
            j = buf_i[c]
            buf_d[c] = buf_d[store]
            buf_i[c] = buf_i[store]
            buf_d[store] = key
            buf_i[store] = j
            store += np.int64((key < pd) | ((key == pd) & (j < pi)))
        buf_d[hi], buf_d[store] = buf_d[store], buf_d[hi]
        buf_i[hi], buf_i[store] = buf_i[store], buf_i[hi]
        if store == target:
            break
        if store < target:
            lo = store + 1
        else:
            hi = store - 1
    largest = buf_d[0]
    for c in range(1, n):
        largest = max(largest, buf_d[c])
    return largest


@njit(cache=True)
def reservoir_finish(buf_d, buf_i, count, n):
    """Compact a row's reservoir to its n smallest; return how many are kept (<= n) and the
    largest kept key (+inf when none)."""
    if count > n:
        return n, keep_smallest(buf_d, buf_i, count, n)
    largest = -np.inf
    for c in range(count):
        largest = max(largest, buf_d[c])
    return count, largest if count else np.inf
