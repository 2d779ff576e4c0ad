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

from .._kernels.graph_build import row_medians
from .._parallel import parallel_section
from ..neighbors import NearestNeighbors
from ._geodesic import Graph, undirected

POLICIES = ("raise", "connect", "largest")
#: An edge is a short circuit when it is longer than this factor times the median neighbour
#: distance of both of its ends (see :func:`short_circuit_edges`).
SHORT_CIRCUIT_FACTOR = 3.0


def build_graph(X, *, n_neighbors, radius, n_jobs, verbose=0, algorithm="auto"):
    """The neighbour graph of X and the search structure reused by ``transform``.

    Parameters
    ----------
    X : ndarray of shape (m, d)
    n_neighbors : int or None
        The k of the k-NN graph (used when ``radius`` is None).
    radius : float or None
        The epsilon of the epsilon graph.
    n_jobs : int or None
    verbose : int, default=0
        Passed to the :class:`NearestNeighbors` search (its stage line and progress bar).
    algorithm : {"auto", "brute", "kd_tree", "nndescent"}, default="auto"
        The :class:`NearestNeighbors` algorithm (``"nndescent"``: k-NN graphs only).

    Returns
    -------
    graph : Graph
        Undirected, symmetric CSR.
    directed : tuple (indptr, indices, distances)
        Each point's own neighbour list (its k nearest, or all within radius).
    nbrs : NearestNeighbors
        Fitted on X.
    """
    m = X.shape[0]
    if radius is None:
        nbrs = NearestNeighbors(n_neighbors=n_neighbors, algorithm=algorithm, n_jobs=n_jobs,
                                verbose=verbose).fit(X)
        dist, ind = nbrs.kneighbors()
        indptr = np.arange(0, m * n_neighbors + 1, n_neighbors, dtype=np.int64)
        directed = (indptr, ind.ravel(), dist.ravel().astype(np.float64))
    else:
        nbrs = NearestNeighbors(radius=radius, algorithm=algorithm, n_jobs=n_jobs,
                                verbose=verbose).fit(X)
        csr = nbrs.radius_neighbors_graph(mode="distance")
        directed = (csr.indptr.astype(np.int64), csr.indices.astype(np.int64),
                    csr.data.astype(np.float64))
    graph = undirected(*directed, take_max=True, n_jobs=n_jobs)
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
        f"The neighbour graph has {n_components} connected components (sizes "
        f"{describe_sizes(sizes)}), so some geodesic distances are infinite and Isomap "
        f"cannot embed all points together. Use a larger {graph_param}, or set "
        "on_disconnected='connect' (join the components by their shortest edges) or "
        "on_disconnected='largest' (embed only the largest component)."
    )


def connect(graph, X, labels, n_components, n_jobs):
    """Join every pair of components by its shortest edge (scikit-learn's rule).

    For components a < b the added edge is the closest pair (Euclidean) with one point in
    each; ties go to the smaller index in b, then in a. Memory O(m): component a's points
    are searched with a nearest-neighbour query from every point of the later components.

    Returns
    -------
    graph : Graph
        With the new edges.
    added : ndarray of shape (n_pairs, 2), int64
        The added edges (i, j), i < j.
    """
    rows, cols, lengths = [], [], []
    for a in range(n_components - 1):
        members = np.flatnonzero(labels == a)
        later = np.flatnonzero(labels > a)
        nn = NearestNeighbors(n_neighbors=1, n_jobs=n_jobs).fit(X[members])
        dist, ind = nn.kneighbors(X[later])
        dist = dist.ravel().astype(np.float64)
        later_labels = labels[later]
        order = np.lexsort((later, dist, later_labels))
        first = order[np.r_[True, np.diff(later_labels[order]) != 0]]
        rows.append(later[first])
        cols.append(members[ind.ravel()[first]])
        lengths.append(dist[first])
    rows = np.concatenate(rows)
    cols = np.concatenate(cols)
    lengths = np.concatenate(lengths)
    added = np.sort(np.stack([rows, cols], axis=1), axis=1)
    graph = _with_edges(graph, rows, cols, lengths, n_jobs)
    return graph, added[np.lexsort((added[:, 1], added[:, 0]))]


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


def apply_policy(policy, graph, X, *, graph_param, n_jobs):
    """Apply ``on_disconnected`` to the graph.

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
        graph, added = connect(graph, X, labels, n_components, n_jobs)
        warnings.warn(
            f"The neighbour graph has {n_components} connected components (sizes "
            f"{describe_sizes(sizes)}); on_disconnected='connect' joined them with "
            f"{added.shape[0]} shortest edge(s) between components (see connecting_edges_). "
            f"Geodesics that cross those edges are straight lines, not paths on the manifold; "
            f"a larger {graph_param} avoids this.",
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
