"""Task functions and graph assembly of the distributed exact k-NN search.

Two plans, both exact and both ordered by (squared distance, index) like the in-memory
search, so that the result is the in-memory result, indices included:

* **broadcast**: one task gathers the index blocks into one array (and a k-d tree when the
  algorithm uses one); every query block is answered against it in its own task;
* **pairs**: one task per (query block, index block) pair keeps that pair's top k with global
  indices; the candidates of one query block are merged up a tree by (distance, index).

A self-query (``X=None``) asks for k + 1 neighbours with the point itself allowed and drops
the point by index afterwards (the last one when k + 1 points tie at distance 0 before it):
the same k points as excluding it from the search.
"""

import dask
import numpy as np

from .._kernels.heap import INDEX_SENTINEL
from ..neighbors._search import build_tree, knn_brute, knn_tree
from ._utils import row_blocks, row_offsets, task_n_jobs


def build_index(algorithm, *blocks):
    """One in-memory index (array, tree) from the row blocks of the training data."""
    T = np.ascontiguousarray(np.concatenate(blocks, axis=0))
    tree = build_tree(T) if algorithm == "kd_tree" else None
    return T, tree


def index_topk(index, Q, k, offset, n_jobs):
    """The k nearest index rows of each query, indices shifted by ``offset``; padded.

    ``index`` is a :func:`build_index` result. Rows with fewer than k index points are padded
    with (inf, INDEX_SENTINEL), which rank after every real candidate.
    """
    T, tree = index
    m = Q.shape[0]
    kb = min(k, T.shape[0])
    n_jobs = task_n_jobs(n_jobs)
    if m == 0 or kb == 0:
        sq = np.empty((m, 0))
        idx = np.empty((m, 0), dtype=np.int64)
    elif tree is not None:
        sq, idx = knn_tree(tree, Q, kb, self_query=False, n_jobs=n_jobs)
    else:
        sq, idx = knn_brute(T, np.ascontiguousarray(Q, dtype=T.dtype), kb, self_query=False,
                            n_jobs=n_jobs)
    idx = idx + offset
    if kb < k:
        sq = np.hstack([sq, np.full((m, k - kb), np.inf)])
        idx = np.hstack([idx, np.full((m, k - kb), INDEX_SENTINEL, dtype=np.int64)])
    return sq, idx


def merge_topk(k, *parts):
    """The k best of several candidate sets of the same queries, by (distance, index)."""
    sq = np.concatenate([p[0] for p in parts], axis=1)
    idx = np.concatenate([p[1] for p in parts], axis=1)
    order = np.lexsort((idx, sq), axis=-1)[:, :k]
    return np.take_along_axis(sq, order, 1), np.take_along_axis(idx, order, 1)


def drop_self(result, start):
    """Remove each query's own index (global row ``start + i``) from k + 1 neighbours."""
    sq, idx = result
    m, kk = idx.shape
    rows = np.arange(start, start + m)
    drop = idx == rows[:, None]
    drop[~drop.any(axis=1), -1] = True
    keep = ~drop
    return sq[keep].reshape(m, kk - 1), idx[keep].reshape(m, kk - 1)


def _tree_merge(parts, k, split_every=4):
    level = list(parts)
    while len(level) > 1:
        nxt = []
        for i in range(0, len(level), split_every):
            group = level[i:i + split_every]
            nxt.append(group[0] if len(group) == 1 else
                       dask.delayed(merge_topk, pure=True)(k, *group))
        level = nxt
    return level[0]


def plan_knn(T, Q, k, *, self_query, algorithm, broadcast, n_jobs):
    """One delayed (squared distances, indices) pair per row block of the queries.

    Parameters
    ----------
    T : dask array, the training points in metric space
    Q : dask array or None (self-query: the queries are T)
    k : int
    self_query : bool
    algorithm : {"brute", "kd_tree"}
    broadcast : bool
        Broadcast one index, or search every (query block, index block) pair.
    n_jobs : int or None

    Returns
    -------
    list of Delayed
        Each computes to ``(sq_dist (rows, k) float64, indices (rows, k) int64)``.
    """
    Q = T if self_query else Q
    kk = k + 1 if self_query else k
    t_blocks = row_blocks(T)
    t_offsets = row_offsets(T)
    q_blocks = row_blocks(Q)
    q_offsets = row_offsets(Q)
    results = []
    if broadcast:
        index = dask.delayed(build_index, pure=True)(algorithm, *t_blocks)
        for q_block in q_blocks:
            results.append(dask.delayed(index_topk, pure=True)(index, q_block, kk, 0, n_jobs))
    else:
        indices = [dask.delayed(build_index, pure=True)(algorithm, b) for b in t_blocks]
        for q_block in q_blocks:
            pairs = [dask.delayed(index_topk, pure=True)(index, q_block, kk, int(t_offsets[tb]),
                                                         n_jobs)
                     for tb, index in enumerate(indices)]
            results.append(_tree_merge(pairs, kk))
    if self_query:
        results = [dask.delayed(drop_self, pure=True)(res, int(q_offsets[qb]))
                   for qb, res in enumerate(results)]
    return results
