"""The heaps of every kernel: bounded max-heaps for k-nearest-neighbour selection, and the
growing min-queue of a best-first graph search.

A k-NN heap is a pair of rows (``dist``, ``idx``) of length k. The root holds the worst of
the k best candidates seen so far, ordered by the pair (distance, index), so ties are broken
by the smaller index and the result does not depend on the order in which candidates arrive.
The rows are either 1-D arrays (``row=None``) or row ``row`` of 2-D arrays: the row-indexed
form makes no row views, which in reference-counted code would each update the array's
shared count atomically. An optional ``flag`` array (NN-descent's new/old mark) moves with
the entries. ``row`` and ``flag`` are resolved when numba compiles the caller (a None
argument prunes its branch), so neither costs a test per push.

Heaps are seeded with ``(inf, INDEX_SENTINEL)``: no fastmath here.
"""

import numpy as np
from numba import njit, types
from numba.extending import overload

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


def _slot(row, pos):
    """Index of slot ``pos`` of a heap: ``pos`` in 1-D rows (row None), else (row, pos)."""
    return pos if row is None else (row, pos)


@overload(_slot, inline="always")
def _slot_for(row, pos):
    """Chosen by the type of ``row`` when the caller compiles: a None row (passed, or left
    at its default) indexes a 1-D heap."""
    if row is None or isinstance(row, (types.NoneType, types.Omitted)):
        return lambda row, pos: pos
    return lambda row, pos: (row, pos)


@njit(cache=True, inline="always")
def row_contains(idx, row, i, n=-1):
    """i is among ``idx[row, :n]`` (the whole row when n is -1). O(n)."""
    found = False
    for t in range(idx.shape[1] if n < 0 else n):  # no early exit: the loop vectorises
        found |= idx[row, t] == i
    return found


@njit(cache=True, inline="always")
def sift_down(dist, idx, size, d, i, row=None, flag=None):
    """Place (d, i) at the root of the heap dist[:size] and sift it down. O(log size).

    ``row``: the heap is row ``row`` of 2-D arrays. ``flag``: flags move with the entries
    and the new entry gets flag 1.
    """
    pos = 0
    while True:
        left = 2 * pos + 1
        if left >= size:
            break
        right = left + 1
        child = left
        if right < size and worse(dist[_slot(row, right)], idx[_slot(row, right)],
                                  dist[_slot(row, left)], idx[_slot(row, left)]):
            child = right
        if not worse(dist[_slot(row, child)], idx[_slot(row, child)], d, i):
            break
        dist[_slot(row, pos)] = dist[_slot(row, child)]
        idx[_slot(row, pos)] = idx[_slot(row, child)]
        if flag is not None:
            flag[_slot(row, pos)] = flag[_slot(row, child)]
        pos = child
    dist[_slot(row, pos)] = d
    idx[_slot(row, pos)] = i
    if flag is not None:
        flag[_slot(row, pos)] = 1


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


@njit(cache=True, inline="always")
def heap_push_row(dist, idx, row, d, i, flag=None, unique=False):
    """Offer candidate (d, i) to row ``row`` of the 2-D heaps (dist, idx). O(log k).

    Inlined, and on the 2-D arrays rather than row views (see the module docstring).

    Parameters
    ----------
    dist, idx : (m, k) arrays
    row : int
    d, i : the candidate
    flag : (m, k) array or None
        NN-descent's flags: they move with the entries, and an entering one gets 1.
    unique : bool
        Refuse i when it is already in the row (an O(k) scan, after the root test).

    Returns
    -------
    int
        1 when the candidate entered the heap, else 0.
    """
    if not worse(dist[row, 0], idx[row, 0], d, i):
        return 0
    if unique and row_contains(idx, row, i):
        return 0
    sift_down(dist, idx, dist.shape[1], d, i, row, flag)
    return 1


@njit(cache=True)
def heap_sort(dist, idx):
    """Sort a heap in place, ascending by (distance, index). O(k log k)."""
    for end in range(dist.shape[0] - 1, 0, -1):
        d = dist[end]
        i = idx[end]
        dist[end] = dist[0]
        idx[end] = idx[0]
        sift_down(dist, idx, end, d, i)


@njit(cache=True)
def empty_heap(k):
    """A new 1-D k-NN heap of size k, filled with the empty value. O(k)."""
    dist = np.empty(k, dtype=np.float64)
    idx = np.empty(k, dtype=np.int64)
    heap_init(dist, idx)
    return dist, idx


@njit(cache=True)
def empty_heaps(rows, k):
    """New 2-D k-NN heaps, one row of size k per query of a block, filled with the empty
    value. O(rows k)."""
    dist = np.empty((rows, k), dtype=np.float64)
    idx = np.empty((rows, k), dtype=np.int64)
    heap_init(dist, idx)
    return dist, idx


@njit(cache=True)
def heap_sort_into(dist, idx, out_dist, out_idx):
    """Sort a heap ascending by (distance, index) and copy its first ``out_dist.shape[0]``
    entries into the output rows ``out_dist`` and ``out_idx``. O(k log k)."""
    heap_sort(dist, idx)
    size = out_dist.shape[0]
    out_dist[:] = dist[:size]
    out_idx[:] = idx[:size]


@njit(cache=True)
def heaps_sort_into(dist, idx, out_dist, out_idx, row0):
    """:func:`heap_sort_into` for every row r of 2-D heaps, into output row ``row0 + r``.
    O(rows k log k)."""
    for r in range(dist.shape[0]):
        heap_sort_into(dist[r], idx[r], out_dist[row0 + r], out_idx[row0 + r])


@njit(cache=True, inline="always")
def frontier_push(fd, fi, size, d, i):
    """Push (d, i) on the min-queue fd[:size] of a best-first search; the caller guarantees
    room. O(log size).

    The queue is ordered by key alone: an entry rises only past strictly larger keys, so
    equal keys leave in an order fixed by the pushes (the search's results depend on it).
    """
    pos = size
    while pos > 0:
        parent = (pos - 1) // 2
        if fd[parent] <= d:
            break
        fd[pos] = fd[parent]
        fi[pos] = fi[parent]
        pos = parent
    fd[pos] = d
    fi[pos] = i


@njit(cache=True, inline="always")
def frontier_pop_root(fd, fi, size):
    """Remove the root of the min-queue fd[:size] (size >= 1). O(log size)."""
    size -= 1
    d = fd[size]
    i = fi[size]
    pos = 0
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        if child + 1 < size and fd[child + 1] < fd[child]:
            child += 1
        if fd[child] >= d:
            break
        fd[pos] = fd[child]
        fi[pos] = fi[child]
        pos = child
    fd[pos] = d
    fi[pos] = i
