"""LMNN's loss and gradient: an exact impostor search in blocks, and the gradient as two
graph Laplacians.

Each evaluation compares every anchor with every point of another class: one GEMM per block
of anchors screens the pairs against the anchor's margin, and a compiled pass recomputes
the distance of each surviving pair from its difference and counts its active triplets.
From the per-pair counts the d x d gradient is assembled over the rows that take part in an
active triplet only. Memory O(block m + m d), never m x m nor m x k x d.
"""

import numpy as np

from .._kernels.learners import lmnn as lmnn_kernels
from .._runtime.threads import parallel_section

#: entries of the block of inner products: 16 MB (float64) whatever m
BLOCK_ENTRIES = 1 << 21


def _laplacian(X, self_weight, anchors, summed):
    """``sum_(a,j) w_aj (x_a - x_j)(x_a - x_j)^T`` from its pieces: ``self_weight`` the sum of
    each point's row and column weights, ``summed[i] = sum_j w_aj x_j`` for ``a =
    anchors[i]`` (the rows with any weight)."""
    rows = np.flatnonzero(self_weight)
    Xw = X[rows]
    A = (Xw * self_weight[rows, None]).T @ Xw
    P = X[anchors].T @ summed
    return 0.5 * (A + A.T) - P - P.T


def pull_matrix(X, targets):
    """``sum_(a,t) (x_a - x_t)(x_a - x_t)^T`` over every point and target neighbour."""
    m, k = targets.shape
    indegree = np.bincount(targets.ravel(), minlength=m).astype(np.float64)
    summed = np.zeros_like(X)
    for t in range(k):
        summed += X[targets[:, t]]
    return _laplacian(X, k + indegree, np.arange(m), summed)


class LMNNLoss:
    """metric-learn's LMNN loss and gradient for fixed points, labels and targets.

    Parameters
    ----------
    X : ndarray of shape (m, d), float64, centred, C-contiguous
    codes : ndarray of shape (m,), int64
    targets : ndarray of shape (m, k), int64
    regularization : float
    n_jobs : int or None
    """

    def __init__(self, X, codes, targets, regularization, n_jobs=None):
        self.X, self.codes, self.targets = X, codes, targets
        self.reg = float(regularization)
        self.n_jobs = n_jobs
        self.pull = pull_matrix(X, targets)

    def __call__(self, L):
        """Return ``(gradient, loss, n_active)`` at L, as metric-learn's ``_loss_grad``."""
        X, codes, targets = self.X, self.codes, self.targets
        m, d = X.shape
        k = targets.shape[1]
        Lx = X @ L.T
        sq = np.einsum("ij,ij->i", Lx, Lx)
        target_dist = np.empty((m, k))
        counts = np.empty((m, k))
        pushed = np.empty((m, d))
        hits = np.zeros((lmnn_kernels.CHUNKS, m))
        rows = max(1, min(m, BLOCK_ENTRIES // m))
        # the screen's GEMM in float32 unless its squares could overflow: each inner product
        # then errs by at most (r + 2) 2^-24 |La| |Lb| (rounding of the inputs and of the sums);
        # in float64 the squared norms' and the recomputed distances' rounding count too
        r = Lx.shape[1]
        if sq.max() < 1e30:
            screen = Lx.astype(np.float32)
            slack = (r + 2) * 2.0 ** -23
        else:
            screen, slack = Lx, (2 * r + 8) * 2.0 ** -52
        buffer = np.empty((rows, m), dtype=screen.dtype)
        with parallel_section(self.n_jobs):
            lmnn_kernels.target_distances(Lx, targets, target_dist)
            for lo in range(0, m, rows):
                hi = min(m, lo + rows)
                block = buffer[:hi - lo]
                np.matmul(screen[lo:hi], screen.T, out=block)
                lmnn_kernels.impostor_block(block, lo, Lx, sq, codes, target_dist, X, slack,
                                            counts[lo:hi], pushed[lo:hi], hits)
        column_sums = hits.sum(axis=0)  # sums of integers: exact
        n_active = int(counts.sum())
        # active triplets: + pairs (a, t) weighted by their counts, - pairs (a, b); each
        # anchor's row weights are equal on both sides and cancel. Only the points in an
        # active triplet contribute: the sums run over those rows
        target_columns = np.bincount(targets.ravel(), weights=counts.ravel(), minlength=m)
        weight = target_columns - column_sums
        anchors = np.flatnonzero(counts.any(axis=1))
        summed = -pushed[anchors]
        for t in range(k):
            summed += counts[anchors, t, None] * X[targets[anchors, t]]
        hinge = _laplacian(X, weight, anchors, summed)
        G = L @ (self.reg * self.pull + (1.0 - self.reg) * hinge)
        loss = n_active * (1.0 - self.reg) + float(np.sum(G * L))
        return 2.0 * G, loss, n_active
