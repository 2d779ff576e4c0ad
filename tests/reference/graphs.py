"""Naive references: shortest paths and landmark choice."""

import numpy as np


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


def maxmin_landmarks(G, first, n):
    """Greedy farthest-point landmarks: ``first``, then each time the point whose geodesic
    distance over ``G`` (read as undirected) to the landmarks so far is largest; one SciPy
    single-source shortest path per landmark."""
    from scipy.sparse.csgraph import shortest_path

    chosen = [first]
    nearest = shortest_path(G, directed=False, indices=first)
    nearest[first] = -1.0
    for _ in range(n - 1):
        nxt = int(np.argmax(nearest))
        chosen.append(nxt)
        nearest = np.minimum(nearest, shortest_path(G, directed=False, indices=nxt))
        nearest[chosen] = -1.0
    return np.array(chosen)
