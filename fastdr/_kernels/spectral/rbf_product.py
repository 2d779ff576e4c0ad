"""``K V`` for the rbf kernel ``K_ij = exp(-gamma |x_i - x_j|^2)`` of the rows of X, with K
never stored: the product of exact kernel PCA's implicit route
(:mod:`fastdr._eigen.implicit`).

K is symmetric, so each pair of tiles (I, J), J >= I, is computed once, in a tile-sized
buffer that stays in cache, and used twice: ``K_IJ V_J`` goes to the rows I of the product
and ``K_IJ^T V_I`` to the rows J. The tile rows are paired (p with n_tiles - 1 - p, so every
pair holds the same number of tiles) and split into a fixed number of chunks; each chunk adds
into its own m x b accumulator, and the caller sums the accumulators in chunk order. The
chunks depend on m alone, so the result is the same for any thread count.

Distances come from exact float64 sums along a tile row (as :func:`.kernel_matrix.rbf_direct`:
no norm trick, no cancellation), their exponential from :func:`fastdr._kernels.vexp.
exp_shifted`; the two products per tile are BLAS calls (OpenBLAS held to one thread inside a
launch, see :mod:`fastdr._runtime.blas`). Time O(m^2 (d + 2 b) / 2) flops for the kernel half
and O(m^2 b) for the products; memory O(chunks (m b + tile^2)).
"""

import numpy as np
from numba import njit, prange

from ..vexp import exp_shifted


@njit(cache=True)
def _rbf_tile(X, Xt, gamma, i0, i1, j0, j1, K, values, scratch):
    """``K[r, c] = exp(-gamma |x_(i0 + r) - x_(j0 + c)|^2)`` for the tile's rows and columns."""
    d = X.shape[1]
    width = j1 - j0
    for r in range(i1 - i0):
        row = K[r]
        for c in range(width):
            row[c] = 0.0
        for f in range(d):
            qf = X[i0 + r, f]
            t_row = Xt[f, j0:j1]
            for c in range(width):
                diff = qf - t_row[c]
                row[c] += diff * diff
        for c in range(width):
            row[c] *= gamma
        exp_shifted(row, 0.0, values[:width], scratch[:width])
        for c in range(width):
            row[c] = values[c]


@njit(cache=True, parallel=True)
def rbf_times(X, Xt, gamma, V, tile, acc):
    """Add chunk c's share of ``K V`` into ``acc[c]`` (zeroed by the caller).

    Parameters
    ----------
    X : ndarray of shape (m, d), float64, C-contiguous
    Xt : ndarray of shape (d, m), float64, C-contiguous
        X transposed: the tile rows' inner loops run along it.
    gamma : float
    V : ndarray of shape (m, b), float64, C-contiguous
    tile : int
        Rows and columns of a tile.
    acc : ndarray of shape (chunks, m, b), float64
        One accumulator per chunk; ``acc.sum(axis=0)`` (in chunk order) is ``K V``.
    """
    m = X.shape[0]
    b = V.shape[1]
    n_tiles = (m + tile - 1) // tile
    n_pairs = (n_tiles + 1) // 2
    n_chunks = acc.shape[0]
    for c in prange(n_chunks):
        buffer = np.empty(tile * tile)
        values = np.empty(tile)
        scratch = np.empty(tile)
        part = np.empty((tile, b))
        out = acc[c]
        for p in range(c * n_pairs // n_chunks, (c + 1) * n_pairs // n_chunks):
            for s in range(2):
                I = p if s == 0 else n_tiles - 1 - p  # noqa: E741 (a tile index)
                if s == 1 and I == p:
                    break
                i0 = I * tile
                i1 = min(m, i0 + tile)
                for J in range(I, n_tiles):
                    j0 = J * tile
                    j1 = min(m, j0 + tile)
                    K = buffer[:(i1 - i0) * (j1 - j0)].reshape((i1 - i0, j1 - j0))
                    _rbf_tile(X, Xt, gamma, i0, i1, j0, j1, K, values, scratch)
                    rows = part[:i1 - i0]
                    np.dot(K, V[j0:j1], rows)
                    out[i0:i1] += rows
                    if J != I:
                        cols = part[:j1 - j0]
                        np.dot(K.T, V[i0:i1], cols)
                        out[j0:j1] += cols
