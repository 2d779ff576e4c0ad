"""Naive references: PCA, kernels, centring and LDA scatter."""

import numpy as np

from .distances import sq_euclidean


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

