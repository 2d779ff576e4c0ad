"""Isomap: full Isomap against scikit-learn, the shortest-path kernel against SciPy, and
landmark Isomap at sizes no Python library reaches."""

import importlib
from dataclasses import replace

from .. import agreement
from ..data import symmetric_knn_graph
from ._base import Arg, Grid, Impl, Target, Workload, estimator

K = 10
LANDMARK_ANCHOR_MAX_M = 3000  # full Isomap as the landmark version's reference, up to here


def _dijkstra():
    """fastdr's all-pairs geodesic distances (sparse graph in, dense out), or None."""
    try:
        return importlib.import_module("fastdr").geodesic_distances
    except (ImportError, AttributeError):
        return None


def n_landmarks_for(m):
    """Landmarks used for an m-point landmark Isomap: m/10, between 50 and 1000."""
    return int(min(1000, max(50, m // 10)))


_ISOMAP = {"n_neighbors": K, "n_components": 2}
_SKLEARN_ISOMAP = {**_ISOMAP, "n_jobs": -1}
_LANDMARK = {**_ISOMAP, "n_landmarks": Arg("L", lambda data: n_landmarks_for(data.m)),
             "random_state": 0}


def _with_graph(data):
    if "knn_graph" not in data.extra:
        data.extra["knn_graph"] = symmetric_knn_graph(data.X, K)
    return data


def _paths_fastdr(data, state):
    return _dijkstra()(data.extra["knn_graph"], method="dijkstra")


def _paths_scipy(data, state):
    from scipy.sparse.csgraph import shortest_path

    return shortest_path(data.extra["knn_graph"], method="D", directed=False)


def _vs_truth(tol):
    return lambda fast, data: replace(agreement.procrustes(fast, data.truth, tol),
                                      metric="Procrustes vs true roll coordinates")


_ROLL_GRIDS = {
    "smoke": Grid((200, 3), (100, 200), 3, (3, 10), 200, memory_m=(200,)),
    "quick": Grid((2000, 3), (500, 1000, 2000), 3, (3, 10, 30), 1000, memory_m=(2000,)),
    "full": Grid((10000, 3), (2500, 5000, 10000, 20000), 3, (3, 10, 50), 5000,
                 memory_m=(10000, 20000), extra=((20000, 3),)),
}

WORKLOADS = (
    Workload(
        name="isomap",
        area="isomap",
        title="Isomap, swiss roll, k=10, 2 components, fit_transform",
        data_kind="swiss",
        fastdr=estimator("fastdr", "fastdr.Isomap", _ISOMAP),
        anchors=(estimator("sklearn", "sklearn.manifold.Isomap", _SKLEARN_ISOMAP),),
        agreement=agreement.embedding_vs_anchor(1e-6),
        truth_agreement=_vs_truth(0.01),
        grids=_ROLL_GRIDS,
        targets=(Target(">= 5x faster than sklearn", 10000, 3, "sklearn", 5.0),
                 Target(">= 5x faster than sklearn", 20000, 3, "sklearn", 5.0)),
        memory_target=(20000, 0.40, "peak RSS <= 40% of sklearn's"),
        mxm=True,
    ),
    Workload(
        name="shortest_path",
        area="isomap",
        title="all-pairs geodesic distances (Dijkstra) on the symmetrised k=10 graph of the "
              "swiss roll",
        data_kind="swiss",
        fastdr=Impl("fastdr", _paths_fastdr, "fastdr.geodesic_distances(G, "
                    "method='dijkstra')",
                    available=lambda: (True, "") if _dijkstra() else (
                        False, "not available: fastdr.geodesic_distances is not importable")),
        anchors=(Impl("scipy", _paths_scipy,
                      "scipy shortest_path(G, method='D', directed=False)"),),
        agreement=agreement.dense_vs_anchor(1e-10),
        extend=_with_graph,
        grids=_ROLL_GRIDS,
    ),
    Workload(
        name="landmark_isomap",
        area="isomap",
        title="landmark Isomap, swiss roll, k=10, L = m/10 landmarks (50 to 1000), "
              "fit_transform",
        data_kind="swiss",
        fastdr=estimator("fastdr", "fastdr.Isomap", _LANDMARK),
        anchors=(estimator("sklearn", "sklearn.manifold.Isomap", _SKLEARN_ISOMAP,
                           max_m=LANDMARK_ANCHOR_MAX_M),),
        agreement=agreement.embedding_vs_anchor(1e-2),
        truth_agreement=_vs_truth(0.01),
        grids={
            "smoke": Grid((300, 3), (200, 300), 3, (3, 10), 300),
            "quick": Grid((2000, 3), (2000, 5000, 20000), 3, (3, 10, 50), 5000),
            "full": Grid((1000000, 3), (100000, 300000, 1000000), 3, (3, 10, 50), 200000,
                         extra=((200000, 50),)),
        },
        targets=(Target("under 300 s (no Python library offers it)", 1000000, 3,
                        max_seconds=300.0),
                 Target("under 300 s (no Python library offers it)", 200000, 50,
                        max_seconds=300.0)),
        notes=("Landmark Isomap has no library anchor; up to m="
               f"{LANDMARK_ANCHOR_MAX_M:,} it is compared with scikit-learn's full Isomap, "
               "above that with the roll's true coordinates.",),
    ),
)

