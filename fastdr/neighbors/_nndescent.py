"""Approximate k-NN graphs by NN-descent, deterministic for any thread count.

Pipeline: a forest of random-projection trees gives each point its nearest leaf mates (for
squared-Euclidean keys one GEMM per leaf, so leaves are large); NN-descent rounds then join
neighbours of neighbours (new/old candidate sampling, ``max_candidates``, early stop when a
round changes fewer than ``delta * width * m`` heap entries). With ``build_neighbors=None``
the build runs k wide, estimates its recall on sampled points against their exact
neighbours, and continues with wider heaps while it misses the goal (hard data, of high
intrinsic dimension, where neighbours of neighbours reach the true neighbours less often).
The k nearest kept neighbours get exact distances. :func:`nndescent_query` answers new points
by a graph search seeded from the same trees.

The same data and integer ``random_state`` give bit-identical graphs for every ``n_jobs``.
"""


import numpy as np

from .._config import NNDESCENT_QUERY_BLOCK_ROWS
from .._distance.scaling import unit_scale_rows
from .._kernels import codes
from .._kernels.nndescent import rounds as kernels
from .._kernels.nndescent import search as search_kernels
from .._runtime.threads import effective_n_jobs, parallel_section
from .._validation.arrays import check_array
from .._validation.budget import check_dense_allocation
from .._validation.params import check_option, check_scalar
from ._blocks import query_block
from ._nndescent_build import (
    _build_forest,
    _candidates,
    _descent_rounds,
    _init_heaps,
    _renumber,
    _sample_recall,
    _widen,
)
from ._nndescent_defaults import (  # noqa: F401  (default_parameters: public here too)
    RECALL_GOAL,
    _seed_from,
    default_parameters,
    recall_sample,
    widened_neighbors,
)

METRICS = ("euclidean", "sqeuclidean", "cosine", "manhattan")


class NNDescentIndex:
    """A fitted NN-descent index: the data, the forest and the k-NN graph.

    Built by :func:`nndescent_index`; pass it to :func:`nndescent_query`.

    Attributes
    ----------
    neighbor_distances_ : ndarray of shape (m, n_neighbors)
        The graph's distances (reported metric, data dtype), ascending.
    neighbor_indices_ : ndarray of shape (m, n_neighbors)
        The graph's neighbour indices (int64); each point excludes itself.
    metric : str
    n_features_in_ : int
    n_samples_fit_ : int
    n_iters_ : int
        Rounds run (each build width stops early on its own).
    """

    def __init__(self, X, metric, key_data, exact_data, exact_norms, forest, graph_d, graph_i,
                 n_iters_run, order):
        self.metric = metric
        self.n_features_in_ = X.shape[1]
        self.n_samples_fit_ = X.shape[0]
        self._key_data = key_data
        self._exact_data = exact_data
        self._exact_norms = exact_norms
        self._forest = forest
        self.neighbor_distances_ = graph_d
        self.neighbor_indices_ = graph_i
        self.n_iters_ = n_iters_run
        self._order = order  # internal id -> row of X (key_data and forest use internal ids)
        self._search_graph = None

    def search_graph(self):
        """Forward edges plus, per point, its closest reverse edges (at most k), as CSR.

        Rows and columns are internal ids.
        """
        if self._search_graph is None:
            inverse = np.empty_like(self._order)
            inverse[self._order] = np.arange(self._order.shape[0])
            self._search_graph = _search_graph(self.neighbor_distances_[self._order],
                                               inverse[self.neighbor_indices_[self._order]])
        return self._search_graph


def _search_graph(dist, ind):
    m, k = ind.shape
    src = np.repeat(np.arange(m, dtype=np.int64), k)
    dst = ind.ravel()
    order = np.lexsort((src, dist.ravel(), dst))
    dst_sorted = dst[order]
    starts = np.searchsorted(dst_sorted, np.arange(m))
    rank = np.arange(m * k) - starts[dst_sorted]
    keep = order[rank < k]
    rows = np.concatenate([src, dst[keep]])
    cols = np.concatenate([dst, src[keep]])
    order = np.argsort(rows, kind="stable")
    ptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=m), out=ptr[1:])
    return ptr, np.ascontiguousarray(cols[order])


def _prepare_data(X, metric, name="X"):
    """Key-space data, exact-distance data and norms for one metric; checks magnitudes.

    ``name`` is how the input is called in the messages.
    """
    if metric == "cosine":  # scale-free: rows scaled by powers of two keep norms finite
        X = unit_scale_rows(X)
    norms64 = np.sqrt(np.einsum("ij,ij->i", X, X, dtype=np.float64))
    limit = float(np.finfo(X.dtype).max)
    if metric == "manhattan":
        l1 = np.abs(X).sum(axis=1, dtype=np.float64)
        if not np.all(l1 < limit / 4):
            raise ValueError(
                f"Row L1 norms up to {l1.max():.3g} overflow {X.dtype} distance sums. "
                f"Rescale {name} (for example divide by its largest absolute value)."
            )
        return X, codes.MANHATTAN, X, codes.MANHATTAN, norms64
    if metric == "cosine":
        safe = np.where(norms64 > 0, norms64, 1.0)
        key = (X / safe[:, None]).astype(X.dtype)
        return key, codes.SQEUCLIDEAN, X, codes.COSINE, norms64
    if not np.all(norms64 * norms64 < limit / 8):
        raise ValueError(
            f"Squared row norms up to {np.nanmax(norms64 * norms64):.3g} overflow {X.dtype} "
            f"distance sums. Rescale {name} (for example divide by its largest absolute value)"
            + ("." if X.dtype != np.float32 else " or pass float64 data." if name == "X"
               else " or build the index from float64 data.")
        )
    return X, codes.SQEUCLIDEAN, X, codes.SQEUCLIDEAN, norms64


def _to_reported(exact, metric, dtype):
    out = np.sqrt(exact) if metric == "euclidean" else exact
    return out.astype(dtype, copy=False)


def _check_common(n_neighbors, metric, n_jobs, verbose):
    check_scalar(n_neighbors, "n_neighbors", "int", min_value=1)
    check_option(metric, "metric", METRICS)
    effective_n_jobs(n_jobs)
    check_scalar(verbose, "verbose", "int", min_value=0)


def nndescent_index(X, n_neighbors, *, metric="euclidean", n_trees=None, n_iters=None,
                    max_candidates=None, delta=0.001, leaf_size=None, build_neighbors=None,
                    random_state=None, n_jobs=None, verbose=0):
    """Build an approximate k-NN graph and keep what queries need.

    Parameters are those of :func:`nndescent_graph`.

    Returns
    -------
    NNDescentIndex
    """
    _check_common(n_neighbors, metric, n_jobs, verbose)
    X = check_array(X, min_samples=2)
    m = X.shape[0]
    if n_neighbors > m - 1:
        raise ValueError(
            f"n_neighbors={n_neighbors} must be smaller than the number of points ({m}), "
            f"because each point excludes itself. Use n_neighbors <= {m - 1} or pass more "
            "points."
        )
    if m >= 2**31 - 1:
        raise ValueError(f"X has {m} rows; NN-descent supports fewer than 2**31 - 1 rows.")
    defaults = default_parameters(m, n_neighbors, metric)
    n_trees = defaults["n_trees"] if n_trees is None else check_scalar(
        n_trees, "n_trees", "int", min_value=1)
    n_iters = defaults["n_iters"] if n_iters is None else check_scalar(
        n_iters, "n_iters", "int", min_value=0)
    c_given = max_candidates
    if max_candidates is not None:
        check_scalar(max_candidates, "max_candidates", "int", min_value=1)
    leaf_size = defaults["leaf_size"] if leaf_size is None else check_scalar(
        leaf_size, "leaf_size", "int", min_value=1)
    check_scalar(delta, "delta", "real", min_value=0)
    if build_neighbors is not None:
        check_scalar(build_neighbors, "build_neighbors", "int", min_value=n_neighbors,
                     max_value=m - 1)
    seed = _seed_from(random_state)
    seeds = np.random.default_rng(seed).integers(0, 2**63 - 1, size=n_trees + 5)
    key_data, key_code, exact_data, exact_code, norms = _prepare_data(X, metric)
    k = n_neighbors
    with parallel_section(n_jobs) as threads:
        if key_code == codes.SQEUCLIDEAN:
            leaf = min(leaf_size, m)  # each thread holds one leaf's Gram matrix at a time
            check_dense_allocation(
                (threads, leaf, leaf), key_data.dtype,
                what=f"NN-descent's leaf Gram matrices (one {leaf} x {leaf} per thread)",
                alternative=f"Pass a smaller leaf_size (the default is "
                            f"{default_parameters(m, k, metric)['leaf_size']}) or fewer n_jobs.")
        forest = _build_forest(key_data, n_trees, leaf_size, seeds[:n_trees], threads)
        order, key_data = _renumber(forest, key_data)
        adaptive = build_neighbors is None
        wide = k if adaptive else build_neighbors
        heap_d, heap_i, heap_f = _init_heaps(key_data, key_code, forest, wide, seeds[n_trees])
        c = _candidates(defaults, c_given, wide, k)
        if verbose:
            print(f"NN-descent: {n_trees} trees (leaf size {leaf_size}) initialised "
                  f"{m} x {wide} heaps; {c} candidates", flush=True)
        rounds = _descent_rounds(key_data, key_code, heap_d, heap_i, heap_f, c, n_iters,
                                 delta, int(seeds[n_trees + 1]), threads, verbose)
        rows = recall_sample(m, int(seeds[n_trees + 2]))
        for stage in range(2 if adaptive else 0):
            # hard data (high intrinsic dimension): neighbours of neighbours reach the true
            # neighbours only through wider heaps, seeded by the leaf mates and the graph so far
            estimate = _sample_recall(key_data, key_code, rows, heap_i, k, threads)
            wider = widened_neighbors(k, m, estimate)
            if wider <= wide:  # already that wide: the next step is the widest
                wider = widened_neighbors(k, m, 0.0)
            if verbose:
                print(f"NN-descent: recall {estimate:.3f} at width {wide}, estimated on "
                      f"{rows.shape[0]} sampled points (goal {RECALL_GOAL})", flush=True)
            if estimate >= RECALL_GOAL or wider <= wide:
                break
            wide = wider
            heap_d, heap_i, heap_f = _widen(key_data, key_code, forest, wide, seeds[n_trees],
                                            heap_d, heap_i)
            c = _candidates(defaults, c_given, wide, k)
            if verbose:
                print(f"NN-descent: continued {m} x {wide} heaps; {c} candidates", flush=True)
            rounds += _descent_rounds(key_data, key_code, heap_d, heap_i, heap_f, c, n_iters,
                                      delta, int(seeds[n_trees + 3 + stage]), threads, verbose)
        del heap_d, heap_f
        # exact distances in internal numbering (near rows sit close in memory), then back
        # (key and exact data are the same rows except for cosine, whose keys are normalised)
        cosine = exact_code == codes.COSINE
        exact_internal = np.ascontiguousarray(exact_data[order]) if cosine else key_data
        norms_internal = norms[order]
        in_d = np.empty(heap_i.shape, dtype=np.float64)
        in_i = np.empty(heap_i.shape, dtype=np.int64)
        kernels.exact_sort(exact_internal, norms_internal, exact_internal, norms_internal,
                           exact_code, heap_i, in_d, in_i)
        del heap_i
        in_d = np.ascontiguousarray(in_d[:, :k])
        in_i = np.ascontiguousarray(in_i[:, :k])
        out_d = np.empty((m, k), dtype=np.float64)
        out_i = np.empty((m, k), dtype=np.int64)
        kernels.renumber_sort(order, in_d, in_i, out_d, out_i)
    graph_d = _to_reported(out_d, metric, X.dtype)
    return NNDescentIndex(X, metric, key_data, exact_data, norms, forest, graph_d, out_i,
                          rounds, order)


def nndescent_graph(X, n_neighbors, *, metric="euclidean", n_trees=None, n_iters=None,
                    max_candidates=None, delta=0.001, leaf_size=None, build_neighbors=None,
                    random_state=None, n_jobs=None, verbose=0, return_index=False):
    """Approximate k nearest neighbours of every row of X by NN-descent.

    Each point excludes itself by index (a duplicate point still counts as a neighbour), as
    ``NearestNeighbors().fit(X).kneighbors()`` does. This is the graph that
    ``NearestNeighbors(algorithm="nndescent")`` builds at ``fit``; the function returns it
    as arrays, without an estimator around it. The same data and integer ``random_state``
    give bit-identical graphs for every ``n_jobs``.

    Parameters
    ----------
    X : array-like of shape (m, d)
        float32 stays float32 (selection keys in float32, distances recomputed in float64).
    n_neighbors : int
        k, at most m - 1.
    metric : {"euclidean", "sqeuclidean", "cosine", "manhattan"}, default="euclidean"
        Cosine works on the normalised rows and reports ``1 - cos``.
    n_trees : int or None, default=None
        Random-projection trees for the initial graph; None: ``max(3, min(32, round(0.45
        m^(1/4))))`` (8 at m=100,000), or ``max(3, min(12, round(2 log10 m)))`` for
        manhattan.
    n_iters : int or None, default=None
        Maximum NN-descent rounds; None: ``max(5, round(log2(m)))``.
    max_candidates : int or None, default=None
        New and old candidates sampled per point per round; None:
        ``min(60, max(15, n_neighbors))``.
    delta : float, default=0.001
        Stop when a round changes at most ``delta * n_neighbors * m`` heap entries.
    leaf_size : int or None, default=None
        Largest tree leaf; None: ``min(2048, max(1024, 6 n_neighbors))``, or
        ``max(60, min(256, 5 n_neighbors))`` for manhattan (whose leaves are joined pair by
        pair, not by GEMM).
    build_neighbors : int or None, default=None
        Neighbours kept per point while the graph is built (``n_neighbors`` to ``m - 1``);
        the nearest ``n_neighbors`` are returned. None: ``n_neighbors`` first; then the
        recall is estimated on 512 sampled points (all when m <= 512) against their exact
        neighbours, and while it is below 0.95 the build continues up to twice with wider
        heaps (2 or 3 times ``max(n_neighbors, 15)``, at most ``max(n_neighbors, 60)``
        and ``m - 1``), seeded by the leaf mates and the graph so far. With wider heaps
        and ``max_candidates`` None, ``max(default, min(60, ceil(3 build_neighbors / 4)))``
        candidates are sampled.
    random_state : int, numpy Generator/RandomState or None, default=None
        Seeds the trees and the candidate sampling. The same int gives the same graph for
        any ``n_jobs``; None draws a fresh seed.
    n_jobs : int or None, default=None
        Threads for this call; None or -1 means all cores.
    verbose : int, default=0
        1 draws a tqdm bar over the rounds with each round's number of heap updates (one
        line per round instead when tqdm is not installed), and prints each recall estimate;
        2 always prints the lines.
    return_index : bool, default=False
        Also return the index (the data, the trees and the graph) that
        :func:`nndescent_query` searches for new points.

    Returns
    -------
    distances : ndarray of shape (m, n_neighbors)
        Exact distances of the returned neighbours, ascending (ties by index), X's dtype.
    indices : ndarray of shape (m, n_neighbors), int64
        Row numbers of X; row i never lists i itself.
    index : NNDescentIndex
        Only with ``return_index=True``: pass it to :func:`nndescent_query`. It holds X
        (not copied where no conversion was needed), a reordered copy of it and the trees.

    See Also
    --------
    nndescent_query : The k nearest indexed points of new points, searched on this graph.
    fastdr.NearestNeighbors : ``algorithm="nndescent"`` wraps this in an estimator.
    fastdr.kneighbors_graph : The exact (or, with ``algorithm="nndescent"``, approximate)
        graph as a sparse matrix.

    Notes
    -----
    Time is about O(m n_trees leaf_size d) for the leaves plus O(rounds m c^2 d) for the
    rounds, with c the candidates sampled; memory O(m (build_neighbors + 4 c)) plus the
    trees (O(n_trees m)) and one reordered copy of X.
    Recall against the exact neighbours at the defaults (m=20,000, d=50, float32, k=10 and
    15): 1.000 on clusters of intrinsic dimension 10; 0.99-1.00 on a uniform 10-d subspace
    and on 20 isotropic Gaussian clusters (0.956 at m=100,000, k=15); 0.98 on the full
    50-d unit cube, which is widened to 45 (a build several times longer than the others').
    For recall about 0.99 or more on hard data pass ``build_neighbors=60,
    max_candidates=45`` (0.996 on the 50-d cube at k=15, m=20,000). Bench: nndescent.

    Examples
    --------
    >>> import numpy as np
    >>> from fastdr.neighbors import nndescent_graph
    >>> X = np.random.default_rng(0).normal(size=(500, 5))
    >>> dist, ind = nndescent_graph(X, 5, random_state=0)
    >>> ind.shape
    (500, 5)
    >>> bool((ind != np.arange(500)[:, None]).all())  # no point lists itself
    True
    >>> bool((np.diff(dist, axis=1) >= 0).all())  # each row ascending
    True
    """
    if not isinstance(return_index, (bool, np.bool_)):
        raise TypeError(
            f"return_index must be True or False, got {return_index!r} of type "
            f"{type(return_index).__name__}."
        )
    index = nndescent_index(X, n_neighbors, metric=metric, n_trees=n_trees, n_iters=n_iters,
                            max_candidates=max_candidates, delta=delta, leaf_size=leaf_size,
                            build_neighbors=build_neighbors, random_state=random_state,
                            n_jobs=n_jobs, verbose=verbose)
    if return_index:
        return index.neighbor_distances_, index.neighbor_indices_, index
    return index.neighbor_distances_, index.neighbor_indices_


def nndescent_query(index_state, Q, n_neighbors, epsilon=0.1, *, n_jobs=None):
    """Approximate k nearest indexed points of new points, by graph search.

    Each query descends every random-projection tree of the index to one leaf and measures
    the points there, then walks the k-NN graph (forward and reverse edges) best first,
    keeping the best ``n_neighbors`` found; the kept neighbours get exact distances. No
    indexed point is excluded: unlike the graph's own rows, an indexed point equal to a
    query is a valid answer, at distance 0. Each query is searched on its own, so the
    answer is the same for every ``n_jobs``.

    Parameters
    ----------
    index_state : NNDescentIndex
        The index returned by ``nndescent_graph(X, ..., return_index=True)``; its metric is
        used.
    Q : array-like of shape (n_queries, d)
        The new points, with as many features as the indexed X. Cast to the index's dtype.
    n_neighbors : int
        Neighbours per query, at most the number of indexed points (it may exceed the
        graph's own ``n_neighbors``).
    epsilon : float, default=0.1
        Search breadth: points are expanded while within (1 + epsilon) times the current
        k-th distance. Larger is slower and more accurate.
    n_jobs : int or None, default=None
        Threads for this call; None or -1 means all cores.

    Returns
    -------
    distances : ndarray of shape (n_queries, n_neighbors)
        Exact distances, ascending (ties by index), in the index's dtype.
    indices : ndarray of shape (n_queries, n_neighbors), int64
        Row numbers of the indexed X.

    See Also
    --------
    nndescent_graph : Builds the index.
    fastdr.NearestNeighbors : ``algorithm="nndescent"`` answers ``kneighbors(Q)`` this way.

    Notes
    -----
    Time O(n_queries v d), where v, the points measured per query, is at least its leaf
    mates in every tree and grows with ``epsilon``. Memory beyond the index: the result,
    one visited mark per indexed point per thread, and, built by the first query of an
    index and kept in it, the search graph (O(m k) for a graph of k neighbours).

    Examples
    --------
    >>> import numpy as np
    >>> from fastdr.neighbors import nndescent_graph, nndescent_query
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 5))
    >>> _, _, index = nndescent_graph(X, 10, random_state=0, return_index=True)
    >>> dist, ind = nndescent_query(index, X[:3] + 1e-3, 4)
    >>> ind.shape
    (3, 4)
    >>> ind[:, 0]  # each query is closest to the point it was moved from
    array([0, 1, 2])
    """
    if not isinstance(index_state, NNDescentIndex):
        raise TypeError(
            f"index_state must be an NNDescentIndex (from "
            f"nndescent_graph(..., return_index=True)); got {type(index_state).__name__}."
        )
    Q = check_array(Q, name="Q")
    if Q.shape[1] != index_state.n_features_in_:
        raise ValueError(
            f"Q has {Q.shape[1]} features, but the index was built on "
            f"{index_state.n_features_in_} features. Pass queries with "
            f"{index_state.n_features_in_} columns."
        )
    m = index_state.n_samples_fit_
    check_scalar(n_neighbors, "n_neighbors", "int", min_value=1, max_value=m)
    check_scalar(epsilon, "epsilon", "real", min_value=0)
    effective_n_jobs(n_jobs)
    dtype = index_state._key_data.dtype
    Q = Q.astype(dtype, copy=False)
    key_q, key_code, exact_q, exact_code, q_norms = _prepare_data(Q, index_state.metric, "Q")
    scale = (1.0 + epsilon) if key_code == codes.MANHATTAN else (1.0 + epsilon) ** 2
    f = index_state._forest
    ptr, cols = index_state.search_graph()
    n_q = Q.shape[0]
    key_d = np.empty((n_q, n_neighbors), dtype=dtype)
    key_i = np.empty((n_q, n_neighbors), dtype=np.int64)
    out_d = np.empty((n_q, n_neighbors), dtype=np.float64)
    out_i = np.empty((n_q, n_neighbors), dtype=np.int64)
    with parallel_section(n_jobs) as threads:
        chunk = query_block(n_q, threads, NNDESCENT_QUERY_BLOCK_ROWS)
        search_kernels.search(index_state._key_data, key_code, key_q, scale, f["perm"],
                              f["roots"], f["lo"], f["hi"], f["left"], f["right"], f["a"],
                              f["b"], f["off"], ptr, cols, chunk, key_d, key_i)
        kernels.exact_sort(exact_q, q_norms, index_state._exact_data,
                           index_state._exact_norms, exact_code, index_state._order[key_i],
                           out_d, out_i)
    return _to_reported(out_d, index_state.metric, dtype), out_i
