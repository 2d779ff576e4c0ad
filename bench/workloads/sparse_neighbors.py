"""k-NN on scipy sparse (CSR) input: fastdr's sparse-product kernel against scikit-learn's
brute force on the same matrix (issue 15)."""

import numpy as np

from .. import agreement
from ._base import Grid, Impl, Workload

#: share of stored entries in the sparse input
DENSITY = 0.02


def _with_sparse(data):
    """Add ``X_sparse``: a CSR matrix of X's shape with about 2% of X's entries kept."""
    if "X_sparse" not in data.extra:
        import scipy.sparse

        rng = np.random.default_rng(2)
        keep = rng.random(data.X.shape) < DENSITY
        data.extra["X_sparse"] = scipy.sparse.csr_matrix(np.where(keep, data.X, 0.0))
    return data


def _knn(label):
    def run(data, state):
        if label == "fastdr":
            from fastdr import NearestNeighbors
            nn = NearestNeighbors(n_neighbors=10)
        else:
            from sklearn.neighbors import NearestNeighbors
            nn = NearestNeighbors(n_neighbors=10, algorithm="brute", n_jobs=-1)
        return nn.fit(data.extra["X_sparse"]).kneighbors()

    shown = "" if label == "fastdr" else "algorithm='brute', n_jobs=-1"
    return Impl(label, run, f"NearestNeighbors(n_neighbors=10{', ' if shown else ''}{shown})"
                f".fit(X_csr).kneighbors()  # X_csr: {DENSITY:.0%} of X's entries")


WORKLOADS = (
    Workload(
        name="knn_sparse", area="neighbors",
        title=f"exact k-NN (k=10), euclidean, sparse CSR input ({DENSITY:.0%} stored), every "
              "point a query (self excluded)",
        data_kind="gauss",
        fastdr=_knn("fastdr"), anchors=(_knn("sklearn"),),
        agreement=agreement.knn_vs_anchor(1e-9),
        extend=_with_sparse,
        grids={
            "smoke": Grid((200, 100), (100, 200), 100, (50, 100), 200),
            "quick": Grid((5000, 500), (1250, 2500, 5000), 500, (100, 500, 1000), 2500),
            "full": Grid((20000, 1000), (5000, 10000, 20000), 1000, (200, 1000, 5000), 10000),
        },
    ),
)
