"""Naive NumPy/SciPy references that every kernel is checked against.

Slow on purpose: plain loops and full sorts, written to be obviously right.
"""

import numpy as np


def sq_euclidean(X, Y):
    """Exact squared distances by broadcasting, in float64."""
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    return ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)


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


def procrustes_disparity(A, B):
    """Procrustes disparity between two embeddings (scipy's definition)."""
    from scipy.spatial import procrustes

    return procrustes(np.asarray(A, float), np.asarray(B, float))[2]
