"""Race-free CSR assembly of a matrix given as a sum of small dense symmetric blocks.

``M = sum_i P_i^T B_i P_i``: ``P_i`` picks the index set ``S_i = sets[i]`` and ``B_i`` is
``|S_i| x |S_i|``, given either densely (``blocks[i]``: the modified, Hessian and LTSA
variants of LLE, see :mod:`fastdr._kernels.lle.methods`) or as a rank-one ``u_i u_i^T`` by
its vector ``u_i = blocks[i]`` (standard LLE: ``S_i = (i, neighbours of i)`` and ``u_i = (1,
-w_i)``, the row i of ``I - W``, see :mod:`fastdr._kernels.lle.weights`). This is the one
assembly of M for all four methods. Reverse lists give, for every row r, the points whose set
holds r; one parallel iteration owns whole rows of M, first counting their distinct columns,
then filling them, summing over the points in ascending order. With exactly symmetric blocks,
M is bitwise symmetric and does not depend on the thread count. The sets must hold distinct
indices.
"""

import numpy as np
from numba import njit, prange


@njit(cache=True)
def set_reverse_lists(sets, m):
    """For each row r of M, the points i with r in ``sets[i]`` (ascending) and r's slot there.

    Returns ``(ptr, point, slot)``: the entries of row r are ``point[ptr[r]:ptr[r+1]]``.
    O(m s).
    """
    n, s = sets.shape
    ptr = np.zeros(m + 1, dtype=np.int64)
    for i in range(n):
        for c in range(s):
            ptr[sets[i, c] + 1] += 1
    for r in range(m):
        ptr[r + 1] += ptr[r]
    fill = ptr[:-1].copy()
    point = np.empty(n * s, dtype=np.int64)
    slot = np.empty(n * s, dtype=np.int64)
    for i in range(n):
        for c in range(s):
            r = sets[i, c]
            t = fill[r]
            point[t] = i
            slot[t] = c
            fill[r] = t + 1
    return ptr, point, slot


@njit(cache=True)
def _set_row_columns(r, sets, ptr, point, seen, cols):
    """Distinct columns of row r, unsorted, into ``cols``; returns their count. ``seen`` (m,)
    is all False on entry and on return."""
    s = sets.shape[1]
    n = 0
    for t in range(ptr[r], ptr[r + 1]):
        i = point[t]
        for c in range(s):
            col = sets[i, c]
            if not seen[col]:
                seen[col] = True
                cols[n] = col
                n += 1
    for c in range(n):
        seen[cols[c]] = False
    return n


@njit(cache=True)
def _row_block(bi, n_blocks, ptr, s):
    """Rows ``r0 <= r < r1`` of M owned by parallel iteration ``bi`` of ``n_blocks``, and
    their work buffers for :func:`_set_row_columns`: ``seen`` (m,) all False and ``cols``,
    room for the columns of any one of those rows (both empty when the range is). O(m)."""
    m = ptr.shape[0] - 1
    block = (m + n_blocks - 1) // n_blocks
    r0 = min(m, bi * block)
    r1 = min(m, r0 + block)
    widest = 0
    for r in range(r0, r1):
        widest = max(widest, ptr[r + 1] - ptr[r])
    seen = np.zeros(m if r1 > r0 else 0, dtype=np.bool_)
    return r0, r1, seen, np.empty(widest * s, dtype=np.int64)


@njit(cache=True, parallel=True)
def set_row_counts(sets, ptr, point, n_blocks):
    """Number of stored entries in each row of ``M = sum_i P_i^T B_i P_i``. O(m s^2)."""
    counts = np.empty(ptr.shape[0] - 1, dtype=np.int64)
    for bi in prange(n_blocks):
        r0, r1, seen, cols = _row_block(bi, n_blocks, ptr, sets.shape[1])
        for r in range(r0, r1):
            counts[r] = _set_row_columns(r, sets, ptr, point, seen, cols)
    return counts


@njit(cache=True, parallel=True)
def block_fill(blocks, sets, ptr, point, slot, n_blocks, indptr, out_indices, out_data):
    """Fill the CSR arrays of ``M = sum_i P_i^T B_i P_i``, columns ascending in each row.

    ``blocks`` is (n, s, s), the dense blocks, or (n, s), the vectors u_i of rank-one blocks
    ``u_i u_i^T`` (never formed). Entry (r, j) is the sum of ``B_i[slot of r, slot of j]``
    over the points i whose set holds both, in ascending i; a rank-one term is computed as
    ``u_i[slot of r] * u_i[slot of j]``. ``out_indices`` may be int32 or int64.
    Time O(m s^2 + nnz log(nnz / m)), memory O(n_blocks in flight x m).
    """
    s = sets.shape[1]
    for bi in prange(n_blocks):
        r0, r1, seen, cols = _row_block(bi, n_blocks, ptr, s)
        position = np.empty(seen.shape[0], dtype=np.int64)
        for r in range(r0, r1):
            n = _set_row_columns(r, sets, ptr, point, seen, cols)
            cols[:n].sort()
            start = indptr[r]
            for c in range(n):
                out_indices[start + c] = cols[c]
                out_data[start + c] = 0.0
                position[cols[c]] = start + c
            for t in range(ptr[r], ptr[r + 1]):
                i = point[t]
                if blocks.ndim == 2:  # resolved at compile time: one branch is compiled
                    a = blocks[i, slot[t]]
                    for c in range(s):
                        out_data[position[sets[i, c]]] += a * blocks[i, c]
                else:
                    row = blocks[i, slot[t]]
                    for c in range(s):
                        out_data[position[sets[i, c]]] += row[c]
