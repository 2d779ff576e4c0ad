"""Isomap (Tenenbaum, de Silva and Langford, 2000): neighbour graph -> geodesic distances ->
classical MDS, with landmarks (de Silva and Tenenbaum, 2003) for large m."""

import copy
import warnings
from numbers import Integral, Real

import numpy as np

from .._base import BaseEstimator, TransformerMixin
from .._eigen import SOLVERS
from .._feature_names import record_feature_names
from .._kernels.graph_build import geodesic_through_neighbours
from .._kernels.mds_restore import restore_distances_inplace
from .._parallel import parallel_section
from .._params import N_JOBS, VERBOSE, HasMethods, Interval, Satisfies, StrOptions, validate_params
from .._progress import StageLog
from .._validation import (
    check_array,
    check_is_fitted,
    check_query,
    check_random_state,
)
from ..neighbors import KNeighborsRegressor, NearestNeighbors
from ..neighbors._approximate import no_radius_error
from ..neighbors._search import NEIGHBORS_ALGORITHMS, from_sklearn_name
from . import _isomap_graph
from ._geodesic import PATH_METHODS, all_pairs, choose_path_method
from ._landmarks import LANDMARK_METHODS, check_geodesic_scale, fit_landmarks
from ._mds_core import embed_from_distances, triangulate

OUT_OF_SAMPLE = ("geodesic", "regressor")
DEFAULT_N_NEIGHBORS = 5
_QUERY_BLOCK_ENTRIES = 1 << 22  # float64 entries of transform's scratch block


class Isomap(TransformerMixin, BaseEstimator):
    """Isomap embedding: classical MDS of the geodesic distances on a neighbour graph.

    Parameters
    ----------
    n_neighbors : int or None, default=None
        k of the symmetrised k-NN graph (edge {i, j} when either point is among the other's
        k nearest). None means 5, unless ``radius`` is given. Giving both is an error.
    radius : float or None, default=None
        Use the epsilon graph instead: an edge between every pair at most ``radius`` apart.
    n_components : int, default=2
    path_method : {"auto", "dijkstra", "floyd"}, default="auto"
        ``"auto"`` runs Floyd-Warshall when the graph stores more than a quarter of all m^2
        pairs (average degree above m/4), and Dijkstra from every point otherwise (every
        k-NN graph). Both give the same distances.
    neighbors_algorithm : {"auto", "brute", "kd_tree", "ball_tree", "nndescent"}, default="auto"
        The :class:`fastdr.NearestNeighbors` algorithm of the k-NN graph and of
        :meth:`transform`'s neighbour queries. ``"ball_tree"`` (scikit-learn's name) is an
        alias of the exact ``"kd_tree"``. ``"nndescent"`` builds the graph approximately
        (about m log m work instead of m^2; worth it above roughly 50,000 points) and has no
        radius graph.
    eigen_solver : {"auto", "dense", "arpack", "lobpcg", "randomized"}, default="auto"
        Solver for the top eigenpairs (see :mod:`fastdr._eigen` for the ``"auto"`` rule).
        ``"dense"`` needs LAPACK's own m x m work copy.
    on_disconnected : {"raise", "connect", "largest"}, default="raise"
        What to do when the graph falls apart: raise an error naming the components;
        join every pair of components by its shortest edge (with a warning); or embed only
        the largest component (with a warning; ``kept_indices_`` lists its rows).
    out_of_sample : {"geodesic", "regressor"}, default="geodesic"
        How :meth:`transform` places new points. ``"geodesic"``: link each point to its
        training neighbours (its ``n_neighbors`` nearest, or those within ``radius``), take
        the geodesic distances through them, and triangulate as in landmark MDS.
        ``"regressor"``: predict with ``regressor`` fitted from the training rows to
        ``embedding_``.
    regressor : estimator or None, default=None
        Any regressor with ``fit``/``predict`` (scikit-learn's work); it is copied, not
        modified. None means ``fastdr.KNeighborsRegressor(n_neighbors=k, weights="distance")``.
    n_landmarks : int or None, default=None
        Landmark Isomap with this many landmarks: Dijkstra from the landmarks only (an
        m x L matrix instead of m x m), classical MDS of the landmark block, then every point
        is triangulated from its landmark distances.
    landmark_method : {"random", "maxmin"}, default="random"
        ``"random"`` draws the landmarks with ``random_state``; ``"maxmin"`` draws the first
        and takes each next one farthest (geodesically) from those chosen. Max-min spreads the
        landmarks better but runs its Dijkstra searches one at a time, on one thread.
    random_state : int, RandomState or None, default=None
        Seeds the landmarks and the iterative eigensolvers.
    dtype : {None, np.float32, np.float64}, default=None
        Storage of the geodesic matrix; None follows X. float32 halves the memory (the graph,
        the shortest-path sums and the centring still work in float64).
    n_jobs : int or None, default=None
        Threads; None means all cores.
    verbose : int, default=0
        1 or more prints one line per stage of ``fit`` with its time (neighbour graph,
        shortest paths, eigensolver, ...) and, for Dijkstra runs expected to last over 10 s,
        a progress bar (tqdm's when installed). A fastdr extra: scikit-learn's Isomap has
        no ``verbose``.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_kept, n_components)
        One row per kept row of X (all rows unless ``on_disconnected="largest"``).
    dist_matrix_ : ndarray of shape (n_kept, n_kept)
        The geodesic distances (not set with landmarks).
    kept_indices_ : ndarray of int64
        Rows of X that ``embedding_`` holds, in order.
    eigenvalues_ : ndarray of shape (n_components,)
    n_connected_components_ : int
        Components of the neighbour graph before ``on_disconnected`` was applied.
    connecting_edges_ : ndarray of shape (n_edges, 2)
        Edges (row indices of X) added by ``on_disconnected="connect"``; empty otherwise.
    short_circuit_edges_ : ndarray of shape (n_edges, 2)
        Edges (i, j), i < j, row indices of X, longer than 3 times the median neighbour
        distance of both i and j (a jump between two dense neighbourhoods, the usual sign of a
        short circuit); a warning is given when any is found. A lone stray point is not caught
        (its own neighbour distances are long too).
    landmarks_ : ndarray of int64
        With landmarks: their positions in ``embedding_``'s rows.
    nbrs_ : NearestNeighbors
        Fitted on the kept rows; used by ``transform``.
    regressor_ : estimator
        With ``out_of_sample="regressor"``.
    n_features_in_ : int

    Notes
    -----
    Memory: the m x m geodesic matrix is the only m x m array. It is announced before it is
    allocated (``fastdr.MemoryBudgetError`` names its bytes and suggests ``n_landmarks``),
    squared and double-centred in place, handed to the eigensolver, then turned back into
    distances in place (``D_ij^2 = -2 B_ij + r_i + r_j - g``; with float32 storage the
    recovered distances carry an absolute error of about 1e-7 times the largest squared
    distance). Landmark Isomap keeps an m x L matrix and never anything m x m.
    """

    _parameter_constraints = {
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
        "radius": [Interval(Real, 0, None, closed="neither"), None],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "path_method": [StrOptions(PATH_METHODS)],
        "neighbors_algorithm": [StrOptions(NEIGHBORS_ALGORITHMS)],
        "eigen_solver": [StrOptions(SOLVERS)],
        "on_disconnected": [StrOptions(_isomap_graph.POLICIES)],
        "out_of_sample": [StrOptions(OUT_OF_SAMPLE)],
        "regressor": [HasMethods(("fit", "predict")), None],
        "n_landmarks": [Interval(Integral, 1, None, closed="left"), None],
        "landmark_method": [StrOptions(LANDMARK_METHODS)],
        "random_state": ["random_state"],
        "dtype": [Satisfies(lambda v: _float_dtype(v) is not None, "np.float32, np.float64"),
                  None],
        "n_jobs": N_JOBS,
        "verbose": VERBOSE,
    }

    def __init__(self, *, n_neighbors=None, radius=None, n_components=2, path_method="auto",
                 neighbors_algorithm="auto", eigen_solver="auto", on_disconnected="raise",
                 out_of_sample="geodesic", regressor=None, n_landmarks=None,
                 landmark_method="random", random_state=None, dtype=None, n_jobs=None,
                 verbose=0):
        self.n_neighbors = n_neighbors
        self.radius = radius
        self.n_components = n_components
        self.path_method = path_method
        self.neighbors_algorithm = neighbors_algorithm
        self.eigen_solver = eigen_solver
        self.on_disconnected = on_disconnected
        self.out_of_sample = out_of_sample
        self.regressor = regressor
        self.n_landmarks = n_landmarks
        self.landmark_method = landmark_method
        self.random_state = random_state
        self.dtype = dtype
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ fit

    def fit(self, X, y=None):
        """Build the graph, compute the geodesic distances and embed them.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
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
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        ndarray of shape (n_kept, n_components)
        """
        self._fit(X)
        return self.embedding_

    def _check_params(self, X):
        validate_params(self)
        if self.n_neighbors is not None and self.radius is not None:
            raise ValueError(
                f"Both n_neighbors={self.n_neighbors!r} and radius={self.radius!r} were given. "
                "Isomap uses either a k-NN graph (n_neighbors) or an epsilon graph (radius): "
                "pass only one of them."
            )
        if self.radius is not None and self.neighbors_algorithm == "nndescent":
            raise no_radius_error("neighbors_algorithm")
        if self.radius is not None:
            n_neighbors = None
        else:
            n_neighbors = DEFAULT_N_NEIGHBORS if self.n_neighbors is None else self.n_neighbors
        dtype = X.dtype if self.dtype is None else np.dtype(self.dtype)
        return n_neighbors, np.dtype(dtype)

    def _fit(self, X):
        log = StageLog(type(self).__name__, self.verbose)
        record_feature_names(self, X)
        X = check_array(X, min_samples=2)
        n_neighbors, dtype = self._check_params(X)
        m = X.shape[0]
        if n_neighbors is not None and n_neighbors >= m:
            raise ValueError(
                f"n_neighbors={n_neighbors} must be smaller than the number of samples ({m}): "
                f"a point is not its own neighbour. Use n_neighbors <= {m - 1}."
            )
        graph_param = (f"radius (now {self.radius})" if n_neighbors is None
                       else f"n_neighbors (now {n_neighbors})")
        graph, directed, nbrs = _isomap_graph.build_graph(
            X, n_neighbors=n_neighbors, radius=self.radius, n_jobs=self.n_jobs,
            verbose=self.verbose, algorithm=from_sklearn_name(self.neighbors_algorithm))
        log.done("neighbour graph")
        self.short_circuit_edges_ = _isomap_graph.short_circuit_edges(graph, directed,
                                                                      self.n_jobs)
        if self.short_circuit_edges_.shape[0]:
            shown = ", ".join(f"({i}, {j})" for i, j in self.short_circuit_edges_[:5].tolist())
            warnings.warn(
                f"The neighbour graph has {self.short_circuit_edges_.shape[0]} edge(s) longer "
                f"than {_isomap_graph.SHORT_CIRCUIT_FACTOR:g} times the median neighbour distance "
                f"of both of their ends ({shown}; see short_circuit_edges_). They may be "
                "short circuits between distant parts of the manifold; check those points, "
                f"or use a smaller {graph_param}.",
                UserWarning,
                stacklevel=3,
            )
        log.done("short-circuit check")
        graph, kept, n_found, added = _isomap_graph.apply_policy(
            self.on_disconnected, graph, X, graph_param=graph_param, n_jobs=self.n_jobs)
        self.n_connected_components_ = n_found
        self.connecting_edges_ = added
        self.kept_indices_ = kept
        X_kept = X if kept.shape[0] == m else X[kept]
        if kept.shape[0] != m:
            nbrs = NearestNeighbors(n_neighbors=nbrs.n_neighbors, radius=nbrs.radius,
                                    algorithm=nbrs.algorithm, n_jobs=self.n_jobs).fit(X_kept)
        log.done(f"connected components ({n_found} found, policy {self.on_disconnected!r})")
        m_kept = X_kept.shape[0]
        limit, what = m_kept, f"the number of embedded points ({m_kept})"
        if self.n_landmarks is not None:
            if self.n_landmarks > m_kept:
                raise ValueError(
                    f"n_landmarks={self.n_landmarks} is larger than the number of embedded "
                    f"points ({m_kept}). Use n_landmarks <= {m_kept}."
                )
            limit, what = self.n_landmarks, f"n_landmarks ({self.n_landmarks})"
        if self.n_components > limit:
            raise ValueError(
                f"n_components={self.n_components} is larger than {what}. "
                f"Use n_components <= {limit}."
            )
        self.n_features_in_ = X.shape[1]
        self.nbrs_ = nbrs
        self._n_neighbors = n_neighbors
        rng = check_random_state(self.random_state)
        for stale in ("dist_matrix_", "landmarks_", "regressor_", "_landmark_columns",
                      "_landmark_rank"):
            self.__dict__.pop(stale, None)
        if self.n_landmarks is None:
            self._fit_full(graph, dtype, rng)
        else:
            self._fit_landmarks(graph, dtype, rng)
        self.embedding_ = self.embedding_.astype(dtype, copy=False)
        if self.out_of_sample == "regressor":
            self.regressor_ = self._make_regressor(n_neighbors, m_kept).fit(X_kept,
                                                                           self.embedding_)
            log.done("out-of-sample regressor")
        log.total()

    def _fit_full(self, graph, dtype, rng):
        log = StageLog(type(self).__name__, self.verbose)
        m = graph.n_nodes
        method = self.path_method
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
            n_jobs=self.n_jobs, what="Isomap's double-centred geodesic matrix")
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
            n_jobs=self.n_jobs, log=StageLog(type(self).__name__, self.verbose))
        self.landmarks_ = result.landmarks
        self.embedding_ = result.embedding
        self.eigenvalues_ = result.eigenvalues
        self._vectors = result.vectors
        self._sq_means = result.sq_means
        self._frobenius_sq = result.block_frobenius_sq
        self._landmark_columns = result.columns
        self._landmark_rank = result.rank

    def _make_regressor(self, n_neighbors, m_kept):
        if self.regressor is None:
            k = min(n_neighbors or DEFAULT_N_NEIGHBORS, m_kept)
            return KNeighborsRegressor(n_neighbors=k, weights="distance", n_jobs=self.n_jobs)
        if hasattr(self.regressor, "get_params"):
            params = self.regressor.get_params(deep=False)
            return type(self.regressor)(**copy.deepcopy(params))
        return copy.deepcopy(self.regressor)

    # ------------------------------------------------------------------ use

    def transform(self, X):
        """Place new points in the embedding (see ``out_of_sample``).

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features)

        Returns
        -------
        ndarray of shape (n_queries, n_components)
            In the dtype of ``embedding_``.
        """
        check_is_fitted(self, "embedding_")
        X = check_query(self, X, "transform")
        out_dtype = self.embedding_.dtype
        if self.out_of_sample == "regressor":
            return np.asarray(self.regressor_.predict(X), dtype=out_dtype).reshape(
                X.shape[0], -1)
        nbr_indices, nbr_dist = self._query_neighbours(X)
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

    def _query_neighbours(self, X):
        """Training neighbours of each query as padded (n, k) arrays (-1 = no neighbour)."""
        if self._n_neighbors is not None:
            k = min(self._n_neighbors, self.nbrs_.n_samples_fit_)
            dist, ind = self.nbrs_.kneighbors(X, n_neighbors=k)
            return ind.astype(np.int64), dist.astype(np.float64)
        csr = self.nbrs_.radius_neighbors_graph(X, mode="distance")
        counts = np.diff(csr.indptr).astype(np.int64)
        lonely = np.flatnonzero(counts == 0)
        if lonely.size:
            raise ValueError(
                f"{lonely.size} of the {X.shape[0]} points to transform (rows "
                f"{lonely[:5].tolist()}{'...' if lonely.size > 5 else ''}) have no training "
                f"point within radius={self.radius}, so their geodesic distances are "
                "infinite. Use a larger radius, or out_of_sample='regressor'."
            )
        rows = np.repeat(np.arange(X.shape[0]), counts)
        slots = np.arange(csr.nnz) - np.repeat(csr.indptr[:-1], counts)
        ind = np.full((X.shape[0], int(counts.max())), -1, dtype=np.int64)
        dist = np.zeros(ind.shape, dtype=np.float64)
        ind[rows, slots] = csr.indices
        dist[rows, slots] = csr.data
        return ind, dist

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
        return {"transformer_tags.preserves_dtype": ["float64", "float32"]}


def _float_dtype(value):
    """``np.dtype(value)`` when it is float32 or float64, else None."""
    try:
        dtype = np.dtype(value)
    except TypeError:
        return None
    return dtype if dtype in (np.float32, np.float64) else None
