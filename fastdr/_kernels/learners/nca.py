"""NCA and MLKR: softmax-neighbour objectives and their gradients over blocks of rows.

For a linear map ``A`` (r x d) and projected points ``z_i = A x_i``, row ``i`` has the softmax
``p_ij = exp(-|z_i - z_j|^2) / sum_{k != i} exp(-|z_i - z_k|^2)`` (``p_ii = 0``) and the
probability ``p_i = sum_{j in C_i} p_ij`` of being classified correctly. The objective is
``f(A) = sum_i p_i`` and its gradient is

    grad f(A) = -2 A sum_ij w_ij (x_i - x_j)(x_i - x_j)^T,   w_ij = ([j in C_i] - p_i) p_ij,

where the sum is the graph-Laplacian form ``X^T (diag(rowsum W + colsum W) - W - W^T) X``.
MLKR (metric learning for kernel regression, Weinberger and Tesauro 2007) shares all of it
but the weights: with real targets ``y``, the leave-one-out estimate ``yhat_i = sum_j p_ij
y_j``, the loss ``L(A) = sum_i (yhat_i - y_i)^2`` and

    grad L(A) = -4 A sum_ij w_ij (x_i - x_j)(x_i - x_j)^T,
    w_ij = (yhat_i - y_i)(y_j - yhat_i) p_ij.

The kernel walks blocks of rows: one GEMM gives the block's projected distances (norm trick on
centred ``Z``); each row keeps only its candidates ``j`` with ``d_ij <= min_j d_ij + CUT``
(each other term ``p_ij`` is below the round-off of the softmax sum, all of them together
below ``m exp(-CUT)`` of it, 3e-14 at m = 50,000; typically a few per cent of
the row), takes their exp and weights, and ``W_blk X`` is formed from those sparse rows (or by
a GEMM when the rows are dense enough for that to be cheaper), giving
``X_blk^T (W_blk X)``. Nothing m x m (or m x m x d) is ever held: memory is
O(block x m + n_chunks x m + m x (r + d)).
"""

import numpy as np
from numba import njit, prange

from ..._config import FASTMATH
from ..._config import NCA_DENSE_COST as DENSE_COST
from ..._config import NCA_SPARSE_COST as SPARSE_COST
from ..vexp import exp_shifted

_NO_SIGN = np.int64(0x7FFFFFFFFFFFFFFF)  # all bits of a double but its sign
# softmax terms below exp(-CUT) = 5.7e-19 times the row's largest term are dropped: each is
# under the double-precision round-off of the row's sum, which the largest term alone makes
# (all m of them together at most m * 5.7e-19 of it: 3e-14 at m = 50,000)
CUT = 42.0
AUTO, SPARSE, DENSE = 0, 1, 2  # how a block's W X is formed (see _chunk_sums)
NCA, MLKR = 0, 1  # which objective's weights (see _block_weights)


@njit(cache=True, fastmath=set(FASTMATH))
def _distances_row(gram_row, z_norms, norm_i, i):
    """Overwrite ``gram_row`` (``z_i . z_j``) with ``|z_i - z_j|^2``; return min over j != i.

    O(m). Distances are clamped at 0, so their bit patterns order like the values and the
    minimum runs as a vectorisable integer reduction. The diagonal entry is set to +inf, so
    that it never decides the minimum nor becomes a candidate.
    """
    m = gram_row.shape[0]
    for j in range(m):
        value = norm_i + z_norms[j] - 2.0 * gram_row[j]
        gram_row[j] = value if value > 0.0 else 0.0
    gram_row[i] = np.inf
    bits = gram_row.view(np.int64)
    smallest = bits[i]
    for j in range(m):
        magnitude = bits[j] & _NO_SIGN  # a -0.0 must not pass for the smallest value
        smallest = magnitude if magnitude < smallest else smallest
    bits[i] = smallest  # read the bits as a float through the (ignored) diagonal slot
    value = gram_row[i]
    gram_row[i] = np.inf
    return value


@njit(cache=True)
def _candidates(row, limit, idx):
    """Write the indices j with ``row[j] <= limit`` into ``idx``, in order; return how many.

    ``<=``, so that the nearest point stays a candidate even where ``min + CUT`` rounds to
    ``min`` (distances above 2^59: every other term is then beyond ``exp(-128)``).

    Branch-free (each j is written, the count advances only for a candidate), so a row with
    few candidates costs one streaming pass. O(m).
    """
    count = 0
    for j in range(row.shape[0]):
        idx[count] = j
        count += 1 if row[j] <= limit else 0
    return count


@njit(cache=True, fastmath=set(FASTMATH))
def _candidate_weights(expo, idx, codes, code_i, colsum, out):
    """Turn the candidates' unnormalised ``exp`` values into ``w_ij``; return ``(p_i, sum w)``.

    ``out[k] = ([codes[j] == code_i] - p_i) p_ij`` for ``j = idx[k]``, with
    ``p_ij = expo[k] / sum_k expo[k]``; ``colsum[j] += out[k]``. O(number of candidates).
    """
    n = expo.shape[0]
    total = 0.0
    same = 0.0
    for k in range(n):
        e = expo[k]
        total += e
        same += e if codes[idx[k]] == code_i else 0.0
    inv_total = 1.0 / total
    p_i = same * inv_total
    row_total = 0.0
    for k in range(n):
        j = idx[k]
        indicator = 1.0 if codes[j] == code_i else 0.0
        w = (indicator - p_i) * (expo[k] * inv_total)
        out[k] = w
        colsum[j] += w
        row_total += w
    return p_i, row_total


@njit(cache=True, fastmath=set(FASTMATH))
def _regression_weights(expo, idx, targets, y_i, colsum, out):
    """MLKR's ``w_ij`` from the candidates' unnormalised ``exp`` values; return
    ``((yhat_i - y_i)^2, sum w)``.

    ``yhat_i = sum_k p_ij y_j`` and ``out[k] = (yhat_i - y_i)(y_j - yhat_i) p_ij`` for
    ``j = idx[k]``; ``colsum[j] += out[k]``. The row sum is 0 up to round-off. O(candidates).
    """
    n = expo.shape[0]
    total = 0.0
    weighted = 0.0
    for k in range(n):
        e = expo[k]
        total += e
        weighted += e * targets[idx[k]]
    inv_total = 1.0 / total
    y_hat = weighted * inv_total
    residual = y_hat - y_i
    row_total = 0.0
    for k in range(n):
        j = idx[k]
        w = residual * (targets[j] - y_hat) * (expo[k] * inv_total)
        out[k] = w
        colsum[j] += w
        row_total += w
    return residual * residual, row_total


@njit(cache=True)
def _block_weights(gram, idx_blk, counts, rows_blk, z_norms, labels, kind, colsum, rowsum,
                   values, expo, scratch):
    """Turn a block of Gram rows into the sparse rows of W; return the block's objective.

    ``labels`` (class codes for NCA, targets for MLKR) are float64; ``kind`` picks the
    weights (``NCA``: the sum of p_i; ``MLKR``: the sum of squared residuals).

    Row t keeps the ``counts[t]`` candidates ``j = idx_blk[t, k]`` with
    ``d_ij <= min_j d_ij + CUT`` and their weights in ``gram[t, k]``: the other entries have
    ``p_ij < exp(-CUT)`` times the largest, each below the double-precision round-off of the
    softmax sum, and count as 0. O(block x m); scratch buffers of length m.
    """
    objective = 0.0
    for t in range(rows_blk.shape[0]):
        i = rows_blk[t]
        row = gram[t]
        idx = idx_blk[t]
        smallest = _distances_row(row, z_norms, z_norms[i], i)
        count = _candidates(row, smallest + CUT, idx)
        for k in range(count):
            values[k] = row[idx[k]]
        exp_shifted(values[:count], smallest, expo[:count], scratch[:count])
        if kind == NCA:
            term, row_total = _candidate_weights(expo[:count], idx, labels, labels[i], colsum,
                                                 row[:count])
        else:
            term, row_total = _regression_weights(expo[:count], idx, labels, labels[i],
                                                  colsum, row[:count])
        counts[t] = count
        objective += term
        rowsum[i] = row_total
    return objective


@njit(cache=True)
def _expand_row(row, idx, count):
    """Scatter ``row[:count]`` (the weights of candidates ``idx[:count]``) into a dense row.

    In place: ``idx`` is increasing with ``idx[k] >= k``, so walking k downwards never
    overwrites a weight not yet moved. O(m).
    """
    upper = row.shape[0]
    for k in range(count - 1, -1, -1):
        j = idx[k]
        w = row[k]
        for q in range(j + 1, upper):
            row[q] = 0.0
        row[j] = w
        upper = j
    for q in range(upper):
        row[q] = 0.0


@njit(cache=True, fastmath=set(FASTMATH))
def _sparse_product(gram, idx_blk, counts, X, out):
    """``out[t] = sum_k gram[t, k] X[idx_blk[t, k]]``: the block of ``W X`` from sparse rows.

    Four candidates per sweep over the features: a quarter of the read-modify-writes of the
    accumulator than one candidate per sweep (bench: nca). Fixed order,
    so deterministic. O(candidates x d).
    """
    d = X.shape[1]
    acc = np.empty(d)
    for t in range(counts.shape[0]):
        acc[:] = 0.0
        weights = gram[t]
        idx = idx_blk[t]
        n = counts[t]
        k = 0
        while k + 4 <= n:
            w0, w1, w2, w3 = weights[k], weights[k + 1], weights[k + 2], weights[k + 3]
            x0, x1, x2, x3 = X[idx[k]], X[idx[k + 1]], X[idx[k + 2]], X[idx[k + 3]]
            for f in range(d):
                acc[f] += (w0 * x0[f] + w1 * x1[f]) + (w2 * x2[f] + w3 * x3[f])
            k += 4
        while k < n:
            w0 = weights[k]
            x0 = X[idx[k]]
            for f in range(d):
                acc[f] += w0 * x0[f]
            k += 1
        for f in range(d):
            out[t, f] = acc[f]


@njit(cache=True)
def _centred_projection(X, A):
    """``Z = X A^T`` centred on its mean (distances do not change), with row norms. O(m r d)."""
    m = X.shape[0]
    r = A.shape[0]
    Z = np.dot(X, np.ascontiguousarray(A.T))
    centre = np.zeros(r)
    for i in range(m):
        for f in range(r):
            centre[f] += Z[i, f]
    for f in range(r):
        centre[f] /= m
    z_norms = np.empty(m)
    for i in range(m):
        acc = 0.0
        for f in range(r):
            Z[i, f] -= centre[f]
            acc += Z[i, f] * Z[i, f]
        z_norms[i] = acc
    return Z, z_norms


@njit(cache=True)
def _chunk_sums(X, Z, ZT, z_norms, labels, kind, rows, block, mode, first, last, colsum,
                rowsum, S):
    """Row blocks ``first..last``: add ``X_blk^T (W_blk X)`` into S and colsum W into colsum.

    Writes ``rowsum[i]`` for the chunk's rows; returns the chunk's sum of p_i. ``W_blk X``
    comes from the sparse rows (``mode == SPARSE``), or from one GEMM after scattering them
    into the (dense) Gram block in place (``mode == DENSE``); ``AUTO`` picks the cheaper per
    block by the costs ``SPARSE_COST`` and ``DENSE_COST``. Time O(n_rows m r + candidates d),
    memory O(block m).
    """
    m, d = X.shape
    r = Z.shape[1]
    n_rows = rows.shape[0]
    gram = np.empty((block, m))
    idx_blk = np.empty((block, m), dtype=np.int32)
    counts = np.empty(block, dtype=np.int64)
    Z_blk = np.empty((block, r))
    X_blk = np.empty((block, d))
    WX = np.empty((block, d))
    values = np.empty(m)
    expo = np.empty(m)
    scratch = np.empty(m)
    objective = 0.0
    for b in range(first, last):
        start = b * block
        stop = min(n_rows, start + block)
        nb = stop - start
        rows_blk = rows[start:stop]
        for t in range(nb):
            i = rows_blk[t]
            for f in range(r):
                Z_blk[t, f] = Z[i, f]
            for f in range(d):
                X_blk[t, f] = X[i, f]
        block_gram = gram[:nb]
        np.dot(Z_blk[:nb], ZT, block_gram)
        objective += _block_weights(block_gram, idx_blk, counts[:nb], rows_blk, z_norms,
                                    labels, kind, colsum, rowsum, values, expo, scratch)
        if mode == AUTO:
            dense = DENSE_COST * nb * m < SPARSE_COST * counts[:nb].sum()
        else:
            dense = mode == DENSE
        if dense:
            for t in range(nb):
                _expand_row(block_gram[t], idx_blk[t], counts[t])
            np.dot(block_gram, X, WX[:nb])
        else:
            _sparse_product(block_gram, idx_blk, counts[:nb], X, WX[:nb])
        S += np.dot(X_blk[:nb].T, WX[:nb])
    return objective


@njit(cache=True, parallel=True)
def _all_chunks(X, Z, ZT, z_norms, labels, kind, rows, block, mode, colsums, rowsum,
                partial_S, partial_obj):
    """Run :func:`_chunk_sums` for each chunk in parallel; chunk c writes only its partials."""
    n_chunks = colsums.shape[0]
    n_blocks = (rows.shape[0] + block - 1) // block
    for c in prange(n_chunks):
        first = c * n_blocks // n_chunks
        last = (c + 1) * n_blocks // n_chunks
        partial_obj[c] = _chunk_sums(X, Z, ZT, z_norms, labels, kind, rows, block, mode,
                                     first, last, colsums[c], rowsum, partial_S[c])


@njit(cache=True)
def softmax_objective_gradient(X, A, labels, kind, rows, block, n_chunks, mode=AUTO):
    """The objective and ``H = X^T (diag(rowsum W + colsum W) - W - W^T) X`` of NCA or MLKR.

    See :func:`nca_objective_gradient` and :func:`mlkr_objective_gradient`; ``labels`` are
    float64 (class codes or targets), ``kind`` is ``NCA`` or ``MLKR``.
    """
    m, d = X.shape
    Z, z_norms = _centred_projection(X, A)
    ZT = np.ascontiguousarray(Z.T)
    colsums = np.zeros((n_chunks, m))
    partial_S = np.zeros((n_chunks, d, d))
    partial_obj = np.zeros(n_chunks)
    rowsum = np.zeros(m)
    _all_chunks(X, Z, ZT, z_norms, labels, kind, rows, block, mode, colsums, rowsum,
                partial_S, partial_obj)

    objective = 0.0
    S = np.zeros((d, d))
    degree = rowsum.copy()
    for c in range(n_chunks):
        objective += partial_obj[c]
        S += partial_S[c]
        for j in range(m):
            degree[j] += colsums[c, j]
    X_weighted = np.empty((m, d))
    for i in range(m):
        for f in range(d):
            X_weighted[i, f] = X[i, f] * degree[i]
    return objective, np.dot(X_weighted.T, X) - S - S.T


@njit(cache=True)
def mlkr_objective_gradient(X, A, targets, rows, block, n_chunks, mode=AUTO):
    """MLKR's loss ``sum_{i in rows} (yhat_i - y_i)^2`` and its gradient with respect to A.

    As :func:`nca_objective_gradient`, with real ``targets`` (float64) in place of the class
    codes; the gradient is ``-4 A H``.

    Returns
    -------
    loss : float
    gradient : ndarray of shape (r, d)
    """
    loss, H = softmax_objective_gradient(X, A, targets, MLKR, rows, block, n_chunks, mode)
    return loss, -4.0 * np.dot(A, H)


@njit(cache=True)
def nca_objective_gradient(X, A, codes, rows, block, n_chunks, mode=AUTO):
    """NCA objective ``sum_{i in rows} p_i`` and its gradient with respect to ``A``.

    The row blocks form ``n_chunks`` fixed chunks processed in parallel (each writes only its
    own partial sums, merged serially in chunk order, so the result does not depend on the
    thread count). ``rows`` selects the rows i of the objective (all rows for the full
    objective, a mini-batch for SGD); the softmax of each row always runs over all m points.

    ``mode`` fixes how each block's ``W X`` is formed (``AUTO``, ``SPARSE`` or ``DENSE``; the
    results agree to round-off). Time O(|rows| m r + candidates x d + m d^2), at most
    O(|rows| m (r + d) + m d^2); memory O(n_chunks (block + 1) m + m (r + d) + d^2).

    Returns
    -------
    objective : float
    gradient : ndarray of shape (r, d)
    """
    labels = codes.astype(np.float64)
    objective, H = softmax_objective_gradient(X, A, labels, NCA, rows, block, n_chunks, mode)
    return objective, -2.0 * np.dot(A, H)
