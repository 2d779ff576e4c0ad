"""Neighbour search and pairwise distances on scipy sparse input (CSR; CSC, COO and the
other formats are converted to CSR, as scikit-learn does). Never densified.

The Python tier of :mod:`fastdr._kernels.distances.sparse`: it validates the index arrays
(numba does not bounds-check), puts every matrix in canonical form (int64 indices, sorted,
duplicates summed) on a copy, resolves the metric and calls the kernels.

The neighbour estimators reach it through small hooks in
:class:`fastdr.neighbors._base.NeighborsBase`: a sparse ``X`` at ``fit`` stores a
:class:`SparseIndex` (:mod:`fastdr.neighbors._sparse_rows`) and answers every later query
here (a dense query is converted to CSR).
Distances are handed back in the estimators' currency: the square of the reported distance
(the reported distance itself for ``"sqeuclidean"``), so that their square root is the
distance under every metric.
"""

import numpy as np
import scipy.sparse

from .._config import SPARSE_QUERY_BLOCK_ROWS
from .._distance.metric import weighted_minkowski
from .._distance.scaling import unit_scale_rows
from .._distance.sklearn_metric import as_named_metric
from .._kernels import codes
from .._kernels.distances import sparse as kernels
from .._runtime.threads import parallel_section
from .._validation.arrays import check_array, check_n_features
from .._validation.budget import check_dense_allocation
from .._validation.feature_names import check_feature_names
from .._validation.sparse import check_sparse
from ._blocks import query_block, self_offset

__all__ = ["SPARSE_METRICS", "SparseIndex", "build_index", "check_csr", "issparse",
           "kneighbors", "pairwise_distances", "query_points", "radius", "resolve_metric"]

#: Metric names accepted with sparse input, and their kernel.
SPARSE_METRICS = {
    "euclidean": codes.EUCLIDEAN, "l2": codes.EUCLIDEAN,
    "sqeuclidean": codes.SQEUCLIDEAN, "cosine": codes.COSINE,
    "manhattan": codes.MANHATTAN, "cityblock": codes.MANHATTAN, "l1": codes.MANHATTAN,
    "chebyshev": codes.CHEBYSHEV, "infinity": codes.CHEBYSHEV,
    "minkowski": codes.MINKOWSKI,
}
_PRODUCT_KINDS = (codes.EUCLIDEAN, codes.SQEUCLIDEAN, codes.COSINE)


def issparse(X):
    """True for a scipy sparse matrix or array."""
    return scipy.sparse.issparse(X)


def check_csr(X, name="X", *, dtype=None, magnitude=True):
    """Validate a sparse matrix (:func:`fastdr._validation.sparse.check_sparse`) and return
    it as canonical CSR; with ``magnitude``, refuse values whose squared distances overflow
    (every metric but the scale-free cosine)."""
    out = check_sparse(X, name=name, dtype=dtype)
    if magnitude:
        _check_magnitude(out, name)
    return out


def _check_magnitude(csr, name):
    """Refuse values whose squared distances (or p-th powers) would overflow."""
    if csr.nnz == 0:
        return
    largest = float(np.abs(csr.data).max())
    limit = float(np.finfo(csr.dtype).max) / 16
    if largest > 0 and np.log(largest) + 0.5 * np.log(max(csr.shape[1], 1)) > 0.5 * np.log(
            limit):
        raise ValueError(
            f"{name} holds values too large to compute distances: the largest absolute value "
            f"is {largest:.3g}, so squared distances between rows overflow {csr.dtype.name}. "
            "Scale the data first, for example with sklearn.preprocessing.MaxAbsScaler.")


def resolve_metric(metric, p=2, metric_params=None):
    """A metric specification as ``(kind, p)`` for the sparse kernels.

    ``"minkowski"`` takes ``p`` (or ``metric_params={"p": p}``, which wins, as in
    scikit-learn); p=1, 2 and inf become manhattan, euclidean and chebyshev.
    """
    metric, p, metric_params = as_named_metric(metric, p, metric_params)  # DistanceMetric
    if not isinstance(metric, str) or metric not in SPARSE_METRICS:
        raise ValueError(
            f"Metric {metric!r} not valid for sparse input. fastdr takes sparse X with "
            f"{', '.join(repr(m) for m in SPARSE_METRICS)}; for another metric convert X "
            "with X.toarray().")
    params = dict(metric_params or {})
    kind = SPARSE_METRICS[metric]
    if kind != codes.MINKOWSKI:
        if params:
            raise ValueError(f"metric={metric!r} takes no metric_params with sparse input; "
                             f"got {sorted(params)}.")
        return kind, 2.0, None
    p = params.pop("p", p)
    w = params.pop("w", None)
    if params:
        raise ValueError(f"metric='minkowski' with sparse input takes only metric_params "
                         f"{{'p': p, 'w': weights}}; got {sorted(params)}.")
    if p is None or isinstance(p, bool) or not np.isreal(p) or not p >= 1:
        raise ValueError(f"p must be a real number >= 1 for the minkowski metric, got {p!r}.")
    p = float(p)
    # weights: the plain metric on columns scaled by w ** (1/p), as on the dense route
    scale = None if w is None else weighted_minkowski(p, w, None).column_scale
    if p == 1:
        return codes.MANHATTAN, 2.0, scale
    if p == 2:
        return codes.EUCLIDEAN, 2.0, scale
    if np.isinf(p):
        return codes.CHEBYSHEV, 2.0, None
    return codes.MINKOWSKI, p, scale


class SparseIndex:
    """A validated CSR matrix of searched rows, with its row norms and metric."""

    def __init__(self, csr, kind, p, column_scale=None):
        if column_scale is not None and column_scale.shape[0] != csr.shape[1]:
            raise ValueError(f"metric_params['w'] has {column_scale.shape[0]} weights, but the "
                             f"data have {csr.shape[1]} features; pass one weight per feature.")
        self.column_scale = column_scale
        self.kind = kind
        self.p = p
        self.csr = csr = self.prepare(csr)
        sq = kernels.row_sq_norms(csr.data, csr.indptr)
        self.sq_norms = sq
        with np.errstate(divide="ignore"):
            self.inv_norms = np.where(sq > 0, 1.0 / np.sqrt(sq), 0.0)
        self._transposed = None

    def prepare(self, csr):
        """Rows as the kernels read them: columns scaled (weighted Minkowski) or each row
        scaled by a power of two (cosine: exact, and its norm stays finite)."""
        if self.column_scale is not None:
            data = csr.data * self.column_scale[csr.indices].astype(csr.dtype)
            csr = scipy.sparse.csr_matrix((data, csr.indices, csr.indptr), shape=csr.shape)
        if self.kind == codes.COSINE:
            csr = unit_scale_rows(csr)
        return csr

    def transposed(self):
        """CSR arrays of the transpose (built once, on first use by the product kernel)."""
        if self._transposed is None:
            csc = self.csr.tocsc()
            csc.sort_indices()
            self._transposed = (csc.data, np.asarray(csc.indices, dtype=np.int64),
                                np.asarray(csc.indptr, dtype=np.int64))
        return self._transposed


def _check_power(index, query):
    """For a general p, refuse data whose p-th powers of differences overflow float64."""
    if index.kind != codes.MINKOWSKI:
        return
    largest = max(float(np.abs(m.data).max()) if m.nnz else 0.0 for m in (index.csr, query))
    widest = index.csr.shape[1]
    if largest > 0 and index.p * np.log(2 * largest) + np.log(2 * widest) > 700:
        raise ValueError(
            f"With p={index.p:g}, the p-th powers of differences up to {2 * largest:.3g} "
            "overflow float64. Scale the data first (for example with "
            "sklearn.preprocessing.MaxAbsScaler) or use a smaller p.")


def build_index(estimator, X):
    """The sparse kernels' index of a neighbours estimator's sparse X: X validated for the
    estimator's metric (:func:`check_csr`) as a :class:`SparseIndex`. The estimator's
    attributes are set by :func:`fastdr.neighbors._sparse_rows.fit`."""
    kind, p, scale = resolve_metric(estimator.metric, getattr(estimator, "p", 2),
                                    estimator.metric_params)
    csr = check_csr(X, magnitude=kind != codes.COSINE)
    return SparseIndex(csr, kind, p, scale)


def query_points(estimator, X, method):
    """Validate the queries of a sparse-fitted estimator (sparse or dense) as CSR."""
    if X is None:
        return None
    index = getattr(estimator, "_sparse_index", None)
    if index is None:
        # a dense fit: its kernels read dense rows, so the queries are made dense (as
        # scikit-learn's brute force does), after the index checks and a memory check
        Q = check_csr(X)
        check_dense_allocation(Q.shape, Q.dtype, what="the sparse queries made dense",
                               alternative="query in smaller row blocks, or fit on sparse X")
        return Q.toarray()
    check_feature_names(estimator, X)
    dtype = index.csr.dtype
    magnitude = index.kind != codes.COSINE
    if issparse(X):
        Q = check_csr(X, dtype=dtype, magnitude=magnitude)
    else:
        Q = scipy.sparse.csr_matrix(check_array(X).astype(dtype, copy=False))
        Q = check_csr(Q, dtype=dtype, magnitude=magnitude)
    check_n_features(estimator, Q, method)
    return Q


def _arrays(index, Q):
    """Kernel arguments of the queries Q: (data, indices, indptr, inverse norms)."""
    if Q is index.csr:
        return Q.data, Q.indices, Q.indptr, index.inv_norms, index.sq_norms
    Q = index.prepare(Q)
    sq = kernels.row_sq_norms(Q.data, Q.indptr)
    with np.errstate(divide="ignore"):
        inv = np.where(sq > 0, 1.0 / np.sqrt(sq), 0.0)
    return Q.data, Q.indices, Q.indptr, inv, sq


def _self_pairs(index, Q, self_query):
    """The kernels' ``(self_mode, self_offset)``: mode 1 skips the target that
    :func:`fastdr.neighbors._blocks.self_offset` names (X=None); mode 2 gives it key 0
    instead (queries that are the training rows: their distance to themselves is exactly
    0); mode 0, other queries, reads no offset."""
    if self_query:
        return 1, self_offset(True)
    return (2, 0) if Q is index.csr else (0, self_offset(False))


def _to_currency(index, key):
    """Kernel keys to the estimators' currency (see the module docstring)."""
    if index.kind in (codes.EUCLIDEAN, codes.SQEUCLIDEAN):
        return key
    dist = key ** (1.0 / index.p) if index.kind == codes.MINKOWSKI else key
    return dist * dist


def kneighbors(index, Q, k, self_query, n_jobs):
    """Exact k nearest training rows of each query row, ties by the smaller index.

    Parameters
    ----------
    index : SparseIndex
    Q : csr_matrix or None
        Validated queries; None means the training rows, each skipping itself.
    k : int
    self_query : bool
    n_jobs : int or None

    Returns
    -------
    currency : (m, k) float64
        Squared reported distances (the distances themselves for sqeuclidean).
    indices : (m, k) int64
    """
    Q = index.csr if Q is None else Q
    _check_power(index, Q)
    qd, qi, qp, q_inv, q_sq = _arrays(index, Q)
    T = index.csr
    m, n = Q.shape[0], T.shape[0]
    mode, offset = _self_pairs(index, Q, self_query)
    n_avail = n - (1 if self_query else 0)
    if not 1 <= k <= n_avail:  # the kernels would read heap sentinels as row indices
        raise ValueError(f"n_neighbors={k} must lie in [1, {n_avail}]: there are {n} "
                         f"training rows{', each query skipping itself' if self_query else ''}."
                         " Use fewer neighbours or fit on more rows.")
    out_key = np.empty((m, k), dtype=np.float64)
    out_i = np.empty((m, k), dtype=np.int64)
    with parallel_section(n_jobs) as threads:
        block = query_block(m, threads, SPARSE_QUERY_BLOCK_ROWS)
        if index.kind in _PRODUCT_KINDS:
            extra = 0 if index.kind == codes.COSINE else max(k, 8)
            cd, ci, cp = index.transposed()
            kernels.knn_product(index.kind, qd, qi, qp, q_sq, q_inv, T.data, T.indices,
                                T.indptr, index.sq_norms, index.inv_norms, cd, ci, cp, k,
                                min(n_avail, k + extra), mode, offset, block, out_key, out_i)
        else:
            kernels.knn_merge(index.kind, index.p, qd, qi, qp, q_inv, T.data, T.indices,
                              T.indptr, index.inv_norms, k, mode, offset, block, out_key,
                              out_i)
    return _to_currency(index, out_key), out_i


def radius(index, Q, radius_value, self_query, n_jobs, *, tested=False):
    """Every training row at distance <= ``radius_value`` of each query row, as CSR arrays
    (indices ascending in each row): ``(indptr, indices, currency)``; with ``tested``, also
    the distances the kernel compared with ``radius_value`` (a per-query radius is tested
    on those: the currency, their square, may underflow to 0)."""
    Q = index.csr if Q is None else Q
    _check_power(index, Q)
    qd, qi, qp, q_inv, _ = _arrays(index, Q)
    T = index.csr
    mode, offset = _self_pairs(index, Q, self_query)
    r = float(radius_value)
    args = (index.kind, index.p, qd, qi, qp, q_inv, T.data, T.indices, T.indptr,
            index.inv_norms, r, mode, offset)
    with parallel_section(n_jobs):
        counts = kernels.radius_count(*args)
        indptr = np.zeros(Q.shape[0] + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        dist = np.empty(indptr[-1], dtype=np.float64)
        indices = np.empty(indptr[-1], dtype=np.int64)
        kernels.radius_fill(*args, indptr, dist, indices)
    currency = dist if index.kind == codes.SQEUCLIDEAN else dist * dist
    return (indptr, indices, currency, dist) if tested else (indptr, indices, currency)


def pairwise_distances(X, Y=None, *, metric="euclidean", metric_params=None, n_jobs=None,
                       p=2):
    """Dense distances between the rows of X and Y (or X) when either is sparse.

    The sparse branch of :func:`fastdr.pairwise_distances` (a dense operand is converted to
    CSR). Returns an (m, n) ndarray in X's dtype; the diagonal is exactly 0 when Y is None.
    Time O(m nnz(Y) + n nnz(X)) by merges; no memory besides the result.
    """
    kind, p, scale = resolve_metric(metric, p, metric_params)
    magnitude = kind != codes.COSINE
    Xc = check_csr(X if issparse(X) else scipy.sparse.csr_matrix(check_array(X)),
                   magnitude=magnitude)
    if Y is None:
        Yc = Xc
    else:
        Yc = check_csr(Y if issparse(Y) else scipy.sparse.csr_matrix(check_array(Y, name="Y")),
                       "Y", dtype=Xc.dtype, magnitude=magnitude)
        if Yc.shape[1] != Xc.shape[1]:
            raise ValueError(f"X and Y must have the same number of features; got "
                             f"{Xc.shape[1]} and {Yc.shape[1]}.")
    index = SparseIndex(Yc, kind, p, scale)
    _check_power(index, Xc)
    m, n = Xc.shape[0], Yc.shape[0]
    check_dense_allocation((m, n), Xc.dtype, what=f"The {m} x {n} distance matrix",
                           alternative="Use float32 input, fewer rows, or "
                           "fastdr.NearestNeighbors for k-NN queries that never build it.")
    qd, qi, qp, q_inv, _ = _arrays(index, Xc)
    out = np.empty((m, n), dtype=Xc.dtype)
    T = index.csr  # the rows as the index holds them (scaled for cosine)
    with parallel_section(n_jobs):
        kernels.pairwise_merge(kind, p, qd, qi, qp, q_inv, T.data, T.indices, T.indptr,
                               index.inv_norms, 2 if Y is None else 0, 0, out)
    return out
