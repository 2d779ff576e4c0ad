"""Kernel PCA's scikit-learn solvers and options: ARPACK against scikit-learn's ARPACK, and
the learned pre-image (``fit_inverse_transform``) against scikit-learn's (issue 14); Nystrom
kernel PCA (``n_landmarks``, issue 36) and exact kernel PCA with the kernel never stored
(``kernel_storage="implicit"``, issue 36) against scikit-learn's exact kernel PCA where that
fits."""

from .. import agreement
from ._base import Arg, Grid, Target, Workload, estimator

_ARPACK = {"n_components": 5, "kernel": "rbf", "gamma": Arg("1/d", lambda data: 1.0 / data.d),
           "eigen_solver": "arpack", "random_state": 0}
_INVERSE = {"n_components": 5, "kernel": "rbf", "gamma": Arg("1/d", lambda data: 1.0 / data.d),
            "fit_inverse_transform": True, "random_state": 0}
_GRIDS = {
    "smoke": Grid((200, 10), (100, 200), 10, (3, 10), 200, memory_m=(200,)),
    "quick": Grid((2000, 10), (500, 1000, 2000), 10, (3, 10, 30), 1000, memory_m=(2000,)),
    "full": Grid((10000, 10), (2500, 5000, 10000), 10, (3, 10, 30, 100), 5000,
                 memory_m=(10000,)),
}

_GAMMA = Arg("1/d", lambda data: 1.0 / data.d)
_NYSTROM = {"n_components": 2, "kernel": "rbf", "gamma": _GAMMA, "random_state": 0,
            "n_landmarks": Arg("min(2000, m // 5)", lambda data: min(2000, data.m // 5))}
# scikit-learn's exact kernel PCA forms the m x m kernel: it runs up to this m
NYSTROM_ANCHOR_MAX_M = 10000
_IMPLICIT = {"n_components": 10, "kernel": "rbf", "gamma": _GAMMA, "random_state": 0,
             "kernel_storage": "implicit"}

WORKLOADS = (
    Workload(
        name="kernel_pca_arpack", area="spectral",
        title="kernel PCA, rbf kernel (gamma = 1/d), 5 components, eigen_solver='arpack', "
              "fit_transform",
        data_kind="aniso",
        fastdr=estimator("fastdr", "fastdr.KernelPCA", _ARPACK),
        anchors=(estimator("sklearn", "sklearn.decomposition.KernelPCA",
                           {**_ARPACK, "n_jobs": -1}),),
        agreement=agreement.embedding_vs_anchor(1e-6),
        grids=_GRIDS,
        targets=(Target("not slower than sklearn's arpack", 10000, 10, "sklearn", 1.0),),
        mxm=True,
        distance_shape=lambda data: (data.m, data.m, data.d),  # the kernel step
    ),
    Workload(
        name="kernel_pca_inverse", area="spectral",
        title="kernel PCA, rbf kernel, 5 components, fit_inverse_transform=True (the "
              "pre-image regression), fit_transform",
        data_kind="aniso",
        fastdr=estimator("fastdr", "fastdr.KernelPCA", _INVERSE),
        anchors=(estimator("sklearn", "sklearn.decomposition.KernelPCA",
                           {**_INVERSE, "n_jobs": -1}),),
        agreement=agreement.embedding_vs_anchor(1e-6),
        grids=_GRIDS,
        targets=(Target("not slower than sklearn", 10000, 10, "sklearn", 1.0),),
        mxm=True,
    ),
    Workload(
        name="kernel_pca_nystrom", area="spectral",
        title="Nystrom kernel PCA, rbf kernel, 2 components, L = min(2000, m / 5) landmarks, "
              "fit then transform of X",
        data_kind="aniso",
        fastdr=estimator("fastdr", "fastdr.KernelPCA", _NYSTROM, "fit(X).transform(X)"),
        anchors=(estimator("sklearn", "sklearn.decomposition.KernelPCA",
                           {"n_components": 2, "kernel": "rbf", "gamma": _GAMMA,
                            "random_state": 0, "n_jobs": -1}, "fit(X).transform(X)",
                           max_m=NYSTROM_ANCHOR_MAX_M),),
        agreement=agreement.embedding_vs_anchor(1e-3),
        grids={
            "smoke": Grid((1000, 10), (500, 1000), 10, (3, 10), 1000),
            "quick": Grid((10000, 10), (2500, 5000, 10000), 10, (3, 10, 30), 5000,
                          extra=((50000, 10),)),
            "full": Grid((1000000, 10), (100000, 300000, 1000000), 10, (3, 10, 30), 10000,
                         extra=((10000, 10),)),
        },
        targets=(Target("under 2 min (scikit-learn cannot form the kernel)", 1000000, 10,
                        max_seconds=120.0),),
        notes=("Nystrom kernel PCA approximates the exact method: up to "
               f"m={NYSTROM_ANCHOR_MAX_M:,} it is compared with scikit-learn's exact kernel "
               "PCA (Procrustes disparity up to 1e-3), above that it runs alone.",),
    ),    Workload(
        name="kernel_pca_implicit", area="spectral",
        title="exact kernel PCA with the kernel never stored (kernel_storage='implicit'), rbf "
              "kernel, 10 components, fit_transform",
        data_kind="aniso",
        fastdr=estimator("fastdr", "fastdr.KernelPCA", _IMPLICIT),
        anchors=(estimator("sklearn", "sklearn.decomposition.KernelPCA",
                           {"n_components": 10, "kernel": "rbf", "gamma": _GAMMA,
                            "eigen_solver": "arpack", "random_state": 0, "n_jobs": -1},
                           max_m=NYSTROM_ANCHOR_MAX_M),),
        agreement=agreement.embedding_vs_anchor(1e-6),
        grids={
            "smoke": Grid((1000, 10), (500, 1000), 10, (3, 10), 1000),
            # no scaling curves in the quick profile: below 5,000 points scikit-learn's
            # stored kernel is faster (0.75x to 0.92x at 2,500), and "auto" never takes the
            # implicit route where the kernel fits
            "quick": Grid((5000, 10)),
            "full": Grid((100000, 10), (10000, 30000, 100000), 10, (3, 10, 30), 10000,
                         extra=((10000, 10),)),
        },
        targets=(Target("under 5 min (scikit-learn cannot form the kernel)", 100000, 10,
                        max_seconds=300.0),),
        notes=("The exact method without the m x m kernel: each eigensolver pass recomputes it "
               "(a fused tile product for rbf). Up to "
               f"m={NYSTROM_ANCHOR_MAX_M:,} it is compared with scikit-learn's exact kernel "
               "PCA (ARPACK), above that it runs alone.",),
    ),
)
