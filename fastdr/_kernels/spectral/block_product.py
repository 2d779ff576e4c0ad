"""The product of a big dense matrix with a few vectors, for the block eigensolver.

BLAS ``gemm`` packs the big matrix into panels before multiplying, so with a few columns it
reads and copies the matrix several times; this kernel streams each row once and keeps the
few vectors in cache, which makes a product with up to about 8 columns cost little more
than one matrix-vector product.
"""

import numpy as np
from numba import njit, prange

from ..._config import FASTMATH, UPPER_CHUNKS
from ..._config import UPPER_TILE as _UPPER_TILE


@njit(cache=True, fastmath=set(FASTMATH))
def _rows_times_block(A, Qt, out, i0, i1):
    """``out[i] = A[i] @ Qt.T`` for rows i0 <= i < i1 (at most 4), accumulated in float64."""
    b, n = Qt.shape
    if i1 - i0 == 4:
        r0 = A[i0]
        r1 = A[i0 + 1]
        r2 = A[i0 + 2]
        r3 = A[i0 + 3]
        for c in range(b):
            q = Qt[c]
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            for j in range(n):
                qj = np.float64(q[j])
                a0 += r0[j] * qj
                a1 += r1[j] * qj
                a2 += r2[j] * qj
                a3 += r3[j] * qj
            out[i0, c] = a0
            out[i0 + 1, c] = a1
            out[i0 + 2, c] = a2
            out[i0 + 3, c] = a3
    else:
        for i in range(i0, i1):
            row = A[i]
            for c in range(b):
                q = Qt[c]
                acc = 0.0
                for j in range(n):
                    acc += row[j] * np.float64(q[j])
                out[i, c] = acc


@njit(cache=True, parallel=True)
def dense_times_block(A, Qt, out):
    """``out = A @ Qt.T`` for a dense (m, n) A and a thin (b, n) Qt; out is (m, b).

    Parallel over groups of 4 rows (each iteration writes only its own rows of out); the
    sums run in a fixed order, so the result does not depend on the thread count.
    Time O(m n b), one pass over A; memory O(1) beyond the output.
    """
    m = A.shape[0]
    n_groups = (m + 3) // 4
    for g in prange(n_groups):
        i0 = g * 4
        _rows_times_block(A, Qt, out, i0, min(m, i0 + 4))


@njit(cache=True, fastmath=set(FASTMATH))
def _upper_rows_times_block(A, Qt, out, acc, i0, i1):
    """Rows i0 <= i < i1 (at most 4) of a symmetric A stored in its upper triangle.

    Adds ``A[i, j] q_j`` over ``j >= i`` to ``out[i]`` (the row's own part) and
    ``A[i, j] q_i`` to ``acc[:, j]`` for ``j > i`` (the mirrored part, for later rows).
    Reads only ``A[i, j >= i]``; the lower triangle may hold anything.
    """
    b, n = Qt.shape
    for i in range(i0, i1):
        for j in range(i, i1):
            a = np.float64(A[i, j])
            for c in range(b):
                out[i, c] += a * np.float64(Qt[c, j])
                if j > i:
                    acc[c, j] += a * np.float64(Qt[c, i])
    if i1 >= n:
        return
    # only the last group can have fewer than 4 rows, and nothing lies right of it
    # tiles of columns: the four row pieces, q and the accumulator stay in L1 while
    # every column of the block sweeps them
    for start in range(i1, n, _UPPER_TILE):
        stop = min(n, start + _UPPER_TILE)
        tile = stop - start
        r0 = A[i0, start:stop]
        r1 = A[i0 + 1, start:stop]
        r2 = A[i0 + 2, start:stop]
        r3 = A[i0 + 3, start:stop]
        for c in range(b):
            q = Qt[c, start:stop]
            y = acc[c, start:stop]
            q0 = np.float64(Qt[c, i0])
            q1 = np.float64(Qt[c, i0 + 1])
            q2 = np.float64(Qt[c, i0 + 2])
            q3 = np.float64(Qt[c, i0 + 3])
            a0 = 0.0
            a1 = 0.0
            a2 = 0.0
            a3 = 0.0
            for j in range(tile):
                qj = np.float64(q[j])
                v0 = np.float64(r0[j])
                v1 = np.float64(r1[j])
                v2 = np.float64(r2[j])
                v3 = np.float64(r3[j])
                a0 += v0 * qj
                a1 += v1 * qj
                a2 += v2 * qj
                a3 += v3 * qj
                y[j] += (v0 * q0 + v1 * q1) + (v2 * q2 + v3 * q3)
            out[i0, c] += a0
            out[i0 + 1, c] += a1
            out[i0 + 2, c] += a2
            out[i0 + 3, c] += a3


@njit(cache=True, parallel=True)
def upper_times_block(A, Qt, out):
    """``out = A @ Qt.T`` for a symmetric (m, m) A of which only the upper triangle is read.

    Half the memory traffic of :func:`dense_times_block` (the product is memory-bound), and
    A's lower triangle need not be filled in. Groups of 4 rows are paired from both ends
    (equal work per pair) and split into ``UPPER_CHUNKS`` fixed chunks; each chunk adds its
    rows' own parts to ``out`` and their mirrored parts to a private (b, m) accumulator,
    merged afterwards in chunk order, so the result does not depend on the thread count.
    Time O(m^2 b), one pass over the upper triangle; memory O(UPPER_CHUNKS m b) (at most 32
    threads work on one product).
    """
    m = A.shape[0]
    b = Qt.shape[0]
    n_groups = (m + 3) // 4
    n_pairs = (n_groups + 1) // 2
    n_chunks = min(UPPER_CHUNKS, n_pairs)
    acc = np.zeros((n_chunks, b, m))
    out[:, :] = 0.0
    for c in prange(n_chunks):
        for p in range(c * n_pairs // n_chunks, (c + 1) * n_pairs // n_chunks):
            _upper_rows_times_block(A, Qt, out, acc[c], 4 * p, min(m, 4 * p + 4))
            g = n_groups - 1 - p
            if g != p:
                _upper_rows_times_block(A, Qt, out, acc[c], 4 * g, min(m, 4 * g + 4))
    for i in prange(m):
        for c in range(n_chunks):
            for k in range(b):
                out[i, k] += acc[c, k, i]
