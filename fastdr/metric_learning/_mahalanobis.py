"""``Mahalanobis``: a fixed metric given by M, by its factor P, or by diagonal weights."""

import numpy as np

from .._base import BaseEstimator
from .._distance.metric import mahalanobis_factor
from .._validation.arrays import check_array, check_finite
from .._validation.feature_names import record_feature_names
from .._validation.params import validate_params
from ._base import MahalanobisMixin


class Mahalanobis(MahalanobisMixin, BaseEstimator):
    """A Mahalanobis metric ``d(x, y) = sqrt((x - y)^T M (x - y))`` with ``M = P^T P``.

    Give exactly one of ``M``, ``components`` or ``weights``. The metric needs no fitting:
    ``transform``, ``pairwise`` and ``get_mahalanobis_matrix`` work right away (``fit``
    only validates, and checks the feature count of X when given). Parameters are validated
    on first use; after changing one, the next use revalidates.

    Parameters
    ----------
    M : array-like of shape (d, d) or None
        A symmetric positive semidefinite matrix. It is factored once as ``M = P^T P``
        (eigendecomposition); P keeps one row per non-zero eigenvalue, so a rank-r M gives a
        ``transform`` with r columns (a dimension reduction).
    components : array-like of shape (r, d) or None
        The factor P itself (any real matrix); ``M = P^T P``.
    weights : array-like of shape (d,) or None
        Non-negative feature weights: ``M = diag(weights)``, the weighted Euclidean distance
        ``sqrt(sum_k w_k (x_k - y_k)^2)``. ``transform`` scales feature k by ``sqrt(w_k)``
        and keeps all d columns.

    Attributes
    ----------
    components_ : ndarray of shape (r, d)
        P, float64.
    n_features_in_ : int
        d.

    Examples
    --------
    >>> import numpy as np
    >>> from fastdr import Mahalanobis, KNeighborsClassifier
    >>> metric = Mahalanobis(weights=[4.0, 1.0])
    >>> metric.pairwise([[0.0, 0.0]], [[1.0, 1.0]])
    array([[2.23606798]])
    """

    _fit_saw_X = False  # column names are checked only once fit has seen X
    _parameter_constraints = {
        "M": ["array-like", None],
        "components": ["array-like", None],
        "weights": ["array-like", None],
    }

    def __init__(self, *, M=None, components=None, weights=None):
        self.M = M
        self.components = components
        self.weights = weights

    def fit(self, X=None, y=None):
        """Validate the parameters (and the feature count of X, when given).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or None
        y : ignored

        Returns
        -------
        self
        """
        P = self._factor()
        if X is not None:
            record_feature_names(self, X)
            self._fit_saw_X = True
            X = check_array(X)
            if X.shape[1] != P.shape[1]:
                raise ValueError(
                    f"X has {X.shape[1]} features, but the metric is defined on {P.shape[1]} "
                    f"features. Pass data with {P.shape[1]} columns or a matching metric."
                )
        return self

    @property
    def components_(self):
        """P with ``M = P^T P``, shape (r, d)."""
        return self._factor()

    @property
    def n_features_in_(self):
        """The number of features d the metric is defined on."""
        return self._factor().shape[1]

    def get_mahalanobis_matrix(self):
        """The Mahalanobis matrix M.

        Returns
        -------
        ndarray of shape (d, d)
            ``(M + M^T) / 2`` as given, ``diag(weights)``, or ``P^T P``; float64.
        """
        P = self._factor()
        if self.M is not None:
            M = np.asarray(self.M, dtype=np.float64)
            return 0.5 * (M + M.T)
        if self.weights is not None:
            return np.diag(np.asarray(self.weights, dtype=np.float64).ravel())
        return P.T @ P

    def _factor(self):
        key = (id(self.M), id(self.components), id(self.weights))
        cached = self.__dict__.get("_cached_factor")
        if cached is not None and cached[0] == key:
            return cached[2]
        P = self._validate_factor()
        # keep the parameter objects alive so that their ids cannot be reused
        self.__dict__["_cached_factor"] = (key, (self.M, self.components, self.weights), P)
        return P

    def _validate_factor(self):
        validate_params(self)
        given = [name for name in ("M", "components", "weights")
                 if getattr(self, name) is not None]
        if len(given) != 1:
            received = "none" if not given else ", ".join(given)
            raise ValueError(
                "Mahalanobis needs exactly one of M, components or weights; got "
                f"{received}. Pass M=<d x d PSD matrix>, components=<r x d factor> or "
                "weights=<d non-negative weights>."
            )
        if self.M is not None:
            return mahalanobis_factor(self.M, name="M")
        if self.components is not None:
            P = check_array(self.components, name="components", dtype=np.float64)
            return np.ascontiguousarray(P)
        w = np.asarray(self.weights)
        if w.ndim != 1 or w.shape[0] == 0:
            raise ValueError(
                f"weights must be a non-empty 1-D array of feature weights; got shape "
                f"{w.shape}."
            )
        w = check_array(w, name="weights", dtype=np.float64, ensure_2d=False)
        check_finite(w, "weights")
        if (w < 0).any():
            raise ValueError(
                f"weights must be non-negative: M = diag(weights) must be positive "
                f"semidefinite, but the smallest weight is {w.min():.3g}. Pass weights >= 0."
            )
        return np.diag(np.sqrt(w))
