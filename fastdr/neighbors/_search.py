"""Exact neighbour search shared by every estimator: brute force (numba) or a k-d tree (scipy).

``algorithm="auto"`` rule: the k-d tree when the (transformed) data have at most
``KD_TREE_MAX_DIM`` = 15 features, brute force otherwise. Within brute force, the certified
float32 screen (:mod:`fastdr._kernels.knn.screen`: a float32 GEMM per block, exact float64
distances for the kept candidates) is used from ``GEMM_MIN_DIM`` = 16 features up, direct
sums below. The tunables live in :mod:`fastdr._config`.
"""

import numpy as np
import scipy.sparse
from scipy.spatial import cKDTree

from .._config import GEMM_MIN_DIM, KD_TREE_LEAF_SIZE, KD_TREE_MAX_DIM, SCREEN_TARGET_BLOCK
from .._distance.norm_trick import prep_kernel, target_block
from .._kernels.distances import euclidean as dist_kernels
from .._kernels.distances.pairs import csr_pair_sqdist
from .._kernels.knn import brute as knn_kernels
from .._kernels.knn import screen as knn_screen
from .._runtime.progress import run_in_chunks
from .._runtime.threads import effective_n_jobs, parallel_section
from ._blocks import query_block, self_offset, skip_targets

__all__ = ["GEMM_MIN_DIM", "KD_TREE_MAX_DIM", "ALGORITHMS", "EXACT_ALGORITHMS",
           "NEIGHBORS_ALGORITHMS", "from_sklearn_name", "choose_algorithm", "build_tree",
           "knn_brute", "knn_tree", "radius_brute", "radius_tree", "to_csr"]

#: The exact searches (what ``"auto"`` chooses between).
EXACT_ALGORITHMS = ("auto", "brute", "kd_tree")
#: Every ``algorithm`` value: the exact ones and the approximate NN-descent graph
#: (:mod:`fastdr.neighbors._approximate`).
ALGORITHMS = (*EXACT_ALGORITHMS, "nndescent")
#: ``neighbors_algorithm`` of Isomap and LLE: scikit-learn's names, "ball_tree" included
#: (an alias of "kd_tree": both are exact).
NEIGHBORS_ALGORITHMS = (*ALGORITHMS, "ball_tree")


def from_sklearn_name(algorithm):
    """A ``neighbors_algorithm`` value as a ``NearestNeighbors`` algorithm ("ball_tree" ->
    "kd_tree")."""
    return "kd_tree" if algorithm == "ball_tree" else algorithm


def choose_algorithm(algorithm, n_features):
    """Resolve ``"auto"`` into ``"kd_tree"`` or ``"brute"`` (see the module docstring)."""
    if algorithm != "auto":
        return algorithm
    return "kd_tree" if n_features <= KD_TREE_MAX_DIM else "brute"


def build_tree(T):
    """A k-d tree over the rows of T (float64 inside scipy)."""
    return cKDTree(T, leafsize=KD_TREE_LEAF_SIZE, balanced_tree=False, compact_nodes=False)


def screen_extra(k):
    """Candidates kept beyond k by the float32 screen: ``max(4, k // 2)``. More make a failed
    certificate (and a float64 redo of that row) rarer and the selection slower (bench:
    knn_f32)."""
    return max(4, k // 2)


def knn_brute(T, Q, k, *, self_query, n_jobs, progress=None):
    """Exact k nearest rows of T for each row of Q, by (squared distance, index).

    Parameters
    ----------
    T, Q : (n, d), (m, d) arrays of one float dtype
    k : int
    self_query : bool
        Q is T and each row excludes itself by index
        (:func:`fastdr.neighbors._blocks.self_offset`).
    n_jobs : int or None
    progress : StageLog or None
        When verbose, the queries run in chunks under a progress bar if they are expected to
        take long (:func:`fastdr._runtime.progress.run_in_chunks`); same result.

    Returns
    -------
    sq_dist : (m, k) float64
    indices : (m, k) int64
    """
    m, d = Q.shape
    n = T.shape[0]
    out_d = np.empty((m, k), dtype=np.float64)
    out_i = np.empty((m, k), dtype=np.int64)
    offset = self_offset(self_query)
    with parallel_section(n_jobs) as threads:
        if d < GEMM_MIN_DIM:
            run_in_chunks(progress, m, lambda lo, hi: knn_kernels.knn_direct(
                Q[lo:hi], T, k, offset if offset < 0 else offset + lo, out_d[lo:hi],
                out_i[lo:hi]), what="k-NN queries")
            return out_d, out_i
        n_avail = n - (1 if self_query else 0)
        q_block = query_block(m, threads)
        n_candidates = min(n_avail, k + screen_extra(k))
        _knn_screened(T, Q, k, n_candidates, self_query, q_block, progress, out_d, out_i)
    return out_d, out_i


def _knn_screened(T, Q, k, n_candidates, self_query, q_block, progress, out_d, out_i):
    """Exact search by certified float32 screening (:mod:`fastdr._kernels.knn.screen`).

    float64 and float32 rows alike: the keys come from one float32 GEMM per block, the
    answer from exact float64 distances. Rows the screen cannot certify (near-ties around
    the k-th neighbour) are redone exactly under the threshold the screen proved.
    """
    m, d = Q.shape
    centre = T.mean(axis=0, dtype=np.float64)
    t_norms = prep_kernel(dist_kernels.centred_sqnorms, T)(T, centre)
    # the same rows (a self query, or kneighbors(X) on the fitted X) have the same norms
    q_norms = (t_norms if self_query or Q is T
               else prep_kernel(dist_kernels.centred_sqnorms, Q)(Q, centre))
    largest = max(float(t_norms.max()), float(q_norms.max()))
    # a power of two that brings every centred coordinate into [-1, 1] (exact in float64)
    scale = 2.0 ** -np.frexp(np.sqrt(largest))[1] if largest > 0 else 1.0
    eps = knn_screen.screen_eps(d)
    eps_m = eps * (1 + 2.0**-10)
    margin_q = eps_m * (q_norms * scale**2) + knn_screen.screen_abs(d)
    margin_t = 4 * eps_m * (t_norms * scale**2)
    block = min(SCREEN_TARGET_BLOCK, target_block(T.shape[0]))
    t_packed = prep_kernel(knn_screen.pack_screen_targets, T)(T, centre, scale, t_norms,
                                                              2 * eps, block)
    q_packed = prep_kernel(knn_screen.pack_screen_queries, Q)(Q, centre, scale)
    skips = skip_targets(m, self_offset(self_query))
    certified = np.zeros(m, dtype=np.bool_)
    taus = np.zeros(m, dtype=np.float64)

    def query_blocks(b0, b1):
        rows = slice(b0 * q_block, b1 * q_block)
        knn_screen.knn_screen(Q[rows], T, q_packed[rows], t_packed, k, n_candidates,
                              skips[rows], q_block, margin_q[rows], margin_t, out_d[rows],
                              out_i[rows], certified[rows], taus[rows])

    run_in_chunks(progress, -(-m // q_block), query_blocks,
                  what=f"k-NN queries ({q_block} per step)")
    redo = np.flatnonzero(~certified)
    if redo.size:
        d_redo = np.empty((redo.size, k), dtype=np.float64)
        i_redo = np.empty((redo.size, k), dtype=np.int64)
        knn_screen.knn_screen_redo(np.ascontiguousarray(Q[redo]), T, q_packed[redo],
                                   t_packed, k, skips[redo], q_block, taus[redo], d_redo,
                                   i_redo)
        out_d[redo] = d_redo
        out_i[redo] = i_redo


def knn_tree(tree, Q, k, *, self_query, n_jobs, progress=None):
    """Exact k nearest neighbours from a cKDTree; same contract as :func:`knn_brute`
    (``progress`` included)."""
    m = Q.shape[0]
    workers = effective_n_jobs(n_jobs)
    k_query = k + 1 if self_query else k
    dist = np.empty((m, k_query), dtype=np.float64)
    idx = np.empty((m, k_query), dtype=np.int64)

    def query(lo, hi):
        found_d, found_i = tree.query(Q[lo:hi], k=k_query, workers=workers)
        dist[lo:hi] = np.reshape(found_d, (hi - lo, k_query))
        idx[lo:hi] = np.reshape(found_i, (hi - lo, k_query))

    run_in_chunks(progress, m, query, what="k-NN queries (k-d tree)", threads=workers)
    if self_query:  # the self_offset rule: row r drops index r (one copy, not by distance)
        drop = idx == np.arange(m)[:, None]
        missing = ~drop.any(axis=1)
        drop[missing, -1] = True
        keep = ~drop
        dist = dist[keep].reshape(m, k)
        idx = idx[keep].reshape(m, k)
    dist = dist * dist
    order = np.lexsort((idx, dist), axis=-1)
    return np.take_along_axis(dist, order, 1), np.take_along_axis(idx, order, 1)


def radius_brute(T, Q, radius, *, self_query, n_jobs):
    """All rows of T within ``radius`` (inclusive) of each row of Q, as CSR arrays.

    Returns
    -------
    indptr : (m + 1,) int64
    indices : (nnz,) int64, ascending within each row
    sq_dist : (nnz,) float64
    """
    offset = self_offset(self_query)
    radius_sq = float(radius) ** 2
    with parallel_section(n_jobs):
        counts = knn_kernels.radius_count(Q, T, radius_sq, offset)
        indptr = np.zeros(Q.shape[0] + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        sq_dist = np.empty(indptr[-1], dtype=np.float64)
        indices = np.empty(indptr[-1], dtype=np.int64)
        knn_kernels.radius_fill(Q, T, radius_sq, offset, indptr, sq_dist, indices)
    return indptr, indices, sq_dist


def radius_tree(tree, T, Q, radius, *, self_query, n_jobs):
    """Same contract as :func:`radius_brute`, from a cKDTree."""
    workers = effective_n_jobs(n_jobs)
    # a hair of slack so that pairs exactly on the sphere survive the tree's float64 test;
    # the exact test below decides.
    hits = tree.query_ball_point(Q, r=radius * (1 + 1e-12), workers=workers,
                                 return_sorted=True)
    m = Q.shape[0]
    counts = np.fromiter((len(h) for h in hits), dtype=np.int64, count=m)
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.fromiter((j for h in hits for j in h), dtype=np.int64, count=indptr[-1])
    with parallel_section(n_jobs):
        sq_dist = csr_pair_sqdist(Q, T, indptr, indices)
    keep = sq_dist <= float(radius) ** 2
    if self_query:  # the self_offset rule, as in knn_tree
        rows = np.repeat(np.arange(m), counts)
        keep &= indices != rows
    if not keep.all():
        rows = np.repeat(np.arange(m), counts)[keep]
        indices = indices[keep]
        sq_dist = sq_dist[keep]
        indptr = np.zeros(m + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=m), out=indptr[1:])
    return indptr, indices, sq_dist


def to_csr(indptr, indices, values, shape):
    """Build a ``csr_matrix`` from CSR arrays without dropping explicit zeros."""
    return scipy.sparse.csr_matrix((values, indices, indptr), shape=shape)


def knn_csr(dist, ind, mode, n_cols):
    """The k-NN graph of (m, k) neighbour distances and indices: k entries a row, the
    distances (``mode="distance"``) or ones (``"connectivity"``), explicit zeros kept."""
    m, k = ind.shape
    values = dist.ravel() if mode == "distance" else np.ones(m * k, dtype=dist.dtype)
    indptr = np.arange(0, m * k + 1, k, dtype=np.int64)
    return to_csr(indptr, ind.ravel(), values, (m, n_cols))
