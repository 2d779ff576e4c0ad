"""PCA over dask arrays: one pass of per-block moments, a tree merge, eigh on the client."""

from numbers import Integral

import dask
import numpy as np

from .._base import BaseEstimator, TransformerMixin
from .._eigen import spectral_pairs
from .._validation.arrays import check_is_fitted
from .._validation.params import check_option, validate_params
from ..decomposition._pca import fitted_from_spectrum
from ..decomposition._pca_solvers import Route, check_count
from ._utils import (
    as_dask_queries,
    as_dask_rows,
    block_moments,
    map_method,
    merge_moments,
    row_blocks,
    tree_reduce,
)

SVD_SOLVERS = ("auto", "covariance_eigh")
_FITTED = ("mean_", "components_", "explained_variance_", "explained_variance_ratio_",
           "singular_values_", "noise_variance_", "n_components_", "n_features_in_",
           "n_samples_")


def moments(X):
    """Count, mean and centred scatter (float64) of a row-chunked dask array, computed.

    Each block is centred on its own mean (float64) and the blocks are merged pairwise up a
    tree (Chan et al.'s update), so no sum ever cancels against a far-away mean.
    """
    parts = [dask.delayed(block_moments, pure=True)(b) for b in row_blocks(X)]
    n, mean, scatter = dask.compute(tree_reduce(parts, merge_moments))[0]
    return n, mean, 0.5 * (scatter + scatter.T)


class PCA(TransformerMixin, BaseEstimator):
    """Principal component analysis of a row-chunked dask array.

    The same model as :class:`fastdr.PCA` with ``svd_solver="covariance_eigh"``: one pass
    over the blocks computes per-block counts, means and centred ``X^T X`` in float64, merged
    up a tree; the d x d eigenproblem is solved on the client. ``transform`` is a lazy
    ``map_blocks`` of the in-memory projection.

    Parameters
    ----------
    n_components : int, float, "mle" or None, default=None
        As in :class:`fastdr.PCA` (a float keeps the fewest components whose explained share
        exceeds it, as scikit-learn does).
    whiten : bool, default=False
    svd_solver : {"auto", "covariance_eigh"}, default="auto"
        Only the covariance route distributes (the Gram, full-SVD and randomized solvers of
        the in-memory PCA need all rows in one place or many passes).
    random_state : int, RandomState or None, default=None
        Seeds the eigensolver when few components of a large covariance are wanted.

    Attributes
    ----------
    components_, explained_variance_, explained_variance_ratio_, singular_values_, mean_ :
        NumPy arrays, as in :class:`fastdr.PCA`.
    noise_variance_ : float
        As in :class:`fastdr.PCA` (so ``to_local().score`` works).
    n_components_, n_features_in_, n_samples_ : int

    Notes
    -----
    Work O(m d^2) over the blocks; the client holds O(d^2) and spends O(d^3).
    Communication O(n_blocks d^2).
    """

    def __init__(self, *, n_components=None, whiten=False, svd_solver="auto",
                 random_state=None):
        self.n_components = n_components
        self.whiten = whiten
        self.svd_solver = svd_solver
        self.random_state = random_state

    def fit(self, X, y=None):
        """Fit the principal axes (computes one pass over X).

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features), chunked by rows
        y : ignored

        Returns
        -------
        self
        """
        check_option(self.svd_solver, "svd_solver", SVD_SOLVERS)
        validate_params(self._local_model())  # the in-memory estimator's parameter table
        X = as_dask_rows(X, "PCA", min_samples=2)
        m, d = X.shape
        local = self._local_model()
        # the in-memory covariance_eigh route's rules: the count check, then d' from the
        # whole spectrum for a float or "mle" (scikit-learn's rule), or the top k pairs
        want = min(m, d) if self.n_components is None else self.n_components
        check_count(want, "covariance_eigh", (m, d))
        k = int(want) if isinstance(want, Integral) else None
        _, mean, scatter = moments(X)
        total = float(np.trace(scatter))
        if k == 0:
            values, vectors = np.zeros(0), np.zeros((d, 0))
        else:
            # the same eigen pipeline as the in-memory PCA's covariance route
            values, vectors = spectral_pairs(
                scatter, k, solver="auto", what="The scatter matrix of the centred data",
                psd=True, max_components=None, random_state=self.random_state,
                overwrite_a=True)
        fitted_from_spectrum(local, Route(mean, values, vectors, total, d, None), want, (m, d),
                             X.dtype)
        for name in _FITTED:
            setattr(self, name, getattr(local, name))
        return self

    def fit_transform(self, X, y=None):
        """Fit on X and return its lazy projections.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features), chunked by rows
            Training samples (at least 2); a dask DataFrame is converted to an array.
        y : ignored
            Not used; present for API consistency.

        Returns
        -------
        dask array of shape (n_samples, ``n_components_``)
        """
        return self.fit(X).transform(X)

    def _local_model(self):
        from ..decomposition import PCA as LocalPCA

        return LocalPCA(n_components=self.n_components, whiten=self.whiten,
                        svd_solver="covariance_eigh", random_state=self.random_state)

    def to_local(self):
        """The fitted in-memory :class:`fastdr.PCA` with the same attributes.

        Returns
        -------
        fastdr.PCA
        """
        check_is_fitted(self, "components_")
        model = self._local_model()
        for name in _FITTED:
            setattr(model, name, getattr(self, name))
        return model

    def transform(self, X):
        """Lazy projections on the principal axes (the in-memory projection per block).

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features)

        Returns
        -------
        dask array of shape (n_samples, ``n_components_``), with X's row chunks
        """
        model = self.to_local()
        X = as_dask_queries(X, self, "PCA", "transform")
        return map_method(X, model, "transform", self.n_components_, X.dtype)

    def inverse_transform(self, X):
        """Lazy map of projections back to the input space, ``W z + mean_``.

        Parameters
        ----------
        X : dask array of shape (n_samples, ``n_components_``)

        Returns
        -------
        dask array of shape (n_samples, n_features)
        """
        model = self.to_local()
        Z = as_dask_rows(X, "PCA", min_samples=0)
        if Z.shape[1] != self.n_components_:
            raise ValueError(
                f"X has {Z.shape[1]} columns, but this PCA has {self.n_components_} "
                "components; inverse_transform takes the output of transform."
            )
        return map_method(Z, model, "inverse_transform", self.n_features_in_, Z.dtype)
