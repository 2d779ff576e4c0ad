"""Incremental PCA, a drop-in for scikit-learn 1.9's ``IncrementalPCA``.

PCA from batches of rows, for data that does not fit in memory at once or arrives over
time: each batch updates a rank-k model (:mod:`._incremental_batch`). The answers are
scikit-learn's (same batches, same truncation at each step); each batch costs one symmetric
product instead of an SVD, and sparse batches are never densified.
"""

from numbers import Integral

import numpy as np
from sklearn.utils import gen_batches

from .._base import BaseEstimator
from .._validation.arrays import check_array, check_n_features
from .._validation.feature_names import check_feature_names, record_feature_names
from .._validation.params import Interval, validate_params
from ._incremental_batch import batch_moments, merge_moments, update
from ._pca_model import LinearProjectionModel
from ._pca_sparse import check_sparse, is_sparse

_FITTED = ("components_", "n_samples_seen_", "mean_", "var_", "singular_values_",
           "explained_variance_", "explained_variance_ratio_", "noise_variance_",
           "n_components_")


class IncrementalPCA(LinearProjectionModel, BaseEstimator):
    """Principal component analysis fitted one batch of rows at a time.

    A drop-in for :class:`sklearn.decomposition.IncrementalPCA` (same parameters, defaults,
    attributes and answers). Each batch updates the top ``n_components`` singular vectors
    of the data seen so far (Ross et al., 2008): memory O(batch_size x n_features +
    n_features^2) whatever the number of rows, so X can be a memory map, or the batches
    can come through :meth:`partial_fit`.

    Parameters
    ----------
    n_components : int or None, default=None
        Number of components to keep. None: ``min(n_samples, n_features)`` of the first
        batch.
    whiten : bool, default=False
        Scale the projections to unit variance (divide by ``sqrt(explained_variance_)``).
    copy : bool, default=True
        Accepted for compatibility: fastdr never writes to X, so ``copy=False`` saves
        nothing and changes nothing.
    batch_size : int or None, default=None
        Rows per batch in :meth:`fit`; None: ``5 * n_features``. A last batch smaller than
        ``n_components`` is merged into the one before it.

    Attributes
    ----------
    components_ : ndarray of shape (``n_components_``, n_features)
        Principal axes (unit rows), each with its largest-magnitude entry positive.
    explained_variance_ : ndarray of shape (``n_components_``,)
        Variance along each axis (denominator ``n_samples_seen_ - 1``).
    explained_variance_ratio_ : ndarray of shape (``n_components_``,)
        ``explained_variance_`` over the total variance of the data seen.
    singular_values_ : ndarray of shape (``n_components_``,)
        Singular values of the centred data seen (as approximated by the updates).
    mean_ : ndarray of shape (n_features,)
        Column means of the data seen.
    var_ : ndarray of shape (n_features,)
        Column variances (denominator ``n_samples_seen_``) of the data seen.
    noise_variance_ : float
        Probabilistic PCA's noise variance: the mean variance along the directions of the
        last update beyond ``n_components_`` (0 when the last batch or the feature count
        equals ``n_components_``).
    n_components_ : int
    n_samples_seen_ : float
        Rows seen so far (a float, as scikit-learn's).
    batch_size_ : int
        Rows per batch of the last :meth:`fit`.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (``n_features_in_``,)
        Defined only when X has string column names.

    See Also
    --------
    PCA : The exact PCA of data that fits in memory.

    Notes
    -----
    All fitted arrays are float64, and so are the projections, whatever the input dtype
    (scikit-learn's are float32 after a single float32 batch, float64 after two or more).
    Unlike scikit-learn, :meth:`partial_fit` accepts sparse batches too; neither method
    densifies one: its Gram matrices come from sparse products with the centring applied
    implicitly (but for a column whose mean exceeds its spread ten-thousandfold, centred
    exactly from blocks of 1,024 rows or columns at a time).

    Where scikit-learn returns NaN, fastdr raises: a first batch of one row (the variance
    of one sample is undefined), data whose variances overflow or underflow float64. On
    constant data ``explained_variance_ratio_`` is 0 (scikit-learn: NaN).

    When the batch and the feature count both exceed 1,024 and ``n_components`` is at most
    1/32 of both, ARPACK works on the centred batch as an operator (dense or sparse), so
    that no Gram matrix of that size is stored or decomposed.

    Each batch costs O(b d^2 + d^3) time for b >= d rows (O(b^2 d + b^3) below), as the SVD
    scikit-learn runs, but with a smaller constant: only the right singular vectors are
    formed, from a Gram matrix in float64. The Gram matrix squares the singular values, so
    one at the data's round-off (a rank below ``n_components``) comes out as up to about
    ``1e-8`` times the largest instead of ``1e-16`` times; the others, the components and the
    projections agree with scikit-learn's to about ``1e-10``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastdr import IncrementalPCA
    >>> X = np.random.default_rng(0).standard_normal((1000, 8))
    >>> ipca = IncrementalPCA(n_components=3, batch_size=200).fit(X)
    >>> ipca.transform(X).shape
    (1000, 3)
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "whiten": ["boolean"],
        "copy": ["boolean"],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
    }

    # the fitted arrays are float64 whatever X's dtype, as scikit-learn's
    _float64_output = True

    def __init__(self, n_components=None, *, whiten=False, copy=True, batch_size=None):
        self.n_components = n_components
        self.whiten = whiten
        self.copy = copy
        self.batch_size = batch_size

    def _fastdr_tags(self):
        return {"transformer_tags.preserves_dtype": ["float64"], "input_tags.sparse": True}

    def fit(self, X, y=None):
        """Fit the model on X, ``batch_size`` rows at a time.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training samples.
        y : ignored
            Not used; present for API consistency.

        Returns
        -------
        self
        """
        validate_params(self)
        raw, X = X, self._check(X, min_samples=2)
        record_feature_names(self, raw)  # after the checks: a refused X changes nothing
        for name in _FITTED:
            self.__dict__.pop(name, None)
        n_samples, n_features = X.shape
        self.n_features_in_ = int(n_features)
        self.batch_size_ = int(5 * n_features if self.batch_size is None else self.batch_size)
        for batch in gen_batches(n_samples, self.batch_size_,
                                 min_batch_size=self.n_components or 0):
            self._update(X[batch])
        return self

    def partial_fit(self, X, y=None, check_input=True):
        """Update the model with one batch X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The batch (a sparse batch is accepted here too, unlike scikit-learn).
        y : ignored
            Not used; present for API consistency.
        check_input : bool, default=True
            Accepted for compatibility: fastdr always checks the batch (one pass over it,
            cheap beside the update).

        Returns
        -------
        self
        """
        validate_params(self)
        first = not hasattr(self, "components_")
        if first:
            record_feature_names(self, X)
        else:
            check_feature_names(self, X)
        X = self._check(X, min_samples=2 if first else 1)
        if first:
            self.n_features_in_ = int(X.shape[1])
        else:
            check_n_features(self, X, "partial_fit")
        self._update(X)
        return self

    def _check(self, X, min_samples):
        # the first batch needs 2 rows: the variance of one sample is undefined
        if is_sparse(X):
            return check_sparse(X, min_samples=min_samples).tocsr()
        return check_array(X, min_samples=min_samples)

    def _component_count(self, b, d, first):
        if self.n_components is None:
            return min(b, d) if first else self.components_.shape[0]
        if self.n_components > d:
            raise ValueError(
                f"n_components={self.n_components!r} invalid for n_features={d}, need more "
                "rows than columns for IncrementalPCA processing. Pass n_components <= "
                f"{d}."
            )
        if self.n_components > b and first:
            raise ValueError(
                f"n_components={self.n_components} must be less or equal to the batch "
                f"number of samples {b} for the first partial_fit call. Pass a first batch "
                f"of at least {self.n_components} rows."
            )
        return self.n_components

    def _update(self, X):
        b, d = X.shape
        first = not hasattr(self, "components_")
        k = self._component_count(b, d, first)
        if not first and self.components_.shape[0] != k:
            raise ValueError(
                f"Number of input features has changed from {self.components_.shape[0]} "
                f"to {k} between calls to partial_fit! Try setting n_components to a fixed "
                "value."
            )
        if first and b < 2:  # fit with batch_size=1
            raise ValueError(
                f"Found 1 sample(s) (n_samples = {b}) in the first batch, while a minimum of "
                "2 is required: the variance of one sample is undefined. Pass batch_size >= "
                "2."
            )
        mean_b, ssq_b = batch_moments(X)
        if first:
            prior = correction = None
            n_a, mean_a, var_a = 0, None, None
        else:
            n_a, mean_a, var_a = float(self.n_samples_seen_), self.mean_, self.var_
            prior = self.singular_values_[:, None] * self.components_
            correction = np.sqrt(n_a * b / (n_a + b)) * (mean_a - mean_b)
        spectrum, ssq_b = update(X, mean_b, ssq_b, prior, correction, k)
        n, mean, var = merge_moments(n_a, mean_a, var_a, b, mean_b, ssq_b)
        values = spectrum.singular_values
        _check_representable(var, values)
        squares = values * values
        total_variance = float(np.sum(var * n))
        self.n_samples_seen_ = np.float64(n)
        self.components_ = spectrum.components
        self.singular_values_ = values[:k].copy()
        self.mean_ = mean
        self.var_ = var
        self.explained_variance_ = squares[:k] / (n - 1)
        if total_variance > 0:
            self.explained_variance_ratio_ = squares[:k] / total_variance
        else:  # constant data seen: no variance to share out
            self.explained_variance_ratio_ = np.zeros(k)
        self.n_components_ = int(k)
        if k not in (b, d):  # scikit-learn's rule: the mean of the values beyond k
            with np.errstate(over="ignore"):
                self.noise_variance_ = np.float64(
                    spectrum.tail / (spectrum.rank_bound - k) / (n - 1))
        else:
            self.noise_variance_ = np.float64(0.0)


def _check_representable(var, singular_values):
    """Refuse data whose variances overflow float64, or underflow it while the data varies:
    the explained variances and their ratios would be inf, NaN or 0."""
    with np.errstate(over="ignore"):
        squares = singular_values * singular_values
    if not (np.isfinite(var).all() and np.isfinite(squares).all()):
        raise ValueError(
            "The variances of X overflow float64 (values of about 1e154 or more): scale X "
            "first, for example with sklearn.preprocessing.StandardScaler."
        )
    if singular_values.size and singular_values[0] > 0 and (
            not var.any() or squares[0] == 0.0):
        raise ValueError(
            "The variances of X underflow float64 (values of about 1e-154 or less): scale X "
            "first, for example with sklearn.preprocessing.StandardScaler."
        )
