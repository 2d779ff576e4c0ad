"""Distance kernels on CSR matrices: k-NN, radius search and dense pairwise distances.

Every matrix arrives as canonical CSR arrays ``(data, indices, indptr)``: int64 indices,
sorted and without duplicates within each row, all in range (checked by the Python tier,
:mod:`fastdr.neighbors._sparse_search`; nothing here checks bounds). Nothing is densified.

A metric is an integer ``kind``, a code of :mod:`fastdr._kernels.codes` (with ``p`` for the
general Minkowski distance). The kernels work on a *key*, monotone in the distance: the
squared distance (euclidean, sqeuclidean), ``1 - cos`` (cosine), the sum of ``|x_c - y_c|``
(manhattan), the largest ``|x_c - y_c|`` (chebyshev), the sum of ``|x_c - y_c|^p``
(minkowski). :func:`key_to_distance` maps a key to the distance. Sums run in float64
whatever the data dtype.

Two ways to compute keys:

* the merge (:func:`merge_key`): a walk over the sorted column indices of both rows,
  O(nnz(x) + nnz(y)) per pair, exact for every metric;
* the product (:func:`knn_product`, euclidean, sqeuclidean and cosine): each query row
  scatters its products into one accumulator per target through the transposed targets (CSC),
  so a query costs O(products + n); the squared distance ``|x|^2 + |y|^2 - 2 x.y`` then only
  selects candidates, which the merge recomputes exactly.

``self_mode``: 0, nothing special; 1, query row ``r`` is target ``r + self_offset`` and skips
it (``X=None`` queries); 2, the same pair has key 0 (queries that are the training matrix,
as ``pairwise_distances(X)`` and ``include_self`` graphs).
"""

import numpy as np
from numba import njit, prange

from ..blocks import block_span
from ..codes import CHEBYSHEV, COSINE, EUCLIDEAN, MANHATTAN, MINKOWSKI
from ..heap import heap_init, heap_push, heap_sort_into


@njit(cache=True)
def row_sq_norms(data, indptr):
    """Squared L2 norm of every CSR row, in float64. O(nnz)."""
    m = indptr.shape[0] - 1
    out = np.zeros(m, dtype=np.float64)
    for i in range(m):
        s = 0.0
        for a in range(indptr[i], indptr[i + 1]):
            v = np.float64(data[a])
            s += v * v
        out[i] = s
    return out


@njit(cache=True, inline="always")
def _term(diff, kind, p):
    """One column's contribution to an additive key."""
    a = abs(diff)
    if kind == MANHATTAN:
        return a
    if kind == MINKOWSKI:
        return a ** p
    return a * a


@njit(cache=True, inline="always")
def _add(acc, diff, kind, p):
    if kind == CHEBYSHEV:
        return max(acc, abs(diff))
    return acc + _term(diff, kind, p)


@njit(cache=True)
def merge_key(kind, p, qd, qi, a0, a1, td, ti, b0, b1, q_inv, t_inv):
    """The key of the pair of rows ``qd[a0:a1]`` and ``td[b0:b1]`` by a sorted merge.

    ``q_inv`` and ``t_inv`` are the rows' inverse L2 norms (0 for an all-zero row), used by
    the cosine only. O(a1 - a0 + b1 - b0).
    """
    a = a0
    b = b0
    if kind == COSINE:
        dot = 0.0
        while a < a1 and b < b1:
            ca = qi[a]
            cb = ti[b]
            if ca == cb:
                dot += np.float64(qd[a]) * np.float64(td[b])
                a += 1
                b += 1
            elif ca < cb:
                a += 1
            else:
                b += 1
        return cosine_key(dot, q_inv, t_inv)
    acc = 0.0
    while a < a1 and b < b1:
        ca = qi[a]
        cb = ti[b]
        if ca == cb:
            acc = _add(acc, np.float64(qd[a]) - np.float64(td[b]), kind, p)
            a += 1
            b += 1
        elif ca < cb:
            acc = _add(acc, np.float64(qd[a]), kind, p)
            a += 1
        else:
            acc = _add(acc, np.float64(td[b]), kind, p)
            b += 1
    while a < a1:
        acc = _add(acc, np.float64(qd[a]), kind, p)
        a += 1
    while b < b1:
        acc = _add(acc, np.float64(td[b]), kind, p)
        b += 1
    return acc


@njit(cache=True, inline="always")
def cosine_key(dot, q_inv, t_inv):
    """``1 - cos`` clipped to [0, 2]; a pair with an all-zero row has key 1."""
    if q_inv == 0.0 or t_inv == 0.0:
        return 1.0
    value = 1.0 - dot * q_inv * t_inv
    return min(max(value, 0.0), 2.0)


@njit(cache=True)
def key_to_distance(kind, p, key):
    """The distance of a key: sqrt for euclidean, the p-th root for minkowski."""
    if kind == EUCLIDEAN:
        return np.sqrt(key)
    if kind == MINKOWSKI:
        return key ** (1.0 / p)
    return key


@njit(cache=True, inline="always")
def _self_action(self_mode, self_offset, i, j):
    """0: an ordinary pair; 1: skip it; 2: its key is 0."""
    if self_mode != 0 and j == i + self_offset:
        return self_mode
    return 0


@njit(cache=True, parallel=True)
def knn_merge(kind, p, qd, qi, qp, q_inv, td, ti, tp, t_inv, k, self_mode, self_offset,
              q_block, out_key, out_i):
    """k smallest keys (ties by index) of every query row against all target rows, by merge.

    Time O(m nnz(T) + n nnz(Q)); memory O(threads x q_block x k) besides the (m, k) outputs.
    """
    m = qp.shape[0] - 1
    n = tp.shape[0] - 1
    n_blocks = (m + q_block - 1) // q_block
    for qb in prange(n_blocks):
        heap_d = np.empty(k, dtype=np.float64)
        heap_i = np.empty(k, dtype=np.int64)
        q0, q1 = block_span(qb, q_block, m)
        for i in range(q0, q1):
            heap_init(heap_d, heap_i)
            for j in range(n):
                skip, key = _pair_key(kind, p, qd, qi, qp, q_inv, td, ti, tp, t_inv,
                                      self_mode, self_offset, i, j)
                if not skip and key <= heap_d[0]:
                    heap_push(heap_d, heap_i, key, j)
            heap_sort_into(heap_d, heap_i, out_key[i], out_i[i])


@njit(cache=True, parallel=True)
def knn_product(kind, qd, qi, qp, q_sq, q_inv, td, ti, tp, t_sq, t_inv, cd, ci, cp, k,
                n_candidates, self_mode, self_offset, q_block, out_key, out_i):
    """k nearest targets under euclidean, sqeuclidean or cosine through sparse products.

    ``(cd, ci, cp)`` is the target matrix transposed (CSC of T as CSR of T^T). Each query
    scatters ``x_c y_c`` into a float64 accumulator of length n, in the order of its columns
    (the same order as the merge, so the dot products are the merge's to the last bit). The
    cosine key comes from those dot products directly; euclidean keys select
    ``n_candidates`` candidates by the norm trick, which are then recomputed exactly by
    merge and the best k kept by (key, index).

    Time O(products + m n + m n_candidates nnz); memory O(threads x (n + q_block x
    n_candidates)) besides the outputs.
    """
    m = qp.shape[0] - 1
    n = tp.shape[0] - 1
    n_blocks = (m + q_block - 1) // q_block
    for qb in prange(n_blocks):
        acc = np.zeros(n, dtype=np.float64)
        heap_d = np.empty(n_candidates, dtype=np.float64)
        heap_i = np.empty(n_candidates, dtype=np.int64)
        best_d = np.empty(k, dtype=np.float64)
        best_i = np.empty(k, dtype=np.int64)
        q0, q1 = block_span(qb, q_block, m)
        for i in range(q0, q1):
            acc[:] = 0.0
            for a in range(qp[i], qp[i + 1]):
                v = np.float64(qd[a])
                c = qi[a]
                for b in range(cp[c], cp[c + 1]):
                    acc[ci[b]] += v * np.float64(cd[b])
            heap_init(heap_d, heap_i)
            for j in range(n):
                action = _self_action(self_mode, self_offset, i, j)
                if action == 1:
                    continue
                if action == 2:
                    key = 0.0
                elif kind == COSINE:
                    key = cosine_key(acc[j], q_inv[i], t_inv[j])
                else:
                    key = max(q_sq[i] + t_sq[j] - 2.0 * acc[j], 0.0)
                if key <= heap_d[0]:
                    heap_push(heap_d, heap_i, key, j)
            if kind == COSINE:
                heap_sort_into(heap_d, heap_i, out_key[i], out_i[i])
                continue
            heap_init(best_d, best_i)
            for c in range(n_candidates):
                j = heap_i[c]
                # a candidate is never a skipped pair; the inverse norms serve cosine only
                _, key = _pair_key(kind, 2.0, qd, qi, qp, q_inv, td, ti, tp, t_inv,
                                   self_mode, self_offset, i, j)
                heap_push(best_d, best_i, key, j)
            heap_sort_into(best_d, best_i, out_key[i], out_i[i])


@njit(cache=True, inline="always")
def _pair_key(kind, p, qd, qi, qp, q_inv, td, ti, tp, t_inv, self_mode, self_offset, i, j):
    """(skip, key) of query row i and target row j: the merge key, 0 for a pair that
    ``self_mode`` 2 makes equal (and for a skipped one)."""
    action = _self_action(self_mode, self_offset, i, j)
    if action != 0:
        return action == 1, 0.0
    return False, merge_key(kind, p, qd, qi, qp[i], qp[i + 1], td, ti, tp[j], tp[j + 1],
                            q_inv[i], t_inv[j])


@njit(cache=True, inline="always")
def _pair_distance(kind, p, qd, qi, qp, q_inv, td, ti, tp, t_inv, self_mode, self_offset,
                   i, j):
    """(skip, distance) of query row i and target row j."""
    skip, key = _pair_key(kind, p, qd, qi, qp, q_inv, td, ti, tp, t_inv, self_mode,
                          self_offset, i, j)
    return skip, key_to_distance(kind, p, key)  # key 0 (a skipped or equal pair) gives 0


@njit(cache=True, parallel=True)
def radius_count(kind, p, qd, qi, qp, q_inv, td, ti, tp, t_inv, radius, self_mode,
                 self_offset):
    """Number of targets at distance <= ``radius`` of each query, by merge. O(m nnz(T) +
    n nnz(Q))."""
    m = qp.shape[0] - 1
    n = tp.shape[0] - 1
    counts = np.zeros(m, dtype=np.int64)
    for i in prange(m):
        c = 0
        for j in range(n):
            skip, dist = _pair_distance(kind, p, qd, qi, qp, q_inv, td, ti, tp, t_inv,
                                        self_mode, self_offset, i, j)
            if not skip and dist <= radius:
                c += 1
        counts[i] = c
    return counts


@njit(cache=True, parallel=True)
def radius_fill(kind, p, qd, qi, qp, q_inv, td, ti, tp, t_inv, radius, self_mode,
                self_offset, indptr, out_d, out_i):
    """Write each query's in-radius targets (by index) and distances into its CSR slice."""
    m = qp.shape[0] - 1
    n = tp.shape[0] - 1
    for i in prange(m):
        pos = indptr[i]
        for j in range(n):
            skip, dist = _pair_distance(kind, p, qd, qi, qp, q_inv, td, ti, tp, t_inv,
                                        self_mode, self_offset, i, j)
            if not skip and dist <= radius:
                out_d[pos] = dist
                out_i[pos] = j
                pos += 1


@njit(cache=True, parallel=True)
def pairwise_merge(kind, p, qd, qi, qp, q_inv, td, ti, tp, t_inv, self_mode, self_offset,
                   out):
    """Dense (m, n) distances of every query row to every target row, by merge.

    Time O(m nnz(T) + n nnz(Q)); no memory besides ``out``.
    """
    m = qp.shape[0] - 1
    n = tp.shape[0] - 1
    for i in prange(m):
        for j in range(n):
            skip, dist = _pair_distance(kind, p, qd, qi, qp, q_inv, td, ti, tp, t_inv,
                                        self_mode, self_offset, i, j)
            out[i, j] = dist
