"""Locally linear embedding against scikit-learn: the standard method, and the modified,
Hessian and LTSA methods (scikit-learn builds their m x m matrix point by point in Python;
fastdr computes the local blocks in parallel and assembles a sparse M)."""

from dataclasses import replace

import numpy as np

from .. import agreement
from ._base import Grid, Target, Workload, estimator

_PARAMS = {"n_neighbors": 10, "n_components": 2, "random_state": 0}
METHOD_K = 12
SKLEARN_METHOD_MAX_M = 10000  # scikit-learn's Python loop and LIL matrix: minutes above this


def _whiten(Z):
    Z = np.asarray(Z, dtype=np.float64)
    Z = Z - Z.mean(axis=0)
    return Z @ np.linalg.inv(np.linalg.cholesky(Z.T @ Z)).T


def _vs_whitened_truth(tol):
    """Procrustes against the roll's own coordinates, whitened: a null-space embedding has
    orthonormal columns, so it recovers them only up to an affine map."""
    return lambda fast, data: replace(
        agreement.procrustes(fast, _whiten(data.truth), tol),
        metric="Procrustes vs whitened true roll coordinates")


def _method_workload(method):
    params = {"n_neighbors": METHOD_K, "n_components": 2, "method": method,
              "eigen_solver": "arpack", "random_state": 0}
    return Workload(
        name=f"lle_{method}", area="lle",
        title=f"LLE method={method!r}, swiss roll, k={METHOD_K}, 2 components, fit_transform",
        data_kind="swiss",
        fastdr=estimator("fastdr", "fastdr.LocallyLinearEmbedding", params),
        anchors=(estimator("sklearn", "sklearn.manifold.LocallyLinearEmbedding",
                           {**params, "n_jobs": -1}, max_m=SKLEARN_METHOD_MAX_M),),
        agreement=agreement.embedding_vs_anchor(1e-3),
        truth_agreement=_vs_whitened_truth(0.05),
        grids={
            "smoke": Grid((300, 3), (200, 300), 3, (3, 10), 300, memory_m=(300,)),
            "quick": Grid((5000, 3), (1250, 2500), 3, (3, 10), 1250, memory_m=(2500,)),
            "full": Grid((5000, 3), (5000, 25000, 100000), 3, (3, 10, 50), 5000,
                         memory_m=(5000, 100000), extra=((100000, 3),)),
        },
        targets=(Target(">= 5x faster than sklearn (arpack)", 5000, 3, "sklearn", 5.0),
                 Target("runs at m=100,000 in under 300 s (sklearn's dense M would need "
                        "80 GB)", 100000, 3, max_seconds=300.0)),
        notes=(f"scikit-learn runs only up to m={SKLEARN_METHOD_MAX_M:,} (its Python loop "
               "fills a LIL matrix point by point; its dense solver needs an m x m M); above "
               "that the embedding is compared with the roll's whitened true coordinates.",),
    )


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
    *(_method_workload(method) for method in ("modified", "hessian", "ltsa")),
)
