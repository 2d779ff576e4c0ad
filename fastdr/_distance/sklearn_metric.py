"""A ``sklearn.metrics.DistanceMetric`` object as a metric: read as fastdr's own metric.

scikit-learn's neighbour estimators take ``metric=DistanceMetric.get_metric(name, **params)``
(its 64-bit or 32-bit variant) as well as the name. fastdr does not call the object: it reads
the object's metric and parameters and resolves them like the name and ``metric_params``, so
fastdr's kernels do the work. The parameters are read through the object's pickling state
(``__getstate__``, what ``pickle`` uses: ``(p, vec, mat)``, plus ``(func, kwargs)`` for
``"pyfunc"``), as DistanceMetric has no public accessor for them.

Nothing here imports scikit-learn: an object can only be a DistanceMetric when
``sklearn.metrics`` is already imported, so the test looks there and nowhere else.
"""

import sys

import numpy as np

#: scikit-learn's DistanceMetric classes (without their 64/32 suffix) -> fastdr's metric name
#: and how its parameters are read from the state ``(p, vec, mat)``: "p_w" (Minkowski's p
#: and weights), "V" (seuclidean's variances), "VI" (Mahalanobis' inverse covariance),
#: None (no parameters).
_BY_CLASS = {
    "EuclideanDistance": ("euclidean", None),
    "SEuclideanDistance": ("seuclidean", "V"),
    "ManhattanDistance": ("manhattan", None),
    "ChebyshevDistance": ("chebyshev", None),
    "MinkowskiDistance": ("minkowski", "p_w"),
    "MahalanobisDistance": ("mahalanobis", "VI"),
    "HammingDistance": ("hamming", None),
    "CanberraDistance": ("canberra", None),
    "BrayCurtisDistance": ("braycurtis", None),
    "JaccardDistance": ("jaccard", None),
    "DiceDistance": ("dice", None),
    "RogersTanimotoDistance": ("rogerstanimoto", None),
    "RussellRaoDistance": ("russellrao", None),
    "SokalSneathDistance": ("sokalsneath", None),
    "HaversineDistance": ("haversine", None),
}


def is_distance_metric(obj):
    """True when ``obj`` is a ``sklearn.metrics.DistanceMetric`` instance (any variant)."""
    metrics = sys.modules.get("sklearn.metrics")
    base = getattr(metrics, "DistanceMetric", None)
    return isinstance(base, type) and isinstance(obj, base)


def distance_metric_spec(obj):
    """The fastdr metric behind a DistanceMetric object.

    Parameters
    ----------
    obj : sklearn.metrics.DistanceMetric

    Returns
    -------
    metric : str or callable
        fastdr's metric name, or the function of a ``"pyfunc"`` DistanceMetric.
    params : dict
        Its ``metric_params`` (the function's keywords for ``"pyfunc"``).

    Raises
    ------
    ValueError
        For a DistanceMetric fastdr has no kernel for (for example ``"matching"``).
    """
    cls = type(obj).__name__.removesuffix("64").removesuffix("32")
    state = obj.__getstate__()
    if cls == "PyFuncDistance":
        func, kwargs = state[3], state[4]
        return func, dict(kwargs or {})
    if cls not in _BY_CLASS:
        known = sorted(name for name, _ in _BY_CLASS.values())
        raise ValueError(
            f"metric={obj!r} is a scikit-learn DistanceMetric ({type(obj).__name__}) that "
            f"fastdr has no kernel for; fastdr maps the DistanceMetric objects of "
            f"{', '.join(repr(name) for name in known)} and 'pyfunc'. Pass one of those, or "
            "the distance as a callable f(x, y) -> float.")
    name, reading = _BY_CLASS[cls]
    p, vec, mat = state[0], np.asarray(state[1]), np.asarray(state[2])
    if reading == "p_w":
        # an unweighted MinkowskiDistance stores an empty weight vector
        return name, {"p": float(p), **({"w": vec.copy()} if vec.size else {})}
    if reading == "V":
        return name, {"V": vec.copy()}
    if reading == "VI":
        return name, {"VI": mat.copy()}
    return name, {}


def as_named_metric(metric, p, metric_params):
    """``(metric, p, metric_params)`` with a DistanceMetric object replaced by fastdr's name
    (or function) and its own parameters; anything else is returned as it is.

    The object's parameters win and the estimator's ``p`` and ``metric_params`` are ignored,
    as in scikit-learn (which hands the object itself to its searches).
    """
    if not is_distance_metric(metric):
        return metric, p, metric_params
    name, params = distance_metric_spec(metric)
    return name, None, params
