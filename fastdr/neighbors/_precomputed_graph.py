"""A sparse precomputed neighbour graph as X of the neighbour estimators (``metric=
"precomputed"``), read as scikit-learn's ``_check_precomputed`` and
``sort_graph_by_row_values`` read it.

* Row i's stored entries (explicit zeros included) are the candidate neighbours of point i,
  at the stored distances; an entry that is not stored is not a neighbour.
* Each row is read in increasing order of its values; ties keep their storage order (a
  stable sort, as scikit-learn's). Duplicate entries (one (i, j) stored twice) stay
  separate in CSR, CSC and LIL input; COO input is summed by its conversion to CSR, as in
  scikit-learn. A row storing its own entry (i, i) twice cannot drop itself once and is
  refused (:func:`drop_self`).
* k-NN needs at least k stored entries in every row: otherwise scikit-learn's ValueError.
* Training queries (``X=None``) exclude the point itself: among the first k + 1 entries the
  point's own entry is dropped, or the first one when the point is not among them
  (scikit-learn's rule, which also covers duplicates at distance 0). A graph built by
  ``kneighbors_graph(X, mode="distance")`` stores each point as its own first neighbour.
* Radius queries keep the entries with value <= radius.

Everything here is NumPy on index arrays checked first by
:func:`fastdr._validation.sparse.check_structure` (scipy's conversions read them in C without
bounds checks); no kernel reads the graph. Isomap's precomputed search
(:mod:`fastdr.manifold._isomap_precomputed`) shares the readers.
"""

import numpy as np
import scipy.sparse

from .._validation.sparse import check_structure

__all__ = ["check_graph", "drop_self", "kneighbors", "radius", "sorted_rows", "sparse_knn"]

#: scikit-learn's formats for a precomputed graph: the others lose or sum explicit zeros
GRAPH_FORMATS = ("csr", "csc", "coo", "lil")


def check_graph(X, *, n_columns=None, name="X"):
    """Validate a sparse precomputed neighbour graph; return it as CSR, rows sorted by value.

    Parameters
    ----------
    X : scipy sparse matrix or array of shape (n, m), format CSR, CSC, COO or LIL
        Non-negative finite distances in the stored entries.
    n_columns : int or None
        The m expected (the training size, for queries); None means square (fit).
    name : str
        How X is called in the messages.

    Returns
    -------
    scipy.sparse.csr_matrix
        float32 or float64 data, int64 indices, each row's entries in increasing order of
        value. X's own arrays are never modified.

    Raises
    ------
    TypeError
        For a DOK, BSR or DIA matrix (scikit-learn's message), or non-numeric data.
    ValueError
        For corrupt index arrays, NaN, inf or negative distances, a non-square training
        graph, or queries with the wrong number of columns.
    """
    if X.format not in GRAPH_FORMATS:
        raise TypeError(
            f"Sparse matrix in {X.format!r} format is not supported due to its handling of "
            f"explicit zeros: pass the precomputed graph {name} as CSR (for example "
            f"{name}.tocsr()), CSC, COO or LIL."
        )
    check_structure(X, name)
    csr = scipy.sparse.csr_matrix(X)
    if X.format == "lil":  # converted by scipy: its CSR form is checked again
        check_structure(csr, name)
    kind = np.dtype(csr.dtype).kind
    if kind not in "fiub":
        raise TypeError(f"The precomputed graph {name} holds non-numeric values (dtype "
                        f"{csr.dtype}); pass distances.")
    nnz = int(csr.indptr[-1])
    dtype = csr.dtype if csr.dtype in (np.float32, np.float64) else np.float64
    data = np.asarray(csr.data[:nnz], dtype=dtype)
    if not np.isfinite(data).all():
        raise ValueError(f"The precomputed graph {name} contains NaN or infinity in its stored "
                         "entries; store only finite distances (a missing edge is an entry "
                         "that is not stored).")
    if nnz and data.min() < 0:
        raise ValueError(
            "Negative values in data passed to precomputed distance matrix: the graph "
            f"{name} stores {data.min():.3g}. Pass distances (>= 0), not similarities or "
            "log-distances."
        )
    m, n = csr.shape
    if n_columns is None and m == 0:
        raise ValueError(f"The precomputed graph {name} has 0 samples (shape {csr.shape}); "
                         "n_samples must be greater than 0.")
    if n_columns is None and m != n:
        raise ValueError(
            f"Precomputed matrix must be square. Input is a {m}x{n} matrix. Pass the graph "
            "between the training samples, for example kneighbors_graph(X, mode='distance')."
        )
    if n_columns is not None and n != n_columns:
        raise ValueError(
            "Precomputed metric requires shape (n_queries, n_indexed). Got "
            f"({m}, {n}) for {n_columns} indexed. Pass the graph from each query to the "
            "training samples."
        )
    graph = scipy.sparse.csr_matrix(
        (data, np.asarray(csr.indices[:nnz], dtype=np.int64),
         np.asarray(csr.indptr, dtype=np.int64)), shape=(m, n))
    return sorted_rows(graph)


def sorted_rows(csr):
    """CSR with each row's entries ordered by value (stable: ties keep storage order)."""
    m = csr.shape[0]
    rows = np.repeat(np.arange(m), np.diff(csr.indptr))
    order = np.lexsort((np.arange(csr.nnz), csr.data, rows))
    out = scipy.sparse.csr_matrix((csr.data[order], csr.indices[order], csr.indptr.copy()),
                                  shape=csr.shape)
    out.indices = np.asarray(out.indices, dtype=np.int64)  # scipy may pick int32 ones
    out.indptr = np.asarray(out.indptr, dtype=np.int64)
    return out


def sparse_knn(csr, k):
    """The first k entries of each row of a value-sorted graph: (distances, int64 indices)."""
    counts = np.diff(csr.indptr)
    if csr.shape[0] and counts.min() < k:
        raise ValueError(
            f"{k} neighbors per samples are required, but some samples have only "
            f"{int(counts.min())} neighbors in precomputed graph matrix. Decrease "
            "n_neighbors, or recompute the graph with more neighbours (for the training "
            "graph, each row needs n_neighbors + 1 entries when it stores the point itself, "
            "as kneighbors_graph(X, mode='distance') does)."
        )
    take = csr.indptr[:-1, None] + np.arange(k)[None, :]
    return csr.data[take], csr.indices[take].astype(np.int64)


def drop_self(dist, ind):
    """Drop each row's own index, or its first entry when it is absent (scikit-learn's rule).

    Raises
    ------
    ValueError
        When a row holds its own index more than once (a graph storing (i, i) twice):
        there is no single entry to drop.
    """
    n = ind.shape[0]
    keep = ind != np.arange(n)[:, None]
    repeated = np.flatnonzero((~keep).sum(axis=1) > 1)
    if repeated.size:
        i = int(repeated[0])
        raise ValueError(
            f"The precomputed graph stores the entry ({i}, {i}) of point {i} to itself more "
            f"than once among the {ind.shape[1]} nearest entries of row {i}, so the point "
            "cannot be excluded from its own neighbours once. Store each (i, j) once: sum "
            "the duplicates (graph.sum_duplicates()) or drop the extra entries."
        )
    absent = keep.all(axis=1)
    keep[absent, 0] = False
    k = ind.shape[1] - 1
    return dist[keep].reshape(n, k), ind[keep].reshape(n, k)


def kneighbors(graph, k, self_query):
    """The k nearest entries of each row of a checked graph (:func:`check_graph`).

    Parameters
    ----------
    graph : csr_matrix
        The training graph (``self_query``) or the queries' graph.
    k : int
    self_query : bool
        The rows are the training points: each drops itself (see the module docstring).

    Returns
    -------
    distances : (n, k) float64
    indices : (n, k) int64
    """
    dist, ind = sparse_knn(graph, k + 1 if self_query else k)
    if self_query:
        dist, ind = drop_self(dist, ind)
    return dist.astype(np.float64), ind


def radius(graph, bounds, self_query):
    """The entries within ``bounds`` (inclusive) of each row, as CSR arrays
    ``(indptr, indices, distances)`` in increasing order of distance.

    Parameters
    ----------
    graph : csr_matrix
    bounds : float or ndarray of shape (n,)
        One radius, or one per row.
    self_query : bool
        Drop each row's own entry.
    """
    n = graph.shape[0]
    rows = np.repeat(np.arange(n), np.diff(graph.indptr))
    keep = graph.data <= (bounds if np.ndim(bounds) == 0 else np.asarray(bounds)[rows])
    if self_query:
        keep &= graph.indices != rows
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[keep], minlength=n), out=indptr[1:])
    return (indptr, graph.indices[keep].astype(np.int64),
            graph.data[keep].astype(np.float64))
