"""``Xc^T (Xc v)`` for the centred data ``Xc = X - 1 mean^T``, in one pass over X.

ARPACK's truncated SVD of a tall X (scipy's ``svds``) applies the Gram operator as two
products, ``u = Xc v`` and then ``Xc^T u``: two passes over X, each a memory-bound BLAS
matrix-vector product, or two sparse ones (scipy's are single-threaded). Here each row is
read once: ``t_i = x_i . v - mean . v`` and ``x_i t_i`` are formed while the row is in L1,
so the operator costs one pass over X, split over the threads. The centring stays implicit:
``Xc^T t = X^T t - mean (1 . t)``.

Rows are split into ``GRAM_CHUNKS`` fixed chunks (by stored entries for CSR), each adding to
its own accumulator; the accumulators are merged in chunk order, so the result does not
depend on the thread count.
"""

import numpy as np
from numba import njit, prange

from ..._config import FASTMATH, GRAM_CHUNKS, GRAM_MATRIX_CHUNKS


@njit(cache=True, fastmath=set(FASTMATH))
def _dense_rows_gram(X, shift, v, acc, i0, i1):
    """``acc += sum_i t_i x_i`` with ``t_i = x_i . v - shift`` for rows i0 <= i < i1.

    Four rows at a time (the accumulator is read and written once per four rows), in
    float64. Returns ``sum_i t_i``. Time O((i1 - i0) d).
    """
    d = X.shape[1]
    total = 0.0
    i = i0
    while i + 4 <= i1:
        r0 = X[i]
        r1 = X[i + 1]
        r2 = X[i + 2]
        r3 = X[i + 3]
        t0 = 0.0
        t1 = 0.0
        t2 = 0.0
        t3 = 0.0
        for j in range(d):
            vj = v[j]
            t0 += np.float64(r0[j]) * vj
            t1 += np.float64(r1[j]) * vj
            t2 += np.float64(r2[j]) * vj
            t3 += np.float64(r3[j]) * vj
        t0 -= shift
        t1 -= shift
        t2 -= shift
        t3 -= shift
        total += (t0 + t1) + (t2 + t3)
        for j in range(d):
            acc[j] += (t0 * np.float64(r0[j]) + t1 * np.float64(r1[j])) + (
                t2 * np.float64(r2[j]) + t3 * np.float64(r3[j]))
        i += 4
    while i < i1:
        row = X[i]
        t = 0.0
        for j in range(d):
            t += np.float64(row[j]) * v[j]
        t -= shift
        total += t
        for j in range(d):
            acc[j] += t * np.float64(row[j])
        i += 1
    return total


@njit(cache=True)
def _csr_rows_gram(indptr, indices, data, shift, v, acc, i0, i1):
    """The CSR form of :func:`_dense_rows_gram`: ``acc[indices] += t_i data`` row by row.

    Column indices must lie in ``[0, len(v))`` (checked by the caller). ``indptr`` and
    ``indices`` should be unsigned views: numba then drops its negative-index wraparound
    branch from the gather and scatter loops, the bulk of a product's time (bench:
    pca_sparse_arpack). Returns ``sum_i t_i``. Time O(stored entries of the rows).
    """
    total = 0.0
    for i in range(i0, i1):
        start = indptr[i]
        stop = indptr[i + 1]
        t = 0.0
        for p in range(start, stop):
            t += np.float64(data[p]) * v[indices[p]]
        t -= shift
        total += t
        for p in range(start, stop):
            acc[indices[p]] += t * np.float64(data[p])
    return total


@njit(cache=True)
def _merge(acc, sums, mean, out):
    """``out = sum_c acc[c] - mean * sum_c sums[c]``, summed in chunk order."""
    n_chunks, d = acc.shape
    total = 0.0
    for c in range(n_chunks):
        total += sums[c]
    for j in range(d):
        s = 0.0
        for c in range(n_chunks):
            s += acc[c, j]
        out[j] = s - mean[j] * total


@njit(cache=True, parallel=True)
def centred_gram_dense(X, mean, v, out):
    """``out = (X - 1 mean^T)^T (X - 1 mean^T) v`` for a dense C-ordered X (m, d).

    Parameters
    ----------
    X : (m, d) float32 or float64, C-ordered
    mean : (d,) float64
    v : (d,) float64
    out : (d,) float64

    Time O(m d), one pass over X; memory O(GRAM_CHUNKS d).
    """
    m, d = X.shape
    shift = 0.0
    for j in range(d):
        shift += mean[j] * v[j]
    n_chunks = max(1, min(GRAM_CHUNKS, m // 4))
    acc = np.zeros((n_chunks, d))
    sums = np.zeros(n_chunks)
    for c in prange(n_chunks):
        sums[c] = _dense_rows_gram(X, shift, v, acc[c], c * m // n_chunks,
                                   (c + 1) * m // n_chunks)
    _merge(acc, sums, mean, out)


@njit(cache=True)
def _entry_chunks(indptr, n_chunks):
    """Row bounds (n_chunks + 1,) splitting a CSR X into chunks of about equal stored
    entries: non-decreasing from 0 to m, so every row lies in exactly one chunk."""
    m = indptr.shape[0] - 1
    nnz = indptr[m]
    bounds = np.empty(n_chunks + 1, dtype=np.int64)
    bounds[0] = 0
    for c in range(1, n_chunks):
        bounds[c] = np.searchsorted(indptr, (c * nnz) // n_chunks)
    bounds[n_chunks] = m
    for c in range(1, n_chunks + 1):  # non-decreasing, within [0, m]
        bounds[c] = min(m, max(bounds[c], bounds[c - 1]))
    return bounds


@njit(cache=True, parallel=True)
def centred_gram_csr(indptr, indices, data, mean, v, out):
    """:func:`centred_gram_dense` for a CSR X given by its arrays (d = ``len(v)``).

    Chunks hold about equal numbers of stored entries. ``indptr`` must be non-decreasing
    from 0 to at most ``len(data)`` and every used index must lie in ``[0, d)``: the caller
    checks both. Time O(m + nnz); memory O(GRAM_CHUNKS d).
    """
    m = indptr.shape[0] - 1
    d = v.shape[0]
    shift = 0.0
    for j in range(d):
        shift += mean[j] * v[j]
    n_chunks = max(1, min(GRAM_CHUNKS, m))
    bounds = _entry_chunks(indptr, n_chunks)
    acc = np.zeros((n_chunks, d))
    sums = np.zeros(n_chunks)
    for c in prange(n_chunks):
        sums[c] = _csr_rows_gram(indptr, indices, data, shift, v, acc[c], bounds[c],
                                 bounds[c + 1])
    _merge(acc, sums, mean, out)


@njit(cache=True)
def _csr_rows_outer(indptr, indices, data, acc, i0, i1):
    """``acc += sum_i x_i x_i^T`` over the CSR rows i0 <= i < i1, in float64, on the upper
    triangle only: each unordered pair of a row's stored entries once, added at (min, max)
    of their columns (twice on the diagonal when a column is stored twice, so a duplicated
    column's sum is what is squared). Half the scattered updates of the full square. Time
    O(sum of the rows' squared stored counts / 2)."""
    for i in range(i0, i1):
        start = indptr[i]
        stop = indptr[i + 1]
        for p in range(start, stop):
            value = np.float64(data[p])
            row = indices[p]
            acc[row, row] += value * value
            for q in range(p + 1, stop):
                col = indices[q]
                product = value * np.float64(data[q])
                if row < col:
                    acc[row, col] += product
                elif col < row:
                    acc[col, row] += product
                else:
                    acc[row, row] += 2.0 * product


@njit(cache=True, parallel=True)
def csr_gram_matrix(indptr, indices, data, d):
    """``X^T X`` (d, d), float64, of a CSR X given by its arrays, uncentred.

    Rows are split into ``GRAM_MATRIX_CHUNKS`` fixed chunks of about equal stored entries,
    each summed into its own accumulator (upper triangle, :func:`_csr_rows_outer`); the
    accumulators are added in chunk order and mirrored, so the result is exactly symmetric
    and does not depend on the thread count. Index arrays as in :func:`centred_gram_csr`
    (checked by the caller; unsigned views). Time O(sum_i nnz_i^2), memory
    O(GRAM_MATRIX_CHUNKS d^2).
    """
    m = indptr.shape[0] - 1
    n_chunks = max(1, min(GRAM_MATRIX_CHUNKS, m))
    bounds = _entry_chunks(indptr, n_chunks)
    acc = np.zeros((n_chunks, d, d))
    for c in prange(n_chunks):
        _csr_rows_outer(indptr, indices, data, acc[c], bounds[c], bounds[c + 1])
    out = acc[0].copy()
    for c in range(1, n_chunks):
        out += acc[c]
    for i in range(d):
        for j in range(i + 1, d):
            out[j, i] = out[i, j]
    return out


@njit(cache=True)
def csr_column_moments(indptr, indices, data, d):
    """Column means and centred column sums of squares ``||x_j - mean_j 1||^2`` of a CSR X.

    Two serial passes over the stored entries: the column sums, then each stored value's
    squared distance to its column mean; the ``m - nnz_j`` implicit zeros of column j add
    ``mean_j^2`` each (no subtraction of two large sums). The per-column sums give both the
    total (their sum) and each column's cancellation (``m mean_j^2`` against them). Index
    arrays as in :func:`centred_gram_csr` (checked; unsigned views). Time O(m + nnz), memory
    O(d).
    """
    m = indptr.shape[0] - 1
    sums = np.zeros(d)
    counts = np.zeros(d, dtype=np.int64)
    for p in range(indptr[m]):
        j = indices[p]
        sums[j] += np.float64(data[p])
        counts[j] += 1
    mean = sums / m
    ssq = np.zeros(d)
    for p in range(indptr[m]):
        j = indices[p]
        r = np.float64(data[p]) - mean[j]
        ssq[j] += r * r
    for j in range(d):
        ssq[j] += (m - counts[j]) * mean[j] * mean[j]
    return mean, ssq
