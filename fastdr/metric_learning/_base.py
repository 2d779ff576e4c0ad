"""What every Mahalanobis metric shares: ``M = P^T P``, ``transform``, ``pairwise``, and
the parameter and input checks of the learners."""

from numbers import Integral, Real

import numpy as np

from .._base import TransformerMixin
from .._distance.metric import apply_linear_map
from .._eigen import spectral_pairs
from .._validation.arrays import (
    check_array,
    check_classification_targets,
    check_is_fitted,
    check_n_features,
    check_query,
    check_X_y,
)
from .._validation.magnitudes import check_distance_magnitude
from .._validation.params import N_JOBS, Interval

#: Parameters that NCA and MMC share, with their constraints (see ``validate_params``).
LEARNER_CONSTRAINTS = {
    "n_components": [Interval(Integral, 1, None, closed="left"), None],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="left")],
    "random_state": ["random_state"],
    "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
    "n_jobs": N_JOBS,
}


class MahalanobisMixin(TransformerMixin):
    """A metric ``d(x, y) = sqrt((x - y)^T M (x - y))`` with ``M = P^T P``.

    The class defines ``components_`` (P, of shape (r, d)); ``transform`` maps X to
    ``X P^T``, so Euclidean geometry on the transformed data is the Mahalanobis geometry on
    X. Any fitted instance plugs into fastdr's neighbours as ``metric=instance``.
    """

    #: whether ``fit`` saw X (and so recorded its column names); Mahalanobis needs no fit
    _fit_saw_X = True

    def _check_query(self, X, method, name="X"):
        if self._fit_saw_X:
            return check_query(self, X, method, name=name)
        arr = check_array(X, name=name)
        check_n_features(self, arr, method)
        return arr

    def get_mahalanobis_matrix(self):
        """The Mahalanobis matrix ``M = P^T P``.

        Returns
        -------
        ndarray of shape (n_features, n_features)
            Symmetric positive semidefinite, float64.
        """
        check_is_fitted(self, "components_")
        P = np.asarray(self.components_, dtype=np.float64)
        return P.T @ P

    def transform(self, X):
        """Map X into the metric space: ``X P^T``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, r)
            In X's dtype (float32 stays float32); r is the number of rows of
            ``components_``.
        """
        check_is_fitted(self, "components_")
        X_arr = self._check_query(X, "transform")
        return apply_linear_map(X_arr, self.components_)

    def pairwise(self, X, Y=None, *, n_jobs=None):
        """Mahalanobis distances between the rows of X and of Y (or of X).

        Parameters
        ----------
        X : array-like of shape (m, n_features)
        Y : array-like of shape (n, n_features) or None
        n_jobs : int or None
            Threads for this call only.

        Returns
        -------
        ndarray of shape (m, n)
            In X's dtype; exactly 0 on the diagonal when Y is None.

        Raises
        ------
        fastdr.MemoryBudgetError
            When the m x n result would not fit in the memory budget.
        """
        from ..pairwise import pairwise_distances

        check_is_fitted(self, "components_")
        X_arr = self._check_query(X, "pairwise")
        if Y is not None:
            Y = self._check_query(Y, "pairwise", name="Y")
        return pairwise_distances(X_arr, Y, metric=self, n_jobs=n_jobs)


def check_labelled_data(X, y, learner, needs="", min_classes=2):
    """The input checks every supervised metric learner shares.

    X must be finite, of at least two rows, with values small enough for squared distances;
    y must hold at least ``min_classes`` classes.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    learner : str
        The learner's name, for the messages.
    needs : str
        Why two classes are needed, appended to "needs at least 2 classes".
    min_classes : {1, 2}
        1 where one class is a valid (if trivial) problem: NCA's objective is then constant
        and its fit returns the initial map, as scikit-learn's does.

    Returns
    -------
    X : ndarray
    classes : ndarray
        Sorted class labels.
    codes : ndarray of int64
        Each row's index into ``classes``.
    """
    X, y = check_X_y(X, y, min_samples=2)
    check_distance_magnitude(X)
    classes, codes = check_classification_targets(y, min_classes=1)
    if classes.shape[0] < min_classes:
        raise ValueError(
            f"{learner} needs at least 2 classes{needs}; y has a single class "
            f"({classes[0].tolist()!r}). "
            "Pass labels of two or more classes."
        )
    return X, classes, codes


def components_from_psd(M, n_components=None):
    """Factor a symmetric PSD matrix as ``M = P^T P`` with P's rows by decreasing weight.

    Parameters
    ----------
    M : ndarray of shape (d, d)
        Symmetric positive semidefinite (negative round-off eigenvalues are clipped).
    n_components : int or None
        Keep the top ``n_components`` rows (the best rank-r approximation of M); None keeps
        all d rows, zero rows included, so ``transform`` always returns d columns.

    Returns
    -------
    ndarray of shape (r, d)
        Row k is ``sqrt(lambda_k) v_k^T``; each eigenvector's largest entry is positive.
    """
    # the whole spectrum, then the top rows: a truncated M gets the same rows as the full
    # one even where eigenvalues are round-off (a subset solve would differ there)
    values, vectors = spectral_pairs(0.5 * (M + M.T), None, solver="dense",
                                     what="The Mahalanobis matrix M", psd=True)
    values, vectors = values[:n_components], vectors[:, :n_components]
    return np.ascontiguousarray(np.sqrt(values)[:, None] * vectors.T)


def project_psd(M):
    """Nearest symmetric positive semidefinite matrix in Frobenius norm (eigh, clip).

    Parameters
    ----------
    M : ndarray of shape (d, d)

    Returns
    -------
    ndarray of shape (d, d)
        ``V max(Lambda, 0) V^T`` for the eigendecomposition of ``(M + M^T) / 2``; exactly
        symmetric.
    """
    values, vectors = np.linalg.eigh(0.5 * (M + M.T))
    positive = values > 0
    V = vectors[:, positive]
    out = (V * values[positive]) @ V.T
    return 0.5 * (out + out.T)
