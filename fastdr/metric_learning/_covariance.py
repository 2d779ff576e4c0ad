"""``Covariance``: the baseline metric, the inverse covariance of the data (metric-learn's)."""

import numpy as np
from scipy.linalg import pinvh

from .._base import BaseEstimator
from .._validation.params import validate_params
from ._base import MahalanobisMixin, components_from_metric
from ._tuples import fit_points


def data_covariance(X):
    """The sample covariance of X (n - 1 in the denominator), float64, exactly symmetric.

    The mean is removed first (the product of centred data, not the second moment minus the
    squared mean), so that columns far from the origin keep their digits.
    """
    Xc = np.asarray(X, dtype=np.float64)
    Xc = Xc - Xc.mean(axis=0)
    C = (Xc.T @ Xc) / (X.shape[0] - 1)
    return 0.5 * (C + C.T)


class Covariance(MahalanobisMixin, BaseEstimator):
    """The Mahalanobis metric of the data's own covariance: ``M = pinv(cov(X))``.

    A baseline (Mahalanobis, 1936) that learns nothing from labels: distances are measured in
    units of the data's spread along each direction. Same parameters, attributes and numbers
    as ``metric_learn.Covariance``.

    Parameters
    ----------
    preprocessor : array-like of shape (n_samples, n_features), callable or None, \
default=None
        With a preprocessor, X may be a 1-D array of indices: its rows are
        ``preprocessor[indices]`` (an array) or ``preprocessor(indices)`` (a callable).

    Attributes
    ----------
    components_ : ndarray of shape (n_features, n_features)
        L with ``L^T L = M`` (metric-learn's factor: Cholesky where M is definite).
    preprocessor_ : None, callable or ndarray
        The validated preprocessor.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when X has string column names.

    Notes
    -----
    A direction without variance (a constant feature, or features that are linear
    combinations of others) gets weight 0 through the pseudo-inverse, with one feature as
    with many; metric-learn returns ``inf`` for a single constant feature.

    Examples
    --------
    >>> import numpy as np
    >>> from fastdr.metric_learning import Covariance
    >>> X = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 1.0], [2.0, 1.0]])
    >>> Covariance().fit(X).get_mahalanobis_matrix().round(3)
    array([[0.75, 0.  ],
           [0.  , 3.  ]])
    """

    _parameter_constraints = {"preprocessor": ["array-like", callable, None]}

    def __init__(self, preprocessor=None):
        self.preprocessor = preprocessor

    def fit(self, X, y=None):
        """Compute M from the covariance of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples,) of int with a
            preprocessor. At least 2 rows.
        y : ignored

        Returns
        -------
        self
        """
        validate_params(self)
        X = fit_points(self, X)
        self.n_features_in_ = X.shape[1]
        M = pinvh(data_covariance(X))
        self.components_ = components_from_metric(0.5 * (M + M.T))
        return self
