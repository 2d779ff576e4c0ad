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
from .._validation.sparse import check_sparse as check_sparse_input

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
    """A canonical CSR or CSC float32/float64 form of the sparse ``X``, checked
    (:func:`fastdr._validation.sparse.check_sparse`); other formats become CSR, other dtypes
    float64, as in scikit-learn; the values are never densified."""
    return check_sparse_input(X, name=name, formats=SPARSE_FORMATS, min_samples=min_samples,
                              index_dtype=None)


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
        mean, ssq = csr_column_moments(indptr, indices, X.data, d)
        return mean, float(ssq.sum())
    cols = _column_of_entries(X)
    data = X.data.astype(np.float64, copy=False)
    mean = np.bincount(cols, weights=data, minlength=d) / m
    resid = data - mean[cols]
    nnz = np.bincount(cols, minlength=d)
    ssq = np.bincount(cols, weights=resid * resid, minlength=d) + (m - nnz) * mean * mean
    return mean, float(ssq.sum())


def centring_loss(X, mean):
    """The largest ``m mean_j^2 / ssq_j`` over the columns of a sparse X: about how many
    times its largest centred column sum of squares is exceeded by the uncentred one, the
    factor by which ``X^T X - m mean mean^T`` amplifies round-off. O(nnz).

    A CSR X takes the compiled moments (``mean`` is then theirs: the estimator computed it
    with the same kernel); other formats, numpy's bincount over the entries.
    """
    m, d = X.shape
    if X.format == "csr":
        indptr, indices = unsigned_index_arrays(X)
        _, ssq = csr_column_moments(indptr, indices, X.data, d)
    else:
        cols = _column_of_entries(X)
        resid = X.data.astype(np.float64, copy=False) - mean[cols]
        stored = np.bincount(cols, minlength=d)
        ssq = (np.bincount(cols, weights=resid * resid, minlength=d)
               + (m - stored) * mean * mean)
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = np.where(mean == 0, 0.0, m * mean * mean / ssq)
    return float(loss.max(initial=0.0))


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
