"""Shared fitting and querying for every neighbours estimator."""

import warnings
from numbers import Integral, Real

import numpy as np

from .._base import BaseEstimator
from .._distance.metric import (
    NEIGHBOR_METRICS,
    allows_nan,
    nan_policy,
    resolve_neighbors_metric,
)
from .._distance.sklearn_metric import is_distance_metric
from .._kernels import codes
from .._runtime.progress import StageLog
from .._validation.arrays import check_array, check_is_fitted, check_query, check_X_y
from .._validation.feature_names import record_feature_names
from .._validation.indices import check_neighbor_indices
from .._validation.magnitudes import check_distance_magnitude
from .._validation.params import (
    N_JOBS,
    VERBOSE,
    Interval,
    Satisfies,
    StrOptions,
    check_graph_mode,
    check_scalar,
    validate_params,
)
from . import (
    _approximate,
    _metric_search,
    _precomputed_graph,
    _radius,
    _search,
    _sparse_rows,
    _sparse_search,
)

#: What scikit-learn's KDTree accepts (``"auto"`` picks the k-d tree only for these).
KD_TREE_METRICS = ("minkowski", "euclidean", "l2", "manhattan", "cityblock", "l1",
                   "chebyshev", "infinity")
#: What scikit-learn's BallTree accepts among fastdr's metrics (callables too).
BALL_TREE_METRICS = (*KD_TREE_METRICS, "mahalanobis", "seuclidean", "braycurtis", "canberra",
                     "haversine", "hamming", "dice", "jaccard", "rogerstanimoto", "russellrao",
                     "sokalsneath")


def _is_learner(value):
    return hasattr(value, "components_") or hasattr(value, "get_mahalanobis_matrix")


class NeighborsBase(BaseEstimator):
    """Stores the training data (in metric space) and answers k-NN and radius queries."""

    _parameter_constraints = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "algorithm": [StrOptions(_search.NEIGHBORS_ALGORITHMS)],
        "leaf_size": [Interval(Integral, 1, None, closed="left")],
        "p": [Interval(Real, 0, None, closed="neither"),
              Satisfies(lambda v: isinstance(v, Real) and v == np.inf, "np.inf"), None],
        "metric": [StrOptions(NEIGHBOR_METRICS), callable,
                   Satisfies(_is_learner, "a metric learner (an object with components_)"),
                   Satisfies(is_distance_metric, "a sklearn.metrics.DistanceMetric object")],
        "metric_params": [dict, None],
        "algorithm_params": [dict, None],
        "n_jobs": N_JOBS,
        "verbose": VERBOSE,
    }

    def _start_fit(self, X):
        """What every neighbours ``fit`` does first: check the parameters, record names."""
        validate_params(self)
        record_feature_names(self, X)

    def _check_X_y(self, X, y, **kwargs):
        """X and y of the supervised fits (:func:`fastdr._validation.arrays.check_X_y`). A
        sparse X is not read here: only y is checked, and :meth:`_check_n_targets` compares
        its length with the rows the fit stored, once the fit has checked X for its metric's
        route (a precomputed graph as a graph, the rows of a callable at any magnitude)."""
        if not _sparse_search.issparse(X):
            return check_X_y(X, y, **kwargs)
        n_targets = np.shape(y)[0] if np.ndim(y) >= 1 else 1
        _, y = check_X_y(np.zeros((n_targets, 1)), y, min_samples=0, **kwargs)
        return X, y

    def _check_n_targets(self, y):
        """One target per row the fit stored (the supervised fits, after
        :meth:`_fit_neighbors`, which warns at the caller's stack depth)."""
        if y.shape[0] != self.n_samples_fit_:
            raise ValueError(
                f"X and y have inconsistent numbers of samples: X has {self.n_samples_fit_}, "
                f"y has {y.shape[0]}. Pass one target per row of X."
            )

    def _training_points(self):
        """The validated training points (before any metric map), which a fitted estimator
        passed as X of another's ``fit`` lends it
        (:func:`fastdr.neighbors._fitted_input.training_data`): ``_fit_X`` itself unless
        the metric maps the points (then ``_fit_input``, a copy of them). An estimator
        without ``_fit_input`` (pickled by an older fastdr) lends ``_fit_X``."""
        check_is_fitted(self, "_fit_X")
        fit_input = getattr(self, "_fit_input", None)
        return self._fit_X if fit_input is None else fit_input

    def kneighbors(self, X=None, n_neighbors=None, return_distance=True):
        """Find the k nearest training points of each query.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features) or None
            None means the training points, each excluding itself by index (a duplicate
            point still counts as a neighbour). With ``metric="precomputed"``: the
            (n_queries, n_samples_fit) distances, or a sparse neighbour graph whose rows
            each hold at least ``n_neighbors`` entries (``X=None`` on a fitted graph: one
            more, and the point's own entry, or else the first, is dropped, as in
            scikit-learn).
        n_neighbors : int or None
            Defaults to the constructor's ``n_neighbors``.
        return_distance : bool, default=True

        Returns
        -------
        distances : ndarray of shape (n_queries, n_neighbors)
            Only when ``return_distance``; ascending, in the training dtype.
        indices : ndarray of shape (n_queries, n_neighbors)
        """
        log = StageLog(type(self).__name__, self.verbose)
        Q = self._query_points(X, "kneighbors")
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        sq_dist, indices = self._kneighbors_sq(Q, k)
        log.done(f"k-NN search ({self._algorithm}, k={k})")
        if return_distance:
            return self._to_reported(sq_dist), indices
        return indices

    def kneighbors_graph(self, X=None, n_neighbors=None, mode="connectivity"):
        """The k-NN graph as a ``scipy.sparse.csr_matrix`` of shape (n_queries, n_samples_fit).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features) or None
            None means the training points, each excluding itself. With
            ``metric="precomputed"``: distances or a sparse neighbour graph, as in
            :meth:`kneighbors`.
        n_neighbors : int or None
        mode : {"connectivity", "distance"}
            Ones, or the distances, as the stored values.

        Returns
        -------
        scipy.sparse.csr_matrix
        """
        check_graph_mode(mode)
        dist, ind = self.kneighbors(X, n_neighbors, return_distance=True)
        return _search.knn_csr(dist, ind, mode, self.n_samples_fit_)

    def _fastdr_tags(self):
        # sparse X is accepted (fastdr.neighbors._sparse_rows); a precomputed X is (queries,
        # training points): cross-validation slices both axes; NaN is a missing value for
        # the NaN-aware metrics, as scikit-learn tags them
        return {"input_tags.pairwise": _is_precomputed(self.metric),
                "input_tags.sparse": True,
                "input_tags.allow_nan": allows_nan(self.metric)}

    @property
    def _fit_method(self):
        """The search the fit chose, by scikit-learn's name for this attribute ("brute",
        "kd_tree", or fastdr's "nndescent")."""
        return self._algorithm

    def _fit_neighbors(self, X):
        self._sparse_index = None  # sparse hook: set by the sparse fit
        if _sparse_search.issparse(X):  # sparse hook: every route, once the metric resolves
            return _sparse_rows.fit(self, X)
        precomputed = _is_precomputed(self.metric)
        X = check_array(X, allow_nonfinite=nan_policy(self.metric))
        if precomputed:
            _check_precomputed(X)
            if X.shape[0] != X.shape[1]:
                raise ValueError(
                    f"Precomputed matrix must be square. Input is a {X.shape[0]}x{X.shape[1]} "
                    "matrix. Pass the distances between the training samples."
                )
        metric = resolve_neighbors_metric(self.metric, self.p, self.metric_params,
                                          None if precomputed else X.shape[1])
        self._metric = metric
        self._set_effective_metric(metric)
        self.n_features_in_ = X.shape[1]
        self.n_samples_fit_ = X.shape[0]
        if metric.route != "euclidean":
            self._fit_other_metric(X, metric)
            return self._keep_fit_input(X)
        linear_map, squared = metric.linear_map, metric.squared
        if linear_map is not None and linear_map.shape[0] == 0:
            raise ValueError(
                f"The metric {self.metric!r} is zero: its matrix M (or components_) has rank "
                "0, so every distance is 0 and no neighbour is nearer than another. Pass a "
                "non-zero positive semidefinite M (for example the inverse covariance)."
            )
        self._linear_map = linear_map
        self._squared = squared
        self._fit_X = metric.transform_rows(X)
        self._centre = check_distance_magnitude(self._fit_X, self._mapped_name())
        algorithm = _search.from_sklearn_name(self.algorithm)
        self._algorithm = _search.choose_algorithm(algorithm, self._fit_X.shape[1])
        self._tree = _search.build_tree(self._fit_X) if self._algorithm == "kd_tree" else None
        self._fit_nndescent()
        return self._keep_fit_input(X)

    def _keep_fit_input(self, X):
        """Keep the validated points a fitted estimator lends as X
        (:meth:`_training_points`): none when the search stores them as they are (``_fit_X``
        is X), a copy when the metric maps them (never a reference to the caller's array,
        which the caller may change)."""
        self._fit_input = None if self._fit_X is X else X.copy()
        return X

    def _set_effective_metric(self, metric):
        """scikit-learn's ``effective_metric_`` and ``effective_metric_params_``: a
        DistanceMetric object stays itself, with the estimator's ``metric_params`` (which
        it ignores), as in scikit-learn."""
        if is_distance_metric(self.metric):
            self.effective_metric_ = self.metric
            self.effective_metric_params_ = dict(self.metric_params or {})
            return
        self.effective_metric_ = metric.name
        self.effective_metric_params_ = dict(metric.params)

    def _fit_other_metric(self, X, metric):
        """Minkowski (p != 2), cosine, precomputed and callable metrics: exact brute force
        in the kernels of :mod:`fastdr.neighbors._metric_search`."""
        algorithm = self.algorithm
        name = metric.name if isinstance(metric.name, str) else "callable"
        if algorithm == "nndescent":
            raise ValueError(
                f"algorithm='nndescent' supports the Euclidean metrics only; got metric "
                f"{name!r}. Use algorithm='brute' (exact) for this metric."
            )
        valid = KD_TREE_METRICS if algorithm == "kd_tree" else BALL_TREE_METRICS
        if algorithm in ("kd_tree", "ball_tree") and metric.route != "precomputed":
            if metric.route == "callable" and algorithm == "kd_tree":
                raise ValueError(f"kd_tree does not support callable metric {self.metric!r}. "
                                 "Use algorithm='brute' or 'ball_tree'.")
            if metric.route != "callable" and name not in valid:
                raise ValueError(
                    f"Metric {name!r} not valid for algorithm={algorithm!r}. Use "
                    "algorithm='brute' or 'auto' (fastdr searches it by exact brute force)."
                )
        if metric.route == "minkowski" and metric.p < 1:
            if algorithm in ("kd_tree", "ball_tree"):
                raise ValueError(
                    f'algorithm="{algorithm}" does not support 0 < p < 1 for the Minkowski '
                    'metric. To resolve this problem either set p >= 1 or algorithm="brute".'
                )
            warnings.warn("Mind that for 0 < p < 1, Minkowski metrics are not distance "
                          "metrics. Continuing the execution with `algorithm='brute'`.",
                          stacklevel=3)
        self._linear_map = None
        self._squared = False
        self._fit_X = metric.transform_rows(X)
        self._centre = None
        self._algorithm = "brute"
        self._tree = None
        self._nnd_params = _approximate.check_params(self.algorithm_params)
        self._nnd = None
        return X

    def _fit_nndescent(self):
        """Check ``algorithm_params``; with NN-descent, build the index of the k-NN graph."""
        self._nnd_params = _approximate.check_params(self.algorithm_params)
        self._nnd = None
        m = self._fit_X.shape[0]
        if self._algorithm == "nndescent" and m >= 2:  # one point: exact search answers
            self._nnd = _approximate.build(self._fit_X, min(self.n_neighbors, m - 1),
                                           self._nnd_params, n_jobs=self.n_jobs,
                                           verbose=self.verbose)

    def _mapped_name(self):
        """How the searched points are called in errors: X, or X after the metric's map."""
        return "X" if self._linear_map is None else "X mapped by the metric"

    def _query_points(self, X, method):
        check_is_fitted(self, "_fit_X")
        if X is None:
            return None
        if self._metric.route == "precomputed" and _sparse_search.issparse(X):
            return _precomputed_graph.check_graph(X, n_columns=self.n_samples_fit_)
        if self._metric.route == "callable" and (_sparse_search.issparse(X)
                                                 or _sparse_search.issparse(self._fit_X)):
            return _sparse_rows.callable_query_points(self, X, method)
        if getattr(self, "_sparse_index", None) is not None:
            return _sparse_search.query_points(self, X, method)  # sparse hook
        if _sparse_search.issparse(X) and allows_nan(self.metric):
            # scikit-learn's class and words: NaN-aware metrics take dense input only
            raise TypeError("Sparse data was passed, but dense data is required. Use "
                            "'.toarray()' to convert to a dense numpy array.")
        if _sparse_search.issparse(X):  # sparse queries against a dense fit: made dense
            X = _sparse_search.query_points(self, X, method)
        metric = self._metric
        if metric.route == "precomputed":
            X = check_array(X)
            _check_precomputed(X)
            if X.shape[1] != self.n_samples_fit_:
                raise ValueError(
                    "Precomputed metric requires shape (n_queries, n_indexed). Got "
                    f"({X.shape[0]}, {X.shape[1]}) for {self.n_samples_fit_} indexed. Pass "
                    "the distances from each query to every training sample."
                )
            return X.astype(self._fit_X.dtype, copy=False)
        X = check_query(self, X, method, allow_nonfinite=nan_policy(self.metric))
        X = X.astype(self._fit_X.dtype, copy=False)
        Q = metric.transform_rows(X)
        if metric.route == "euclidean":
            check_distance_magnitude(Q, self._mapped_name(), centre=self._centre)
        return Q

    def _check_k(self, k, self_query):
        check_k(k, self.n_samples_fit_, self_query)

    def _kneighbors_sq(self, Q, k):
        """Squared metric distances (float64) and indices of the k nearest training points."""
        self_query = Q is None
        self._check_k(k, self_query)
        return self._search_k(self._fit_X if self_query else Q, k, self_query)

    def _search_k(self, Q, k, self_query):
        """The k-NN search itself, its indices checked before anyone reads through them."""
        progress = StageLog(type(self).__name__, self.verbose)
        if getattr(self, "_sparse_index", None) is not None:  # sparse hook
            sq, ind = _sparse_search.kneighbors(self._sparse_index, Q, k, self_query,
                                                self.n_jobs)
            sq = _sparse_to_reduced(self._metric, sq)
        elif self._metric.route == "precomputed" and _sparse_search.issparse(Q):
            sq, ind = _precomputed_graph.kneighbors(Q, k, self_query)
        elif self._metric.route != "euclidean":
            sq, ind = _metric_search.knn(self._metric, self._fit_X, Q, k,
                                         self_query=self_query, n_jobs=self.n_jobs)
        elif self._algorithm == "kd_tree":
            sq, ind = _search.knn_tree(self._tree, Q, k, self_query=self_query,
                                       n_jobs=self.n_jobs, progress=progress)
        elif self._algorithm == "nndescent" and self._nnd is not None:
            sq, ind = _approximate.search(self._nnd, self._fit_X, Q, k, self._nnd_params,
                                          self_query=self_query, n_jobs=self.n_jobs)
        else:
            sq, ind = _search.knn_brute(self._fit_X, Q, k, self_query=self_query,
                                        n_jobs=self.n_jobs, progress=progress)
        # nan_euclidean's inf is a pair with no feature present in both (reported as NaN,
        # ranked last, as in scikit-learn), not a failed search: only its indices are checked
        missing = self._metric.kind == codes.NAN_EUCLIDEAN
        check_neighbor_indices(ind, None if missing else sq, self.n_samples_fit_,
                               "The neighbour search")
        return sq, ind

    def _to_reported(self, sq_dist):
        """Reduced kernel values (squared distances on the Euclidean route) to the reported
        distances, in the training dtype."""
        return self._metric.reported(sq_dist).astype(self._fit_X.dtype, copy=False)

    def _radius_csr(self, Q, radius):
        """The radius search as CSR arrays ``(indptr, indices, reduced values)``; ``radius``
        is one radius or one per query (:mod:`fastdr.neighbors._radius`: the search runs
        with the largest, then each row keeps its own, tested as the search tests it)."""
        radii = _radius.check_radius(radius, self.n_samples_fit_ if Q is None else Q.shape[0])
        per_query = np.ndim(radii) == 1
        radius = _radius.largest(radii)
        self_query = Q is None
        if getattr(self, "_sparse_index", None) is not None:  # sparse hook
            *out, tested = _sparse_search.radius(self._sparse_index, Q, radius, Q is None,
                                                 self.n_jobs, tested=True)
            if per_query:  # each row tests the distances the kernel tested, as it did
                out = _radius.keep_within(*out, tested, radii)
            check_neighbor_indices(out[1], out[2], self.n_samples_fit_, "The radius search")
            return out[0], out[1], _sparse_to_reduced(self._metric, out[2])
        if self._algorithm == "nndescent":
            raise _approximate.no_radius_error()
        Q = self._fit_X if self_query else Q
        if self._metric.route == "precomputed" and _sparse_search.issparse(Q):
            return _precomputed_graph.radius(Q, radii, self_query)
        if self._metric.route != "euclidean":
            out = _metric_search.radius(self._metric, self._fit_X, Q,
                                        self._metric.reduced_radius(radius),
                                        self_query=self_query, n_jobs=self.n_jobs)
            if per_query:
                bounds = _radius.row_bounds(radii, self._metric.reduced_radius)
                out = _radius.keep_within(*out, out[2], bounds)
            check_neighbor_indices(out[1], out[2], self.n_samples_fit_, "The radius search")
            return out
        searched = float(np.sqrt(radius)) if self._squared else radius
        if self._algorithm == "kd_tree":
            out = _search.radius_tree(self._tree, self._fit_X, Q, searched,
                                      self_query=self_query, n_jobs=self.n_jobs)
        else:
            out = _search.radius_brute(self._fit_X, Q, searched, self_query=self_query,
                                       n_jobs=self.n_jobs)
        if per_query:  # squared distances against the squared radius, as the search tests
            squared = self._squared
            bounds = _radius.row_bounds(
                radii, lambda r: (float(np.sqrt(r)) if squared else r) ** 2)
            out = _radius.keep_within(*out, out[2], bounds)
        check_neighbor_indices(out[1], out[2], self.n_samples_fit_, "The radius search")
        return out


def _is_precomputed(metric):
    return isinstance(metric, str) and metric == "precomputed"


def _sparse_to_reduced(metric, currency):
    """The sparse search's values (squared distances; for sqeuclidean the distance itself)
    to ``metric``'s reduced values, which :meth:`Metric.reported` turns into distances."""
    if metric.route == "euclidean":
        return currency
    dist = np.sqrt(currency)
    if metric.route == "minkowski" and metric.kind == codes.MINKOWSKI:
        return dist ** metric.p
    return dist


def _check_precomputed(D):
    """Refuse negative precomputed distances (scikit-learn's check and key phrase)."""
    if D.size and D.min() < 0:
        raise ValueError(
            "Negative values in data passed to precomputed distance matrix (smallest "
            f"{D.min():.3g}). Pass distances (>= 0), not similarities or log-distances."
        )


def reported_distances(sq_dist, squared, dtype):
    """Squared metric distances (float64) to the reported ones (squared or not) in ``dtype``,
    the training dtype. Shared by the in-memory and the Dask estimators."""
    out = sq_dist if squared else np.sqrt(sq_dist)
    return out.astype(dtype, copy=False)


def check_k(k, n, self_query):
    """Refuse ``k`` neighbours from ``n`` training points (``n - 1`` when each query is a
    training point that excludes itself). Shared by the in-memory and the Dask estimators."""
    check_scalar(k, "n_neighbors", "int", min_value=1)
    limit = n - 1 if self_query else n
    if k > limit:
        if self_query:
            remedy = (f"Use n_neighbors <= {limit} or fit on more points." if limit >= 1
                      else f"Fit on at least {k + 1} points.")
            raise ValueError(
                f"n_neighbors={k} must be smaller than the number of training points "
                f"({n}) when X is None, because each point excludes itself. {remedy}"
            )
        raise ValueError(
            f"n_neighbors={k} is larger than the number of training points ({n}). "
            f"Use n_neighbors <= {n} or fit on more points."
        )
