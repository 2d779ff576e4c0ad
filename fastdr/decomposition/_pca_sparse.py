"""Sparse input for PCA: validation, moments and implicit centring, never densifying X.

scikit-learn's PCA takes CSR/CSC input with its ``"arpack"`` and ``"covariance_eigh"``
solvers. Centring a sparse X would fill it in, so the centred data ``Xc = X - 1 mean^T`` is
only ever applied: ``Xc v = X v - (mean . v) 1`` and ``Xc^T u = X^T u - mean (1 . u)``; its
scatter is ``X^T X - m mean mean^T`` (a d x d array).
"""

import numpy as np
import scipy.sparse
import scipy.sparse.linalg

from .._kernels.spectral.gram_product import csr_column_moments
from .._validation.arrays import FLOAT_DTYPES
from ..neighbors._sparse_search import _check_compressed

#: The formats kept as they are; every other sparse format is converted to CSR.
SPARSE_FORMATS = ("csr", "csc")
SPARSE_SOLVERS = ("auto", "arpack", "covariance_eigh")


def is_sparse(X):
    """True for a scipy sparse matrix or array."""
    return scipy.sparse.issparse(X)


def check_sparse_solver(svd_solver):
    """Refuse a sparse X with a solver that would need it dense (scikit-learn's TypeError)."""
    if svd_solver not in SPARSE_SOLVERS:
        raise TypeError(
            'PCA only support sparse inputs with the "arpack" and "covariance_eigh" solvers, '
            f'while "{svd_solver}" was passed. See TruncatedSVD for a possible alternative. '
            "fastdr: pass svd_solver='arpack' or 'covariance_eigh' (both centre the data "
            "implicitly), or X.toarray() for the dense solvers."
        )


def check_sparse(X, *, min_samples=1, name="X"):
    """A CSR or CSC float32/float64 copy-free view of the sparse ``X``, checked finite.

    Other formats (COO, LIL, ...) are converted to CSR, other dtypes to float64, as
    scikit-learn does; the values are never densified.
    """
    if X.format in SPARSE_FORMATS:  # the index arrays reach kernels: check them first
        n_major, n_minor = X.shape if X.format == "csr" else X.shape[::-1]
        _check_compressed(X.indptr, X.indices, n_major, n_minor, name,
                          "column" if X.format == "csr" else "row")
    else:
        X = X.tocsr()
    if X.dtype not in FLOAT_DTYPES:
        X = X.astype(np.float64)
    if not X.has_canonical_format:  # duplicate entries would count twice in the moments
        X = X.copy()
        X.sum_duplicates()
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D sparse matrix for {name}, got shape {X.shape}.")
    m, d = X.shape
    if m < min_samples:
        raise ValueError(
            f"{name} has {m} sample(s) (shape {X.shape}), but at least {min_samples} "
            f"{'is' if min_samples == 1 else 'are'} required."
        )
    if d < 1:
        raise ValueError(
            f"{name} has 0 feature(s) (shape={X.shape}) while a minimum of 1 is required. "
            "Pass data with at least 1 column(s)."
        )
    if not np.isfinite(X.data).all():
        raise ValueError(
            f"{name} contains NaN or infinity ({int(np.isnan(X.data).sum())} NaN, "
            f"{int(np.isinf(X.data).sum())} inf). Remove or impute those values first, for "
            "example with sklearn.impute.SimpleImputer."
        )
    return X


def unsigned_index_arrays(X):
    """``(indptr, indices)`` of a checked CSR/CSC X as unsigned views (no copy): numba
    indexes with them without its negative-index wraparound branch."""
    return (X.indptr.view(np.dtype(f"u{X.indptr.dtype.itemsize}")),
            X.indices.view(np.dtype(f"u{X.indices.dtype.itemsize}")))


def _column_of_entries(X):
    """The column index of every stored entry of a CSR or CSC matrix."""
    if X.format == "csr":
        return X.indices
    return np.repeat(np.arange(X.shape[1]), np.diff(X.indptr))


def sparse_mean_and_total(X):
    """Column means (float64) and the centred sum of squares ``||X - 1 mean^T||_F^2``.

    Each column's sum is taken over its stored values, the implicit zeros adding
    ``(m - nnz_j) mean_j^2``: no subtraction of two large sums.
    """
    m, d = X.shape
    if X.format == "csr":  # two compiled passes, faster than numpy (bench: pca_sparse_arpack)
        indptr, indices = unsigned_index_arrays(X)
        mean, total = csr_column_moments(indptr, indices, X.data, d)
        return mean, float(total)
    cols = _column_of_entries(X)
    data = X.data.astype(np.float64, copy=False)
    mean = np.bincount(cols, weights=data, minlength=d) / m
    resid = data - mean[cols]
    nnz = np.bincount(cols, minlength=d)
    ssq = np.bincount(cols, weights=resid * resid, minlength=d) + (m - nnz) * mean * mean
    return mean, float(ssq.sum())


def centred_operator(X, mean):
    """``X - 1 mean^T`` as a LinearOperator (X dense or sparse, never copied)."""
    mean_x = np.asarray(mean, dtype=X.dtype)
    XT = X.T

    def matmat(V):
        return np.asarray(X @ V) - (mean_x @ V)[None, :]

    def rmatmat(U):
        return np.asarray(XT @ U) - mean_x[:, None] * U.sum(axis=0)[None, :]

    return scipy.sparse.linalg.LinearOperator(
        X.shape, dtype=X.dtype,
        matvec=lambda v: np.asarray(X @ v).ravel() - mean_x @ v,
        rmatvec=lambda u: np.asarray(XT @ u).ravel() - mean_x * u.sum(),
        matmat=matmat, rmatmat=rmatmat)


def sparse_scatter(X, mean):
    """The centred scatter ``X^T X - m mean mean^T`` of a sparse X, a dense d x d float64."""
    X64 = X.astype(np.float64) if X.dtype != np.float64 else X
    gram = (X64.T @ X64).toarray()
    gram -= X.shape[0] * np.outer(mean, mean)
    return 0.5 * (gram + gram.T)
