"""Class scores, predictions and probabilities of a fitted linear discriminant analysis.

The fitted model stores its scores as ``decision_k(x) = x^T score_coef_k + score_intercept_k
+ common(x)`` (:func:`fastdr.discriminant._solvers.gaussian_scores`): the part common to every class
changes neither the argmax nor the softmax, so predictions and probabilities leave it out
(it is large and cancels its digits far from the origin); ``decision_function`` adds it.
"""

import numpy as np
import scipy.special

from .._validation.arrays import check_is_fitted, check_query


class LinearScoresMixin:
    """``decision_function``, ``predict``, ``predict_proba`` and ``predict_log_proba`` from
    ``_score_coef``, ``_score_intercept`` and ``_common`` (None, or ``(coef, offset)`` of
    the common part ``x^T coef - offset``)."""

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
            # the part of the Gaussian score common to every class (see the module docstring)
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
