"""Exact k-NN under the non-Euclidean metrics (issue 15): manhattan and cosine, brute force."""

from .. import agreement
from ._base import Grid, Target, Workload, estimator


def _knn(label, metric):
    path = ("fastdr" if label == "fastdr" else "sklearn.neighbors") + ".NearestNeighbors"
    params = {"n_neighbors": 10, "algorithm": "brute", "metric": metric}
    return estimator(label, path, params if label == "fastdr" else {**params, "n_jobs": -1},
                     "fit(X).kneighbors()")


_GRIDS = {
    "smoke": Grid((200, 20), (100, 200), 20, (8, 20), 200),
    "quick": Grid((5000, 50), (1250, 2500, 5000), 50, (16, 50, 150), 2500),
    "full": Grid((20000, 50), (5000, 10000, 20000, 40000), 50, (16, 50, 100, 300), 10000),
}

WORKLOADS = tuple(
    Workload(
        name=f"knn_{metric}", area="neighbors",
        title=f"exact k-NN (k=10), {metric} metric, float64, every point a query (self "
              "excluded), brute force",
        data_kind="gauss",
        fastdr=_knn("fastdr", metric), anchors=(_knn("sklearn", metric),),
        agreement=agreement.knn_vs_anchor(1e-9),
        grids=_GRIDS,
        targets=(Target(">= 2x faster than sklearn brute", 20000, 50, "sklearn", 2.0),),
        distance_shape=lambda data: (data.m, data.m, data.d),
    )
    for metric in ("manhattan", "cosine")
)
