"""Metric resolution: every supported metric becomes Euclidean geometry on ``X L^T``.

``"euclidean"`` and ``"sqeuclidean"`` use the identity; ``"mahalanobis"`` with ``M`` (or
scipy's name ``VI``) factors ``M = L^T L`` once; a fitted metric learner (anything with
``components_``) supplies ``L`` directly.
"""

import numpy as np

from ._validation import check_array, check_symmetric

METRICS = ("euclidean", "sqeuclidean", "mahalanobis")


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
            raise ValueError(
                f"metric={metric!r} is not fitted; fit the metric learner before using it."
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
        if "M" in params and "VI" in params:
            raise ValueError("metric_params must hold either 'M' or 'VI', not both.")
        key = "M" if "M" in params else "VI" if "VI" in params else None
        if key is None:
            raise ValueError(
                "metric='mahalanobis' needs metric_params={'M': array} (or {'VI': array}, "
                "the inverse covariance, as in scipy)."
            )
        L = mahalanobis_factor(params.pop(key), n_features, name=f"metric_params[{key!r}]")
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
