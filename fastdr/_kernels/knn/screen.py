"""Exact float64 k-NN at float32 GEMM speed: certified float32 screening, exact refinement.

The float64 queries and targets are centred on ``c`` and scaled by a power of two ``s``
(both exact in float64, neither changes the ranking), rounded to float32 and packed as
``[s (q - c), 1]`` and ``[-2 s (t - c), s^2 |t - c|^2 (1 - 2 eps)]``. One float32 GEMM per
block gives the screening key ``K~`` of every pair; a heap keeps the ``n_candidates``
smallest keys of each query row; those candidates get exact float64 distances and the k
best by (distance, index) are returned. The answer is the float64 answer whenever the row is
*certified*, which the kernel proves from the rounding bound below; rows it cannot certify
(dense near-ties) are flagged for the caller's float64 path.

Rounding bound. Write ``q, t`` for the scaled centred float64 rows, ``qn = |q|^2``,
``tn = |t|^2``, ``u = 2^-24`` (float32 unit roundoff), ``n = d + 1`` (GEMM depth) and
``E = tn - 2 q.t = s^2 (|q - t|^2 - |q - c|^2)`` the exact key. The GEMM computes, in
float32 and in any summation order, the sum of n products ``a_f``; Higham's bound for a
dot product gives an error of at most ``gamma_n sum |a_f|`` with ``gamma_n = n u / (1 - n u)``.
Here ``sum |a_f| <= 2 |q||t| + tn <= qn + 2 tn`` (Cauchy-Schwarz, then ``2ab <= a^2 + b^2``).
Rounding the inputs to float32 adds at most ``(2u + u^2) 2 sum |q_f t_f| <= 3u (qn + tn)``
and rounding the norm entry ``u tn``. With the factor ``(1 + u)^2`` on the products, the
computed key ``K~`` satisfies

    |K~ - (E - 2 eps tn)| <= eps (qn + 2 tn),   eps = 2 (n + 4) u,

a factor 2 above the sum of those terms. Underflow adds an absolute error below
``(n + 2) 2^-146`` once the rows are scaled into [-1, 1] (the term ``ABS``). So, with the
norm entry shrunk by ``2 eps tn``:

    L = K~ - eps qn - ABS  <=  E  <=  U = K~ + 4 eps tn + eps qn + ABS.

The kernel uses ``eps_m = eps (1 + 2^-10)`` in L and U: the slack, about ``2^-34 (qn + tn)``,
covers the float64 rounding of the centring, the norms and the exact distances themselves.

Certificate. Let the heap keep the ``n_c`` smallest ``K~`` (equivalently the smallest L: the
row term is constant) and let ``tau`` be the k-th smallest U among the kept candidates. k
kept points have ``E <= tau``, so the k-th smallest exact key ``E_(k) <= tau``. Every
candidate not kept has ``L >= L_root``. If ``L_root > tau`` then every such candidate has
``E > tau >= E_(k)`` and cannot be among the k nearest, ties included; the exact top k lie
among the kept ones, and their exact float64 distances decide. A row whose heap is not full
kept every target and is certified trivially.

Rows that fail (near-ties: binary data, lattices, duplicates around the k-th neighbour) are
redone by :func:`knn_screen_redo`: every target with ``L <= tau`` (``K~ <= tau + eps_m qn +
ABS``) gets its exact float64 distance, and a k-heap on (distance, index) keeps the best.
Every true k nearest neighbour has ``L <= E <= E_(k) <= tau``, so it is among them: the
result is exact on every row, ties broken by index.
"""

import numpy as np
from numba import njit, prange

from ..blocks import block_span
from ..distances.euclidean import pack_query_row, pack_target_block, sqdist_exact
from ..heap import empty_heaps, heap_push, heaps_sort_into
from ..reservoir import keep_smallest, reservoir_finish
from ..twins import serial_twin
from .brute import LANE, hit_mask, trailing_zeros

#: float32 unit roundoff
U32 = 2.0**-24


@njit(cache=True)
def reservoir_slots(n_candidates):
    """Reservoir slots per row: ``n_candidates + 16``, a compaction every 16 offers or so
    (see :mod:`.reservoir`); a wider margin gains nothing (bench: knn_f32)."""
    return n_candidates + 16


def screen_eps(d):
    """The relative bound coefficient ``eps = 2 (d + 5) u`` for GEMM depth ``d + 1``."""
    return 2.0 * (d + 5) * U32


def screen_abs(d):
    """The absolute underflow term ``ABS`` for rows scaled into [-1, 1]."""
    return (d + 3) * 2.0**-146


@njit(cache=True, parallel=True)
def pack_screen_queries(Q, centre, scale):
    """Return float32 rows ``[s (q - c), 1]``, shape (m, d + 1). O(m d)."""
    m, d = Q.shape
    out = np.empty((m, d + 1), dtype=np.float32)
    for i in prange(m):
        pack_query_row(Q, centre, scale, out, i)
    return out


pack_screen_queries_serial = serial_twin(pack_screen_queries)


@njit(cache=True, parallel=True)
def pack_screen_targets(T, centre, scale, norms, shrink, block):
    """Return float32 GEMM blocks (n_blocks, d + 1, block): column j is
    ``[-2 s (t - c), s^2 |t - c|^2 (1 - shrink)]``; padding columns are zero (never read).
    ``norms`` are the float64 ``|t - c|^2`` (unscaled). O(n d)."""
    n, d = T.shape
    n_blocks = (n + block - 1) // block
    out = np.empty((n_blocks, d + 1, block), dtype=np.float32)
    for b in prange(n_blocks):
        pack_target_block(T, centre, scale, norms, shrink, out, b)
    return out


pack_screen_targets_serial = serial_twin(pack_screen_targets)


@njit(cache=True)
def _screen_tile(keys, n_valid, t0, skips, buf_d, buf_i, counts, thresholds, n_keep):
    """Offer every row's keys against one target block to the row's reservoir (row r of
    ``keys``, ``skips``, ``buf_d``, ``buf_i``, ``counts`` and ``thresholds`` is one query).

    Chunks of LANE keys are compared at once into a bit mask; only set bits are visited. The
    reservoir is written here, not through a helper taking row views: a view or a call per
    offer costs reference counting (atomic) on every key that passes, and about 90 keys of
    each row pass over 5,000 targets. A full reservoir is compacted to its n_keep smallest
    (:func:`.reservoir.keep_smallest`), which tightens the threshold.
    """
    n_full = n_valid // LANE
    cap = buf_d.shape[1]
    for r in range(keys.shape[0]):
        count = counts[r]
        threshold = thresholds[r]
        skip = skips[r]
        for g in range(n_full + 1):
            lo = g * LANE
            if g < n_full:
                mask = hit_mask(keys[r, lo:lo + LANE], threshold)
            else:  # the ragged tail, one key at a time
                mask = np.uint64(0)
                for c in range(lo, n_valid):
                    mask |= np.uint64(keys[r, c] <= threshold) << np.uint64(c - lo)
            while mask:
                c = lo + np.int64(trailing_zeros(mask))
                mask &= mask - np.uint64(1)
                key = np.float64(keys[r, c])
                if key <= threshold and t0 + c != skip:
                    if count == cap:
                        threshold = keep_smallest(buf_d[r], buf_i[r], count, n_keep)
                        count = n_keep
                        if key > threshold:
                            continue
                    buf_d[r, count] = key
                    buf_i[r, count] = t0 + c
                    count += 1
        counts[r] = count
        thresholds[r] = threshold


@njit(cache=True)
def _prime_threshold(keys_row, n_valid, n):
    """A starting threshold for a row's first block: the largest of the minima of n groups
    of its keys.

    Each group holds a key at or below it, so at least n keys of the block are: with
    n = n_candidates + 1 (one may be the row's own index) no key above it can be among the
    candidates, and the kept set is unchanged. Without it the reservoir starts at +inf and
    admits every key of the first block, compacting every 16 keys, a large share of a small
    search (bench: knn_f32). One pass, O(n_valid); needs ``n_valid >= n``.
    """
    size = n_valid // n
    threshold = -np.inf
    for g in range(n):
        lo = g * size
        smallest = keys_row[lo]
        for c in range(lo + 1, lo + size):
            smallest = min(smallest, keys_row[c])
        threshold = max(threshold, np.float64(smallest))
    return threshold


@njit(cache=True)
def _refine_in_place(q, T, cand_d, cand_i, k, out_d, out_i):
    """Exact distances of the candidates (overwriting their keys), then the k best by
    (distance, index), ascending, into out_d and out_i. No allocation."""
    n_cand = cand_i.shape[0]
    for c in range(n_cand):
        cand_d[c] = sqdist_exact(q, T[cand_i[c]])
    if n_cand > k:
        keep_smallest(cand_d, cand_i, n_cand, k)
    for c in range(k):  # insertion sort of the k kept
        d = cand_d[c]
        j = cand_i[c]
        pos = c
        while pos > 0 and (out_d[pos - 1] > d or (out_d[pos - 1] == d and out_i[pos - 1] > j)):
            out_d[pos] = out_d[pos - 1]
            out_i[pos] = out_i[pos - 1]
            pos -= 1
        out_d[pos] = d
        out_i[pos] = j


@njit(cache=True)
def _kth_upper(heap_d, heap_i, margin_t, k, buf):
    """The k-th smallest ``key + margin_t[j]`` over the kept candidates (insertion into
    buf[:k])."""
    filled = 0
    for c in range(heap_d.shape[0]):
        value = heap_d[c] + margin_t[heap_i[c]]
        if filled < k:
            pos = filled
            filled += 1
        elif value < buf[k - 1]:
            pos = k - 1
        else:
            continue
        while pos > 0 and buf[pos - 1] > value:
            buf[pos] = buf[pos - 1]
            pos -= 1
        buf[pos] = value
    return buf[k - 1]


@njit(cache=True, parallel=True)
def knn_screen(Q, T, q_packed, t_packed, k, n_candidates, skips, q_block, margin_q,
               margin_t, out_d, out_i, certified, taus):
    """k nearest targets of every float64 query from float32 screening keys, certified.

    Parameters
    ----------
    Q, T : (m, d), (n, d) float64, the original rows (exact refinement)
    q_packed, t_packed : float32 outputs of :func:`pack_screen_queries` and
        :func:`pack_screen_targets`
    k, n_candidates : neighbours returned; candidates kept by the screening key (>= k)
    skips : (m,) int64, the target each query excludes by index, or -1
    margin_q : (m,) float64, ``eps_m qn + ABS`` per query (scaled units)
    margin_t : (n,) float64, ``4 eps_m tn`` per target (scaled units)
    out_d, out_i : (m, k) squared distances (float64) and indices, written for every row
    certified : (m,) bool, set True where the row's answer is proven exact (see the module
        docstring); other rows must be redone by :func:`knn_screen_redo`
    taus : (m,) float64, set to the redo threshold on K~ (``tau + margin_q``) of every row
        that is not certified

    Time O(m n d) in float32 GEMM plus O(m n) screening; memory O(threads x q_block x
    (t_block + n_candidates)).
    """
    m = Q.shape[0]
    n = T.shape[0]
    t_block = t_packed.shape[2]
    cap = reservoir_slots(n_candidates)
    n_q_blocks = (m + q_block - 1) // q_block
    for qb in prange(n_q_blocks):
        q0, q1 = block_span(qb, q_block, m)
        rows = q1 - q0
        buf_d = np.empty((rows, cap), dtype=np.float64)
        buf_i = np.empty((rows, cap), dtype=np.int64)
        counts = np.zeros(rows, dtype=np.int64)
        thresholds = np.full(rows, np.inf)
        keys = np.empty((rows, t_block), dtype=np.float32)
        buf = np.empty(k, dtype=np.float64)
        for tb in range(t_packed.shape[0]):
            t0, t1 = block_span(tb, t_block, n)
            n_valid = t1 - t0
            np.dot(q_packed[q0:q1], t_packed[tb], keys)
            if tb == 0 and n_valid > cap:
                for r in range(rows):
                    thresholds[r] = _prime_threshold(keys[r], n_valid, n_candidates + 1)
            _screen_tile(keys, n_valid, t0, skips[q0:q1], buf_d, buf_i, counts, thresholds,
                         n_candidates)
        for r in range(rows):
            i = q0 + r
            kept, root = reservoir_finish(buf_d[r], buf_i[r], counts[r], n_candidates)
            cand_d = buf_d[r, :kept]
            cand_i = buf_i[r, :kept]
            n_avail = n - (1 if 0 <= skips[i] < n else 0)
            ok = True
            if n_avail > kept:
                tau = _kth_upper(cand_d, cand_i, margin_t, k, buf) + margin_q[i]
                ok = root - margin_q[i] > tau
            certified[i] = ok
            if not ok:
                taus[i] = tau + margin_q[i]
            else:
                _refine_in_place(Q[i], T, cand_d, cand_i, k, out_d[i], out_i[i])


@njit(cache=True, inline="always")
def _exact_range(keys_row, c0, c1, t0, skip, threshold, q, T, heap_d, heap_i):
    """Exact distances of the targets ``t0 + c`` whose key is at most ``threshold``."""
    for c in range(c0, c1):
        if keys_row[c] <= threshold:
            j = t0 + c
            if j != skip:
                heap_push(heap_d, heap_i, sqdist_exact(q, T[j]), j)


@njit(cache=True, parallel=True)
def knn_screen_redo(Q, T, q_packed, t_packed, k, skips, q_block, thresholds, out_d, out_i):
    """Exact k nearest targets of the rows :func:`knn_screen` could not certify.

    Every target whose screening key is at most the row's threshold (the ``taus`` of
    :func:`knn_screen`) gets its exact float64 distance; a k-heap on (distance, index) keeps
    the best, so the answer is exact (see the module docstring). Arguments as in
    :func:`knn_screen`, for the redo rows only. Time O(m n d) in float32 GEMM plus one exact
    distance, O(d), per target under the threshold.
    """
    m = Q.shape[0]
    n = T.shape[0]
    t_block = t_packed.shape[2]
    n_q_blocks = (m + q_block - 1) // q_block
    for qb in prange(n_q_blocks):
        q0, q1 = block_span(qb, q_block, m)
        rows = q1 - q0
        heap_d, heap_i = empty_heaps(rows, k)
        keys = np.empty((rows, t_block), dtype=np.float32)
        for tb in range(t_packed.shape[0]):
            t0, t1 = block_span(tb, t_block, n)
            n_valid = t1 - t0
            n_full = n_valid // LANE
            np.dot(q_packed[q0:q1], t_packed[tb], keys)
            for r in range(rows):
                i = q0 + r
                threshold = thresholds[i]
                row = keys[r]
                lanes = row[:n_full * LANE].reshape(n_full, LANE)
                for g in range(n_full):
                    if hit_mask(lanes[g], threshold):
                        _exact_range(row, g * LANE, g * LANE + LANE, t0, skips[i], threshold,
                                     Q[i], T, heap_d[r], heap_i[r])
                _exact_range(row, n_full * LANE, n_valid, t0, skips[i], threshold, Q[i], T,
                             heap_d[r], heap_i[r])
        heaps_sort_into(heap_d, heap_i, out_d, out_i, q0)
