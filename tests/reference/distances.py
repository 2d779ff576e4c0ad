"""Naive references: distances between rows."""

import numpy as np


def sq_euclidean(X, Y):
    """Exact squared distances by broadcasting, in float64."""
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    return ((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1)



def nan_euclidean(X, Y):
    """scikit-learn's NaN-aware Euclidean distances by plain loops, in float64: for each
    pair, ``sqrt(d / n_both * sum (x_c - y_c)^2)`` over the ``n_both`` features present
    (not NaN) in both rows; NaN when no feature is present in both."""
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    d = X.shape[1]
    out = np.empty((X.shape[0], Y.shape[0]))
    for i, x in enumerate(X):
        for j, y in enumerate(Y):
            both = ~np.isnan(x) & ~np.isnan(y)
            n_both = int(both.sum())
            total = float(((x[both] - y[both]) ** 2).sum())
            out[i, j] = np.sqrt(d / n_both * total) if n_both else np.nan
    return out



def symmetry_stats(A):
    """(largest |A_ij - A_ji|, largest |A_ij|, smallest A_ij) of a square matrix, in float64."""
    A = np.asarray(A, dtype=np.float64)
    return np.abs(A - A.T).max(), np.abs(A).max(), A.min()



def reduced_distances(X, Y, kind, p=1.0):
    """Reduced Minkowski-family or cosine distances by broadcasting, in float64.

    kind "manhattan": sum |x - y|; "chebyshev": max |x - y|; "power": sum |x - y|^p;
    "cosine": 1 - x.y clipped to [0, 2] (on rows normalised by the caller); "braycurtis":
    sum |x - y| / sum (|x| + |y|) (scikit-learn's neighbours; 0 for 0/0);
    "scipy_braycurtis": sum |x - y| / sum |x + y| (scipy's and scikit-learn's
    pairwise_distances; 0 for 0/0); "canberra": sum |x - y| / (|x| + |y|) over the
    features where the denominator is not 0.
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    if kind == "cosine":
        return np.clip(1.0 - X @ Y.T, 0.0, 2.0)
    diff = np.abs(X[:, None, :] - Y[None, :, :])
    if kind in _BOOLEAN or kind == "hamming":
        return _counting(X, Y, kind)
    if kind == "haversine":
        lat_x, lat_y = X[:, None, 0], Y[None, :, 0]
        inner = (np.sin((lat_x - lat_y) / 2) ** 2
                 + np.cos(lat_x) * np.cos(lat_y) * np.sin((X[:, None, 1] - Y[None, :, 1]) / 2) ** 2)
        return 2 * np.arcsin(np.sqrt(inner))
    if kind in ("braycurtis", "scipy_braycurtis"):
        if kind == "braycurtis":
            den = (np.abs(X)[:, None, :] + np.abs(Y)[None, :, :]).sum(-1)
        else:
            den = np.abs(X[:, None, :] + Y[None, :, :]).sum(-1)
        num = diff.sum(-1)
        return np.divide(num, den, out=np.zeros_like(num), where=den > 0)
    if kind == "canberra":
        den = np.abs(X)[:, None, :] + np.abs(Y)[None, :, :]
        return np.divide(diff, den, out=np.zeros_like(diff), where=den > 0).sum(-1)
    if kind == "manhattan":
        return diff.sum(-1)
    if kind == "chebyshev":
        return diff.max(-1, initial=0.0)
    return (diff ** p).sum(-1)



def metric_keys(X, Y, metric, p=2.0):
    """Selection keys of every pair of rows by broadcasting, in float64 (dense or sparse in).

    "sqeuclidean": sum (x - y)^2; "manhattan": sum |x - y|; "chebyshev": max |x - y|;
    "minkowski": sum |x - y|^p; "cosine": 1 - cos clipped to [0, 2], and 1 where either row
    is all zero.
    """
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.float64)
    if metric == "cosine":
        nx = np.sqrt((X * X).sum(axis=1))
        ny = np.sqrt((Y * Y).sum(axis=1))
        keys = np.ones((X.shape[0], Y.shape[0]))
        for i in range(X.shape[0]):
            for j in range(Y.shape[0]):
                if nx[i] > 0 and ny[j] > 0:
                    keys[i, j] = min(max(1.0 - X[i] @ Y[j] / (nx[i] * ny[j]), 0.0), 2.0)
        return keys
    diff = np.abs(X[:, None, :] - Y[None, :, :])
    if metric == "sqeuclidean":
        return (diff ** 2).sum(-1)
    if metric == "manhattan":
        return diff.sum(-1)
    if metric == "chebyshev":
        return diff.max(-1, initial=0.0)
    if metric == "minkowski":
        return (diff ** p).sum(-1)
    raise ValueError(metric)



def keys_to_distances(keys, metric, p=2.0):
    """The distance of a key: the square root of a Euclidean key, the p-th root of a
    Minkowski key, the key itself otherwise."""
    keys = np.asarray(keys, dtype=np.float64)
    if metric == "euclidean":
        return np.sqrt(keys)
    if metric == "minkowski":
        return keys ** (1.0 / p)
    return keys



def exact_pair_distance(x, y, metric):
    """Exact distance of two rows in float64: "sqeuclidean", "manhattan" or "cosine"
    (1 - cos, not below 0; 1 where either row is all zero)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if metric == "manhattan":
        return float(np.abs(x - y).sum())
    if metric == "cosine":
        nx, ny = np.sqrt(x @ x), np.sqrt(y @ y)
        return 1.0 if nx == 0 or ny == 0 else max(0.0, 1.0 - (x @ y) / (nx * ny))
    return float(((x - y) ** 2).sum())


_BOOLEAN = ("dice", "jaccard", "rogerstanimoto", "russellrao", "sokalsneath", "yule")


def _counting(X, Y, kind):
    """hamming (on values) and scipy's boolean dissimilarities (of x != 0), 0/0 as 0."""
    d = X.shape[1]
    if kind == "hamming":
        return (X[:, None, :] != Y[None, :, :]).sum(-1) / d
    x, y = X[:, None, :] != 0, Y[None, :, :] != 0
    tt, tf, ft = (x & y).sum(-1), (x & ~y).sum(-1), (~x & y).sum(-1)
    ff = d - tt - tf - ft
    num, den = {"dice": (tf + ft, 2 * tt + tf + ft), "jaccard": (tf + ft, tt + tf + ft),
                "rogerstanimoto": (2 * (tf + ft), tt + ff + 2 * (tf + ft)),
                "russellrao": (d - tt, np.full_like(tt, d)),
                "sokalsneath": (2 * (tf + ft), tt + 2 * (tf + ft)),
                "yule": (2 * tf * ft, tt * ff + tf * ft)}[kind]
    num, den = num.astype(np.float64), den.astype(np.float64)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)
