"""Graph search for new points on an NN-descent graph, seeded from the trees' leaves.

Best-first search: the frontier is a min-queue of (key, point) and the k best are a bounded
heap, both of :mod:`fastdr._kernels.heap`; a point is expanded while its key is within
``scale`` times the current k-th best key (``scale = (1 + epsilon)^2`` for squared keys,
``1 + epsilon`` for L1). Each query is independent, so results do not depend on
the thread count or on how queries are chunked.
"""

import numpy as np
from numba import njit, prange

from ..heap import INDEX_SENTINEL, frontier_pop_root, frontier_push, heap_push
from .rounds import key_to_row
from .rp_trees import descend


@njit(cache=True)
def _grow_frontier(fd, fi):
    nd = np.empty(2 * fd.shape[0], dtype=fd.dtype)
    ni = np.empty(2 * fi.shape[0], dtype=fi.dtype)
    nd[:fd.shape[0]] = fd
    ni[:fi.shape[0]] = fi
    return nd, ni


@njit(cache=True, inline="always")
def _frontier_add(fd, fi, size, d, j):
    """Push (d, j) on the frontier, doubling it when full; returns (fd, fi, size + 1)."""
    if size == fd.shape[0]:
        fd, fi = _grow_frontier(fd, fi)
    frontier_push(fd, fi, size, d, j)
    return fd, fi, size + 1


@njit(cache=True)
def search_one(X, metric, q, scale, perm, roots, node_lo, node_hi, node_left, node_right,
               node_a, node_b, node_off, graph_ptr, graph_idx, visited, stamp,
               res_d, res_i, fd, fi):
    """Search the k nearest rows of X for one query into (res_d, res_i), a heap. O(visited d).

    ``visited[j] == stamp`` marks points already measured for this query. Returns the
    frontier arrays (they may have grown).
    """
    size = 0
    for t in range(roots.shape[0]):
        leaf = descend(X, q, roots[t], node_lo, node_hi, node_left, node_right,
                       node_a, node_b, node_off)
        for p in range(node_lo[leaf], node_hi[leaf]):
            j = np.int64(perm[t, p])
            if visited[j] == stamp:
                continue
            visited[j] = stamp
            d = key_to_row(q, X, j, metric)
            heap_push(res_d, res_i, d, j)
            fd, fi, size = _frontier_add(fd, fi, size, d, j)
    bound = res_d[0] * scale
    while size > 0:
        d_c = fd[0]
        c = fi[0]
        frontier_pop_root(fd, fi, size)
        size -= 1
        if d_c > bound:
            break
        for e in range(graph_ptr[c], graph_ptr[c + 1]):
            j = graph_idx[e]
            if visited[j] == stamp:
                continue
            visited[j] = stamp
            d = key_to_row(q, X, j, metric)
            if d < bound:
                heap_push(res_d, res_i, d, j)
                fd, fi, size = _frontier_add(fd, fi, size, d, j)
                bound = res_d[0] * scale
    if res_i[0] == INDEX_SENTINEL:
        # the search reached fewer than k points (a disconnected graph): sweep the rest
        for j in range(X.shape[0]):
            if visited[j] != stamp:
                heap_push(res_d, res_i, key_to_row(q, X, j, metric), j)
    return fd, fi


@njit(cache=True, parallel=True)
def search(X, metric, Q, scale, perm, roots, node_lo, node_hi, node_left, node_right,
           node_a, node_b, node_off, graph_ptr, graph_idx, chunk, out_d, out_i):
    """k nearest rows of X for every row of Q by graph search (unsorted key heaps).

    Queries are split into chunks of ``chunk``; each chunk owns one visited-stamp array of
    length m. O(n_queries visited d) time, O(threads m) extra memory.
    """
    n_q, k = out_i.shape
    m = X.shape[0]
    n_chunks = (n_q + chunk - 1) // chunk
    for c in prange(n_chunks):
        visited = np.zeros(m, dtype=np.int32)
        fd = np.empty(256, dtype=out_d.dtype)
        fi = np.empty(256, dtype=np.int64)
        for s in range(c * chunk, min((c + 1) * chunk, n_q)):
            out_d[s, :] = np.inf
            out_i[s, :] = INDEX_SENTINEL
            fd, fi = search_one(X, metric, Q[s], scale, perm, roots, node_lo, node_hi,
                                node_left, node_right, node_a, node_b, node_off, graph_ptr,
                                graph_idx, visited, s - c * chunk + 1, out_d[s], out_i[s],
                                fd, fi)
