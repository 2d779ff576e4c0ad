"""Isomap's input checks, and its neighbour search on a precomputed metric: a dense distance
matrix or a sparse neighbour graph, read as scikit-learn's
``NearestNeighbors(metric="precomputed")`` reads them.

* Dense (n, m): row i holds the distances from point i to the m training points.
* Sparse (n, m): only the stored entries are candidate neighbours (explicit zeros included);
  each row is read in increasing order of its values (ties in storage order).
* Training queries (``X=None``) exclude the point itself: among the k + 1 nearest candidates
  the entry of the point itself is dropped, or the first one when the point is not among them
  (scikit-learn's rule, which also covers duplicates at distance 0).

The sparse readers (row sorting, k-NN, dropping the point itself) are the neighbour
estimators' (:mod:`fastdr.neighbors._precomputed_graph`).
"""

import numpy as np
import scipy.sparse

from .._validation.arrays import check_array
from .._validation.indices import check_sparse_graph
from .._validation.sparse import check_sparse, check_structure
from ..neighbors._precomputed_graph import drop_self as _drop_self
from ..neighbors._precomputed_graph import sorted_rows as _sorted_rows
from ..neighbors._precomputed_graph import sparse_knn as _sparse_knn


def check_input(X, metric):
    """Isomap's X checked for the neighbour search: dense float, canonical sparse CSR
    (:func:`fastdr._validation.sparse.check_sparse`), or a precomputed matrix
    (:func:`check_precomputed`)."""
    if metric == "precomputed":
        return check_precomputed(X)
    if scipy.sparse.issparse(X):
        return check_sparse(X, min_samples=2)
    return check_array(X, min_samples=2)


def check_precomputed(X, *, n_columns=None, name="The precomputed distance matrix"):
    """Validate a precomputed distance matrix (dense) or neighbour graph (sparse).

    Parameters
    ----------
    X : array-like or scipy sparse matrix of shape (n, m)
    n_columns : int or None
        The m expected (the training size); None means square (fit).
    name : str
        How X is called in the messages.

    Returns
    -------
    ndarray or scipy.sparse.csr_matrix
        Sparse input comes back as CSR with each row sorted by value.
    """
    if scipy.sparse.issparse(X):
        if n_columns is None:
            csr = check_sparse_graph(X, name=name)
        else:
            csr = _check_sparse_rows(X, name)
        D = _sorted_rows(csr)
    else:
        D = check_array(X, name=name, min_samples=1 if n_columns else 2)
        if D.size and D.min() < 0:
            raise ValueError(
                f"Negative values in data passed to precomputed distance matrix: {name} has a "
                f"negative entry ({D.min():.3g}). Pass distances (>= 0), not similarities."
            )
    if n_columns is None and D.shape[0] != D.shape[1]:
        raise ValueError(
            f"Precomputed matrix must be square: {name} has shape {D.shape}. With "
            "metric='precomputed', fit takes the (n_samples, n_samples) distances between the "
            "training points."
        )
    if n_columns is not None and D.shape[1] != n_columns:
        raise ValueError(
            f"{name} has {D.shape[1]} columns, but Isomap was fitted on {n_columns} points. "
            f"Pass the (n_queries, {n_columns}) distances to the training points."
        )
    return D


def _check_sparse_rows(X, name):
    csr = scipy.sparse.csr_matrix(check_structure(X, name))
    csr.check_format(full_check=True)
    if csr.nnz and (not np.isfinite(csr.data).all() or (csr.data < 0).any()):
        raise ValueError(f"{name} must hold finite distances >= 0 in its stored entries.")
    return csr


class PrecomputedNeighbors:
    """``NearestNeighbors(metric="precomputed")`` for Isomap: k-NN and radius queries that read
    a distance matrix or a sparse neighbour graph.

    Parameters
    ----------
    n_neighbors : int or None
    radius : float or None

    Attributes
    ----------
    n_samples_fit_ : int
    n_features_in_ : int
        The training size (the columns of the matrix), as in scikit-learn.
    """

    metric = "precomputed"

    def __init__(self, n_neighbors=None, radius=None):
        self.n_neighbors = n_neighbors
        self.radius = radius

    def fit(self, D):
        """Store the validated (m, m) matrix of :func:`check_precomputed`."""
        self._fit_X = D
        self.n_samples_fit_ = D.shape[0]
        self.n_features_in_ = D.shape[1]
        return self

    def kneighbors(self, X=None, n_neighbors=None, return_distance=True):
        """The k nearest training points of each row (``X=None``: the training rows, each
        without itself).

        Returns
        -------
        distances, indices : ndarrays of shape (n, k)
        """
        k = self.n_neighbors if n_neighbors is None else n_neighbors
        train = X is None
        D = self._fit_X if train else check_precomputed(X, n_columns=self.n_samples_fit_)
        need = k + 1 if train else k
        if need > self.n_samples_fit_:
            relation = "<" if train else "<="
            raise ValueError(
                f"Expected n_neighbors {relation} n_samples_fit, but n_neighbors = {k}, "
                f"n_samples_fit = {self.n_samples_fit_}. Use a smaller n_neighbors."
            )
        dist, ind = (_sparse_knn(D, need) if scipy.sparse.issparse(D)
                     else _dense_knn(D, need))
        if train:
            dist, ind = _drop_self(dist, ind)
        return (dist, ind) if return_distance else ind

    def radius_neighbors_graph(self, X=None, radius=None, mode="distance"):
        """The training points within ``radius`` of each row, as a CSR matrix of distances."""
        r = self.radius if radius is None else radius
        train = X is None
        D = self._fit_X if train else check_precomputed(X, n_columns=self.n_samples_fit_)
        csr = (scipy.sparse.csr_matrix(D) if scipy.sparse.issparse(D)
               else _dense_within(D, r))
        rows = np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr))
        keep = csr.data <= r
        if train:
            keep &= csr.indices != rows
        counts = np.bincount(rows[keep], minlength=csr.shape[0])
        indptr = np.zeros(csr.shape[0] + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        return scipy.sparse.csr_matrix((csr.data[keep], csr.indices[keep], indptr),
                                       shape=csr.shape)


def _dense_knn(D, k):
    order = np.argsort(D, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(D, order, axis=1), order.astype(np.int64)


def _dense_within(D, r):
    rows, cols = np.nonzero(D <= r)
    indptr = np.zeros(D.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=D.shape[0]), out=indptr[1:])
    return scipy.sparse.csr_matrix((D[rows, cols], cols, indptr), shape=D.shape)
