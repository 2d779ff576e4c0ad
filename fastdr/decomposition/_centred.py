"""Centred second moments of X without copying it: scatter, Gram matrix and projections.

Shared by :class:`fastdr.decomposition.PCA`'s solvers. Float64 input takes the one-product
route (as scikit-learn) unless centring would cancel too many digits; float32 input and
badly centred features are accumulated from shifted row blocks in float64.
"""

import numpy as np

from .._config import scatter_block_rows

# The one-product routes of ``centred_scatter`` / ``project_centred`` are kept when the
# centring subtraction cancels at most this factor (about 4 of float64's 16 digits).
_MAX_CANCELLATION = 1e4


def column_means(X):
    """Column means of a dense X in float64.

    Float64 X takes one matrix-vector product ``1^T X / m`` (BLAS), not ``X.mean(axis=0)``,
    whose axis-0 reduction over a C-ordered X walks the short rows one at a time; other
    dtypes accumulate in float64.
    """
    m = X.shape[0]
    if X.dtype == np.float64 and m:
        return (np.ones(m) @ X) / m
    return X.mean(axis=0, dtype=np.float64)


def centred_scatter(X, mean=None):
    """Mean and centred scatter matrix ``sum_i (x_i - mean)(x_i - mean)^T`` in float64.

    ``mean``: :func:`column_means` of a float64 X, when the caller has it already.

    Float64 input takes the fast route first, as scikit-learn does: one BLAS product
    ``X^T X - m mean mean^T`` (no copy of X). When that subtraction cancels more than
    ``_MAX_CANCELLATION`` (a feature whose mean is over 100 standard deviations from 0, or a
    constant feature), and always for float32 input, the scatter is accumulated instead from
    row blocks shifted by a provisional centre ``c`` (the mean of the first block), in
    float64, with the correction ``m (mean - c)(mean - c)^T`` from the block sums: one more
    pass, still no copy of X. Time O(m d^2), memory O(d^2 + block d).

    Returns
    -------
    mean : ndarray of shape (d,), float64
    scatter : ndarray of shape (d, d), float64
    """
    m, d = X.shape
    if X.dtype == np.float64:
        mean = column_means(X) if mean is None else mean
        scatter = X.T @ X
        scatter -= m * np.outer(mean, mean)
        diag = np.diag(scatter)
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = np.where(mean == 0, 0.0, m * mean * mean / diag)
        if (diag > 0).all() and loss.max() <= _MAX_CANCELLATION:
            return mean, 0.5 * (scatter + scatter.T)
    rows = scatter_block_rows(d)
    centre = X[:rows].mean(axis=0, dtype=np.float64)
    scatter = np.zeros((d, d), dtype=np.float64)
    sums = np.zeros(d, dtype=np.float64)
    buf = np.empty((min(rows, m), d), dtype=np.float64)
    for start in range(0, m, rows):
        stop = min(m, start + rows)
        block = buf[: stop - start]
        np.subtract(X[start:stop], centre, out=block)
        scatter += block.T @ block
        sums += block.sum(axis=0)
    shift = sums / m
    scatter -= m * np.outer(shift, shift)
    scatter = 0.5 * (scatter + scatter.T)
    return centre + shift, scatter


def centred_gram(X, mean):
    """The m x m Gram matrix of the centred rows, ``(X - mean)(X - mean)^T``, in float64.

    Built from column blocks of the centred data. Time O(m^2 d), memory one m x m array.
    """
    m, d = X.shape
    gram = np.zeros((m, m), dtype=np.float64)
    cols = scatter_block_rows(m)
    for start in range(0, d, cols):
        stop = min(d, start + cols)
        block = X[:, start:stop] - mean[start:stop]
        gram += block @ block.T
    return gram


def project_centred(X, mean, components):
    """``(X - mean) @ components.T`` in X's dtype. Time O(m d k).

    Float64 input takes one BLAS product ``X W^T - mean W^T`` (no copy of X, as
    scikit-learn); if a column cancels more than ``_MAX_CANCELLATION``, and always for float32
    input, it is recomputed from centred row blocks.
    """
    m, d = X.shape
    weights_t = np.ascontiguousarray(components.T, dtype=X.dtype)
    if X.dtype == np.float64:
        offset = mean @ weights_t
        out = X @ weights_t
        out -= offset
        # each column's root mean square (at most its largest magnitude, so the test is
        # conservative), by one product: numpy's axis-0 max over a narrow C-ordered array
        # costs more than the projection itself
        with np.errstate(over="ignore"):
            spread = np.sqrt((np.ones(m) @ (out * out)) / m) if m else np.zeros_like(offset)
        if (np.abs(offset) <= _MAX_CANCELLATION * spread).all():
            return out
    rows = scatter_block_rows(d)
    mean = mean.astype(X.dtype)
    out = np.empty((m, components.shape[0]), dtype=X.dtype)
    buf = np.empty((min(rows, m), d), dtype=X.dtype)
    for start in range(0, m, rows):
        stop = min(m, start + rows)
        block = buf[: stop - start]
        np.subtract(X[start:stop], mean, out=block)
        np.dot(block, weights_t, out=out[start:stop])
    return out


def orthonormal_complement(basis, count, d):
    """``count`` orthonormal columns orthogonal to the orthonormal columns of ``basis``."""
    rng = np.random.RandomState(0)
    extra = rng.standard_normal((d, count))
    for _ in range(2):
        extra -= basis @ (basis.T @ extra)
    return np.linalg.qr(extra)[0]

