"""NN-descent rounds on k-NN heaps: candidate sampling, local joins, updates, exact distances.

The heaps are initialised by :mod:`nndescent_leaves`.

Heaps are rows of ``(dist, idx, flag)`` ordered like :mod:`heap` (by distance, then index)
with the selection key as distance: squared Euclidean (``SQEUCLIDEAN``) or L1
(``MANHATTAN``), codes of :mod:`fastdr._kernels.codes`, accumulated in the data's dtype.
``flag`` is 1 for an entry not yet used as a "new" candidate. Exact distances (float64
accumulation) are computed only for the kept neighbours, by :func:`exact_sort`.

Reference counts. A parallel kernel here allocates its scratch and hands each chunk to a
serial worker compiled without numba's reference counting (:func:`njit_no_runtime`):
there, row views and array arguments of inlined helpers cost no atomic reference-count
updates. In NRT code every view of a shared array, and every inlined call taking arrays
(:func:`fastdr._kernels.heap.heap_push_row`), updates the shared counter atomically,
and the two threads fought over its cache line: incref and decref became a large
share of the workers' profile (perf; bench: nndescent). Workers cannot allocate (a
slice assignment may: copy rows element by element).

Determinism. Every kernel writes only its own rows, except the local join, which writes its
proposed updates into one buffer per fixed chunk of points; :func:`apply_updates` then pushes
them in chunk order. Candidate sampling draws priorities from a hash of (round seed, pair).
So the graph depends on the data and the seed only, never on the thread count.
"""

import numpy as np
from numba import njit, prange

from ..._config import FASTMATH
from ..._config import NNDESCENT_UPDATE_AHEAD as _UPDATE_AHEAD
from .._numba_ext import njit_no_runtime, prefetch_row
from ..codes import COSINE, MANHATTAN
from ..heap import (
    INDEX_SENTINEL,
    heap_push,
    heap_push_row,
    row_contains,
    sift_down,
    worse,
)
from .rp_trees import hash3

PRIORITY_EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)
CAND_EMPTY = np.int32(2**31 - 1)  # empty slot of the int32 candidate lists (ids < 2**31 - 1)


@njit_no_runtime(cache=True, fastmath=set(FASTMATH))
def sq_distance(x, y):
    """Squared Euclidean distance in the rows' dtype. O(d)."""
    acc = x[0] - x[0]
    for f in range(x.shape[0]):
        diff = x[f] - y[f]
        acc += diff * diff
    return acc


@njit_no_runtime(cache=True, fastmath=set(FASTMATH))
def l1_distance(x, y):
    """L1 distance in the rows' dtype. O(d)."""
    acc = x[0] - x[0]
    for f in range(x.shape[0]):
        acc += abs(x[f] - y[f])
    return acc


@njit_no_runtime(cache=True, fastmath=set(FASTMATH))
def key_distance(x, y, metric):
    """Selection key of two rows in their dtype: squared Euclidean or L1. O(d)."""
    if metric == MANHATTAN:
        return l1_distance(x, y)
    return sq_distance(x, y)


@njit_no_runtime(cache=True)
def key_to_row(q, X, j, metric):
    """``key_distance(q, X[j], metric)`` for a caller that runs with reference counting: the
    row view is made here, where it costs no atomic update of X's shared count. O(d)."""
    return key_distance(q, X[j], metric)


@njit_no_runtime(cache=True, fastmath=set(FASTMATH))
def exact_distance(x, y, code, x_norm, y_norm):
    """Exact distance in float64: squared Euclidean, L1, or cosine (1 - cos). O(d)."""
    acc = 0.0
    if code == MANHATTAN:
        for f in range(x.shape[0]):
            acc += abs(np.float64(x[f]) - np.float64(y[f]))
        return acc
    if code == COSINE:
        if x_norm == 0.0 or y_norm == 0.0:
            return 1.0
        for f in range(x.shape[0]):
            acc += np.float64(x[f]) * np.float64(y[f])
        return max(0.0, 1.0 - acc / (x_norm * y_norm))
    for f in range(x.shape[0]):
        diff = np.float64(x[f]) - np.float64(y[f])
        acc += diff * diff
    return acc


@njit(cache=True, inline="always")
def _contains(idx, j):
    found = False
    for t in range(idx.shape[0]):  # no early exit: the compare-and-or loop vectorises
        found |= idx[t] == j
    return found


@njit(cache=True)
def reverse_edges(heap_i, heap_f, rev_ptr, rev_idx, rev_flag):
    """CSR of the reversed graph (row j lists every i with j in heap i). O(m k), serial."""
    m, k = heap_i.shape
    rev_ptr[:] = 0
    for i in range(m):
        for t in range(k):
            j = heap_i[i, t]
            if j != INDEX_SENTINEL:
                rev_ptr[j + 1] += 1
    for j in range(m):
        rev_ptr[j + 1] += rev_ptr[j]
    fill = rev_ptr[:-1].copy()
    for i in range(m):
        for t in range(k):
            j = heap_i[i, t]
            if j != INDEX_SENTINEL:
                rev_idx[fill[j]] = i
                rev_flag[fill[j]] = heap_f[i, t]
                fill[j] += 1


@njit(cache=True, inline="always")
def _offer(prio, idx, p, j):
    """Keep the candidates with the smallest (priority, index); skip duplicates. O(c)."""
    if worse(prio[0], idx[0], p, j) and not _contains(idx, j):
        sift_down(prio, idx, prio.shape[0], p, j)


@njit(cache=True, inline="always")
def _edge(heap_i, heap_f, rev_ptr, rev_idx, rev_flag, i, t, k):
    """Edge t of point i: forward edges first, then reverse ones; returns (j, is_new)."""
    if t < k:
        return heap_i[i, t], heap_f[i, t]
    return np.int64(rev_idx[rev_ptr[i] + t - k]), rev_flag[rev_ptr[i] + t - k]


@njit(cache=True, parallel=True)
def sample_candidates(heap_i, heap_f, rev_ptr, rev_idx, rev_flag, seed, new_i, old_i):
    """Per point, sample up to c new and c old candidates from its forward and reverse edges.

    A list with at most c edges takes them all; a longer one keeps the c smallest
    priorities, a hash of (seed, min, max) of the pair, so the sample does not depend on the
    order in which edges are seen. The candidate lists are int32 (empty slots
    :data:`CAND_EMPTY`); the priorities live in per-block scratch, not in (m, c) arrays.
    O(m (k + reverse degree) c).
    """
    m = heap_i.shape[0]
    c = new_i.shape[1]
    block = 256
    for blk in prange((m + block - 1) // block):
        # the sampled lists are heaps in local arrays, copied out once
        new_p = np.empty(c, dtype=np.uint64)
        old_p = np.empty(c, dtype=np.uint64)
        new_c = np.empty(c, dtype=np.int32)
        old_c = np.empty(c, dtype=np.int32)
        _sample_block(heap_i, heap_f, rev_ptr, rev_idx, rev_flag, seed, new_i, old_i,
                      blk * block, min(m, (blk + 1) * block), new_p, old_p, new_c, old_c)


@njit_no_runtime(cache=True)
def _sample_block(heap_i, heap_f, rev_ptr, rev_idx, rev_flag, seed, new_i, old_i, lo, hi,
                  new_p, old_p, new_c, old_c):
    """Serial body of :func:`sample_candidates` for points [lo, hi)."""
    k = heap_i.shape[1]
    c = new_i.shape[1]
    for i in range(lo, hi):
        for t in range(c):
            new_i[i, t] = CAND_EMPTY
            old_i[i, t] = CAND_EMPTY
        n_edges = k + rev_ptr[i + 1] - rev_ptr[i]
        n_new = 0
        for t in range(n_edges):
            j, is_new = _edge(heap_i, heap_f, rev_ptr, rev_idx, rev_flag, i, t, k)
            if j != INDEX_SENTINEL and is_new:
                n_new += 1
        if n_new == 0:
            continue  # no local join without a new candidate: old ones are not needed
        n_old = n_edges - n_new  # an upper bound (sentinels count): only picks the path
        sample_new = n_new > c
        sample_old = n_old > c
        if sample_new:
            new_p[:] = PRIORITY_EMPTY
            new_c[:] = CAND_EMPTY
        if sample_old:
            old_p[:] = PRIORITY_EMPTY
            old_c[:] = CAND_EMPTY
        f_new = 0
        f_old = 0
        for t in range(n_edges):
            j, is_new = _edge(heap_i, heap_f, rev_ptr, rev_idx, rev_flag, i, t, k)
            if j == INDEX_SENTINEL:
                continue
            if is_new:
                if sample_new:
                    _offer(new_p, new_c, hash3(seed, min(i, j), max(i, j)), j)
                elif not row_contains(new_i, i, j, f_new):
                    new_i[i, f_new] = j
                    f_new += 1
            else:
                if sample_old:
                    _offer(old_p, old_c, hash3(seed, min(i, j), max(i, j)), j)
                elif not row_contains(old_i, i, j, f_old):
                    old_i[i, f_old] = j
                    f_old += 1
        if sample_new:
            for t in range(c):
                new_i[i, t] = new_c[t]
        if sample_old:
            for t in range(c):
                old_i[i, t] = old_c[t]


@njit(cache=True, parallel=True)
def retire_sampled(heap_i, heap_f, new_i):
    """Clear the flag of edges i -> j whose j was sampled into new(i). O(m k c)."""
    for i in prange(heap_i.shape[0]):
        _retire_row(heap_i, heap_f, new_i, i)


@njit_no_runtime(cache=True)
def _retire_row(heap_i, heap_f, new_i, i):
    for t in range(heap_i.shape[1]):
        if heap_f[i, t] and row_contains(new_i, i, heap_i[i, t]):
            heap_f[i, t] = 0


@njit(cache=True, inline="always")
def _emit(buf_t, buf_s, buf_d, pos, target, source, d):
    buf_t[pos] = target
    buf_s[pos] = source
    buf_d[pos] = d


@njit(cache=True, parallel=True)
def local_join(X, metric, heap_d, new_i, old_i, start, stop, chunk, cap,
               buf_t, buf_s, buf_d, buf_n):
    """Local joins of points [start, stop): propose pairs new x new and new x old.

    A pair (p, q) at key d is proposed to p when d <= heap_d[p, 0] (and to q alike): the
    heaps as the earlier blocks left them (the push filters again). A point's candidates are
    first copied into a local block (rows and bounds), so each row is read from memory once
    rather than once per pair, and the next point's candidate rows are prefetched while the
    current point's pairs are computed.
    Chunk c (points start + c chunk ...) writes only buf[c cap : (c + 1) cap] and buf_n[c];
    ``cap`` must hold c (c - 1) + 2 c^2 proposals per point. Heaps are only read.
    O(points c^2 d).
    """
    n_chunks = (stop - start + chunk - 1) // chunk
    n_new = new_i.shape[1]
    n_old = old_i.shape[1]
    d = X.shape[1]
    for c in prange(n_chunks):
        lo = start + c * chunk
        hi = min(lo + chunk, stop)
        pos = c * cap
        block = np.empty((n_new + n_old, d), dtype=X.dtype)
        ids = np.empty(n_new + n_old, dtype=np.int64)
        bnd = np.empty(n_new + n_old, dtype=heap_d.dtype)
        buf_n[c] = _join_chunk(X, metric, heap_d, new_i, old_i, lo, hi, pos, block, ids, bnd,
                               buf_t, buf_s, buf_d) - pos


@njit_no_runtime(cache=True)
def _join_chunk(X, metric, heap_d, new_i, old_i, lo, hi, pos, block, ids, bnd,
                buf_t, buf_s, buf_d):
    """Serial body of :func:`local_join` for points [lo, hi); returns the next buffer slot."""
    n_new = new_i.shape[1]
    n_old = old_i.shape[1]
    for i in range(lo, hi):
        if i + 1 < hi:
            _prefetch_candidates(X, heap_d, new_i, old_i, i + 1)
        n_fresh = _count_fresh(new_i[i])
        if n_fresh == 0:
            continue  # nothing new to join: skip gathering the old candidates
        n = 0
        for a in range(n_new + n_old):
            p = new_i[i, a] if a < n_new else old_i[i, a - n_new]
            if p == CAND_EMPTY:
                continue
            ids[n] = p
            bnd[n] = heap_d[p, 0]
            for f in range(X.shape[1]):  # a slice assignment could allocate (NRT)
                block[n, f] = X[p, f]
            n += 1
        for a in range(n_fresh):
            p = ids[a]
            for b in range(a + 1, n):
                q = ids[b]
                if q == p:
                    continue
                if metric == MANHATTAN:
                    dist = l1_distance(block[a], block[b])
                else:
                    dist = sq_distance(block[a], block[b])
                if dist <= bnd[a]:
                    _emit(buf_t, buf_s, buf_d, pos, p, q, dist)
                    pos += 1
                if dist <= bnd[b]:
                    _emit(buf_t, buf_s, buf_d, pos, q, p, dist)
                    pos += 1
    return pos


@njit(cache=True, inline="always")
def _prefetch_candidates(X, heap_d, new_i, old_i, i):
    """Prefetch the data rows and heap rows of point i's candidates, if it has new ones."""
    if _count_fresh(new_i[i]) == 0:
        return
    for a in range(new_i.shape[1] + old_i.shape[1]):
        p = new_i[i, a] if a < new_i.shape[1] else old_i[i, a - new_i.shape[1]]
        if p != CAND_EMPTY:
            prefetch_row(X, p)
            prefetch_row(heap_d, p)


@njit(cache=True, inline="always")
def _count_fresh(row):
    n = 0
    for t in range(row.shape[0]):
        if row[t] != CAND_EMPTY:
            n += 1
    return n


@njit(cache=True, parallel=True)
def apply_updates(heap_d, heap_i, heap_f, n_chunks, cap, buf_t, buf_s, buf_d, buf_n,
                  n_parts, counts):
    """Push the proposals into the heaps in chunk order; counts[part] = entries that entered.

    Part ``r`` owns rows [r m / n_parts, (r + 1) m / n_parts) and reads every buffer, so each
    row sees its proposals in the same order whatever ``n_parts`` is; the heap rows of the
    proposal ``_UPDATE_AHEAD`` places on are prefetched. O(proposals n_parts).
    """
    m = heap_d.shape[0]
    for r in prange(n_parts):
        counts[r] = _apply_part(heap_d, heap_i, heap_f, n_chunks, cap, buf_t, buf_s, buf_d,
                                buf_n, r * m // n_parts, (r + 1) * m // n_parts)


@njit_no_runtime(cache=True)
def _apply_part(heap_d, heap_i, heap_f, n_chunks, cap, buf_t, buf_s, buf_d, buf_n, lo, hi):
    """Serial body of :func:`apply_updates` for heap rows [lo, hi); returns the entries."""
    entered = 0
    for c in range(n_chunks):
        base = c * cap
        end = base + buf_n[c]
        for e in range(base, end):
            if e + _UPDATE_AHEAD < end:
                ahead = buf_t[e + _UPDATE_AHEAD]
                if ahead >= lo and ahead < hi:
                    prefetch_row(heap_d, ahead)
                    prefetch_row(heap_i, ahead)
            t = buf_t[e]
            if t >= lo and t < hi and buf_d[e] <= heap_d[t, 0]:
                entered += heap_push_row(heap_d, heap_i, t, buf_d[e], np.int64(buf_s[e]),
                                         flag=heap_f, unique=True)
    return entered


@njit(cache=True, parallel=True)
def sample_hits(X, metric, rows, heap_i, k):
    """Exact k nearest neighbours of the sampled rows (each excluding itself) found in the heaps.

    Brute force on selection keys: row ``rows[s]`` is compared with every point and its k
    best (by key, then index) are counted in ``heap_i[rows[s]]``. Returns one count per
    sampled row. O(len(rows) m d).
    """
    hits = np.zeros(rows.shape[0], dtype=np.int64)
    for s in prange(rows.shape[0]):
        hits[s] = _row_hits(X, metric, rows[s], heap_i, np.full(k, np.inf),
                            np.full(k, INDEX_SENTINEL, dtype=np.int64))
    return hits


@njit_no_runtime(cache=True)
def _row_hits(X, metric, r, heap_i, best_d, best_i):
    """Serial body of :func:`sample_hits` for row r (best_d, best_i: empty k-heaps)."""
    for j in range(X.shape[0]):
        if j != r:
            heap_push(best_d, best_i, np.float64(key_distance(X[r], X[j], metric)), j)
    hits = 0
    for t in range(best_i.shape[0]):
        hits += _contains(heap_i[r], best_i[t])
    return hits


@njit_no_runtime(cache=True)
def sort_row(dist, idx):
    """Insertion sort of one row by (distance, index); near-sorted rows cost O(k). O(k^2)."""
    for t in range(1, dist.shape[0]):
        d = dist[t]
        j = idx[t]
        s = t - 1
        while s >= 0 and worse(dist[s], idx[s], d, j):
            dist[s + 1] = dist[s]
            idx[s + 1] = idx[s]
            s -= 1
        dist[s + 1] = d
        idx[s + 1] = j


@njit(cache=True, parallel=True)
def exact_sort(Q, q_norms, T, t_norms, code, key_i, out_d, out_i):
    """Exact distances of the kept neighbours, rows sorted by (distance, index). O(m k d).

    Empty slots (sentinel index) keep distance inf and sort last. The next row's neighbour
    rows are prefetched while this row's distances are computed.
    """
    for i in prange(key_i.shape[0]):
        _exact_row(Q, q_norms, T, t_norms, code, key_i, out_d, out_i, i)


@njit_no_runtime(cache=True)
def _exact_row(Q, q_norms, T, t_norms, code, key_i, out_d, out_i, i):
    """Serial body of :func:`exact_sort` for row i."""
    m, k = key_i.shape
    if i + 1 < m:
        for t in range(k):
            if key_i[i + 1, t] != INDEX_SENTINEL:
                prefetch_row(T, key_i[i + 1, t])
    for t in range(k):
        j = key_i[i, t]
        out_i[i, t] = j
        if j == INDEX_SENTINEL:
            out_d[i, t] = np.inf
        else:
            out_d[i, t] = exact_distance(Q[i], T[j], code, q_norms[i], t_norms[j])
    sort_row(out_d[i], out_i[i])


@njit(cache=True, parallel=True)
def renumber_sort(order, in_d, in_i, out_d, out_i):
    """Rows and ids from internal numbering back to X's rows, re-sorted by (distance, row).

    out[order[r]] = in[r] with ids mapped through ``order``. O(m k).
    """
    for r in prange(in_i.shape[0]):
        _renumber_row(order, in_d, in_i, out_d, out_i, r)


@njit_no_runtime(cache=True)
def _renumber_row(order, in_d, in_i, out_d, out_i, r):
    row = order[r]
    for t in range(in_i.shape[1]):
        out_d[row, t] = in_d[r, t]
        out_i[row, t] = order[in_i[r, t]]
    sort_row(out_d[row], out_i[row])

