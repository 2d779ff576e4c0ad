"""Linear discriminant analysis over dask arrays: per-class moments in one pass, eigh on the client.

Each block yields, per class, its count, mean and centred scatter (float64, around the block's
class mean); the blocks are merged up a tree (Chan et al.'s update); the client forms
``S_w = sum_k p_k / n_k S_k`` and ``S_b`` and solves the same generalized eigenproblem as
:class:`fastdr.LinearDiscriminantAnalysis` (solver ``"eigen"``).
"""


import dask
import dask.array as da
import numpy as np

from .._base import BaseEstimator, ClassifierMixin, TransformerMixin
from .._validation.arrays import check_is_fitted
from .._validation.params import check_n_components, check_option, validate_params
from ..discriminant import LinearDiscriminantAnalysis as LocalLDA
from ..discriminant._checks import check_class_counts, check_priors
from ..discriminant._class_scatter import (
    ledoit_wolf_within,
    shrink_to_scaled_identity,
    standardising_scales,
)
from ..discriminant._lda import fit_from_statistics
from ..discriminant._solvers import total_minus_within
from ._utils import (
    as_dask_classified,
    as_dask_queries,
    map_method,
    merge_moments,
    row_blocks,
    tree_reduce,
)

_FITTED = ("classes_", "means_", "priors_", "covariance_", "scalings_",
           "explained_variance_ratio_", "coef_", "intercept_", "n_components_", "n_features_in_")


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


def block_fourth_moment(block, centre, inv_scale):
    """``sum_i |(x_i - centre) * inv_scale|^4`` over one block, in float64. O(rows d)."""
    z = (np.asarray(block, dtype=np.float64) - centre) * inv_scale
    norms = np.einsum("ij,ij->i", z, z)
    return float(np.dot(norms, norms))


def add_class_scaled_moments(*parts):
    """Sum per-class (scatter, fourth moment) lists class by class, in the order given."""
    total = [(S.copy(), f) for S, f in parts[0]]
    for part in parts[1:]:
        for k, (S, f) in enumerate(part):
            total[k] = (total[k][0] + S, total[k][1] + f)
    return total


def _ledoit_wolf_within(stats, counts, means, priors, pairs):
    """``S_w`` with each class's covariance shrunk by Ledoit-Wolf on its standardised data,
    as the in-memory eigen solver does; the fourth moments take a second pass over X."""
    variances = np.array([np.diag(s[2]) for s in stats]) / counts[:, None]
    scales = standardising_scales(variances, counts, means)
    parts = [dask.delayed(class_scaled_moments, pure=True)(b, c, means, 1.0 / scales)
             for b, c in pairs]
    per_class = dask.compute(tree_reduce(parts, add_class_scaled_moments))[0]
    return ledoit_wolf_within(per_class, counts, scales, priors)


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
        # the in-memory estimator's parameter table, counts checks and solve (one code path)
        local = LocalLDA(n_components=self.n_components, solver=self.solver,
                         shrinkage=self.shrinkage, priors=self.priors, tol=self.tol)
        validate_params(local)
        shrinkage = self.shrinkage
        if shrinkage is not None and not isinstance(shrinkage, str):
            shrinkage = float(shrinkage)
        X, classes, codes = as_dask_classified(X, y, "LinearDiscriminantAnalysis")
        m, d = X.shape
        n_classes = len(classes)
        codes_d = da.from_array(codes, chunks=(X.chunks[0],))
        pairs = list(zip(row_blocks(X), codes_d.to_delayed().ravel(), strict=True))
        parts = [dask.delayed(class_block_moments, pure=True)(b, c, n_classes) for b, c in pairs]
        stats = dask.compute(tree_reduce(parts, merge_class_moments))[0]
        counts = np.array([s[0] for s in stats], dtype=np.int64)
        means = np.array([s[1] for s in stats])
        check_class_counts(classes, counts, m, shrinkage)
        priors = check_priors(self.priors, counts, m)
        max_components = min(n_classes - 1, d)
        n_components = check_n_components(
            self.n_components, max_components, estimator="LinearDiscriminantAnalysis",
            limit="min(n_classes - 1, n_features)")
        raw = None
        if shrinkage == "auto":
            covariance = _ledoit_wolf_within(stats, counts, means, priors, pairs)
        else:
            covariance = np.zeros((d, d))
            for k, (_, _, scatter) in enumerate(stats):
                covariance += (priors[k] / counts[k]) * scatter
            covariance = 0.5 * (covariance + covariance.T)
            raw = covariance.copy()
            if shrinkage is not None:
                shrink_to_scaled_identity(covariance, shrinkage)
        between = None
        if shrinkage is not None or self.priors is not None:
            # the in-memory eigen solver's S_b = S_t - S_w (scikit-learn's)
            empirical = sum(scatter for _, _, scatter in stats) / m

            def fourth_moment(centre, inv_scale):
                parts = [dask.delayed(block_fourth_moment, pure=True)(b, centre, inv_scale)
                         for b, _ in pairs]
                return float(sum(dask.compute(*parts)))

            between = total_minus_within(
                means, counts, covariance, shrinkage, empirical=0.5 * (empirical + empirical.T),
                raw_within=raw if self.priors is not None else None,
                fourth_moment=fourth_moment)
        fit_from_statistics(local, classes, means, priors, covariance, n_components,
                            max_components, X.dtype, between=between)
        self._local = local
        self._dtype = X.dtype
        for name in _FITTED:
            setattr(self, name, getattr(local, name))
        return self

    def to_local(self):
        """The fitted in-memory :class:`fastdr.LinearDiscriminantAnalysis` (same attributes).

        Returns
        -------
        fastdr.LinearDiscriminantAnalysis
        """
        check_is_fitted(self, "coef_")
        return self._local

    def _map(self, X, method, n_cols, dtype):
        model = self.to_local()
        X = as_dask_queries(X, self, "LinearDiscriminantAnalysis", method)
        return map_method(X, model, method, n_cols, dtype)

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
        dask array of shape (n_samples, ``n_components_``)
            With X's row chunks.
        """
        check_is_fitted(self, "coef_")
        return self._map(X, "transform", self.n_components_, self._dtype)
