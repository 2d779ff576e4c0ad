"""In-place double centring of a symmetric m x m matrix (classical MDS, kernel PCA, Isomap)."""

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def double_centre_inplace(A, square, scale):
    """Replace symmetric ``A`` by ``scale * J f(A) J`` in place, where ``J = I - 11^T/m``.

    ``f`` squares the entries when ``square`` is True (classical MDS: ``scale=-0.5`` gives
    ``B = -1/2 J D^2 J``) and is the identity otherwise (kernel centring: ``scale=1``).

    Returns
    -------
    row_means : (m,) float64
        The row means of ``f(A)`` (as stored in A's dtype) before centring (needed to place
        new points). Non-finite when any entry of ``f(A)`` is: an O(m) finiteness check.

    Time O(m^2), no extra m x m memory. A must be symmetric (row means = column means).
    """
    m = A.shape[0]
    row_means = np.empty(m, dtype=np.float64)
    for i in prange(m):
        acc = 0.0
        for j in range(m):
            v = np.float64(A[i, j])
            if square:
                A[i, j] = v * v
                # sum what was stored: a square that overflows A's dtype (float32) makes
                # the row mean inf, which the caller checks
                v = np.float64(A[i, j])
            acc += v
        row_means[i] = acc / m
    grand = 0.0  # a serial sum: an array reduction here would be split across threads
    for i in range(m):
        grand += row_means[i]
    grand /= m
    for i in prange(m):
        ri = row_means[i]
        for j in range(m):
            A[i, j] = scale * (np.float64(A[i, j]) - ri - row_means[j] + grand)
    return row_means
