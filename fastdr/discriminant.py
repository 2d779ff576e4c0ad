"""Linear discriminant analysis: the generalized eigenproblem ``S_b w = lambda S_w w``.

Textbook (Zhou, ch. 3.4), with class priors ``p_k`` as weights:

* ``S_w = sum_k p_k / n_k sum_{y_i = k} (x_i - mu_k)(x_i - mu_k)^T`` (the within-class
  scatter; with the empirical priors it is the textbook S_w divided by m),
* ``S_b = sum_k p_k (mu_k - mu)(mu_k - mu)^T`` with ``mu = sum_k p_k mu_k``,
* the projection ``W`` holds the top eigenvectors of ``S_b w = lambda S_w w``, normalised so
  that ``W^T S_w W = I``; at most ``min(n_classes - 1, n_features)`` are discriminant.

As a classifier the model is Gaussian with the shared covariance ``S_w``:
``decision_k(x) = x^T S_w^-1 mu_k - 1/2 mu_k^T S_w^-1 mu_k + log p_k``.
"""

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.linalg
import scipy.special

from ._base import BaseEstimator, ClassifierMixin, TransformerMixin
from ._class_scatter import (
    class_scatter,
    ledoit_wolf_within,
    shrink_to_scaled_identity,
    standardising_scales,
)
from ._eigen import spectral_pairs
from ._eigen_values import select_count
from ._feature_names import record_feature_names
from ._kernels import class_stats
from ._parallel import parallel_section
from ._params import N_JOBS, Interval, StrOptions, validate_params
from ._validation import (
    check_array,
    check_classification_targets,
    check_is_fitted,
    check_n_components,
    check_query,
    check_X_y,
)

#: A feature whose within-class variance is at most this share of its total variance is flat.
_FLAT_RATIO = 1e-14


class LinearDiscriminantAnalysis(ClassifierMixin, TransformerMixin, BaseEstimator):
    """Linear discriminant analysis: a classifier and a supervised projection.

    Parameters
    ----------
    n_components : int, float or None, default=None
        Projection size for ``transform``: an int up to ``min(n_classes - 1, n_features)``
        (asking for more is an error), a float ``t`` in (0, 1] for the smallest d' whose
        cumulative ``explained_variance_ratio_`` is ``>= t``, or None for the maximum.
    solver : {"eigen"}, default="eigen"
        The generalized symmetric eigenproblem ``S_b w = lambda S_w w`` (LAPACK ``sygvd``).
    shrinkage : None, "auto" or float in [0, 1], default=None
        Regularises ``S_w``. A float ``s`` gives ``(1 - s) S_w + s trace(S_w)/d I``.
        ``"auto"`` applies the Ledoit-Wolf estimate to each class's standardised covariance
        before weighting by the priors (as scikit-learn does; every class then needs at
        least 2 samples). Shrinkage applies to ``S_w`` only; ``S_b`` stays the textbook one.
    priors : array-like of shape (n_classes,) or None, default=None
        Class priors (in the order of ``classes_``); None uses the class frequencies.
        Priors that do not sum to 1 are rescaled, with a warning.
    tol : float, default=1e-4
        Singularity threshold: ``S_w`` counts as singular (and ``fit`` raises, recommending
        shrinkage) when the ratio of the smallest to the largest eigenvalue of its
        correlation form ``D^-1/2 S_w D^-1/2`` (``D = diag(S_w)``) is below ``tol**2``, that
        is when the within-class-centred data have a relative singular value below ``tol``.
    n_jobs : int or None, default=None
        Threads for the per-class sums and the centring of row blocks (the results do not
        depend on it). None means the process default.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    means_ : ndarray of shape (n_classes, n_features)
    priors_ : ndarray of shape (n_classes,)
    covariance_ : ndarray of shape (n_features, n_features)
        The (shrunk) within-class covariance ``S_w``.
    scalings_ : ndarray of shape (n_features, n_features)
        Eigenvectors of ``S_b w = lambda S_w w`` by decreasing eigenvalue, ``W^T S_w W = I``,
        each with its largest-magnitude entry positive.
    explained_variance_ratio_ : ndarray of shape (n_components_,)
    coef_ : ndarray of shape (n_classes, n_features) or (1, n_features)
    intercept_ : ndarray of shape (n_classes,) or (1,)
    n_components_ : int
    n_features_in_ : int

    Notes
    -----
    Time O(m d^2 + d^3), memory O(d^2) beyond X: class means in one pass (numba), the
    within-class scatter in a second pass over blocks of rows (BLAS), never a copy of X.
    ``transform`` is ``X @ scalings_[:, :n_components_]``, as scikit-learn's eigen solver.
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"),
                         Interval(Real, 0, 1, closed="right"), None],
        "solver": [StrOptions(("eigen",))],
        "shrinkage": [StrOptions(("auto",)), Interval(Real, 0, 1, closed="both"), None],
        "priors": ["array-like", None],
        "tol": [Interval(Real, 0, None, closed="left")],
        "n_jobs": N_JOBS,
    }

    def __init__(self, *, n_components=None, solver="eigen", shrinkage=None, priors=None,
                 tol=1e-4, n_jobs=None):
        self.n_components = n_components
        self.solver = solver
        self.shrinkage = shrinkage
        self.priors = priors
        self.tol = tol
        self.n_jobs = n_jobs

    def fit(self, X, y):
        """Fit the discriminant directions and the classifier.

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
        self._check_counts(classes, counts, m, shrinkage)
        priors = self._check_priors(counts, m)
        max_components = min(n_classes - 1, d)
        n_components = check_n_components(
            self.n_components, max_components, estimator="LinearDiscriminantAnalysis",
            limit="min(n_classes - 1, n_features)")

        with parallel_section(self.n_jobs):
            sums = class_stats.class_sums(X, codes, n_classes)
        means = sums / counts[:, None]
        covariance = self._within_scatter(X, codes, counts, means, priors, shrinkage)
        return self._fit_from_statistics(classes, means, priors, covariance, n_components,
                                         max_components, X.dtype)

    def _check_counts(self, classes, counts, m, shrinkage):
        """Refuse one class, too few samples, and single-sample classes under Ledoit-Wolf."""
        n_classes = len(classes)
        if n_classes < 2:
            raise ValueError(
                f"LinearDiscriminantAnalysis needs at least 2 classes; y has a single class "
                f"({classes[0]!r}). Pass samples of two or more classes."
            )
        if m <= n_classes:
            raise ValueError(
                f"LinearDiscriminantAnalysis needs more samples than classes to estimate the "
                f"within-class scatter; got {m} samples for {n_classes} classes. Pass more "
                "samples."
            )
        if shrinkage == "auto" and counts.min() < 2:
            lone = classes[int(np.argmin(counts))]
            raise ValueError(
                f"Class {lone!r} has 1 sample, but shrinkage='auto' (Ledoit-Wolf) estimates "
                "each class's covariance and needs at least 2 samples per class. Use "
                "shrinkage=None or a float, or pass more samples of that class."
            )

    def _fit_from_statistics(self, classes, means, priors, covariance, n_components,
                             max_components, dtype):
        """Everything after the class statistics: the eigenproblem and the classifier.

        Shared with :class:`fastdr.dask.LinearDiscriminantAnalysis`, which computes the
        same statistics over a cluster.
        """
        n_classes, d = means.shape
        centre = priors @ means
        offsets = (means - centre) * np.sqrt(priors)[:, None]
        between = offsets.T @ offsets
        self._check_singular(covariance, np.diag(between))
        try:
            evals, evecs = spectral_pairs(
                between, None, solver="dense", metric=covariance,
                what="The between-class scatter S_b")
        except np.linalg.LinAlgError as exc:
            raise ValueError(
                f"The within-class scatter S_w is not positive definite ({exc}). Use "
                "shrinkage='auto' or a float to regularise it."
            ) from exc
        total = evals.sum()
        ratios = evals / total if total > 0 else np.zeros_like(evals)
        k = select_count(evals, max_components if n_components is None else n_components,
                         max_components)
        # The Gaussian scores split into a class-dependent part, computed in coordinates
        # centred on ``centre`` (x' = x - centre, mu_k' = mu_k - centre), and a part common
        # to all classes: decision_k(x) = [x'^T S^-1 mu_k' - mu_k'^T S^-1 mu_k' / 2 + log p_k]
        # + [x'^T S^-1 centre + centre^T S^-1 centre / 2]. With X far from the origin (1e8)
        # the uncentred terms mu_k^T S^-1 mu_k (1e16) cancel each other's digits and flip
        # predictions; predictions use the class-dependent part only.
        centred_means = means - centre
        rhs = np.vstack([means, centred_means, centre[None, :]]).T
        # solved in the correlation form D^-1/2 S_w D^-1/2 (D = diag S_w): features in very
        # different units (one scaled by 1e12) do not make the solve ill-conditioned
        inv = 1.0 / np.sqrt(np.diag(covariance))
        corr = covariance * inv[:, None] * inv[None, :]
        solved = (inv[:, None] * scipy.linalg.solve(corr, inv[:, None] * rhs, assume_a="pos",
                                                    check_finite=False)).T
        coef = solved[:n_classes]
        centred_coef = solved[n_classes:2 * n_classes]
        centre_coef = solved[-1]
        with np.errstate(divide="ignore"):
            centred_intercept = (-0.5 * np.einsum("kd,kd->k", centred_means, centred_coef)
                                 + np.log(priors))
        score_intercept = centred_intercept - centred_coef @ centre
        half_centre = 0.5 * float(centre @ centre_coef)
        intercept = score_intercept - half_centre
        if n_classes == 2:
            coef = centred_coef[1:2] - centred_coef[0:1]
            intercept = score_intercept[1:2] - score_intercept[0:1]
            self._score_coef, self._score_intercept = coef, intercept
            self._common = None
        else:
            self._score_coef, self._score_intercept = centred_coef, score_intercept
            self._common = (centre_coef, half_centre)
        self.classes_ = classes
        self.means_ = means
        self.priors_ = priors
        self.covariance_ = covariance
        self.scalings_ = evecs
        self.explained_variance_ratio_ = ratios[:k]
        self.coef_ = coef
        self.intercept_ = intercept
        self.n_components_ = int(k)
        self.n_features_in_ = d
        self._dtype = dtype
        return self

    def _check_priors(self, counts, m):
        if self.priors is None:
            return counts / m
        priors = check_array(self.priors, name="priors", ensure_2d=False, dtype=np.float64)
        if priors.ndim != 1 or priors.shape[0] != counts.shape[0]:
            raise ValueError(
                f"priors must hold one value per class ({counts.shape[0]} classes); got "
                f"shape {priors.shape}."
            )
        if (priors < 0).any():
            raise ValueError(f"priors must be non-negative; got {priors.tolist()}.")
        total = priors.sum()
        if total <= 0:
            raise ValueError("priors must not all be 0.")
        if not np.isclose(total, 1.0):
            warnings.warn(f"The priors sum to {total:.6g}, not 1; they were rescaled.",
                          UserWarning, stacklevel=3)
            priors = priors / total
        return priors

    def _within_scatter(self, X, codes, counts, means, priors, shrinkage):
        if shrinkage != "auto":
            covariance, _ = class_scatter(X, codes, counts, means, priors / counts,
                                          n_jobs=self.n_jobs)
            if shrinkage is not None:
                shrink_to_scaled_identity(covariance, shrinkage)
            return covariance
        # Ledoit-Wolf on each class's standardised data, as scikit-learn's eigen solver.
        with parallel_section(self.n_jobs):
            sumsq = class_stats.class_centred_sumsq(X, codes, means)
        scales = standardising_scales(sumsq / counts[:, None], counts, means)
        _, per_class = class_scatter(X, codes, counts, means, None, inv_scales=1.0 / scales,
                                     n_jobs=self.n_jobs)
        return ledoit_wolf_within(per_class, counts, scales, priors)

    def _check_singular(self, covariance, between_diag):
        # Per feature and scale-free: a feature is flat when its within-class variance is
        # below 1e-14 of its own total (within + between) variance, so one feature in
        # units 1e12 times larger than the others does not make them look flat.
        diag = np.diag(covariance)
        flat = np.flatnonzero(diag <= _FLAT_RATIO * (diag + between_diag))
        if flat.size:
            raise ValueError(
                f"The within-class scatter S_w is singular: feature(s) {flat[:5].tolist()} "
                "do not vary within any class (within-class variance below "
                f"{_FLAT_RATIO:g} of the feature's total variance). Use shrinkage='auto' or "
                "a float, or drop those features."
            )
        inv = 1.0 / np.sqrt(diag)
        corr = covariance * inv[:, None] * inv[None, :]
        values = scipy.linalg.eigvalsh(corr, check_finite=False)
        ratio = values[0] / values[-1]
        if ratio < self.tol**2:
            raise ValueError(
                f"The within-class scatter S_w is singular to working precision (relative "
                f"singular value {np.sqrt(max(ratio, 0.0)):.3g} < tol={self.tol:g}); there "
                "are fewer independent samples than features, or collinear features. Use "
                "shrinkage='auto' or a float to regularise it (or lower tol)."
            )

    def _validated(self, X, method):
        check_is_fitted(self, "coef_")
        return check_query(self, X, method)

    def decision_function(self, X):
        """Class scores ``X @ coef_.T + intercept_`` (1-D for two classes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes) or (n_samples,)
        """
        X = self._validated(X, "decision_function")
        scores = self._scores(X)
        if self._common is not None:
            # the part of the Gaussian score common to every class (see ``fit``)
            centre_coef, half_centre = self._common
            scores = scores + (X @ centre_coef.astype(X.dtype) - half_centre)[:, None]
        return scores.ravel() if scores.shape[1] == 1 else scores

    def _scores(self, X):
        """Class scores without the part common to every class (same argmax, softmax)."""
        return (X @ self._score_coef.T.astype(X.dtype)
                + self._score_intercept.astype(X.dtype))

    def _class_scores(self, X, method):
        scores = self._scores(self._validated(X, method))
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Most probable class of each sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples to classify, with the features seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        scores = self._class_scores(X, "predict")
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.int64)]
        return self.classes_[np.argmax(scores, axis=1)]

    def predict_proba(self, X):
        """Posterior class probabilities (logistic for two classes, softmax otherwise).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples whose class probabilities are returned, with the features seen in
            ``fit``.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        scores = np.asarray(self._class_scores(X, "predict_proba"), dtype=np.float64)
        if scores.ndim == 1:
            positive = scipy.special.expit(scores)
            return np.column_stack([1.0 - positive, positive])
        return scipy.special.softmax(scores, axis=1)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`, computed stably.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples whose log class probabilities are returned, with the features seen
            in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        scores = np.asarray(self._class_scores(X, "predict_log_proba"), dtype=np.float64)
        if scores.ndim == 1:
            scores = np.column_stack([np.zeros_like(scores), scores])
        return scipy.special.log_softmax(scores, axis=1)

    def transform(self, X):
        """Project X on the discriminant directions: ``X @ scalings_[:, :n_components_]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples to project, with the features seen in ``fit``.

        Returns
        -------
        ndarray of shape (n_samples, n_components_)
        """
        X = self._validated(X, "transform")
        return X @ self.scalings_[:, : self.n_components_].astype(X.dtype)
