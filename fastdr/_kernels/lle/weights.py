"""Locally linear embedding kernels: barycentric weights, the sparse matrix M, new samples.

Layout of W. Row i of the (m, k) arrays ``weights`` and ``indices`` holds the weights that
reconstruct x_i from its neighbours, ``x_i ~ sum_c weights[i, c] * X[indices[i, c]]``. As an
m x m matrix, ``W[i, indices[i, c]] = weights[i, c]``; each row of W sums to 1, and the cost of
an embedding Y (m x p) is ``||(I - W) Y||_F^2 = trace(Y^T M Y)`` with

    M = (I - W)^T (I - W) = I - W - W^T + W^T W.

Texts differ on the transpose: ``(I - W)(I - W)^T`` is the same matrix only for the column
layout (column i of W reconstructing x_i). With the row layout used here the transposed product
is wrong: ``M 1 = 0`` (the constant null vector that LLE discards) holds only for
``(I - W)^T (I - W)``, because ``(I - W) 1 = 0``.

Assembly without races. Write row i of I - W as the sparse vector ``u_i`` on the k + 1 indices
``S_i = (i, indices[i, 0], ..., indices[i, k-1])`` with values ``(1, -w_i0, ..., -w_i,k-1)``;
then ``M = sum_i u_i u_i^T``. Row r of M gathers the terms of every i with r in S_i (the
"reverse" lists, built once); one parallel iteration owns whole rows of M, first to count their
distinct columns, then to fill them. Every entry is summed over i in ascending order, so M is
bitwise symmetric and independent of the thread count.
"""

import numpy as np
from numba import njit, prange

from ..._config import LLE_MAX_RETRIES as _MAX_RETRIES


@njit(cache=True)
def cholesky_inplace(A, n):
    """Lower Cholesky factor of the leading n x n block of A, in place. O(n^3 / 3).

    Returns False (leaving A partly overwritten) when a pivot is not positive and finite.
    """
    for j in range(n):
        s = A[j, j]
        for p in range(j):
            s -= A[j, p] * A[j, p]
        if not (s > 0.0 and s < np.inf):
            return False
        s = np.sqrt(s)
        A[j, j] = s
        for i in range(j + 1, n):
            t = A[i, j]
            for p in range(j):
                t -= A[i, p] * A[j, p]
            A[i, j] = t / s
    return True


@njit(cache=True)
def cholesky_solve_ones(L, n, out):
    """Solve ``L L^T out = 1`` for a lower factor L (leading n x n block). O(n^2)."""
    for i in range(n):
        t = 1.0
        for p in range(i):
            t -= L[i, p] * out[p]
        out[i] = t / L[i, i]
    for i in range(n - 1, -1, -1):
        t = out[i]
        for p in range(i + 1, n):
            t -= L[p, i] * out[p]
        out[i] = t / L[i, i]


@njit(cache=True)
def barycenter_row(x, T, neighbors, reg, diff, gram, factor, w):
    """Weights reconstructing x from the rows ``T[neighbors]``; returns the retry count.

    ``C_jl = (x - t_j) . (x - t_l)`` in float64, regularised by ``reg * trace(C)`` (``reg``
    when the trace is 0), then ``w = C^-1 1 / (1^T C^-1 1)`` by Cholesky. The differences
    are first divided by their largest magnitude (w is invariant to that scale), so C can
    neither overflow nor underflow. If the regularised matrix is still not numerically
    positive definite (only possible when ``reg`` is 0 or tiny), the ridge grows tenfold from
    ``1e-12 * trace`` until the factorisation succeeds; the number of such retries is
    returned (after ``_MAX_RETRIES`` the weights fall back to the centroid, 1/k each, a
    safety net that finite input does not reach). ``diff`` (k, d), ``gram`` and ``factor``
    (k, k) are work buffers, ``w`` (k,) the output row. O(k^2 d + k^3).
    """
    k = neighbors.shape[0]
    d = x.shape[0]
    largest = 0.0
    for c in range(k):
        row = T[neighbors[c]]
        for f in range(d):
            value = np.float64(x[f]) - np.float64(row[f])
            diff[c, f] = value
            largest = max(largest, abs(value))
    if largest > 0.0:  # the weights do not depend on the scale; this one cannot overflow
        inverse = 1.0 / largest
        for c in range(k):
            for f in range(d):
                diff[c, f] *= inverse
    trace = 0.0
    for a in range(k):
        for b in range(a + 1):
            acc = 0.0
            for f in range(d):
                acc += diff[a, f] * diff[b, f]
            gram[a, b] = acc
        trace += gram[a, a]
    ridge = reg * trace if trace > 0.0 else reg
    floor = 1e-12 * trace if trace > 0.0 else 1e-12
    retries = 0
    solved = False
    while not solved and retries <= _MAX_RETRIES:
        for a in range(k):
            for b in range(a):
                factor[a, b] = gram[a, b]
            factor[a, a] = gram[a, a] + ridge
        solved = cholesky_inplace(factor, k)
        if not solved:
            retries += 1
            ridge = max(10.0 * ridge, floor)
    if not solved:
        for c in range(k):
            w[c] = 1.0 / k
        return retries
    cholesky_solve_ones(factor, k, w)
    total = 0.0
    for c in range(k):
        total += w[c]
    for c in range(k):
        w[c] /= total
    return retries


@njit(cache=True, parallel=True)
def barycenter_weights(Q, T, indices, reg, block, out_w, out_retries):
    """Barycentric weights of every query row from its neighbours among the rows of T.

    Parameters
    ----------
    Q, T : (q, d), (n, d) float arrays (Q may be T)
    indices : (q, k) int64, neighbours of each query (never the query itself for fit)
    reg : regularisation factor (see :func:`barycenter_row`)
    block : rows per parallel iteration (work buffers are allocated once per block)
    out_w : (q, k) float64, row i gets the weights of query i (they sum to 1)
    out_retries : (q,) int64, extra-regularisation retries per row (0 almost always)

    Time O(q (k^2 d + k^3)), memory O(blocks in flight x k d).
    """
    q, k = indices.shape
    d = Q.shape[1]
    n_blocks = (q + block - 1) // block
    for bi in prange(n_blocks):
        diff = np.empty((k, d), dtype=np.float64)
        gram = np.empty((k, k), dtype=np.float64)
        factor = np.empty((k, k), dtype=np.float64)
        r0 = bi * block
        r1 = min(q, r0 + block)
        for i in range(r0, r1):
            out_retries[i] = barycenter_row(Q[i], T, indices[i], reg, diff, gram, factor,
                                            out_w[i])


@njit(cache=True)
def reverse_lists(indices):
    """For each row r of M, the points i with r in S_i and the slot of r in S_i. O(m k).

    Returns ``(ptr, point, slot)``: the entries of r are ``point[ptr[r]:ptr[r+1]]`` (ascending)
    with ``slot`` 0 for i itself and c + 1 for ``indices[i, c]``.
    """
    m, k = indices.shape
    ptr = np.zeros(m + 1, dtype=np.int64)
    for i in range(m):
        ptr[i + 1] += 1
        for c in range(k):
            ptr[indices[i, c] + 1] += 1
    for r in range(m):
        ptr[r + 1] += ptr[r]
    fill = ptr[:-1].copy()
    point = np.empty(m * (k + 1), dtype=np.int64)
    slot = np.empty(m * (k + 1), dtype=np.int64)
    for i in range(m):
        for s in range(k + 1):
            r = i if s == 0 else indices[i, s - 1]
            t = fill[r]
            point[t] = i
            slot[t] = s
            fill[r] = t + 1
    return ptr, point, slot


@njit(cache=True)
def _row_columns(r, indices, ptr, point, seen, cols):
    """Distinct columns of row r of M, unsorted, into ``cols``; returns their count.

    ``seen`` (m,) must be all False on entry and is all False again on return.
    """
    k = indices.shape[1]
    n = 0
    for t in range(ptr[r], ptr[r + 1]):
        i = point[t]
        for s in range(k + 1):
            col = i if s == 0 else indices[i, s - 1]
            if not seen[col]:
                seen[col] = True
                cols[n] = col
                n += 1
    for c in range(n):
        seen[cols[c]] = False
    return n


@njit(cache=True)
def _columns_buffer(ptr, r0, r1, k):
    """Room for the columns of any one row r0 <= r < r1 of M (see :func:`_row_columns`)."""
    widest = 0
    for r in range(r0, r1):
        widest = max(widest, ptr[r + 1] - ptr[r])
    return np.empty(widest * (k + 1), dtype=np.int64)


@njit(cache=True, parallel=True)
def m_row_counts(indices, ptr, point, n_blocks):
    """Number of stored entries in each row of M = (I - W)^T (I - W). O(m k^2)."""
    m, k = indices.shape
    counts = np.empty(m, dtype=np.int64)
    block = (m + n_blocks - 1) // n_blocks
    for bi in prange(n_blocks):
        r0 = bi * block
        r1 = min(m, r0 + block)
        if r0 >= r1:
            continue
        seen = np.zeros(m, dtype=np.bool_)
        cols = _columns_buffer(ptr, r0, r1, k)
        for r in range(r0, r1):
            counts[r] = _row_columns(r, indices, ptr, point, seen, cols)
    return counts


@njit(cache=True, parallel=True)
def m_fill(weights, indices, ptr, point, slot, n_blocks, indptr, out_indices, out_data):
    """Fill the CSR arrays of M = (I - W)^T (I - W), columns ascending in each row.

    ``indptr`` comes from :func:`m_row_counts`; ``out_indices`` may be int32 or int64.
    Entry (r, j) is ``sum_i u_i[r] u_i[j]`` over the i with r, j in S_i, in ascending i.
    Time O(m k^2 + nnz log(nnz / m)), memory O(n_blocks in flight x m) for the slot maps.
    """
    m, k = indices.shape
    block = (m + n_blocks - 1) // n_blocks
    for bi in prange(n_blocks):
        r0 = bi * block
        r1 = min(m, r0 + block)
        if r0 >= r1:
            continue
        seen = np.zeros(m, dtype=np.bool_)
        position = np.empty(m, dtype=np.int64)
        cols = _columns_buffer(ptr, r0, r1, k)
        for r in range(r0, r1):
            n = _row_columns(r, indices, ptr, point, seen, cols)
            cols[:n].sort()
            start = indptr[r]
            for c in range(n):
                out_indices[start + c] = cols[c]
                out_data[start + c] = 0.0
                position[cols[c]] = start + c
            for t in range(ptr[r], ptr[r + 1]):
                i = point[t]
                s_r = slot[t]
                a = 1.0 if s_r == 0 else -weights[i, s_r - 1]
                out_data[position[i]] += a
                for s in range(k):
                    out_data[position[indices[i, s]]] -= a * weights[i, s]


@njit(cache=True, parallel=True)
def weighted_rows(weights, indices, Y):
    """``out[i] = sum_c weights[i, c] * Y[indices[i, c]]`` (new samples' embedding). O(q k p)."""
    q, k = indices.shape
    p = Y.shape[1]
    out = np.zeros((q, p), dtype=np.float64)
    for i in prange(q):
        for c in range(k):
            w = weights[i, c]
            row = Y[indices[i, c]]
            for t in range(p):
                out[i, t] += w * row[t]
    return out
