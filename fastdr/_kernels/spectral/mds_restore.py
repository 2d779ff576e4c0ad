"""Undo classical MDS's in-place double centring, to get the distance matrix back.

``fastdr.manifold._mds_core.embed_from_distances`` overwrites a distance matrix ``D`` with
``B = -1/2 J (D o D) J`` so that only one m x m array is ever alive. With the row means ``r``
of ``D o D`` and their mean ``g``, ``D_ij^2 = -2 B_ij + r_i + r_j - g`` recovers it.
"""

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def restore_distances_inplace(B, row_means, tile):
    """Overwrite ``B = -1/2 J (D o D) J`` with ``D``; return ``||B||_F^2``.

    Each unordered pair is restored once from ``(B_ij + B_ji) / 2``, so the result is exactly
    symmetric with a zero diagonal; negative round-off under the square root is clipped to 0.
    One iteration owns the tile pairs (I, J >= I) of tile row I. The Frobenius norm sums in a
    fixed order (per tile row, then serially). O(m^2), no extra memory.
    """
    m = B.shape[0]
    grand = 0.0  # serial: a parallel reduction's rounding would depend on the threads
    for i in range(m):
        grand += row_means[i]
    grand /= m
    n_tiles = (m + tile - 1) // tile
    partial = np.zeros(n_tiles, dtype=np.float64)
    for ti in prange(n_tiles):
        i0 = ti * tile
        i1 = min(m, i0 + tile)
        acc = 0.0
        for tj in range(ti, n_tiles):
            j0 = tj * tile
            j1 = min(m, j0 + tile)
            for i in range(i0, i1):
                shift = row_means[i] - grand
                if ti == tj:
                    b_ii = np.float64(B[i, i])
                    acc += b_ii * b_ii
                    B[i, i] = 0.0
                for j in range(i + 1 if ti == tj else j0, j1):
                    b_ij = np.float64(B[i, j])
                    b_ji = np.float64(B[j, i])
                    acc += b_ij * b_ij + b_ji * b_ji
                    sq = -(b_ij + b_ji) + row_means[j] + shift
                    d = np.sqrt(sq) if sq > 0.0 else 0.0
                    B[i, j] = d
                    B[j, i] = d
        partial[ti] = acc
    total = 0.0
    for ti in range(n_tiles):
        total += partial[ti]
    return total
