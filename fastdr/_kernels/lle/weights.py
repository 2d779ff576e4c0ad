"""Locally linear embedding kernels: barycentric weights and new samples' embedding.

Layout of W. Row i of the (m, k) arrays ``weights`` and ``indices`` holds the weights that
reconstruct x_i from its neighbours, ``x_i ~ sum_c weights[i, c] * X[indices[i, c]]``. As an
m x m matrix, ``W[i, indices[i, c]] = weights[i, c]``; each row of W sums to 1, and the cost of
an embedding Y (m x p) is ``||(I - W) Y||_F^2 = trace(Y^T M Y)`` with

    M = (I - W)^T (I - W) = I - W - W^T + W^T W.

Texts differ on the transpose: ``(I - W)(I - W)^T`` is the same matrix only for the column
layout (column i of W reconstructing x_i). With the row layout used here the transposed product
is wrong: ``M 1 = 0`` (the constant null vector that LLE discards) holds only for
``(I - W)^T (I - W)``, because ``(I - W) 1 = 0``.

Assembly. Row i of I - W is the sparse vector ``u_i`` on the k + 1 indices ``S_i = (i,
indices[i, 0], ..., indices[i, k-1])`` with values ``(1, -w_i0, ..., -w_i,k-1)``, so ``M =
sum_i u_i u_i^T``: the rank-one case of the one race-free CSR assembly that the other LLE
methods use too (:func:`fastdr._kernels.lle.assembly.block_fill`). Every entry is summed over
i in ascending order, so M is bitwise symmetric and independent of the thread count.
"""

import numpy as np
from numba import njit, prange

from ..._config import LLE_MAX_RETRIES as _MAX_RETRIES
from ..knn.vote import add_weighted_rows


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
def lower_gram(D, out):
    """Lower triangle (diagonal included) of ``D D^T`` (D k x d) into ``out``, each entry a
    float64 sum over the columns in order; the upper triangle is not written. O(k^2 d)."""
    k, d = D.shape
    for a in range(k):
        for b in range(a + 1):
            acc = 0.0
            for f in range(d):
                acc += D[a, f] * D[b, f]
            out[a, b] = acc


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
    lower_gram(diff, gram)
    trace = 0.0
    for a in range(k):
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


@njit(cache=True, parallel=True)
def weighted_rows(weights, indices, Y):
    """``out[i] = sum_c weights[i, c] * Y[indices[i, c]]`` (new samples' embedding). O(q k p)."""
    q = indices.shape[0]
    out = np.zeros((q, Y.shape[1]), dtype=np.float64)
    for i in prange(q):
        add_weighted_rows(out, i, indices, weights, Y)
    return out
