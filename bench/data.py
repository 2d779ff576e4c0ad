"""Seeded benchmark data, nothing downloaded: Gaussians, Gaussian classes, swiss roll,
S-curve (scikit-learn's generators), the digits (shipped with scikit-learn)."""

from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np


@dataclass
class Data:
    """One benchmark input: ``X``, class labels ``y``, query points ``X_query``, a roll's own
    2-D coordinates ``truth`` and position ``colour``, and ``extra`` a workload adds once."""

    X: np.ndarray
    y: np.ndarray = None
    X_query: np.ndarray = None
    truth: np.ndarray = None
    colour: np.ndarray = None
    extra: dict = field(default_factory=dict)

    @property
    def m(self):
        return self.X.shape[0]

    @property
    def d(self):
        return self.X.shape[1]


def _rotate_into(X3, d, rng):
    """Place 3-D points isometrically in d dimensions (a random orthonormal 3 x d map)."""
    if d == X3.shape[1]:
        return X3
    if d < X3.shape[1]:
        raise ValueError(f"A 3-D manifold needs d >= 3, got d={d}.")
    basis, _ = np.linalg.qr(rng.standard_normal((d, X3.shape[1])))
    return X3 @ basis.T


def swiss_roll_arclength(t):
    """Arc length of the spiral (t cos t, t sin t) from t=0, the roll's unrolled coordinate."""
    return 0.5 * (t * np.sqrt(1.0 + t * t) + np.arcsinh(t))


@lru_cache(maxsize=6)
def make_data(kind, m, d, dtype="float64", seed=0):
    """Build (and cache) one :class:`Data` of ``kind``: ``gauss``, ``aniso`` (column j with
    variance 1/(j+1)), ``uniform``, ``blobs5``/``blobs10`` (Gaussian classes, m queries too),
    ``clusters20`` (20 separated Gaussian clusters), ``swiss``, ``s_curve``, ``digits`` (at
    most its 1797 x 64), ``iris`` (at most its 150 x 4) or ``sparse<share>`` (CSR, aniso
    values at random places)."""
    rng = np.random.default_rng(seed)
    if kind == "gauss":
        return Data(rng.standard_normal((m, d)).astype(dtype))
    if kind == "aniso":  # Gaussian with decaying variances: clear eigengaps for PCA/MDS
        scale = 1.0 / np.sqrt(1.0 + np.arange(d))
        return Data((rng.standard_normal((m, d)) * scale).astype(dtype))
    if kind == "uniform":
        return Data(rng.random((m, d)).astype(dtype))
    if kind.startswith("blobs"):
        n_classes = int(kind[len("blobs"):])
        centres = rng.normal(0.0, 0.5, size=(n_classes, d))
        y = rng.integers(0, n_classes, size=2 * m)
        X = centres[y] + rng.standard_normal((2 * m, d))
        return Data(X[:m].astype(dtype), y=y[:m], X_query=X[m:].astype(dtype),
                    extra={"y_query": y[m:]})
    if kind == "clusters20":  # 20 well-separated isotropic Gaussian clusters (NN-descent)
        centres = rng.normal(0.0, 4.0, size=(20, d))
        return Data((centres[rng.integers(0, 20, m)] + rng.standard_normal((m, d))).astype(dtype))
    if kind in ("swiss", "s_curve"):
        from sklearn.datasets import make_s_curve, make_swiss_roll

        make = make_swiss_roll if kind == "swiss" else make_s_curve
        X3, t = make(n_samples=m, noise=0.0, random_state=seed)
        along = swiss_roll_arclength(t) if kind == "swiss" else t
        truth = np.column_stack([along, X3[:, 1]])
        X = _rotate_into(X3, d, rng)
        return Data(np.ascontiguousarray(X, dtype=dtype), truth=truth, colour=t,
                    y=_position_classes(t, 6))
    if kind.startswith("sparse"):  # "sparse0.001": CSR, that share of each row stored
        return Data(_sparse_rows(m, d, float(kind[len("sparse"):]), dtype, rng))
    if kind == "iris":  # 150 x 4, three classes (shipped with scikit-learn); d is ignored
        from sklearn.datasets import load_iris

        X, y = load_iris(return_X_y=True)
        if m < X.shape[0]:
            keep = np.sort(rng.choice(X.shape[0], size=m, replace=False))
            X, y = X[keep], y[keep]
        return Data(np.ascontiguousarray(X, dtype=dtype), y=y)
    if kind == "digits":
        from sklearn.datasets import load_digits

        digits = load_digits()
        X, y = digits.data, digits.target
        if m < X.shape[0]:
            keep = np.sort(rng.choice(X.shape[0], size=m, replace=False))
            X, y = X[keep], y[keep]
        return Data(np.ascontiguousarray(X, dtype=dtype), y=y)
    raise ValueError(f"Unknown data kind {kind!r}.")


def _sparse_rows(m, d, share, dtype, rng):
    """A CSR m x d with ``max(1, round(share d))`` entries per row at random columns (built
    row-wise, never dense: 1,000,000 x 10,000 at 0.1% is 10 million entries), column j's
    values with variance 1/(j+1) as in ``aniso``."""
    import scipy.sparse

    per_row = max(1, round(share * d))
    indices = rng.integers(0, d, size=m * per_row)
    values = rng.standard_normal(m * per_row) / np.sqrt(1.0 + indices)
    indptr = np.arange(0, m * per_row + 1, per_row, dtype=np.int64)
    X = scipy.sparse.csr_matrix((values.astype(dtype), indices, indptr), shape=(m, d))
    X.sum_duplicates()  # a column drawn twice in a row: one entry
    return X


def _position_classes(t, n_classes):
    """Labels from the position along the manifold, for supervised methods on a roll."""
    edges = np.quantile(t, np.linspace(0, 1, n_classes + 1)[1:-1])
    return np.searchsorted(edges, t)


def symmetric_knn_graph(X, n_neighbors):
    """The symmetrised k-NN distance graph that Isomap builds (scikit-learn's, as CSR)."""
    from sklearn.neighbors import kneighbors_graph

    graph = kneighbors_graph(X, n_neighbors, mode="distance", n_jobs=-1)
    return graph.maximum(graph.T).tocsr()
