"""Isomap (Tenenbaum, de Silva and Langford, 2000): neighbour graph -> geodesic distances ->
classical MDS, with landmarks (de Silva and Tenenbaum, 2003) for large m."""

import copy
from numbers import Integral, Real

import numpy as np
import scipy.sparse

from .._base import BaseEstimator, TransformerMixin
from .._config import ISOMAP_QUERY_BLOCK_ENTRIES as _QUERY_BLOCK_ENTRIES
from .._eigen import SOLVERS
from .._kernels.graph.build import geodesic_through_neighbours
from .._kernels.spectral.mds_restore import restore_distances_inplace
from .._runtime.progress import StageLog
from .._runtime.threads import parallel_section
from .._validation.arrays import check_is_fitted, check_n_features, check_query
from .._validation.feature_names import check_feature_names, record_feature_names
from .._validation.params import (
    N_JOBS,
    VERBOSE,
    HasMethods,
    Interval,
    Satisfies,
    StrOptions,
    check_random_state,
    validate_params,
)
from .._validation.sparse import check_sparse
from ..neighbors import KNeighborsRegressor, NearestNeighbors
from ..neighbors._approximate import no_radius_error
from ..neighbors._search import NEIGHBORS_ALGORITHMS, from_sklearn_name
from . import _isomap_graph
from ._geodesic import PATH_METHODS, all_pairs, canonical_path_method, choose_path_method
from ._isomap_checks import check_embedding_size, check_n_neighbors
from ._isomap_precomputed import PrecomputedNeighbors, check_input, check_precomputed
from ._landmarks import LANDMARK_METHODS, check_geodesic_scale, fit_landmarks
from ._mds_core import embed_from_distances, triangulate

OUT_OF_SAMPLE = ("geodesic", "regressor")


def _is_inf(value):
    return isinstance(value, Real) and not isinstance(value, bool) and value == np.inf


#: ``np.inf``: the complete graph (radius) or the Chebyshev norm (p), as in scikit-learn.
_INF = Satisfies(_is_inf, "np.inf")


class Isomap(TransformerMixin, BaseEstimator):
    """Isomap embedding: classical MDS of the geodesic distances on a neighbour graph.

    The parameters up to ``metric_params`` are scikit-learn's, with its defaults; the rest are
    fastdr extras.

    Parameters
    ----------
    n_neighbors : int or None, default=5
        k of the symmetrised k-NN graph (edge {i, j} when either point is among the other's
        k nearest). Must be None when ``radius`` is given.
    radius : float or None, default=None
        Use the epsilon graph instead: an edge between every pair at most ``radius`` apart;
        ``np.inf`` is the complete graph. Needs ``n_neighbors=None``.
    n_components : int, default=2
    eigen_solver : {"auto", "arpack", "dense", "lobpcg", "randomized"}, default="auto"
        Solver for the top eigenpairs; ``"auto"`` is KernelPCA's rule (LAPACK for small m,
        ARPACK up to m = 2000, ``"randomized"`` above); ``"lobpcg"`` and ``"randomized"``
        are fastdr extras. ``"dense"`` needs LAPACK's own
        m x m work copy.
    tol : float, default=0
        Convergence tolerance of the iterative solvers (0: machine precision for ARPACK).
    max_iter : int or None, default=None
        Iteration limit of the iterative solvers.
    path_method : {"auto", "FW", "D", "floyd", "dijkstra"}, default="auto"
        ``"FW"`` (alias ``"floyd"``): Floyd-Warshall; ``"D"`` (alias ``"dijkstra"``):
        Dijkstra from every point. ``"auto"`` runs Floyd-Warshall when the graph stores more
        than a quarter of all m^2 pairs and Dijkstra otherwise. All give the same distances.
    neighbors_algorithm : {"auto", "brute", "kd_tree", "ball_tree", "nndescent"}, default="auto"
        The :class:`fastdr.NearestNeighbors` algorithm of the k-NN graph and of
        :meth:`transform`'s neighbour queries. ``"ball_tree"`` is an alias of the exact
        ``"kd_tree"``. ``"nndescent"`` (a fastdr extra) builds the graph approximately
        (about m log m work instead of m^2) and has no radius graph.
    n_jobs : int or None, default=None
        Threads; None means all cores (scikit-learn: one).
    metric : str or callable, default="minkowski"
        The metric of the neighbour search (:class:`fastdr.NearestNeighbors`' metrics).
        ``"precomputed"``: X is the (m, m) distance matrix, or a sparse neighbour graph
        whose stored entries are the candidate neighbours (a training row needs
        ``n_neighbors + 1`` entries when it stores the point itself, as scikit-learn's
        ``KNeighborsTransformer`` does); :meth:`transform` then takes the (n, m) distances
        to the training points.
    p : float, default=2
        Minkowski's p (1: manhattan, 2: euclidean, ``np.inf``: chebyshev).
    metric_params : dict or None, default=None
        Extra arguments of the metric.
    on_disconnected : {"connect", "raise", "largest"}, default="connect"
        When the graph falls apart: join every pair of components by its shortest edge,
        with a ``UserWarning`` naming the components, their sizes and the added edges
        (scikit-learn's behaviour; with a sparse precomputed graph scikit-learn's
        ``RuntimeError``); raise an error naming the components; or embed only the largest
        component (with a warning; ``kept_indices_`` lists its rows).
    out_of_sample : {"geodesic", "regressor"}, default="geodesic"
        How :meth:`transform` places new points. ``"geodesic"``: link each point to its
        training neighbours, take the geodesic distances through them and project them as
        scikit-learn does (the landmark-MDS triangulation). ``"regressor"``: predict with
        ``regressor`` fitted from the training rows to ``embedding_``.
    regressor : estimator or None, default=None
        Any regressor with ``fit``/``predict``; it is copied, not modified. None means
        ``fastdr.KNeighborsRegressor(n_neighbors=k, weights="distance")`` in the same metric.
    n_landmarks : int or None, default=None
        Landmark Isomap with this many landmarks: Dijkstra from the landmarks only (an
        m x L matrix instead of m x m), classical MDS of the landmark block, then every point
        is triangulated from its landmark distances.
    landmark_method : {"random", "maxmin"}, default="random"
        ``"random"`` draws the landmarks with ``random_state``; ``"maxmin"`` draws the first
        and takes each next one farthest (geodesically) from those chosen (one thread).
    random_state : int, RandomState or None, default=None
        Seeds the landmarks and the iterative eigensolvers.
    dtype : {None, np.float32, np.float64}, default=None
        Storage of the geodesic matrix; None follows X. float32 halves the memory.
    verbose : int, default=0
        1 or more prints each stage of ``fit`` with its time (and a bar for long runs).

    Attributes
    ----------
    embedding_ : ndarray of shape (n_kept, n_components)
        One row per kept row of X (all rows unless ``on_disconnected="largest"``).
    kernel_pca_ : fastdr.KernelPCA
        The fitted kernel PCA of ``-1/2 dist_matrix_**2`` (of the landmark block with
        landmarks): ``kernel_pca_.transform(-0.5 * G**2)`` places points from their geodesic
        distances ``G`` to the training points (to the landmarks).
    nbrs_ : NearestNeighbors
        Fitted on the kept rows; used by ``transform``. With ``metric="precomputed"``, an
        object with the same ``kneighbors`` and ``radius_neighbors_graph`` over the matrix.
    dist_matrix_ : ndarray of shape (n_kept, n_kept)
        The geodesic distances (not set with landmarks).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string column names.
    kept_indices_ : ndarray of int64
        Rows of X that ``embedding_`` holds, in order.
    eigenvalues_ : ndarray of shape (n_components,)
    n_connected_components_ : int
        Components of the neighbour graph before ``on_disconnected`` was applied.
    connecting_edges_ : ndarray of shape (n_edges, 2)
        Edges (row indices of X) added by ``on_disconnected="connect"``.
    short_circuit_edges_ : ndarray of shape (n_edges, 2)
        Edges (i, j), i < j, longer than 3 times the median neighbour distance of both i and
        j (the usual sign of a short circuit); a warning is given when any is found.
    landmarks_ : ndarray of int64
        With landmarks: their positions in ``embedding_``'s rows.
    regressor_ : estimator

    Notes
    -----
    Memory: the m x m geodesic matrix is the only m x m array. It is announced before it is
    allocated (``fastdr.MemoryBudgetError`` suggests ``n_landmarks``), squared and
    double-centred in place, handed to the eigensolver, then turned back into distances in
    place. Landmark Isomap keeps an m x L matrix and never anything m x m.
    """

    _parameter_constraints = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
        "radius": [Interval(Real, 0, None, closed="left"), _INF, None],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "eigen_solver": [StrOptions(SOLVERS)],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "path_method": [StrOptions(PATH_METHODS)],
        "neighbors_algorithm": [StrOptions(NEIGHBORS_ALGORITHMS)],
        "n_jobs": N_JOBS,
        "metric": [str, callable],
        "p": [Interval(Real, 1, None, closed="left"), _INF],
        "metric_params": [dict, None],
        "on_disconnected": [StrOptions(_isomap_graph.POLICIES)],
        "out_of_sample": [StrOptions(OUT_OF_SAMPLE)],
        "regressor": [HasMethods(("fit", "predict")), None],
        "n_landmarks": [Interval(Integral, 1, None, closed="left"), None],
        "landmark_method": [StrOptions(LANDMARK_METHODS)],
        "random_state": ["random_state"],
        "dtype": [Satisfies(lambda v: _float_dtype(v) is not None, "np.float32, np.float64"),
                  None],
        "verbose": VERBOSE,
    }

    def __init__(self, *, n_neighbors=5, radius=None, n_components=2, eigen_solver="auto",
                 tol=0, max_iter=None, path_method="auto", neighbors_algorithm="auto",
                 n_jobs=None, metric="minkowski", p=2, metric_params=None,
                 on_disconnected="connect", out_of_sample="geodesic", regressor=None,
                 n_landmarks=None, landmark_method="random", random_state=None, dtype=None,
                 verbose=0):
        self.n_neighbors = n_neighbors
        self.radius = radius
        self.n_components = n_components
        self.eigen_solver = eigen_solver
        self.tol = tol
        self.max_iter = max_iter
        self.path_method = path_method
        self.neighbors_algorithm = neighbors_algorithm
        self.n_jobs = n_jobs
        self.metric = metric
        self.p = p
        self.metric_params = metric_params
        self.on_disconnected = on_disconnected
        self.out_of_sample = out_of_sample
        self.regressor = regressor
        self.n_landmarks = n_landmarks
        self.landmark_method = landmark_method
        self.random_state = random_state
        self.dtype = dtype
        self.verbose = verbose

    # ------------------------------------------------------------------ fit

    def fit(self, X, y=None):
        """Build the graph, compute the geodesic distances and embed them.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Or, with ``metric="precomputed"``, the (n_samples, n_samples) distances or a
            sparse neighbour graph.
        y : ignored

        Returns
        -------
        self
        """
        self._fit(X)
        return self

    def fit_transform(self, X, y=None):
        """Fit and return ``embedding_``.

        Parameters
        ----------
        X : array-like or sparse matrix, as in :meth:`fit`
        y : ignored

        Returns
        -------
        ndarray of shape (n_kept, n_components)
        """
        self._fit(X)
        return self.embedding_

    def _check_params(self):  # the checks that involve several parameters
        validate_params(self)
        if self.n_neighbors is not None and self.radius is not None:
            raise ValueError(
                "Both n_neighbors and radius are provided. Use "
                f"Isomap(radius={self.radius}, n_neighbors=None) if intended to use "
                f"radius-based neighbors, or Isomap(n_neighbors={self.n_neighbors}) for the "
                "k-NN graph."
            )
        if self.n_neighbors is None and self.radius is None:
            raise ValueError(
                "n_neighbors and radius are both None: Isomap needs a k-NN graph "
                "(n_neighbors=k) or an epsilon graph (radius=r, n_neighbors=None)."
            )
        if self.radius is not None and self.neighbors_algorithm == "nndescent":
            raise no_radius_error("neighbors_algorithm")
        if self.metric == "precomputed" and self.out_of_sample == "regressor":
            raise ValueError(
                "out_of_sample='regressor' needs the points' features, but "
                "metric='precomputed' gives only distances. Use out_of_sample='geodesic'."
            )

    def _search(self, estimator_class=NearestNeighbors):
        return _isomap_graph.search_kwargs(estimator_class, self.metric, self.p,
                                           self.metric_params)

    def _fit(self, X):
        log = StageLog(type(self).__name__, self.verbose)
        self._check_params()
        record_feature_names(self, X)
        X = check_input(X, self.metric)
        dtype = np.dtype(X.dtype if self.dtype is None else self.dtype)
        if not np.issubdtype(dtype, np.floating):
            dtype = np.dtype(np.float64)
        m = X.shape[0]
        n_neighbors = self.n_neighbors
        check_n_neighbors(n_neighbors, m)
        graph_param = (f"radius (now {self.radius})" if n_neighbors is None
                       else f"n_neighbors (now {n_neighbors})")
        precomputed = self.metric == "precomputed"
        source = PrecomputedNeighbors(n_neighbors, self.radius).fit(X) if precomputed else X
        graph, directed, nbrs = _isomap_graph.build_graph(
            source, n_neighbors=n_neighbors, radius=self.radius, n_jobs=self.n_jobs,
            verbose=self.verbose, algorithm=from_sklearn_name(self.neighbors_algorithm),
            search=self._search(), take_max=not precomputed)
        log.done("neighbour graph")
        self.short_circuit_edges_ = _isomap_graph.warn_short_circuits(
            graph, directed, graph_param, self.n_jobs)
        log.done("short-circuit check")
        if precomputed:
            nearest = (None if scipy.sparse.issparse(X)
                       else _isomap_graph.precomputed_nearest(X))
        else:
            nearest = _isomap_graph.euclidean_nearest(X, self.n_jobs, self._search())
        graph, kept, n_found, added = _isomap_graph.apply_policy(
            self.on_disconnected, graph, graph_param=graph_param, n_jobs=self.n_jobs,
            nearest=nearest, can_connect=nearest is not None)
        self.n_connected_components_ = n_found
        self.connecting_edges_ = added
        self.kept_indices_ = kept
        X_kept = X
        if kept.shape[0] != m:
            X_kept = X[kept][:, kept] if precomputed else X[kept]
            nbrs = (PrecomputedNeighbors(n_neighbors, self.radius).fit(X_kept) if precomputed
                    else NearestNeighbors(**nbrs.get_params()).fit(X_kept))
        log.done(f"connected components ({n_found} found, policy {self.on_disconnected!r})")
        m_kept = X_kept.shape[0]
        check_embedding_size(self.n_components, m_kept, self.n_landmarks)
        self.n_features_in_ = X.shape[1]
        self.nbrs_ = nbrs
        rng = check_random_state(self.random_state)
        for stale in ("dist_matrix_", "landmarks_", "regressor_", "_landmark_columns",
                      "_landmark_rank"):
            self.__dict__.pop(stale, None)
        if self.n_landmarks is None:
            self._fit_full(graph, dtype, rng)
        else:
            self._fit_landmarks(graph, dtype, rng)
        self.embedding_ = self.embedding_.astype(dtype, copy=False)
        self.kernel_pca_ = self._kernel_pca()
        if self.out_of_sample == "regressor":
            self.regressor_ = self._make_regressor(m_kept).fit(X_kept, self.embedding_)
            log.done("out-of-sample regressor")
        log.total()

    def _fit_full(self, graph, dtype, rng):
        log = StageLog(type(self).__name__, self.verbose)
        m = graph.n_nodes
        method = canonical_path_method(self.path_method)
        if method == "auto":
            method = choose_path_method(m, graph.nnz)
        D = all_pairs(
            graph, method=method, dtype=dtype, n_jobs=self.n_jobs,
            what="Isomap's m x m geodesic distance matrix",
            alternative="Use n_landmarks=L (Landmark Isomap keeps an m x L matrix instead), "
                        "or dtype=np.float32 to halve it.", progress=log)
        check_geodesic_scale(D, dtype)
        log.done(f"shortest paths ({method}, {m} x {m})")
        # the eigen pipeline checks LAPACK's work copy against the memory budget (D itself
        # must survive: the geodesic distances are restored from B afterwards)
        embedding, values, vectors, sq_means = embed_from_distances(
            D, self.n_components, eigen_solver=self.eigen_solver, random_state=rng,
            n_jobs=self.n_jobs, what="Isomap's double-centred geodesic matrix", tol=self.tol,
            max_iter=self.max_iter)
        log.done("double centring and eigensolver")
        with parallel_section(self.n_jobs):
            self._frobenius_sq = restore_distances_inplace(D, sq_means, 64)
        log.done("distances restored")
        self.dist_matrix_ = D
        self.embedding_ = embedding
        self.eigenvalues_ = values
        self._vectors = vectors
        self._sq_means = sq_means

    def _fit_landmarks(self, graph, dtype, rng):
        result = fit_landmarks(
            graph, self.n_landmarks, method=self.landmark_method, rng=rng,
            n_components=self.n_components, eigen_solver=self.eigen_solver, dtype=dtype,
            n_jobs=self.n_jobs, log=StageLog(type(self).__name__, self.verbose), tol=self.tol,
            max_iter=self.max_iter)
        self.landmarks_ = result.landmarks
        self.embedding_ = result.embedding
        self.eigenvalues_ = result.eigenvalues
        self._vectors = result.vectors
        self._sq_means = result.sq_means
        self._frobenius_sq = result.block_frobenius_sq
        self._landmark_columns = result.columns
        self._landmark_rank = result.rank

    def _kernel_pca(self):
        """scikit-learn's ``kernel_pca_``, assembled from this fit's eigenpairs (no second
        m x m matrix): its kernel row means are -1/2 the mean squared distances."""
        from ..decomposition import KernelPCA

        names = KernelPCA._get_param_names()
        params = {"n_components": self.n_components, "kernel": "precomputed",
                  "eigen_solver": self.eigen_solver, "random_state": self.random_state,
                  "n_jobs": self.n_jobs, "tol": self.tol, "max_iter": self.max_iter}
        kpca = KernelPCA(**{k: v for k, v in params.items() if k in names})
        vectors = self._vectors
        kpca.eigenvalues_ = np.asarray(self.eigenvalues_).astype(vectors.dtype)
        kpca.eigenvectors_ = vectors
        kpca.n_components_ = int(vectors.shape[1])
        kpca.n_features_in_ = int(vectors.shape[0])
        kpca.gamma_ = None
        kpca._row_means = -0.5 * np.asarray(self._sq_means, dtype=np.float64)
        kpca._grand_mean = float(kpca._row_means.mean())
        return kpca

    def _make_regressor(self, m_kept):
        if self.regressor is None:
            k = min(self.n_neighbors or 5, m_kept)
            return KNeighborsRegressor(n_neighbors=k, weights="distance", n_jobs=self.n_jobs,
                                       **self._search(KNeighborsRegressor))
        if hasattr(self.regressor, "get_params"):
            params = self.regressor.get_params(deep=False)
            return type(self.regressor)(**copy.deepcopy(params))
        return copy.deepcopy(self.regressor)

    # ------------------------------------------------------------------ use

    def transform(self, X):
        """Place new points in the embedding (see ``out_of_sample``).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_queries, n_features)
            With ``metric="precomputed"``: the (n_queries, n_training) distances to the
            training points (dense, or a sparse graph of candidate neighbours).

        Returns
        -------
        ndarray of shape (n_queries, n_components)
            In the dtype of ``embedding_``.
        """
        check_is_fitted(self, "embedding_")
        out_dtype = self.embedding_.dtype
        if self.metric == "precomputed":
            check_feature_names(self, X)
            X = check_precomputed(X, n_columns=self.nbrs_.n_samples_fit_, name="X")
        elif scipy.sparse.issparse(X):
            check_feature_names(self, X)
            X = check_sparse(X)
            check_n_features(self, X, "transform")
        else:
            X = check_query(self, X, "transform")
        if self.out_of_sample == "regressor":
            return np.asarray(self.regressor_.predict(X), dtype=out_dtype).reshape(
                X.shape[0], -1)
        nbr_indices, nbr_dist = _isomap_graph.query_neighbours(
            self.nbrs_, X, n_neighbors=self.n_neighbors, radius=self.radius,
            precomputed=self.metric == "precomputed")
        if self.n_landmarks is None:
            geodesic = self.dist_matrix_
            row_of = np.arange(geodesic.shape[0], dtype=np.int64)
        else:
            geodesic = self._landmark_columns
            row_of = self._landmark_rank
        n_cols = geodesic.shape[1]
        out = np.empty((X.shape[0], self.n_components), dtype=np.float64)
        step = max(1, _QUERY_BLOCK_ENTRIES // n_cols)
        for q0 in range(0, X.shape[0], step):
            q1 = min(X.shape[0], q0 + step)
            sq = np.empty((q1 - q0, n_cols), dtype=np.float64)
            with parallel_section(self.n_jobs):
                geodesic_through_neighbours(nbr_indices[q0:q1], nbr_dist[q0:q1], geodesic,
                                            row_of, sq)
            out[q0:q1] = triangulate(sq, self._sq_means, self._vectors, self.eigenvalues_)
        return out.astype(out_dtype, copy=False)

    def reconstruction_error(self):
        """Reconstruction error of the embedding, as scikit-learn defines it.

        ``sqrt(||B||_F^2 - sum(lambda_i^2)) / m`` with ``B = -1/2 J D^2 J`` the double-centred
        squared geodesic matrix and ``lambda`` the kept eigenvalues. With landmarks, B is the
        L x L landmark block (the only geodesic block computed) and m is L.

        Returns
        -------
        float
        """
        check_is_fitted(self, "embedding_")
        n = self._sq_means.shape[0]
        residual = max(self._frobenius_sq - float(np.sum(self.eigenvalues_ ** 2)), 0.0)
        return float(np.sqrt(residual) / n)

    def _fastdr_tags(self):
        return {"transformer_tags.preserves_dtype": ["float64", "float32"],
                "input_tags.sparse": True,
                "input_tags.pairwise": self.metric == "precomputed"}


def _float_dtype(value):
    """``np.dtype(value)`` when it is float32 or float64, else None."""
    try:
        dtype = np.dtype(value)
    except TypeError:
        return None
    return dtype if dtype in (np.float32, np.float64) else None
