"""Kernel principal component analysis (Zhou, ch. 10.4).

Eigendecompose the centred kernel matrix of the training samples; project new samples
through their kernel sums against the training samples. The kernel blocks (dense, sparse,
callable) are in :mod:`._kernel_pca_kernels`, the centred-kernel operator and the eigenvalue
checks in :mod:`._kernel_pca_spectrum`, the learned pre-image of ``inverse_transform`` in
:mod:`._kernel_pca_inverse`.
"""

from numbers import Integral, Real

import numpy as np
import scipy.sparse
import scipy.sparse.linalg

from .._base import BaseEstimator, TransformerMixin
from .._eigen import (
    SOLVERS,
    check_finite_matrix,
)
from .._eigen.values import inverse_sqrt
from .._kernels.spectral import kernel_matrix as kernel_kernels
from .._runtime.progress import StageLog
from .._runtime.threads import parallel_section
from .._validation.arrays import check_array, check_is_fitted, check_n_features, check_query
from .._validation.budget import check_dense_allocation
from .._validation.feature_names import check_feature_names, record_feature_names
from .._validation.magnitudes import check_distance_magnitude
from .._validation.matrices import check_precomputed_square
from .._validation.params import (
    N_JOBS,
    VERBOSE,
    Interval,
    StrOptions,
    check_n_components,
    check_random_state,
    validate_params,
)
from ..exceptions import NotFittedError, compatible
from ._kernel_pca_inverse import apply_preimage, fit_preimage
from ._kernel_pca_kernels import EstimatorKernel, check_sparse
from ._kernel_pca_nystrom import fit_nystrom, transform_nystrom
from ._kernel_pca_routes import choose_storage, solve_implicit, solve_stored
from ._kernel_pca_spectrum import CentredKernel, clean_spectrum

KERNELS = ("linear", "rbf", "poly", "sigmoid", "cosine", "precomputed")
#: Kernels computed from squared distances: their input is checked for overflow.
DISTANCE_KERNELS = ("rbf",)


class KernelPCA(EstimatorKernel, TransformerMixin, BaseEstimator):
    """Kernel principal component analysis.

    A drop-in replacement for scikit-learn's ``KernelPCA``: the same parameters, defaults,
    attributes and methods (see the README, "Differences from scikit-learn").

    Parameters
    ----------
    n_components : int, float or None, default=None
        An int keeps that many components (at most ``n_samples``: a larger int is cut to
        ``n_samples``, as in scikit-learn). A float ``t`` in (0, 1] (a fastdr extra) keeps
        the smallest d' whose cumulative share of the positive eigenvalues is ``>= t``.
        None keeps every component whose eigenvalue is not zero to round-off (above 1e-12
        times the largest), as scikit-learn does. None and floats need the whole spectrum,
        so they always use the dense solver.
    kernel : {"linear", "poly", "rbf", "sigmoid", "cosine", "precomputed"} or callable, \
            default="linear"
        ``rbf``: ``exp(-gamma |x - y|^2)``; ``poly``: ``(gamma <x, y> + coef0)^degree``;
        ``sigmoid``: ``tanh(gamma <x, y> + coef0)``; ``cosine``: ``<x, y> / (|x| |y|)``;
        ``precomputed``: ``fit`` takes the symmetric (m, m) kernel matrix and ``transform``
        the (n_new, m) kernel between new and training samples. A callable
        ``kernel(x, y, **kernel_params)`` returns the kernel value of two rows (1-D arrays;
        (1, d) sparse matrices for sparse X). Callables are the slow path: one Python call
        per pair of samples, no compilation and no threads.
    gamma : float or None, default=None
        Coefficient of the rbf, poly and sigmoid kernels; None means ``1 / n_features``.
    degree : float, default=3
        Degree of the poly kernel.
    coef0 : float, default=1
        Independent term of the poly and sigmoid kernels.
    kernel_params : dict or None, default=None
        Keyword arguments of a callable kernel (ignored by the named kernels).
    alpha : float, default=1.0
        Ridge of the pre-image regression (``fit_inverse_transform=True``).
    fit_inverse_transform : bool, default=False
        Learn the pre-image (kernel ridge regression from the embedding back to X) that
        ``inverse_transform`` applies. Not with ``kernel="precomputed"`` nor sparse X.
    eigen_solver : {"auto", "dense", "arpack", "randomized", "lobpcg"}, default="auto"
        ``"auto"`` (fastdr's rule, not scikit-learn's): LAPACK for m <= 200 or when over
        10% of the pairs are wanted, ARPACK up to m = 2000, ``"randomized"`` above (the user
        guide's "Spectral methods" gives the reasons). ``"randomized"`` is fastdr's block
        Krylov solver, run until its residuals are below 1e-10 relative; ``"lobpcg"`` is a
        fastdr extra.
    tol : float, default=0
        Convergence tolerance of ARPACK (and LOBPCG); 0 means machine precision.
    max_iter : int or None, default=None
        Iteration cap of ARPACK (and LOBPCG); None leaves it to scipy.
    iterated_power : int >= 0 or "auto", default="auto"
        Accepted for scikit-learn compatibility. fastdr's randomized solver iterates until
        it has converged instead of running a fixed number of power iterations, so this
        value does not change the result.
    remove_zero_eig : bool, default=False
        Drop the components whose eigenvalue is zero (to round-off), so ``n_components_``
        may be below ``n_components``. With ``n_components=None`` they are always dropped.
    random_state : int, RandomState or None, default=None
        Seeds the iterative eigensolvers (ARPACK's start vector is drawn as scikit-learn
        draws it).
    copy_X : bool, default=True
        Keep a copy of X in ``X_fit_``; False keeps a reference (later edits of X then
        change ``transform``).
    n_jobs : int or None, default=None
        Threads for the kernel and centring kernels.
    verbose : int, default=0
        1 or more prints one line per stage of ``fit`` (kernel matrix, eigensolver) with its
        time. A fastdr extra: scikit-learn's KernelPCA has no ``verbose``.
    n_landmarks : int or None, default=None
        A fastdr extra. None: the exact method. An int L: Nystrom kernel PCA on L landmark
        samples, which never forms the m x m kernel: time O(m L (d + L)), memory O(L^2 + m
        ``n_components``) (the user guide's "Spectral methods"). L >= m gives the exact
        method's answer but for the directions in which the landmarks' kernel matrix has
        eigenvalues below 1e-8 of its largest (dropped for numerical stability).
    landmark_method : {"random", "kmeans++"}, default="random"
        A fastdr extra, with ``n_landmarks``: landmarks drawn uniformly (seeded by
        ``random_state``) or by k-means++ seeding, which spreads them over the data.
    kernel_storage : {"auto", "stored", "implicit"}, default="auto"
        A fastdr extra, for the exact method. "stored" builds the m x m kernel matrix once
        (a MemoryBudgetError when it does not fit); "implicit" never stores it: each
        product of the iterative eigensolver rebuilds it by row blocks from X (memory
        O(block m + m n_components); one O(m^2 d) pass per product, so slower), and needs
        an int ``n_components`` and an iterative ``eigen_solver`` ("auto" then picks ARPACK
        up to 2,000 samples, else the randomized solver). "auto" stores the kernel when it
        fits the memory budget and goes implicit otherwise. Both give the same answer to
        round-off.

    Attributes
    ----------
    eigenvalues_ : ndarray of shape (``n_components_``,)
        Eigenvalues of the centred kernel matrix, descending; negatives clipped to 0 (with a
        warning naming them when they are not round-off), and values that are zero to
        round-off set to 0 (those components project to 0).
    eigenvectors_ : ndarray of shape (n_samples, ``n_components_``)
        Unit eigenvectors of the centred kernel matrix.
    dual_coef_ : ndarray of shape (n_samples, n_features)
        Coefficients of the pre-image regression (``fit_inverse_transform=True``); with
        ``n_landmarks``, shape (L, n_features): the regression is fitted on the landmarks.
    X_transformed_fit_ : ndarray of shape (n_samples, ``n_components_``)
        The embedding of the training samples (``fit_inverse_transform=True``); with
        ``n_landmarks``, of the L landmarks.
    n_components_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Column names of X, when it has string column names.
    gamma_ : float
        The kernel coefficient in force (``gamma``, or ``1 / n_features_in_``).
    X_fit_ : ndarray or sparse matrix of shape (n_samples, n_features)
        The training data. Absent for ``kernel="precomputed"``, where scikit-learn keeps
        the centred training kernel there: fastdr decomposes that matrix in place instead
        of holding a second m x m copy.
    landmarks_ : ndarray or sparse matrix of shape (L, n_features)
        With ``n_landmarks``: the landmark samples (``X[landmark_indices_]``), which
        ``transform`` uses; the pre-image regression is then fitted on them.
    landmark_indices_ : ndarray of shape (L,)
        With ``n_landmarks``: the rows of X chosen as landmarks, ascending.

    Notes
    -----
    Time O(m^2 d) for the kernel matrix plus the eigensolver (a few passes over the matrix
    with the iterative solvers); memory one m x m array (the kernel is built, centred and
    decomposed in place); with ``kernel_storage="implicit"`` none: each of the eigensolver's
    passes recomputes the kernel (O(m^2 d) a pass), and memory is O(m n_components) beside X.
    Sparse X: the kernel comes from the sparse product ``X X^T``; X is never densified.
    ``fit_inverse_transform`` adds an m x m solve.
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"),
                         Interval(Real, 0, 1, closed="right"), None],
        "kernel": [StrOptions(KERNELS), callable],
        "gamma": [Interval(Real, 0, None, closed="left"), None],
        "degree": [Interval(Real, 0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "kernel_params": [dict, None],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "fit_inverse_transform": ["boolean"],
        "eigen_solver": [StrOptions(SOLVERS)],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "iterated_power": [Interval(Integral, 0, None, closed="left"), StrOptions({"auto"})],
        "remove_zero_eig": ["boolean"],
        "random_state": ["random_state"],
        "copy_X": ["boolean"],
        "n_jobs": N_JOBS,
        "verbose": VERBOSE,
        "n_landmarks": [Interval(Integral, 1, None, closed="left"), None],
        "landmark_method": [StrOptions({"random", "kmeans++"})],
        "kernel_storage": [StrOptions({"auto", "stored", "implicit"})],
    }

    def __init__(self, n_components=None, *, kernel="linear", gamma=None, degree=3, coef0=1,
                 kernel_params=None, alpha=1.0, fit_inverse_transform=False,
                 eigen_solver="auto", tol=0, max_iter=None, iterated_power="auto",
                 remove_zero_eig=False, random_state=None, copy_X=True, n_jobs=None,
                 verbose=0, n_landmarks=None, landmark_method="random", kernel_storage="auto"):
        self.n_components = n_components
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.alpha = alpha
        self.fit_inverse_transform = fit_inverse_transform
        self.eigen_solver = eigen_solver
        self.tol = tol
        self.max_iter = max_iter
        self.iterated_power = iterated_power
        self.remove_zero_eig = remove_zero_eig
        self.random_state = random_state
        self.copy_X = copy_X
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.n_landmarks = n_landmarks
        self.landmark_method = landmark_method
        self.kernel_storage = kernel_storage

    def fit(self, X, y=None):
        """Fit the model on X (or on a precomputed kernel matrix).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or \
                (n_samples, n_samples)
            Training samples, or the symmetric training kernel matrix when
            ``kernel="precomputed"``.
        y : ignored
            Not used; present for API consistency.

        Returns
        -------
        self
        """
        self._fit(X)
        return self

    def fit_transform(self, X, y=None, **params):
        """Fit and return the embedding of the training samples, ``V sqrt(Lambda)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or \
                (n_samples, n_samples)
            Training samples, or the symmetric training kernel matrix when
            ``kernel="precomputed"``.
        y : ignored
            Not used; present for API consistency.
        **params : dict
            Passed to ``fit``, as in scikit-learn; ``fit`` takes none, so any is a TypeError.

        Returns
        -------
        ndarray of shape (n_samples, ``n_components_``)
        """
        if params:
            raise TypeError(
                f"KernelPCA.fit() got an unexpected keyword argument {next(iter(params))!r}: "
                "fit takes only X (and an ignored y)."
            )
        self._fit(X)
        return self._training_embedding()

    def _training_embedding(self):
        return self.eigenvectors_ * np.sqrt(self.eigenvalues_).astype(self.eigenvectors_.dtype)

    def _fit(self, X):
        validate_params(self)
        if self.kernel == "precomputed" and self.n_landmarks is not None:
            raise ValueError(
                f"n_landmarks={self.n_landmarks} needs the samples, to compute their kernel "
                "against the landmarks: pass X with a named or callable kernel, or "
                "n_landmarks=None with kernel='precomputed'."
            )
        if self.fit_inverse_transform and self.kernel == "precomputed":
            raise ValueError(
                "Cannot fit_inverse_transform with a precomputed kernel. Pass the samples "
                "with a named or callable kernel, or set fit_inverse_transform=False."
            )
        sparse = scipy.sparse.issparse(X) and self.kernel != "precomputed"
        if sparse and self.fit_inverse_transform:
            raise NotImplementedError(
                "Inverse transform not implemented for sparse matrices! Pass X.toarray() "
                "to fit with fit_inverse_transform=True."
            )
        record_feature_names(self, X)
        log = StageLog(type(self).__name__, self.verbose)
        for stale in ("_centre", "X_fit_", "dual_coef_", "X_transformed_fit_", "_nystrom",
                      "landmarks_", "landmark_indices_"):
            self.__dict__.pop(stale, None)
        if self.kernel == "precomputed":
            K0 = check_precomputed_square(X, "The precomputed kernel matrix", negative_ok=True,
                                          n_jobs=self.n_jobs)
            m = K0.shape[0]
            n_components = self._n_components(m)
            check_dense_allocation((m, m), K0.dtype, what=f"The {m} x {m} centred kernel copy",
                                   alternative="Pass float32 input or fewer samples.")
            K = np.array(K0, order="C", copy=True)
            log.done("copy of the kernel matrix")
            storage = "stored"
            # unused by a precomputed kernel; set as scikit-learn sets it (1 / n_features)
            self.gamma_ = float(self.gamma) if self.gamma is not None else 1.0 / m
            self.n_features_in_ = m
        else:
            if sparse:
                X = check_sparse(X, min_samples=2, copy=self.copy_X)
            else:
                # copy_X=True (the default) copies: transform must not see later edits of X
                X = check_array(X, min_samples=2, copy=self.copy_X)
                if self.kernel in DISTANCE_KERNELS:
                    self._centre = check_distance_magnitude(X)
            m = X.shape[0]
            n_components = self._n_components(m)
            self.gamma_ = float(self.gamma) if self.gamma is not None else 1.0 / X.shape[1]
            self.n_features_in_ = X.shape[1]
            if self.n_landmarks is not None:
                self.X_fit_ = X
                fit_nystrom(self, X, n_components, check_random_state(self.random_state), log)
                log.total()
                return self
            storage = choose_storage(self, m, X.dtype, n_components)
            self.X_fit_ = X
            K = None
        if storage == "implicit":
            solved = solve_implicit(self, X, n_components, log)
        else:
            solved = solve_stored(self, X, K, n_components, log)
        values, vectors, row_means, dtype = solved
        del K, solved
        self._row_means = row_means
        self._grand_mean = float(row_means.mean())
        values, vectors = clean_spectrum(
            values, vectors, double=dtype == np.float64,
            drop_zero=self.remove_zero_eig or n_components is None)
        self.eigenvalues_ = values.astype(vectors.dtype)
        self.eigenvectors_ = vectors
        self.n_components_ = int(values.shape[0])
        if self.fit_inverse_transform:
            X_transformed = self._training_embedding()
            self.dual_coef_ = fit_preimage(self, X_transformed, X)
            self.X_transformed_fit_ = X_transformed
            log.done("pre-image regression")
        log.total()
        return self

    def _n_components(self, m):
        """``n_components`` for m samples: an int above m is cut to m, as in scikit-learn."""
        n_components = self.n_components
        if isinstance(n_components, Integral) and not isinstance(n_components, bool):
            n_components = min(int(n_components), m)
        return check_n_components(n_components, m, estimator="KernelPCA", limit="n_samples")

    def _kernel_columns(self, X, K):
        """``S -> K[:, S]`` for the training kernel: a precomputed K's rows S transposed
        (K is symmetric, and its rows are contiguous where its columns are strided),
        computed from X otherwise (K may hold only its upper triangle)."""
        if self.kernel == "precomputed":
            return lambda S: K[S].T
        return lambda S: self._kernel(X, X[S])

    def transform(self, X):
        """Project new samples: ``z_j = sum_i A_ij k_c(x_i, x)``, ``A = V Lambda^(-1/2)``.

        ``k_c`` is the kernel centred against the training kernel. Components with a zero
        eigenvalue project to 0.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_new, n_features), or (n_new, n_samples)
            of kernel values between new and training samples when
            ``kernel="precomputed"``.

        Returns
        -------
        ndarray of shape (n_new, ``n_components_``)
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
            X_valid = self._check_samples(X)
            if getattr(self, "_nystrom", None) is not None:
                return transform_nystrom(self, X_valid)
            n = X_valid.shape[0]
            check_dense_allocation((n, m), X_valid.dtype, what=f"The {n} x {m} kernel block",
                                   alternative="Transform fewer samples at a time.")
            K = self._kernel(X_valid, self.X_fit_)
        check_finite_matrix(K, "The kernel block between the new and the training samples",
                            self._nonfinite_remedy())
        with parallel_section(self.n_jobs):
            kernel_kernels.centre_kernel_rows(K, self._row_means, self._grand_mean)
        scaled = self.eigenvectors_ * inverse_sqrt(self.eigenvalues_).astype(
            self.eigenvectors_.dtype)
        return K @ scaled.astype(K.dtype)

    def _check_samples(self, X):
        """Validate the samples of ``transform`` against the fitted X."""
        if scipy.sparse.issparse(X):
            check_feature_names(self, X)
            X_valid = check_sparse(X)
            check_n_features(self, X_valid, "transform")
            return X_valid.astype(self.X_fit_.dtype, copy=False)
        X_valid = check_query(self, X, "transform")
        X_valid = X_valid.astype(self.X_fit_.dtype, copy=False)
        if getattr(self, "_centre", None) is not None:
            check_distance_magnitude(X_valid, centre=self._centre)
        return X_valid

    def inverse_transform(self, X):
        """Map embedded samples back to the input space through the learned pre-image.

        ``k(X, X_transformed_fit_) @ dual_coef_``, a kernel ridge regression fitted at
        ``fit`` (Bakir, Weston and Schoelkopf, 2004). The centred kernel holds no
        information about the mean of the features, so the mean is not restored (with
        ``kernel="linear"``, :class:`~fastdr.decomposition.PCA` does restore it).

        Parameters
        ----------
        X : array-like of shape (n_new, ``n_components_``)
            Embedded samples, such as the output of ``transform``.

        Returns
        -------
        ndarray of shape (n_new, ``n_features_in_``)

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Unless the estimator was fitted with ``fit_inverse_transform=True``.
        """
        if not self.fit_inverse_transform:
            raise compatible(NotFittedError)(
                "The fit_inverse_transform parameter was not set to True when "
                "instantiating and hence the inverse transform is not available. Set "
                "fit_inverse_transform=True and fit again."
            )
        check_is_fitted(self, "dual_coef_")
        return apply_preimage(self, X)

    def _fastdr_tags(self):
        return {"input_tags.sparse": True,
                "input_tags.pairwise": self.kernel == "precomputed",
                "transformer_tags.preserves_dtype": ["float64", "float32"]}



#: The old private name, still imported by ``fastdr.decomposition`` and its tests.
_CentredKernel = CentredKernel
