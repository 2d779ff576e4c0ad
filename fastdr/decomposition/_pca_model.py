"""What PCA and IncrementalPCA share once fitted: the projection and its inverse, and
probabilistic PCA's covariance model (Tipping and Bishop, 1999).

The mixin reads the fitted ``components_``, ``mean_``, ``explained_variance_`` and
``noise_variance_``, and the ``whiten`` parameter, whatever route set them.
"""

import numpy as np
import scipy.linalg

from .._base import TransformerMixin
from .._validation.arrays import check_array, check_is_fitted, check_n_features, check_query
from ._centred import project_centred
from ._pca_sparse import check_sparse, is_sparse


class LinearProjectionModel(TransformerMixin):
    """Mixin: ``transform``, ``inverse_transform``, ``get_covariance``, ``get_precision``.

    A TransformerMixin itself, so that scikit-learn's ``set_output`` wraps the ``transform``
    defined here (it wraps the methods a class defines, when the class is created).
    """

    # True: projections and reconstructions are float64 whatever the input's dtype (the
    # estimator's fitted arrays are float64 for any input, as scikit-learn's IncrementalPCA)
    _float64_output = False

    def transform(self, X):
        """Project X on the principal axes.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, ``n_components_``)
            ``(X - mean_) @ components_.T``, divided by ``sqrt(explained_variance_)`` when
            ``whiten``.
        """
        check_is_fitted(self, "components_")
        if is_sparse(X):
            X = check_sparse(X)
            check_n_features(self, X, "transform")
            return self._project(X)
        return self._project(check_query(self, X, "transform"))

    def _project(self, X):
        if self._float64_output and X.dtype != np.float64:
            X = X.astype(np.float64)
        if is_sparse(X):
            W = self.components_.T.astype(X.dtype)
            Z = np.asarray(X @ W) - self.mean_.astype(X.dtype) @ W
        else:
            Z = project_centred(X, self.mean_, self.components_)
        return self._whiten(Z)

    def _whiten(self, Z):
        if self.whiten:
            scale = np.sqrt(np.maximum(self.explained_variance_.astype(np.float64), 0.0))
            factor = np.zeros_like(scale)
            positive = scale > 0
            eps = np.finfo(self.components_.dtype).eps
            factor[positive] = 1.0 / np.maximum(scale[positive], eps)
            Z *= factor.astype(Z.dtype)
        return Z

    def inverse_transform(self, X):
        """Map projections back to the input space: ``W z + mean_``.

        Parameters
        ----------
        X : array-like of shape (n_samples, ``n_components_``)

        Returns
        -------
        ndarray of shape (n_samples, n_features)
        """
        check_is_fitted(self, "components_")
        Z = check_array(X, min_samples=0, min_features=0)
        if Z.shape[1] != self.n_components_:
            raise ValueError(
                f"X has {Z.shape[1]} columns, but this {type(self).__name__} has "
                f"{self.n_components_} components; inverse_transform takes the output of "
                "transform."
            )
        W = self.components_.astype(np.float64)
        if self.whiten:
            W = np.sqrt(np.maximum(self.explained_variance_, 0)).astype(np.float64)[:, None] * W
        out = Z.astype(np.float64) @ W + self.mean_.astype(np.float64)
        return out if self._float64_output else out.astype(Z.dtype)

    def _model_terms(self):
        components = self.components_
        variance = self.explained_variance_
        if self.whiten:  # scikit-learn's generative model of the whitened fit
            components = components * np.sqrt(variance[:, None])
        noise = self.noise_variance_
        diff = np.where(variance > noise, variance - noise, 0.0).astype(variance.dtype)
        return components, diff, noise

    def get_covariance(self):
        """The data covariance under probabilistic PCA's generative model.

        ``components_.T diag(explained_variance_ - noise_variance_) components_ +
        noise_variance_ I`` (differences below 0 count as 0; with ``whiten`` each component
        is scaled by ``sqrt(explained_variance_)`` first, as scikit-learn does).

        Returns
        -------
        ndarray of shape (n_features, n_features)
        """
        check_is_fitted(self, "components_")
        components, diff, noise = self._model_terms()
        cov = (components.T * diff) @ components
        cov.flat[::cov.shape[0] + 1] += noise
        return cov

    def get_precision(self):
        """The inverse of :meth:`get_covariance`, by the matrix inversion lemma.

        Returns
        -------
        ndarray of shape (n_features, n_features)
        """
        check_is_fitted(self, "components_")
        try:
            precision = self._precision()
        except (np.linalg.LinAlgError, ValueError) as exc:  # singular, or inf/NaN entries
            raise self._singular_model(str(exc).rstrip(".")) from None
        if not np.isfinite(precision).all():
            raise self._singular_model("its inverse has non-finite entries")
        return precision

    def _precision(self):
        d = self.components_.shape[1]
        if self.n_components_ == 0:
            with np.errstate(divide="ignore"):  # a zero noise variance: refused by the caller
                return np.eye(d) / self.noise_variance_
        if self.noise_variance_ == 0.0:
            return scipy.linalg.inv(self.get_covariance())
        components, diff, noise = self._model_terms()
        inner = components @ components.T / noise
        with np.errstate(divide="ignore"):
            inner.flat[::inner.shape[0] + 1] += 1.0 / diff
        precision = components.T @ scipy.linalg.inv(inner) @ components
        precision /= -(noise**2)
        precision.flat[::d + 1] += 1.0 / noise
        return precision

    def _singular_model(self, detail):
        """The error for a model whose covariance cannot be inverted (constant or
        rank-deficient training data, no noise left to spread over the missing directions)."""
        return np.linalg.LinAlgError(
            f"The fitted {type(self).__name__} model's covariance is singular, so its "
            f"precision (and a PCA's log-likelihood) is undefined ({detail}): the training "
            "data is constant or spans fewer directions than features. Fit with n_components "
            "below the data's rank, so that noise_variance_ > 0, on data that varies."
        )
