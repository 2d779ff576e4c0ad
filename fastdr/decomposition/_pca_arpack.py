"""PCA's ``"arpack"`` solver on a tall X: ARPACK on the Gram operator, one pass over X a step.

scikit-learn calls ``scipy.sparse.linalg.svds(Xc, k, tol=tol, v0=v0)``. For a tall X
(``m >= d``) that runs ARPACK (``eigsh``) on the Gram operator ``v -> Xc^T (Xc v)`` and
applies it as two products, each a pass over X. Here the same ARPACK iteration, from the
same ``v0`` and with the same tolerance, applies it either as the d x d matrix ``Xc^T Xc``
formed once (X dense, or CSR with short rows, with at most ``ARPACK_EXPLICIT_GRAM_MAX_DIM``
features: O(m d^2) once against about 50 steps of two passes over X) or through
:func:`fastdr._kernels.spectral.gram_product.centred_gram_dense` (or its CSR form), which reads each
row once, centres implicitly and runs on every thread. The steps after ARPACK are svds's:
orthonormalise the Ritz vectors, ``Xc V = U S W^T`` by a small SVD, right vectors ``V W``.
Timed by the bench workloads pca_arpack and pca_sparse_arpack; the explicit matrix is not
slower than scikit-learn's own svds route at any width up to its threshold.
"""

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from .. import _config as config
from .._kernels.spectral.block_product import dense_times_block
from .._kernels.spectral.gram_product import centred_gram_csr, centred_gram_dense, csr_gram_matrix
from .._runtime.blas import single_threaded_blas
from .._runtime.threads import parallel_section
from ._centred import _MAX_CANCELLATION
from ._pca_sparse import centring_loss, is_sparse, unsigned_index_arrays


def gram_route_applies(X):
    """True for a tall X, dense with at least ``ARPACK_GRAM_MIN_ELEMENTS`` elements or CSR
    with at least ``ARPACK_GRAM_MIN_STORED`` stored entries (CSC keeps scipy's products)."""
    m, d = X.shape
    if m < d:
        return False
    if is_sparse(X):
        return X.format == "csr" and X.nnz >= config.ARPACK_GRAM_MIN_STORED
    return m * d >= config.ARPACK_GRAM_MIN_ELEMENTS


def explicit_gram_applies(X):
    """True for a tall X, dense or CSR, with at most ``ARPACK_EXPLICIT_GRAM_MAX_DIM``
    features: its d x d Gram matrix, formed once, is cheaper than ARPACK's products over X.
    A CSR X also needs rows of at most about ``ARPACK_EXPLICIT_GRAM_MAX_ROW_ENTRIES`` stored
    entries (the pairs of denser rows cost more); CSC keeps scipy's products."""
    m, d = X.shape
    if not (m >= d and d <= config.ARPACK_EXPLICIT_GRAM_MAX_DIM):
        return False
    if not is_sparse(X):
        return True
    if X.format != "csr":
        return False
    counts = np.diff(X.indptr).astype(np.float64)
    return float(counts @ counts) <= config.ARPACK_EXPLICIT_GRAM_MAX_ROW_ENTRIES * max(X.nnz, 1)


def explicit_gram_matrix(X, mean):
    """``C = Xc^T Xc`` (``Xc = X - 1 mean^T``), a d x d float64 ndarray.

    One BLAS product ``X^T X - m mean mean^T`` (float32 rows converted a block at a time;
    a CSR X through :func:`fastdr._kernels.spectral.gram_product.csr_gram_matrix`, O(sum of squared
    row counts)), symmetrised; the caller's centring keeps that subtraction's cancellation
    small (see :func:`fastdr.decomposition._pca_solvers.centring`). Time O(m d^2).
    """
    m, d = X.shape
    mean64 = np.asarray(mean, dtype=np.float64)
    if is_sparse(X):
        indptr, indices = unsigned_index_arrays(X)
        with parallel_section(None):
            gram = csr_gram_matrix(indptr, indices, X.data, d)
    elif X.dtype == np.float64:
        gram = X.T @ X
    else:
        gram = np.zeros((d, d))
        rows = config.scatter_block_rows(d)
        for start in range(0, m, rows):
            block = np.asarray(X[start:start + rows], dtype=np.float64)
            gram += block.T @ block
    gram -= m * np.outer(mean64, mean64)
    return 0.5 * (gram + gram.T)


def explicit_gram_operator(X, mean, gram=None):
    """``v -> C v`` for the matrix of :func:`explicit_gram_matrix` (or ``gram``, that matrix
    already formed), in X's dtype as :func:`gram_operator`: float64 X gets the matrix itself
    (ARPACK then multiplies without a Python call a step), float32 X a LinearOperator.
    O(d^2) a product."""
    d = X.shape[1]
    if gram is None:
        gram = explicit_gram_matrix(X, mean)
    if X.dtype == np.float64:
        return gram

    def matvec(v):
        return (gram @ np.ravel(v).astype(np.float64, copy=False)).astype(X.dtype, copy=False)

    return scipy.sparse.linalg.LinearOperator((d, d), matvec=matvec, dtype=X.dtype)


def gram_operator(X, mean):
    """``v -> Xc^T Xc v`` (a d x d LinearOperator in X's dtype) for ``Xc = X - 1 mean^T``.

    X is dense C-ordered or a CSR whose index arrays were checked (see
    :func:`fastdr.decomposition._pca_sparse.check_sparse`).
    """
    d = X.shape[1]
    mean64 = np.ascontiguousarray(mean, dtype=np.float64)
    if is_sparse(X):
        indptr, indices = unsigned_index_arrays(X)
        data = X.data

        def apply(v, out):
            centred_gram_csr(indptr, indices, data, mean64, v, out)
    else:
        X = np.ascontiguousarray(X)

        def apply(v, out):
            centred_gram_dense(X, mean64, v, out)

    def matvec(v):
        v64 = np.ascontiguousarray(np.ravel(v), dtype=np.float64)
        out = np.empty(d)
        with parallel_section(None):
            apply(v64, out)
        return out.astype(X.dtype, copy=False)

    return scipy.sparse.linalg.LinearOperator((d, d), matvec=matvec, dtype=X.dtype)


def centred_matmat(X, mean, V):
    """``(X - 1 mean^T) V`` in float64 without forming the centred X (nor a float64 copy
    of a float32 X: its dense product accumulates in float64 row by row)."""
    V = np.asarray(V, dtype=np.float64)
    if is_sparse(X):
        product = np.asarray(X @ V, dtype=np.float64)
    else:
        product = np.empty((X.shape[0], V.shape[1]))
        with parallel_section(None):
            dense_times_block(np.ascontiguousarray(X), np.ascontiguousarray(V.T), product)
    product -= np.asarray(mean, dtype=np.float64) @ V
    return product


def gram_arpack_top(X, mean, k, *, tol, v0, gram=None):
    """Top k singular triplets of ``Xc = X - 1 mean^T`` as ``svds(Xc, k, tol=tol, v0=v0)``.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (m, d), m >= d
        Dense C-ordered, or CSR with checked index arrays. Pass a centred copy and a zero
        ``mean`` where implicit centring would cancel digits.
    mean : ndarray of shape (d,)
    k : int
        ``1 <= k < d``.
    tol : float
        svds's tolerance (ARPACK gets ``tol**2``, as in svds).
    v0 : ndarray of shape (d,)
    gram : ndarray of shape (d, d) or None
        ``Xc^T Xc`` in float64, already formed (then the explicit route is taken).

    Returns
    -------
    singular : ndarray of shape (k,), descending
    right : ndarray of shape (d, k)
    left : ndarray of shape (m, k)
    """
    if gram is not None:
        operator = explicit_gram_operator(X, mean, gram=gram)
    elif explicit_gram_applies(X) and not (
            is_sparse(X) and centring_loss(X, mean) > _MAX_CANCELLATION):
        # a sparse X is never centred in a copy (that would fill it in), so where the
        # explicit matrix would cancel digits the product operator (whose error grows with
        # the square root of that loss only) is taken instead
        operator = explicit_gram_operator(X, mean)
    else:
        operator = gram_operator(X, mean)
    _, ritz = scipy.sparse.linalg.eigsh(operator, k=k, tol=tol**2, v0=v0)
    ritz, _ = np.linalg.qr(ritz)  # ARPACK's Ritz vectors need not be exactly orthonormal
    product = centred_matmat(X, mean, ritz)
    # m x k with k small: one BLAS thread (LAPACK's many small steps gain nothing from two,
    # and on two they could stall)
    with single_threaded_blas():
        u, s, wt = scipy.linalg.svd(product, full_matrices=False, overwrite_a=True)
    return s, (wt @ ritz.T).T, u.astype(X.dtype, copy=False)
