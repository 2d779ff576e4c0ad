"""Principal component analysis and kernel PCA.

PCA follows the textbook (Zhou, ch. 10.3): centre the data, eigendecompose the covariance
matrix, keep the top d' eigenvectors. Kernel PCA (ch. 10.4) does the same with the centred
kernel matrix of the training samples and projects new samples through kernel sums.
"""

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from ._base import BaseEstimator, TransformerMixin
from ._eigen import (
    SOLVERS,
    STREAMING_MAX_COLUMNS,
    ZERO_EIGENVALUE_RATIO,
    block_product,
    check_n_components,
    choose_solver,
    clip_negative_eigenvalues,
    fix_signs,
    n_components_for_ratio,
    randomized_block_width,
    symmetric_eigenpairs,
    zero_roundoff_eigenvalues,
)
from ._kernels import distances as dist_kernels
from ._kernels import kernel_matrix as kernel_kernels
from ._kernels.centering import double_centre_inplace
from ._kernels.matrix_checks import symmetry_stats
from ._parallel import parallel_section
from ._progress import StageLog
from ._validation import (
    check_array,
    check_dense_allocation,
    check_is_fitted,
    check_n_features,
    check_option,
    check_scalar,
)
from .neighbors._search import GEMM_MIN_DIM
from .pairwise import _RECOMPUTE_TOL

SVD_SOLVERS = ("auto", "covariance_eigh", "gram", "full", "randomized")
KERNELS = ("linear", "rbf", "poly", "sigmoid", "cosine", "precomputed")
_DOT_KERNEL_CODES = {
    "linear": kernel_kernels.LINEAR,
    "poly": kernel_kernels.POLY,
    "sigmoid": kernel_kernels.SIGMOID,
    "cosine": kernel_kernels.COSINE,
}
# Row blocks hold about this many elements (4 MiB in float64): they stay in cache while BLAS
# works on them, and no copy of X is ever made.
_BLOCK_ELEMENTS = 2**19
# The one-product routes of ``centred_scatter`` / ``project_centred`` are kept when the
# centring subtraction cancels at most this factor (about 4 of float64's 16 digits).
_MAX_CANCELLATION = 1e4
# A precomputed matrix counts as symmetric when |A - A^T| <= this times max |A|.
SYMMETRY_RTOL = {np.dtype(np.float64): 1e-10, np.dtype(np.float32): 1e-5}


def _block_rows(n_features):
    return int(min(8192, max(64, _BLOCK_ELEMENTS // max(1, n_features))))


def centred_scatter(X):
    """Mean and centred scatter matrix ``sum_i (x_i - mean)(x_i - mean)^T`` in float64.

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
        mean = X.mean(axis=0)
        scatter = X.T @ X
        scatter -= m * np.outer(mean, mean)
        diag = np.diag(scatter)
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = np.where(mean == 0, 0.0, m * mean * mean / diag)
        if (diag > 0).all() and loss.max() <= _MAX_CANCELLATION:
            return mean, 0.5 * (scatter + scatter.T)
    rows = _block_rows(d)
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
    cols = _block_rows(m)
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
        spread = np.abs(out).max(axis=0) if m else np.zeros_like(offset)
        if (np.abs(offset) <= _MAX_CANCELLATION * spread).all():
            return out
    rows = _block_rows(d)
    mean = mean.astype(X.dtype)
    out = np.empty((m, components.shape[0]), dtype=X.dtype)
    buf = np.empty((min(rows, m), d), dtype=X.dtype)
    for start in range(0, m, rows):
        stop = min(m, start + rows)
        block = buf[: stop - start]
        np.subtract(X[start:stop], mean, out=block)
        np.dot(block, weights_t, out=out[start:stop])
    return out


class PCA(TransformerMixin, BaseEstimator):
    """Principal component analysis: the top eigenvectors of the covariance matrix.

    Parameters
    ----------
    n_components : int, float or None, default=None
        An int keeps that many components (at most ``min(n_samples, n_features)``). A float
        ``t`` in (0, 1] keeps the smallest d' whose cumulative explained-variance ratio is
        ``>= t`` (the textbook rule; scikit-learn keeps the smallest d' whose ratio is
        strictly ``> t``, and so keeps one more component when a cumulative ratio equals
        ``t`` exactly; a round-off allowance of 1e-12 applies). None keeps
        ``min(n_samples, n_features)`` components.
    whiten : bool, default=False
        Scale the projections to unit variance (components with zero variance project to 0).
    svd_solver : {"auto", "covariance_eigh", "gram", "full", "randomized"}, default="auto"
        ``"covariance_eigh"``: the d x d covariance matrix (see :func:`centred_scatter`: one
        BLAS product, or float64 accumulation over row blocks when centring would cancel;
        never a copy of X), then LAPACK ``eigh``; time O(m d^2 + d^3).
        ``"gram"``: the m x m Gram matrix of the centred rows (one m x m array); time
        O(m^2 d + m^3). ``"full"``: LAPACK SVD of a centred float64 copy of X (the most
        accurate for tiny variances). ``"randomized"``: randomized block Krylov on the
        covariance operator ``Xc^T Xc``, never forming it (O(m d) per pass); needs an int
        ``n_components``.
        ``"auto"`` takes ``"covariance_eigh"`` when ``n_samples >= n_features`` and
        ``"gram"`` otherwise.
    random_state : int, RandomState or None, default=None
        Seeds the randomized solver (and the iterative eigensolver used for a few
        components of a large covariance or Gram matrix).

    Attributes
    ----------
    components_ : ndarray of shape (n_components_, n_features)
        Principal axes (unit rows), each with its largest-magnitude entry positive.
    explained_variance_ : ndarray of shape (n_components_,)
        Eigenvalues of the covariance matrix (denominator ``n_samples - 1``).
    explained_variance_ratio_ : ndarray of shape (n_components_,)
        ``explained_variance_`` over the total variance.
    singular_values_ : ndarray of shape (n_components_,)
        Singular values of the centred data.
    mean_ : ndarray of shape (n_features,)
    n_components_ : int
    n_features_in_ : int
    n_samples_ : int

    Notes
    -----
    Complexity with the default solver: time O(m d^2 + d^3) for m >= d, O(m^2 d + m^3)
    otherwise; memory O(d^2) (resp. one m x m array) beyond X.
    """

    def __init__(self, *, n_components=None, whiten=False, svd_solver="auto",
                 random_state=None):
        self.n_components = n_components
        self.whiten = whiten
        self.svd_solver = svd_solver
        self.random_state = random_state

    def fit(self, X, y=None):
        """Fit the principal axes on X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        self._fit(check_array(X, min_samples=2))
        return self

    def fit_transform(self, X, y=None):
        """Fit on X and return its projections (X is validated once).

        Returns
        -------
        ndarray of shape (n_samples, n_components_)
        """
        X_valid = check_array(X, min_samples=2)
        self._fit(X_valid)
        return self._wrap_output(self._project(X_valid), X)

    def _fit(self, X):
        check_option(self.svd_solver, "svd_solver", SVD_SOLVERS)
        if not isinstance(self.whiten, (bool, np.bool_)):
            raise TypeError(f"whiten must be True or False; got {self.whiten!r}.")
        m, d = X.shape
        n_components = check_n_components(
            self.n_components, min(m, d), estimator="PCA", limit="min(n_samples, n_features)")
        solver = self.svd_solver
        if solver == "auto":
            solver = "covariance_eigh" if m >= d else "gram"
        if solver == "randomized" and not isinstance(n_components, int):
            raise ValueError(
                f"svd_solver='randomized' needs an int n_components; got {n_components!r}. "
                "Pass an int, or use svd_solver='auto' for a variance threshold."
            )
        wanted = n_components if isinstance(n_components, int) else None
        if solver == "covariance_eigh":
            mean, values, vectors, total = self._fit_covariance(X, wanted)
        elif solver == "gram":
            mean, values, vectors, total = self._fit_gram(X, wanted)
        elif solver == "full":
            mean, values, vectors, total = self._fit_full(X)
        else:
            mean, values, vectors, total = self._fit_randomized(X, wanted)
        values = np.maximum(values, 0.0)
        if n_components is None:
            k = min(m, d)
        elif isinstance(n_components, float):
            k = n_components_for_ratio(values, n_components) if total > 0 else 1
        else:
            k = n_components
        values = values[:k]
        components = fix_signs(np.array(vectors[:, :k], dtype=np.float64)).T
        variance = values / (m - 1)
        dtype = X.dtype
        self.mean_ = mean.astype(dtype)
        self.components_ = np.ascontiguousarray(components, dtype=dtype)
        self.explained_variance_ = variance.astype(dtype)
        ratio = variance / (total / (m - 1)) if total > 0 else np.zeros_like(variance)
        self.explained_variance_ratio_ = ratio.astype(dtype)
        self.singular_values_ = np.sqrt(values).astype(dtype)
        self.n_components_ = int(k)
        self.n_features_in_ = d
        self.n_samples_ = m
        return self

    def _fit_covariance(self, X, wanted):
        d = X.shape[1]
        mean, scatter = centred_scatter(X)
        total = float(np.trace(scatter))
        k = d if wanted is None else wanted
        values, vectors = symmetric_eigenpairs(scatter, k, solver="auto",
                                               random_state=self.random_state,
                                               overwrite_a=True)
        return mean, values, vectors, total

    def _fit_gram(self, X, wanted):
        m, d = X.shape
        check_dense_allocation((m, m), np.float64, what=f"The {m} x {m} Gram matrix of PCA",
                               alternative="Use svd_solver='randomized' or 'full'.")
        mean = X.mean(axis=0, dtype=np.float64)
        gram = centred_gram(X, mean)
        total = float(np.trace(gram))
        k = m if wanted is None else wanted
        values, left = symmetric_eigenpairs(gram, k, solver="auto",
                                            random_state=self.random_state, overwrite_a=True)
        del gram
        values = np.maximum(values, 0.0)
        # Right singular vectors v = Xc^T u / s (u is orthogonal to 1, so Xc^T u = X^T u).
        vectors = np.asarray(X.T @ left.astype(X.dtype), dtype=np.float64)
        vectors -= np.outer(mean, left.sum(axis=0))
        null = values <= 10 * max(m, d) * np.finfo(np.float64).eps * max(values.max(), 0.0)
        good = ~null
        vectors[:, good] /= np.sqrt(values[good])
        if null.any():
            vectors[:, null] = _orthonormal_complement(vectors[:, good], int(null.sum()), d)
            values[null] = 0.0
        return mean, values, vectors, total

    def _fit_full(self, X):
        mean = X.mean(axis=0, dtype=np.float64)
        centred = np.subtract(X, mean, dtype=np.float64)
        _, singular, vt = scipy.linalg.svd(centred, full_matrices=False, overwrite_a=True,
                                           check_finite=False)
        return mean, singular**2, vt.T, float(np.sum(singular**2))

    def _fit_randomized(self, X, wanted):
        m, d = X.shape
        mean, total = _mean_and_total_scatter(X)
        mean_x = mean.astype(X.dtype)

        def matmat(Q):
            Q = np.asarray(Q, dtype=X.dtype).reshape(d, -1)
            W = X @ Q - mean_x @ Q
            return np.asarray(X.T @ W - np.outer(mean_x, W.sum(axis=0)), dtype=Q.dtype)

        operator = scipy.sparse.linalg.LinearOperator(
            (d, d), matvec=matmat, matmat=matmat, rmatvec=matmat, rmatmat=matmat,
            dtype=X.dtype)
        values, vectors = symmetric_eigenpairs(operator, wanted, solver="randomized",
                                               random_state=self.random_state)
        return mean, np.asarray(values, dtype=np.float64), vectors, total

    def transform(self, X):
        """Project X on the principal axes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components_)
            ``(X - mean_) @ components_.T``, divided by ``sqrt(explained_variance_)`` when
            ``whiten``.
        """
        check_is_fitted(self, "components_")
        X_valid = check_array(X)
        check_n_features(self, X_valid, "transform")
        return self._wrap_output(self._project(X_valid), X)

    def _project(self, X):
        Z = project_centred(X, self.mean_, self.components_)
        if self.whiten:
            Z *= _inverse_sqrt(self.explained_variance_).astype(Z.dtype)
        return Z

    def inverse_transform(self, X):
        """Map projections back to the input space: ``W z + mean_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components_)

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self, "components_")
        Z = check_array(X)
        if Z.shape[1] != self.n_components_:
            raise ValueError(
                f"X has {Z.shape[1]} columns, but this PCA has {self.n_components_} "
                "components; inverse_transform takes the output of transform."
            )
        W = self.components_.astype(np.float64)
        if self.whiten:
            W = np.sqrt(np.maximum(self.explained_variance_, 0)).astype(np.float64)[:, None] * W
        out = Z.astype(np.float64) @ W + self.mean_.astype(np.float64)
        return out.astype(Z.dtype)


def _inverse_sqrt(values):
    values = np.asarray(values, dtype=np.float64)
    out = np.zeros_like(values)
    positive = values > 0
    out[positive] = 1.0 / np.sqrt(values[positive])
    return out


def _mean_and_total_scatter(X):
    m, d = X.shape
    mean = X.mean(axis=0, dtype=np.float64)
    rows = _block_rows(d)
    total = 0.0
    for start in range(0, m, rows):
        block = X[start:start + rows] - mean
        total += float(np.einsum("ij,ij->", block, block))
    return mean, total


def _orthonormal_complement(basis, count, d):
    """``count`` orthonormal columns orthogonal to the orthonormal columns of ``basis``."""
    rng = np.random.RandomState(0)
    extra = rng.standard_normal((d, count))
    for _ in range(2):
        extra -= basis @ (basis.T @ extra)
    return np.linalg.qr(extra)[0]


class KernelPCA(TransformerMixin, BaseEstimator):
    """Kernel principal component analysis.

    Parameters
    ----------
    n_components : int, float or None, default=None
        An int keeps that many components (at most ``n_samples``). A float ``t`` in (0, 1]
        keeps the smallest d' whose cumulative share of the positive eigenvalues is ``>= t``.
        None keeps every component whose eigenvalue is not zero to round-off (above 1e-12
        times the largest), as scikit-learn does. None and floats need the whole spectrum,
        so they always use the dense solver.
    kernel : {"linear", "rbf", "poly", "sigmoid", "cosine", "precomputed"}, default="linear"
        ``rbf``: ``exp(-gamma |x - y|^2)``; ``poly``: ``(gamma <x, y> + coef0)^degree``;
        ``sigmoid``: ``tanh(gamma <x, y> + coef0)``; ``cosine``: ``<x, y> / (|x| |y|)``;
        ``precomputed``: ``fit`` takes the symmetric (m, m) kernel matrix and ``transform``
        the (n_new, m) kernel between new and training samples.
    gamma : float or None, default=None
        None means ``1 / n_features``.
    degree : float, default=3
    coef0 : float, default=1
    eigen_solver : {"auto", "dense", "arpack", "lobpcg", "randomized"}, default="auto"
        See :mod:`fastdr._eigen` (README, "Spectral methods") for the ``"auto"`` rule.
    random_state : int, RandomState or None, default=None
        Seeds the iterative eigensolvers.
    n_jobs : int or None, default=None
        Threads for the kernel and centring kernels.
    verbose : int, default=0
        1 or more prints one line per stage of ``fit`` (kernel matrix, eigensolver) with its time. A
        fastdr extra: scikit-learn's KernelPCA has no ``verbose``.

    Attributes
    ----------
    eigenvalues_ : ndarray of shape (n_components_,)
        Eigenvalues of the centred kernel matrix, descending; negatives clipped to 0 (with a
        warning naming them when they are not round-off), and values that are zero to
        round-off set to 0 (those components project to 0).
    eigenvectors_ : ndarray of shape (n_samples, n_components_)
        Unit eigenvectors of the centred kernel matrix.
    n_components_ : int
    n_features_in_ : int
    gamma_ : float
        The kernel coefficient in force.
    X_fit_ : ndarray of shape (n_samples, n_features)
        The training data (absent for ``kernel="precomputed"``).

    Notes
    -----
    Time O(m^2 d) for the kernel matrix plus the eigensolver (a few passes over the matrix
    with the iterative solvers); memory one m x m array (the kernel is built, centred and
    decomposed in place).
    """

    def __init__(self, *, n_components=None, kernel="linear", gamma=None, degree=3, coef0=1,
                 eigen_solver="auto", random_state=None, n_jobs=None, verbose=0):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.eigen_solver = eigen_solver
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _check_params(self):
        check_option(self.kernel, "kernel", KERNELS)
        check_option(self.eigen_solver, "eigen_solver", SOLVERS)
        check_scalar(self.gamma, "gamma", "real", min_value=0, include_min=False,
                     allow_none=True)
        check_scalar(self.degree, "degree", "real", min_value=0)
        check_scalar(self.coef0, "coef0", "real")

    def fit(self, X, y=None):
        """Fit the model on X (or on a precomputed kernel matrix).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
        y : ignored

        Returns
        -------
        self
        """
        self._fit(X)
        return self

    def fit_transform(self, X, y=None):
        """Fit and return the embedding of the training samples, ``V sqrt(Lambda)``.

        Returns
        -------
        ndarray of shape (n_samples, n_components_)
        """
        self._fit(X)
        Z = self.eigenvectors_ * np.sqrt(self.eigenvalues_).astype(self.eigenvectors_.dtype)
        return self._wrap_output(Z, X)

    def _fit(self, X):
        log = StageLog(type(self).__name__, self.verbose)
        self._check_params()
        if self.kernel == "precomputed":
            K0 = check_precomputed_square(X, "The precomputed kernel matrix", negative_ok=True)
            m = K0.shape[0]
            n_components = check_n_components(self.n_components, m, estimator="KernelPCA",
                                              limit="n_samples")
            check_dense_allocation((m, m), K0.dtype, what=f"The {m} x {m} centred kernel copy",
                                   alternative="Pass float32 input or fewer samples.")
            K = np.array(K0, order="C", copy=True)
            log.done("copy of the kernel matrix")
            self.gamma_ = None
            self.n_features_in_ = m
        else:
            X = check_array(X, min_samples=2)
            m = X.shape[0]
            n_components = check_n_components(self.n_components, m, estimator="KernelPCA",
                                              limit="n_samples")
            self.gamma_ = float(self.gamma) if self.gamma is not None else 1.0 / X.shape[1]
            self.n_features_in_ = X.shape[1]
            check_dense_allocation((m, m), X.dtype, what=f"The {m} x {m} kernel matrix",
                                   alternative="Pass float32 input or fewer samples.")
        solver = "dense"
        if isinstance(n_components, int):
            solver = self.eigen_solver
            if solver == "auto":
                solver = choose_solver(m, n_components, sparse=False)
            if solver in ("arpack", "lobpcg") and n_components >= m:
                solver = "dense"
        # an iterative solver with a thin block reads only K's upper triangle (half the
        # memory traffic per product), so the rbf kernel need not be mirrored
        # (+ 1: the first product carries a column of ones for the row means)
        upper = (solver != "dense"
                 and randomized_block_width(n_components) + 1 <= STREAMING_MAX_COLUMNS)
        if self.kernel != "precomputed":
            K = np.empty((m, m), dtype=X.dtype)
            self._kernel(X, X, K, mirror=not upper)
            log.done(f"kernel matrix ({self.kernel}, {m} x {m})")
            self.X_fit_ = X
        if solver == "dense":
            with parallel_section(self.n_jobs):
                row_means = double_centre_inplace(K, False, 1.0)
            if not isinstance(n_components, int):
                check_dense_allocation((m, m), K.dtype,
                                       what=f"The {m} x {m} eigenvector matrix",
                                       alternative="Pass an int n_components.")
            values, vectors = symmetric_eigenpairs(
                K, n_components if isinstance(n_components, int) else m, solver="dense",
                overwrite_a=True)
        else:
            operator = _CentredKernel(K, self.n_jobs, upper)
            values, vectors = symmetric_eigenpairs(
                operator, n_components, solver=solver, random_state=self.random_state,
                n_jobs=self.n_jobs)
            row_means = operator.row_means
        log.done(f"centring and eigensolver ({solver})")
        self._row_means = row_means
        self._grand_mean = float(row_means.mean())
        del K
        values = clip_negative_eigenvalues(values, what="The centred kernel matrix")
        values = zero_roundoff_eigenvalues(values, m, vectors.dtype)
        if n_components is None:
            k = max(1, int(np.sum(values > ZERO_EIGENVALUE_RATIO * values[0])))
        elif isinstance(n_components, float):
            k = n_components_for_ratio(values, n_components)
        else:
            k = n_components
        dtype = vectors.dtype
        self.eigenvalues_ = np.ascontiguousarray(values[:k]).astype(dtype)
        self.eigenvectors_ = np.ascontiguousarray(vectors[:, :k])
        self.n_components_ = int(k)
        log.total()
        return self

    def _kernel(self, X, Y, out, mirror=True):
        """Fill ``out`` with the kernel between the rows of X and Y (no temporaries).

        ``mirror=False`` (X is Y, rbf): the lower triangle may be left unfilled.
        """
        gamma = self.gamma_
        if self.kernel == "rbf":
            symmetric = X is Y
            if X.shape[1] < GEMM_MIN_DIM:
                Yt = np.ascontiguousarray(Y.T, dtype=np.float64)
                with parallel_section(self.n_jobs):
                    kernel_kernels.rbf_direct(X, Yt, gamma, symmetric, out)
            else:
                centre = Y.mean(axis=0, dtype=np.float64)
                Yc = np.subtract(Y, centre, dtype=Y.dtype)
                # A separate left operand: numpy would run X X^T as syrk plus a slow mirror.
                Xc = np.subtract(X, centre, dtype=X.dtype)
                np.dot(Xc, Yc.T, out=out)
                zero = np.zeros(X.shape[1])
                with parallel_section(self.n_jobs):
                    t_norms = dist_kernels.centred_sqnorms(Yc, zero)
                    q_norms = dist_kernels.centred_sqnorms(Xc, zero)
                    kernel_kernels.rbf_from_gram_inplace(
                        out, Xc, Yc, q_norms, t_norms, _RECOMPUTE_TOL[np.dtype(X.dtype)], gamma,
                        symmetric)
            if symmetric and mirror:
                with parallel_section(self.n_jobs):
                    kernel_kernels.mirror_upper_to_lower(out)
            return out
        np.dot(X, Y.T, out=out)
        if self.kernel == "linear":
            return out
        if self.kernel == "cosine":
            row_scale = _inverse_norms(X)
            col_scale = row_scale if X is Y else _inverse_norms(Y)
        else:
            row_scale = col_scale = np.zeros(1)
        with parallel_section(self.n_jobs):
            kernel_kernels.dot_kernel_inplace(out, _DOT_KERNEL_CODES[self.kernel],
                                              float(gamma), float(self.coef0),
                                              float(self.degree), row_scale, col_scale)
        return out

    def transform(self, X):
        """Project new samples: ``z_j = sum_i A_ij k_c(x_i, x)``, ``A = V Lambda^(-1/2)``.

        ``k_c`` is the kernel centred against the training kernel. Components with a zero
        eigenvalue project to 0.

        Parameters
        ----------
        X : array-like of shape (n_new, n_features), or (n_new, n_samples) of kernel values
            between new and training samples when ``kernel="precomputed"``.

        Returns
        -------
        ndarray of shape (n_new, n_components_)
        """
        check_is_fitted(self, "eigenvectors_")
        m = self.eigenvectors_.shape[0]
        if self.kernel == "precomputed":
            K = check_array(X, name="The precomputed kernel", copy=True)
            if K.shape[1] != m:
                raise ValueError(
                    f"The precomputed kernel has {K.shape[1]} columns, but KernelPCA was "
                    f"fitted on {m} samples. Pass the (n_new, {m}) kernel between the new "
                    "and the training samples."
                )
        else:
            X_valid = check_array(X)
            check_n_features(self, X_valid, "transform")
            X_valid = X_valid.astype(self.X_fit_.dtype, copy=False)
            n = X_valid.shape[0]
            check_dense_allocation((n, m), X_valid.dtype, what=f"The {n} x {m} kernel block",
                                   alternative="Transform fewer samples at a time.")
            K = np.empty((n, m), dtype=X_valid.dtype)
            self._kernel(X_valid, self.X_fit_, K)
        with parallel_section(self.n_jobs):
            kernel_kernels.centre_kernel_rows(K, self._row_means, self._grand_mean)
        scaled = self.eigenvectors_ * _inverse_sqrt(self.eigenvalues_).astype(
            self.eigenvectors_.dtype)
        return self._wrap_output(K @ scaled.astype(K.dtype), X)


class _CentredKernel(scipy.sparse.linalg.LinearOperator):
    """The centred kernel ``J K J`` (``J = I - 11^T / m``) applied without forming it.

    A product costs one streaming pass over K (:func:`fastdr._eigen.block_product`; with
    ``upper``, over its upper triangle only, the rest unread) plus O(m b) for the two
    centrings; the first product carries an extra column of ones, which
    yields K's row means (needed by ``transform``) without another pass.
    """

    def __init__(self, K, n_jobs, upper=False):
        super().__init__(dtype=K.dtype, shape=K.shape)
        self.K = K
        self.n_jobs = n_jobs
        self.upper = upper
        self.row_means = None

    def _matmat(self, Q):
        Q = np.asarray(Q, dtype=self.dtype)
        m, b = Q.shape
        centred = Q - Q.mean(axis=0)
        if self.row_means is None:
            centred = np.column_stack([centred, np.ones(m, dtype=self.dtype)])
        product = block_product(self.K, centred, self.n_jobs, upper=self.upper)
        if self.row_means is None:
            self.row_means = product[:, b].astype(np.float64) / m
            product = product[:, :b]
        return product - product.mean(axis=0)

    def _matvec(self, x):
        return self._matmat(np.asarray(x).reshape(-1, 1)).ravel()


def _inverse_norms(X):
    norms = np.sqrt(np.einsum("ij,ij->i", X, X, dtype=np.float64))
    out = np.zeros_like(norms)
    out[norms > 0] = 1.0 / norms[norms > 0]
    return out


def check_precomputed_square(A, what, *, negative_ok):
    """Validate a precomputed square matrix: finite, square, symmetric, (non-negative).

    Parameters
    ----------
    A : array-like of shape (m, m)
    what : str
        How the matrix is called in messages.
    negative_ok : bool
        Allow negative entries (kernels); distances must be non-negative.

    Returns
    -------
    ndarray
        The validated array (not copied unless conversion required it).
    """
    A = check_array(A, name=what, min_samples=2)
    if A.shape[0] != A.shape[1]:
        raise ValueError(
            f"{what} must be square (n_samples, n_samples); got shape {A.shape}. With a "
            "precomputed metric or kernel, pass the matrix between the training samples."
        )
    with parallel_section(None):
        asym, biggest, smallest = symmetry_stats(A)
    rtol = SYMMETRY_RTOL[np.dtype(A.dtype)]
    if asym > rtol * biggest:
        raise ValueError(
            f"{what} must be symmetric; the largest asymmetry |A - A.T| is {asym:.3g} "
            f"(largest entry {biggest:.3g}). Pass (A + A.T) / 2 if the asymmetry is round-off."
        )
    if not negative_ok and smallest < 0:
        raise ValueError(
            f"{what} has a negative entry ({smallest:.3g}); distances must be >= 0. Pass a "
            "matrix of distances (not similarities or log-distances)."
        )
    return A

