"""Naive references: NCA and MMC objectives."""

import numpy as np


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

