"""Shared fitting and querying for every neighbours estimator."""

from numbers import Integral

import numpy as np

from .._base import BaseEstimator
from .._distance_checks import check_distance_magnitude, check_neighbor_indices
from .._feature_names import record_feature_names
from .._metric import METRICS, apply_linear_map, resolve_metric
from .._params import N_JOBS, VERBOSE, Interval, Satisfies, StrOptions, validate_params
from .._progress import StageLog
from .._validation import check_array, check_is_fitted, check_query, check_scalar
from . import _approximate, _search, _sparse_search  # _sparse_search: the 'sparse hook's


class NeighborsBase(BaseEstimator):
    """Stores the training data (in metric space) and answers k-NN and radius queries."""

    _parameter_constraints = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "algorithm": [StrOptions(_search.ALGORITHMS)],
        "metric": [StrOptions(METRICS),
                   Satisfies(lambda v: hasattr(v, "components_")
                             or hasattr(v, "get_mahalanobis_matrix"),
                             "a metric learner (an object with components_)")],
        "metric_params": [dict, None],
        "algorithm_params": [dict, None],
        "n_jobs": N_JOBS,
        "verbose": VERBOSE,
    }

    def _fastdr_tags(self):  # sparse hook: sparse X is accepted (fastdr.neighbors._sparse_search)
        return {"input_tags.sparse": True}

    def _start_fit(self, X):
        """What every neighbours ``fit`` does first: check the parameters, record names."""
        validate_params(self)
        record_feature_names(self, X)

    def _fit_neighbors(self, X):
        self._sparse_index = None  # sparse hook: set by the sparse fit
        if _sparse_search.issparse(X):  # sparse hook
            return _sparse_search.fit(self, X)
        X = check_array(X)
        linear_map, squared = resolve_metric(self.metric, self.metric_params, X.shape[1])
        if linear_map is not None and linear_map.shape[0] == 0:
            raise ValueError(
                f"The metric {self.metric!r} is zero: its matrix M (or components_) has rank "
                "0, so every distance is 0 and no neighbour is nearer than another. Pass a "
                "non-zero positive semidefinite M (for example the inverse covariance)."
            )
        self.n_features_in_ = X.shape[1]
        self.n_samples_fit_ = X.shape[0]
        self._linear_map = linear_map
        self._squared = squared
        self._fit_X = apply_linear_map(X, linear_map)
        self._centre = check_distance_magnitude(self._fit_X, self._mapped_name())
        self._algorithm = _search.choose_algorithm(self.algorithm, self._fit_X.shape[1])
        self._tree = _search.build_tree(self._fit_X) if self._algorithm == "kd_tree" else None
        self._fit_nndescent()
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
        if getattr(self, "_sparse_index", None) is not None or _sparse_search.issparse(X):
            return _sparse_search.query_points(self, X, method)  # sparse hook
        X = check_query(self, X, method)
        X = X.astype(self._fit_X.dtype, copy=False)
        Q = apply_linear_map(X, self._linear_map)
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
        elif self._algorithm == "kd_tree":
            sq, ind = _search.knn_tree(self._tree, Q, k, self_query=self_query,
                                       n_jobs=self.n_jobs, progress=progress)
        elif self._algorithm == "nndescent" and self._nnd is not None:
            sq, ind = _approximate.search(self._nnd, self._fit_X, Q, k, self._nnd_params,
                                          self_query=self_query, n_jobs=self.n_jobs)
        else:
            sq, ind = _search.knn_brute(self._fit_X, Q, k, self_query=self_query,
                                        n_jobs=self.n_jobs, progress=progress)
        check_neighbor_indices(ind, sq, self.n_samples_fit_, "The neighbour search")
        return sq, ind

    def _to_reported(self, sq_dist):
        """Squared distances to the reported distance, in the training dtype."""
        return reported_distances(sq_dist, self._squared, self._fit_X.dtype)

    def _radius_csr(self, Q, radius):
        check_scalar(radius, "radius", "real", min_value=0)
        if getattr(self, "_sparse_index", None) is not None:  # sparse hook
            out = _sparse_search.radius(self._sparse_index, Q, radius, Q is None, self.n_jobs)
            check_neighbor_indices(out[1], out[2], self.n_samples_fit_, "The radius search")
            return out
        if self._algorithm == "nndescent":
            raise _approximate.no_radius_error()
        self_query = Q is None
        Q = self._fit_X if self_query else Q
        if self._squared:
            radius = float(np.sqrt(radius))
        if self._algorithm == "kd_tree":
            out = _search.radius_tree(self._tree, self._fit_X, Q, radius,
                                      self_query=self_query, n_jobs=self.n_jobs)
        else:
            out = _search.radius_brute(self._fit_X, Q, radius, self_query=self_query,
                                       n_jobs=self.n_jobs)
        check_neighbor_indices(out[1], out[2], self.n_samples_fit_, "The radius search")
        return out


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
