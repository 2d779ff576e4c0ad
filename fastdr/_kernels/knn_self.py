"""Exact k-NN of a point set against itself, computing each pair's distance once.

With queries equal to targets the distance matrix is symmetric, so only the blocks on and
above the diagonal are formed (half the GEMM work of the general kernel). A block (bi, bj)
feeds the heaps of its rows *and* of its columns; since column heaps belong to another
block's rows, every thread keeps its own heaps for all m rows (scattered writes go to
per-thread buffers), merged serially per row afterwards. The merged result is the k smallest
candidates under the total order (distance, index), so it does not depend on how blocks were
shared among threads.

Packing (both sides centred on c): ``A_i = [x_i - c, |x_i - c|^2, 1]`` and
``B_j = [-2 (x_j - c), 1, |x_j - c|^2]``, so ``A_i . B_j = |x_i - x_j|^2`` straight from GEMM.

Memory: O(threads x m x n_candidates) heaps plus O(threads x block^2) scratch.
"""

import numba
import numpy as np
from numba import njit, prange

from .heap import INDEX_SENTINEL, heap_init, heap_push
from .knn import refine_row, select_row_candidates


@njit(cache=True, parallel=True)
def pack_self(X, centre, norms, block):
    """Return the row packing (m, d + 2) and the column packing in GEMM-ready blocks.

    The column packing has shape (n_blocks, d + 2, block); padding columns are zero and are
    never read. O(m d).
    """
    m, d = X.shape
    n_blocks = (m + block - 1) // block
    rows = np.empty((m, d + 2), dtype=X.dtype)
    cols_t = np.zeros((n_blocks, d + 2, block), dtype=X.dtype)
    for b in prange(n_blocks):
        for i in range(b * block, min(m, (b + 1) * block)):
            c = i - b * block
            for f in range(d):
                v = X[i, f] - centre[f]
                rows[i, f] = v
                cols_t[b, f, c] = -2 * v
            rows[i, d] = norms[i]
            rows[i, d + 1] = 1
            cols_t[b, d, c] = 1
            cols_t[b, d + 1, c] = norms[i]
    return rows, cols_t


@njit(cache=True)
def select_block_columns(sq, n_rows, n_cols, r0, c0, heap_d, heap_i, thresholds, hits):
    """Offer each column's entries of a distance block to that column's heap. O(rows x cols).

    A first vectorisable pass (contiguous rows against a contiguous array of the columns'
    heap roots, in the block's dtype) flags the columns holding anything better than their
    root; only flagged columns are scanned entry by entry.
    """
    for c in range(n_cols):
        hits[c] = 0
        # round the root up into the block dtype so that no candidate is missed
        thresholds[c] = heap_d[c0 + c, 0]
        if thresholds[c] < heap_d[c0 + c, 0]:
            thresholds[c] = np.nextafter(thresholds[c], np.inf)
    for r in range(n_rows):
        row = sq[r]
        for c in range(n_cols):
            hits[c] += row[c] <= thresholds[c]
    for c in range(n_cols):
        if hits[c] == 0:
            continue
        j = c0 + c
        threshold = heap_d[j, 0]
        for r in range(n_rows):
            value = np.float64(sq[r, c])
            if value <= threshold:
                if heap_push(heap_d[j], heap_i[j], value, r0 + r):
                    threshold = heap_d[j, 0]


@njit(cache=True, parallel=True)
def knn_self_gemm(X, rows, cols_t, k, n_candidates, block, n_threads, out_d, out_i):
    """k nearest neighbours of every row of X among the other rows (self excluded by index).

    Parameters
    ----------
    X : (m, d) array, the original points (exact refinement)
    rows : (m, d + 2) row packing; cols_t : (n_blocks, d + 2, block) column packing in
        GEMM-ready blocks (see ``fastdr._kernels.distances.pack_targets`` for the layout)
    k, n_candidates : neighbours returned and candidates kept before exact refinement
    block : rows per block; n_threads : numba threads in this launch
    out_d, out_i : (m, k) squared distances and indices

    Time O(m^2 d / 2) GEMM work plus O(m^2) selection.
    """
    m = X.shape[0]
    n_blocks = (m + block - 1) // block
    n_pairs = n_blocks * (n_blocks + 1) // 2
    pair_i = np.empty(n_pairs, dtype=np.int64)
    pair_j = np.empty(n_pairs, dtype=np.int64)
    p = 0
    for bi in range(n_blocks):
        for bj in range(bi, n_blocks):
            pair_i[p] = bi
            pair_j[p] = bj
            p += 1
    heap_d = np.empty((n_threads, m, n_candidates), dtype=np.float64)
    heap_i = np.empty((n_threads, m, n_candidates), dtype=np.int64)
    heap_init(heap_d, heap_i)
    scratch = np.empty((n_threads, block, block), dtype=rows.dtype)
    hits = np.zeros((n_threads, block), dtype=np.int32)
    thresholds = np.empty((n_threads, block), dtype=rows.dtype)
    for p in prange(n_pairs):
        t = numba.get_thread_id()
        bi = pair_i[p]
        bj = pair_j[p]
        r0 = bi * block
        r1 = min(m, r0 + block)
        c0 = bj * block
        c1 = min(m, c0 + block)
        sq = scratch[t]
        np.dot(rows[r0:r1], cols_t[bj], sq[: r1 - r0])
        diagonal = bi == bj
        for r in range(r1 - r0):
            i = r0 + r
            select_row_candidates(sq[r], c1 - c0, c0, i, heap_d[t, i], heap_i[t, i])
        if not diagonal:
            select_block_columns(sq, r1 - r0, c1 - c0, r0, c0, heap_d[t], heap_i[t],
                                 thresholds[t], hits[t])
    for i in prange(m):
        merged_d = np.empty(n_candidates, dtype=np.float64)
        merged_i = np.empty(n_candidates, dtype=np.int64)
        heap_init(merged_d, merged_i)
        for t in range(n_threads):
            for c in range(n_candidates):
                if heap_i[t, i, c] != INDEX_SENTINEL:
                    heap_push(merged_d, merged_i, heap_d[t, i, c], heap_i[t, i, c])
        refine_row(X[i], X, merged_i, k, out_d[i], out_i[i])
