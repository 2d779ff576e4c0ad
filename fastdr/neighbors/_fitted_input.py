"""A fitted neighbours index passed as X of ``fit``: its training points are reused, as
scikit-learn reuses them.

Accepted: a fitted fastdr neighbours estimator, a fitted scikit-learn one (any
``sklearn.neighbors`` ``NeighborsBase``: NearestNeighbors, KNeighborsClassifier, ...), and a
scikit-learn ``BallTree`` or ``KDTree``. Only the data are reused: the new estimator searches
them with its own ``metric`` and ``algorithm`` (scikit-learn also reuses the index itself,
so a tree built with another metric answers with that metric there).

scikit-learn's classes are looked up in ``sys.modules``, never imported here: an object of
theirs can only exist once its module is loaded, so importing fastdr stays light.
"""

import sys

import numpy as np

from .._validation.arrays import check_is_fitted

__all__ = ["check_same_params", "is_fastdr_index", "is_fitted_estimator", "training_data"]

#: scikit-learn's modules and class names whose instances hold training points
_SKLEARN_INDEXES = (
    ("sklearn.neighbors._base", "NeighborsBase"),
    ("sklearn.neighbors._ball_tree", "BallTree"),
    ("sklearn.neighbors._kd_tree", "KDTree"),
)


def _sklearn_class(obj):
    """The scikit-learn index class ``obj`` is an instance of (its name), or None."""
    for module_name, name in _SKLEARN_INDEXES:
        module = sys.modules.get(module_name)
        cls = getattr(module, name, None) if module is not None else None
        if cls is not None and isinstance(obj, cls):
            return name
    return None


def is_fastdr_index(X):
    """Whether X is one of fastdr's neighbours estimators (fitted or not): they lend their
    training points through ``_training_points``."""
    return callable(getattr(X, "_training_points", None))


def training_data(X):
    """X itself, or the training points of the fitted index X.

    Parameters
    ----------
    X : array-like, sparse matrix, fitted neighbours estimator, BallTree or KDTree

    Returns
    -------
    array-like or sparse matrix
        For an index: its training points (a precomputed matrix for an estimator fitted
        with ``metric="precomputed"``); otherwise X unchanged.

    Raises
    ------
    NotFittedError
        For an estimator that has not been fitted.
    """
    if is_fastdr_index(X):
        return X._training_points()
    kind = _sklearn_class(X)
    if kind is None:
        return X
    if kind == "NeighborsBase":
        check_is_fitted(X, "_fit_X")
        return X._fit_X
    return np.asarray(X.data)  # a tree's points (a memoryview in scikit-learn)


def is_fitted_estimator(X):
    """Whether X is a neighbours estimator (fastdr's or scikit-learn's), not data or a tree:
    what :func:`fastdr.kneighbors_graph` and :func:`fastdr.radius_neighbors_graph` take
    as X in place of the points."""
    return is_fastdr_index(X) or _sklearn_class(X) == "NeighborsBase"


def check_same_params(estimator, **params):
    """Refuse graph-function parameters that contradict the estimator passed as X
    (scikit-learn's rule and words: the estimator's own are used)."""
    own = estimator.get_params()
    for name, value in params.items():
        if not _same_value(value, own[name]):
            raise ValueError(
                f"Got {value} for {name}, while the estimator has {own[name]} for the same "
                f"parameter. Pass {name}={own[name]!r} (the fitted estimator's), or pass the "
                "data instead of the estimator."
            )


def _same_value(a, b):
    """Equality of two parameter values that may hold arrays (a ``metric_params`` dict of
    ``{"VI": ndarray}``, say), where ``==`` is elementwise: arrays by ``np.array_equal``,
    dicts, lists and tuples item by item, anything else by ``==``."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        try:
            return np.array_equal(np.asarray(a), np.asarray(b))
        except (TypeError, ValueError):
            return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_value(a[key], b[key]) for key in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
