"""Kernels of the modified, Hessian and LTSA variants of LLE: local blocks, then a sparse M.

Each variant writes its matrix as a sum of small dense symmetric blocks,
``M = sum_i P_i^T B_i P_i``, where ``P_i`` picks the index set ``S_i`` of point i (a row of
``sets``) and ``B_i`` is ``|S_i| x |S_i|``:

* modified LLE (Zhang & Wang): ``S_i = (i, neighbours of i)``, ``B_i = Wh Wh^T`` with
  ``Wh = [-1_s^T; W_i]`` and ``W_i`` the k x s_i multiple weights of point i;
* Hessian eigenmaps (Donoho & Grimes): ``S_i = neighbours of i`` (not i itself, as in
  scikit-learn), ``B_i = w w^T`` with w the scaled Hessian estimator;
* LTSA (Zhang & Zha): ``S_i = neighbours of i``, ``B_i = I - G G^T`` with
  ``G = [1/sqrt(k), top left singular vectors of the centred neighbourhood]``.

The blocks of all points are computed in parallel (one iteration owns a range of points and
writes only their blocks), stored as an (m, s, s) array: memory O(m k^2), nothing m x m.
:mod:`fastdr._kernels.lle.assembly` then sums them into a CSR matrix without races.
"""

import numpy as np
from numba import njit, prange

from .weights import lower_gram

# --------------------------------------------------------------------------- small dense work


@njit(cache=True)
def householder_full_q(A, taus, Q):
    """Full k x k orthogonal factor of the Householder QR of A (k x n, n <= k). O(k^2 n).

    LAPACK's conventions (``dgeqr2`` reflectors ``H = I - tau v v^T`` with ``v[0] = 1`` and
    ``beta = -sign(alpha) ||x||``, then ``Q = H_0 H_1 ... H_{n-1}``), so the columns of Q
    beyond n are the same as scipy's ``qr(A)`` (mode "full") gives, to round-off. The
    reflectors do not change when a column of A changes sign. A is overwritten (R above the
    diagonal, the reflectors below); ``taus`` (n,) is work space.
    """
    k, n = A.shape
    for j in range(n):
        alpha = A[j, j]
        xnorm = 0.0
        for r in range(j + 1, k):
            xnorm += A[r, j] * A[r, j]
        xnorm = np.sqrt(xnorm)
        if xnorm == 0.0:
            taus[j] = 0.0
            continue
        norm = np.hypot(alpha, xnorm)
        beta = -norm if alpha >= 0.0 else norm
        taus[j] = (beta - alpha) / beta
        scale = 1.0 / (alpha - beta)
        for r in range(j + 1, k):
            A[r, j] *= scale
        A[j, j] = beta
        for c in range(j + 1, n):
            s = A[j, c]
            for r in range(j + 1, k):
                s += A[r, j] * A[r, c]
            s *= taus[j]
            A[j, c] -= s
            for r in range(j + 1, k):
                A[r, c] -= s * A[r, j]
    for a in range(k):
        for b in range(k):
            Q[a, b] = 1.0 if a == b else 0.0
    for j in range(n - 1, -1, -1):
        tau = taus[j]
        if tau == 0.0:
            continue
        for c in range(k):
            s = Q[j, c]
            for r in range(j + 1, k):
                s += A[r, j] * Q[r, c]
            s *= tau
            Q[j, c] -= s
            for r in range(j + 1, k):
                Q[r, c] -= s * A[r, j]


@njit(cache=True)
def centred_neighbourhood(X, neighbors, out):
    """``out = X[neighbors]`` in float64 minus its column means. O(k d)."""
    k = neighbors.shape[0]
    d = X.shape[1]
    for f in range(d):
        total = 0.0
        for c in range(k):
            value = np.float64(X[neighbors[c], f])
            out[c, f] = value
            total += value
        mean = total / k
        for c in range(k):
            out[c, f] -= mean


@njit(cache=True)
def top_left_singular_vectors(G, n_components):
    """The ``n_components`` leading left singular vectors of G (k x d), as a k x p array.

    LAPACK's divide-and-conquer SVD (the driver scikit-learn's LTSA and Hessian use). Only
    the spanned subspace and the vectors up to sign matter to the callers. O(k d min(k, d)).
    """
    U, _, _ = np.linalg.svd(G, full_matrices=False)
    return U[:, :n_components]


@njit(cache=True)
def _mirror_upper(B):
    s = B.shape[0]
    for a in range(s):
        for b in range(a):
            B[a, b] = B[b, a]


# --------------------------------------------------------------------------- LTSA


@njit(cache=True)
def ltsa_block(X, neighbors, n_components, G, B):
    """``B = I - 1 1^T / k - U U^T`` for the top singular vectors U of the centred
    neighbourhood (k x d work buffer G). O(k d min(k, d) + k^2 p)."""
    k = neighbors.shape[0]
    centred_neighbourhood(X, neighbors, G)
    U = top_left_singular_vectors(G, n_components)
    for a in range(k):
        for b in range(a, k):
            acc = 1.0 / k
            for t in range(n_components):
                acc += U[a, t] * U[b, t]
            B[a, b] = (1.0 if a == b else 0.0) - acc
    _mirror_upper(B)


@njit(cache=True, parallel=True)
def ltsa_blocks(X, indices, n_components, block, out_blocks):
    """LTSA block of every point into ``out_blocks`` (m, k, k). O(m k d min(k, d))."""
    m, k = indices.shape
    d = X.shape[1]
    n_chunks = (m + block - 1) // block
    for ci in prange(n_chunks):
        G = np.empty((k, d), dtype=np.float64)
        for i in range(ci * block, min(m, (ci + 1) * block)):
            ltsa_block(X, indices[i], n_components, G, out_blocks[i])


# --------------------------------------------------------------------------- Hessian


@njit(cache=True)
def hessian_block(X, neighbors, n_components, hessian_tol, G, Y, taus, Q, B):
    """Hessian-eigenmaps block ``B = w w^T`` of one point. O(k d min(k, d) + k^2 n_y).

    Y (k x (1 + p + p(p+1)/2)) holds 1, the top p singular vectors U of the centred
    neighbourhood and their products ``U_a U_b`` (a <= b, in scikit-learn's order); w is
    every column of Y's full Q after the first 1 + p, each divided by its sum (by 1 where the
    sum is below ``hessian_tol`` in magnitude).
    """
    k = neighbors.shape[0]
    p = n_components
    centred_neighbourhood(X, neighbors, G)
    U = top_left_singular_vectors(G, p)
    for r in range(k):
        Y[r, 0] = 1.0
        for t in range(p):
            Y[r, 1 + t] = U[r, t]
        j = 1 + p
        for a in range(p):
            for b in range(a, p):
                Y[r, j] = U[r, a] * U[r, b]
                j += 1
    householder_full_q(Y, taus, Q)
    first = 1 + p
    for c in range(first, k):
        total = 0.0
        for r in range(k):
            total += Q[r, c]
        if abs(total) < hessian_tol:
            total = 1.0
        for r in range(k):
            Q[r, c] /= total
    for a in range(k):
        for b in range(a, k):
            acc = 0.0
            for c in range(first, k):
                acc += Q[a, c] * Q[b, c]
            B[a, b] = acc
    _mirror_upper(B)


@njit(cache=True, parallel=True)
def hessian_blocks(X, indices, n_components, hessian_tol, block, out_blocks):
    """Hessian block of every point into ``out_blocks`` (m, k, k). O(m k^2 (d + k))."""
    m, k = indices.shape
    d = X.shape[1]
    n_y = 1 + n_components + n_components * (n_components + 1) // 2
    n_chunks = (m + block - 1) // block
    for ci in prange(n_chunks):
        G = np.empty((k, d), dtype=np.float64)
        Y = np.empty((k, n_y), dtype=np.float64)
        taus = np.empty(n_y, dtype=np.float64)
        Q = np.empty((k, k), dtype=np.float64)
        for i in range(ci * block, min(m, (ci + 1) * block)):
            hessian_block(X, indices[i], n_components, hessian_tol, G, Y, taus, Q,
                          out_blocks[i])


# --------------------------------------------------------------------------- modified LLE


@njit(cache=True)
def local_spectrum(X, i, neighbors, D, C):
    """Eigenpairs (ascending) of ``C = D D^T``, ``D = X[neighbors] - X[i]`` (k x d work).

    O(k^2 d + k^3).
    """
    k = neighbors.shape[0]
    d = X.shape[1]
    for c in range(k):
        row = neighbors[c]
        for f in range(d):
            D[c, f] = np.float64(X[row, f]) - np.float64(X[i, f])
    lower_gram(D, C)
    for a in range(k):
        for b in range(a):
            C[b, a] = C[a, b]
    return np.linalg.eigh(C)


@njit(cache=True)
def tail_ratio(values, n_kept, n_components):
    """Sum of the kept eigenvalues after the top ``n_components`` over the sum of the top
    ones (``values`` ascending, the top ``n_kept`` counted); 0 when the top sum is 0."""
    k = values.shape[0]
    top = 0.0
    rest = 0.0
    for t in range(n_kept):
        if t < n_components:
            top += values[k - 1 - t]
        else:
            rest += values[k - 1 - t]
    return rest / top if top > 0.0 else 0.0


@njit(cache=True, parallel=True)
def modified_ratios(X, indices, n_components, block, out_ratio):
    """:func:`tail_ratio` of every point's local spectrum (their median is eta). O(m k^3)."""
    m, k = indices.shape
    d = X.shape[1]
    n_kept = min(d, k)
    n_chunks = (m + block - 1) // block
    for ci in prange(n_chunks):
        D = np.empty((k, d), dtype=np.float64)
        C = np.empty((k, k), dtype=np.float64)
        for i in range(ci * block, min(m, (ci + 1) * block)):
            values, _ = local_spectrum(X, i, indices[i], D, C)
            out_ratio[i] = tail_ratio(values, n_kept, n_components)


@njit(cache=True)
def null_space_size(values, n_kept, eta):
    """s_i: the exact null directions (k - n_kept) plus the number of splits j of the kept
    eigenvalues (descending) whose tail-to-head ratio ``total / head_j - 1`` is below eta;
    at least 1."""
    k = values.shape[0]
    total = 0.0
    for t in range(n_kept):
        total += values[k - 1 - t]
    size = k - n_kept
    head = 0.0
    for j in range(n_kept - 1):
        head += values[k - 1 - j]
        if head > 0.0 and total / head - 1.0 < eta:
            size += 1
    return max(size, 1)


@njit(cache=True)
def modified_block(X, i, neighbors, n_components, eta, modified_tol, D, C, B):
    """Modified-LLE block ``B = Wh Wh^T`` ((k+1) x (k+1), on ``(i, neighbors)``) of point i.

    ``Wh = [-1_s^T; W_i]`` with ``W_i = V_i H_i + (1 - alpha) w 1_s^T``: V_i the bottom s_i
    eigenvectors of the local Gram matrix, H_i the Householder reflection taking
    ``V_i^T 1`` to ``alpha 1_s`` (the identity when that step is shorter than
    ``modified_tol``), w the weights regularised by 1e-3 times the trace. The block depends
    on V_i only through its span. O(k^2 d + k^3).
    """
    k = neighbors.shape[0]
    n_kept = min(X.shape[1], k)
    values, V = local_spectrum(X, i, neighbors, D, C)
    size = null_space_size(values, n_kept, eta)
    trace = 0.0
    for t in range(n_kept):
        trace += values[k - 1 - t]
    reg = 1e-3 * trace
    # w = (C + reg I)^-1 1 / sum, the directions beyond the kept ones counted as exact zeros
    weights = np.zeros(k, dtype=np.float64)
    for c in range(k):
        projection = 0.0
        for r in range(k):
            projection += V[r, c]
        value = values[c] if c >= k - n_kept else 0.0
        projection /= value + reg
        for r in range(k):
            weights[r] += V[r, c] * projection
    total = 0.0
    for r in range(k):
        total += weights[r]
    for r in range(k):
        weights[r] /= total
    sums = np.zeros(size, dtype=np.float64)  # V_i^T 1
    for c in range(size):
        for r in range(k):
            sums[c] += V[r, c]
    alpha = np.sqrt(np.sum(sums * sums) / size)
    h = alpha - sums
    norm_h = np.sqrt(np.sum(h * h))
    if norm_h < modified_tol:
        h[:] = 0.0
    else:
        h /= norm_h
    W = np.empty((k, size), dtype=np.float64)
    for r in range(k):
        vh = 0.0
        for c in range(size):
            vh += V[r, c] * h[c]
        for c in range(size):
            W[r, c] = V[r, c] - 2.0 * vh * h[c] + (1.0 - alpha) * weights[r]
    B[0, 0] = size
    for a in range(k):
        row_sum = 0.0
        for c in range(size):
            row_sum += W[a, c]
        B[0, a + 1] = -row_sum
        for b in range(a, k):
            acc = 0.0
            for c in range(size):
                acc += W[a, c] * W[b, c]
            B[a + 1, b + 1] = acc
    _mirror_upper(B)


@njit(cache=True, parallel=True)
def modified_blocks(X, indices, n_components, eta, modified_tol, block, out_blocks):
    """Modified-LLE block of every point into ``out_blocks`` (m, k+1, k+1). O(m k^3)."""
    m, k = indices.shape
    d = X.shape[1]
    n_chunks = (m + block - 1) // block
    for ci in prange(n_chunks):
        D = np.empty((k, d), dtype=np.float64)
        C = np.empty((k, k), dtype=np.float64)
        for i in range(ci * block, min(m, (ci + 1) * block)):
            modified_block(X, i, indices[i], n_components, eta, modified_tol, D, C,
                           out_blocks[i])
