"""Naive references: NN-descent's trees, rounds and search."""

import numpy as np

from .distances import exact_pair_distance
from .neighbors import sort_pairs


def rp_tree(X, seed, leaf_size, pick):
    """Random-projection tree, node by node (breadth first), splits in float64.

    ``pick(seed, node, j)`` is the tree's hash (j = 0, 1 draws the two split points). Returns
    the node list as (lo, hi, left, right, a, b) tuples and the point order.
    """
    perm = list(range(X.shape[0]))
    nodes = [[0, X.shape[0], -1, -1, -1, -1]]
    node = 0
    while node < len(nodes):
        lo, hi = nodes[node][:2]
        n = hi - lo
        if n > leaf_size:
            ia = pick(seed, node, 0) % n
            ib = pick(seed, node, 1) % (n - 1)
            ib += ib >= ia
            a, b = perm[lo + ia], perm[lo + ib]
            normal = X[a].astype(np.float64) - X[b]
            offset = 0.5 * (X[a].astype(np.float64) @ X[a] - X[b].astype(np.float64) @ X[b])
            members = perm[lo:hi]
            side = [X[p].astype(np.float64) @ normal - offset > 0 for p in members]
            if not any(side) or all(side):  # inseparable: cut by position
                side = [t < n // 2 for t in range(n)]
                a = b = -1
            perm[lo:hi] = ([p for p, s in zip(members, side, strict=True) if s]
                           + [p for p, s in zip(members, side, strict=True) if not s])
            cut = lo + int(sum(side))
            nodes[node][2:] = [len(nodes), len(nodes) + 1, a, b]
            nodes += [[lo, cut, -1, -1, -1, -1], [cut, hi, -1, -1, -1, -1]]
        node += 1
    return [tuple(t) for t in nodes], perm



def reverse_graph(heap_i, heap_f, sentinel):
    """Row j of the reversed graph: every (i, flag) with j in row i, by ascending i then
    slot; sentinel entries skipped."""
    out = [[] for _ in range(heap_i.shape[0])]
    for i in range(heap_i.shape[0]):
        for t in range(heap_i.shape[1]):
            if heap_i[i, t] != sentinel:
                out[heap_i[i, t]].append((i, heap_f[i, t]))
    return out



def sampled_candidates(heap_i, heap_f, c, priority, sentinel):
    """NN-descent's candidate sets per point, from its forward and reverse edges.

    For point i the new (flag 1) and old (flag 0) neighbours j, each taken once; a set of
    more than c keeps the c with the smallest ``(priority(min(i, j), max(i, j)), j)``. A
    point without a new neighbour has both sets empty. Returns two lists of sorted lists.
    """
    reverse = reverse_graph(heap_i, heap_f, sentinel)
    new, old = [], []
    for i in range(heap_i.shape[0]):
        edges = [(j, f) for j, f in zip(heap_i[i], heap_f[i], strict=True) if j != sentinel]
        edges += reverse[i]
        sets = []
        for flag in (1, 0):
            js = sorted({int(j) for j, f in edges if bool(f) == bool(flag)})
            if len(js) > c:
                js = sorted(sorted(js, key=lambda j: (priority(min(i, j), max(i, j)), j))[:c])
            sets.append(js)
        if not sets[0]:
            sets = [[], []]
        new.append(sets[0])
        old.append(sets[1])
    return new, old



def join_proposals(X, metric, bounds, new, old):
    """The local join of one point's candidates: for each new p (in order) and each later
    candidate q (new after p, then old) other than p, at key d, the proposal (p, q, d) when
    d <= bounds[p] and (q, p, d) when d <= bounds[q]."""
    out = []
    cands = list(new) + list(old)
    for a, p in enumerate(new):
        for q in cands[a + 1:]:
            if q == p:
                continue
            d = exact_pair_distance(X[p], X[q], metric)
            if d <= bounds[p]:
                out.append((p, q, d))
            if d <= bounds[q]:
                out.append((q, p, d))
    return out



def push_proposals(dist, idx, flag, proposals):
    """Offer (target, source, d) proposals in order to bounded k-NN rows that hold each
    index once: a proposal enters, flagged 1, when it ranks before the row's worst entry by
    (d, index) and its source is not in the row yet. Returns the rows sorted by (d, index)
    and the number of entries that entered."""
    rows = [sorted(zip(dist[r].tolist(), idx[r].tolist(), flag[r].tolist(), strict=True))
            for r in range(dist.shape[0])]
    entered = 0
    for t, s, d in proposals:
        row = rows[t]
        if (d, s) < row[-1][:2] and s not in [j for _, j, _ in row]:
            row[-1] = (d, s, 1)
            row.sort()
            entered += 1
    return rows, entered



def renumbered_rows(order, dist, idx):
    """Row r moved to row ``order[r]``, its ids mapped through ``order``, sorted by
    (distance, id)."""
    out_d = np.empty_like(np.asarray(dist, dtype=np.float64))
    out_i = np.empty_like(np.asarray(idx))
    for r in range(idx.shape[0]):
        out_d[order[r]], out_i[order[r]] = sort_pairs(dist[r], np.asarray(order)[idx[r]])
    return out_d, out_i

