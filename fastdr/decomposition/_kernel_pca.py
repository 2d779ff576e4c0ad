"""Kernel principal component analysis (Zhou, ch. 10.4).

Eigendecompose the centred kernel matrix of the training samples; project new samples
through their kernel sums against the training samples.
"""

from numbers import Integral, Real

import numpy as np
import scipy.sparse.linalg

from .._base import BaseEstimator, TransformerMixin
from .._config import GEMM_MIN_DIM
from .._distance_checks import check_distance_magnitude
from .._eigen import (
    NONFINITE_REMEDY,
    SOLVERS,
    check_finite_matrix,
    check_finite_row_means,
    plan_solve,
    reads_upper_triangle,
    spectral_pairs,
)
from .._eigen_solvers import block_product
from .._eigen_values import inverse_sqrt
from .._feature_names import check_feature_names, record_feature_names
from .._kernels import kernel_matrix as kernel_kernels
from .._kernels.centering import double_centre_inplace
from .._norm_trick import norm_trick_setup
from .._parallel import parallel_section
from .._params import N_JOBS, VERBOSE, Interval, StrOptions, validate_params
from .._progress import StageLog
from .._validation import (
    check_array,
    check_dense_allocation,
    check_is_fitted,
    check_n_components,
    check_precomputed_square,
    check_query,
)

KERNELS = ("linear", "rbf", "poly", "sigmoid", "cosine", "precomputed")
#: Kernels computed from squared distances: their input is checked for overflow.
DISTANCE_KERNELS = ("rbf",)
_WHAT = "The centred kernel matrix"
_DOT_KERNEL_CODES = {
    "linear": kernel_kernels.LINEAR,
    "poly": kernel_kernels.POLY,
    "sigmoid": kernel_kernels.SIGMOID,
    "cosine": kernel_kernels.COSINE,
}


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
        1 or more prints one line per stage of ``fit`` (kernel matrix, eigensolver) with its
        time. A fastdr extra: scikit-learn's KernelPCA has no ``verbose``.

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

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"),
                         Interval(Real, 0, 1, closed="right"), None],
        "kernel": [StrOptions(KERNELS)],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "degree": [Interval(Real, 0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "eigen_solver": [StrOptions(SOLVERS)],
        "random_state": ["random_state"],
        "n_jobs": N_JOBS,
        "verbose": VERBOSE,
    }

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

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            Training samples, or the symmetric training kernel matrix when
            ``kernel="precomputed"``.
        y : ignored
            Not used; present for API consistency.

        Returns
        -------
        ndarray of shape (n_samples, n_components_)
        """
        self._fit(X)
        return self.eigenvectors_ * np.sqrt(self.eigenvalues_).astype(self.eigenvectors_.dtype)

    def _fit(self, X):
        validate_params(self)
        record_feature_names(self, X)
        log = StageLog(type(self).__name__, self.verbose)
        for stale in ("_centre", "X_fit_"):
            self.__dict__.pop(stale, None)
        if self.kernel == "precomputed":
            K0 = check_precomputed_square(X, "The precomputed kernel matrix", negative_ok=True,
                                          n_jobs=self.n_jobs)
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
            # a copy, as scikit-learn's copy_X=True: transform must not see later edits of X
            X = check_array(X, min_samples=2, copy=True)
            if self.kernel in DISTANCE_KERNELS:
                self._centre = check_distance_magnitude(X)
            m = X.shape[0]
            n_components = check_n_components(self.n_components, m, estimator="KernelPCA",
                                              limit="n_samples")
            self.gamma_ = float(self.gamma) if self.gamma is not None else 1.0 / X.shape[1]
            self.n_features_in_ = X.shape[1]
            check_dense_allocation((m, m), X.dtype, what=f"The {m} x {m} kernel matrix",
                                   alternative="Pass float32 input or fewer samples.")
        k_solve = n_components if isinstance(n_components, int) else m
        solver = self.eigen_solver if isinstance(n_components, int) else "dense"
        # an iterative solver with a thin block reads only K's upper triangle (half the
        # memory traffic per product), so the rbf kernel need not be mirrored
        # (+ 1: the first product carries a column of ones for the row means)
        upper = reads_upper_triangle(solver, m, k_solve, extra_columns=1)
        dtype = K.dtype if self.kernel == "precomputed" else X.dtype
        # the memory plan before the O(m^2 d) kernel: a solve that cannot fit fails first
        solver = plan_solve(m, k_solve, solver=solver, dtype=dtype, overwrite_a=True,
                            what=_WHAT)
        if self.kernel != "precomputed":
            K = np.empty((m, m), dtype=X.dtype)
            self._kernel(X, X, K, mirror=not upper)
            log.done(f"kernel matrix ({self.kernel}, {m} x {m})")
            self.X_fit_ = X
        remedy = self._nonfinite_remedy()
        if solver == "dense":
            with parallel_section(self.n_jobs):
                row_means = double_centre_inplace(K, False, 1.0)
            check_finite_row_means(row_means, "The kernel matrix", remedy)
            A = K
        else:
            A = _CentredKernel(K, self.n_jobs, upper, remedy)
        values, vectors = spectral_pairs(
            A, "nonzero" if n_components is None else n_components, solver=solver,
            what=_WHAT, psd=True, zero_roundoff=True, finite_checked=True, remedy=remedy,
            random_state=self.random_state, overwrite_a=True, n_jobs=self.n_jobs)
        log.done(f"centring and eigensolver ({solver})")
        if solver != "dense":
            row_means = A.row_means
        self._row_means = row_means
        self._grand_mean = float(row_means.mean())
        del K, A
        k = values.shape[0]
        self.eigenvalues_ = values.astype(vectors.dtype)
        self.eigenvectors_ = vectors
        self.n_components_ = int(k)
        log.total()
        return self

    def _nonfinite_remedy(self):
        if self.kernel == "poly" and float(self.degree) != int(self.degree):
            return (f"kernel='poly' with the non-integer degree={self.degree!r} is NaN where "
                    "gamma <x, y> + coef0 < 0: use an integer degree, or non-negative data "
                    "and coef0 >= 0.")
        if self.kernel == "precomputed":
            return "Pass a finite kernel matrix."
        return ("The kernel overflows for data this large: scale X first (for example with "
                "sklearn.preprocessing.StandardScaler), or lower gamma / degree.")

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
                with parallel_section(self.n_jobs):
                    trick = norm_trick_setup(Y, None if symmetric else X)
                Yc = np.subtract(Y, trick.centre, dtype=Y.dtype)
                # A separate left operand: numpy would run X X^T as syrk plus a slow mirror.
                Xc = np.subtract(X, trick.centre, dtype=X.dtype)
                np.dot(Xc, Yc.T, out=out)
                with parallel_section(self.n_jobs):
                    kernel_kernels.rbf_from_gram_inplace(
                        out, Xc, Yc, trick.q_norms, trick.t_norms, trick.tol, gamma, symmetric)
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
            # the column count is checked below, with a message about kernels
            check_feature_names(self, X)
            K = check_array(X, name="The precomputed kernel", copy=True)
            if K.shape[1] != m:
                raise ValueError(
                    f"The precomputed kernel has {K.shape[1]} columns, but KernelPCA was "
                    f"fitted on {m} samples. Pass the (n_new, {m}) kernel between the new "
                    "and the training samples."
                )
        else:
            X_valid = check_query(self, X, "transform")
            X_valid = X_valid.astype(self.X_fit_.dtype, copy=False)
            if self.kernel in DISTANCE_KERNELS:
                check_distance_magnitude(X_valid, centre=self._centre)
            n = X_valid.shape[0]
            check_dense_allocation((n, m), X_valid.dtype, what=f"The {n} x {m} kernel block",
                                   alternative="Transform fewer samples at a time.")
            K = np.empty((n, m), dtype=X_valid.dtype)
            self._kernel(X_valid, self.X_fit_, K)
        check_finite_matrix(K, "The kernel block between the new and the training samples",
                            self._nonfinite_remedy())
        with parallel_section(self.n_jobs):
            kernel_kernels.centre_kernel_rows(K, self._row_means, self._grand_mean)
        scaled = self.eigenvectors_ * inverse_sqrt(self.eigenvalues_).astype(
            self.eigenvectors_.dtype)
        return K @ scaled.astype(K.dtype)


class _CentredKernel(scipy.sparse.linalg.LinearOperator):
    """The centred kernel ``J K J`` (``J = I - 11^T / m``) applied without forming it.

    A product costs one streaming pass over K (:func:`fastdr._eigen_solvers.block_product`; with
    ``upper``, over its upper triangle only, the rest unread) plus O(m b) for the two
    centrings; the first product carries an extra column of ones, which
    yields K's row means (needed by ``transform``) without another pass.
    """

    def __init__(self, K, n_jobs, upper=False, remedy=NONFINITE_REMEDY):
        super().__init__(dtype=K.dtype, shape=K.shape)
        self.K = K
        self.n_jobs = n_jobs
        self.upper = upper
        self.remedy = remedy
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
            # a non-finite K shows in its row sums: stop before the solver iterates on NaN
            check_finite_row_means(self.row_means, "The kernel matrix", self.remedy)
            product = product[:, :b]
        return product - product.mean(axis=0)

    def _matvec(self, x):
        return self._matmat(np.asarray(x).reshape(-1, 1)).ravel()


def _inverse_norms(X):
    norms = np.sqrt(np.einsum("ij,ij->i", X, X, dtype=np.float64))
    out = np.zeros_like(norms)
    out[norms > 0] = 1.0 / norms[norms > 0]
    return out
