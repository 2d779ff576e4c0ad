"""Neighbour voting and averaging for k-NN prediction."""

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def class_votes(neighbor_idx, weights, y_codes, n_classes):
    """Per-query class weights: out[i, c] = sum of weights of neighbours with class c.

    ``weights`` has the shape of ``neighbor_idx``. Rows are normalised to sum to 1.
    O(m k) time, O(m C) memory.
    """
    m, k = neighbor_idx.shape
    out = np.zeros((m, n_classes), dtype=np.float64)
    for i in prange(m):
        total = 0.0
        for c in range(k):
            w = weights[i, c]
            out[i, y_codes[neighbor_idx[i, c]]] += w
            total += w
        if total > 0:
            for c in range(n_classes):
                out[i, c] /= total
    return out


@njit(cache=True)
def add_weighted_rows(out, i, neighbor_idx, weights, y):
    """``out[i] += sum_c weights[i, c] * y[neighbor_idx[i, c]]``, neighbours in order. O(k q).

    The serial worker of :func:`weighted_means` and of LLE's new-sample embedding
    (:func:`fastdr._kernels.lle.weights.weighted_rows`).
    """
    q = y.shape[1]
    for c in range(neighbor_idx.shape[1]):
        w = weights[i, c]
        row = y[neighbor_idx[i, c]]
        for t in range(q):
            out[i, t] += w * row[t]


@njit(cache=True, parallel=True)
def weighted_means(neighbor_idx, weights, y):
    """Per-query weighted mean of the neighbours' targets; y is (n, n_outputs). O(m k q)."""
    m, k = neighbor_idx.shape
    q = y.shape[1]
    out = np.zeros((m, q), dtype=np.float64)
    for i in prange(m):
        add_weighted_rows(out, i, neighbor_idx, weights, y)
        total = 0.0
        for c in range(k):
            total += weights[i, c]
        for t in range(q):
            out[i, t] /= total
    return out


@njit(cache=True, parallel=True)
def inverse_distance_weights(dist):
    """Weights 1/d; a row holding zeros weights its zero-distance neighbours 1, others 0."""
    m, k = dist.shape
    out = np.empty((m, k), dtype=np.float64)
    for i in prange(m):
        has_zero = False
        for c in range(k):
            if dist[i, c] == 0.0:
                has_zero = True
        for c in range(k):
            if has_zero:
                out[i, c] = 1.0 if dist[i, c] == 0.0 else 0.0
            else:
                out[i, c] = 1.0 / dist[i, c]
    return out
