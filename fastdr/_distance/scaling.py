"""Row scaling for the scale-invariant measures (the cosine distance and kernel).

The cosine of two rows does not change when either row is scaled, but its usual formula
does not survive extreme scales: at 1e-200 the squared norm underflows to 0 (every row looks
like a zero row, every distance comes back 1) and at 1e200 it overflows. Each row is
therefore divided by the power of two nearest above its largest absolute value before any
norm or product is formed. A power of two changes only the exponent of each entry, so the
scaled row is exact and its cosines are the same numbers; its largest entry lies in
[0.5, 1), so no square of it can overflow and its norm cannot underflow.
"""

import numpy as np
import scipy.sparse


def unit_scale_rows(X):
    """X with each row divided by a power of two, its largest absolute value in [0.5, 1).

    Parameters
    ----------
    X : ndarray or scipy.sparse.csr_matrix of shape (m, d)
        Finite float rows (a CSR matrix must be canonical: checked by the caller).

    Returns
    -------
    ndarray or scipy.sparse.csr_matrix
        A new array (C-contiguous, X's dtype) or CSR matrix with the same index arrays;
        zero rows stay zero. X itself is returned when no row needs scaling.
    """
    if scipy.sparse.issparse(X):
        lengths = np.diff(X.indptr)
        largest = np.zeros(X.shape[0], dtype=X.dtype)
        nonempty = lengths > 0
        if X.nnz:
            largest[nonempty] = np.maximum.reduceat(np.abs(X.data), X.indptr[:-1][nonempty])
        exponent = _exponents(largest)
        if exponent is None:
            return X
        data = np.ldexp(X.data, -np.repeat(exponent, lengths))
        return scipy.sparse.csr_matrix((data, X.indices, X.indptr), shape=X.shape)
    largest = np.abs(X).max(axis=1) if X.shape[1] else np.zeros(X.shape[0], X.dtype)
    exponent = _exponents(largest)
    if exponent is None:
        return X
    return np.ascontiguousarray(np.ldexp(X, -exponent[:, None]))


def _exponents(largest):
    """e per row with largest = f 2**e, f in [0.5, 1) (0 for a zero row); None when every
    e is 0. ``np.ldexp`` then scales exactly and keeps the dtype."""
    _, exponent = np.frexp(largest)
    return exponent if exponent.any() else None
