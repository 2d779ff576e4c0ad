"""Exact distances for given (row, column) pairs in CSR layout."""

import numpy as np
from numba import njit, prange

from .euclidean import sqdist_exact


@njit(cache=True, parallel=True)
def csr_pair_sqdist(Q, T, indptr, indices):
    """Exact squared distances of every stored pair (i, indices[p]) of a CSR pattern. O(nnz d)."""
    m = indptr.shape[0] - 1
    out = np.empty(indices.shape[0], dtype=np.float64)
    for i in prange(m):
        for p in range(indptr[i], indptr[i + 1]):
            out[p] = sqdist_exact(Q[i], T[indices[p]])
    return out
