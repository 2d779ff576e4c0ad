"""Naive references: Procrustes, classical MDS and LLE."""

import numpy as np

from .neighbors import knn


def procrustes_disparity(A, B):
    """Procrustes disparity between two embeddings (scipy's definition)."""
    from scipy.spatial import procrustes

    return procrustes(np.asarray(A, float), np.asarray(B, float))[2]



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



def reverse_lists(sets, m):
    """For every r in [0, m), the (point, slot) pairs with ``sets[point, slot] == r``,
    by ascending point."""
    out = [[] for _ in range(m)]
    for i, row in enumerate(np.asarray(sets)):
        for c, r in enumerate(row):
            out[r].append((i, c))
    return out



def block_sum(blocks, sets, m):
    """Dense ``M = sum_i P_i^T B_i P_i`` by adding the blocks one by one, in ascending i,
    and the pattern of entries some set touches."""
    M = np.zeros((m, m))
    touched = np.zeros((m, m), dtype=bool)
    for B, S in zip(np.asarray(blocks, dtype=np.float64), np.asarray(sets), strict=True):
        for a, r in enumerate(S):
            for b, j in enumerate(S):
                M[r, j] += B[a, b]
                touched[r, j] = True
    return M, touched

