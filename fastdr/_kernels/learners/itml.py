"""ITML: one sweep of Bregman projections over the constraint pairs (Davis et al., 2007).

For each pair with difference ``v`` and target bound ``b`` (an upper bound for similar pairs,
a lower bound for dissimilar ones), with ``p = v^T A v``, the projection onto the pair's
constraint under the LogDet divergence is the rank-one update

    alpha = min(lambda, gamma_proj (delta / p - delta / b)),   delta = +1 or -1,
    beta = delta alpha / (1 - delta alpha p),
    b <- 1 / (1 / b + delta alpha / gamma),   lambda <- lambda - alpha,
    A <- A + beta (A v)(A v)^T.

The sweep visits the pairs in their given order (the similar pairs first), each projection
depending on the one before: it is serial by nature, and deterministic. One matrix-vector
product and one symmetric rank-one update per pair: O(d^2) each, with no allocation.
"""

import numpy as np
from numba import njit


@njit(cache=True)
def itml_sweep(A, diffs, delta, bounds, lambdas, gamma, gamma_proj, Av):
    """One pass of Bregman projections over all pairs; A, bounds and lambdas in place.

    Parameters
    ----------
    A : ndarray of shape (d, d), float64
        The current metric (symmetric positive definite); updated in place, kept exactly
        symmetric.
    diffs : ndarray of shape (n_pairs, d), float64
        ``x - x'`` of each pair.
    delta : ndarray of shape (n_pairs,), float64
        +1 for a similar pair, -1 for a dissimilar one.
    bounds, lambdas : ndarray of shape (n_pairs,), float64
        Each pair's current target distance and dual variable; updated in place.
    gamma : float
        The slack trade-off (``inf``: hard constraints).
    gamma_proj : float
        ``gamma / (gamma + 1)`` (1 when gamma is infinite).
    Av : ndarray of shape (d,), float64
        Scratch.

    Returns
    -------
    int
        -1, or the index of the first pair whose squared distance in the current metric is
        not positive and finite (it underflowed or overflowed; the sweep stops there).
    """
    n, d = diffs.shape
    for t in range(n):
        v = diffs[t]
        # A v as a sum of A's rows (A is symmetric): no reduction in the inner loop, so it
        # runs in SIMD lanes, in a fixed order
        for i in range(d):
            Av[i] = 0.0
        for j in range(d):
            vj = v[j]
            row = A[j]
            for i in range(d):
                Av[i] += row[i] * vj
        p = 0.0
        for i in range(d):
            p += v[i] * Av[i]
        if not (p > 0.0 and p < np.inf):
            return t
        s = delta[t]
        alpha = min(lambdas[t], gamma_proj * (s / p - s / bounds[t]))
        lambdas[t] -= alpha
        beta = s * alpha / (1.0 - s * alpha * p)
        bounds[t] = 1.0 / (1.0 / bounds[t] + s * alpha / gamma)
        # beta (Av_i Av_j) is the same number for (i, j) and (j, i): A stays exactly symmetric
        for i in range(d):
            ai = Av[i]
            row = A[i]
            for j in range(d):
                row[j] += beta * (ai * Av[j])
    return -1
