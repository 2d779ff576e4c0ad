"""Linear discriminant analysis over dask arrays: per-class moments in one pass, eigh on the client.

Each block yields, per class, its count, mean and centred scatter (float64, around the block's
class mean); the blocks are merged up a tree (Chan et al.'s update); the client forms
``S_w = sum_k p_k / n_k S_k`` and ``S_b`` and solves the same generalized eigenproblem as
:class:`fastdr.LinearDiscriminantAnalysis` (solver ``"eigen"``).
"""

import numbers

import dask
import dask.array as da
import numpy as np
import scipy.linalg

from .._base import BaseEstimator, ClassifierMixin, TransformerMixin
from .._eigen import check_n_components, fix_signs, n_components_for_ratio
from .._validation import (
    check_classification_targets,
    check_is_fitted,
    check_option,
    check_scalar,
)
from ._decomposition import _check_features
from ._utils import as_dask_rows, as_labels, merge_moments, row_blocks, tree_reduce

_FITTED = ("classes_", "means_", "priors_", "covariance_", "scalings_",
           "explained_variance_ratio_", "coef_", "intercept_", "n_components_", "n_features_in_",
           "_dtype")


def class_block_moments(block, codes, n_classes):
    """Per-class (count, mean, centred scatter) of one block, in float64. O(rows d^2)."""
    d = block.shape[1]
    out = []
    for k in range(n_classes):
        rows = np.asarray(block[codes == k], dtype=np.float64)
        n = rows.shape[0]
        if n == 0:
            out.append((0, np.zeros(d), np.zeros((d, d))))
            continue
        mean = rows.mean(axis=0)
        rows -= mean
        out.append((n, mean, rows.T @ rows))
    return out


def merge_class_moments(*parts):
    """Merge per-class moment lists class by class."""
    return [merge_moments(*(p[k] for p in parts)) for k in range(len(parts[0]))]


def class_scaled_moments(block, codes, means, inv_scales):
    """Per class: scatter of the scaled deviations ``z = (x - mean_k) * inv_scale_k`` and
    ``sum_i |z_i|^4`` (Ledoit-Wolf's fourth moment), float64. O(rows d^2)."""
    out = []
    for k in range(means.shape[0]):
        z = (np.asarray(block[codes == k], dtype=np.float64) - means[k]) * inv_scales[k]
        norms = np.einsum("ij,ij->i", z, z)
        out.append((z.T @ z, float(np.dot(norms, norms))))
    return out


def add_class_scaled_moments(*parts):
    """Sum per-class (scatter, fourth moment) lists class by class, in the order given."""
    total = [(S.copy(), f) for S, f in parts[0]]
    for part in parts[1:]:
        for k, (S, f) in enumerate(part):
            total[k] = (total[k][0] + S, total[k][1] + f)
    return total


def _method_block(block, model, method, n_cols, dtype):
    if block.shape[0] == 0:  # the in-memory estimator refuses empty input
        return np.empty((0,) if n_cols is None else (0, n_cols), dtype=dtype)
    return getattr(model, method)(block)


def _ledoit_wolf_within(stats, counts, means, priors, pairs):
    """``S_w`` with each class's covariance shrunk by Ledoit-Wolf on its standardised data,
    as the in-memory eigen solver does; the fourth moments take a second pass over X."""
    from ..discriminant import ledoit_wolf_shrinkage

    d = means.shape[1]
    variances = np.array([np.diag(s[2]) for s in stats]) / counts[:, None]
    eps = np.finfo(np.float64).eps
    n = counts[:, None].astype(np.float64)
    constant = variances <= n * eps * variances + (n * means * eps) ** 2
    scales = np.sqrt(variances)
    scales[constant | (scales < 10 * eps)] = 1.0
    parts = [dask.delayed(class_scaled_moments, pure=True)(b, c, means, 1.0 / scales)
             for b, c in pairs]
    per_class = dask.compute(tree_reduce(parts, add_class_scaled_moments))[0]
    covariance = np.zeros((d, d), dtype=np.float64)
    for k, (scatter, fourth) in enumerate(per_class):
        emp = scatter / counts[k]
        s, mu = ledoit_wolf_shrinkage(emp, fourth, int(counts[k]))
        shrunk = (1.0 - s) * emp
        shrunk.flat[:: d + 1] += s * mu
        covariance += priors[k] * (scales[k][:, None] * shrunk * scales[k][None, :])
    return 0.5 * (covariance + covariance.T)


class LinearDiscriminantAnalysis(ClassifierMixin, TransformerMixin, BaseEstimator):
    """Linear discriminant analysis of a row-chunked dask array (solver ``"eigen"``).

    The same model as :class:`fastdr.LinearDiscriminantAnalysis`: the class means and the
    within-class scatter come from one pass over the blocks; the eigenproblem and the
    classifier's coefficients are solved on the client; ``transform``, ``predict`` and
    ``decision_function`` are lazy ``map_blocks`` of the in-memory methods.

    Parameters
    ----------
    n_components : int, float or None, default=None
    solver : {"eigen"}, default="eigen"
    shrinkage : None, "auto" or float in [0, 1], default=None
        As in the in-memory estimator; ``"auto"`` (Ledoit-Wolf per class on standardised
        data) takes a second pass over X for the per-class fourth moments.
    priors : array-like of shape (n_classes,) or None
    tol : float, default=1e-4
        Relative singular-value threshold of ``S_w``, as in the in-memory estimator.

    Attributes
    ----------
    classes_, means_, priors_, covariance_, scalings_, explained_variance_ratio_, coef_,
    intercept_ : NumPy arrays, as in :class:`fastdr.LinearDiscriminantAnalysis`.
    n_components_, n_features_in_ : int

    Notes
    -----
    Work O(m d^2) over the blocks; the client holds O(c d^2) for c classes (plus the labels,
    O(m)) and spends O(d^3). Communication O(n_blocks c d^2).
    """

    def __init__(self, *, n_components=None, solver="eigen", shrinkage=None, priors=None,
                 tol=1e-4):
        self.n_components = n_components
        self.solver = solver
        self.shrinkage = shrinkage
        self.priors = priors
        self.tol = tol

    def _check_shrinkage(self):
        s = self.shrinkage
        if s is None or (isinstance(s, str) and s == "auto"):
            return s
        if isinstance(s, (str, bool)) or not isinstance(s, numbers.Real):
            raise ValueError(
                f"shrinkage must be None, 'auto' or a float in [0, 1]; got {s!r}."
            )
        return float(check_scalar(s, "shrinkage", "real", min_value=0, max_value=1))

    def fit(self, X, y):
        """Fit the discriminant directions and the classifier (one pass over X).

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features), chunked by rows
        y : dask or NumPy array of shape (n_samples,)

        Returns
        -------
        self
        """
        check_option(self.solver, "solver", ("eigen",))
        shrinkage = self._check_shrinkage()
        check_scalar(self.tol, "tol", "real", min_value=0)
        X = as_dask_rows(X, "LinearDiscriminantAnalysis", min_samples=2)
        m, d = X.shape
        y = as_labels(y, m)
        classes, codes = check_classification_targets(y, min_classes=1)
        n_classes = len(classes)
        if n_classes < 2:
            raise ValueError(
                f"LinearDiscriminantAnalysis needs at least 2 classes; y has a single class "
                f"({classes[0]!r}). Pass samples of two or more classes."
            )
        if m <= n_classes:
            raise ValueError(
                f"LinearDiscriminantAnalysis needs more samples than classes; got {m} "
                f"samples for {n_classes} classes. Pass more samples."
            )
        codes_d = da.from_array(codes, chunks=(X.chunks[0],))
        pairs = list(zip(row_blocks(X), codes_d.to_delayed().ravel(), strict=True))
        parts = [dask.delayed(class_block_moments, pure=True)(b, c, n_classes) for b, c in pairs]
        stats = dask.compute(tree_reduce(parts, merge_class_moments))[0]
        counts = np.array([s[0] for s in stats], dtype=np.int64)
        means = np.array([s[1] for s in stats])
        if shrinkage == "auto" and counts.min() < 2:
            lone = classes[int(np.argmin(counts))]
            raise ValueError(
                f"Class {lone!r} has 1 sample, but shrinkage='auto' (Ledoit-Wolf) estimates "
                "each class's covariance and needs at least 2 samples per class. Use "
                "shrinkage=None or a float, or pass more samples of that class."
            )
        priors = self._check_priors(counts, m)
        max_components = min(n_classes - 1, d)
        n_components = check_n_components(
            self.n_components, max_components, estimator="LinearDiscriminantAnalysis",
            limit="min(n_classes - 1, n_features)")
        if shrinkage == "auto":
            covariance = _ledoit_wolf_within(stats, counts, means, priors, pairs)
        else:
            covariance = np.zeros((d, d))
            for k, (_, _, scatter) in enumerate(stats):
                covariance += (priors[k] / counts[k]) * scatter
            covariance = 0.5 * (covariance + covariance.T)
        if shrinkage is not None and shrinkage != "auto":
            target = np.trace(covariance) / d
            covariance *= 1.0 - shrinkage
            covariance.flat[:: d + 1] += shrinkage * target
        self._local_class()(tol=self.tol)._check_singular(covariance)
        centre = priors @ means
        offsets = (means - centre) * np.sqrt(priors)[:, None]
        between = offsets.T @ offsets
        try:
            evals, evecs = scipy.linalg.eigh(between, covariance, check_finite=False)
        except np.linalg.LinAlgError as exc:
            raise ValueError(
                f"The within-class scatter S_w is not positive definite ({exc}). Use "
                "a float shrinkage to regularise it."
            ) from exc
        order = np.argsort(-evals, kind="stable")
        evals = evals[order]
        evecs = fix_signs(np.ascontiguousarray(evecs[:, order]))
        total = evals.sum()
        ratios = evals / total if total > 0 else np.zeros_like(evals)
        if n_components is None:
            k = max_components
        elif isinstance(n_components, float):
            k = min(n_components_for_ratio(evals, n_components), max_components)
        else:
            k = n_components
        coef = scipy.linalg.solve(covariance, means.T, assume_a="pos", check_finite=False).T
        with np.errstate(divide="ignore"):
            intercept = -0.5 * np.einsum("kd,kd->k", means, coef) + np.log(priors)
        if n_classes == 2:
            coef = coef[1:2] - coef[0:1]
            intercept = intercept[1:2] - intercept[0:1]
        self.classes_ = classes
        self.means_ = means
        self.priors_ = priors
        self.covariance_ = covariance
        self.scalings_ = evecs
        self.explained_variance_ratio_ = ratios[:k]
        self.coef_ = coef
        self.intercept_ = intercept
        self.n_components_ = int(k)
        self.n_features_in_ = int(d)
        self._dtype = X.dtype
        return self

    @staticmethod
    def _local_class():
        from ..discriminant import LinearDiscriminantAnalysis as LocalLDA

        return LocalLDA

    def _check_priors(self, counts, m):
        return self._local_class()(priors=self.priors)._check_priors(counts, m)

    def to_local(self):
        """The fitted in-memory :class:`fastdr.LinearDiscriminantAnalysis` (same attributes).

        Returns
        -------
        fastdr.LinearDiscriminantAnalysis
        """
        check_is_fitted(self, "coef_")
        model = self._local_class()(n_components=self.n_components, solver=self.solver,
                                    shrinkage=self.shrinkage, priors=self.priors, tol=self.tol)
        for name in _FITTED:
            setattr(model, name, getattr(self, name))
        return model

    def _map(self, X, method, n_cols, dtype):
        model = self.to_local()
        X = as_dask_rows(X, "LinearDiscriminantAnalysis", min_samples=0)
        _check_features(self, X, method)
        if n_cols is None:
            return X.map_blocks(_method_block, model, method, n_cols, dtype, drop_axis=1,
                                chunks=(X.chunks[0],), dtype=dtype)
        return X.map_blocks(_method_block, model, method, n_cols, dtype,
                            chunks=(X.chunks[0], (n_cols,)), dtype=dtype)

    def _n_scores(self):
        return None if len(self.classes_) == 2 else len(self.classes_)

    def decision_function(self, X):
        """Lazy class scores ``X @ coef_.T + intercept_``.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features)

        Returns
        -------
        dask array of shape (n_samples, n_classes), or (n_samples,) for two classes
            With X's row chunks.
        """
        check_is_fitted(self, "coef_")
        return self._map(X, "decision_function", self._n_scores(), self._dtype)

    def predict(self, X):
        """Lazy most probable class of each sample.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features)

        Returns
        -------
        dask array of shape (n_samples,)
            With X's row chunks.
        """
        check_is_fitted(self, "coef_")
        return self._map(X, "predict", None, self.classes_.dtype)

    def predict_proba(self, X):
        """Lazy posterior class probabilities.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features)

        Returns
        -------
        dask array of shape (n_samples, n_classes)
            With X's row chunks.
        """
        check_is_fitted(self, "coef_")
        return self._map(X, "predict_proba", len(self.classes_), np.float64)

    def predict_log_proba(self, X):
        """Lazy logarithm of the posterior class probabilities.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features)

        Returns
        -------
        dask array of shape (n_samples, n_classes)
            With X's row chunks.
        """
        check_is_fitted(self, "coef_")
        return self._map(X, "predict_log_proba", len(self.classes_), np.float64)

    def transform(self, X):
        """Lazy projections on the discriminant directions.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features)

        Returns
        -------
        dask array of shape (n_samples, n_components_)
            With X's row chunks.
        """
        check_is_fitted(self, "coef_")
        return self._map(X, "transform", self.n_components_, self._dtype)
