"""Minka's automatic choice of the PCA dimension d' (``PCA(n_components="mle")``).

Zhou (ch. 10.3) leaves d' to the user, a cross-validated classifier or an explained-variance
threshold t. Minka (NIPS 2000, "Automatic choice of dimensionality for PCA") instead picks the
d' under which the data are most probable for probabilistic PCA (a Laplace approximation of
the evidence): a Gaussian with d' free directions and isotropic noise in the others.

The log-evidence of rank r sums, over every pair ``i < r``, ``j > i``, a term
``log((l_i - l_j) (1/s_j - 1/s_i))``; evaluated pair by pair that is O(d^2) per rank and
O(d^3) in all. Here each rank's pair sum is updated from the previous rank's in O(d) (moving
index r from the noise side to the signal side adds and removes one row and one column of
pairs), so the whole curve costs O(d^2) time and O(d) memory.
"""

from math import lgamma, log, pi

import numpy as np

#: Eigenvalues below this count as zero, as in Minka's formula's usual implementation.
_EPS = 1e-15


def _sum_logs(values):
    """Sum of ``log(values)`` over the positive ones, and how many were not positive."""
    good = values > 0
    return float(np.sum(np.log(values[good]))), int(values.size - np.count_nonzero(good))


def minka_log_evidence(spectrum, n_samples):
    """Log-evidence of every rank 0 .. d-1 for the sorted ``spectrum`` (Minka, eq. 30).

    Parameters
    ----------
    spectrum : ndarray of shape (d,)
        Eigenvalues of the covariance matrix, sorted descending (negatives count as 0).
    n_samples : int

    Returns
    -------
    ndarray of shape (d,)
        Entry r is the log-evidence of rank r; entry 0 is ``-inf`` (a rank of 0 is never
        chosen), and so is every rank whose r-th eigenvalue is below 1e-15. A rank whose pair
        sum meets two exactly equal eigenvalues (the Laplace approximation is then undefined;
        scikit-learn raises "math domain error") also gets ``-inf``.
    """
    lam = np.maximum(np.asarray(spectrum, dtype=np.float64), 0.0)
    d = lam.shape[0]
    n = float(n_samples)
    out = np.full(d, -np.inf)
    # pu: the volume of the Stiefel manifold, cumulated over i = 1 .. r
    pu_terms = [lgamma((d - i + 1) / 2.0) - log(pi) * (d - i + 1) / 2.0 for i in range(1, d)]
    pu_cum = np.cumsum(pu_terms)
    log_lam = np.log(np.where(lam > 0, lam, 1.0))
    suffix = np.concatenate([np.cumsum(lam[::-1])[::-1], [0.0]])
    # pair sums: inner = pairs i < j < r (both on the signal side); cross = pairs i < r <= j
    inner = cross = 0.0
    inner_bad = cross_bad = 0
    for r in range(1, d):
        i = r - 1  # index i moves from the noise side to the signal side
        # cross loses the pairs (k, i) with k < i and gains the pairs (i, j) with j > i
        lost, lost_bad = _sum_logs(lam[:i] - lam[i])
        gained, gained_bad = _sum_logs(lam[i] - lam[r:])
        cross += gained - lost
        cross_bad += gained_bad - lost_bad
        # inner gains the pairs (k, i) with k < i
        if i > 0:
            s, b = _sum_logs((lam[:i] - lam[i]) * (1.0 / max(lam[i], _EPS) - 1.0 / lam[:i]))
            inner += s
            inner_bad += b
        if lam[r - 1] < _EPS:
            continue
        v = max(_EPS, suffix[r] / (d - r))
        noise_side, noise_bad = _sum_logs(1.0 / v - 1.0 / lam[:r])
        if inner_bad or cross_bad or noise_bad:
            continue
        pa = inner + cross + (d - r) * noise_side + log(n) * (r * (d - 1) - r * (r - 1) / 2.0)
        pl = -np.sum(log_lam[:r]) * n / 2.0
        pv = -log(v) * n * (d - r) / 2.0
        free = d * r - r * (r + 1.0) / 2.0
        pp = log(2.0 * pi) * (free + r) / 2.0
        pu = -r * log(2.0) + pu_cum[r - 1]
        out[r] = pu + pl + pv + pp - pa / 2.0 - r * log(n) / 2.0
    return out


def infer_dimension(spectrum, n_samples):
    """Minka's d': the rank in [1, d - 1] of largest log-evidence (0 if none is finite).

    Parameters
    ----------
    spectrum : ndarray of shape (d,)
        Eigenvalues of the covariance matrix, sorted descending.
    n_samples : int

    Returns
    -------
    int
    """
    return int(np.argmax(minka_log_evidence(spectrum, n_samples)))
