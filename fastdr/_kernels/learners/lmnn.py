"""LMNN: the impostors of a block of anchor points and the push weights they give.

A triplet (a, t, b) of an anchor a, one of its target neighbours t and a point b of another
class is active when ``|L(x_a - x_b)|^2 < 1 + |L(x_a - x_t)|^2``: b is an impostor inside
a's margin (Weinberger and Saul, 2009). Every active triplet adds
``(x_a - x_t)(x_a - x_t)^T - (x_a - x_b)(x_a - x_b)^T`` to the hinge's gradient. Summed,
these are two weighted graph Laplacians over the pairs (a, t) and (a, b), so a block only
needs each pair's count of active triplets and, per anchor, the weighted sum of its
impostors' rows; the d x d gradient is assembled once from those by the caller.

The kernel reads a block of inner products ``L x_a . L x_b`` (one GEMM by the caller, in
float32 when the magnitudes allow: the block is the pass's main memory traffic), uses them
only to screen pairs against the anchor's margin with a bound on their error, and
recomputes the distance of each surviving pair from its difference in float64, so the
activity test suffers neither the GEMM form's cancellation nor the lower precision. Each
anchor row is owned by one thread and visits the points in index order: the result does not
depend on the number of threads.
"""

from numba import njit, prange

#: anchor chunks of a block: each counts its impostors' columns in its own row
CHUNKS = 32


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
def impostor_block(G, start, Lx, sq, codes, target_dist, X, slack, counts, pushed, hits):
    """Count the active triplets of the anchors ``start .. start + len(G)``.

    Parameters
    ----------
    G : ndarray of shape (b, m), float32 or float64
        ``Lx[start:start + b] @ Lx.T``, in either precision.
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
    slack : float
        A bound on the error of ``|La|^2 + |Lj|^2 - 2 G[i, j]`` relative to ``|La|^2 +
        |Lj|^2``: a pair is tested when that screen is below the margin plus this error.
    counts : ndarray of shape (b, k), float64
        Output: per anchor and target, the number of active impostors.
    pushed : ndarray of shape (b, d), float64
        Output: per anchor, ``sum_j n_aj x_j``, n_aj the active triplets (a, t, j).
    hits : ndarray of shape (CHUNKS, m), float64
        Updated: the block's anchors are split into at most ``CHUNKS`` chunks and chunk c
        adds ``n_aj`` to ``hits[c, j]``. The counts are integers, so the caller's sum over
        the rows (the impostors' column counts) is exact and the same in any order.
    """
    nb = G.shape[0]
    n_chunks = min(CHUNKS, nb)
    for chunk in prange(n_chunks):
        for i in range(chunk * nb // n_chunks, (chunk + 1) * nb // n_chunks):
            _anchor_row(G[i], start + i, Lx, sq, codes, target_dist, X, slack, counts[i],
                        pushed[i], hits[chunk])


@njit(cache=True)
def _anchor_row(row, a, Lx, sq, codes, target_dist, X, slack, counts, pushed, hits):
    """One anchor of :func:`impostor_block`: its counts and pushed sum (outputs) and its
    impostors' column counts (added to ``hits``)."""
    k = target_dist.shape[1]
    m = row.shape[0]
    own = codes[a]
    margin = 0.0
    for t in range(k):
        counts[t] = 0.0
        margin = max(margin, target_dist[a, t])
    margin += 1.0
    pushed[:] = 0.0
    # j may be inside a's margin when |La|^2 + |Lj|^2 - 2 G[a, j] < margin + slack (|La|^2 +
    # |Lj|^2), that is when below < 2 G[a, j] - (1 - slack) |Lj|^2
    below = (1.0 - slack) * sq[a] - margin
    keep = 1.0 - slack
    for j in range(m):
        if not below < 2.0 * row[j] - keep * sq[j] or codes[j] == own:
            continue
        dist = _squared_distance(Lx, a, j)
        n = 0
        for t in range(k):
            if dist < 1.0 + target_dist[a, t]:
                counts[t] += 1.0
                n += 1
        if n > 0:
            hits[j] += n
            for c in range(pushed.shape[0]):
                pushed[c] += n * X[j, c]


@njit(parallel=True, cache=True)
def target_distances(Lx, targets, out):
    """``out[a, t] = |Lx[a] - Lx[targets[a, t]]|^2``, each from the difference."""
    m, k = targets.shape
    for a in prange(m):
        for t in range(k):
            out[a, t] = _squared_distance(Lx, a, targets[a, t])

