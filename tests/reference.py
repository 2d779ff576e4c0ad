"""Naive NumPy/SciPy references that every kernel is checked against.

Slow on purpose: plain loops and full sorts, written to be obviously right.
"""

import numpy as np

from fastdr._kernels import codes


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


# ---- graphs and Isomap (appended by the Isomap work) ----


def dijkstra_dense(W, source):
    """Plain Dijkstra with heapq on a dense weight matrix (``inf`` = no edge), undirected."""
    import heapq

    W = np.asarray(W, dtype=np.float64)
    m = W.shape[0]
    dist = np.full(m, np.inf)
    dist[source] = 0.0
    done = np.zeros(m, dtype=bool)
    queue = [(0.0, source)]
    while queue:
        d, u = heapq.heappop(queue)
        if done[u]:
            continue
        done[u] = True
        for v in range(m):
            w = min(W[u, v], W[v, u])
            if v != u and np.isfinite(w) and d + w < dist[v]:
                dist[v] = d + w
                heapq.heappush(queue, (dist[v], v))
    return dist


def floyd_dense(W):
    """Textbook Floyd-Warshall on a dense weight matrix (``inf`` = no edge), undirected."""
    D = np.minimum(np.asarray(W, dtype=np.float64), np.asarray(W, dtype=np.float64).T)
    np.fill_diagonal(D, 0.0)
    for k in range(D.shape[0]):
        D = np.minimum(D, D[:, k:k + 1] + D[k:k + 1, :])
    return D


def sparse_to_dense_weights(G):
    """Dense weights of a sparse graph: stored entries (explicit zeros included), else inf."""
    G = G.tocoo()
    W = np.full(G.shape, np.inf)
    for i, j, w in zip(G.row, G.col, G.data, strict=True):
        W[i, j] = min(W[i, j], w)
    return W


def classical_mds_triangulate(D_train, D_new, n_components):
    """Classical MDS of D_train by a full eigh, and the landmark-MDS placement of new points
    from their distances D_new (n_new, m) to the training points."""
    D2 = np.asarray(D_train, dtype=np.float64) ** 2
    m = D2.shape[0]
    J = np.eye(m) - 1.0 / m
    B = -0.5 * J @ D2 @ J
    values, vectors = np.linalg.eigh(B)
    order = np.argsort(values)[::-1][:n_components]
    values, vectors = values[order], vectors[:, order]
    embedding = vectors * np.sqrt(values)
    new = 0.5 * ((D2.mean(axis=0)[None, :] - np.asarray(D_new, float) ** 2) @ vectors
                 / np.sqrt(values))
    return embedding, new


def lle_weights(X_query, X_train, indices, reg):
    """Barycentric LLE weights by the closed form w = C^-1 1 / (1^T C^-1 1), in float64.

    C_jl = (x - t_j).(x - t_l) + R delta_jl with R = reg * trace(C), or reg when the trace is 0.
    """
    X_query = np.asarray(X_query, dtype=np.float64)
    X_train = np.asarray(X_train, dtype=np.float64)
    out = np.empty(indices.shape)
    for i, ind in enumerate(indices):
        D = X_query[i] - X_train[ind]
        C = D @ D.T
        trace = np.trace(C)
        C = C + (reg * trace if trace > 0 else reg) * np.eye(len(ind))
        w = np.linalg.solve(C, np.ones(len(ind)))
        out[i] = w / w.sum()
    return out


def lle_matrix(weights, indices, m):
    """Dense M = (I - W)^T (I - W), where row i of W reconstructs point i."""
    W = np.zeros((m, m))
    for i in range(indices.shape[0]):
        W[i, indices[i]] = weights[i]
    A = np.eye(m) - W
    return A.T @ A


def lle_transform(X_new, X_train, embedding, n_neighbors, reg):
    """Out-of-sample LLE: weights on the nearest training points, then their embedding rows."""
    _, ind = knn(X_train, X_new, n_neighbors)
    w = lle_weights(X_new, X_train, ind, reg)
    return np.einsum("ik,ikp->ip", w, np.asarray(embedding, dtype=np.float64)[ind])


def pca_svd(X, n_components):
    """PCA by the SVD of the centred data: (components, explained_variance, scores)."""
    X = np.asarray(X, dtype=np.float64)
    Xc = X - X.mean(axis=0)
    U, s, Vt = np.linalg.svd(Xc, full_matrices=False)
    k = n_components
    return Vt[:k], s[:k] ** 2 / (X.shape[0] - 1), Xc @ Vt[:k].T


def kernel_matrix(X, Y, kernel, gamma, degree=3, coef0=1):
    """Kernel values by broadcasting, in float64, one formula per kernel."""
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    if kernel == "rbf":
        return np.exp(-gamma * sq_euclidean(X, Y))
    G = X @ Y.T
    if kernel == "linear":
        return G
    if kernel == "poly":
        return (gamma * G + coef0) ** degree
    if kernel == "sigmoid":
        return np.tanh(gamma * G + coef0)
    if kernel == "cosine":
        nx = np.linalg.norm(X, axis=1)
        ny = np.linalg.norm(Y, axis=1)
        nx[nx == 0] = 1.0
        ny[ny == 0] = 1.0
        return G / np.outer(nx, ny)
    raise ValueError(kernel)


def centred_kernel(K_train, K_new=None):
    """J K J for the training kernel, or the new rows centred against the training kernel."""
    K_train = np.asarray(K_train, dtype=np.float64)
    m = K_train.shape[0]
    ones = np.full((m, m), 1.0 / m)
    if K_new is None:
        return K_train - ones @ K_train - K_train @ ones + ones @ K_train @ ones
    K_new = np.asarray(K_new, dtype=np.float64)
    ones_new = np.full((K_new.shape[0], m), 1.0 / m)
    return K_new - ones_new @ K_train - K_new @ ones + ones_new @ K_train @ ones


def lda_scatter(X, y, priors=None):
    """Textbook within- and between-class scatter with prior weights, by loops over classes.

    S_w = sum_k p_k / n_k sum_{i in k} (x_i - mu_k)(x_i - mu_k)^T,
    S_b = sum_k p_k (mu_k - mu)(mu_k - mu)^T with mu = sum_k p_k mu_k.
    """
    X = np.asarray(X, dtype=np.float64)
    classes = np.unique(y)
    counts = np.array([np.sum(y == c) for c in classes])
    priors = counts / len(y) if priors is None else np.asarray(priors, dtype=np.float64)
    means = np.array([X[y == c].mean(axis=0) for c in classes])
    d = X.shape[1]
    Sw = np.zeros((d, d))
    for k, c in enumerate(classes):
        for x in X[y == c]:
            diff = x - means[k]
            Sw += priors[k] / counts[k] * np.outer(diff, diff)
    mu = priors @ means
    Sb = sum(priors[k] * np.outer(means[k] - mu, means[k] - mu) for k in range(len(classes)))
    return means, Sw, Sb


def ledoit_wolf(X):
    """Ledoit-Wolf shrunk covariance of X from the paper's formulas, by plain loops."""
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    Z = X - X.mean(axis=0)
    S = Z.T @ Z / n
    mu = np.trace(S) / d
    delta = np.sum((S - mu * np.eye(d)) ** 2) / d
    beta = sum(np.sum((np.outer(z, z) - S) ** 2) for z in Z) / (n * n * d)
    shrinkage = 0.0 if delta == 0 else min(beta, delta) / delta
    return (1 - shrinkage) * S + shrinkage * mu * np.eye(d), shrinkage


def nca_objective_gradient(X, A, y):
    """NCA objective sum_i sum_{j in C_i} p_ij and its gradient, by explicit loops over pairs.

    The gradient is the textbook ``2 A sum_i (p_i sum_k p_ik x_ik x_ik^T
    - sum_{j in C_i} p_ij x_ij x_ij^T)`` with ``x_ij = x_i - x_j``.
    """
    X = np.asarray(X, dtype=np.float64)
    A = np.asarray(A, dtype=np.float64)
    m, d = X.shape
    Z = X @ A.T
    objective = 0.0
    inner = np.zeros((d, d))
    for i in range(m):
        dist = ((Z[i] - Z) ** 2).sum(axis=1)
        dist[i] = np.inf
        logits = -dist
        p = np.exp(logits - logits.max())
        p /= p.sum()
        same = y == y[i]
        p_i = p[same].sum()
        objective += p_i
        for k in range(m):
            if k == i:
                continue
            diff = X[i] - X[k]
            outer = np.outer(diff, diff)
            inner += p_i * p[k] * outer
            if same[k]:
                inner -= p[k] * outer
    return objective, 2.0 * A @ inner


def mmc_pair_sums(X, pairs, weights, M):
    """Naive sums over index pairs: (sum_k w_k v_k v_k^T, sum_k w_k v_k^2, [v_k^T M v_k])."""
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]
    outer = np.zeros((d, d))
    squares = np.zeros(d)
    forms = []
    for (a, b), w in zip(pairs, weights, strict=True):
        v = X[a] - X[b]
        outer += w * np.outer(v, v)
        squares += w * v * v
        forms.append(v @ M @ v)
    return outer, squares, np.array(forms)


def dykstra_psd_halfspace(B, S, level, n_iter=20000):
    """Projection of B onto {A PSD, <S, A> <= level} by Dykstra's alternating projections."""
    A = np.array(B, dtype=np.float64)
    P = np.zeros_like(A)
    Q = np.zeros_like(A)
    norm2 = np.sum(S * S)
    for _ in range(n_iter):
        Y = A + P
        excess = np.sum(S * Y) - level
        H = Y - (excess / norm2) * S if excess > 0 else Y
        P = Y - H
        Y = H + Q
        values, vectors = np.linalg.eigh(0.5 * (Y + Y.T))
        A_new = (vectors * np.maximum(values, 0)) @ vectors.T
        Q = Y - A_new
        if np.abs(A_new - A).max() < 1e-13 * max(1.0, np.abs(A).max()):
            A = A_new
            break
        A = A_new
    return A


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


# ---- kernels without an estimator-level reference (appended by the house refactor) ----


def double_centre(A, square, scale):
    """``scale * J f(A) J`` with ``J = I - 11^T / m`` as a matrix product, and the row means
    of ``f(A)``; ``f`` squares the entries (rounded to A's dtype, as stored) or is the
    identity."""
    A = np.asarray(A)
    F = (A.astype(np.float64) ** 2).astype(A.dtype) if square else A
    F = F.astype(np.float64)
    m = F.shape[0]
    J = np.eye(m) - 1.0 / m
    return scale * (J @ F @ J), F.mean(axis=1)


def symmetry_stats(A):
    """(largest |A_ij - A_ji|, largest |A_ij|, smallest A_ij) of a square matrix, in float64."""
    A = np.asarray(A, dtype=np.float64)
    return np.abs(A - A.T).max(), np.abs(A).max(), A.min()


def reduced_distances(X, Y, kind, p=1.0):
    """Reduced Minkowski-family or cosine distances by broadcasting, in float64.

    kind, a code of fastdr/_kernels/codes.py: MANHATTAN, sum |x - y|; CHEBYSHEV, max |x - y|;
    MINKOWSKI, sum |x - y|^p; COSINE, 1 - x.y clipped to [0, 2] (on rows normalised by the
    caller).
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    if kind == codes.COSINE:
        return np.clip(1.0 - X @ Y.T, 0.0, 2.0)
    diff = np.abs(X[:, None, :] - Y[None, :, :])
    if kind == codes.MANHATTAN:
        return diff.sum(-1)
    if kind == codes.CHEBYSHEV:
        return diff.max(-1, initial=0.0)
    return (diff ** p).sum(-1)


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
