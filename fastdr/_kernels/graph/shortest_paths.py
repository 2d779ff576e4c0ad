"""Shortest paths on neighbour graphs: Dijkstra (single source, many sources, all pairs) and
blocked Floyd-Warshall.

Graphs are CSR arrays ``(indptr, indices, weights)`` with non-negative weights; a missing
edge is absent, an explicit zero weight is an edge. Unreachable pairs come out as ``inf``.
Everything here relies on IEEE inf semantics: no fastmath in this module.

Tiers: :func:`dijkstra_row` is the serial per-source worker (testable alone); the parallel
kernels run one source per ``prange`` iteration, each writing only its own output row.
"""

import numpy as np
from numba import njit, prange

from ..._config import DIJKSTRA_HEAP_ARITY as _ARITY

_NOT_IN_HEAP = -1


# ---------------------------------------------------------------- indexed 4-ary min-heap


@njit(cache=True, inline="always")
def _sift_up(heap_nodes, heap_keys, heap_pos, slot, node, key):
    """Move ``(key, node)`` up from ``slot`` to its place in the min-heap. O(log m)."""
    while slot > 0:
        parent = (slot - 1) >> 2
        parent_key = heap_keys[parent]
        if parent_key <= key:
            break
        parent_node = heap_nodes[parent]
        heap_keys[slot] = parent_key
        heap_nodes[slot] = parent_node
        heap_pos[parent_node] = slot
        slot = parent
    heap_keys[slot] = key
    heap_nodes[slot] = node
    heap_pos[node] = slot


@njit(cache=True, inline="always")
def _pop_min(heap_nodes, heap_keys, heap_pos, size):
    """Remove the root of a heap holding ``size`` entries and return its node. O(log m)."""
    top = heap_nodes[0]
    heap_pos[top] = _NOT_IN_HEAP
    size -= 1
    if size == 0:
        return top
    node = heap_nodes[size]
    key = heap_keys[size]
    slot = 0
    while True:
        first = _ARITY * slot + 1
        if first >= size:
            break
        best = first
        best_key = heap_keys[first]
        for child in range(first + 1, min(first + _ARITY, size)):
            child_key = heap_keys[child]
            if child_key < best_key:
                best_key = child_key
                best = child
        if best_key >= key:
            break
        best_node = heap_nodes[best]
        heap_keys[slot] = best_key
        heap_nodes[slot] = best_node
        heap_pos[best_node] = slot
        slot = best
    heap_keys[slot] = key
    heap_nodes[slot] = node
    heap_pos[node] = slot
    return top


# ---------------------------------------------------------------- Dijkstra


@njit(cache=True)
def dijkstra_row(indptr, indices, weights, source, dist, heap_nodes, heap_keys, heap_pos,
                 first_target=0):
    """Single-source shortest paths (Dijkstra, indexed 4-ary heap with decrease-key).

    Parameters
    ----------
    indptr, indices, weights : CSR arrays of the graph (m nodes, weights >= 0)
    source : int
    dist : (m,) float64, output
        Geodesic distances from ``source``; ``inf`` where unreachable.
    heap_nodes : (m,) int32, heap_keys : (m,) float64, heap_pos : (m,) int32
        Scratch buffers; their contents on entry do not matter.
    first_target : int, default 0
        Stop as soon as every node ``>= first_target`` is settled. Only those entries of
        ``dist`` are then final; the others may be upper bounds.

    Returns
    -------
    int
        The number of nodes settled.

    Time O((m + nnz) log m); no memory beyond the buffers. Each node is popped once: a
    settled node is never relaxed again because its distance cannot decrease.
    """
    m = dist.shape[0]
    for v in range(m):
        dist[v] = np.inf
        heap_pos[v] = _NOT_IN_HEAP
    remaining = m - first_target
    if source >= first_target:
        remaining -= 1
    dist[source] = 0.0
    heap_nodes[0] = source
    heap_keys[0] = 0.0
    heap_pos[source] = 0
    size = 1
    settled = 1
    if remaining <= 0:
        return settled
    while size > 0:
        u = _pop_min(heap_nodes, heap_keys, heap_pos, size)
        size -= 1
        if u != source:
            settled += 1
            if u >= first_target:
                remaining -= 1
                if remaining == 0:
                    break
        du = dist[u]
        for p in range(indptr[u], indptr[u + 1]):
            v = indices[p]
            candidate = du + weights[p]
            if candidate < dist[v]:
                dist[v] = candidate
                slot = heap_pos[v]
                if slot == _NOT_IN_HEAP:
                    slot = size
                    size += 1
                _sift_up(heap_nodes, heap_keys, heap_pos, slot, v, candidate)
    return settled


@njit(cache=True)
def _heap_buffers(m):
    return (np.empty(m, dtype=np.float64), np.empty(m, dtype=np.int32),
            np.empty(m, dtype=np.float64), np.empty(m, dtype=np.int32))


@njit(cache=True, parallel=True)
def all_pairs_upper(indptr, indices, weights, labels, out, block, first_block, end_block):
    """Half of the all-pairs geodesic matrix, by Dijkstra from every node.

    Source ``s`` (in the graph's numbering) stops once every node ``t > s`` is settled and
    writes ``out[labels[s], labels[t]]`` for ``t >= s``; :func:`mirror_upper` then copies
    each entry to its transpose, so the result is exactly symmetric. ``labels`` maps the
    graph's numbering to the output's (a locality-improving reordering of the graph keeps
    the output in the caller's order).

    Sources are folded (``s``, ``m - 1 - s``, ...) so that contiguous blocks of iterations
    hold equal work. Only blocks ``first_block:end_block`` of ``block`` sources run (all
    ``ceil(m / block)`` of them for the whole matrix; a caller may split them into several
    launches). Time O(m (m + nnz) log m), memory O(threads m) besides ``out``.
    """
    m = indptr.shape[0] - 1
    for step in prange(end_block - first_block):
        b = first_block + step
        dist, heap_nodes, heap_keys, heap_pos = _heap_buffers(m)
        for r in range(b * block, min(m, (b + 1) * block)):
            source = r // 2 if r % 2 == 0 else m - 1 - r // 2
            dijkstra_row(indptr, indices, weights, source, dist, heap_nodes, heap_keys,
                         heap_pos, source + 1)
            row = out[labels[source]]
            row[labels[source]] = 0.0
            for t in range(source + 1, m):
                row[labels[t]] = dist[t]


@njit(cache=True, parallel=True)
def mirror_upper(out, rank, tile):
    """Complete a matrix filled by :func:`all_pairs_upper`: entry (i, j) was computed when
    ``rank[i] < rank[j]``; copy it to (j, i). Tiled so that both reads and writes stay in
    cache. Each tile pair (I <= J) belongs to one iteration. O(m^2), no extra memory.
    """
    m = out.shape[0]
    n_tiles = (m + tile - 1) // tile
    for ti in prange(n_tiles):
        i0 = ti * tile
        i1 = min(m, i0 + tile)
        for tj in range(ti, n_tiles):
            j0 = tj * tile
            j1 = min(m, j0 + tile)
            for i in range(i0, i1):
                ri = rank[i]
                start = i + 1 if ti == tj else j0
                for j in range(start, j1):
                    if ri < rank[j]:
                        out[j, i] = out[i, j]
                    else:
                        out[i, j] = out[j, i]


@njit(cache=True)
def _write_panel(dists, n_rows, out, col0):
    """``out[v, col0 + g] = dists[g, v]`` for g < n_rows: a cache-friendly column panel."""
    m = out.shape[0]
    for v in range(m):
        for g in range(n_rows):
            out[v, col0 + g] = dists[g, v]


@njit(cache=True, parallel=True)
def dijkstra_columns(indptr, indices, weights, sources, out, group, first_group, end_group):
    """Landmark geodesics, one column per source: ``out[:, r]`` = distances from
    ``sources[r]``.

    Parameters
    ----------
    indptr, indices, weights : CSR graph with m nodes
    sources : (L,) int
    out : (m, L) float32 or float64, output (``inf`` where unreachable)
    group : int
        Sources per ``prange`` iteration; their rows are written to ``out`` as one panel of
        ``group`` adjacent columns, so each node's row is touched once per group.
    first_group, end_group : int
        Only groups ``first_group:end_group`` run (``0, ceil(L / group)`` for all columns; a
        caller may split them into several launches).

    Time O(L (m + nnz) log m); memory O(threads group m) besides ``out``.
    """
    m = indptr.shape[0] - 1
    n_sources = sources.shape[0]
    for step in prange(end_group - first_group):
        b = first_group + step
        c0 = b * group
        n_rows = min(n_sources, c0 + group) - c0
        dists = np.empty((n_rows, m), dtype=np.float64)
        _, heap_nodes, heap_keys, heap_pos = _heap_buffers(m)
        for g in range(n_rows):
            dijkstra_row(indptr, indices, weights, sources[c0 + g], dists[g], heap_nodes,
                         heap_keys, heap_pos, 0)
        _write_panel(dists, n_rows, out, c0)


@njit(cache=True)
def maxmin_landmarks(indptr, indices, weights, first, out, group):
    """Greedy max-min landmarks (de Silva and Tenenbaum): start at ``first``, then repeatedly
    take the node farthest (in geodesic distance) from all landmarks chosen so far; ties go
    to the smaller node number and no node is chosen twice.

    ``out`` (m, L) receives the landmarks' geodesic columns in the order chosen, written in
    panels of ``group`` columns. Returns the (L,) landmark nodes. Serial: each choice needs
    the previous Dijkstra. Time O(L (m + nnz) log m), memory O(group m).
    """
    m = indptr.shape[0] - 1
    n_landmarks = out.shape[1]
    chosen = np.empty(n_landmarks, dtype=np.int64)
    nearest = np.full(m, np.inf)
    dists = np.empty((group, m), dtype=np.float64)
    _, heap_nodes, heap_keys, heap_pos = _heap_buffers(m)
    source = first
    for r in range(n_landmarks):
        chosen[r] = source
        nearest[source] = -1.0  # never chosen twice, even among duplicate points
        g = r % group
        row = dists[g]
        dijkstra_row(indptr, indices, weights, source, row, heap_nodes, heap_keys, heap_pos, 0)
        best = -1.0
        for v in range(m):
            if row[v] < nearest[v]:
                nearest[v] = row[v]
            if nearest[v] > best:
                best = nearest[v]
                source = v
        if g == group - 1 or r == n_landmarks - 1:
            _write_panel(dists, g + 1, out, r - g)
    return chosen


# ---------------------------------------------------------------- Floyd-Warshall


@njit(cache=True, parallel=True)
def dense_from_csr(indptr, indices, weights, out):
    """Fill ``out`` (m x m) with the graph's edge weights, ``inf`` off-graph, 0 on the
    diagonal; parallel edges keep the smaller weight. O(m^2 + nnz)."""
    m = out.shape[0]
    for i in prange(m):
        row = out[i]
        for j in range(m):
            row[j] = np.inf
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if weights[p] < row[j]:
                row[j] = weights[p]
        row[i] = 0.0


@njit(cache=True)
def _fw_block(D, i0, i1, j0, j1, k0, k1):
    """Relax block (rows i0:i1, cols j0:j1) through pivots k0:k1, pivots in order. O(b^3)."""
    for k in range(k0, k1):
        row_k = D[k]
        for i in range(i0, i1):
            dik = D[i, k]
            if dik == np.inf:
                continue
            row_i = D[i]
            for j in range(j0, j1):
                row_i[j] = min(row_i[j], dik + row_k[j])


@njit(cache=True, parallel=True)
def floyd_warshall_inplace(D, tile):
    """All-pairs shortest paths on a dense weight matrix, in place (blocked Floyd-Warshall).

    ``D`` holds edge weights, ``inf`` for missing edges and 0 on the diagonal. For each pivot
    tile: (1) the diagonal tile, (2) its tile row and tile column (one iteration owns tile
    ``t`` of both), (3) every other tile (one iteration owns a tile row). Time O(m^3),
    no extra memory.
    """
    m = D.shape[0]
    n_tiles = (m + tile - 1) // tile
    for tk in range(n_tiles):
        k0 = tk * tile
        k1 = min(m, k0 + tile)
        _fw_block(D, k0, k1, k0, k1, k0, k1)
        for t in prange(n_tiles):
            if t == tk:
                continue
            t0 = t * tile
            t1 = min(m, t0 + tile)
            _fw_block(D, k0, k1, t0, t1, k0, k1)
            _fw_block(D, t0, t1, k0, k1, k0, k1)
        for ti in prange(n_tiles):
            if ti == tk:
                continue
            i0 = ti * tile
            i1 = min(m, i0 + tile)
            for tj in range(n_tiles):
                if tj == tk:
                    continue
                j0 = tj * tile
                j1 = min(m, j0 + tile)
                for i in range(i0, i1):
                    row_i = D[i]
                    for k in range(k0, k1):
                        dik = row_i[k]
                        if dik == np.inf:
                            continue
                        row_k = D[k]
                        for j in range(j0, j1):
                            row_i[j] = min(row_i[j], dik + row_k[j])
