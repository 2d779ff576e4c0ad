"""Geodesic (shortest-path) distances on an undirected neighbour graph.

* :func:`all_pairs`: the dense m x m matrix, by Dijkstra from every node or by blocked
  Floyd-Warshall (rule: :func:`choose_path_method`), announced before it is allocated.
* :func:`landmark_columns`: the m x L matrix of distances to L landmark nodes.
* :func:`geodesic_distances`: the same as ``scipy.sparse.csgraph.shortest_path(G,
  directed=False)`` for a sparse graph ``G``, on fastdr's kernels.

Before Dijkstra the nodes are renumbered by reverse Cuthill-McKee, so that a Dijkstra wave
front touches nearby memory; outputs are always in the caller's numbering.
"""

from typing import NamedTuple

import numba
import numpy as np
import scipy.sparse
from scipy.sparse.csgraph import reverse_cuthill_mckee

from .._config import DIJKSTRA_SOURCE_BLOCK, FLOYD_MIN_DENSITY, LANDMARK_PANEL, PATH_TILE
from .._kernels.graph import shortest_paths as graph_kernels
from .._kernels.graph.build import permute_csr, symmetrize_csr
from .._runtime.progress import run_in_chunks
from .._runtime.threads import effective_n_jobs, parallel_section
from .._validation.arrays import check_array
from .._validation.budget import check_dense_allocation
from .._validation.indices import check_sparse_graph
from .._validation.params import check_option

#: ``path_method`` values: scikit-learn's names ("FW" Floyd-Warshall, "D" Dijkstra) and
#: fastdr's aliases of them.
PATH_METHODS = ("auto", "FW", "D", "dijkstra", "floyd")
_ALIASES = {"FW": "floyd", "D": "dijkstra"}


def canonical_path_method(method):
    """``"FW"`` -> ``"floyd"``, ``"D"`` -> ``"dijkstra"``; other values unchanged."""
    return _ALIASES.get(method, method)


class Graph(NamedTuple):
    """An undirected graph as symmetric CSR arrays (int64 indptr, int32 indices, float64)."""

    indptr: np.ndarray
    indices: np.ndarray
    weights: np.ndarray

    @property
    def n_nodes(self):
        return self.indptr.shape[0] - 1

    @property
    def nnz(self):
        return int(self.indices.shape[0])

    def to_scipy(self):
        """The graph as a ``scipy.sparse.csr_matrix`` (explicit zero weights kept)."""
        return scipy.sparse.csr_matrix((self.weights, self.indices, self.indptr),
                                       shape=(self.n_nodes, self.n_nodes))


def undirected(indptr, indices, weights, *, take_max, n_jobs=None):
    """Symmetrise a directed CSR graph into a :class:`Graph`.

    ``take_max`` keeps the larger of two opposite weights (Isomap's symmetrised k-NN graph);
    otherwise the smaller (SciPy's ``directed=False``). Self-loops are dropped.
    """
    with parallel_section(n_jobs):
        out = symmetrize_csr(np.asarray(indptr, dtype=np.int64),
                             np.asarray(indices, dtype=np.int64),
                             np.asarray(weights, dtype=np.float64), bool(take_max))
    return Graph(*out)


def choose_path_method(n_nodes, nnz):
    """The method ``path_method="auto"`` picks.

    Dijkstra from every node costs about ``m (c1 m log m + c2 nnz)``, Floyd-Warshall about
    ``c3 m^3`` whatever the graph: Dijkstra wins by far on k-NN graphs, Floyd-Warshall only
    on nearly complete ones (bench: shortest_path). So ``"floyd"`` is chosen when
    ``nnz > FLOYD_MIN_DENSITY * m^2`` and
    ``"dijkstra"`` otherwise (every k-NN graph); ``FLOYD_MIN_DENSITY`` is in
    :mod:`fastdr._config`.
    """
    return "floyd" if nnz > FLOYD_MIN_DENSITY * float(n_nodes) ** 2 else "dijkstra"


def locality_order(graph):
    """Reverse Cuthill-McKee numbering: ``order[r]`` is the node numbered r; ``rank`` is the
    inverse permutation."""
    pattern = scipy.sparse.csr_matrix(
        (np.ones(graph.nnz, dtype=np.int8), graph.indices, graph.indptr),
        shape=(graph.n_nodes, graph.n_nodes))
    order = np.asarray(reverse_cuthill_mckee(pattern, symmetric_mode=True), dtype=np.int64)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0], dtype=np.int64)
    return order, rank


def renumber(graph, order, rank, n_jobs=None):
    """The graph with node ``order[r]`` renamed r."""
    with parallel_section(n_jobs):
        return Graph(*permute_csr(graph.indptr, graph.indices, graph.weights, order, rank))


def all_pairs(graph, *, method, dtype, n_jobs, what, alternative, progress=None):
    """The dense matrix of geodesic distances (``inf`` between components).

    Parameters
    ----------
    graph : Graph
    method : {"dijkstra", "floyd"}
    dtype : numpy float dtype of the result
    n_jobs : int or None
    what, alternative : str
        For the memory announcement (:func:`fastdr._validation.check_dense_allocation`).
    progress : StageLog or None
        When verbose, Dijkstra's sources run in chunks under a progress bar if they are
        expected to take long (:func:`fastdr._runtime.progress.run_in_chunks`); same result.

    Returns
    -------
    ndarray of shape (m, m)
        Exactly symmetric (Dijkstra fills one triangle and mirrors it), zero diagonal.
    """
    m = graph.n_nodes
    check_dense_allocation((m, m), dtype, what=what, alternative=alternative)
    D = np.empty((m, m), dtype=dtype)
    if method == "floyd":
        with parallel_section(n_jobs):
            graph_kernels.dense_from_csr(graph.indptr, graph.indices, graph.weights, D)
            graph_kernels.floyd_warshall_inplace(D, PATH_TILE)
        return D
    order, rank = locality_order(graph)
    local = renumber(graph, order, rank, n_jobs)
    with parallel_section(n_jobs):
        with numba.parallel_chunksize(1):  # hand out blocks dynamically: a busy core lags
            run_in_chunks(progress, -(-m // DIJKSTRA_SOURCE_BLOCK), lambda b0, b1: (
                graph_kernels.all_pairs_upper(local.indptr, local.indices, local.weights,
                                              order, D, DIJKSTRA_SOURCE_BLOCK, b0, b1)),
                what=f"Dijkstra ({DIJKSTRA_SOURCE_BLOCK} sources per step)")
        graph_kernels.mirror_upper(D, rank, PATH_TILE)
    return D


def landmark_columns(graph, sources, *, dtype, n_jobs, progress=None):
    """Geodesic distances from every node to each landmark node, one column per landmark.

    Parameters
    ----------
    graph : Graph
        In the numbering the caller wants for the rows.
    sources : ndarray of int, shape (L,)
    dtype : numpy float dtype
    n_jobs : int or None
    progress : StageLog or None
        As in :func:`all_pairs`.

    Returns
    -------
    ndarray of shape (m, L)
        Announced first with :func:`check_dense_allocation`.
    """
    columns = _landmark_output(graph.n_nodes, len(sources), dtype)
    sources = np.asarray(sources, dtype=np.int64)
    with parallel_section(n_jobs), numba.parallel_chunksize(1):
        sources = np.asarray(sources, dtype=np.int64)
        run_in_chunks(progress, -(-sources.shape[0] // LANDMARK_PANEL), lambda g0, g1: (
            graph_kernels.dijkstra_columns(graph.indptr, graph.indices, graph.weights,
                                           sources, columns, LANDMARK_PANEL, g0, g1)),
            what=f"landmark Dijkstra ({LANDMARK_PANEL} sources per step)")
    return columns


def maxmin_columns(graph, n_landmarks, first, *, dtype):
    """Choose landmarks by greedy max-min from node ``first`` and return their columns.

    Serial by nature (each choice needs the previous Dijkstra), so it runs on one thread.

    Returns
    -------
    columns : ndarray of shape (m, L)
    sources : ndarray of shape (L,)
        The chosen nodes, in column order.
    """
    columns = _landmark_output(graph.n_nodes, n_landmarks, dtype)
    sources = graph_kernels.maxmin_landmarks(graph.indptr, graph.indices, graph.weights,
                                             int(first), columns, LANDMARK_PANEL)
    return columns, sources


def _landmark_output(m, n_landmarks, dtype):
    check_dense_allocation(
        (m, n_landmarks), dtype, what="The m x L landmark geodesic matrix",
        alternative="Use fewer landmarks (n_landmarks) or dtype=np.float32 to halve it.")
    return np.empty((m, n_landmarks), dtype=dtype)


def geodesic_distances(graph, *, method="auto", dtype=np.float64, n_jobs=None):
    """All-pairs geodesic (shortest-path) distances of a graph, read as undirected.

    Equals ``scipy.sparse.csgraph.shortest_path(graph, directed=False)``: an edge may be
    walked both ways, and when both ``graph[i, j]`` and ``graph[j, i]`` are stored the
    smaller counts. Explicit zeros of a sparse graph are zero-length edges. This is the
    shortest-path step of :class:`fastdr.Isomap`, for any neighbour graph, for example one
    from :func:`fastdr.kneighbors_graph` with ``mode="distance"``.

    Parameters
    ----------
    graph : {sparse matrix, array-like} of shape (m, m)
        Finite, non-negative edge lengths; a missing edge is an entry that is not stored.
        Dense input is converted to CSR, so its zeros are missing edges (scipy's rule for
        dense graphs).
    method : {"auto", "FW", "D", "dijkstra", "floyd"}, default="auto"
        The shortest-path algorithm. ``"dijkstra"`` runs Dijkstra from every node, the
        sources in parallel; ``"floyd"`` runs blocked Floyd-Warshall; ``"FW"`` and
        ``"D"`` are scikit-learn's names of the two. ``"auto"`` picks Floyd-Warshall only
        for graphs that store more than a quarter of all m^2 pairs, Dijkstra otherwise
        (every k-NN graph).
    dtype : {np.float64, np.float32}, default=np.float64
        The dtype of the result; float32 halves the m x m matrix.
    n_jobs : int or None, default=None
        Threads for this call; None or -1 means all cores.

    Returns
    -------
    ndarray of shape (m, m)
        Zero on the diagonal, ``inf`` between nodes that are not connected.

    Raises
    ------
    fastdr.MemoryBudgetError
        Before the m x m result is allocated, when it would not fit in memory.

    See Also
    --------
    fastdr.Isomap : The embedding that classical MDS makes of these distances.

    Notes
    -----
    Dijkstra from every node takes O(m (m log m + nnz)) time, Floyd-Warshall O(m^3); both
    need O(m^2) memory for the result and O(nnz) for the graph.

    Examples
    --------
    >>> import numpy as np
    >>> import scipy.sparse
    >>> from fastdr.manifold import geodesic_distances
    >>> path = scipy.sparse.csr_matrix(np.array([[0.0, 1.0, 0.0],
    ...                                          [0.0, 0.0, 2.0],
    ...                                          [0.0, 0.0, 0.0]]))
    >>> geodesic_distances(path)
    array([[0., 1., 3.],
           [1., 0., 2.],
           [3., 2., 0.]])
    """
    check_option(method, "path_method", PATH_METHODS)
    try:
        out_dtype = np.dtype(dtype)
    except TypeError:
        out_dtype = None
    if out_dtype not in (np.float64, np.float32):
        raise ValueError(
            f"dtype must be np.float64 or np.float32, got {dtype!r}. The result holds inf "
            "between disconnected nodes, so it needs a float dtype."
        )
    effective_n_jobs(n_jobs)
    method = canonical_path_method(method)
    if scipy.sparse.issparse(graph):
        if graph.dtype.kind not in "biuf":
            raise TypeError(
                f"graph has dtype {graph.dtype}; edge lengths must be real numbers. Pass "
                "graph.real or abs(graph) as appropriate."
            )
    else:
        graph = check_array(graph, name="graph", allow_nonfinite=True)
    csr = check_sparse_graph(graph)
    m = csr.shape[0]
    if m == 0:
        return np.zeros((0, 0), dtype=out_dtype)
    if csr.nnz:
        # a shortest path walks each edge at most once and has at most m - 1 of them
        longest = float(csr.data.max())
        with np.errstate(over="ignore"):  # an overflowing sum is inf, which is refused
            bound = min(longest * (m - 1), float(csr.data.sum(dtype=np.float64)))
        if not bound < float(np.finfo(out_dtype).max):
            raise ValueError(
                f"graph has edge lengths up to {longest:.3g}, so a path length could overflow "
                f"{out_dtype.name} and read as inf (disconnected). Rescale the graph, for "
                "example divide it by its largest edge length"
                + (", or use dtype=np.float64." if out_dtype == np.float32 else ".")
            )
    sym = undirected(csr.indptr, csr.indices, csr.data, take_max=False, n_jobs=n_jobs)
    if method == "auto":
        method = choose_path_method(sym.n_nodes, sym.nnz)
    return all_pairs(sym, method=method, dtype=out_dtype, n_jobs=n_jobs,
                     what="The m x m geodesic distance matrix",
                     alternative="Pass dtype=np.float32 to halve it, or embed with "
                                 "fastdr.Isomap(n_landmarks=L), which keeps an m x L matrix.")
