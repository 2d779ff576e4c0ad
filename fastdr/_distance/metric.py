"""Metric resolution, in Python, before any kernel runs.

Two tiers:

* :func:`resolve_metric` (the Euclidean family, used by the GEMM kernels and the Dask
  estimators): every metric becomes Euclidean geometry on ``X L^T``. ``"euclidean"`` and
  ``"sqeuclidean"`` use the identity; ``"mahalanobis"`` with ``M`` (or scipy's ``VI``, or
  the covariance ``V``) factors ``M = L^T L`` once; a fitted metric learner (anything with
  ``components_``) supplies ``L`` directly.
* :func:`resolve_neighbors_metric` (the neighbour estimators, ``pairwise_distances`` and
  ``ClassicalMDS``): scikit-learn's ``metric``/``p``/``metric_params`` triple becomes a
  :class:`Metric` whose ``route`` names the kernel family: ``"euclidean"`` (the GEMM path
  above, which also serves ``minkowski`` with ``p=2``), ``"minkowski"`` (blocked direct
  kernels: manhattan, chebyshev, general p), ``"cosine"`` (GEMM on normalised rows),
  ``"precomputed"`` and ``"callable"`` (a Python function per pair: the slow path).
  Sparse input can branch on ``route`` without touching the resolution.
"""

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from .._kernels import codes
from .._kernels.codes import (
    BRAYCURTIS,
    CANBERRA,
    CHEBYSHEV,
    COSINE,
    MANHATTAN,
    MINKOWSKI,
    NAN_EUCLIDEAN,
    SCIPY_BRAYCURTIS,
)
from .._validation.arrays import check_array
from .._validation.matrices import check_symmetric
from ..exceptions import NotFittedError
from .scaling import unit_scale_rows
from .sklearn_metric import as_named_metric, is_distance_metric

METRICS = ("euclidean", "sqeuclidean", "mahalanobis")
MANHATTAN_NAMES = ("manhattan", "cityblock", "l1")
CHEBYSHEV_NAMES = ("chebyshev", "infinity")
#: scipy's boolean dissimilarities, of ``x != 0`` (scikit-learn converts to bool as well)
BOOLEAN_METRICS = ("dice", "jaccard", "rogerstanimoto", "russellrao", "sokalsneath", "yule")
#: Every string ``metric`` of the neighbour estimators and ``pairwise_distances``.
NEIGHBOR_METRICS = ("minkowski", "euclidean", "l2", "sqeuclidean", *MANHATTAN_NAMES,
                    *CHEBYSHEV_NAMES, "cosine", "mahalanobis", "seuclidean", "correlation",
                    "braycurtis", "canberra", *BOOLEAN_METRICS, "hamming", "haversine",
                    "nan_euclidean", "precomputed")
#: The metrics whose input may hold NaN (a missing value); inf is refused for them too.
NAN_METRICS = ("nan_euclidean",)


def allows_nan(metric):
    """True when ``metric`` (a neighbour estimator's or ``pairwise_distances``' parameter)
    reads NaN as a missing value, so the input checks must let NaN through."""
    return isinstance(metric, str) and metric in NAN_METRICS


def nan_policy(metric):
    """``check_array``'s ``allow_nonfinite`` for data searched with ``metric``: NaN passes
    for a metric that reads it as a missing value (``"nan_euclidean"``), inf never."""
    return "allow-nan" if allows_nan(metric) else False


def mahalanobis_factor(M, n_features=None, name="M"):
    """Return L with ``L^T L = M`` for a symmetric positive semidefinite M.

    Parameters
    ----------
    M : array-like of shape (d, d)
    n_features : int or None
        Expected d, when known.
    name : str
        How M is called in errors.

    Returns
    -------
    ndarray of shape (r, d)
        ``r`` is the rank of M (rows for eigenvalues that are zero to round-off are dropped).
    """
    M = check_array(M, name=name, dtype=np.float64)
    if M.shape[0] != M.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {M.shape}.")
    if n_features is not None and M.shape[0] != n_features:
        raise ValueError(
            f"{name} has shape {M.shape}, but the data have {n_features} features; "
            f"pass a {n_features} x {n_features} matrix."
        )
    scale = max(np.abs(M).max(), np.finfo(np.float64).tiny)
    check_symmetric(M, name)
    values, vectors = np.linalg.eigh(0.5 * (M + M.T))
    tol = M.shape[0] * np.finfo(np.float64).eps * max(values.max(), 0.0) * 10
    if values.min() < -max(tol, 1e-12 * scale):
        raise ValueError(
            f"{name} must be positive semidefinite; its smallest eigenvalue is "
            f"{values.min():.3g}. A Mahalanobis matrix must satisfy x^T M x >= 0 for every x; "
            "project it onto the PSD cone (clip negative eigenvalues) first."
        )
    keep = values > tol
    return (np.sqrt(values[keep])[:, None] * vectors[:, keep].T)[::-1].copy()


def resolve_metric(metric, metric_params, n_features):
    """Resolve a metric specification into ``(linear_map, squared)``.

    Returns
    -------
    linear_map : ndarray of shape (r, d) or None
        Apply ``X @ linear_map.T`` before Euclidean geometry; None means the identity.
    squared : bool
        True when distances are reported squared (``"sqeuclidean"``).
    """
    if hasattr(metric, "components_") or hasattr(metric, "get_mahalanobis_matrix"):
        if not hasattr(metric, "components_"):
            raise NotFittedError(
                f"metric={metric!r} is a metric learner that is not fitted. Fit it before "
                "passing it. Cross-validation and sklearn.base.clone copy it unfitted: to "
                "keep a fitted learner, pass sklearn.frozen.FrozenEstimator(learner); to "
                "learn the metric on each training fold, use a pipeline instead, "
                "make_pipeline(learner, KNeighborsClassifier())."
            )
        L = np.asarray(metric.components_, dtype=np.float64)
        if L.ndim != 2 or L.shape[1] != n_features:
            raise ValueError(
                f"The metric learner's components_ have shape {L.shape}, but the data have "
                f"{n_features} features."
            )
        return L, False
    if not isinstance(metric, str) or metric not in METRICS:
        raise ValueError(
            f"metric must be one of {', '.join(repr(m) for m in METRICS)} or a fitted metric "
            f"learner (an object with components_); got {metric!r}."
        )
    params = dict(metric_params or {})
    if metric == "mahalanobis":
        keys = [key for key in ("M", "VI", "V") if key in params]
        if len(keys) != 1:
            raise ValueError(
                "metric='mahalanobis' needs exactly one of metric_params={'VI': array} (the "
                "inverse covariance, as in scipy and scikit-learn), {'V': array} (the "
                f"covariance) or {{'M': array}}; got {sorted(params)}."
            )
        key = keys[0]
        matrix = params.pop(key)
        if key == "V":
            V = check_array(matrix, name="metric_params['V']", dtype=np.float64)
            if V.shape[0] != V.shape[1]:
                raise ValueError(f"metric_params['V'] must be square, got shape {V.shape}.")
            matrix = np.linalg.pinv(V, hermitian=True)
        L = mahalanobis_factor(matrix, n_features, name=f"metric_params[{key!r}]")
        if params:
            raise ValueError(f"Unknown metric_params for 'mahalanobis': {sorted(params)}.")
        return L, False
    if params:
        raise ValueError(f"metric={metric!r} takes no metric_params; got {sorted(params)}.")
    return None, metric == "sqeuclidean"


def apply_linear_map(X, linear_map):
    """Return ``X @ linear_map.T`` in X's dtype (or X itself for the identity)."""
    if linear_map is None:
        return X
    return np.ascontiguousarray(X @ linear_map.T.astype(X.dtype, copy=False))


@dataclass(frozen=True)
class Metric:
    """A resolved metric: which kernel family runs it and how its values are reported.

    Attributes
    ----------
    route : {"euclidean", "minkowski", "cosine", "precomputed", "callable"}
    name : str or callable
        scikit-learn's ``effective_metric_``.
    params : dict
        scikit-learn's ``effective_metric_params_``.
    linear_map : ndarray or None
        ``"euclidean"`` route: apply ``X @ linear_map.T`` first (Mahalanobis, learners).
    squared : bool
        ``"euclidean"`` route: report squared distances.
    kind : int
        ``"minkowski"``/``"cosine"`` routes: the metric code of
        :mod:`fastdr._kernels.codes` (MANHATTAN, CHEBYSHEV, MINKOWSKI, COSINE, or one the
        kernels compute pair by pair, such as NAN_EUCLIDEAN).
    p : float
        ``"minkowski"`` route with ``kind == MINKOWSKI``: the exponent.
    column_scale : ndarray or None
        Weighted Minkowski: columns are multiplied by ``w ** (1/p)`` first.
    func : callable or None
        ``"callable"`` route: ``func(x, y, **func_params)`` for one pair of rows.
    centre_rows : bool
        ``"cosine"`` route: subtract each row's mean first (the correlation distance).
    """

    route: str
    name: object
    params: dict = field(default_factory=dict)
    linear_map: object = None
    squared: bool = False
    kind: int = -1
    p: float = 2.0
    column_scale: object = None
    func: object = None
    centre_rows: bool = False

    def reported(self, reduced):
        """Reduced kernel values (float64) -> the metric's distances (float64)."""
        if self.route == "euclidean":
            return reduced if self.squared else np.sqrt(reduced)
        if self.route == "minkowski" and self.kind == MINKOWSKI:
            return reduced ** (1.0 / self.p)
        if self.kind == NAN_EUCLIDEAN:
            # the kernels' inf marks a pair with no feature present in both: scikit-learn's NaN
            return np.where(np.isinf(reduced), np.nan, reduced)
        return reduced

    def reduced_radius(self, radius):
        """A radius in the metric's distances -> the threshold on reduced values."""
        radius = float(radius)
        if self.route == "euclidean":
            return radius * radius if not self.squared else radius
        if self.route == "minkowski" and self.kind == MINKOWSKI:
            return radius ** self.p
        if self.kind == NAN_EUCLIDEAN and math.isinf(radius):
            # an infinite radius still excludes the pairs without a distance (key inf), as
            # scikit-learn's NaN <= radius is False
            return float(np.finfo(np.float64).max)
        return radius

    def transform_rows(self, X):
        """X as the kernels see it: mapped (Euclidean route), column-scaled (weighted
        Minkowski) or row-normalised (cosine; zero rows stay zero, as in scikit-learn)."""
        if self.route == "euclidean":
            return apply_linear_map(X, self.linear_map)
        if self.name == "haversine" and X.shape[1] != 2:
            raise ValueError(f"Haversine distance only valid in 2 dimensions: X has "
                             f"{X.shape[1]} features. Pass (latitude, longitude) in radians.")
        if self.kind == NAN_EUCLIDEAN:
            _check_nan_euclidean_magnitude(X)
        if self.route == "minkowski" and self.column_scale is not None:
            return np.ascontiguousarray(X * self.column_scale.astype(X.dtype))
        if self.route == "cosine":
            if self.centre_rows:
                X = X - X.mean(axis=1, keepdims=True, dtype=np.float64).astype(X.dtype)
            X = unit_scale_rows(X)  # exact; keeps the norms finite at any scale
            norms = np.sqrt(np.einsum("ij,ij->i", X, X))
            norms[norms == 0] = 1
            return np.ascontiguousarray(X / norms[:, None])
        return X


def _check_nan_euclidean_magnitude(X):
    """Refuse values whose squared differences, summed over the features and scaled by the
    missing share (at most d), would overflow float64: the kernels' inf means "no feature in
    common", so an overflow must not reach them."""
    largest = float(np.fmax.reduce(np.abs(X), axis=None)) if X.size else 0.0  # NaN skipped
    if largest > 0 and 2 * (np.log(2 * largest) + np.log(max(X.shape[1], 1))) > 700:
        raise ValueError(
            f"X holds values too large for metric='nan_euclidean': the largest absolute value "
            f"is {largest:.3g}, so squared distances overflow float64. Scale the data first, "
            "for example with sklearn.preprocessing.StandardScaler (it ignores NaN).")


def _valid_metrics_text():
    return (f"one of {', '.join(repr(m) for m in NEIGHBOR_METRICS)}, a callable "
            "f(x, y) -> float, or a fitted metric learner (an object with components_)")


def resolve_neighbors_metric(metric, p, metric_params, n_features, *, warn_p=True,
                             pairwise=False):
    """Resolve scikit-learn's ``metric``, ``p`` and ``metric_params`` into a :class:`Metric`.

    Parameters
    ----------
    metric : str, callable, fitted metric learner or sklearn.metrics.DistanceMetric
        A DistanceMetric object is read as its name and parameters
        (:func:`fastdr._distance.sklearn_metric.as_named_metric`).
    p : float or None
        The Minkowski exponent (``metric="minkowski"`` only; None means 2).
        ``metric_params["p"]`` overrides it, with scikit-learn's ``SyntaxWarning``.
    metric_params : dict or None
        ``{"p": .., "w": ..}`` for Minkowski, ``{"VI"|"V"|"M": ..}`` for Mahalanobis, any
        keywords of a callable.
    n_features : int or None
        Features of the data (None for ``"precomputed"``).
    warn_p : bool
        Warn when both ``p`` and ``metric_params["p"]`` are given.
    pairwise : bool
        True for ``pairwise_distances``, whose ``"braycurtis"`` is scipy's,
        ``sum |x - y| / sum |x + y|``; False for the neighbour estimators, whose
        ``"braycurtis"`` (as scikit-learn's neighbours and its ``DistanceMetric``) is
        ``sum |x - y| / sum (|x| + |y|)``. The two differ on signed data only.

    Returns
    -------
    Metric
    """
    # a sklearn.metrics.DistanceMetric object: its own name and parameters (p and
    # metric_params are ignored, as scikit-learn ignores them, warning as it does)
    if is_distance_metric(metric) and warn_p and p is not None and "p" in (metric_params or {}):
        warnings.warn("Parameter p is found in metric_params. The corresponding parameter "
                      "from __init__ is ignored.", SyntaxWarning, stacklevel=3)
    scipy_names = pairwise and isinstance(metric, str)  # not a DistanceMetric object's
    metric, p, metric_params = as_named_metric(metric, p, metric_params)
    params = dict(metric_params or {})
    if hasattr(metric, "components_") or hasattr(metric, "get_mahalanobis_matrix"):
        linear_map, squared = resolve_metric(metric, params, n_features)
        return Metric("euclidean", metric, params, linear_map=linear_map, squared=squared)
    if callable(metric):
        return Metric("callable", metric, params, func=metric)
    if not isinstance(metric, str) or metric not in NEIGHBOR_METRICS:
        raise ValueError(
            f"Unknown metric {metric!r}: metric must be {_valid_metrics_text()}. Pick one of "
            "those (scikit-learn's names)."
        )
    if metric == "precomputed":
        if params:
            raise ValueError(f"metric='precomputed' takes no metric_params; got {sorted(params)}.")
        return Metric("precomputed", metric)
    if metric == "minkowski":
        if "p" in params:
            if warn_p and p is not None:
                warnings.warn("Parameter p is found in metric_params. The corresponding "
                              "parameter from __init__ is ignored.", SyntaxWarning,
                              stacklevel=3)
            p = params.pop("p")
        p = 2.0 if p is None else p
        w = params.pop("w", None)
        if params:
            raise ValueError(f"Unknown metric_params for 'minkowski': {sorted(params)}; "
                             "it takes 'p' and 'w'.")
        if not isinstance(p, (int, float, np.integer, np.floating)) or not p > 0:
            raise ValueError(f"p must be a positive number for the Minkowski metric; got {p!r}. "
                             "Use p >= 1 (1: manhattan, 2: euclidean, inf: chebyshev).")
        p = float(p)
        if w is not None:
            return weighted_minkowski(p, w, n_features)
        if p == 2:
            return Metric("euclidean", "euclidean")
        if p == 1:
            return Metric("minkowski", "manhattan", kind=MANHATTAN, p=1.0)
        if math.isinf(p):
            return Metric("minkowski", "chebyshev", kind=CHEBYSHEV, p=math.inf)
        return Metric("minkowski", "minkowski", {"p": p, "w": None}, kind=MINKOWSKI, p=p)
    if metric in ("euclidean", "l2", "sqeuclidean", "mahalanobis"):
        name = "euclidean" if metric == "l2" else metric
        linear_map, squared = resolve_metric(name, params, n_features)
        return Metric("euclidean", metric, dict(metric_params or {}), linear_map=linear_map,
                      squared=squared)
    if metric == "seuclidean":
        return _standardised_euclidean(params, n_features)
    if params:
        raise ValueError(f"metric={metric!r} takes no metric_params; got {sorted(params)}.")
    if metric == "nan_euclidean":  # computed one pair at a time: missing features vary
        return Metric("minkowski", metric, kind=NAN_EUCLIDEAN, p=2.0)
    if metric in _PAIR_CODES:  # (haversine's two columns: checked on the rows, below)
        return Metric("minkowski", metric, kind=_PAIR_CODES[metric], p=1.0)
    if metric == "braycurtis":
        kind = SCIPY_BRAYCURTIS if scipy_names else BRAYCURTIS
        return Metric("minkowski", metric, kind=kind, p=1.0)
    if metric == "canberra":
        return Metric("minkowski", metric, kind=CANBERRA, p=1.0)
    if metric == "correlation":
        return Metric("cosine", metric, kind=COSINE, centre_rows=True)
    if metric in MANHATTAN_NAMES:
        return Metric("minkowski", metric, kind=MANHATTAN, p=1.0)
    if metric in CHEBYSHEV_NAMES:
        return Metric("minkowski", metric, kind=CHEBYSHEV, p=math.inf)
    return Metric("cosine", metric, kind=COSINE)


#: The metrics the kernels compute one pair at a time, and their codes.
_PAIR_CODES = {"hamming": codes.HAMMING, "dice": codes.DICE, "jaccard": codes.JACCARD,
               "rogerstanimoto": codes.ROGERSTANIMOTO, "russellrao": codes.RUSSELLRAO,
               "sokalsneath": codes.SOKALSNEATH, "yule": codes.YULE,
               "haversine": codes.HAVERSINE}


def _standardised_euclidean(params, n_features):
    """``seuclidean``: the Euclidean distance on columns divided by ``sqrt(V)``."""
    V = params.pop("V", None)
    if V is None or params:
        raise ValueError("metric='seuclidean' takes metric_params={'V': variances} (one "
                         f"positive variance per feature); got {sorted(params) or 'none'}. "
                         "Pass V=X.var(axis=0, ddof=1) for the training data's variances.")
    V = check_array(np.reshape(np.asarray(V, dtype=np.float64), (1, -1)), name="V")[0]
    if n_features is not None and V.shape[0] != n_features:
        raise ValueError(f"metric_params['V'] has {V.shape[0]} variances, but the data have "
                         f"{n_features} features; pass one per feature.")
    if not (V > 0).all():
        raise ValueError("metric_params['V'] must hold positive variances; got a value <= 0.")
    return Metric("euclidean", "seuclidean", {"V": V}, linear_map=np.diag(1.0 / np.sqrt(V)))


def weighted_minkowski(p, w, n_features):
    """Weighted Minkowski as the plain one on columns scaled by ``w ** (1/p)``."""
    w = check_array(np.reshape(np.asarray(w, dtype=np.float64), (1, -1)), name="w")[0]
    if n_features is not None and w.shape[0] != n_features:
        raise ValueError(f"metric_params['w'] has {w.shape[0]} weights, but the data have "
                         f"{n_features} features; pass one weight per feature.")
    if (w < 0).any():
        raise ValueError("metric_params['w'] must be non-negative; got a negative weight.")
    if math.isinf(p):
        raise ValueError("Weighted Minkowski ('w') needs a finite p; use p < inf.")
    scale = w ** (1.0 / p)
    kind = MANHATTAN if p == 1 else MINKOWSKI
    return Metric("minkowski", "minkowski", {"p": p, "w": w}, kind=kind, p=p,
                  column_scale=scale)
