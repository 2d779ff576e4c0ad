"""Locally linear embedding against scikit-learn's ARPACK solver."""

from .. import agreement
from ._base import Grid, Impl, Target, Workload, fastdr_has

K = 10


def _lle_fastdr(data, state):
    import fastdr

    model = fastdr.LocallyLinearEmbedding(n_neighbors=K, n_components=2, random_state=0)
    return model.fit_transform(data.X)


def _lle_sklearn(data, state):
    from sklearn.manifold import LocallyLinearEmbedding

    model = LocallyLinearEmbedding(n_neighbors=K, n_components=2, eigen_solver="arpack",
                                   random_state=0, n_jobs=-1)
    return model.fit_transform(data.X)


WORKLOADS = (
    Workload(
        name="lle",
        area="lle",
        title="LLE, swiss roll, k=10, 2 components, fit_transform",
        data_kind="swiss",
        fastdr=Impl("fastdr", _lle_fastdr, "fastdr.LocallyLinearEmbedding(n_neighbors=10, "
                    "n_components=2, random_state=0).fit_transform(X)",
                    available=fastdr_has("LocallyLinearEmbedding")),
        anchors=(Impl("sklearn", _lle_sklearn, "sklearn LocallyLinearEmbedding(n_neighbors=10, "
                      "n_components=2, eigen_solver='arpack', random_state=0, n_jobs=-1)"
                      ".fit_transform(X)"),),
        agreement=agreement.embedding_vs_anchor(1e-3),
        grids={
            "smoke": Grid((300, 3), (200, 300), 3, (3, 10), 300),
            "quick": Grid((5000, 3), (1250, 2500, 5000), 3, (3, 10, 30), 2500),
            "full": Grid((100000, 3), (12500, 25000, 50000, 100000), 3, (3, 10, 50), 25000),
        },
        targets=(Target(">= 3x faster than sklearn (arpack)", 100000, 3, "sklearn", 3.0),),
    ),
)
