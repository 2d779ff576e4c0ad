"""NN-descent build steps: the forest, the heaps, the rounds and the recall check.

Used by :func:`fastdr.neighbors._nndescent.nndescent_index`, which validates the input and
owns the pipeline; every function here runs inside its ``parallel_section``.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._config import NNDESCENT_JOIN_BUFFER_BYTES as _JOIN_BUFFER_BYTES
from .._config import NNDESCENT_JOIN_CHUNK as _CHUNK
from .._kernels import codes
from .._kernels.heap import INDEX_SENTINEL
from .._kernels.nndescent import leaves as leaf_kernels
from .._kernels.nndescent import rounds as kernels
from .._kernels.nndescent import rp_trees
from .._runtime.progress import RoundLog


def _build_forest(X, n_trees, leaf_size, tree_seeds, threads):
    """Build the trees (in parallel, each tree serial) and flatten them into one node array."""
    m = X.shape[0]
    if threads > 1 and n_trees > 1:
        with ThreadPoolExecutor(max_workers=min(threads, n_trees)) as pool:
            trees = list(pool.map(lambda s: rp_trees.build_tree(X, np.uint64(s), leaf_size),
                                  tree_seeds))
    else:
        trees = [rp_trees.build_tree(X, np.uint64(s), leaf_size) for s in tree_seeds]
    perm = np.empty((n_trees, m), dtype=np.int32)
    roots = np.empty(n_trees, dtype=np.int64)
    base = 0
    parts = [[] for _ in range(7)]
    for t, (p, lo, hi, left, right, pa, pb, off) in enumerate(trees):
        perm[t] = p
        roots[t] = base
        shift = np.where(left >= 0, base, 0)
        for store, arr in zip(parts, (lo, hi, left + shift, right + shift, pa, pb, off),
                              strict=True):
            store.append(arr)
        base += lo.shape[0]
    lo, hi, left, right, pa, pb, off = (np.concatenate(s) for s in parts)
    leaf_ids = np.flatnonzero(left < 0)
    tree_leaf_ptr = np.searchsorted(leaf_ids, np.append(roots, lo.shape[0]))
    return {"perm": perm, "tree_leaf_ptr": tree_leaf_ptr, "leaf_ids": leaf_ids, "roots": roots,
            "lo": lo, "hi": hi, "left": left, "right": right, "a": pa, "b": pb, "off": off}


def _sample_recall(key_data, key_code, rows, heap_i, k, threads):
    """Share of the sampled rows' exact k nearest neighbours (by key) held in their heaps."""
    if key_code == codes.SQEUCLIDEAN:
        from ._search import knn_brute

        _, found = knn_brute(key_data, key_data[rows], k + 1, self_query=False,
                             n_jobs=threads)
        own = found == rows[:, None]
        own[~own.any(axis=1), -1] = True  # a duplicate ranked before the row itself
        own &= np.cumsum(own, axis=1) == 1
        found = found[~own].reshape(rows.shape[0], k)
        hits = (found[:, :, None] == heap_i[rows][:, None, :]).any(axis=2).sum()
    else:
        hits = kernels.sample_hits(key_data, key_code, rows, heap_i, k).sum()
    return float(hits) / (rows.shape[0] * k)


def _candidates(defaults, given, width, k):
    """Candidates sampled per point and round: the given count, else the default, widened."""
    if given is not None:
        return given
    c = defaults["max_candidates"]
    return max(c, min(60, -(-3 * width // 4))) if width > k else c


def _widen(key_data, key_code, forest, width, seed, heap_d, heap_i):
    """Heaps ``width`` wide, from the leaf mates and the entries of the narrower heaps."""
    wide_d, wide_i, wide_f = _init_heaps(key_data, key_code, forest, width, seed)
    leaf_kernels.merge_rows(heap_d, heap_i, wide_d, wide_i, wide_f)
    return wide_d, wide_i, wide_f


def _init_heaps(key_data, key_code, forest, width, seed):
    """Heaps of ``width`` entries per point, holding the nearest leaf mates (then random)."""
    m = key_data.shape[0]
    heap_d = np.full((m, width), np.inf, dtype=key_data.dtype)
    heap_i = np.full((m, width), INDEX_SENTINEL, dtype=np.int64)
    heap_f = np.zeros((m, width), dtype=np.uint8)
    if key_code == codes.SQEUCLIDEAN:
        leaf_kernels.init_from_leaves_gram(key_data, forest["perm"], forest["tree_leaf_ptr"],
                                      forest["leaf_ids"], forest["lo"], forest["hi"], heap_d,
                                      heap_i, heap_f)
    else:
        leaf_kernels.init_from_leaves(key_data, key_code, forest["perm"], forest["tree_leaf_ptr"],
                                 forest["leaf_ids"], forest["lo"], forest["hi"], heap_d, heap_i,
                                 heap_f)
    leaf_kernels.fill_random(key_data, key_code, np.uint64(seed), heap_d, heap_i, heap_f)
    return heap_d, heap_i, heap_f


def _renumber(forest, key_data):
    """Renumber points in the leaf order of the first tree, so that near points get near ids.

    Rows that are joined together then sit close in memory (fewer cache misses). Rewrites the
    forest in place to internal ids; returns ``order`` (internal id -> row) and the data in
    internal order.
    """
    order = forest["perm"][0].astype(np.int64)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.shape[0])
    forest["perm"] = inverse[forest["perm"]].astype(np.int32)
    for name in ("a", "b"):
        ids = forest[name]
        forest[name] = np.where(ids >= 0, inverse[np.maximum(ids, 0)], -1)
    return order, np.ascontiguousarray(key_data[order])


def _descent_rounds(X, key_code, heap_d, heap_i, heap_f, c, n_iters, delta, seed, threads,
                    verbose):
    """Run NN-descent rounds in place on the heaps; return the number of rounds run."""
    m, k = heap_i.shape
    per_point = c * (c - 1) + 2 * c * c
    entry_bytes = 8 + X.dtype.itemsize
    chunks_per_block = max(1, min(-(-m // _CHUNK),
                                  _JOIN_BUFFER_BYTES // (entry_bytes * per_point * _CHUNK)))
    cap = per_point * _CHUNK
    buf_t = np.empty(chunks_per_block * cap, dtype=np.int32)
    buf_s = np.empty(chunks_per_block * cap, dtype=np.int32)
    buf_d = np.empty(chunks_per_block * cap, dtype=X.dtype)
    buf_n = np.zeros(chunks_per_block, dtype=np.int64)
    counts = np.zeros(threads, dtype=np.int64)
    rev_ptr = np.zeros(m + 1, dtype=np.int64)
    rev_idx = np.empty(m * k, dtype=np.int32)  # ids < 2**31 - 1 (checked at the start)
    rev_flag = np.empty(m * k, dtype=np.uint8)
    new_i = np.empty((m, c), dtype=np.int32)
    old_i = np.empty((m, c), dtype=np.int32)
    block = chunks_per_block * _CHUNK
    stop_below = delta * k * m
    log = RoundLog("NN-descent", n_iters, verbose)
    n_run = n_iters
    try:
        for r in range(n_iters):
            round_seed = np.uint64(rp_trees.hash3(np.uint64(seed), r, 0))
            kernels.reverse_edges(heap_i, heap_f, rev_ptr, rev_idx, rev_flag)
            kernels.sample_candidates(heap_i, heap_f, rev_ptr, rev_idx, rev_flag, round_seed,
                                      new_i, old_i)
            kernels.retire_sampled(heap_i, heap_f, new_i)
            updates = 0
            for start in range(0, m, block):
                stop = min(start + block, m)
                n_chunks = -(-(stop - start) // _CHUNK)
                kernels.local_join(X, key_code, heap_d, new_i, old_i, start, stop, _CHUNK, cap,
                                   buf_t, buf_s, buf_d, buf_n)
                kernels.apply_updates(heap_d, heap_i, heap_f, n_chunks, cap, buf_t, buf_s, buf_d,
                                      buf_n, threads, counts)
                updates += int(counts.sum())
            log.round(r + 1, updates)
            if updates <= stop_below:
                n_run = r + 1
                break
    finally:
        log.close()
    return n_run
