"""One-pass checks of a square matrix given by the user (precomputed distances or kernels)."""

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def symmetry_stats(A):
    """Largest ``|A_ij - A_ji|``, largest ``|A_ij|`` and smallest ``A_ij`` of a square matrix.

    Parallel over tiles of rows; each iteration compares its tile with the tiles at and
    after it (64 x 64 tiles, so the transposed reads stay in cache) and writes only its own
    slot of the per-tile results, reduced serially afterwards. Time O(m^2), memory O(m / 64).
    """
    m = A.shape[0]
    tile = 64
    n_tiles = (m + tile - 1) // tile
    asym = np.zeros(n_tiles, dtype=np.float64)
    biggest = np.zeros(n_tiles, dtype=np.float64)
    smallest = np.full(n_tiles, np.inf)
    for ti in prange(n_tiles):
        i0 = ti * tile
        i1 = min(m, i0 + tile)
        a = 0.0
        b = 0.0
        s = np.inf
        for i in range(i0, i1):
            for j in range(m):
                v = np.float64(A[i, j])
                if abs(v) > b:
                    b = abs(v)
                if v < s:
                    s = v
        for tj in range(ti, n_tiles):
            j0 = tj * tile
            j1 = min(m, j0 + tile)
            for i in range(i0, i1):
                for j in range(max(j0, i + 1), j1):
                    diff = abs(np.float64(A[i, j]) - np.float64(A[j, i]))
                    if diff > a:
                        a = diff
        asym[ti] = a
        biggest[ti] = b
        smallest[ti] = s
    return asym.max(), biggest.max(), smallest.min()
