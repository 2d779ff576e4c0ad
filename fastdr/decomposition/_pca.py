"""Principal component analysis (Zhou, ch. 10.3), a drop-in for scikit-learn 1.9's ``PCA``.

Centre the data, eigendecompose the covariance matrix (or the Gram matrix of the centred
rows, when there are fewer samples than features), keep the top d' eigenvectors. The
solvers, scikit-learn's ``"auto"`` rule and the checks of ``n_components`` live in
:mod:`._pca_solvers`, Minka's choice of d' in :mod:`._pca_mle`, sparse input in
:mod:`._pca_sparse`.
"""

from math import log, pi
from numbers import Integral, Real

import numpy as np

from .._base import BaseEstimator
from .._eigen.values import fix_signs, n_components_for_ratio
from .._validation.arrays import (
    check_array,
    check_finite,
    check_is_fitted,
    check_query,
)
from .._validation.feature_names import record_feature_names
from .._validation.params import Interval, StrOptions, validate_params
from ._centred import column_means
from ._pca_mle import infer_dimension
from ._pca_model import LinearProjectionModel
from ._pca_solvers import (
    EXACT,
    fit_covariance,
    fit_full,
    fit_gram,
    fit_truncated,
    resolve_auto,
)
from ._pca_solvers import check_count as _check_count
from ._pca_sparse import check_sparse, check_sparse_solver, is_sparse

SVD_SOLVERS = ("auto", "full", "covariance_eigh", "arpack", "randomized", "gram")


class PCA(LinearProjectionModel, BaseEstimator):
    """Principal component analysis: the top eigenvectors of the covariance matrix.

    The same parameters, attributes, methods, errors and answers as scikit-learn 1.9's
    ``sklearn.decomposition.PCA`` (components equal, signs included: each component's
    largest-magnitude entry is positive).

    Parameters
    ----------
    n_components : int, float, "mle" or None, default=None
        An int keeps that many components (0 to ``min(n_samples, n_features)``; 1 to
        ``min(...) - 1`` with ``"arpack"``). A float in (0, 1) keeps the smallest d' whose
        cumulative explained-variance ratio is strictly greater than it (scikit-learn's rule;
        see ``t`` for the textbook's). ``"mle"``: Minka's maximum-likelihood d' (needs
        ``n_samples >= n_features``). None keeps ``min(n_samples, n_features)`` components
        (one fewer with ``"arpack"``).
    copy : bool, default=True
        False lets ``svd_solver="full"`` centre a float64 X in place (X is then
        overwritten; use ``fit_transform``). The other solvers never write to X.
    whiten : bool, default=False
        Scale the projections to unit variance (components of zero variance project to 0).
    svd_solver : {"auto", "full", "covariance_eigh", "arpack", "randomized", "gram"}, \
default="auto"
        ``"covariance_eigh"``: the d x d covariance (one BLAS product, or float64
        accumulation over row blocks when centring would cancel; never a copy of X), then
        LAPACK ``eigh``; O(m d^2 + d^3). ``"full"``: LAPACK SVD of a centred copy.
        ``"arpack"``: ``scipy.sparse.linalg.svds`` of the implicitly centred X (needs
        ``n_components < min(X.shape)``). ``"randomized"``: Halko et al.'s randomized SVD
        of the implicitly centred X; on a tall X with at most 512 features its power
        iterations run on the d x d scatter, formed once, where that costs less (the same
        answer). fastdr's extra ``"gram"``: the m x m Gram matrix of
        the centred rows; O(m^2 d + m^3).
        ``"auto"`` is scikit-learn's rule: sparse X takes ``"arpack"``; at most 1,000
        features and 10 times as many samples take ``"covariance_eigh"``; else a problem
        larger than 500 x 500 with an int ``n_components`` below 80% of ``min(X.shape)``
        takes ``"randomized"``; the rest is scikit-learn's ``"full"``, which fastdr
        computes exactly but faster through ``"covariance_eigh"`` (n_samples >=
        n_features) or ``"gram"``.
    tol : float, default=0.0
        Tolerance of the singular values for ``"arpack"`` (0: machine precision).
    iterated_power : int or "auto", default="auto"
        Power iterations of ``"randomized"``; ``"auto"``: 7 when ``n_components`` is below
        10% of ``min(X.shape)``, else 4.
    n_oversamples : int, default=10
        Extra random vectors of ``"randomized"``.
    power_iteration_normalizer : {"auto", "QR", "LU", "none"}, default="auto"
        How ``"randomized"`` renormalises between power iterations; ``"auto"``: none up to
        2 iterations, LU beyond.
    random_state : int, RandomState instance or None, default=None
        Seeds ``"arpack"``'s starting vector and ``"randomized"``'s block (the same draws as
        scikit-learn, so a seed gives its answer), and the iterative eigensolver used for a
        few components of a covariance larger than 1,000 x 1,000.
    t : float in (0, 1] or None, default=None
        fastdr's extra, keyword-only: the textbook's explained-variance threshold (Zhou,
        eq. 10.18): keep the smallest d' whose cumulative ratio is ``>= t`` (1e-12 allowed
        for round-off). Needs ``n_components=None`` and an exact solver.

    Attributes
    ----------
    components_ : ndarray of shape (``n_components_``, n_features)
        Principal axes (unit rows), each with its largest-magnitude entry positive.
    explained_variance_ : ndarray of shape (``n_components_``,)
        Eigenvalues of the covariance matrix (denominator ``n_samples - 1``).
    explained_variance_ratio_ : ndarray of shape (``n_components_``,)
        ``explained_variance_`` over the total variance.
    singular_values_ : ndarray of shape (``n_components_``,)
        Singular values of the centred data.
    mean_ : ndarray of shape (n_features,)
    n_components_ : int
    n_samples_ : int
    noise_variance_ : float
        Probabilistic PCA's noise variance (Tipping and Bishop, 1999): the mean of the
        remaining ``min(n_samples, n_features) - n_components_`` eigenvalues (all
        ``n_features - n_components_`` with ``"covariance_eigh"``), 0 when none remain.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Defined only when X has string column names.

    Notes
    -----
    Sparse X (CSR or CSC; other formats are converted to CSR) is never densified:
    ``"arpack"`` applies ``X - 1 mean^T`` as an operator, ``"covariance_eigh"`` forms
    ``X^T X - m mean mean^T``. Complexity with the default solver: time O(m d^2 + d^3) for
    m >= 10 d, memory O(d^2) beyond X.
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 0, None, closed="left"),
                         Interval(Real, 0, 1, closed="neither"), StrOptions({"mle"}), None],
        "copy": ["boolean"],
        "whiten": ["boolean"],
        "svd_solver": [StrOptions(SVD_SOLVERS)],
        "tol": [Interval(Real, 0, None, closed="left")],
        "iterated_power": [StrOptions({"auto"}), Interval(Integral, 0, None, closed="left")],
        "n_oversamples": [Interval(Integral, 1, None, closed="left")],
        "power_iteration_normalizer": [StrOptions({"auto", "QR", "LU", "none"})],
        "random_state": ["random_state"],
        "t": [Interval(Real, 0, 1, closed="right"), None],
    }

    def __init__(self, n_components=None, *, copy=True, whiten=False, svd_solver="auto",
                 tol=0.0, iterated_power="auto", n_oversamples=10,
                 power_iteration_normalizer="auto", random_state=None, t=None):
        self.n_components = n_components
        self.copy = copy
        self.whiten = whiten
        self.svd_solver = svd_solver
        self.tol = tol
        self.iterated_power = iterated_power
        self.n_oversamples = n_oversamples
        self.power_iteration_normalizer = power_iteration_normalizer
        self.random_state = random_state
        self.t = t

    def _fastdr_tags(self):
        return {"transformer_tags.preserves_dtype": ["float64", "float32"],
                "input_tags.sparse": self.svd_solver in ("auto", "arpack", "covariance_eigh")}

    def fit(self, X, y=None):
        """Fit the principal axes on X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training samples (at least 2).
        y : ignored
            Not used; present for API consistency.

        Returns
        -------
        self
        """
        self._fit(X)
        return self

    def fit_transform(self, X, y=None):
        """Fit on X and return its projections (X is validated once).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training samples (at least 2).
        y : ignored
            Not used; present for API consistency.

        Returns
        -------
        ndarray of shape (n_samples, ``n_components_``)
        """
        X_valid, Z = self._fit(X)
        if Z is not None:  # U S of the SVD, as scikit-learn (X may be centred in place)
            return self._whiten(Z)
        return self._project(X_valid)

    def _validate_fit_input(self, X):
        validate_params(self)
        if self.t is not None and self.n_components is not None:
            raise ValueError(
                f"t={self.t!r} and n_components={self.n_components!r} both choose the number "
                "of components. Pass only one of them (n_components=None with t)."
            )
        record_feature_names(self, X)
        if is_sparse(X):
            check_sparse_solver(self.svd_solver)
            return check_sparse(X, min_samples=2), None
        X = check_array(X, min_samples=2, allow_nonfinite=True)
        if X.dtype != np.float64:
            check_finite(X, "X")
            return X, None
        # every route needs the column means, and their sums see every entry: a NaN or inf
        # makes its column's mean non-finite, so the separate isfinite pass over X (a
        # noticeable share of a small fit) runs only then, or where finite values overflow
        with np.errstate(invalid="ignore", over="ignore"):  # refused just below
            mean = column_means(X)
        if not np.isfinite(mean).all():
            check_finite(X, "X")
        return X, mean

    def _fit(self, X):
        X, mean = self._validate_fit_input(X)
        m, d = X.shape
        sparse = is_sparse(X)
        # t is a fraction of the variance whatever its type: t=1 keeps every component
        want = self.n_components if self.t is None else float(self.t)
        solver = self.svd_solver
        if solver == "auto":
            solver = resolve_auto(want, X.shape, sparse)
        if self.n_components is None and self.t is None:
            want = min(m, d) - 1 if solver == "arpack" else min(m, d)
        if self.t is not None and solver not in EXACT:
            raise ValueError(
                f"t={self.t!r} needs the whole spectrum, which svd_solver={solver!r} does not "
                "compute. Pass svd_solver='full', 'covariance_eigh' or 'auto'."
            )
        _check_count(want if self.t is None else 0.5, solver, X.shape)
        self._fit_svd_solver = solver
        k = want if isinstance(want, Integral) else None  # None: the whole spectrum
        if solver in ("arpack", "randomized"):
            route = fit_truncated(X, k, solver, self, mean)
        elif solver == "covariance_eigh" or (self.svd_solver == "auto" and m >= d):
            route = fit_covariance(X, k, mean)
        elif solver == "gram" or self.svd_solver == "auto":
            route = fit_gram(X, k, mean)
        else:
            in_place = not self.copy and X.dtype == np.float64 and X.flags.writeable
            route = fit_full(X, in_place, mean)
        fitted_from_spectrum(self, route, want, (m, d), X.dtype)
        if route.scores is None:
            return X, None
        # U S of the SVD, its columns flipped as the components' signs were
        kept = self.n_components_
        signs = np.sign(np.sum(route.vectors[:, :kept] * self.components_.T, axis=0))
        Z = route.scores[:, :kept] * signs
        return X, np.ascontiguousarray(Z, dtype=self.components_.dtype)

    def score_samples(self, X):
        """Log-likelihood of each sample under probabilistic PCA (Tipping and Bishop, 1999).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self, "components_")
        X = check_query(self, X, "score_samples")
        resid = X - self.mean_
        precision = self.get_precision()
        log_like = -0.5 * np.sum(resid * (resid @ precision), axis=1)
        sign, logdet = np.linalg.slogdet(precision)
        logdet = logdet if sign > 0 else -np.inf
        log_like -= 0.5 * (X.shape[1] * log(2.0 * pi) - logdet)
        return log_like

    def score(self, X, y=None):
        """Mean log-likelihood of the samples under probabilistic PCA.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored
            Not used; present for API consistency.

        Returns
        -------
        float
        """
        return float(np.mean(self.score_samples(X)))


def fitted_from_spectrum(estimator, route, n_components, shape, dtype):
    """Set a PCA's fitted attributes from the centred scatter's leading eigenpairs.

    The one implementation behind :class:`PCA` (every solver) and :class:`fastdr.dask.PCA`,
    which computes the scatter over a cluster. d' is ``n_components`` when it is an int,
    else it is chosen from the whole spectrum: the smallest count whose cumulative
    explained-variance ratio exceeds a float (scikit-learn's rule), Minka's ``"mle"``, or
    the estimator's ``t`` (the textbook's rule). Each component's largest-magnitude entry is
    made positive. O(d d').

    Parameters
    ----------
    estimator : PCA
        Receives the fitted attributes; its ``t`` is read.
    route : Route
        A solver's result (:mod:`._pca_solvers`): the mean, the scatter's top eigenvalues
        (descending; the whole spectrum when there are ``route.n_spectrum`` of them) with
        their eigenvectors as columns, the scatter's trace, and the length of the spectrum
        that the noise variance averages over.
    n_components : int, float or "mle"
        The count asked for (already checked), or the rule that chooses it.
    shape : tuple of int
        ``(n_samples, n_features)`` of the training data.
    dtype : numpy dtype
        The training data's dtype, that of the fitted arrays.

    Returns
    -------
    estimator
    """
    m, d = shape
    values = route.values
    k = _component_count(values, route.total, n_components, m, estimator.t)
    components = fix_signs(np.array(route.vectors[:, :k], dtype=np.float64)).T
    variance = values[:k] / (m - 1)
    total = route.total
    estimator.mean_ = route.mean.astype(dtype)
    estimator.components_ = np.ascontiguousarray(components, dtype=dtype)
    estimator.explained_variance_ = variance.astype(dtype)
    ratio = variance / (total / (m - 1)) if total > 0 else np.zeros_like(variance)
    estimator.explained_variance_ratio_ = ratio.astype(dtype)
    estimator.singular_values_ = np.sqrt(values[:k]).astype(dtype)
    if k >= min(m, d):
        noise = 0.0
    elif values.shape[0] == route.n_spectrum:  # the whole spectrum: the mean of the rest
        noise = float(np.mean(values[k:])) / (m - 1)
    else:
        noise = max(total - float(np.sum(values[:k])), 0.0) / (route.n_spectrum - k) / (m - 1)
    estimator.noise_variance_ = np.asarray(noise, dtype=dtype)[()]
    estimator.n_components_ = int(k)
    estimator.n_features_in_ = int(d)
    estimator.n_samples_ = int(m)
    return estimator


def _component_count(values, total, want, m, t):
    """d': as asked, or chosen from the whole spectrum (``t``, a float or "mle")."""
    if t is not None:
        return n_components_for_ratio(values, float(t))
    if isinstance(want, Integral):
        return int(want)
    if want == "mle":
        return infer_dimension(values / (m - 1), m)
    ratios = np.cumsum(values / total) if total > 0 else np.ones_like(values)
    return min(int(np.searchsorted(ratios, want, side="right")) + 1, values.shape[0])
