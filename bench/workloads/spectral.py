"""Spectral and linear methods: PCA, classical MDS, kernel PCA (rbf), LDA."""

from .. import agreement
from ._base import Grid, Impl, Target, Workload, fastdr_has


def _fastdr():
    import fastdr

    return fastdr


def _pca_fastdr(data, state):
    return _fastdr().PCA(n_components=10).fit_transform(data.X)


def _pca_sklearn(data, state):
    from sklearn.decomposition import PCA

    return PCA(n_components=10, svd_solver="covariance_eigh").fit_transform(data.X)


def _mds_fastdr(data, state):
    return _fastdr().ClassicalMDS(n_components=2).fit_transform(data.X)


def _mds_sklearn(data, state):
    from sklearn.manifold import ClassicalMDS

    return ClassicalMDS(n_components=2).fit_transform(data.X)


def _kpca_fastdr(data, state):
    model = _fastdr().KernelPCA(n_components=2, kernel="rbf", gamma=1.0 / data.d,
                                random_state=0)
    return model.fit_transform(data.X)


def _kpca_sklearn(data, state):
    from sklearn.decomposition import KernelPCA

    model = KernelPCA(n_components=2, kernel="rbf", gamma=1.0 / data.d, random_state=0,
                      n_jobs=-1)
    return model.fit_transform(data.X)


def _lda_fastdr(data, state):
    return _fastdr().LinearDiscriminantAnalysis(solver="eigen").fit(data.X, data.y)


def _lda_sklearn(data, state):
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    return LinearDiscriminantAnalysis(solver="eigen").fit(data.X, data.y)


def _lda_agreement(fast, anchor, data):
    return agreement.prediction_rate(fast.predict(data.X_query), anchor.predict(data.X_query))


_LINEAR_GRIDS = {
    "smoke": Grid((400, 20), (200, 400), 20, (12, 20), 400),
    "quick": Grid((20000, 100), (5000, 10000, 20000), 100, (25, 50, 100), 10000),
    "full": Grid((100000, 200), (25000, 50000, 100000, 200000), 200, (50, 100, 200, 400),
                 50000),
}

WORKLOADS = (
    Workload(
        name="pca",
        area="spectral",
        title="PCA, 10 components, fit_transform",
        data_kind="aniso",
        fastdr=Impl("fastdr", _pca_fastdr, "fastdr.PCA(n_components=10).fit_transform(X)",
                    available=fastdr_has("PCA")),
        anchors=(Impl("sklearn", _pca_sklearn,
                      "sklearn PCA(n_components=10, svd_solver='covariance_eigh')"
                      ".fit_transform(X)"),),
        agreement=agreement.embedding_vs_anchor(1e-8),
        grids=_LINEAR_GRIDS,
        targets=(Target("parity (<= 1.2x sklearn's time)", 100000, 200, "sklearn", 1 / 1.2),),
    ),
    Workload(
        name="classical_mds",
        area="spectral",
        title="classical MDS, 2 components, Euclidean distances of X, fit_transform",
        data_kind="aniso",
        fastdr=Impl("fastdr", _mds_fastdr, "fastdr.ClassicalMDS(n_components=2)"
                    ".fit_transform(X)", available=fastdr_has("ClassicalMDS")),
        anchors=(Impl("sklearn", _mds_sklearn,
                      "sklearn ClassicalMDS(n_components=2).fit_transform(X)"),),
        agreement=agreement.embedding_vs_anchor(1e-6),
        grids={
            "smoke": Grid((200, 10), (100, 200), 10, (3, 10), 200, memory_m=(200,)),
            "quick": Grid((1000, 10), (250, 500, 1000), 10, (3, 10, 30), 500,
                          memory_m=(1000,)),
            "full": Grid((10000, 10), (2500, 5000, 10000), 10, (3, 10, 30, 100), 5000,
                         memory_m=(5000, 10000)),
        },
        targets=(Target(">= 20x faster than sklearn", 10000, 10, "sklearn", 20.0),),
        mxm=True,
    ),
    Workload(
        name="kernel_pca",
        area="spectral",
        title="kernel PCA, rbf kernel (gamma = 1/d), 2 components, fit_transform",
        data_kind="aniso",
        fastdr=Impl("fastdr", _kpca_fastdr, "fastdr.KernelPCA(n_components=2, kernel='rbf', "
                    "gamma=1/d, random_state=0).fit_transform(X)",
                    available=fastdr_has("KernelPCA")),
        anchors=(Impl("sklearn", _kpca_sklearn,
                      "sklearn KernelPCA(n_components=2, kernel='rbf', gamma=1/d, "
                      "random_state=0, n_jobs=-1).fit_transform(X)"),),
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
        name="lda",
        area="spectral",
        title="LDA (eigen solver), 10 Gaussian classes, fit; agreement from predict",
        data_kind="blobs10",
        fastdr=Impl("fastdr", _lda_fastdr,
                    "fastdr.LinearDiscriminantAnalysis(solver='eigen').fit(X, y)",
                    available=fastdr_has("LinearDiscriminantAnalysis")),
        anchors=(Impl("sklearn", _lda_sklearn,
                      "sklearn LinearDiscriminantAnalysis(solver='eigen').fit(X, y)"),),
        agreement=_lda_agreement,
        grids=_LINEAR_GRIDS,
        targets=(Target(">= 1.5x faster than sklearn", 100000, 200, "sklearn", 1.5),),
    ),
)
