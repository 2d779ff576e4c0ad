"""Kernel blocks of :class:`~fastdr.decomposition.KernelPCA`, one entry point per input kind.

* :func:`dense_kernel`: a named kernel between dense rows, written into one preallocated
  array by the numba kernels of :mod:`fastdr._kernels.spectral.kernel_matrix` (the fast path).
* :func:`sparse_kernel`: a named kernel when X or Y is a scipy sparse matrix. The only
  large product is the sparse ``X @ Y.T`` (scipy), so neither input is ever densified;
  the (m, n) result is dense, as the kernel matrix is dense anyway.
* :func:`callable_kernel`: a user's Python function, called once per pair of rows (once per
  unordered pair when X is Y), exactly as scikit-learn's ``pairwise_kernels`` calls it:
  dense rows as 1-D arrays, sparse rows as (1, d) sparse matrices. This is the slow path:
  O(m n) Python calls, no numba and no threads.
"""

import numpy as np
import scipy.sparse

from .._config import GEMM_MIN_DIM
from .._distance.norm_trick import norm_trick_setup
from .._distance.scaling import unit_scale_rows
from .._kernels.spectral import kernel_matrix as kernel_kernels
from .._runtime.threads import parallel_section
from .._validation.callables import check_values, probe
from .._validation.sparse import check_sparse as check_sparse_input

_DOT_KERNEL_CODES = {
    "linear": kernel_kernels.LINEAR,
    "poly": kernel_kernels.POLY,
    "sigmoid": kernel_kernels.SIGMOID,
    "cosine": kernel_kernels.COSINE,
}


def dense_kernel(X, Y, out, *, kernel, gamma, coef0, degree, n_jobs, mirror=True):
    """Fill ``out`` with the named kernel between the dense rows of X and Y (no temporaries).

    ``mirror=False`` (X is Y, rbf): the lower triangle may be left unfilled.
    """
    if kernel == "rbf":
        symmetric = X is Y
        if X.shape[1] < GEMM_MIN_DIM:
            Yt = np.ascontiguousarray(Y.T, dtype=np.float64)
            with parallel_section(n_jobs):
                kernel_kernels.rbf_direct(X, Yt, gamma, symmetric, out)
        else:
            with parallel_section(n_jobs):
                trick = norm_trick_setup(Y, None if symmetric else X)
            Yc = np.subtract(Y, trick.centre, dtype=Y.dtype)
            # A separate left operand: numpy would run X X^T as syrk plus a slow mirror.
            Xc = np.subtract(X, trick.centre, dtype=X.dtype)
            np.dot(Xc, Yc.T, out=out)
            with parallel_section(n_jobs):
                kernel_kernels.rbf_from_gram_inplace(
                    out, Xc, Yc, trick.q_norms, trick.t_norms, trick.tol, gamma, symmetric)
        if symmetric and mirror:
            with parallel_section(n_jobs):
                kernel_kernels.mirror_upper_to_lower(out)
        return out
    X, Y = _cosine_rows(X, Y, kernel)
    np.dot(X, Y.T, out=out)
    return _dot_kernel(out, X, Y, kernel=kernel, gamma=gamma, coef0=coef0, degree=degree,
                       n_jobs=n_jobs)


def sparse_kernel(X, Y, *, kernel, gamma, coef0, degree, n_jobs, dtype):
    """The named kernel between the rows of X and Y when either is scipy sparse.

    Returns a new dense C-contiguous (m, n) array of ``dtype``.
    """
    X, Y = _cosine_rows(X, Y, kernel)
    gram = X @ Y.T
    gram = gram.toarray() if scipy.sparse.issparse(gram) else np.asarray(gram)
    out = np.ascontiguousarray(gram, dtype=dtype)
    if kernel == "rbf":
        # |x - y|^2 = |x|^2 + |y|^2 - 2 <x, y>, clipped at 0 (round-off), 0 on the diagonal
        # of a symmetric block; then exp(-gamma d) in place
        out *= -2.0
        out += _squared_norms(X)[:, None].astype(dtype)
        out += _squared_norms(Y)[None, :].astype(dtype)
        np.maximum(out, 0.0, out=out)
        if X is Y:
            np.fill_diagonal(out, 0.0)
        out *= -gamma
        np.exp(out, out=out)
        return out
    return _dot_kernel(out, X, Y, kernel=kernel, gamma=gamma, coef0=coef0, degree=degree,
                       n_jobs=n_jobs)


def callable_kernel(function, X, Y, params, dtype):
    """``function(x, y, **params)`` for every row x of X and y of Y, as a new (m, n) array.

    When X is Y only the pairs ``i < j`` and the diagonal are evaluated (the result is
    mirrored), as in scikit-learn.
    """
    rows_x = _rows(X)
    rows_y = rows_x if X is Y else _rows(Y)
    m, n = X.shape[0], Y.shape[0]
    if m and n:
        probe(function, rows_x(0), rows_y(0), params, role="kernel")
    if X is Y:
        out = np.zeros((m, m), dtype=dtype)
        for i in range(m):
            xi = rows_x(i)
            for j in range(i + 1, m):
                out[i, j] = function(xi, rows_x(j), **params)
        out += out.T
        for i in range(m):
            xi = rows_x(i)
            out[i, i] = function(xi, xi, **params)
    else:
        out = np.empty((m, n), dtype=dtype)
        for i in range(m):
            xi = rows_x(i)
            for j in range(n):
                out[i, j] = function(xi, rows_y(j), **params)
    check_values(out, function, rows_x, rows_y, params, role="kernel")
    return out


def _cosine_rows(X, Y, kernel):
    """For the cosine kernel, X and Y with rows scaled by powers of two (exact; the kernel
    is scale-free and the Gram and norms then stay finite at any scale); X is Y kept."""
    if kernel != "cosine":
        return X, Y
    Xs = unit_scale_rows(X)
    return Xs, (Xs if Y is X else unit_scale_rows(Y))


def _rows(A):
    if scipy.sparse.issparse(A):
        return lambda i: A[[i], :]
    return lambda i: A[i]


def _dot_kernel(out, X, Y, *, kernel, gamma, coef0, degree, n_jobs):
    """Turn the Gram block ``out`` into the dot-product kernel ``kernel`` in place."""
    if kernel == "linear":
        return out
    if kernel == "cosine":
        row_scale = _inverse_norms(X)
        col_scale = row_scale if X is Y else _inverse_norms(Y)
    else:
        row_scale = col_scale = np.zeros(1)
    with parallel_section(n_jobs):
        kernel_kernels.dot_kernel_inplace(out, _DOT_KERNEL_CODES[kernel], float(gamma),
                                          float(coef0), float(degree), row_scale, col_scale)
    return out


def _squared_norms(X):
    if scipy.sparse.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", X, X, dtype=np.float64)


def _inverse_norms(X):
    norms = np.sqrt(_squared_norms(X))
    out = np.zeros_like(norms)
    out[norms > 0] = 1.0 / norms[norms > 0]
    return out


def check_sparse(X, *, name="X", min_samples=1, copy=False):
    """A canonical CSR float32/float64 form of the sparse ``X``, checked
    (:func:`fastdr._validation.sparse.check_sparse`; a copy when ``copy``)."""
    return check_sparse_input(X, name=name, min_samples=min_samples, copy=copy,
                              index_dtype=None)


class EstimatorKernel:
    """Mixin: the kernel a KernelPCA's parameters define (``kernel``, ``gamma_``, ``degree``,
    ``coef0``, ``kernel_params``, ``n_jobs``), on any input kind, and the remedy its error
    messages give for non-finite values."""

    def _kernel_name(self):
        return getattr(self.kernel, "__name__", "callable") if callable(self.kernel) \
            else self.kernel

    def _nonfinite_remedy(self):
        if self.kernel == "poly" and float(self.degree) != int(self.degree):
            return (f"kernel='poly' with the non-integer degree={self.degree!r} is NaN where "
                    "gamma <x, y> + coef0 < 0: use an integer degree, or non-negative data "
                    "and coef0 >= 0.")
        if self.kernel == "precomputed":
            return "Pass a finite kernel matrix."
        if callable(self.kernel):
            return "Make the kernel callable return finite values on this data."
        return ("The kernel overflows for data this large: scale X first (for example with "
                "sklearn.preprocessing.StandardScaler), or lower gamma / degree.")

    def _kernel(self, X, Y, out=None, mirror=True):
        """The kernel between the rows of X and Y: into ``out`` (dense named kernels, no
        temporaries) or a new array. ``mirror=False`` (X is Y, rbf): the lower triangle
        may be left unfilled."""
        dtype = np.result_type(X.dtype, Y.dtype)
        if callable(self.kernel):
            K = callable_kernel(self.kernel, X, Y, self.kernel_params or {}, dtype)
        elif scipy.sparse.issparse(X) or scipy.sparse.issparse(Y):
            K = sparse_kernel(X, Y, kernel=self.kernel, gamma=self.gamma_, coef0=self.coef0,
                              degree=self.degree, n_jobs=self.n_jobs, dtype=dtype)
        else:
            if out is None:
                out = np.empty((X.shape[0], Y.shape[0]), dtype=dtype)
            return dense_kernel(X, Y, out, kernel=self.kernel, gamma=self.gamma_,
                                coef0=self.coef0, degree=self.degree, n_jobs=self.n_jobs,
                                mirror=mirror)
        if out is not None:
            out[...] = K
            return out
        return K
