"""The product of a big dense matrix with a few vectors, for the block eigensolver.

BLAS ``gemm`` packs the big matrix into panels before multiplying, so with a few columns it
reads and copies the matrix several times; this kernel streams each row once and keeps the
few vectors in cache, which makes a product with up to about 8 columns cost little more
than one matrix-vector product.
"""

import numpy as np
from numba import njit, prange

from .._config import FASTMATH


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
