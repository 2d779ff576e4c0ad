"""Principal component analysis (Zhou, ch. 10.3).

Centre the data, eigendecompose the covariance matrix (or the Gram matrix of the centred
rows, when there are fewer samples than features), keep the top d' eigenvectors.
"""

from numbers import Integral, Real

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

from .._base import BaseEstimator, TransformerMixin
from .._eigen import check_spectrum, spectral_pairs
from .._eigen_values import fix_signs, inverse_sqrt, select_count
from .._feature_names import record_feature_names
from .._params import Interval, StrOptions, validate_params
from .._validation import (
    check_array,
    check_dense_allocation,
    check_is_fitted,
    check_n_components,
    check_query,
)
from ._centred import (
    centred_gram,
    centred_scatter,
    mean_and_total_scatter,
    orthonormal_complement,
    project_centred,
)

SVD_SOLVERS = ("auto", "covariance_eigh", "gram", "full", "randomized")
_SCATTER = "The scatter matrix of the centred data"
_REMEDY = ("The squares of X's values overflow float64: scale X first (for example with "
           "sklearn.preprocessing.StandardScaler).")


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

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"),
                         Interval(Real, 0, 1, closed="right"), None],
        "whiten": ["boolean"],
        "svd_solver": [StrOptions(SVD_SOLVERS)],
        "random_state": ["random_state"],
    }

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
        self._fit(self._validate_fit_input(X))
        return self

    def fit_transform(self, X, y=None):
        """Fit on X and return its projections (X is validated once).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (at least 2).
        y : ignored
            Not used; present for API consistency.

        Returns
        -------
        ndarray of shape (n_samples, n_components_)
        """
        X_valid = self._validate_fit_input(X)
        self._fit(X_valid)
        return self._project(X_valid)

    def _validate_fit_input(self, X):
        validate_params(self)
        record_feature_names(self, X)
        return check_array(X, min_samples=2)

    def _fit(self, X):
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
        if solver == "covariance_eigh":
            mean, values, vectors, total = self._fit_covariance(X, n_components)
        elif solver == "gram":
            mean, values, vectors, total = self._fit_gram(X, n_components)
        elif solver == "full":
            mean, values, vectors, total = self._fit_full(X, n_components)
        else:
            mean, values, vectors, total = self._fit_randomized(X, n_components)
        return self._set_fitted(mean, values, vectors, total, m, d, X.dtype)

    def _set_fitted(self, mean, values, vectors, total, m, d, dtype):
        """Fitted attributes from the centred scatter's leading eigenpairs.

        Shared with :class:`fastdr.dask.PCA`, which computes the scatter over a cluster.
        ``total`` is the scatter's trace (the total variance times ``m - 1``).
        """
        k = values.shape[0]
        components = fix_signs(np.array(vectors[:, :k], dtype=np.float64)).T
        variance = values / (m - 1)
        self.mean_ = mean.astype(dtype)
        self.components_ = np.ascontiguousarray(components, dtype=dtype)
        self.explained_variance_ = variance.astype(dtype)
        ratio = variance / (total / (m - 1)) if total > 0 else np.zeros_like(variance)
        self.explained_variance_ratio_ = ratio.astype(dtype)
        self.singular_values_ = np.sqrt(values).astype(dtype)
        self.n_components_ = int(k)
        self.n_features_in_ = int(d)
        self.n_samples_ = int(m)
        return self

    def _fit_covariance(self, X, n_components):
        mean, scatter = centred_scatter(X)
        total = float(np.trace(scatter))
        values, vectors = spectral_pairs(
            scatter, n_components, solver="auto", what=_SCATTER, psd=True, remedy=_REMEDY,
            max_components=min(X.shape), random_state=self.random_state, overwrite_a=True)
        return mean, values, vectors, total

    def _fit_gram(self, X, n_components):
        m, d = X.shape
        check_dense_allocation((m, m), np.float64, what=f"The {m} x {m} Gram matrix of PCA",
                               alternative="Use svd_solver='randomized' or 'full'.")
        mean = X.mean(axis=0, dtype=np.float64)
        gram = centred_gram(X, mean)
        total = float(np.trace(gram))
        values, left = spectral_pairs(
            gram, n_components, solver="auto", what="The Gram matrix of the centred data",
            psd=True, remedy=_REMEDY, max_components=min(m, d), random_state=self.random_state,
            overwrite_a=True)
        del gram
        # Right singular vectors v = Xc^T u / s (u is orthogonal to 1, so Xc^T u = X^T u).
        vectors = np.asarray(X.T @ left.astype(X.dtype), dtype=np.float64)
        vectors -= np.outer(mean, left.sum(axis=0))
        null = values <= 10 * max(m, d) * np.finfo(np.float64).eps * max(values.max(), 0.0)
        good = ~null
        vectors[:, good] /= np.sqrt(values[good])
        if null.any():
            vectors[:, null] = orthonormal_complement(vectors[:, good], int(null.sum()), d)
            values[null] = 0.0
        return mean, values, vectors, total

    def _fit_full(self, X, n_components):
        mean = X.mean(axis=0, dtype=np.float64)
        centred = np.subtract(X, mean, dtype=np.float64)
        _, singular, vt = scipy.linalg.svd(centred, full_matrices=False, overwrite_a=True,
                                           check_finite=False)
        with np.errstate(over="ignore"):
            values = singular**2  # inf when X's squares overflow: refused just below
        check_spectrum(values, None, values.shape[0], what="The centred data",
                       dtype=np.float64, remedy=_REMEDY)
        k = select_count(values, n_components, min(X.shape))
        return mean, values[:k], vt[:k].T, float(np.sum(values))

    def _fit_randomized(self, X, n_components):
        d = X.shape[1]
        mean, total = mean_and_total_scatter(X)
        mean_x = mean.astype(X.dtype)

        def matmat(Q):
            Q = np.asarray(Q, dtype=X.dtype).reshape(d, -1)
            W = X @ Q - mean_x @ Q
            return np.asarray(X.T @ W - np.outer(mean_x, W.sum(axis=0)), dtype=Q.dtype)

        if not np.isfinite(total):
            raise ValueError(f"{_SCATTER} has non-finite entries (inf or NaN). {_REMEDY}")
        operator = scipy.sparse.linalg.LinearOperator(
            (d, d), matvec=matmat, matmat=matmat, rmatvec=matmat, rmatmat=matmat,
            dtype=X.dtype)
        values, vectors = spectral_pairs(
            operator, n_components, solver="randomized", what=_SCATTER, psd=True,
            remedy=_REMEDY, finite_checked=True, random_state=self.random_state)
        return mean, values, vectors, total

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
        return self._project(check_query(self, X, "transform"))

    def _project(self, X):
        Z = project_centred(X, self.mean_, self.components_)
        if self.whiten:
            Z *= inverse_sqrt(self.explained_variance_).astype(Z.dtype)
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
