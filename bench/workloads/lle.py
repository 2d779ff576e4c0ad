"""Locally linear embedding against scikit-learn's ARPACK solver."""

from .. import agreement
from ._base import Grid, Target, Workload, estimator

_PARAMS = {"n_neighbors": 10, "n_components": 2, "random_state": 0}

WORKLOADS = (
    Workload(
        name="lle", area="lle", title="LLE, swiss roll, k=10, 2 components, fit_transform",
        data_kind="swiss",
        fastdr=estimator("fastdr", "fastdr.LocallyLinearEmbedding", _PARAMS),
        anchors=(estimator("sklearn", "sklearn.manifold.LocallyLinearEmbedding",
                           {**_PARAMS, "eigen_solver": "arpack", "n_jobs": -1}),),
        agreement=agreement.embedding_vs_anchor(1e-3),
        grids={
            "smoke": Grid((300, 3), (200, 300), 3, (3, 10), 300),
            "quick": Grid((5000, 3), (1250, 2500, 5000), 3, (3, 10, 30), 2500),
            "full": Grid((100000, 3), (12500, 25000, 50000, 100000), 3, (3, 10, 50), 25000),
        },
        targets=(Target(">= 3x faster than sklearn (arpack)", 100000, 3, "sklearn", 3.0),),
    ),
)
