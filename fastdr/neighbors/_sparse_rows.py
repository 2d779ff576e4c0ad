"""Sparse X in a neighbours estimator: the branch of ``fit`` that stores it, and the
queries of a callable metric on sparse rows.

Three routes, picked once the metric is resolved (a DistanceMetric object included):

* ``metric="precomputed"``: a sparse neighbour graph, read row by row in NumPy
  (:mod:`fastdr.neighbors._precomputed_graph`);
* a callable metric (a ``"pyfunc"`` DistanceMetric included): the rows handed to it as
  1 x d sparse matrices, as scikit-learn's pairwise loop hands them;
* every other metric: the sparse kernels (:mod:`fastdr.neighbors._sparse_search`).

Each is exact brute force: a tree asked for warns and is not built, as in scikit-learn.
"""

import warnings

import scipy.sparse

from .._distance.metric import resolve_neighbors_metric
from .._kernels import codes
from .._validation.arrays import check_n_features, check_query
from .._validation.feature_names import check_feature_names
from . import _approximate, _precomputed_graph, _sparse_search

__all__ = ["callable_query_points", "fit", "rows_kind"]


def fit(estimator, X):
    """The sparse branch of a neighbours estimator's ``fit``: validate X for the resolved
    metric's route and store it (the attributes the dense fit sets)."""
    precomputed = isinstance(estimator.metric, str) and estimator.metric == "precomputed"
    metric = resolve_neighbors_metric(estimator.metric, estimator.p, estimator.metric_params,
                                      None if precomputed else X.shape[1])
    estimator._sparse_index = None
    squared = False
    if metric.route == "precomputed":
        if estimator.algorithm == "nndescent":
            raise ValueError("algorithm='nndescent' supports the Euclidean metrics only; "
                             "got metric='precomputed'. Use algorithm='brute' (exact) for it.")
        fit_X = _precomputed_graph.check_graph(X)
    elif metric.route == "callable":
        fit_X = rows_kind(_sparse_search.check_csr(X, magnitude=False), X)  # any value
        estimator._fit_other_metric(fit_X, metric)  # refuses kd_tree, nndescent first
    else:
        estimator._sparse_index = _sparse_search.build_index(estimator, X)
        fit_X = estimator._sparse_index.csr
        squared = estimator._sparse_index.kind == codes.SQEUCLIDEAN
    _store_brute_fit(estimator, fit_X, squared)
    estimator._metric = metric
    estimator._set_effective_metric(metric)
    estimator._fit_input = None  # the stored rows are X's: lent as they are
    return fit_X


def _store_brute_fit(estimator, fit_X, squared):
    """The attributes every sparse fit sets; a tree asked for warns (scikit-learn's
    words): brute force is what runs."""
    algorithm = estimator.algorithm
    if algorithm not in ("auto", "brute"):
        # stacklevel: here, fit above, _fit_neighbors, the estimator's fit, its caller
        warnings.warn(f"cannot use tree with sparse input: using brute force (algorithm="
                      f"{algorithm!r} was asked for). Pass algorithm='brute' to silence this "
                      "warning.", UserWarning, stacklevel=5)
    estimator.n_features_in_ = fit_X.shape[1]
    estimator.n_samples_fit_ = fit_X.shape[0]
    estimator._linear_map = None
    estimator._squared = squared
    estimator._centre = None
    estimator._fit_X = fit_X
    estimator._algorithm = "brute"
    estimator._tree = None
    estimator._nnd = None
    estimator._nnd_params = _approximate.check_params(getattr(estimator, "algorithm_params",
                                                              None))


def callable_query_points(estimator, X, method):
    """Queries of a callable metric when the training rows or the queries are sparse:
    each side keeps its own kind (sparse rows as 1 x d CSR, dense rows as 1-D arrays),
    as scikit-learn's pairwise loop hands them to the callable."""
    if not _sparse_search.issparse(X):
        return check_query(estimator, X, method)
    check_feature_names(estimator, X)
    Q = rows_kind(_sparse_search.check_csr(X, magnitude=False), X)
    check_n_features(estimator, Q, method)
    return Q


def rows_kind(csr, X):
    """The validated CSR as the caller's kind: a sparse array stays an array, so that a
    callable metric meets the operators it was written for (``*`` multiplies elementwise on
    an array, as a matrix product on a matrix)."""
    return csr if isinstance(X, scipy.sparse.spmatrix) else scipy.sparse.csr_array(csr)
