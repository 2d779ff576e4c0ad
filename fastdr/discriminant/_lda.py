"""Linear discriminant analysis: scikit-learn's three solvers ("svd", "lsqr", "eigen").

Textbook (Zhou, ch. 3.4), with class priors ``p_k`` as weights:

* ``S_w = sum_k p_k / n_k sum_{y_i = k} (x_i - mu_k)(x_i - mu_k)^T`` (the within-class
  scatter; with the empirical priors it is the textbook S_w divided by m),
* ``S_b = sum_k p_k (mu_k - mu)(mu_k - mu)^T`` with ``mu = sum_k p_k mu_k``,
* the projection ``W`` holds the top eigenvectors of ``S_b w = lambda S_w w``, normalised so
  that ``W^T S_w W = I``; at most ``min(n_classes - 1, n_features)`` are discriminant.

As a classifier the model is Gaussian with the shared covariance ``S_w``:
``decision_k(x) = x^T S_w^-1 mu_k - 1/2 mu_k^T S_w^-1 mu_k + log p_k``.

The solvers (:mod:`fastdr.discriminant._solvers`) follow scikit-learn 1.9 exactly: ``"svd"`` whitens
the within-class scatter by an SVD of the centred data (no covariance formed); ``"lsqr"``
solves the classifier by least squares; ``"eigen"`` solves the generalized eigenproblem with
scikit-learn's ``S_b = S_t - S_w`` (the textbook one when priors and shrinkage are unset).
"""

from numbers import Integral, Real

import numpy as np
import scipy.linalg

from .._base import BaseEstimator, ClassifierMixin, TransformerMixin
from .._eigen import spectral_pairs
from .._eigen.values import select_count
from .._kernels.learners import class_stats
from .._runtime.threads import parallel_section
from .._validation.arrays import check_classification_targets, check_X_y
from .._validation.feature_names import record_feature_names
from .._validation.params import (
    N_JOBS,
    HasMethods,
    Interval,
    StrOptions,
    check_n_components,
    validate_params,
)
from ._checks import check_class_counts, check_priors, check_within_regular
from ._class_scatter import (
    centred_fourth_moment,
    class_scatter,
    class_scatter_pair,
    ledoit_wolf_within,
    shrink_to_scaled_identity,
    standardising_scales,
)
from ._scores import LinearScoresMixin
from ._solvers import (
    estimated_covariance,
    estimator_within,
    gaussian_scores,
    least_squares_solve,
    svd_solution,
    total_minus_within,
)

#: Fitted attributes that only some solvers set (removed before each fit).
_SOLVER_ATTRIBUTES = ("covariance_", "scalings_", "explained_variance_ratio_")


class LinearDiscriminantAnalysis(LinearScoresMixin, ClassifierMixin, TransformerMixin,
                                 BaseEstimator):
    """Linear discriminant analysis: a classifier and a supervised projection.

    A drop-in for scikit-learn's estimator of the same name (same parameters, defaults,
    solvers, attributes and errors).

    Parameters
    ----------
    solver : {"svd", "lsqr", "eigen"}, default="svd"
        ``"svd"``: the within-class scatter is whitened by the SVD of the class-centred,
        standardised data (reduced to its R factor by a blocked QR; the covariance is never
        formed), then the class centroids by a second SVD. No shrinkage. ``"lsqr"``: the
        classifier ``S_w^-1 mu_k`` by least squares (minimum norm when ``S_w`` is
        singular); no ``transform``. ``"eigen"``: the generalized symmetric eigenproblem
        ``S_b w = lambda S_w w`` (LAPACK ``sygvd``).
    shrinkage : None, "auto" or float in [0, 1], default=None
        Regularises ``S_w`` (``"lsqr"`` and ``"eigen"`` only). A float ``s`` gives
        ``(1 - s) S_w + s trace(S_w)/d I``. ``"auto"`` applies the Ledoit-Wolf estimate to
        each class's standardised covariance before weighting by the priors (as
        scikit-learn does; every class then needs at least 2 samples). With ``"eigen"``,
        ``S_b = S_t - S_w`` with the total covariance ``S_t`` shrunk the same way, as
        scikit-learn's.
    priors : array-like of shape (n_classes,) or None, default=None
        Class priors (in the order of ``classes_``); None uses the class frequencies.
        Priors that do not sum to 1 are rescaled, with a warning.
    n_components : int, float or None, default=None
        Projection size for ``transform``: an int up to ``min(n_classes - 1, n_features)``
        (asking for more is an error), a float ``t`` in (0, 1] for the smallest d' whose
        cumulative ``explained_variance_ratio_`` is ``>= t`` (a fastdr extension), or None
        for the maximum.
    store_covariance : bool, default=False
        With ``"svd"``, also compute ``covariance_`` (the other solvers always do).
    tol : float, default=1e-4
        ``"svd"``: singular values of the standardised within-class data at or below
        ``tol`` are dropped (scikit-learn's rank threshold), and between-class singular
        values at or below ``tol`` times the largest. ``"eigen"``: singularity threshold;
        ``S_w`` counts as singular (and ``fit`` raises, recommending shrinkage) when the
        ratio of the smallest to the largest eigenvalue of its correlation form
        ``D^-1/2 S_w D^-1/2`` (``D = diag(S_w)``) is below ``tol**2``. Not used by
        ``"lsqr"``.
    covariance_estimator : object with ``fit`` or None, default=None
        ``"lsqr"`` and ``"eigen"`` only: an estimator (such as
        ``sklearn.covariance.OAS()``) fitted on each class's rows in turn (and, for
        ``"eigen"``, on all rows for ``S_t``), whose ``covariance_`` replaces the empirical
        class covariance. Excludes ``shrinkage``.
    n_jobs : int or None, default=None
        Threads for the per-class sums and the centring of row blocks (the results do not
        depend on it). None means the process default.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    means_ : ndarray of shape (n_classes, n_features)
    priors_ : ndarray of shape (n_classes,)
    xbar_ : ndarray of shape (n_features,)
        The prior-weighted mean ``sum_k p_k mu_k`` (every solver).
    covariance_ : ndarray of shape (n_features, n_features)
        The (shrunk) within-class covariance ``S_w``. With ``"svd"`` only when
        ``store_covariance=True``.
    scalings_ : ndarray of shape (n_features, rank)
        ``"eigen"``: eigenvectors of ``S_b w = lambda S_w w`` by decreasing eigenvalue,
        ``W^T S_w W = I``, each with its largest-magnitude entry positive (all
        ``n_features`` of them). ``"svd"``: the whitened directions by decreasing
        between-class variance (rank columns). Not set by ``"lsqr"``.
    explained_variance_ratio_ : ndarray of shape (``n_components_``,)
        Not set by ``"lsqr"``.
    coef_ : ndarray of shape (n_classes, n_features) or (1, n_features)
    intercept_ : ndarray of shape (n_classes,) or (1,)
    n_components_ : int
        Columns of ``transform``.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Set when X has string column names.

    Notes
    -----
    Time O(m d^2 + d^3), memory O(d^2) beyond X: class means in one pass (numba), then one
    pass over blocks of rows (BLAS, or LAPACK QR for ``"svd"``), never a copy of X (except
    per class with ``covariance_estimator``). ``transform`` is ``X @ scalings_[:, :d']``
    (``"eigen"``) or ``(X - xbar_) @ scalings_[:, :d']`` (``"svd"``), as scikit-learn's.
    """

    _parameter_constraints = {
        "solver": [StrOptions(("svd", "lsqr", "eigen"))],
        "shrinkage": [StrOptions(("auto",)), Interval(Real, 0, 1, closed="both"), None],
        "priors": ["array-like", None],
        "n_components": [Interval(Integral, 1, None, closed="left"),
                         Interval(Real, 0, 1, closed="right"), None],
        "store_covariance": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "covariance_estimator": [HasMethods(("fit",)), None],
        "n_jobs": N_JOBS,
    }

    def __init__(self, solver="svd", shrinkage=None, priors=None, n_components=None,
                 store_covariance=False, tol=1e-4, covariance_estimator=None, *, n_jobs=None):
        self.solver = solver
        self.shrinkage = shrinkage
        self.priors = priors
        self.n_components = n_components
        self.store_covariance = store_covariance
        self.tol = tol
        self.covariance_estimator = covariance_estimator
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Fit the classifier (and, for ``"svd"`` and ``"eigen"``, the projection).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        validate_params(self)
        record_feature_names(self, X)
        shrinkage = self.shrinkage
        if shrinkage is not None and not isinstance(shrinkage, str):
            shrinkage = float(shrinkage)
        X, y = check_X_y(X, y, min_samples=2)
        m, d = X.shape
        classes, codes = check_classification_targets(y, min_classes=1)
        n_classes = len(classes)
        counts = np.bincount(codes, minlength=n_classes)
        self._check_solver_options(shrinkage)
        check_class_counts(classes, counts, m, shrinkage)
        priors = check_priors(self.priors, counts, m)
        max_components = min(n_classes - 1, d)
        n_components = self._check_n_components(max_components)
        for name in _SOLVER_ATTRIBUTES:
            self.__dict__.pop(name, None)

        with parallel_section(self.n_jobs):
            sums = class_stats.class_sums(X, codes, n_classes)
        means = sums / counts[:, None]
        if self.solver == "svd":
            return self._fit_svd(X, codes, counts, classes, means, priors, n_components,
                                 max_components)
        covariance, between = self._covariances(X, codes, counts, means, priors, shrinkage)
        if self.solver == "lsqr":
            scores = gaussian_scores(means, priors, least_squares_solve(covariance))
            self._set_classifier(classes, means, priors, scores, d, X.dtype, "lsqr")
            self.covariance_ = covariance
            self.n_components_ = int(max_components if n_components is None
                                     else min(max_components, np.ceil(n_components)))
            return self
        return fit_from_statistics(self, classes, means, priors, covariance, n_components,
                                   max_components, X.dtype, between=between)

    def _check_solver_options(self, shrinkage):
        """scikit-learn's refusals: svd with shrinkage or an estimator, both together."""
        if self.solver == "svd":
            if shrinkage is not None:
                raise NotImplementedError(
                    f"shrinkage not supported with 'svd' solver (got shrinkage={shrinkage!r}). "
                    "Use solver='lsqr' or solver='eigen' to shrink the covariance."
                )
            if self.covariance_estimator is not None:
                raise ValueError(
                    "covariance estimator is not supported with svd solver. Try another "
                    "solver: solver='lsqr' or solver='eigen'."
                )
        elif self.covariance_estimator is not None and shrinkage not in (None, 0.0):
            raise ValueError(
                "covariance_estimator and shrinkage parameters are not None. Only one of the "
                f"two can be set (got shrinkage={shrinkage!r}). Set shrinkage=None, or "
                "covariance_estimator=None."
            )

    def _check_n_components(self, max_components):
        n = self.n_components
        if isinstance(n, Integral) and not isinstance(n, bool) and n > max_components:
            raise ValueError(
                f"n_components cannot be larger than min(n_features, n_classes - 1) = "
                f"{max_components}; got n_components={n}. Pass n_components <= "
                f"{max_components}, or None for the maximum."
            )
        return check_n_components(n, max_components, estimator="LinearDiscriminantAnalysis",
                                  limit="min(n_classes - 1, n_features)")

    def _covariances(self, X, codes, counts, means, priors, shrinkage):
        """``S_w`` for ``"lsqr"``/``"eigen"``, and the eigen solver's ``S_b`` (or None for the
        textbook one, which is scikit-learn's when priors and shrinkage are unset)."""
        eigen = self.solver == "eigen"
        if self.covariance_estimator is not None:
            within = estimator_within(self.covariance_estimator, X, codes, priors)
            if not eigen:
                return within, None
            return within, estimated_covariance(self.covariance_estimator, X) - within
        if shrinkage == "auto":
            within, empirical = self._ledoit_wolf_within(X, codes, counts, means, priors)
            if not eigen:
                return within, None
            return within, total_minus_within(
                means, counts, within, "auto", empirical=empirical,
                fourth_moment=lambda centre, inv_scale: centred_fourth_moment(
                    X, centre, inv_scale, n_jobs=self.n_jobs))
        if self.priors is None or not eigen:
            within, _ = class_scatter(X, codes, counts, means, priors / counts,
                                      n_jobs=self.n_jobs)
            raw, empirical = None, None
        else:  # both weightings of the class scatters: the priors' and the frequencies'
            raw, empirical = class_scatter_pair(X, codes, counts, means, priors / counts,
                                                np.full(len(counts), 1.0 / counts.sum()),
                                                n_jobs=self.n_jobs)
            within = raw.copy()
        if shrinkage is not None:
            shrink_to_scaled_identity(within, shrinkage)
        if not eigen or (raw is None and shrinkage is None):
            return within, None
        return within, total_minus_within(means, counts, within, shrinkage, raw_within=raw,
                                          empirical=empirical)

    def _ledoit_wolf_within(self, X, codes, counts, means, priors):
        """Ledoit-Wolf on each class's standardised data, as scikit-learn; also returns
        ``E = sum_k (n_k/m) C_k`` (unshrunk, empirical weights)."""
        with parallel_section(self.n_jobs):
            sumsq = class_stats.class_centred_sumsq(X, codes, means)
        scales = standardising_scales(sumsq / counts[:, None], counts, means)
        _, per_class = class_scatter(X, codes, counts, means, None, inv_scales=1.0 / scales,
                                     n_jobs=self.n_jobs)
        within = ledoit_wolf_within(per_class, counts, scales, priors)
        empirical = sum(np.outer(scales[k], scales[k]) * S
                        for k, (S, _) in enumerate(per_class)) / counts.sum()
        return within, 0.5 * (empirical + empirical.T)

    def _fit_svd(self, X, codes, counts, classes, means, priors, n_components, max_components):
        fitted = svd_solution(X, codes, counts, means, priors, self.tol, n_jobs=self.n_jobs)
        ratios = fitted["ratios"]
        k = select_count(ratios, max_components if n_components is None else n_components,
                         max_components)
        if self.store_covariance:
            self.covariance_, _ = class_scatter(X, codes, counts, means, priors / counts,
                                                n_jobs=self.n_jobs)
        scores = {"coef": fitted["coef"], "intercept": fitted["intercept"],
                  "score_coef": fitted["coef"], "score_intercept": fitted["intercept"],
                  "common": None}
        self._set_classifier(classes, means, priors, scores, X.shape[1], X.dtype, "svd")
        self.xbar_ = fitted["xbar"]
        self.scalings_ = fitted["scalings"]
        self.explained_variance_ratio_ = ratios[:k]
        self.n_components_ = int(min(k, self.scalings_.shape[1]))
        return self

    def _set_classifier(self, classes, means, priors, scores, d, dtype, solver):
        """Set the classifier's attributes from :func:`gaussian_scores`-style pieces."""
        coef, intercept = scores["coef"], scores["intercept"]
        score_coef, score_intercept = scores["score_coef"], scores["score_intercept"]
        if len(classes) == 2:
            coef = score_coef[1:2] - score_coef[0:1]
            intercept = score_intercept[1:2] - score_intercept[0:1]
            self._score_coef, self._score_intercept, self._common = coef, intercept, None
        else:
            self._score_coef, self._score_intercept = score_coef, score_intercept
            self._common = scores["common"]
        self.classes_ = classes
        self.means_ = means
        self.priors_ = priors
        self.xbar_ = priors @ means
        # in X's float dtype, as scikit-learn's (the scores keep float64 internally)
        self.coef_ = np.asarray(coef).astype(dtype, copy=False)
        self.intercept_ = np.asarray(intercept).astype(dtype, copy=False)
        self.n_features_in_ = d
        self._dtype = dtype
        self._fit_solver = solver

    def transform(self, X):
        """Project X on the discriminant directions.

        ``X @ scalings_[:, :n_components_]`` (``"eigen"``) or ``(X - xbar_) @
        scalings_[:, :n_components_]`` (``"svd"``), as scikit-learn's.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples to project, with the features seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples, ``n_components_``)

        Raises
        ------
        NotImplementedError
            With ``solver="lsqr"``, which fits no projection.
        """
        if self.solver == "lsqr":
            raise NotImplementedError(
                "transform not implemented for 'lsqr' solver (use 'svd' or 'eigen'): the "
                "least-squares solver fits the classifier only. Fit with solver='svd' or "
                "solver='eigen' to project."
            )
        X = self._validated(X, "transform")
        scalings = self.scalings_[:, : self.n_components_].astype(X.dtype)
        if getattr(self, "_fit_solver", "eigen") == "svd":  # models pickled before svd: eigen
            return (X - self.xbar_.astype(X.dtype)) @ scalings
        return X @ scalings


def fit_from_statistics(estimator, classes, means, priors, covariance, n_components,
                        max_components, dtype, *, between=None):
    """The eigen solver after the class statistics: the eigenproblem and the classifier.

    The one implementation behind :class:`LinearDiscriminantAnalysis` (``solver="eigen"``)
    and :class:`fastdr.dask.LinearDiscriminantAnalysis`, which computes the same statistics
    over a cluster.

    Parameters
    ----------
    estimator : LinearDiscriminantAnalysis
        Receives the fitted attributes; its ``tol`` is the singularity threshold.
    classes : ndarray of shape (n_classes,)
    means : ndarray of shape (n_classes, n_features), float64
        The class means.
    priors : ndarray of shape (n_classes,), float64
        As returned by :func:`check_priors`.
    covariance : ndarray of shape (n_features, n_features), float64
        The (shrunk) within-class covariance ``S_w``.
    n_components : int, float or None
        Checked ``n_components`` (None: ``max_components``).
    max_components : int
        ``min(n_classes - 1, n_features)``.
    dtype : numpy dtype
        The dtype of the training data (that of ``transform``'s output).
    between : ndarray of shape (n_features, n_features) or None
        ``S_b``; None means the textbook one with ``priors``.

    Returns
    -------
    estimator
        Fitted.

    Raises
    ------
    numpy.linalg.LinAlgError
        When ``S_w`` is singular (to working precision) or not positive definite.
    """
    centre = priors @ means
    offsets = (means - centre) * np.sqrt(priors)[:, None]
    textbook = offsets.T @ offsets
    check_within_regular(covariance, np.diag(textbook), estimator.tol)
    try:
        evals, evecs = spectral_pairs(
            textbook if between is None else between, None, solver="dense",
            metric=covariance, what="The between-class scatter S_b")
    except np.linalg.LinAlgError as exc:
        raise np.linalg.LinAlgError(
            f"The within-class scatter S_w is not positive definite ({exc}). Use "
            "shrinkage='auto' or a float to regularise it, or solver='svd'."
        ) from exc
    total = evals.sum()
    # sorted as scikit-learn sorts them (S_t - S_w may have negative eigenvalues)
    ratios = np.sort(evals / total)[::-1] if total != 0 else np.zeros_like(evals)
    k = select_count(evals, max_components if n_components is None else n_components,
                     max_components)
    # solved in the correlation form D^-1/2 S_w D^-1/2 (D = diag S_w): features in very
    # different units (one scaled by 1e12) do not make the solve ill-conditioned
    inv = 1.0 / np.sqrt(np.diag(covariance))
    corr = covariance * inv[:, None] * inv[None, :]

    def solve(rhs):
        return inv[:, None] * scipy.linalg.solve(corr, inv[:, None] * rhs, assume_a="pos",
                                                 check_finite=False)

    scores = gaussian_scores(means, priors, solve)
    estimator._set_classifier(classes, means, priors, scores, means.shape[1], dtype, "eigen")
    estimator.covariance_ = covariance
    estimator.scalings_ = evecs
    estimator.explained_variance_ratio_ = ratios[:k]
    estimator.n_components_ = int(k)
    return estimator

