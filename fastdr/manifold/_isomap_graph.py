"""Isomap's neighbour graph: build it, flag short circuits, and handle a disconnected graph.

* The graph: the symmetrised k-NN graph (edge {i, j} when either point is among the other's
  k nearest, weighted by their Euclidean distance) or the epsilon graph (every pair within
  ``radius``).
* Short circuits (:func:`short_circuit_edges`): edges much longer than the neighbour
  distances around both of their ends.
* Disconnected graphs (:func:`apply_policy`): raise, connect the components by their
  shortest edges, or keep the largest component.
"""

import warnings

import numpy as np
from scipy.sparse.csgraph import connected_components

from .._kernels.graph.build import row_medians
from .._runtime.threads import parallel_section
from ..neighbors import NearestNeighbors
from ._geodesic import Graph, undirected

POLICIES = ("connect", "raise", "largest")
#: An edge is a short circuit when it is longer than this factor times the median neighbour
#: distance of both of its ends (see :func:`short_circuit_edges`).
SHORT_CIRCUIT_FACTOR = 3.0


def search_kwargs(estimator_class, metric, p, metric_params):
    """The metric arguments of a fastdr neighbours estimator, as scikit-learn passes them.

    Before the neighbours estimators took ``p`` (scikit-learn's ``metric="minkowski"`` with
    ``p=2``, the default), the Minkowski metric with p = 2 is passed as ``"euclidean"``.
    """
    if "p" in estimator_class._get_param_names():
        return {"metric": metric, "p": p, "metric_params": metric_params}
    if isinstance(metric, str) and metric == "minkowski" and p == 2:
        metric = "euclidean"
    return {"metric": metric, "metric_params": metric_params}


def build_graph(X, *, n_neighbors, radius, n_jobs, verbose=0, algorithm="auto", search=None,
                take_max=True):
    """The neighbour graph of X and the search structure reused by ``transform``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (m, d), or a fitted PrecomputedNeighbors
    n_neighbors : int or None
        The k of the k-NN graph (used when ``radius`` is None).
    radius : float or None
        The epsilon of the epsilon graph; ``np.inf`` is the complete graph.
    n_jobs : int or None
    verbose : int, default=0
        Passed to the :class:`NearestNeighbors` search (its stage line and progress bar).
    algorithm : {"auto", "brute", "kd_tree", "nndescent"}, default="auto"
        The :class:`NearestNeighbors` algorithm (``"nndescent"``: k-NN graphs only).
    search : dict or None
        Metric arguments of :class:`NearestNeighbors` (:func:`search_kwargs`); None means
        Euclidean.
    take_max : bool, default=True
        Of two opposite edge lengths keep the larger (else the smaller, SciPy's rule for
        ``directed=False``); they differ only for an asymmetric precomputed matrix.

    Returns
    -------
    graph : Graph
        Undirected, symmetric CSR.
    directed : tuple (indptr, indices, distances)
        Each point's own neighbour list (its k nearest, or all within radius).
    nbrs : NearestNeighbors or PrecomputedNeighbors
        Fitted on X.
    """
    precomputed = hasattr(X, "kneighbors")
    if precomputed:  # a fitted PrecomputedNeighbors
        nbrs = X
    else:
        params = {"n_neighbors": n_neighbors} if n_neighbors is not None else {}
        if radius is not None and np.isfinite(radius):
            params["radius"] = radius
        nbrs = NearestNeighbors(**params, algorithm=algorithm, n_jobs=n_jobs, verbose=verbose,
                                **(search or {})).fit(X)
    m = nbrs.n_samples_fit_
    if radius is None or (np.isinf(radius) and not precomputed):
        k = n_neighbors if radius is None else m - 1  # radius=inf: every other point
        dist, ind = nbrs.kneighbors(n_neighbors=k)
        indptr = np.arange(0, m * k + 1, k, dtype=np.int64)
        directed = (indptr, ind.ravel().astype(np.int64), dist.ravel().astype(np.float64))
    else:
        csr = nbrs.radius_neighbors_graph(mode="distance")
        directed = (csr.indptr.astype(np.int64), csr.indices.astype(np.int64),
                    csr.data.astype(np.float64))
    graph = undirected(*directed, take_max=take_max, n_jobs=n_jobs)
    return graph, directed, nbrs


def short_circuit_edges(graph, directed, n_jobs=None):
    """Edges suspiciously long for their neighbourhood: the textbook's short circuits.

    A point's neighbour scale is the median distance to its own neighbours (its k nearest,
    or those within ``radius``). Edge {i, j} is flagged when it is longer than
    ``SHORT_CIRCUIT_FACTOR`` (3) times the neighbour scale of both i and j: a jump out of two
    dense neighbourhoods, such as a small clump of stray points joining two folds. Measured on
    swiss rolls, S-curves, Gaussian and uniform clouds (k = 5 and 10) the rule flags nothing.
    It cannot see a lone stray point (all its edges are long, so its own scale is long too),
    nor a short circuit whose edges are no longer than their neighbours'. In an epsilon graph
    every edge is at most ``radius``, so an edge is flagged only between two neighbourhoods
    much denser than that.

    Returns
    -------
    ndarray of shape (n_flagged, 2), int64
        Each flagged edge once, as (i, j) with i < j, sorted.
    """
    indptr, _, dist = directed
    with parallel_section(n_jobs):
        scale = row_medians(indptr, dist)
    rows = np.repeat(np.arange(graph.n_nodes, dtype=np.int64), np.diff(graph.indptr))
    cols = graph.indices.astype(np.int64)
    limit = SHORT_CIRCUIT_FACTOR * np.fmax(scale[rows], scale[cols])
    flagged = (rows < cols) & (graph.weights > limit)
    return np.stack([rows[flagged], cols[flagged]], axis=1)


def warn_short_circuits(graph, directed, graph_param, n_jobs=None):
    """:func:`short_circuit_edges`, with a ``UserWarning`` naming them when there are any."""
    edges = short_circuit_edges(graph, directed, n_jobs)
    if edges.shape[0]:
        shown = ", ".join(f"({i}, {j})" for i, j in edges[:5].tolist())
        warnings.warn(
            f"The neighbour graph has {edges.shape[0]} edge(s) longer than "
            f"{SHORT_CIRCUIT_FACTOR:g} times the median neighbour distance of both of their "
            f"ends ({shown}; see short_circuit_edges_). They may be short circuits between "
            "distant parts of the manifold; check those points, or use a smaller "
            f"{graph_param}.",
            UserWarning,
            stacklevel=4,
        )
    return edges


def query_neighbours(nbrs, X, *, n_neighbors, radius, precomputed):
    """Training neighbours of each query of ``transform`` as padded (n, k) arrays
    (index -1: no neighbour): its ``n_neighbors`` nearest, those within ``radius``, or every
    training point (``radius=np.inf``)."""
    n_fit = nbrs.n_samples_fit_
    if n_neighbors is not None or (np.isinf(radius) and not precomputed):
        k = n_fit if n_neighbors is None else min(n_neighbors, n_fit)
        dist, ind = nbrs.kneighbors(X, n_neighbors=k)
        return ind.astype(np.int64), dist.astype(np.float64)
    csr = nbrs.radius_neighbors_graph(X, radius=radius, mode="distance")
    counts = np.diff(csr.indptr).astype(np.int64)
    lonely = np.flatnonzero(counts == 0)
    if lonely.size:
        raise ValueError(
            f"{lonely.size} of the {X.shape[0]} points to transform (rows "
            f"{lonely[:5].tolist()}{'...' if lonely.size > 5 else ''}) have no training "
            f"point within radius={radius}, so their geodesic distances are "
            "infinite. Use a larger radius, or out_of_sample='regressor'."
        )
    rows = np.repeat(np.arange(X.shape[0]), counts)
    slots = np.arange(csr.nnz) - np.repeat(csr.indptr[:-1], counts)
    ind = np.full((X.shape[0], int(counts.max())), -1, dtype=np.int64)
    dist = np.zeros(ind.shape, dtype=np.float64)
    ind[rows, slots] = csr.indices
    dist[rows, slots] = csr.data
    return ind, dist


def components(graph):
    """Number of connected components and each node's component label."""
    n, labels = connected_components(graph.to_scipy(), directed=False)
    return int(n), labels.astype(np.int64)


def describe_sizes(sizes, shown=10):
    """``"1200, 290 and 10"``-style text of component sizes, largest first."""
    sizes = sorted((int(s) for s in sizes), reverse=True)
    text = ", ".join(str(s) for s in sizes[:shown])
    if len(sizes) > shown:
        text += f", ... ({len(sizes) - shown} more)"
    return text


def disconnected_error(n_components, labels, graph_param):
    """The ValueError of ``on_disconnected="raise"``."""
    sizes = np.bincount(labels)
    return ValueError(
        f"The number of connected components of the neighbors graph is {n_components} > 1 "
        f"(sizes {describe_sizes(sizes)}), so some geodesic distances are infinite and "
        f"on_disconnected='raise' stops here. Use a larger {graph_param}, or set "
        "on_disconnected='connect' (join the components by their shortest edges) or "
        "on_disconnected='largest' (embed only the largest component)."
    )


def euclidean_nearest(X, n_jobs=None, search=None):
    """``nearest(members, queries)`` for :func:`connect`: for each query row of X, the
    distance to its nearest row among ``members`` and that row's position in ``members``
    (ties: the smaller position), under the metric of ``search`` (Euclidean when None)."""
    def nearest(members, queries):
        nn = NearestNeighbors(n_neighbors=1, n_jobs=n_jobs, **(search or {})).fit(X[members])
        dist, ind = nn.kneighbors(X[queries])
        return dist.ravel().astype(np.float64), ind.ravel().astype(np.int64)
    return nearest


def precomputed_nearest(D):
    """``nearest`` of :func:`connect` read from a dense distance matrix."""
    def nearest(members, queries):
        block = D[np.ix_(queries, members)]
        ind = np.argmin(block, axis=1)
        return block[np.arange(queries.shape[0]), ind].astype(np.float64), ind.astype(np.int64)
    return nearest


def connect(graph, labels, n_components, nearest, n_jobs=None):
    """Join every pair of components by its shortest edge (scikit-learn's rule).

    For components a < b the added edge is the closest pair with one point in each; ties go
    to the smaller index in b, then in a (scikit-learn's ``argmin`` order). Memory O(m) with
    a feature metric: component a's points are searched with a nearest-neighbour query from
    every point of the later components.

    Parameters
    ----------
    graph : Graph
    labels : ndarray of int64
    n_components : int
    nearest : callable
        ``nearest(members, queries) -> (distances, positions in members)``
        (:func:`euclidean_nearest`, :func:`precomputed_nearest`).
    n_jobs : int or None

    Returns
    -------
    graph : Graph
        With the new edges.
    added : ndarray of shape (n_pairs, 2), int64
        The added edges (i, j), i < j.
    lengths : ndarray of shape (n_pairs,)
        Their lengths, in the order of ``added``.
    """
    rows, cols, lengths = [], [], []
    for a in range(n_components - 1):
        members = np.flatnonzero(labels == a)
        later = np.flatnonzero(labels > a)
        dist, ind = nearest(members, later)
        later_labels = labels[later]
        order = np.lexsort((later, dist, later_labels))
        first = order[np.r_[True, np.diff(later_labels[order]) != 0]]
        rows.append(later[first])
        cols.append(members[ind[first]])
        lengths.append(dist[first])
    rows = np.concatenate(rows)
    cols = np.concatenate(cols)
    lengths = np.concatenate(lengths)
    graph = _with_edges(graph, rows, cols, lengths, n_jobs)
    added = np.sort(np.stack([rows, cols], axis=1), axis=1)
    order = np.lexsort((added[:, 1], added[:, 0]))
    return graph, added[order], lengths[order]


def _with_edges(graph, rows, cols, lengths, n_jobs):
    m = graph.n_nodes
    all_rows = np.concatenate([np.repeat(np.arange(m), np.diff(graph.indptr)), rows, cols])
    all_cols = np.concatenate([graph.indices.astype(np.int64), cols, rows])
    all_w = np.concatenate([graph.weights, lengths, lengths])
    order = np.argsort(all_rows, kind="stable")
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(all_rows, minlength=m), out=indptr[1:])
    return undirected(indptr, all_cols[order], all_w[order], take_max=True, n_jobs=n_jobs)


def subgraph(graph, keep):
    """The graph induced by the sorted node indices ``keep``, renumbered 0..len(keep)-1."""
    m = graph.n_nodes
    new_index = np.full(m, -1, dtype=np.int64)
    new_index[keep] = np.arange(keep.shape[0])
    rows = np.repeat(np.arange(m), np.diff(graph.indptr))
    cols = graph.indices.astype(np.int64)
    inside = (new_index[rows] >= 0) & (new_index[cols] >= 0)
    new_rows = new_index[rows[inside]]
    indptr = np.zeros(keep.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(new_rows, minlength=keep.shape[0]), out=indptr[1:])
    return Graph(indptr, new_index[cols[inside]].astype(np.int32), graph.weights[inside])


def describe_edges(added, lengths, shown=5):
    """``"(0, 40) of length 2.5, ..."``-style text of added edges."""
    pairs = zip(added[:shown].tolist(), lengths[:shown].tolist(), strict=True)
    text = ", ".join(f"({i}, {j}) of length {d:.4g}" for (i, j), d in pairs)
    if added.shape[0] > shown:
        text += f", ... ({added.shape[0] - shown} more)"
    return text


def apply_policy(policy, graph, X=None, *, graph_param, n_jobs, nearest=None,
                 can_connect=True):
    """Apply ``on_disconnected`` to the graph.

    Parameters
    ----------
    policy : {"connect", "raise", "largest"}
    graph : Graph
    X : ndarray or None
        The points, for the default (Euclidean) ``nearest``.
    graph_param : str
        The parameter that would avoid the split, for the messages.
    n_jobs : int or None
    nearest : callable or None
        See :func:`connect`; None means :func:`euclidean_nearest` on X.
    can_connect : bool, default=True
        False for a sparse precomputed graph: its missing distances are unknown, so
        ``"connect"`` raises scikit-learn's RuntimeError.

    Returns
    -------
    graph : Graph
        Connected.
    kept : ndarray of int64
        Rows of X that are embedded (all of them unless ``policy="largest"``).
    n_components : int
        Components of the original graph.
    added : ndarray of shape (n, 2)
        Edges added by ``"connect"`` (empty otherwise).
    """
    m = graph.n_nodes
    n_components, labels = components(graph)
    added = np.empty((0, 2), dtype=np.int64)
    kept = np.arange(m, dtype=np.int64)
    if n_components == 1:
        return graph, kept, n_components, added
    if policy == "raise":
        raise disconnected_error(n_components, labels, graph_param)
    sizes = np.bincount(labels)
    if policy == "connect":
        if not can_connect:
            raise RuntimeError(
                f"The number of connected components of the neighbors graph is {n_components} "
                f"> 1 (sizes {describe_sizes(sizes)}). The graph cannot be completed with "
                "metric='precomputed' and a sparse neighbour graph (the distances between "
                f"the components are unknown). Use a larger {graph_param}, pass the full "
                "distance matrix instead of a sparse graph, or set "
                "on_disconnected='largest'."
            )
        if nearest is None:
            nearest = euclidean_nearest(X, n_jobs)
        graph, added, lengths = connect(graph, labels, n_components, nearest, n_jobs)
        warnings.warn(
            f"The number of connected components of the neighbors graph is {n_components} "
            "> 1. Completing the graph to fit Isomap might be slow. Increase the number of "
            f"neighbors to avoid this issue. The components have sizes "
            f"{describe_sizes(sizes)}; they were joined by {added.shape[0]} shortest edge(s) "
            f"between components: {describe_edges(added, lengths)} (see connecting_edges_). "
            "Geodesics that cross those edges are straight lines, not paths on the manifold; "
            f"a larger {graph_param} avoids this, and on_disconnected='raise' or 'largest' "
            "changes this behaviour.",
            UserWarning,
            stacklevel=4,
        )
        return graph, kept, n_components, added
    largest = int(np.argmax(sizes))
    kept = np.flatnonzero(labels == largest).astype(np.int64)
    warnings.warn(
        f"The neighbour graph has {n_components} connected components (sizes "
        f"{describe_sizes(sizes)}); on_disconnected='largest' embeds only the largest one: "
        f"{kept.shape[0]} of {m} rows of X (their indices are in kept_indices_; the other "
        f"{m - kept.shape[0]} rows have no embedding).",
        UserWarning,
        stacklevel=4,
    )
    return subgraph(graph, kept), kept, n_components, added
