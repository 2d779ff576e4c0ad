"""Naive references: k-NN selection, radius search and votes."""

import numpy as np

from .distances import sq_euclidean


def knn(X_train, X_query, k, exclude_self=False):
    """k nearest neighbours by a full stable sort on (distance, index).

    Returns (distances, indices) with Euclidean distances.
    """
    D = sq_euclidean(X_query, X_train)
    if exclude_self:
        np.fill_diagonal(D, np.inf)
    order = np.lexsort((np.broadcast_to(np.arange(D.shape[1]), D.shape), D), axis=-1)[:, :k]
    return np.sqrt(np.take_along_axis(D, order, 1)), order



def radius(X_train, X_query, r, exclude_self=False):
    """Indices within r (inclusive), ascending, per query."""
    D = np.sqrt(sq_euclidean(X_query, X_train))
    if exclude_self:
        np.fill_diagonal(D, np.inf)
    return [np.flatnonzero(row <= r) for row in D]



def knn_vote(neigh_idx, neigh_dist, y, classes, weights):
    """Majority / 1/d-weighted vote, ties to the first class in ``classes``."""
    out = []
    for idx, dist in zip(neigh_idx, neigh_dist, strict=True):
        if weights == "uniform":
            w = np.ones(len(idx))
        elif (dist == 0).any():
            w = (dist == 0).astype(float)
        else:
            w = 1.0 / dist
        scores = [w[y[idx] == c].sum() for c in classes]
        out.append(classes[int(np.argmax(scores))])
    return np.array(out)



def knn_mean(neigh_idx, neigh_dist, y, weights):
    """Mean / 1/d-weighted mean of the neighbours' targets."""
    out = []
    for idx, dist in zip(neigh_idx, neigh_dist, strict=True):
        if weights == "uniform":
            w = np.ones(len(idx))
        elif (dist == 0).any():
            w = (dist == 0).astype(float)
        else:
            w = 1.0 / dist
        out.append((w[:, None] * y[idx].reshape(len(idx), -1)).sum(0) / w.sum())
    return np.array(out)



def smallest_per_row(D, k, skip_offset=-1):
    """The k smallest entries of each row by (value, column), row i skipping column
    i + skip_offset unless it is negative: (values, columns) by a full stable sort."""
    D = np.array(D, dtype=np.float64)
    if skip_offset >= 0:
        rows = np.arange(D.shape[0])
        D[rows, rows + skip_offset] = np.inf
    order = np.lexsort((np.broadcast_to(np.arange(D.shape[1]), D.shape), D), axis=-1)[:, :k]
    return np.take_along_axis(D, order, 1), order



def within_per_row(D, r, skip_offset=-1):
    """Columns (ascending) and values of the entries <= r of each row, skipping as in
    :func:`smallest_per_row`."""
    out = []
    for i, row in enumerate(np.asarray(D, dtype=np.float64)):
        cols = [j for j in np.flatnonzero(row <= r) if skip_offset < 0 or j != i + skip_offset]
        out.append((np.array(cols, dtype=np.int64), row[cols]))
    return out



def inverse_distance_weights(dist):
    """1/d per neighbour; a row with a zero distance weights its zero-distance neighbours 1
    and the others 0."""
    out = []
    for row in np.asarray(dist, dtype=np.float64):
        out.append((row == 0).astype(float) if (row == 0).any() else 1.0 / row)
    return np.array(out).reshape(np.shape(dist))



def class_fractions(neigh_idx, weights, y_codes, n_classes):
    """Share of each class in the neighbours' weights, per query (a zero row when the
    weights sum to 0), by a loop over the classes."""
    out = np.zeros((len(neigh_idx), n_classes))
    for i, (idx, w) in enumerate(zip(neigh_idx, weights, strict=True)):
        for c in range(n_classes):
            out[i, c] = np.sum(np.asarray(w, dtype=np.float64)[y_codes[idx] == c])
        total = np.sum(w)
        if total > 0:
            out[i] /= total
    return out



def smallest_pairs(keys, n):
    """The n smallest (key, index) pairs of a stream, ties by the smaller index."""
    keys = np.asarray(keys)
    order = np.lexsort((np.arange(keys.size), keys))[:n]
    return sorted(zip(keys[order].tolist(), order.tolist(), strict=True))



def heap_select(stream, k):
    """The k smallest of a stream of (index, key) pairs by (key, index), ascending, padded
    with (inf, sentinel) as a k-NN heap is. Returns (keys, indices) as two lists."""
    pairs = sorted((float(v), int(j)) for j, v in stream)[:k]
    pairs += [(np.inf, np.iinfo(np.int64).max)] * (k - len(pairs))
    return [d for d, _ in pairs], [j for _, j in pairs]



def sort_pairs(dist, idx):
    """One row sorted by (distance, index)."""
    order = np.lexsort((idx, dist))
    return np.asarray(dist)[order], np.asarray(idx)[order]

