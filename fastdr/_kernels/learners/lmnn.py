"""LMNN: the impostors of a block of anchor points and the push weights they give.

A triplet (a, t, b) of an anchor a, one of its target neighbours t and a point b of another
class is active when ``|L(x_a - x_b)|^2 < 1 + |L(x_a - x_t)|^2``: b is an impostor inside
a's margin (Weinberger and Saul, 2009). Every active triplet adds
``(x_a - x_t)(x_a - x_t)^T - (x_a - x_b)(x_a - x_b)^T`` to the hinge's gradient. Summed,
these are two weighted graph Laplacians over the pairs (a, t) and (a, b), so a block only
needs each pair's count of active triplets and, per anchor, the weighted sum of its
impostors' rows; the d x d gradient is assembled once from those by the caller.

The kernel reads a block of inner products ``L x_a . L x_b`` (one GEMM by the caller), uses
them only to screen pairs against the anchor's margin, and recomputes the distance of each
surviving pair from its difference, so the activity test does not suffer the GEMM form's
cancellation. Each anchor row is owned by one thread and visits the points in index order:
the result does not depend on the number of threads.
"""

from numba import njit, prange


@njit(inline="always")
def _squared_distance(P, a, b):
    """``|P[a] - P[b]|^2`` with four running sums (a fixed order, in SIMD lanes)."""
    r = P.shape[1]
    s0 = s1 = s2 = s3 = 0.0
    c = 0
    while c + 4 <= r:
        d0 = P[a, c] - P[b, c]
        d1 = P[a, c + 1] - P[b, c + 1]
        d2 = P[a, c + 2] - P[b, c + 2]
        d3 = P[a, c + 3] - P[b, c + 3]
        s0 += d0 * d0
        s1 += d1 * d1
        s2 += d2 * d2
        s3 += d3 * d3
        c += 4
    while c < r:
        d0 = P[a, c] - P[b, c]
        s0 += d0 * d0
        c += 1
    return (s0 + s1) + (s2 + s3)


@njit(parallel=True, cache=True)
def impostor_block(G, start, Lx, sq, codes, target_dist, X, counts, pushed):
    """Count the active triplets of the anchors ``start .. start + len(G)``.

    Parameters
    ----------
    G : ndarray of shape (b, m), float64
        ``Lx[start:start + b] @ Lx.T``; overwritten: ``G[i, j]`` becomes the number of
        active triplets (a, t, j) of anchor ``a = start + i`` (0 for points of a's class).
    start : int
        The first anchor's row.
    Lx : ndarray of shape (m, r), float64
        The points in the current metric.
    sq : ndarray of shape (m,), float64
        Squared norms of the rows of Lx.
    codes : ndarray of shape (m,), int64
        Class codes.
    target_dist : ndarray of shape (m, k), float64
        Squared distances from each point to its k target neighbours in the current metric.
    X : ndarray of shape (m, d), float64
        The (centred) input points.
    counts : ndarray of shape (b, k), float64
        Output: per anchor and target, the number of active impostors.
    pushed : ndarray of shape (b, d), float64
        Output: per anchor, ``sum_j G[i, j] x_j``.
    """
    nb, m = G.shape
    k = target_dist.shape[1]
    d = X.shape[1]
    for i in prange(nb):
        a = start + i
        own = codes[a]
        margin = 0.0
        for t in range(k):
            counts[i, t] = 0.0
            margin = max(margin, target_dist[a, t])
        margin += 1.0
        for c in range(d):
            pushed[i, c] = 0.0
        row = G[i]
        sqa = sq[a]
        for j in range(m):
            row_j = row[j]
            row[j] = 0.0
            if codes[j] == own:
                continue
            # the GEMM form errs by a few ulps of |La|^2 + |Lj|^2: screen with that slack
            if sqa + sq[j] - 2.0 * row_j >= margin + 1e-10 * (sqa + sq[j]):
                continue
            dist = _squared_distance(Lx, a, j)
            n = 0
            for t in range(k):
                if dist < 1.0 + target_dist[a, t]:
                    counts[i, t] += 1.0
                    n += 1
            row[j] = n
            if n > 0:
                for c in range(d):
                    pushed[i, c] += n * X[j, c]


@njit(parallel=True, cache=True)
def target_distances(Lx, targets, out):
    """``out[a, t] = |Lx[a] - Lx[targets[a, t]]|^2``, each from the difference."""
    m, k = targets.shape
    for a in prange(m):
        for t in range(k):
            out[a, t] = _squared_distance(Lx, a, targets[a, t])

