"""Heap initialisation for NN-descent: tree leaves joined pair by pair or by GEMM, fills, merges.

Every kernel writes each heap row from one thread only (the leaves of one tree partition the
points), so results do not depend on the thread count. Heaps are those of :mod:`nndescent`.
"""

import numpy as np
from numba import njit, prange

from ..._config import LEAF_GATHER_AHEAD as _AHEAD
from .._numba_ext import njit_no_runtime, prefetch_row
from ..codes import MANHATTAN
from ..heap import INDEX_SENTINEL, heap_push_row, heap_sort, sift_down
from ..knn.brute import LANE, hit_mask, trailing_zeros
from .rounds import (
    _contains,
    key_distance,
    l1_distance,
    sort_row,
    sq_distance,
)
from .rp_trees import hash3


@njit(cache=True, parallel=True)
def init_from_leaves(X, metric, perm, tree_leaf_ptr, leaf_ids, node_lo, node_hi,
                     heap_d, heap_i, heap_f):
    """Push every pair of leaf mates into both heaps, tree by tree. O(m trees leaf d).

    Within one tree the leaves partition the points, so the leaves of a tree run in parallel
    and each writes only its members' rows. A leaf's rows are first copied into a local
    block, so each is read from memory once rather than once per pair.
    """
    d = X.shape[1]
    for t in range(perm.shape[0]):
        first = tree_leaf_ptr[t]
        for s in prange(tree_leaf_ptr[t + 1] - first):
            node = leaf_ids[first + s]
            lo = node_lo[node]
            hi = node_hi[node]
            _join_leaf_pairs(X, metric, perm[t, lo:hi], np.empty((hi - lo, d), dtype=X.dtype),
                             heap_d, heap_i, heap_f)


@njit_no_runtime(cache=True)
def _join_leaf_pairs(X, metric, members, block, heap_d, heap_i, heap_f):
    """Serial body of :func:`init_from_leaves` for one leaf (``block``: its rows' scratch)."""
    n = members.shape[0]
    for a in range(n):
        for f in range(X.shape[1]):
            block[a, f] = X[members[a], f]
    for a in range(n):
        p = np.int64(members[a])
        for b in range(a + 1, n):
            q = np.int64(members[b])
            if metric == MANHATTAN:
                dist = l1_distance(block[a], block[b])
            else:
                dist = sq_distance(block[a], block[b])
            if dist <= heap_d[p, 0]:
                heap_push_row(heap_d, heap_i, p, dist, q, flag=heap_f, unique=True)
            if dist <= heap_d[q, 0]:
                heap_push_row(heap_d, heap_i, q, dist, p, flag=heap_f, unique=True)


@njit(cache=True)
def _centred_leaf_gram(X, members):
    """Gram matrix and squared norms of a leaf's rows centred on their mean. O(n^2 d).

    The mean is accumulated in float64. Leaf mates are close, so centred norms are of the
    order of their distances and ``|a|^2 + |b|^2 - 2 a.b`` keeps the precision that an offset
    from the origin would cancel.
    """
    n = members.shape[0]
    d = X.shape[1]
    mean = np.zeros(d, dtype=np.float64)
    for a in range(n):
        if a + _AHEAD < n:  # the members are scattered rows: overlap their misses
            prefetch_row(X, members[a + _AHEAD])
        row = X[members[a]]
        for f in range(d):
            mean[f] += row[f]
    for f in range(d):
        mean[f] /= n
    block = np.empty((n, d), dtype=X.dtype)
    block_t = np.empty((d, n), dtype=X.dtype)
    norms = np.empty(n, dtype=X.dtype)
    for a in range(n):
        row = X[members[a]]
        acc = 0.0
        for f in range(d):
            v = row[f] - mean[f]
            block[a, f] = v
            block_t[f, a] = v
            acc += v * v
        norms[a] = acc
    gram = np.empty((n, n), dtype=X.dtype)
    np.dot(block, block_t, gram)
    return gram, norms


@njit(cache=True)
def _kth_smallest(values, k):
    """The k-th smallest of a few values, by counting (branch-free, vectorised). O(len^2).

    It is the smallest value that at least k values do not exceed.
    """
    best = np.inf
    for g in range(values.shape[0]):
        v = values[g]
        count = 0
        for h in range(values.shape[0]):
            count += values[h] <= v
        if count >= k and v < best:
            best = v
    return best


@njit_no_runtime(cache=True)
def _select_into_empty(heap_d, heap_i, heap_f, p, keys, members, buf_d, buf_i, lows):
    """Offer a row's best keys to a heap row that is not yet full. O(n + (n/16)^2 + width^2).

    Only the row's ``width`` smallest keys are offered, not all n. With at least ``width``
    blocks of 16 keys, the ``width``-th smallest block minimum bounds them (each of those
    blocks holds a key at or below it); :func:`_kth_smallest` finds it among the minima
    (``lows``, n/16 + 1 entries). One pass then keeps the few keys under that bound, in
    order (a bit mask of LANE compares at a time, visiting only its set bits), and an
    insertion sort ranks them; a small leaf, or many ties under the bound, takes
    a plain local heap instead. A row still empty is written directly: the kept keys in
    descending order (empty slots first) already form a valid max-heap. ``buf_d`` and
    ``buf_i`` hold at least n + 1 entries.
    """
    width = heap_d.shape[1]
    n = keys.shape[0]
    n_blocks = n // 16
    f = 0
    if n_blocks >= width:
        for g in range(n_blocks):
            low = keys[16 * g]
            for b in range(16 * g + 1, 16 * g + 16):
                low = min(low, keys[b])
            lows[g] = low
        limit = _kth_smallest(lows[:n_blocks], width)
        full = n - n % LANE
        for b0 in range(0, full, LANE):  # few keys pass: visit only the set bits of a mask
            mask = hit_mask(keys[b0:b0 + LANE], limit)
            while mask:
                b = b0 + np.int64(trailing_zeros(mask))
                mask &= mask - np.uint64(1)
                buf_d[f] = keys[b]
                buf_i[f] = members[b]
                f += 1
        for b in range(full, n):  # branch-free tail: every key is written, the kept advance
            buf_d[f] = keys[b]
            buf_i[f] = members[b]
            f += keys[b] <= limit
    if 0 < f <= 4 * width:
        sort_row(buf_d[:f], buf_i[:f])
        take = min(f, width)
    else:
        buf_d[:width] = np.inf
        buf_i[:width] = INDEX_SENTINEL
        for b in range(n):
            if keys[b] < buf_d[0]:
                sift_down(buf_d, buf_i, width, keys[b], np.int64(members[b]))
        take = width
        heap_sort(buf_d[:width], buf_i[:width])
    if _row_empty(heap_i, p):
        for e in range(width):
            r = width - 1 - e  # slot e takes the r-th best: descending order is a max-heap
            if r < take and buf_i[r] != INDEX_SENTINEL:
                heap_d[p, e] = buf_d[r]
                heap_i[p, e] = buf_i[r]
                heap_f[p, e] = 1
        return
    for e in range(take):
        if buf_i[e] != INDEX_SENTINEL:
            heap_push_row(heap_d, heap_i, p, buf_d[e], buf_i[e], flag=heap_f, unique=True)


@njit(cache=True, inline="always")
def _row_empty(heap_i, p):
    empty = True
    for e in range(heap_i.shape[1]):
        empty &= heap_i[p, e] == INDEX_SENTINEL
    return empty


@njit_no_runtime(cache=True)
def _offer_improving(heap_d, heap_i, heap_f, p, keys, members):
    """Push the keys of a row at or below the heap's worst. O(n + pushes w).

    Keys of points already in the heap must be masked (inf). Hits are rare, so the row is
    compared LANE keys at a time into a bit mask (:func:`.knn.hit_mask`, a few wide
    compares) and only the set bits are visited, each checked again against the bound as
    the pushes lower it (the same pushes in the same order as a scalar scan). That beats a
    branch-free OR per block of 16 keys (bench: nndescent).
    """
    n = keys.shape[0]
    bound = heap_d[p, 0]
    full = n - n % LANE
    for b0 in range(0, full, LANE):
        mask = hit_mask(keys[b0:b0 + LANE], bound)
        while mask:
            b = b0 + np.int64(trailing_zeros(mask))
            mask &= mask - np.uint64(1)
            if keys[b] <= bound:
                heap_push_row(heap_d, heap_i, p, keys[b], np.int64(members[b]), flag=heap_f,
                              unique=True)
                bound = heap_d[p, 0]
    for b in range(full, n):
        if keys[b] <= bound:
            heap_push_row(heap_d, heap_i, p, keys[b], np.int64(members[b]), flag=heap_f,
                          unique=True)
            bound = heap_d[p, 0]


@njit(cache=True)
def _join_leaf(X, members, lo, slot, heap_d, heap_i, heap_f):
    """Offer every member of one leaf its leaf mates' keys (see :func:`init_from_leaves_gram`).

    The members' heap rows are gathered into local arrays first and written back at the end:
    the rows of a leaf are scattered in memory, and loading them all in one loop overlaps
    their cache misses (bench: nndescent) where loading each
    just before its scan would wait for every one. O(n^2 d) for the leaf's GEMM,
    O(n^2 + pushes width) for the offers.
    """
    n = members.shape[0]
    if n < 2:
        return
    width = heap_d.shape[1]
    gram, norms = _centred_leaf_gram(X, members)
    local_d = np.empty((n, width), dtype=heap_d.dtype)
    local_i = np.empty((n, width), dtype=heap_i.dtype)
    local_f = np.empty((n, width), dtype=heap_f.dtype)
    for a in range(n):
        if a + _AHEAD < n:
            q = members[a + _AHEAD]
            prefetch_row(heap_d, q)
            prefetch_row(heap_i, q)
            prefetch_row(heap_f, q)
        p = members[a]
        for e in range(width):
            local_d[a, e] = heap_d[p, e]
            local_i[a, e] = heap_i[p, e]
            local_f[a, e] = heap_f[p, e]
    keys = np.empty(n, dtype=X.dtype)
    zero = X[0, 0] - X[0, 0]
    buf_d = np.empty(max(n, width) + 1, dtype=heap_d.dtype)
    buf_i = np.empty(max(n, width) + 1, dtype=np.int64)
    lows = np.empty(n // 16 + 1, dtype=keys.dtype)
    for a in range(n):
        na = norms[a]
        for b in range(n):
            keys[b] = max(zero, na + norms[b] - (gram[a, b] + gram[a, b]))
        keys[a] = np.inf
        if local_i[a, 0] == INDEX_SENTINEL:
            _select_into_empty(local_d, local_i, local_f, a, keys, members, buf_d, buf_i, lows)
            continue
        for e in range(width):
            j = local_i[a, e]
            if j != INDEX_SENTINEL:
                pos = slot[j] - lo  # j's place in this leaf, if it is a leaf mate
                if 0 <= pos < n:
                    keys[pos] = np.inf
        _offer_improving(local_d, local_i, local_f, a, keys, members)
    for a in range(n):
        p = members[a]
        for e in range(width):
            heap_d[p, e] = local_d[a, e]
            heap_i[p, e] = local_i[a, e]
            heap_f[p, e] = local_f[a, e]


@njit(cache=True, parallel=True)
def init_from_leaves_gram(X, perm, tree_leaf_ptr, leaf_ids, node_lo, node_hi,
                          heap_d, heap_i, heap_f):
    """Squared-Euclidean twin of :func:`init_from_leaves`: one GEMM per leaf. O(m trees leaf d).

    A leaf's keys come from one BLAS product on its centred rows (:func:`_centred_leaf_gram`);
    keys below zero (round-off) are clipped to zero. Each member then offers its key row to
    its own heap only, so a heap row is written only by the thread that owns the member's
    leaf. Before a member's row is scanned, the entries of leaf mates already in its heap
    are masked (``slot``, every point's place in the current tree's permutation, written by
    a pass of its own before the tree's leaves run, tells whether an entry lies in the same
    leaf and where): a full row then offers only keys that improve it, and the scan rarely
    branches.
    """
    m = X.shape[0]
    slot = np.empty(m, dtype=np.int32)
    for t in range(perm.shape[0]):
        first = tree_leaf_ptr[t]
        for a in prange(m):
            slot[perm[t, a]] = a
        for s in prange(tree_leaf_ptr[t + 1] - first):
            node = leaf_ids[first + s]
            lo = node_lo[node]
            _join_leaf(X, perm[t, lo:node_hi[node]], lo, slot, heap_d, heap_i, heap_f)


@njit(cache=True, parallel=True)
def fill_random(X, metric, seed, heap_d, heap_i, heap_f):
    """Complete rows that hold fewer than k points: hashed draws, then a sweep. O(m k d).

    Needs k <= m - 1. A row is short exactly when its root holds the empty sentinel.
    """
    for i in prange(heap_i.shape[0]):
        if heap_i[i, 0] == INDEX_SENTINEL:
            _fill_row(X, metric, seed, heap_d, heap_i, heap_f, i)


@njit_no_runtime(cache=True)
def _fill_row(X, metric, seed, heap_d, heap_i, heap_f, i):
    """Serial body of :func:`fill_random` for a short row i."""
    m, k = heap_i.shape
    tries = 0
    while heap_i[i, 0] == INDEX_SENTINEL and tries < 4 * k:
        j = np.int64(hash3(seed, i, tries) % np.uint64(m))
        tries += 1
        if j != i and not _contains(heap_i[i], j):
            heap_push_row(heap_d, heap_i, i, key_distance(X[i], X[j], metric), j,
                          flag=heap_f, unique=True)
    j = 0
    while heap_i[i, 0] == INDEX_SENTINEL:
        if j != i and not _contains(heap_i[i], j):
            heap_push_row(heap_d, heap_i, i, key_distance(X[i], X[j], metric), j,
                          flag=heap_f, unique=True)
        j += 1


@njit(cache=True, parallel=True)
def merge_rows(src_d, src_i, heap_d, heap_i, heap_f):
    """Offer every entry of the heap rows (src_d, src_i) to the same rows of the flagged heaps.

    Entries that enter are flagged new. O(m k (log w + w)).
    """
    for p in prange(src_i.shape[0]):
        _merge_row(src_d, src_i, heap_d, heap_i, heap_f, p)


@njit_no_runtime(cache=True)
def _merge_row(src_d, src_i, heap_d, heap_i, heap_f, p):
    for t in range(src_i.shape[1]):
        j = src_i[p, t]
        if j != INDEX_SENTINEL and src_d[p, t] <= heap_d[p, 0]:
            heap_push_row(heap_d, heap_i, p, src_d[p, t], j, flag=heap_f, unique=True)
