"""``A V`` for an m x m matrix ``A_ij = g(dist(x_i, x_j))`` of the rows of X, A never
stored: the product of the implicit routes of exact kernel PCA (rbf: ``g = exp(-gamma d^2)``)
and classical MDS (``g = -d^2 / 2``), :mod:`fastdr._eigen.implicit`.

A is symmetric, so each pair of tiles (I, J), J >= I, is computed once, in a tile-sized
buffer that stays in cache, and used twice: ``A_IJ V_J`` goes to the rows I of the product
and ``A_IJ^T V_I`` to the rows J. The tile rows are paired (p with n_tiles - 1 - p, so every
pair holds the same number of tiles) and split into a fixed number of chunks; each chunk adds
into its own m x b accumulator, and the caller sums the accumulators in chunk order. The
chunks depend on m alone, so the result is the same for any thread count.

The metric's reduced value (``codes``: SQEUCLIDEAN, MANHATTAN, CHEBYSHEV, or MINKOWSKI's
``sum |x_c - y_c|^p``) comes from exact float64 sums along a tile row, which vectorise along
the columns (no norm trick, no cancellation); ``g`` is applied to it in place (the
exponential by :func:`fastdr._kernels.vexp.exp_shifted`); the two products per tile are BLAS
calls (OpenBLAS held to one thread inside a launch, see :mod:`fastdr._runtime.blas`). Time
O(m^2 d / 2) for the tiles and O(m^2 b) for the products; memory O(chunks (m b + tile^2)).
"""

import numpy as np
from numba import njit, prange

from ..codes import CHEBYSHEV, MANHATTAN, SQEUCLIDEAN
from ..vexp import exp_shifted

#: ``g`` of a reduced value r: ``exp(-gamma r)`` (rbf, r the squared distance) or
#: ``-r^power / 2`` (classical MDS: power 1 for a squared distance, 2 for a distance, 2/p
#: for Minkowski's sum of p-th powers)
GAUSSIAN, HALF_SQUARE = 0, 1


@njit(cache=True)
def _reduced_row(X, Xt, i, j0, j1, metric, p, row):
    """``row[c]`` = the reduced metric value between rows i and ``j0 + c`` of X."""
    d = X.shape[1]
    width = j1 - j0
    for c in range(width):
        row[c] = 0.0
    for f in range(d):
        qf = X[i, f]
        t_row = Xt[f, j0:j1]
        if metric == SQEUCLIDEAN:
            for c in range(width):
                diff = qf - t_row[c]
                row[c] += diff * diff
        elif metric == MANHATTAN:
            for c in range(width):
                row[c] += abs(qf - t_row[c])
        elif metric == CHEBYSHEV:
            for c in range(width):
                row[c] = max(row[c], abs(qf - t_row[c]))
        else:  # MINKOWSKI
            for c in range(width):
                row[c] += abs(qf - t_row[c]) ** p


@njit(cache=True)
def _tile(X, Xt, metric, p, value, gamma, power, i0, i1, j0, j1, A, values, scratch):
    """``A[r, c] = g(reduced(x_(i0 + r), x_(j0 + c)))`` for the tile's rows and columns."""
    width = j1 - j0
    for r in range(i1 - i0):
        row = A[r]
        _reduced_row(X, Xt, i0 + r, j0, j1, metric, p, row)
        if value == GAUSSIAN:
            for c in range(width):
                row[c] *= gamma
            exp_shifted(row, 0.0, values[:width], scratch[:width])
            for c in range(width):
                row[c] = values[c]
        elif power == 1.0:
            for c in range(width):
                row[c] *= -0.5
        elif power == 2.0:
            for c in range(width):
                row[c] = -0.5 * row[c] * row[c]
        else:
            for c in range(width):
                row[c] = -0.5 * row[c] ** power


@njit(cache=True, parallel=True)
def distance_times(X, Xt, metric, p, value, gamma, power, V, tile, acc):
    """Add chunk c's share of ``A V`` into ``acc[c]`` (zeroed by the caller).

    Parameters
    ----------
    X : ndarray of shape (m, d), float64, C-contiguous
    Xt : ndarray of shape (d, m), float64, C-contiguous
        X transposed: the tile rows' inner loops run along it.
    metric : int
        SQEUCLIDEAN, MANHATTAN, CHEBYSHEV or MINKOWSKI (:mod:`fastdr._kernels.codes`).
    p : float
        MINKOWSKI's exponent (unused otherwise).
    value : int
        GAUSSIAN or HALF_SQUARE: ``g`` (see the module constants).
    gamma, power : float
        GAUSSIAN's coefficient, HALF_SQUARE's power of the reduced value.
    V : ndarray of shape (m, b), float64, C-contiguous
    tile : int
        Rows and columns of a tile.
    acc : ndarray of shape (chunks, m, b), float64
        One accumulator per chunk; ``acc.sum(axis=0)`` (in chunk order) is ``A V``.
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
        for q in range(c * n_pairs // n_chunks, (c + 1) * n_pairs // n_chunks):
            for s in range(2):
                I = q if s == 0 else n_tiles - 1 - q  # noqa: E741 (a tile index)
                if s == 1 and I == q:
                    break
                i0 = I * tile
                i1 = min(m, i0 + tile)
                for J in range(I, n_tiles):
                    j0 = J * tile
                    j1 = min(m, j0 + tile)
                    A = buffer[:(i1 - i0) * (j1 - j0)].reshape((i1 - i0, j1 - j0))
                    _tile(X, Xt, metric, p, value, gamma, power, i0, i1, j0, j1, A, values,
                          scratch)
                    rows = part[:i1 - i0]
                    np.dot(A, V[j0:j1], rows)
                    out[i0:i1] += rows
                    if J != I:
                        cols = part[:j1 - j0]
                        np.dot(A.T, V[i0:i1], cols)
                        out[j0:j1] += cols
