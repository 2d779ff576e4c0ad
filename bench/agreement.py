"""How close fastdr's answer is to the anchor's: one figure per speed row, so that a fast wrong
answer shows as wrong."""

import re
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Agreement:
    """``metric``, its ``value``, whether within tolerance (``ok``), and a ``detail``."""

    metric: str
    value: float
    ok: bool
    detail: str = ""

    def as_dict(self):
        return {"metric": self.metric, "value": float(self.value), "ok": bool(self.ok),
                "detail": self.detail}


def error_text(exc, limit=300):
    """``"TypeName: message"`` on one line, at most ``limit`` characters, no colour codes."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", f"{type(exc).__name__}: {exc}")
    return " ".join(text.split())[:limit]


def _pair(A, B, what, dtype=np.float64):
    A, B = np.asarray(A, dtype=dtype), np.asarray(B, dtype=dtype)
    if A.shape != B.shape:
        return None, None, Agreement(what, float("nan"), False,
                                     f"shapes differ: {A.shape} vs {B.shape}")
    return A, B, None


def procrustes(A, B, tol):
    """Procrustes disparity (scipy's definition) between two embeddings of the same points."""
    from scipy.spatial import procrustes as scipy_procrustes

    A, B, bad = _pair(A, B, "Procrustes disparity")
    if bad is None and not (np.isfinite(A).all() and np.isfinite(B).all()):
        bad = Agreement("Procrustes disparity", float("nan"), False, "non-finite values")
    if bad is not None:
        return bad
    value = float(scipy_procrustes(A, B)[2])
    return Agreement("Procrustes disparity", value, value <= tol, f"ok if <= {tol:g}")


def embedding_vs_anchor(tol):
    """Agreement function: Procrustes disparity of two embeddings."""
    return lambda fast, anchor, data: procrustes(fast, anchor, tol)


def max_relative_error(A, B, tol, what="max relative error"):
    """max |A - B| / max |B| over arrays of the same shape and the same inf/NaN pattern."""
    A, B, bad = _pair(A, B, what)
    if bad is not None:
        return bad
    finite = np.isfinite(B)
    if not np.array_equal(finite, np.isfinite(A)):
        return Agreement(what, float("inf"), False, "inf/NaN pattern differs")
    if not finite.any():
        return Agreement(what, 0.0, True, f"ok if <= {tol:g}")
    scale = float(np.abs(B[finite]).max()) or 1.0
    value = float(np.abs(A[finite] - B[finite]).max()) / scale
    return Agreement(what, value, value <= tol, f"ok if <= {tol:g}")


def dense_vs_anchor(tol):
    """Agreement function: max relative error of two dense results (distance matrices)."""
    return lambda fast, anchor, data: max_relative_error(fast, anchor, tol)


def index_agreement(fast, anchor, dist_tol):
    """Mean share of each query's neighbours found by both ``(distances, indices)`` results;
    ok at 0.999, or when the sorted distances agree to ``dist_tol`` (ties may differ)."""
    fast_ind, anchor_ind, bad = _pair(fast[1], anchor[1], "index agreement", None)
    if bad is not None:
        return bad
    fast_dist, anchor_dist = np.asarray(fast[0]), np.asarray(anchor[0])
    shared = sum((fast_ind[:, [j]] == anchor_ind).any(axis=1) for j in range(fast_ind.shape[1]))
    value = float(np.mean(shared) / fast_ind.shape[1])
    scale = float(np.abs(anchor_dist).max()) or 1.0
    dist_err = float(np.abs(np.sort(fast_dist, 1) - np.sort(anchor_dist, 1)).max()) / scale
    return Agreement("index agreement", value, value >= 0.999 or dist_err <= dist_tol,
                     f"max rel. distance error {dist_err:.1e} (ok if sets >= 0.999 or "
                     f"distances <= {dist_tol:g})")


def knn_vs_anchor(dist_tol):
    """Agreement function for ``(distances, indices)`` results."""
    return lambda fast, anchor, data: index_agreement(fast, anchor, dist_tol)


def prediction_rate(fast, anchor, min_rate=0.999):
    """Share of identical predictions."""
    fast, anchor, bad = _pair(fast, anchor, "identical predictions", None)
    if bad is not None:
        return bad
    value = float(np.mean(fast == anchor))
    return Agreement("identical predictions", value, value >= min_rate,
                     f"ok if >= {min_rate:g}")


def nca_objective(X, y, components, block=512):
    """NCA's objective over m: the expected share of points the stochastic 1-NN rule gets
    right, ``(1/m) sum_i sum_{j in C_i} p_ij`` (higher is better), blockwise in NumPy."""
    Z = np.asarray(X, dtype=np.float64) @ np.asarray(components, dtype=np.float64).T
    y = np.asarray(y)
    sq = (Z * Z).sum(axis=1)
    total = 0.0
    for start in range(0, Z.shape[0], block):
        stop = min(start + block, Z.shape[0])
        dist = np.maximum(sq[start:stop, None] + sq[None, :] - 2.0 * Z[start:stop] @ Z.T, 0.0)
        dist[np.arange(stop - start), np.arange(start, stop)] = np.inf
        p = np.exp(dist.min(axis=1, keepdims=True) - dist)
        p /= p.sum(axis=1, keepdims=True)
        total += float((p * (y[start:stop, None] == y[None, :])).sum())
    return total / Z.shape[0]


def mmc_constraints(y, n_pairs=2000, seed=0):
    """A fixed set of must-link (same class) and cannot-link (different class) index pairs."""
    rng = np.random.default_rng(seed)
    left = rng.integers(0, len(y), size=8 * n_pairs)
    right = rng.integers(0, len(y), size=8 * n_pairs)
    keep = left != right
    left, right = left[keep], right[keep]
    same = y[left] == y[right]
    return (np.column_stack([left[same], right[same]])[:n_pairs],
            np.column_stack([left[~same], right[~same]])[:n_pairs])


def lmnn_objective(X, y, components, k=3, regularization=0.5, block=256):
    """LMNN's loss (lower is better): ``reg * sum_(a,t) d(a, t) + (1 - reg) * sum_(a,t,b)
    [1 + d(a, t) - d(a, b)]_+`` over each point a, its k target neighbours t (the nearest
    of its class in X, ties by index) and the points b of other classes, d the squared
    distance after the map; blockwise in NumPy, independent of fastdr's code."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    Z = X @ np.asarray(components, dtype=np.float64).T
    targets = np.empty((X.shape[0], k), dtype=np.int64)
    for label in np.unique(y):
        rows = np.flatnonzero(y == label)
        Xc = X[rows]
        for lo in range(0, rows.shape[0], 64):  # exact differences: ties by index, as a fit
            D = ((Xc[lo:lo + 64, None, :] - Xc[None, :, :]) ** 2).sum(-1)
            D[np.arange(D.shape[0]), np.arange(lo, lo + D.shape[0])] = np.inf
            targets[rows[lo:lo + 64]] = rows[np.argsort(D, axis=1, kind="stable")[:, :k]]
    sq = (Z * Z).sum(axis=1)
    pull = hinge = 0.0
    for start in range(0, Z.shape[0], block):
        stop = min(start + block, Z.shape[0])
        rows = np.arange(start, stop)
        to_targets = ((Z[rows, None, :] - Z[targets[rows]]) ** 2).sum(-1)
        pull += to_targets.sum()
        dist = sq[rows, None] + sq[None, :] - 2.0 * Z[rows] @ Z.T
        other = y[rows, None] != y[None, :]
        for t in range(k):
            h = 1.0 + to_targets[:, t, None] - dist
            hinge += h[other & (h > 0)].sum()
    return float(regularization * pull + (1.0 - regularization) * hinge)


def mmc_objective(X, M, must, cannot):
    """MMC's objective at the feasible scale of M: ``sum_S d_M^2 / (sum_D d_M)^2`` (lower is
    better; Xing et al. minimise ``sum_S d_M^2`` subject to ``sum_D d_M >= 1``)."""
    X, M = np.asarray(X, dtype=np.float64), np.asarray(M, dtype=np.float64)

    def sq_dist(pairs):
        diff = X[pairs[:, 0]] - X[pairs[:, 1]]
        return np.einsum("ij,jk,ik->i", diff, M, diff).clip(min=0.0)

    spread = np.sqrt(sq_dist(cannot)).sum()
    return float(sq_dist(must).sum() / spread**2) if spread > 0 else float("inf")


def knn_accuracy(X, y, components, n_neighbors=5, folds=5):
    """Mean accuracy of scikit-learn's k-NN on ``X components^T`` over fixed folds."""
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    components = np.asarray(components, dtype=np.float64)
    if components.shape[0] == 0:  # a map to no dimension (metric-learn's SCML with no
        components = np.zeros((1, np.shape(X)[1]))  # weight left): every distance is 0
    Z = np.asarray(X, dtype=np.float64) @ components.T
    return float(cross_val_score(KNeighborsClassifier(n_neighbors), Z, y, cv=folds).mean())


def accuracy_slack(accuracy, m):
    """Two standard errors of an accuracy estimated on m points (Agresti-Coull, so that an
    anchor at 100% still leaves a point or two of slack): how far below an anchor's accuracy
    another solver of the same problem may land on small, noisy data."""
    shrunk = (accuracy * m + 2.0) / (m + 4.0)
    return 2.0 * np.sqrt(shrunk * (1.0 - shrunk) / m)


def mlkr_loss(X, y, components, block=512):
    """MLKR's loss: the leave-one-out squared error of Gaussian kernel regression in the
    metric, ``sum_i (y_i - sum_{j != i} k_ij y_j / sum_{j != i} k_ij)^2`` with ``k_ij =
    exp(-||L (x_i - x_j)||^2)``, blockwise in NumPy."""
    Z = np.asarray(X, dtype=np.float64) @ np.asarray(components, dtype=np.float64).T
    y = np.asarray(y, dtype=np.float64)
    sq = (Z * Z).sum(axis=1)
    total = 0.0
    for start in range(0, Z.shape[0], block):
        stop = min(start + block, Z.shape[0])
        dist = np.maximum(sq[start:stop, None] + sq[None, :] - 2.0 * Z[start:stop] @ Z.T, 0.0)
        dist[np.arange(stop - start), np.arange(start, stop)] = np.inf
        k = np.exp(dist.min(axis=1, keepdims=True) - dist)  # shifted: the ratio is unchanged
        total += float(((y[start:stop] - (k @ y) / k.sum(axis=1)) ** 2).sum())
    return total
