"""Assembling neighbour graphs in CSR form: symmetrise, renumber, out-of-sample geodesics.

No fastmath: rows meet ``inf`` (unreachable training points).
"""

import numpy as np
from numba import njit, prange


@njit(cache=True)
def _sort_row(cols, vals):
    """Sort one row by column (insertion sort: rows are short), carrying the values."""
    n = cols.shape[0]
    for a in range(1, n):
        c = cols[a]
        v = vals[a]
        b = a - 1
        while b >= 0 and cols[b] > c:
            cols[b + 1] = cols[b]
            vals[b + 1] = vals[b]
            b -= 1
        cols[b + 1] = c
        vals[b + 1] = v


@njit(cache=True, parallel=True)
def symmetrize_csr(indptr, indices, weights, take_max):
    """Undirected version of a directed graph: edge {i, j} when i -> j or j -> i, weighted
    by the larger (``take_max``) or the smaller of the weights when both exist (or when an
    edge is stored twice). Self-loops are dropped, explicit zero weights kept. Rows come out
    sorted by column.

    Parameters
    ----------
    indptr : (m + 1,) int, indices : (nnz,) int, weights : (nnz,) float
    take_max : bool

    Returns
    -------
    indptr : (m + 1,) int64, indices : (nnz_sym,) int32, weights : (nnz_sym,) float64

    Time O(nnz (1 + row length)); memory O(nnz). The scatter of reversed edges is serial
    (counting sort), everything else is parallel over rows.
    """
    m = indptr.shape[0] - 1
    counts = np.zeros(m + 1, dtype=np.int64)
    for i in range(m):
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if j != i:
                counts[i + 1] += 1
                counts[j + 1] += 1
    start = np.cumsum(counts)
    cols = np.empty(start[m], dtype=np.int32)
    vals = np.empty(start[m], dtype=np.float64)
    cursor = start[:m].copy()
    for i in range(m):
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if j == i:
                continue
            w = np.float64(weights[p])
            cols[cursor[i]] = j
            vals[cursor[i]] = w
            cursor[i] += 1
            cols[cursor[j]] = i
            vals[cursor[j]] = w
            cursor[j] += 1
    kept = np.zeros(m + 1, dtype=np.int64)
    for i in prange(m):
        a = start[i]
        b = start[i + 1]
        _sort_row(cols[a:b], vals[a:b])
        n = 0
        for p in range(a, b):
            if n > 0 and cols[a + n - 1] == cols[p]:
                if (vals[p] > vals[a + n - 1]) == take_max:
                    vals[a + n - 1] = vals[p]
            else:
                cols[a + n] = cols[p]
                vals[a + n] = vals[p]
                n += 1
        kept[i + 1] = n
    out_indptr = np.cumsum(kept)
    out_indices = np.empty(out_indptr[m], dtype=np.int32)
    out_weights = np.empty(out_indptr[m], dtype=np.float64)
    for i in prange(m):
        a = start[i]
        c = out_indptr[i]
        for q in range(out_indptr[i + 1] - c):
            out_indices[c + q] = cols[a + q]
            out_weights[c + q] = vals[a + q]
    return out_indptr, out_indices, out_weights


@njit(cache=True, parallel=True)
def permute_csr(indptr, indices, weights, order, rank):
    """Renumber a graph: new node ``r`` is old node ``order[r]``; ``rank`` is the inverse
    permutation. Rows are copied in the new order with columns mapped through ``rank``.
    O(m + nnz)."""
    m = indptr.shape[0] - 1
    new_indptr = np.zeros(m + 1, dtype=np.int64)
    for r in range(m):
        old = order[r]
        new_indptr[r + 1] = new_indptr[r] + indptr[old + 1] - indptr[old]
    new_indices = np.empty(new_indptr[m], dtype=np.int32)
    new_weights = np.empty(new_indptr[m], dtype=np.float64)
    for r in prange(m):
        old = order[r]
        q = new_indptr[r]
        for p in range(indptr[old], indptr[old + 1]):
            new_indices[q] = rank[indices[p]]
            new_weights[q] = weights[p]
            q += 1
    return new_indptr, new_indices, new_weights


@njit(cache=True, parallel=True)
def geodesic_through_neighbours(nbr_indices, nbr_dist, geodesic_rows, row_of, out):
    """Squared geodesic distances from new points to every column of ``geodesic_rows``.

    ``out[q, c] = min_j (nbr_dist[q, j] + geodesic_rows[row_of[nbr_indices[q, j]], c])^2``:
    a new point reaches the graph through its training neighbours. ``nbr_indices`` entries
    < 0 are padding and are skipped. One query per ``prange`` iteration, writing its own
    row of ``out`` (float64). Time O(n k c), no extra memory.
    """
    n_queries, k = nbr_indices.shape
    n_cols = out.shape[1]
    for q in prange(n_queries):
        row = out[q]
        for c in range(n_cols):
            row[c] = np.inf
        for j in range(k):
            t = nbr_indices[q, j]
            if t < 0:
                continue
            edge = np.float64(nbr_dist[q, j])
            src = geodesic_rows[row_of[t]]
            for c in range(n_cols):
                candidate = edge + np.float64(src[c])
                if candidate < row[c]:
                    row[c] = candidate
        for c in range(n_cols):
            row[c] = row[c] * row[c]


@njit(cache=True, parallel=True)
def row_medians(indptr, values):
    """Median of each CSR row's values (mean of the two middle ones for an even count);
    NaN for an empty row. O(nnz log row length), one row per iteration."""
    m = indptr.shape[0] - 1
    out = np.empty(m, dtype=np.float64)
    for i in prange(m):
        a = indptr[i]
        n = indptr[i + 1] - a
        if n == 0:
            out[i] = np.nan
            continue
        row = np.sort(values[a:a + n].astype(np.float64))
        half = n // 2
        out[i] = row[half] if n % 2 == 1 else 0.5 * (row[half - 1] + row[half])
    return out
