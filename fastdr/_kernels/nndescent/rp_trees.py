"""Random-projection trees for NN-descent: counter-based hashing, forest build and descent.

A tree splits a node's points by the hyperplane halfway between two of its points ``a`` and
``b`` (normal ``x_a - x_b``, offset ``(|x_a|^2 - |x_b|^2) / 2``): a point goes left when its
margin ``x . (x_a - x_b) - offset`` is positive. A node that no hyperplane splits (duplicate
points) is cut into two halves by position. Nodes are stored in flat arrays in creation
order (breadth first); a leaf has ``left == -1`` and owns ``perm[lo:hi]``.

Randomness comes from a counter-based hash of (seed, node, draw), so a tree depends only on
its seed and the data, never on thread scheduling.
"""

import numpy as np
from numba import njit

from ..._config import FASTMATH

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, inline="always")
def mix64(x):
    """SplitMix64 finaliser: a bijective scramble of a uint64. O(1)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, inline="always")
def hash3(seed, a, b):
    """A uint64 hash of (seed, a, b) for non-negative integers a and b. O(1)."""
    h = mix64(np.uint64(seed) + np.uint64(a) * _GOLDEN)
    return mix64(h ^ (np.uint64(b) + _GOLDEN))


@njit(cache=True)
def hyperplane(xa, xb, normal):
    """Write the normal xa - xb (data dtype) and return the offset (|xa|^2 - |xb|^2) / 2. O(d)."""
    acc = 0.0
    for f in range(xa.shape[0]):
        normal[f] = xa[f] - xb[f]
        acc += np.float64(xa[f]) * np.float64(xa[f]) - np.float64(xb[f]) * np.float64(xb[f])
    return 0.5 * acc


@njit(cache=True, fastmath=set(FASTMATH))
def hyperplane_margin(x, normal, offset):
    """Signed margin x . normal - offset, the dot product in the data dtype. O(d)."""
    acc = x[0] - x[0]
    for f in range(x.shape[0]):
        acc += x[f] * normal[f]
    return np.float64(acc) - offset


@njit(cache=True)
def _grow(arr, size):
    out = np.empty(size, dtype=arr.dtype)
    out[:arr.shape[0]] = arr
    return out


@njit(cache=True, nogil=True)
def build_tree(X, seed, leaf_size):
    """Build one random-projection tree over the rows of X. O(m d depth) time, O(m) memory.

    The tree grows one level at a time: the hyperplanes of all the level's nodes are drawn
    first, then one pass over the rows in storage order computes every margin (each row
    knows its node through ``node_of``), then each node's range of ``perm`` is partitioned
    (stably). Reading X in order rather than node by node through ``perm`` turns a random
    gather into a stream (bench: nndescent); the nodes, their
    numbering (breadth first) and the splits are the same either way.

    Parameters
    ----------
    X : (m, d) float array
    seed : uint64
        The tree's seed.
    leaf_size : int
        Nodes with at most this many points are leaves.

    Returns
    -------
    perm : (m,) int32
        Point ids, grouped so that every node owns a contiguous range.
    lo, hi : (n_nodes,) int64
        The node's range in ``perm``.
    left, right : (n_nodes,) int64
        Child node ids; -1 for leaves.
    point_a, point_b : (n_nodes,) int64
        The two points defining the split; -1 for leaves and positional splits.
    offset : (n_nodes,) float64
        The hyperplane offset.
    """
    m = X.shape[0]
    perm = np.empty(m, dtype=np.int32)
    for i in range(m):
        perm[i] = i
    scratch = np.empty(m, dtype=np.int32)
    node_of = np.zeros(m, dtype=np.int32)  # every row's node on the level being split
    goes_left = np.empty(m, dtype=np.bool_)  # by row id
    cap = 4 * (m // max(leaf_size, 1)) + 16
    lo = np.empty(cap, dtype=np.int64)
    hi = np.empty(cap, dtype=np.int64)
    left = np.empty(cap, dtype=np.int64)
    right = np.empty(cap, dtype=np.int64)
    point_a = np.empty(cap, dtype=np.int64)
    point_b = np.empty(cap, dtype=np.int64)
    offset = np.empty(cap, dtype=np.float64)
    lo[0] = 0
    hi[0] = m
    n_nodes = 1
    first = 0  # the level's nodes are [first, n_nodes)
    while first < n_nodes:
        last = n_nodes
        normals = np.empty((last - first, X.shape[1]), dtype=X.dtype)
        splits = np.zeros(last - first, dtype=np.bool_)
        for node in range(first, last):
            s = lo[node]
            n = hi[node] - s
            left[node] = -1
            right[node] = -1
            point_a[node] = -1
            point_b[node] = -1
            offset[node] = 0.0
            if n <= leaf_size:
                continue
            ia = s + np.int64(hash3(seed, node, 0) % np.uint64(n))
            ib = s + np.int64(hash3(seed, node, 1) % np.uint64(n - 1))
            if ib >= ia:
                ib += 1
            point_a[node] = perm[ia]
            point_b[node] = perm[ib]
            offset[node] = hyperplane(X[perm[ia]], X[perm[ib]], normals[node - first])
            splits[node - first] = True
        for i in range(m):
            r = node_of[i] - first
            if r >= 0 and splits[r]:
                goes_left[i] = hyperplane_margin(X[i], normals[r], offset[first + r]) > 0.0
        for node in range(first, last):
            if not splits[node - first]:
                continue
            s = lo[node]
            e = hi[node]
            n = e - s
            n_left = 0
            for p in range(s, e):
                n_left += goes_left[perm[p]]
            if n_left == 0 or n_left == n:
                # no hyperplane separates these points (duplicates): cut by position
                n_left = n // 2
                for p in range(s, e):
                    goes_left[perm[p]] = p - s < n_left
                point_a[node] = -1
                point_b[node] = -1
            pl = s
            pr = s + n_left
            for p in range(s, e):
                if goes_left[perm[p]]:
                    scratch[pl] = perm[p]
                    pl += 1
                else:
                    scratch[pr] = perm[p]
                    pr += 1
            for p in range(s, e):
                perm[p] = scratch[p]
                node_of[perm[p]] = n_nodes + (p >= s + n_left)
            if n_nodes + 2 > lo.shape[0]:
                size = 2 * lo.shape[0]
                lo = _grow(lo, size)
                hi = _grow(hi, size)
                left = _grow(left, size)
                right = _grow(right, size)
                point_a = _grow(point_a, size)
                point_b = _grow(point_b, size)
                offset = _grow(offset, size)
            left[node] = n_nodes
            right[node] = n_nodes + 1
            lo[n_nodes] = s
            hi[n_nodes] = s + n_left
            lo[n_nodes + 1] = s + n_left
            hi[n_nodes + 1] = e
            n_nodes += 2
        first = last
    return (perm, lo[:n_nodes].copy(), hi[:n_nodes].copy(), left[:n_nodes].copy(),
            right[:n_nodes].copy(), point_a[:n_nodes].copy(), point_b[:n_nodes].copy(),
            offset[:n_nodes].copy())


@njit(cache=True)
def descend(X, q, root, lo, hi, left, right, point_a, point_b, offset):
    """The leaf (global node id) that query q falls into, from node ``root``. O(d depth).

    Positional splits have no hyperplane; queries go to the larger side there.
    """
    node = root
    normal = np.empty(X.shape[1], dtype=X.dtype)
    while left[node] >= 0:
        a = point_a[node]
        if a < 0:
            l_size = hi[left[node]] - lo[left[node]]
            r_size = hi[right[node]] - lo[right[node]]
            node = left[node] if l_size >= r_size else right[node]
        else:
            hyperplane(X[a], X[point_b[node]], normal)
            node = left[node] if hyperplane_margin(q, normal, offset[node]) > 0.0 else right[node]
    return node
