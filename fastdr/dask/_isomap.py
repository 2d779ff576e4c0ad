"""Landmark Isomap over dask arrays.

1. the exact k-NN graph by :class:`fastdr.dask.NearestNeighbors` (O(m k) to the client);
2. the symmetric CSR graph, renumbered for locality as in memory, scattered once;
3. Dijkstra from the landmarks, split into groups of sources, one task per group (each an
   m x L_g panel that stays on its worker);
4. the L x L landmark block gathered to the client, classical MDS there;
5. the m x L landmark matrix rechunked by rows and triangulated block by block.

The client holds O(m k) (the graph, ``embedding_``) and O(L^2), never the m x L matrix.
"""

import dask
import dask.array as da
import numpy as np

from .._base import BaseEstimator, TransformerMixin
from .._config import DASK_LANDMARKS_PER_TASK as _SOURCES_PER_TASK
from .._eigen import SOLVERS
from .._kernels.graph.build import geodesic_through_neighbours
from .._runtime.threads import parallel_section
from .._validation.arrays import check_is_fitted
from .._validation.params import check_option, check_random_state, check_scalar
from ..manifold._geodesic import landmark_columns, locality_order, renumber
from ..manifold._isomap_checks import check_embedding_size, check_n_neighbors
from ..manifold._isomap_graph import apply_policy, short_circuit_edges, undirected
from ..manifold._landmarks import triangulate_rows
from ..manifold._mds_core import embed_from_distances, triangulate
from ..neighbors._base import reported_distances
from ._neighbors import NearestNeighbors, knn_parts
from ._utils import as_dask_queries, as_dask_rows, broadcast, stack_rows, task_n_jobs

DEFAULT_N_NEIGHBORS = 5


def _columns_task(graph, sources, dtype, n_jobs):
    return landmark_columns(graph, sources, dtype=dtype, n_jobs=task_n_jobs(n_jobs))


def _triangulate_block(block, sq_means, vectors, values):
    return triangulate_rows(block, sq_means, vectors, values)


def _through_neighbours(knn, panel, rank, fit_dtype, n_jobs):
    """Squared geodesics from a block of new points to one panel of landmarks."""
    sq_dist, ind = knn
    # the neighbour distances as the in-memory search reports them (in the training dtype)
    dist = reported_distances(sq_dist, False, fit_dtype).astype(np.float64)
    out = np.empty((ind.shape[0], panel.shape[1]), dtype=np.float64)
    with parallel_section(task_n_jobs(n_jobs)):
        geodesic_through_neighbours(ind, dist, panel, rank, out)
    return out


def _place(sq_parts, sq_means, vectors, values, dtype):
    sq = np.concatenate(sq_parts, axis=1)
    return triangulate(sq, sq_means, vectors, values).astype(dtype, copy=False)


class Isomap(TransformerMixin, BaseEstimator):
    """Landmark Isomap of a row-chunked dask array.

    The embedding is the in-memory ``fastdr.Isomap(n_landmarks=L)``'s with the same
    ``random_state``.

    Parameters
    ----------
    n_neighbors : int or None, default=None
        The k of the k-NN graph; None means 5.
    n_components : int, default=2
    eigen_solver : str, default="auto"
        For the L x L landmark block, as in :class:`fastdr.Isomap`.
    n_landmarks : int
        Required: the full Isomap needs the m x m geodesic matrix, which does not distribute
        (every entry depends on the whole graph) and is what outgrows one machine first.
    landmark_method : {"random"}, default="random"
        ``"maxmin"`` chooses each landmark from the previous Dijkstra run, which is serial;
        it is not offered here.
    on_disconnected : {"raise"}, default="raise"
    random_state : int, RandomState or None, default=None
    dtype : None, np.float32 or np.float64, default=None
        Of the m x L landmark matrix (None: X's dtype).
    n_jobs : int or None, default=None
        Threads per task; None means the cores of the worker that runs it.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_components)
    landmarks_ : ndarray of shape (n_landmarks,)
    eigenvalues_ : ndarray of shape (n_components,)
    n_features_in_ : int

    Notes
    -----
    Work O(m k d) for the graph (distributed), O(L m log m) for Dijkstra (distributed over
    L / 16 tasks), O(L^3) on the client, O(m L c) for the triangulation (distributed).
    Communication: the graph (O(m k)) once to each worker; the m x L matrix once between
    workers (rechunk from column panels to row blocks); O(L^2 + m c) to the client.
    """

    def __init__(self, *, n_neighbors=None, n_components=2, eigen_solver="auto",
                 n_landmarks=None, landmark_method="random", on_disconnected="raise",
                 random_state=None, dtype=None, n_jobs=None):
        self.n_neighbors = n_neighbors
        self.n_components = n_components
        self.eigen_solver = eigen_solver
        self.n_landmarks = n_landmarks
        self.landmark_method = landmark_method
        self.on_disconnected = on_disconnected
        self.random_state = random_state
        self.dtype = dtype
        self.n_jobs = n_jobs

    def _check_params(self, X):
        if self.n_landmarks is None:
            m = X.shape[0]
            raise ValueError(
                f"fastdr.dask.Isomap needs n_landmarks: the full Isomap computes the {m} x {m} "
                f"geodesic matrix ({8 * m * m / 2**30:.3g} GiB in float64), and every entry "
                "depends on the whole graph, so it does not split across workers. Pass "
                "n_landmarks=L (Landmark Isomap keeps an m x L matrix, spread over the "
                "workers), or use fastdr.Isomap on data in memory."
            )
        k = DEFAULT_N_NEIGHBORS if self.n_neighbors is None else self.n_neighbors
        check_scalar(k, "n_neighbors", "int", min_value=1)
        check_scalar(self.n_components, "n_components", "int", min_value=1)
        check_scalar(self.n_landmarks, "n_landmarks", "int", min_value=1)
        check_option(self.eigen_solver, "eigen_solver", SOLVERS)
        check_option(self.landmark_method, "landmark_method", ("random",))
        check_option(self.on_disconnected, "on_disconnected", ("raise",))
        dtype = X.dtype if self.dtype is None else np.dtype(self.dtype)
        if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise ValueError(f"dtype must be None, np.float32 or np.float64; got {self.dtype!r}.")
        m = X.shape[0]
        check_n_neighbors(k, m)
        # every point is embedded: on_disconnected="raise" keeps them all
        check_embedding_size(self.n_components, m, self.n_landmarks)
        return k, dtype

    def fit(self, X, y=None):
        """Build the graph, run the landmark Dijkstra on the workers and embed.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features), chunked by rows
        y : ignored

        Returns
        -------
        self
        """
        X = as_dask_rows(X, "Isomap", min_samples=2)
        k, dtype = self._check_params(X)
        m = X.shape[0]
        nbrs = NearestNeighbors(n_neighbors=k, n_jobs=self.n_jobs).fit(X)
        dist, ind = dask.compute(*nbrs.kneighbors())
        indptr = np.arange(0, m * k + 1, k, dtype=np.int64)
        directed = (indptr, ind.ravel(), dist.ravel().astype(np.float64))
        graph = undirected(*directed, take_max=True, n_jobs=self.n_jobs)
        self.short_circuit_edges_ = short_circuit_edges(graph, directed, self.n_jobs)
        graph, _, n_found, _ = apply_policy(
            "raise", graph, None, graph_param=f"n_neighbors (now {k})", n_jobs=self.n_jobs)
        rng = check_random_state(self.random_state)
        order, rank = locality_order(graph)
        self._local_graph = renumber(graph, order, rank, self.n_jobs)
        self._rank = rank
        self._dtype = dtype
        self._fit_dtype = X.dtype  # that of the neighbour distances transform reports
        landmarks = np.sort(rng.choice(m, self.n_landmarks, replace=False)).astype(np.int64)
        sources = rank[landmarks]
        self._sources = sources
        columns = da.concatenate(self._panels(), axis=1)
        block = np.array(columns[sources].compute(), dtype=np.float64)
        block = 0.5 * (block + block.T)  # the two Dijkstra runs may differ in the last bit
        _, values, vectors, sq_means = embed_from_distances(
            block, self.n_components, eigen_solver=self.eigen_solver, random_state=rng,
            n_jobs=self.n_jobs, what="The double-centred landmark geodesic matrix")
        rows = columns.rechunk({0: X.chunks[0], 1: -1})
        local_embedding = rows.map_blocks(
            _triangulate_block, sq_means, vectors, values, dtype=np.float64,
            chunks=(rows.chunks[0], (self.n_components,))).compute()
        self.embedding_ = local_embedding[rank].astype(dtype, copy=False)
        self.landmarks_ = landmarks
        self.eigenvalues_ = values
        self._vectors = vectors
        self._sq_means = sq_means
        self.nbrs_ = nbrs
        self._n_neighbors = k
        self.n_connected_components_ = n_found
        self.n_features_in_ = int(X.shape[1])
        return self

    def _panels(self):
        """The m x L landmark geodesic matrix as lazy column panels (one Dijkstra task each),
        on the graph scattered once to the workers."""
        m = self._local_graph.n_nodes
        local = broadcast(dask.delayed(self._local_graph, pure=True))
        panels = []
        for s0 in range(0, self._sources.shape[0], _SOURCES_PER_TASK):
            group = self._sources[s0:s0 + _SOURCES_PER_TASK]
            part = dask.delayed(_columns_task, pure=True)(local, group, self._dtype,
                                                          self.n_jobs)
            panels.append(da.from_delayed(part, shape=(m, group.shape[0]), dtype=self._dtype))
        return panels

    def fit_transform(self, X, y=None):
        """Fit and return the embedding as a dask array with X's row chunks.

        Parameters
        ----------
        X : dask array of shape (n_samples, n_features), chunked by rows
            Training samples (at least 2); a dask DataFrame is converted to an array.
        y : ignored
            Not used; present for API consistency.

        Returns
        -------
        dask array of shape (n_samples, n_components)
            ``embedding_`` (a NumPy fitted attribute) in X's row chunks.
        """
        X = as_dask_rows(X, "Isomap", min_samples=2)
        self.fit(X)
        return da.from_array(self.embedding_, chunks=(X.chunks[0], self.n_components))

    def transform(self, X):
        """Lazily place new points by geodesics to the landmarks and triangulation.

        The geodesics run through the new points' k nearest training points (the in-memory
        ``out_of_sample="geodesic"``).

        The landmark Dijkstra runs again inside the graph (the fit keeps only the O(m k)
        graph, never the m x L matrix); each query block meets each landmark panel once.

        Parameters
        ----------
        X : dask array of shape (n_queries, n_features)

        Returns
        -------
        dask array of shape (n_queries, n_components), with X's row chunks
        """
        check_is_fitted(self, "embedding_")
        X = as_dask_queries(X, self, "Isomap", "transform")
        k = min(self._n_neighbors, self.nbrs_.n_samples_fit_)
        parts, _ = knn_parts(self.nbrs_, X, k, "transform")
        panels = [p.to_delayed().ravel()[0] for p in self._panels()]
        out = []
        for knn in parts:
            sq_parts = [dask.delayed(_through_neighbours, pure=True)(
                knn, panel, self._rank, self._fit_dtype, self.n_jobs)
                        for panel in panels]
            out.append(dask.delayed(_place, pure=True)(sq_parts, self._sq_means, self._vectors,
                                                       self.eigenvalues_,
                                                       self.embedding_.dtype))
        return stack_rows(out, X.chunks[0], self.n_components, self.embedding_.dtype)
