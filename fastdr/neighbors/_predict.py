"""k-NN classification (majority or distance-weighted vote) and regression (mean)."""

import warnings

import numpy as np

from .._base import ClassifierMixin, RegressorMixin
from .._distance.metric import nan_policy
from .._kernels.knn.vote import class_votes, inverse_distance_weights, weighted_means
from .._runtime.progress import StageLog
from .._runtime.threads import parallel_section
from .._validation.arrays import check_classification_targets, check_is_fitted
from .._validation.params import StrOptions
from ..exceptions import DataConversionWarning, compatible
from ._base import NeighborsBase
from ._fitted_input import training_data

_WEIGHTS = ("uniform", "distance")


def _row_normalised(weights):
    """Weights divided by their row's largest, so that no sum of them can overflow."""
    return weights / weights.max(axis=1, keepdims=True)


def neighbour_weights(sq_dist, weights, dtype, n_jobs, *, squared=True):
    """Vote weights of the neighbours at squared distances ``sq_dist``, each row scaled to
    a largest weight of 1. Shared by the in-memory and the Dask k-NN estimators.

    Parameters
    ----------
    sq_dist : ndarray of shape (n_queries, n_neighbors)
    weights : {"uniform", "distance"} or callable
        The estimator's ``weights``; a callable gets the distances in ``dtype``.
    dtype : numpy dtype
        The training dtype.
    n_jobs : int or None
        Threads of the 1/distance kernel.
    squared : bool, default=True
        ``sq_dist`` holds squared distances; False: it holds the distances themselves.

    Returns
    -------
    ndarray of shape (n_queries, n_neighbors), float64
    """
    if weights is None or weights == "uniform":  # None: scikit-learn's alias of "uniform"
        return np.ones(sq_dist.shape, dtype=np.float64)
    dist = np.sqrt(sq_dist) if squared else sq_dist
    if weights == "distance":
        # 1/d overflows below the smallest normal float: such a neighbour coincides with
        # the query as far as the arithmetic can tell, and is weighted as a coincident one
        dist = np.where(dist < np.finfo(np.float64).tiny, 0.0, dist)
        with parallel_section(n_jobs):
            return _row_normalised(inverse_distance_weights(dist))
    w = np.asarray(weights(dist.astype(dtype)), dtype=np.float64)
    if w.shape != sq_dist.shape:
        raise ValueError(
            f"The weights callable returned shape {w.shape}; it must return one "
            f"weight per neighbour, shape {sq_dist.shape}."
        )
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError(
            "The weights callable returned negative, NaN or inf weights. Return finite "
            "weights >= 0, one per neighbour."
        )
    zero_rows = np.flatnonzero(~(w > 0).any(axis=1))
    if zero_rows.size:
        raise ValueError(
            "All neighbors of some sample is getting zero weights. Please modify 'weights' "
            "to avoid this case if you are using a user-defined function. (Rows "
            f"{zero_rows[:5].tolist()}{'...' if zero_rows.size > 5 else ''} of X.)"
        )
    return _row_normalised(w)


def _power_of_two_scale(y):
    """A power of two near max |y| (1 for all-zero y), so that |y / scale| <= 2 exactly."""
    largest = float(np.abs(y).max()) if y.size else 0.0
    # 2**1024 is not a float64: stop one short (then |y / scale| < 2)
    return float(np.ldexp(1.0, min(int(np.frexp(largest)[1]), 1023))) if largest > 0 else 1.0


def scaled_targets(y):
    """Regression targets as a contiguous float64 (n, n_outputs) array divided by a power of
    two, and that power: targets near the float64 limit would overflow the weighted sums, so
    they are averaged scaled into [-1, 1] (exactly) and the means scaled back. Shared by the
    in-memory and the Dask regressors.
    """
    y = np.asarray(y.reshape(y.shape[0], -1), dtype=np.float64)
    scale = _power_of_two_scale(y)
    return np.ascontiguousarray(y / scale), scale


class _KNeighborsSupervised(NeighborsBase):
    _parameter_constraints = {
        **NeighborsBase._parameter_constraints,
        "weights": [StrOptions(_WEIGHTS), callable, None],
    }

    def __init__(self, n_neighbors=5, *, weights="uniform", algorithm="auto", leaf_size=30,
                 p=2, metric="minkowski", metric_params=None, n_jobs=None,
                 algorithm_params=None, verbose=0):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.p = p
        self.metric = metric
        self.metric_params = metric_params
        self.algorithm_params = algorithm_params
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _neighbor_weights(self, X, method):
        """Neighbour indices and their vote weights for the queries X."""
        check_is_fitted(self, "_fit_X")
        log = StageLog(type(self).__name__, self.verbose)
        Q = self._query_points(X, method)
        sq_dist, indices = self._kneighbors_sq(Q, self.n_neighbors)
        log.done(f"k-NN search ({self._algorithm}, k={self.n_neighbors})")
        if self.weights is None or self.weights == "uniform":
            return indices, neighbour_weights(sq_dist, "uniform", None, None)
        # the metric's own distances (scikit-learn weights sqeuclidean by 1/d^2, too)
        dist = self._metric.reported(sq_dist)
        return indices, neighbour_weights(dist, self.weights, self._fit_X.dtype, self.n_jobs,
                                          squared=False)


class KNeighborsClassifier(ClassifierMixin, _KNeighborsSupervised):
    """The k-nearest-neighbour classifier: majority vote, or a vote weighted by 1/distance.

    Parameters
    ----------
    n_neighbors : int, default=5
    weights : {"uniform", "distance"}, callable or None, default="uniform"
        ``"distance"`` weights each neighbour by 1/d; a query that coincides with training
        points takes its vote from those points only (no division by zero). A callable maps
        the (n_queries, k) distance array to weights of the same shape.
    algorithm : {"auto", "brute", "kd_tree", "ball_tree", "nndescent"}, default="auto"
        As in :class:`NearestNeighbors`: ``"nndescent"`` builds an approximate k-NN graph at
        ``fit`` and answers queries by a graph search of it.
    leaf_size : int, default=30
        Accepted for scikit-learn compatibility; as in :class:`NearestNeighbors`.
    p : float, default=2
        The Minkowski exponent, as in :class:`NearestNeighbors`.
    metric : str, callable, fitted metric learner or sklearn.metrics.DistanceMetric, \
default="minkowski"
        As in :class:`NearestNeighbors`. With ``"precomputed"``, ``fit`` takes the (n, n)
        training distances and ``predict`` the (n_queries, n) query distances.
    metric_params : dict or None
    n_jobs : int or None
    algorithm_params : dict or None, default=None
        Settings of ``algorithm="nndescent"``, as in :class:`NearestNeighbors`.
    verbose : int, default=0
        1 or more prints one line per stage (k-NN search, vote) with its time and, for
        searches expected to last over ten seconds, a progress bar (tqdm's when installed). A fastdr
        extra: scikit-learn's KNeighborsClassifier has no ``verbose``.

    Attributes
    ----------
    classes_ : ndarray, or list of ndarray
        The sorted class labels (any type numpy can sort); one array per output when y has
        several columns.
    outputs_2d_ : bool
        Whether y had several columns (multi-output classification, one vote per output).
    effective_metric_ : str or callable
    effective_metric_params_ : dict
    n_features_in_ : int
    n_samples_fit_ : int

    Notes
    -----
    Vote ties go to the class that sorts first, as in scikit-learn.
    """

    def fit(self, X, y):
        """Store the training points and labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or a fitted index
            As in :meth:`NearestNeighbors.fit`: a fitted neighbours estimator, BallTree or
            KDTree lends its training points; with ``metric="precomputed"``, the distances
            or a sparse neighbour graph.
        y : array-like of shape (n_samples,)

        Returns
        -------
        self
        """
        X = training_data(X)  # a fitted index lends its points
        self._start_fit(X)
        X, y = self._check_X_y(X, y, multi_output=True,
                               allow_nonfinite=nan_policy(self.metric))
        if y.ndim == 2 and y.shape[1] == 1:
            warnings.warn(
                "A column-vector y was passed when a 1d array was expected; it was raveled to "
                "shape (n_samples,).", compatible(DataConversionWarning), stacklevel=2)
            y = y.ravel()
        self.outputs_2d_ = y.ndim == 2
        columns = y if self.outputs_2d_ else y[:, None]
        # one class is a valid (if trivial) classifier, as in scikit-learn
        classes, codes = zip(*(check_classification_targets(columns[:, j], min_classes=1)
                               for j in range(columns.shape[1])), strict=True)
        self.classes_ = list(classes) if self.outputs_2d_ else classes[0]
        self._y_codes = [np.ascontiguousarray(c) for c in codes]
        self._fit_neighbors(X)
        self._check_n_targets(y)
        return self

    def predict_proba(self, X):
        """Class probabilities: the normalised (weighted) votes.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries, n_classes), or a list of one such array per output
        """
        indices, weights = self._neighbor_weights(X, "predict_proba")
        log = StageLog(type(self).__name__, self.verbose)
        classes = self.classes_ if self.outputs_2d_ else [self.classes_]
        with parallel_section(self.n_jobs):
            proba = [class_votes(indices, weights, codes, len(labels))
                     for codes, labels in zip(self._y_codes, classes, strict=True)]
        log.done("vote")
        return proba if self.outputs_2d_ else proba[0]

    def predict(self, X):
        """Predicted class labels.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries,)
        """
        proba = self.predict_proba(X)
        if not self.outputs_2d_:
            return self.classes_[np.argmax(proba, axis=1)]
        return np.column_stack([labels[np.argmax(p, axis=1)]
                                for labels, p in zip(self.classes_, proba, strict=True)])


class KNeighborsRegressor(RegressorMixin, _KNeighborsSupervised):
    """The k-nearest-neighbour regressor: the mean (or 1/distance-weighted mean) of the targets.

    Parameters
    ----------
    n_neighbors : int, default=5
    weights : {"uniform", "distance"}, callable or None, default="uniform"
        As in :class:`KNeighborsClassifier`.
    algorithm : {"auto", "brute", "kd_tree", "ball_tree", "nndescent"}, default="auto"
        As in :class:`NearestNeighbors`: ``"nndescent"`` builds an approximate k-NN graph at
        ``fit`` and answers queries by a graph search of it.
    leaf_size : int, default=30
        Accepted for scikit-learn compatibility; as in :class:`NearestNeighbors`.
    p : float, default=2
        The Minkowski exponent, as in :class:`NearestNeighbors`.
    metric : str, callable, fitted metric learner or sklearn.metrics.DistanceMetric, \
default="minkowski"
        As in :class:`NearestNeighbors`. With ``"precomputed"``, ``fit`` takes the (n, n)
        training distances and ``predict`` the (n_queries, n) query distances.
    metric_params : dict or None
    n_jobs : int or None
    algorithm_params : dict or None, default=None
        Settings of ``algorithm="nndescent"``, as in :class:`NearestNeighbors`.
    verbose : int, default=0
        1 or more prints one line per stage (k-NN search, weighted mean) with its time and, for
        searches expected to last over ten seconds, a progress bar (tqdm's when installed). A fastdr
        extra: scikit-learn's KNeighborsRegressor has no ``verbose``.

    Attributes
    ----------
    n_features_in_ : int
    """

    def _fastdr_tags(self):
        return {"target_tags.multi_output": True}

    def fit(self, X, y):
        """Store the training points and (possibly multi-output) targets.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or a fitted index
            As in :meth:`KNeighborsClassifier.fit`.
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        self
        """
        X = training_data(X)  # a fitted index lends its points
        self._start_fit(X)
        X, y = self._check_X_y(X, y, y_numeric=True, multi_output=True,
                               allow_nonfinite=nan_policy(self.metric))
        self._y_1d = y.ndim == 1
        self._y, self._y_scale = scaled_targets(y)
        self._fit_neighbors(X)
        self._check_n_targets(y)
        return self

    def predict(self, X):
        """Predicted targets.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries,) or (n_queries, n_outputs)
        """
        indices, weights = self._neighbor_weights(X, "predict")
        log = StageLog(type(self).__name__, self.verbose)
        with parallel_section(self.n_jobs):
            out = weighted_means(indices, weights, self._y) * self._y_scale
        log.done("weighted mean")
        return out.ravel() if self._y_1d else out
