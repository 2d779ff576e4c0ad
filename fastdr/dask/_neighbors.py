"""Exact nearest neighbours over dask arrays: search, graph, classification, regression."""

import dask
import numpy as np

from .._base import BaseEstimator, ClassifierMixin, RegressorMixin
from .._config import BROADCAST_MEMORY_FRACTION
from .._distance.metric import resolve_metric
from .._kernels.knn.vote import class_votes, weighted_means
from .._runtime.threads import parallel_section
from .._validation.arrays import check_classification_targets, check_is_fitted
from .._validation.params import check_graph_mode, check_option, check_scalar
from ..neighbors._base import check_k, reported_distances
from ..neighbors._predict import neighbour_weights, scaled_targets
from ..neighbors._search import EXACT_ALGORITHMS, choose_algorithm, knn_csr
from ._knn_tasks import plan_knn
from ._utils import (
    as_dask_queries,
    as_dask_rows,
    as_labels,
    check_n_jobs,
    map_linear,
    stack_rows,
    task_n_jobs,
    worker_memory_limit,
)

BROADCAST_OPTIONS = ("auto", True, False)


class _DaskNeighborsBase(BaseEstimator):
    """Training points as a lazy dask array in metric space; k-NN plans over its blocks."""

    _estimator_name = "NearestNeighbors"

    def _fit_neighbors(self, X):
        check_scalar(self.n_neighbors, "n_neighbors", "int", min_value=1)
        check_option(self.algorithm, "algorithm", EXACT_ALGORITHMS)
        check_n_jobs(self.n_jobs)
        if self.broadcast_index not in BROADCAST_OPTIONS or not isinstance(
                self.broadcast_index, (str, bool)):
            raise ValueError(
                f"broadcast_index must be 'auto', True or False; got {self.broadcast_index!r}."
            )
        X = as_dask_rows(X, self._estimator_name)
        d = X.shape[1]
        linear_map, squared = resolve_metric(self.metric, self.metric_params, d)
        self.n_features_in_ = int(d)
        self.n_samples_fit_ = int(X.shape[0])
        self._linear_map = linear_map
        self._squared = squared
        self._fit_dtype = X.dtype
        self._fit_X = self._to_metric_space(X)
        self._algorithm = choose_algorithm(self.algorithm, self._fit_X.shape[1])
        return X

    def _to_metric_space(self, X):
        if self._linear_map is None:
            return X
        return map_linear(X, self._linear_map)

    def _query_points(self, X, method):
        check_is_fitted(self, "_fit_X")
        if X is None:
            return None
        X = as_dask_queries(X, self, self._estimator_name, method)
        X = X.astype(self._fit_dtype)
        return self._to_metric_space(X)

    def _use_broadcast(self):
        if self.broadcast_index != "auto":
            return bool(self.broadcast_index)
        T = self._fit_X
        index_bytes = 2 * T.shape[0] * T.shape[1] * T.dtype.itemsize
        return index_bytes <= BROADCAST_MEMORY_FRACTION * worker_memory_limit()

    def _knn_parts(self, Q, k):
        """Delayed (squared distances, indices) per query block, and the query array."""
        self_query = Q is None
        check_k(k, self.n_samples_fit_, self_query)
        parts = plan_knn(self._fit_X, Q, k, self_query=self_query, algorithm=self._algorithm,
                         broadcast=self._use_broadcast(), n_jobs=self.n_jobs)
        return parts, self._fit_X if self_query else Q


def knn_parts(nbrs, X, n_neighbors, method):
    """The planned exact k-NN search of a fitted estimator of this module, one part per block.

    Parameters
    ----------
    nbrs : NearestNeighbors, KNeighborsClassifier or KNeighborsRegressor
        Fitted.
    X : dask array of shape (n_queries, n_features) or None
        The queries (checked here, as ``method``'s input); None means the training points,
        each excluding itself by index.
    n_neighbors : int
        k (checked against the number of training points).
    method : str
        The calling method's name, for the messages.

    Returns
    -------
    parts : list of Delayed
        One per row block of the queries; each computes to ``(squared distances (rows, k)
        float64, indices (rows, k) int64)``, ordered by (distance, index) as the in-memory
        search orders them.
    queries : dask array
        The queries in metric space (the training points for ``X=None``), whose row chunks
        the parts follow.
    """
    return nbrs._knn_parts(nbrs._query_points(X, method), n_neighbors)


class NearestNeighbors(_DaskNeighborsBase):
    """Exact k-nearest-neighbour queries over row-chunked dask arrays.

    Same parameters and results as :class:`fastdr.NearestNeighbors` (indices identical, ties
    broken by the smaller training index); queries are lazy dask arrays with the row chunks
    of the queries.

    Parameters
    ----------
    n_neighbors : int, default=5
    algorithm : {"auto", "brute", "kd_tree"}, default="auto"
        As in :class:`fastdr.NearestNeighbors`; each task runs the in-memory search.
    metric : {"euclidean", "sqeuclidean", "mahalanobis"} or fitted metric learner
    metric_params : dict or None
    n_jobs : int or None
        Threads per task; None means the cores of the worker that runs the task.
    broadcast_index : {"auto", True, False}, default="auto"
        ``True``: one task gathers the training points (and its k-d tree) and every query
        block is searched against it (the index travels once to each worker). ``False``:
        one task per (query block, training block) pair, merged by (distance, index) up a
        tree; no task holds more than two blocks. ``"auto"`` broadcasts when twice the
        training data take at most a quarter of the smallest worker's memory limit.

    Attributes
    ----------
    n_features_in_ : int
    n_samples_fit_ : int

    Notes
    -----
    Work O(m n d) spread over ``n_q x n_t`` (pairs) or ``n_q`` (broadcast) tasks. Memory per
    task O(block d + block k); communication O(n d) per worker (broadcast) or
    O(n_q n d + n_t m k) in all (pairs).
    """

    def __init__(self, *, n_neighbors=5, algorithm="auto", metric="euclidean",
                 metric_params=None, n_jobs=None, broadcast_index="auto"):
        self.n_neighbors = n_neighbors
        self.algorithm = algorithm
        self.metric = metric
        self.metric_params = metric_params
        self.n_jobs = n_jobs
        self.broadcast_index = broadcast_index

    def fit(self, X, y=None):
        """Remember the training points (lazily; nothing is computed).

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features), chunked by rows
        y : ignored

        Returns
        -------
        self
        """
        self._fit_neighbors(X)
        return self

    def kneighbors(self, X=None, n_neighbors=None, return_distance=True):
        """Lazy k nearest training points of each query.

        Parameters
        ----------
        X : dask array of shape (n_queries, n_features) or None
            None means the training points, each excluding itself by index.
        n_neighbors : int or None
        return_distance : bool, default=True

        Returns
        -------
        distances : dask array of shape (n_queries, n_neighbors)
            Only when ``return_distance``; in the training dtype.
        indices : dask array of shape (n_queries, n_neighbors), int64
        """
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        parts, Q = knn_parts(self, X, k, "kneighbors")
        rows = Q.chunks[0]
        ind = stack_rows([p[1] for p in parts], rows, k, np.int64)
        if not return_distance:
            return ind
        # a module-level function: a bound method would ship the estimator (and the graph
        # of its training data) inside every task
        report = dask.delayed(reported_distances, pure=True)
        dist_parts = [report(p[0], self._squared, self._fit_dtype) for p in parts]
        return stack_rows(dist_parts, rows, k, self._fit_dtype), ind

    def kneighbors_graph(self, X=None, n_neighbors=None, mode="connectivity"):
        """The k-NN graph, computed, as a ``scipy.sparse.csr_matrix`` on the client.

        Parameters
        ----------
        X : dask array or None
        n_neighbors : int or None
        mode : {"connectivity", "distance"}

        Returns
        -------
        scipy.sparse.csr_matrix of shape (n_queries, n_samples_fit)
            O(m k) memory on the client.
        """
        check_graph_mode(mode)
        dist, ind = self.kneighbors(X, n_neighbors, return_distance=True)
        dist, ind = dask.compute(dist, ind)
        return knn_csr(dist, ind, mode, self.n_samples_fit_)


def kneighbors_graph(X, n_neighbors, *, mode="connectivity", include_self=False,
                     metric="euclidean", metric_params=None, algorithm="auto", n_jobs=None,
                     broadcast_index="auto"):
    """The k-NN graph of a dask array as a ``scipy.sparse.csr_matrix`` on the client.

    Parameters
    ----------
    X : dask array of shape (m, d), chunked by rows
    n_neighbors : int
    mode : {"connectivity", "distance"}
    include_self : bool, default=False
        Count each point as its own first neighbour (distance 0).
    metric, metric_params, algorithm, n_jobs, broadcast_index
        As in :class:`NearestNeighbors`.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (m, m)
        The same matrix as :func:`fastdr.kneighbors_graph`.
    """
    nn = NearestNeighbors(n_neighbors=n_neighbors, metric=metric, metric_params=metric_params,
                          algorithm=algorithm, n_jobs=n_jobs,
                          broadcast_index=broadcast_index).fit(X)
    if not include_self:
        return nn.kneighbors_graph(None, n_neighbors, mode=mode)
    # the point itself is its own first neighbour: query the training points as outsiders
    return nn.kneighbors_graph(X, n_neighbors, mode=mode)


class _DaskKNeighborsSupervised(_DaskNeighborsBase):
    def __init__(self, *, n_neighbors=5, weights="uniform", algorithm="auto",
                 metric="euclidean", metric_params=None, n_jobs=None, broadcast_index="auto"):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.algorithm = algorithm
        self.metric = metric
        self.metric_params = metric_params
        self.n_jobs = n_jobs
        self.broadcast_index = broadcast_index

    def _check_weights(self):
        if not (callable(self.weights) or self.weights in ("uniform", "distance")):
            raise ValueError(
                f"weights must be 'uniform', 'distance' or a callable; got {self.weights!r}."
            )

    def _fit_supervised(self, X, y):
        """Check the weights, remember the training points; the targets on the client."""
        self._check_weights()
        X = self._fit_neighbors(X)
        return as_labels(y, X.shape[0])

    def _predict_parts(self, X, method, combine, targets, n_cols, dtype):
        check_is_fitted(self, "_fit_X")
        if X is None:
            raise ValueError(f"{method} needs query points X (a dask array).")
        parts, Q = knn_parts(self, X, self.n_neighbors, method)
        targets = dask.delayed(targets, pure=True)
        out = [dask.delayed(_vote_block, pure=True)(p, self.weights, self._fit_dtype,
                                                    targets, combine, self.n_jobs)
               for p in parts]
        return stack_rows(out, Q.chunks[0], n_cols, dtype)


def _vote_block(part, weights, dtype, targets, combine, n_jobs):
    sq, idx = part
    n_jobs = task_n_jobs(n_jobs)
    # the in-memory estimators' weights (1/d with coincident points, callable checks)
    w = neighbour_weights(sq, weights, dtype, n_jobs)
    with parallel_section(n_jobs):
        return combine(idx, w, targets)


def _class_proba(idx, w, targets):
    codes, n_classes = targets
    return class_votes(idx, w, codes, n_classes)


def _class_label(idx, w, targets):
    codes, n_classes, classes = targets
    return classes[np.argmax(class_votes(idx, w, codes, n_classes), axis=1)]


def _regress(idx, w, targets):
    y, one_d, scale = targets
    out = weighted_means(idx, w, y) * scale
    return out.ravel() if one_d else out


class KNeighborsClassifier(ClassifierMixin, _DaskKNeighborsSupervised):
    """The k-nearest-neighbour classifier over dask arrays (majority or 1/distance vote).

    Same parameters and predictions as :class:`fastdr.KNeighborsClassifier`, plus
    ``broadcast_index`` (see :class:`NearestNeighbors`). The labels (O(m)) are held on the
    client and sent once to each worker with the graph.

    Parameters
    ----------
    n_neighbors : int, default=5
    weights : {"uniform", "distance"} or callable, default="uniform"
    algorithm : {"auto", "brute", "kd_tree"}, default="auto"
    metric : {"euclidean", "sqeuclidean", "mahalanobis"} or fitted metric learner
    metric_params : dict or None
    n_jobs : int or None
    broadcast_index : {"auto", True, False}, default="auto"

    Attributes
    ----------
    classes_ : ndarray
    n_features_in_ : int
    """

    _estimator_name = "KNeighborsClassifier"

    def fit(self, X, y):
        """Remember the training points (lazily) and their labels.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features)
        y : dask or NumPy array of shape (n_samples,)

        Returns
        -------
        self
        """
        y = self._fit_supervised(X, y)
        self.classes_, self._y_codes = check_classification_targets(y)
        return self

    def predict_proba(self, X):
        """Lazy class probabilities: the normalised (weighted) votes.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features)

        Returns
        -------
        dask array of shape (n_samples, n_classes)
            With X's row chunks.
        """
        check_is_fitted(self, "classes_")
        targets = (self._y_codes, len(self.classes_))
        return self._predict_parts(X, "predict_proba", _class_proba, targets,
                                   len(self.classes_), np.float64)

    def predict(self, X):
        """Lazy predicted class labels.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features)

        Returns
        -------
        dask array of shape (n_samples,)
            With X's row chunks.
        """
        check_is_fitted(self, "classes_")
        targets = (self._y_codes, len(self.classes_), self.classes_)
        return self._predict_parts(X, "predict", _class_label, targets, None,
                                   self.classes_.dtype)


class KNeighborsRegressor(RegressorMixin, _DaskKNeighborsSupervised):
    """The k-nearest-neighbour regressor over dask arrays (mean or 1/distance-weighted mean).

    Same parameters and predictions as :class:`fastdr.KNeighborsRegressor`, plus
    ``broadcast_index`` (see :class:`NearestNeighbors`).

    Parameters
    ----------
    n_neighbors : int, default=5
    weights : {"uniform", "distance"} or callable, default="uniform"
    algorithm : {"auto", "brute", "kd_tree"}, default="auto"
    metric : {"euclidean", "sqeuclidean", "mahalanobis"} or fitted metric learner
    metric_params : dict or None
    n_jobs : int or None
    broadcast_index : {"auto", True, False}, default="auto"

    Attributes
    ----------
    n_features_in_ : int
    """

    _estimator_name = "KNeighborsRegressor"

    def fit(self, X, y):
        """Remember the training points (lazily) and their targets.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features)
        y : dask or NumPy array of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        self
        """
        y = self._fit_supervised(X, y)
        if y.dtype.kind not in "biuf":
            raise ValueError(f"y must be numeric for a regressor; got dtype {y.dtype}.")
        self._y_1d = y.ndim == 1
        # the in-memory regressor's targets (scaled by a power of two against overflow)
        self._y, self._y_scale = scaled_targets(y)
        return self

    def predict(self, X):
        """Lazy predicted targets.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features)

        Returns
        -------
        dask array of shape (n_samples,) or (n_samples, n_outputs)
            With X's row chunks.
        """
        check_is_fitted(self, "_y")
        n_cols = None if self._y_1d else self._y.shape[1]
        return self._predict_parts(X, "predict", _regress,
                                   (self._y, self._y_1d, self._y_scale), n_cols, np.float64)


__all__ = ["KNeighborsClassifier", "KNeighborsRegressor", "NearestNeighbors",
           "kneighbors_graph"]
