"""``NearestNeighbors``: exact k-NN and radius queries, or approximate k-NN by NN-descent."""

from numbers import Real

import numpy as np

from .._runtime.progress import StageLog
from .._validation.params import Interval, check_graph_mode
from . import _approximate, _search
from ._base import NeighborsBase
from ._fitted_input import (
    check_same_params,
    is_fastdr_index,
    is_fitted_estimator,
    training_data,
)


class NearestNeighbors(NeighborsBase):
    """Nearest-neighbour queries: exact (numba brute force or a k-d tree) or NN-descent.

    Parameters
    ----------
    n_neighbors : int, default=5
        Default number of neighbours for :meth:`kneighbors`.
    radius : float, default=1.0
        Default radius for :meth:`radius_neighbors`.
    algorithm : {"auto", "brute", "kd_tree", "ball_tree", "nndescent"}, default="auto"
        ``"auto"`` uses scipy's k-d tree when the data have at most 15 features (after the
        metric's linear map) and brute force otherwise; both are exact. ``"ball_tree"`` is
        an alias of ``"kd_tree"`` (both exact). Metrics other than the Euclidean family
        always run the exact blocked brute-force kernels; ``"kd_tree"``/``"ball_tree"``
        are refused for the metrics scikit-learn's trees refuse (cosine, for example).
        ``"nndescent"`` builds an approximate k-NN graph at ``fit`` (random-projection trees, then
        NN-descent rounds; see ``algorithm_params``): :meth:`kneighbors` of the training
        points reads that graph, new points are answered by a graph search. It has no
        radius search.
    leaf_size : int, default=30
        Accepted for scikit-learn compatibility; it changes no result (the k-d tree keeps
        its own tuned leaf size).
    metric : str, callable, fitted metric learner or sklearn.metrics.DistanceMetric, \
default="minkowski"
        ``"minkowski"`` (with ``p``), ``"euclidean"``/``"l2"``, ``"sqeuclidean"``,
        ``"manhattan"``/``"cityblock"``/``"l1"``, ``"chebyshev"``/``"infinity"``,
        ``"cosine"``, ``"mahalanobis"`` (``metric_params={"VI": VI}``, ``{"V": V}`` or
        ``{"M": M}``), ``"precomputed"`` (``fit`` takes the (n, n) distances between
        training points, queries the (n_queries, n) distances to them; either may be a
        sparse neighbour graph, CSR, CSC, COO or LIL, whose stored entries, explicit zeros
        included, are each row's only candidate neighbours, as in scikit-learn) or a
        callable ``f(x, y, **metric_params) -> float`` (with sparse X it gets 1 x d sparse
        rows, as in scikit-learn). The Euclidean family (and ``p=2``) runs the
        GEMM kernels; manhattan, chebyshev and general p the blocked direct kernels;
        cosine a GEMM on normalised rows (a zero row is at distance 1 from everything, as
        in scikit-learn). A callable runs in Python once per pair: the slow path, and
        O(n_queries x n) memory. A fitted learner (anything with ``components_``) uses
        ``||L x - L y||``. ``"nan_euclidean"`` is scikit-learn's NaN-aware Euclidean
        distance: X may hold NaN (a missing value) for it alone; dense X, brute force; a
        pair with no feature present in both is at distance NaN and ranks last. The other
        names of scikit-learn's brute force (braycurtis, canberra, correlation, seuclidean,
        hamming, the boolean dissimilarities, haversine) run the blocked direct kernels. A
        ``DistanceMetric`` object is read as the metric of its name and parameters (its
        own parameters win over ``p`` and ``metric_params``, as in scikit-learn);
        ``effective_metric_`` is the object.
    p : float, default=2
        The Minkowski exponent: 1 is manhattan, 2 euclidean, ``np.inf`` chebyshev; any
        real ``p >= 1`` works (0 < p < 1 warns and runs brute force, as in scikit-learn).
    metric_params : dict or None
        Extra metric arguments (``"p"`` overrides ``p`` with a ``SyntaxWarning``; ``"w"``
        weights the Minkowski terms).
    n_jobs : int or None
        Threads for this call only; None means all cores.
    algorithm_params : dict or None, default=None
        Settings of ``algorithm="nndescent"`` (ignored by the exact algorithms; unknown keys
        are an error): ``n_trees``, ``n_iters``, ``max_candidates``, ``leaf_size``,
        ``build_neighbors`` (None or absent: the size-dependent defaults of
        :func:`fastdr.neighbors._nndescent.default_parameters`), ``delta`` (early stop,
        default 0.001), ``epsilon`` (breadth of the search for new points, default 0.1) and
        ``random_state`` (default 0, so that fits repeat; None draws a fresh seed). The
        graph is the same for any ``n_jobs``. For recall near 0.99 on hard data use
        ``{"build_neighbors": 60, "max_candidates": 45}``. A fastdr extra.
    verbose : int, default=0
        1 or more prints one line per stage (fit, k-NN search, radius search) with its time and, for
        searches expected to last over ten seconds, a progress bar (tqdm's when installed). A fastdr
        extra: scikit-learn's NearestNeighbors has no ``verbose``.

    Attributes
    ----------
    effective_metric_ : str or callable
        The metric used (``"minkowski"`` with p 1, 2 or inf becomes ``"manhattan"``,
        ``"euclidean"`` or ``"chebyshev"``, as in scikit-learn).
    effective_metric_params_ : dict
    n_features_in_ : int
    n_samples_fit_ : int

    Notes
    -----
    Brute-force time is O(m n d) through blocked GEMM; memory is O(threads x block x 2048)
    beyond the (m, k) outputs. Ties are broken by the smaller training index.

    Examples
    --------
    >>> import numpy as np
    >>> from fastdr import NearestNeighbors
    >>> X = np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]])
    >>> dist, ind = NearestNeighbors(n_neighbors=1).fit(X).kneighbors()
    >>> ind.ravel().tolist()
    [1, 0, 1]
    """

    _parameter_constraints = {
        **NeighborsBase._parameter_constraints,
        "radius": [Interval(Real, 0, None, closed="both")],
    }

    def __init__(self, *, n_neighbors=5, radius=1.0, algorithm="auto", leaf_size=30,
                 metric="minkowski", p=2, metric_params=None, n_jobs=None,
                 algorithm_params=None, verbose=0):
        self.n_neighbors = n_neighbors
        self.radius = radius
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.metric = metric
        self.p = p
        self.metric_params = metric_params
        self.algorithm_params = algorithm_params
        self.n_jobs = n_jobs
        self.verbose = verbose

    def fit(self, X, y=None):
        """Store the training points (and build the tree or NN-descent graph, if used).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or a fitted index
            A fitted neighbours estimator (fastdr's or scikit-learn's), or a scikit-learn
            ``BallTree``/``KDTree``, lends its training points (searched with this
            estimator's own metric). With ``metric="precomputed"``: the (n_samples,
            n_samples) distances, dense or a sparse neighbour graph.
        y : ignored

        Returns
        -------
        self
        """
        log = StageLog(type(self).__name__, self.verbose)
        X = training_data(X)  # a fitted index lends its points
        self._start_fit(X)
        self._fit_neighbors(X)
        log.done(f"fit ({self._algorithm})")
        return self

    def radius_neighbors(self, X=None, radius=None, return_distance=True, sort_results=False):
        """Find every training point within ``radius`` of each query.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features) or None
            None means the training points, each excluding itself by index. With
            ``metric="precomputed"``: the (n_queries, n_samples_fit) distances, or a sparse
            neighbour graph (each row's stored entries its only candidates).
        radius : float, array-like of shape (n_queries,) or None
            Defaults to the constructor's ``radius``; an array gives one radius per query
            (each >= 0). Points at exactly the radius count.
        return_distance : bool, default=True
        sort_results : bool, default=False
            Sort each row by distance (ties by index); otherwise rows are in index order
            (in increasing distance for a sparse precomputed graph).

        Returns
        -------
        distances : ndarray of object
            One array per query (only when ``return_distance``).
        indices : ndarray of object
            One int64 array per query.
        """
        indptr, indices, sq_dist = self._radius_search(X, radius, "radius_neighbors")
        if sort_results:
            if not return_distance:
                raise ValueError("return_distance must be True if sort_results is True.")
            indices, sq_dist = _sorted_by_distance(indptr, indices, sq_dist)
        dist = self._to_reported(sq_dist)
        ind_rows = np.empty(indptr.shape[0] - 1, dtype=object)
        dist_rows = np.empty(indptr.shape[0] - 1, dtype=object)
        for i in range(indptr.shape[0] - 1):
            ind_rows[i] = indices[indptr[i]:indptr[i + 1]]
            dist_rows[i] = dist[indptr[i]:indptr[i + 1]]
        if return_distance:
            return dist_rows, ind_rows
        return ind_rows

    def radius_neighbors_graph(self, X=None, radius=None, mode="connectivity",
                               sort_results=False):
        """The epsilon graph as a ``scipy.sparse.csr_matrix`` (explicit zeros are kept).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_queries, n_features) or None
            As in :meth:`radius_neighbors`.
        radius : float, array-like of shape (n_queries,) or None
            One radius, or one per query.
        mode : {"connectivity", "distance"}
        sort_results : bool, default=False
            Order each row's entries by distance instead of by index.

        Returns
        -------
        scipy.sparse.csr_matrix
        """
        check_graph_mode(mode)
        indptr, indices, sq_dist = self._radius_search(X, radius, "radius_neighbors_graph")
        if sort_results:
            indices, sq_dist = _sorted_by_distance(indptr, indices, sq_dist)
        return self._radius_graph(indptr, indices, sq_dist, mode)

    def _radius_search(self, X, radius, method):
        """The radius search of the queries X (None: the training points) as CSR arrays
        ``(indptr, indices, sq_dist)``, each row in index order; ``radius=None`` means the
        constructor's."""
        log = StageLog(type(self).__name__, self.verbose)
        Q = self._query_points(X, method)
        r = self.radius if radius is None else radius
        out = self._radius_csr(Q, r)
        log.done(f"radius search ({self._algorithm}, {_radius_text(r)})")
        return out

    def _radius_graph(self, indptr, indices, sq_dist, mode):
        """The epsilon graph of a radius search's CSR arrays: the reported distances
        (``mode="distance"``) or ones, explicit zeros kept."""
        dist = self._to_reported(sq_dist)
        values = dist if mode == "distance" else np.ones_like(dist)
        return _search.to_csr(indptr, indices, values,
                              (indptr.shape[0] - 1, self.n_samples_fit_))


def _radius_text(radius):
    """The radius as the verbose log prints it: the number, or the size and range of a
    per-query array (never the array itself, which may hold millions of values)."""
    if np.ndim(radius) == 0:
        return f"radius={radius}"
    radii = np.asarray(radius, dtype=np.float64)
    if radii.size == 0:
        return "0 radii"
    return f"{radii.size} radii in [{radii.min():.4g}, {radii.max():.4g}]"


def _sorted_by_distance(indptr, indices, sq_dist):
    """``indices`` and ``sq_dist`` of a CSR radius result with each row ordered by distance,
    ties by index."""
    rows = np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr))
    order = np.lexsort((indices, sq_dist, rows))
    return indices[order], sq_dist[order]


def kneighbors_graph(X, n_neighbors, *, mode="connectivity", metric="minkowski", p=2,
                     metric_params=None, include_self=False, n_jobs=None, algorithm="auto",
                     algorithm_params=None):
    """The k-NN graph of X as a ``scipy.sparse.csr_matrix`` of shape (m, m).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (m, d), or a fitted neighbours estimator
        A fitted estimator (fastdr's or scikit-learn's) gives the graph of its own training
        points; ``metric``, ``p`` and ``metric_params`` must then equal its own.
    n_neighbors : int
    mode : {"connectivity", "distance"}
    metric, p, metric_params
        As in :class:`NearestNeighbors`.
    include_self : bool, default=False
        Count each point as its own first neighbour (distance 0).
    n_jobs, algorithm, algorithm_params
        As in :class:`NearestNeighbors`.

    Returns
    -------
    scipy.sparse.csr_matrix
    """
    if is_fitted_estimator(X):  # a fitted estimator: its own points and metric
        check_same_params(X, metric=metric, p=p, metric_params=metric_params)
        if not is_fastdr_index(X):  # scikit-learn's
            query = X._fit_X if include_self else None
            return X.kneighbors_graph(query, n_neighbors, mode=mode)
        if include_self:
            return _graph_with_self(X, n_neighbors, mode)
        return X.kneighbors_graph(None, n_neighbors, mode=mode)
    nn = NearestNeighbors(n_neighbors=n_neighbors, metric=metric, p=p,
                          metric_params=metric_params,
                          algorithm=algorithm, algorithm_params=algorithm_params,
                          n_jobs=n_jobs).fit(X)
    if include_self:
        return _graph_with_self(nn, n_neighbors, mode)
    return nn.kneighbors_graph(None, n_neighbors, mode=mode)


def _graph_with_self(nn, k, mode):
    check_graph_mode(mode)
    nn._check_k(k, self_query=False)
    Q = nn._fit_X
    m = Q.shape[0]
    if nn._algorithm == "nndescent" and m >= 2:
        # each point itself (distance 0), then the first k - 1 columns of its graph row
        sq, ind = nn._search_k(Q, k - 1, self_query=True) if k > 1 else (
            np.empty((m, 0)), np.empty((m, 0), dtype=np.int64))
        sq = np.hstack([np.zeros((m, 1)), sq])
        ind = np.hstack([np.arange(m, dtype=np.int64)[:, None], ind])
    else:
        sq, ind = nn._search_k(Q, k, self_query=False)
    return _search.knn_csr(nn._to_reported(sq), ind, mode, m)


def radius_neighbors_graph(X, radius, *, mode="connectivity", metric="minkowski", p=2,
                           metric_params=None, include_self=False, n_jobs=None,
                           algorithm="auto"):
    """The epsilon graph of X: an edge for every pair within ``radius`` (inclusive).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (m, d), or a fitted NearestNeighbors
        As in :func:`kneighbors_graph`.
    radius : float or array-like of shape (m,)
        One radius, or one per point (a fastdr extension: scikit-learn's function takes a
        float only).
    mode : {"connectivity", "distance"}
    metric, p, metric_params
        As in :class:`NearestNeighbors`.
    include_self : bool, default=False
    n_jobs, algorithm
        As in :class:`NearestNeighbors`.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (m, m)
    """
    if is_fitted_estimator(X) and hasattr(X, "radius_neighbors_graph"):
        check_same_params(X, metric=metric, p=p, metric_params=metric_params)
        if not is_fastdr_index(X):  # scikit-learn's
            query = X._fit_X if include_self else None
            return X.radius_neighbors_graph(query, radius, mode=mode)
        nn = X
    else:
        if algorithm == "nndescent":  # before fit builds a graph that cannot be used
            raise _approximate.no_radius_error()
        # an array of radii goes to the search, which checks it (one per point); the
        # constructor takes one radius, as scikit-learn's
        own = radius if np.ndim(radius) == 0 else 1.0
        nn = NearestNeighbors(radius=own, metric=metric, p=p, metric_params=metric_params,
                              algorithm=algorithm, n_jobs=n_jobs).fit(X)
    if not include_self:
        return nn.radius_neighbors_graph(None, radius, mode=mode)
    check_graph_mode(mode)
    indptr, indices, sq = nn._radius_csr(nn._fit_X, radius)
    return nn._radius_graph(indptr, indices, sq, mode)
