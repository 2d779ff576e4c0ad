"""Spectral and linear methods: PCA, classical MDS, kernel PCA (rbf), LDA."""

from .. import agreement
from ._base import Arg, Grid, Target, Workload, estimator


def _lda_agreement(fast, anchor, data):
    return agreement.prediction_rate(fast.predict(data.X_query), anchor.predict(data.X_query))


_LINEAR_GRIDS = {
    "smoke": Grid((400, 20), (200, 400), 20, (12, 20), 400),
    "quick": Grid((20000, 100), (5000, 10000, 20000), 100, (25, 50, 100), 10000),
    "full": Grid((100000, 200), (25000, 50000, 100000, 200000), 200, (50, 100, 200, 400),
                 50000),
}
_KPCA = {"n_components": 2, "kernel": "rbf", "gamma": Arg("1/d", lambda data: 1.0 / data.d),
         "random_state": 0}

WORKLOADS = (
    Workload(
        name="pca", area="spectral", title="PCA, 10 components, fit_transform",
        data_kind="aniso",
        fastdr=estimator("fastdr", "fastdr.PCA", {"n_components": 10}),
        anchors=(estimator("sklearn", "sklearn.decomposition.PCA",
                           {"n_components": 10, "svd_solver": "covariance_eigh"}),),
        agreement=agreement.embedding_vs_anchor(1e-8),
        grids=_LINEAR_GRIDS,
        targets=(Target("parity (<= 1.2x sklearn's time)", 100000, 200, "sklearn", 1 / 1.2),),
    ),
    Workload(
        name="classical_mds", area="spectral",
        title="classical MDS, 2 components, Euclidean distances of X, fit_transform",
        data_kind="aniso",
        fastdr=estimator("fastdr", "fastdr.ClassicalMDS", {"n_components": 2}),
        anchors=(estimator("sklearn", "sklearn.manifold.ClassicalMDS", {"n_components": 2}),),
        agreement=agreement.embedding_vs_anchor(1e-6),
        grids={
            "smoke": Grid((200, 10), (100, 200), 10, (3, 10), 200, memory_m=(200,)),
            "quick": Grid((1000, 10), (250, 500, 1000), 10, (3, 10, 30), 500,
                          memory_m=(1000,)),
            "full": Grid((10000, 10), (2500, 5000, 10000), 10, (3, 10, 30, 100), 5000,
                         memory_m=(5000, 10000)),
        },
        targets=(Target(">= 20x faster than sklearn", 10000, 10, "sklearn", 20.0),),
        mxm=True,  # a memory row: scikit-learn forms the m x m matrix, fastdr (Euclidean) not
    ),
    Workload(
        name="classical_mds_manhattan", area="spectral",
        title="classical MDS, 2 components, Manhattan distances of X (forms B), fit_transform",
        data_kind="aniso",
        fastdr=estimator("fastdr", "fastdr.ClassicalMDS",
                         {"n_components": 2, "metric": "manhattan"}),
        anchors=(estimator("sklearn", "sklearn.manifold.ClassicalMDS",
                           {"n_components": 2, "metric": "manhattan"}),),
        agreement=agreement.embedding_vs_anchor(1e-6),
        grids={
            "smoke": Grid((200, 10), (100, 200), 10, (3, 10), 200),
            "quick": Grid((1000, 10), (250, 500, 1000), 10, (3, 10, 30), 500),
            "full": Grid((10000, 10), (2500, 5000, 10000), 10, (3, 10, 30, 100), 5000),
        },
        targets=(Target(">= 20x faster than sklearn", 10000, 10, "sklearn", 20.0),),
    ),
    Workload(
        name="classical_mds_implicit", area="spectral",
        title="classical MDS, 2 components, Manhattan distances of X, B never stored "
              "(distance_storage='implicit'), fit_transform",
        data_kind="aniso",
        fastdr=estimator("fastdr", "fastdr.ClassicalMDS",
                         {"n_components": 2, "metric": "manhattan",
                          "distance_storage": "implicit", "random_state": 0}),
        anchors=(estimator("sklearn", "sklearn.manifold.ClassicalMDS",
                           {"n_components": 2, "metric": "manhattan"}, max_m=10000),),
        agreement=agreement.embedding_vs_anchor(1e-6),
        grids={
            "smoke": Grid((1000, 20), (500, 1000), 20, (10, 20), 1000),
            "quick": Grid((5000, 20), (2500, 5000), 20, (10, 20, 40), 2500),
            "full": Grid((100000, 20), (10000, 30000, 100000), 20, (10, 20, 40), 10000,
                         extra=((10000, 20),)),
        },
        targets=(Target("under 10 min (scikit-learn cannot form B)", 100000, 20,
                        max_seconds=600.0),),
        notes=("B is never stored: each eigensolver pass recomputes the distances (a fused "
               "tile product). Up to m=10,000 it is compared with scikit-learn's classical "
               "MDS, above that it runs alone.",),
    ),
    Workload(
        name="classical_mds_landmarks", area="spectral",
        title="landmark MDS, 2 components, Manhattan distances of X, L = 1,000 landmarks "
              "(n_landmarks=1000), fit_transform",
        data_kind="aniso",
        fastdr=estimator("fastdr", "fastdr.ClassicalMDS",
                         {"n_components": 2, "metric": "manhattan", "n_landmarks": 1000,
                          "random_state": 0}),
        anchors=(estimator("sklearn", "sklearn.manifold.ClassicalMDS",
                           {"n_components": 2, "metric": "manhattan"}, max_m=10000),),
        agreement=agreement.embedding_vs_anchor(0.05),
        grids={
            "smoke": Grid((1500, 20), (1200, 1500), 20, (10, 20), 1200),
            "quick": Grid((5000, 20), (2500, 5000), 20, (10, 20, 40), 2500),
            "full": Grid((10000, 20), (10000, 100000, 1000000), 20, (10, 20, 40), 10000,
                         extra=((1000000, 20),)),
        },
        targets=(Target(">= 20x faster than scikit-learn's exact MDS", 10000, 20, "sklearn",
                        20.0),
                 Target("under 1 min (scikit-learn cannot form B)", 1000000, 20,
                        max_seconds=60.0)),
        notes=("An approximation of the exact embedding (agreement: Procrustes disparity "
               "against scikit-learn's exact classical MDS, ok below 0.05; 0.011 measured at "
               "5,000 x 20 with L = 1,000). Up to m=10,000 it is compared with scikit-learn, "
               "above that it runs alone.",),
    ),
    Workload(
        name="kernel_pca", area="spectral",
        title="kernel PCA, rbf kernel (gamma = 1/d), 2 components, fit_transform",
        data_kind="aniso",
        fastdr=estimator("fastdr", "fastdr.KernelPCA", _KPCA),
        anchors=(estimator("sklearn", "sklearn.decomposition.KernelPCA",
                           {**_KPCA, "n_jobs": -1}),),
        agreement=agreement.embedding_vs_anchor(1e-6),
        grids={
            "smoke": Grid((200, 10), (100, 200), 10, (3, 10), 200, memory_m=(200,)),
            "quick": Grid((2000, 10), (500, 1000, 2000), 10, (3, 10, 30), 1000,
                          memory_m=(2000,)),
            "full": Grid((10000, 10), (2500, 5000, 10000, 20000), 10, (3, 10, 30, 100), 5000,
                         memory_m=(10000,)),
        },
        targets=(Target(">= 3x faster than sklearn", 10000, 10, "sklearn", 3.0),),
        mxm=True,
        distance_shape=lambda data: (data.m, data.m, data.d),  # the kernel step
    ),
    Workload(
        name="lda", area="spectral",
        title="LDA (eigen solver), 10 Gaussian classes, fit; agreement from predict",
        data_kind="blobs10",
        fastdr=estimator("fastdr", "fastdr.LinearDiscriminantAnalysis", {"solver": "eigen"},
                         "fit(X, y)"),
        anchors=(estimator("sklearn", "sklearn.discriminant_analysis.LinearDiscriminantAnalysis",
                           {"solver": "eigen"}, "fit(X, y)"),),
        agreement=_lda_agreement,
        grids=_LINEAR_GRIDS,
        targets=(Target(">= 1.5x faster than sklearn", 100000, 200, "sklearn", 1.5),),
    ),
)
