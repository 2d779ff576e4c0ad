"""SCML: metric-learn's stochastic steps on the basis weights, and the triplets' slacks.

Both read rows of ``X B^T`` (one row per distinct point, K bases) through triplets of row
indices that the caller built from validated data, and neither allocates: the per-step
differences go to caller-owned scratch. The steps are serial (each needs the last one's
weights) and follow metric-learn's arithmetic operation by operation, without fast-math, so
that the same draws give metric-learn's weights.
"""

import numpy as np
from numba import njit

#: metric-learn's slack in the AdaGrad denominator (no division by 0)
ADAGRAD_DELTA = 0.001


@njit(cache=True)
def sgd_steps(XB, triplets, draws, start, stop, beta, gamma, w, avg_grad, ada_grad, rows, g):
    """metric-learn's steps ``start .. stop - 1`` on the weights, in place: the drawn triplets
    of positive slack ``1 + D_t . w`` give ``g = sum D_t / batch``; avg_grad is g's running
    mean, ada_grad the norm of all g, and ``w = -(it + 1) / (gamma (delta + ada_grad))
    min(avg_grad + beta, 0)``, metric-learn's arithmetic operation by operation (no
    fast-math). O(batch K) per step; serial, as each step needs the last one's weights."""
    n_basis, batch = XB.shape[1], draws.shape[1]
    for it in range(start, stop):
        n_active = 0
        for b in range(batch):
            t = draws[it, b]
            a, p, q = triplets[t, 0], triplets[t, 1], triplets[t, 2]
            dot = 0.0
            for k in range(n_basis):
                near, far = XB[a, k] - XB[p, k], XB[a, k] - XB[q, k]
                rows[n_active, k] = near * near - far * far
                dot += rows[n_active, k] * w[k]
            if 1.0 + dot > 0.0:
                n_active += 1
        g[:] = 0.0
        for r in range(n_active):  # row by row, as numpy sums the rows
            for k in range(n_basis):
                g[k] += rows[r, k]
        for k in range(n_basis):
            gk = g[k] / batch
            avg_grad[k] = (it * avg_grad[k] + gk) / (it + 1)
            ada_grad[k] = np.sqrt(ada_grad[k] * ada_grad[k] + gk * gk)
            scale = -(it + 1) / (gamma * (ADAGRAD_DELTA + ada_grad[k]))
            w[k] = scale * min(avg_grad[k] + beta, 0.0)


@njit(cache=True)
def slack_kernel(Y, triplets, out):
    """``out[t] = 1 + |Y_a - Y_p|^2 - |Y_a - Y_n|^2`` for each triplet. O(n_triplets r),
    no temporaries (numpy's gathers of the rows cost 10 times more here)."""
    for t in range(triplets.shape[0]):
        a, p, q = triplets[t, 0], triplets[t, 1], triplets[t, 2]
        total = 0.0
        for j in range(Y.shape[1]):
            near, far = Y[a, j] - Y[p, j], Y[a, j] - Y[q, j]
            total += near * near - far * far
        out[t] = 1.0 + total
